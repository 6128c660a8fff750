"""Driver 18's native vectors through plain ODBC calls (ctypes over unixODBC's libodbc).

pyodbc cannot bind SQL_SS_VECTOR parameters, and reads a -156 column only as raw bytes through an
output converter, so the tests that need the driver's own vector binding (SQL_C_SS_VECTOR, a
`VectorTypeSupport=v1` connection) call the ODBC API directly: an ODBC 3.80 environment,
SQLDriverConnectW, SQLBindParameter / SQLGetData with SQL_C_SS_VECTOR.

The C struct Driver 18.6 reads and writes (checked against the driver: a -156 column fetched as
SQL_C_BINARY is these 16 bytes followed by the floats): SQLSMALLINT dimension, the element type
(0 = float32) in the next 2 bytes (the documentation's `type` field; offset 2 and 4 both read 0 for
float32), padding to 8, then `float *data`. A bound value is one buffer: the struct, then the
floats, `data` pointing at them; its length is exactly 16 + 4 x dimension.
"""

from __future__ import annotations

import ctypes
import struct

SQL_HANDLE_ENV, SQL_HANDLE_DBC, SQL_HANDLE_STMT = 1, 2, 3
SQL_ATTR_ODBC_VERSION, SQL_OV_ODBC3_80 = 200, 380
SQL_NTS, SQL_NULL_DATA, SQL_NO_DATA = -3, -1, 100
SQL_PARAM_INPUT, SQL_PARAM_OUTPUT, SQL_PARAM_INPUT_OUTPUT = 1, 4, 2
SQL_SS_VECTOR = -156
SQL_C_SS_VECTOR = 0x4002
SQL_C_BINARY = -2
SQL_C_SLONG, SQL_INTEGER = -16, 4
SQL_C_WCHAR, SQL_WVARCHAR = -8, -9
STRUCT_SIZE = 16

_odbc = ctypes.CDLL("libodbc.so.2")
_vp = ctypes.c_void_p
_sh = ctypes.c_short
_len = ctypes.c_ssize_t


def _ok(rc: int) -> bool:
    return rc in (0, 1)


class OdbcError(Exception):
    def __init__(self, what: str, records: list[tuple[str, int, str]]):
        self.records = records
        super().__init__(f"{what}: " + "; ".join(f"[{s}] ({n}) {m}" for s, n, m in records))


def _diag(htype: int, handle) -> list[tuple[str, int, str]]:
    out = []
    for rec in range(1, 6):
        state = ctypes.create_string_buffer(12)
        native = ctypes.c_int32()
        msg = ctypes.create_string_buffer(4096)
        n = _sh()
        rc = _odbc.SQLGetDiagRecW(_sh(htype), handle, _sh(rec), state, ctypes.byref(native), msg, _sh(2000),
                                  ctypes.byref(n))
        if not _ok(rc):
            break
        out.append((state.raw[:10].decode("utf-16-le"), native.value,
                    msg.raw[: 2 * n.value].decode("utf-16-le", "replace")))
    return out


def _w(s: str) -> ctypes.Array:
    b = s.encode("utf-16-le") + b"\0\0"
    return ctypes.create_string_buffer(b, len(b))


def vector_buffer(values) -> ctypes.Array:
    """One bound vector: the 16-byte struct, then the float32 elements it points at."""
    vals = [float(v) for v in values]
    buf = ctypes.create_string_buffer(STRUCT_SIZE + 4 * len(vals))
    data = ctypes.addressof(buf) + STRUCT_SIZE
    struct.pack_into("<hhiQ", buf, 0, len(vals), 0, 0, data)
    struct.pack_into(f"<{len(vals)}f", buf, STRUCT_SIZE, *vals)
    return buf


def parse_struct(raw: bytes) -> list[float]:
    """The floats of a vector fetched as SQL_C_SS_VECTOR / SQL_C_BINARY (struct then floats)."""
    (dims,) = struct.unpack_from("<h", raw, 0)
    return list(struct.unpack_from(f"<{dims}f", raw, STRUCT_SIZE))


class Null:
    """A NULL vector parameter of `dims` dimensions (its buffer still has the struct)."""

    def __init__(self, dims: int):
        self.dims = dims


