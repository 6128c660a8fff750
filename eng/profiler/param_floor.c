/* Driver 18's own cost of INSERT parameter arrays of the narrow rows (INT, BIGINT, FLOAT), by
 * binding form, with no Python and no encoding: run by param_floor.py under callgrind, which
 * counts body() only.
 * usage: param_floor CONNSTR ROWS ARRAY INTC(64|32) LAYOUT(col|row) PREP(once|each)
 * env: NOIND=1 binds no indicator arrays (column-wise only), SQLFLOAT=1 declares SQL_FLOAT.
 */
#include <sql.h>
#include <sqlext.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die(const char *what, SQLSMALLINT ht, SQLHANDLE h) {
    SQLCHAR state[6], msg[512];
    SQLINTEGER native;
    SQLSMALLINT len;
    if (SQLGetDiagRec(ht, h, 1, state, &native, msg, sizeof msg, &len) == SQL_SUCCESS)
        fprintf(stderr, "%s: %s %s\n", what, state, msg);
    else
        fprintf(stderr, "%s failed\n", what);
    exit(1);
}
#define CK(rc, what, ht, h) do { SQLRETURN r_ = (rc); if (!SQL_SUCCEEDED(r_) && r_ != SQL_NO_DATA) die(what, ht, h); } while (0)

struct rowrec32 { int32_t id; SQLLEN id_ind; int64_t big; SQLLEN big_ind; double val; SQLLEN val_ind; };
struct rowrec64 { int64_t id; SQLLEN id_ind; int64_t big; SQLLEN big_ind; double val; SQLLEN val_ind; };

static const int64_t BIG0 = 5000000000LL;

__attribute__((noinline)) long long body(SQLHSTMT st, long long rows, long long arr, int int32, int rowwise,
                                         int prep_each, const char *sql) {
    long long done = 0;
    void *ids = malloc(arr * 8), *bigs = malloc(arr * 8), *vals = malloc(arr * 8);
    SQLLEN *ind = malloc(arr * sizeof(SQLLEN)), *ind4 = malloc(arr * sizeof(SQLLEN));
    for (long long i = 0; i < arr; i++) { ind[i] = 8; ind4[i] = 4; }
    size_t recsz = int32 ? sizeof(struct rowrec32) : sizeof(struct rowrec64);
    char *recs = malloc(arr * recsz);
    SQLSMALLINT idc = int32 ? SQL_C_SLONG : SQL_C_SBIGINT;
    if (!prep_each) CK(SQLPrepare(st, (SQLCHAR *)sql, SQL_NTS), "prepare", SQL_HANDLE_STMT, st);
    while (done < rows) {
        long long n = rows - done < arr ? rows - done : arr;
        CK(SQLSetStmtAttr(st, SQL_ATTR_PARAMSET_SIZE, (SQLPOINTER)(intptr_t)n, 0), "paramset", SQL_HANDLE_STMT, st);
        for (long long k = 0; k < n; k++) {
            long long i = done + k;
            if (rowwise) {
                if (int32) {
                    struct rowrec32 *r = (void *)(recs + k * recsz);
                    r->id = (int32_t)i; r->id_ind = 4; r->big = BIG0 + i * 1000003; r->big_ind = 8; r->val = i * 0.5; r->val_ind = 8;
                } else {
                    struct rowrec64 *r = (void *)(recs + k * recsz);
                    r->id = i; r->id_ind = 8; r->big = BIG0 + i * 1000003; r->big_ind = 8; r->val = i * 0.5; r->val_ind = 8;
                }
            } else {
                if (int32) ((int32_t *)ids)[k] = (int32_t)i; else ((int64_t *)ids)[k] = i;
                ((int64_t *)bigs)[k] = BIG0 + i * 1000003;
                ((double *)vals)[k] = i * 0.5;
            }
        }
        if (rowwise) {
            CK(SQLSetStmtAttr(st, SQL_ATTR_PARAM_BIND_TYPE, (SQLPOINTER)recsz, 0), "bindtype", SQL_HANDLE_STMT, st);
            if (int32) {
                struct rowrec32 *r = (void *)recs;
                CK(SQLBindParameter(st, 1, SQL_PARAM_INPUT, idc, SQL_INTEGER, 10, 0, &r->id, 4, &r->id_ind), "b1", SQL_HANDLE_STMT, st);
                CK(SQLBindParameter(st, 2, SQL_PARAM_INPUT, SQL_C_SBIGINT, SQL_BIGINT, 19, 0, &r->big, 8, &r->big_ind), "b2", SQL_HANDLE_STMT, st);
                CK(SQLBindParameter(st, 3, SQL_PARAM_INPUT, SQL_C_DOUBLE, SQL_DOUBLE, 15, 0, &r->val, 8, &r->val_ind), "b3", SQL_HANDLE_STMT, st);
            } else {
                struct rowrec64 *r = (void *)recs;
                CK(SQLBindParameter(st, 1, SQL_PARAM_INPUT, idc, SQL_INTEGER, 10, 0, &r->id, 8, &r->id_ind), "b1", SQL_HANDLE_STMT, st);
                CK(SQLBindParameter(st, 2, SQL_PARAM_INPUT, SQL_C_SBIGINT, SQL_BIGINT, 19, 0, &r->big, 8, &r->big_ind), "b2", SQL_HANDLE_STMT, st);
                CK(SQLBindParameter(st, 3, SQL_PARAM_INPUT, SQL_C_DOUBLE, SQL_DOUBLE, 15, 0, &r->val, 8, &r->val_ind), "b3", SQL_HANDLE_STMT, st);
            }
        } else {
            SQLLEN *idind = ind;
            SQLLEN *bind = getenv("NOIND") ? NULL : ind;
            if (int32) idind = ind4;
            CK(SQLBindParameter(st, 1, SQL_PARAM_INPUT, idc, SQL_INTEGER, 10, 0, ids, int32 ? 4 : 8, getenv("NOIND") ? NULL : idind), "b1", SQL_HANDLE_STMT, st);
            CK(SQLBindParameter(st, 2, SQL_PARAM_INPUT, SQL_C_SBIGINT, SQL_BIGINT, 19, 0, bigs, 8, bind), "b2", SQL_HANDLE_STMT, st);
            CK(SQLBindParameter(st, 3, SQL_PARAM_INPUT, SQL_C_DOUBLE, getenv("SQLFLOAT") ? SQL_FLOAT : SQL_DOUBLE, 15, 0, vals, 8, bind), "b3", SQL_HANDLE_STMT, st);
        }
        if (prep_each) CK(SQLPrepare(st, (SQLCHAR *)sql, SQL_NTS), "prepare", SQL_HANDLE_STMT, st);
        CK(SQLExecute(st), "execute", SQL_HANDLE_STMT, st);
        while (SQLMoreResults(st) == SQL_SUCCESS) {}
        SQLFreeStmt(st, SQL_CLOSE);
        SQLFreeStmt(st, SQL_RESET_PARAMS);
        done += n;
    }
    free(ids); free(bigs); free(vals); free(ind); free(ind4); free(recs);
    return done;
}

