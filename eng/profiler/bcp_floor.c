/* The per-row floor of an ODBC driver's bcp API: the calls a bulk load makes for each row, in a
 * C loop with no encoding and no Python, so their cost is the driver's own.
 * The functions are the driver's, handed in as addresses (unixODBC does not export them). */
#include <stdint.h>

typedef short (*sendrow_fn)(void *hdbc);
typedef short (*colptr_fn)(void *hdbc, const void *data, int column);

/* bcp_sendrow `rows` times; with `per_row_colptr`, first bcp_colptr for each of `ncols`
 * columns (ferrodbc's way: every column pointed at the row's cell before each sendrow).
 * Returns the rows sent before the first failure. */
long long bcp_floor_loop(void *hdbc, long long rows, sendrow_fn sendrow, colptr_fn colptr, int ncols,
                         const void *const *cells, long long cell_stride, int per_row_colptr) {
    for (long long r = 0; r < rows; r++) {
        if (per_row_colptr) {
            for (int c = 0; c < ncols; c++) {
                const char *p = (const char *)cells[c] + (r % 1024) * cell_stride;
                if (colptr(hdbc, p, c + 1) != 1) return r;
            }
        }
        if (sendrow(hdbc) != 1) return r;
    }
    return rows;
}