class Connection:
    def __init__(self, conn_str: str):
        self.henv, self.hdbc = _vp(), _vp()
        _odbc.SQLAllocHandle(_sh(SQL_HANDLE_ENV), None, ctypes.byref(self.henv))
        _odbc.SQLSetEnvAttr(self.henv, SQL_ATTR_ODBC_VERSION, _vp(SQL_OV_ODBC3_80), 0)
        _odbc.SQLAllocHandle(_sh(SQL_HANDLE_DBC), self.henv, ctypes.byref(self.hdbc))
        rc = _odbc.SQLDriverConnectW(self.hdbc, None, _w(conn_str), _sh(SQL_NTS), None, _sh(0), None, ctypes.c_ushort(0))
        if not _ok(rc):
            raise OdbcError("connect", _diag(SQL_HANDLE_DBC, self.hdbc))

    def close(self) -> None:
        _odbc.SQLDisconnect(self.hdbc)
        _odbc.SQLFreeHandle(_sh(SQL_HANDLE_DBC), self.hdbc)
        _odbc.SQLFreeHandle(_sh(SQL_HANDLE_ENV), self.henv)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def execute(self, sql: str, params: list | None = None, out_dims: dict[int, int] | None = None):
        """Runs `sql` with `params` (lists of numbers bind as SQL_SS_VECTOR, `Null(n)` as a NULL
        vector of n dimensions, int as SQL_INTEGER, str as SQL_WVARCHAR; the parameter numbers in
        `out_dims` are input/output); returns (rows, output vectors by parameter number). Vector columns are read with SQLGetData
        SQL_C_SS_VECTOR; other columns as text (None for NULL)."""
        hstmt = _vp()
        _odbc.SQLAllocHandle(_sh(SQL_HANDLE_STMT), self.hdbc, ctypes.byref(hstmt))
        keep, outs = [], {}
        try:
            for i, p in enumerate(params or [], 1):
                ind = _len()
                io = SQL_PARAM_INPUT_OUTPUT if out_dims and i in out_dims else SQL_PARAM_INPUT
                if isinstance(p, int):
                    buf = ctypes.c_int32(p)
                    ind.value = 4
                    rc = _odbc.SQLBindParameter(hstmt, ctypes.c_ushort(i), _sh(io), _sh(SQL_C_SLONG), _sh(SQL_INTEGER),
                                                ctypes.c_size_t(0), _sh(0), ctypes.byref(buf), _len(4), ctypes.byref(ind))
                elif isinstance(p, str):
                    buf = _w(p)
                    ind.value = 2 * len(p)
                    rc = _odbc.SQLBindParameter(hstmt, ctypes.c_ushort(i), _sh(io), _sh(SQL_C_WCHAR), _sh(SQL_WVARCHAR),
                                                ctypes.c_size_t(max(len(p), 1)), _sh(0), buf, _len(len(buf)), ctypes.byref(ind))
                else:
                    null = isinstance(p, Null)
                    buf = vector_buffer([0.0] * p.dims if null else p)
                    ind.value = SQL_NULL_DATA if null else len(buf)
                    rc = _odbc.SQLBindParameter(hstmt, ctypes.c_ushort(i), _sh(io), _sh(SQL_C_SS_VECTOR),
                                                _sh(SQL_SS_VECTOR), ctypes.c_size_t(0), _sh(0), buf, _len(len(buf)),
                                                ctypes.byref(ind))
                    if io != SQL_PARAM_INPUT:
                        outs[i] = (buf, ind)
                if not _ok(rc):
                    raise OdbcError(f"bind {i}", _diag(SQL_HANDLE_STMT, hstmt))
                keep.append((buf, ind))
            rc = _odbc.SQLExecDirectW(hstmt, _w(sql), SQL_NTS)
            if not _ok(rc) and rc != SQL_NO_DATA:
                raise OdbcError("execute", _diag(SQL_HANDLE_STMT, hstmt))
            rows = self._rows(hstmt)
            while _ok(_odbc.SQLMoreResults(hstmt)):
                rows += self._rows(hstmt)
            out = {i: (None if ind.value == SQL_NULL_DATA else parse_struct(buf.raw)) for i, (buf, ind) in outs.items()}
            return rows, out
        finally:
            _odbc.SQLFreeHandle(_sh(SQL_HANDLE_STMT), hstmt)

    def _rows(self, hstmt) -> list[tuple]:
        ncols = _sh()
        _odbc.SQLNumResultCols(hstmt, ctypes.byref(ncols))
        if ncols.value == 0:
            return []
        types = []
        for c in range(1, ncols.value + 1):
            name = ctypes.create_string_buffer(256)
            nl, dt, dd, nu = _sh(), _sh(), _sh(), _sh()
            size = ctypes.c_size_t()
            _odbc.SQLDescribeColW(hstmt, ctypes.c_ushort(c), name, _sh(100), ctypes.byref(nl), ctypes.byref(dt),
                                  ctypes.byref(size), ctypes.byref(dd), ctypes.byref(nu))
            types.append((dt.value, size.value))
        rows = []
        while _ok(_odbc.SQLFetch(hstmt)):
            row = []
            for c, (dt, size) in enumerate(types, 1):
                ind = _len()
                if dt == SQL_SS_VECTOR:
                    buf = vector_buffer([0.0] * ((size - STRUCT_SIZE) // 4))
                    rc = _odbc.SQLGetData(hstmt, ctypes.c_ushort(c), _sh(SQL_C_SS_VECTOR), buf, _len(len(buf)),
                                          ctypes.byref(ind))
                    if not _ok(rc):
                        raise OdbcError("SQLGetData", _diag(SQL_HANDLE_STMT, hstmt))
                    row.append(None if ind.value == SQL_NULL_DATA else parse_struct(buf.raw))
                else:
                    buf = ctypes.create_string_buffer(65536)
                    rc = _odbc.SQLGetData(hstmt, ctypes.c_ushort(c), _sh(SQL_C_WCHAR), buf, _len(len(buf)),
                                          ctypes.byref(ind))
                    if not _ok(rc):
                        raise OdbcError("SQLGetData", _diag(SQL_HANDLE_STMT, hstmt))
                    row.append(None if ind.value == SQL_NULL_DATA else buf.raw[: ind.value].decode("utf-16-le"))
            rows.append(tuple(row))
        return rows