int main(int argc, char **argv) {
    if (argc < 7) { fprintf(stderr, "usage\n"); return 2; }
    const char *cs = argv[1];
    long long rows = atoll(argv[2]), arr = atoll(argv[3]);
    int int32 = atoi(argv[4]) == 32, rowwise = !strcmp(argv[5], "row"), prep_each = !strcmp(argv[6], "each");
    SQLHENV env; SQLHDBC dbc; SQLHSTMT st;
    SQLAllocHandle(SQL_HANDLE_ENV, SQL_NULL_HANDLE, &env);
    SQLSetEnvAttr(env, SQL_ATTR_ODBC_VERSION, (SQLPOINTER)SQL_OV_ODBC3, 0);
    SQLAllocHandle(SQL_HANDLE_DBC, env, &dbc);
    CK(SQLDriverConnect(dbc, NULL, (SQLCHAR *)cs, SQL_NTS, NULL, 0, NULL, SQL_DRIVER_NOPROMPT), "connect", SQL_HANDLE_DBC, dbc);
    SQLAllocHandle(SQL_HANDLE_STMT, dbc, &st);
    SQLExecDirect(st, (SQLCHAR *)"CREATE TABLE pa_narrow (id INT NOT NULL, big BIGINT NOT NULL, val FLOAT NOT NULL)", SQL_NTS);
    SQLFreeStmt(st, SQL_CLOSE);
    const char *sql = "INSERT INTO pa_narrow (id, big, val) VALUES (?, ?, ?)";
    long long d = body(st, rows, arr, int32, rowwise, prep_each, sql);
    printf("rows %lld\n", d);
    SQLDisconnect(dbc);
    return 0;
}
