"""Microsoft ODBC Driver 18's bcp API through ctypes, on a ferrodbc connection's own HDBC.

unixODBC does not forward the bcp functions: they are looked up in the driver's library (the
one this process loaded, else the registered path), and they take unixODBC's HDBC."""

import ctypes
import glob

SQL_COPT_SS_BCP = 1219
SQL_VARLEN_DATA = -10
SQL_NULL_DATA = -1
DB_IN = 1
SUCCEED = 1
# bcp bind types (sqlncli.h)
SQLINT4 = 0x38
SQLNCHAR = 0xEF
SQLCHARACTER = 0x2F
SQLBIGVARBINARY = 0xA5
# bcp_control options
BCPKEEPNULLS = 5
BCPKEEPIDENTITY = 8
BCPHINTSW = 11


def _library() -> ctypes.CDLL:
    with open("/proc/self/maps") as f:
        loaded = {line.split()[-1] for line in f if "libmsodbcsql-18" in line}
    paths = sorted(loaded) or sorted(glob.glob("/opt/microsoft/msodbcsql18/lib64/libmsodbcsql-18*.so*"))
    if not paths:
        raise RuntimeError("Microsoft ODBC Driver 18 library not found")
    lib = ctypes.CDLL(paths[0])
    vp, i, i32 = ctypes.c_void_p, ctypes.c_int, ctypes.c_int32
    for name, args, res in [
        ("bcp_initW", [vp, ctypes.c_wchar_p, vp, vp, i], ctypes.c_short),
        ("bcp_bind", [vp, vp, i, i32, vp, i, i, i], ctypes.c_short),
        ("bcp_collen", [vp, i32, i], ctypes.c_short),
        ("bcp_colptr", [vp, vp, i], ctypes.c_short),
        ("bcp_control", [vp, i, vp], ctypes.c_short),
        ("bcp_sendrow", [vp], ctypes.c_short),
        ("bcp_batch", [vp], i32),
        ("bcp_done", [vp], i32),
    ]:
        f = getattr(lib, name)
        f.argtypes, f.restype = args, res
    return lib


def _utf16z(s: str) -> ctypes.Array:
    b = s.encode("utf-16-le") + b"\0\0"
    return ctypes.create_string_buffer(b, len(b))


class BcpError(Exception):
    pass


def _diag(hdbc) -> str:
    """The connection's diagnostic records (where the bcp functions report), through unixODBC."""
    odbc = ctypes.CDLL("libodbc.so.2")
    out = []
    for rec in range(1, 5):
        # SQLWCHAR is 2 bytes here (UTF-16), not Python's 4-byte wchar_t.
        state = ctypes.create_string_buffer(12)
        native = ctypes.c_int32()
        msg = ctypes.create_string_buffer(2048)
        n = ctypes.c_short()
        rc = odbc.SQLGetDiagRecW(ctypes.c_short(2), hdbc, ctypes.c_short(rec), state, ctypes.byref(native), msg,
                                 ctypes.c_short(1024), ctypes.byref(n))
        if rc not in (0, 1):
            break
        text = msg.raw[: 2 * n.value].decode("utf-16-le", "replace")
        out.append(f"[{state.raw[:10].decode('utf-16-le', 'replace')}] ({native.value}) {text}")
    return "; ".join(out)


def load(conn, table: str, types: list[int], rows: list[tuple], keep_nulls=False, hints: str | None = None) -> int:
    """Copies `rows` into `table` (columns 1..n bound with `types`): bcp_done's row count.

    Values: int for SQLINT4, str for SQLNCHAR / SQLCHARACTER (sent as UTF-16 / ASCII text, the
    driver converts), bytes for SQLBIGVARBINARY, None for NULL."""
    lib = _library()
    hdbc = conn.hdbc
    name = _utf16z(table)
    if lib.bcp_initW(hdbc, ctypes.cast(name, ctypes.c_wchar_p), None, None, DB_IN) != SUCCEED:
        raise BcpError(f"bcp_initW failed: {_diag(hdbc)}")
    if keep_nulls and lib.bcp_control(hdbc, BCPKEEPNULLS, ctypes.c_void_p(1)) != SUCCEED:
        raise BcpError("bcp_control(KEEPNULLS) failed")
    if hints is not None:
        h = _utf16z(hints)
        if lib.bcp_control(hdbc, BCPHINTSW, ctypes.cast(h, ctypes.c_void_p)) != SUCCEED:
            raise BcpError("bcp_control(HINTS) failed")
    # Bound to a placeholder: every row points the column at its value (bcp_colptr) and gives its
    # length (bcp_collen).
    placeholder = ctypes.create_string_buffer(8)
    for col, t in enumerate(types, 1):
        # SQL_VARLEN_DATA needs a length prefix or a terminator ("For BCP, all variable-length
        # data must have either a length-prefix or a terminator specified"): a fixed length
        # instead, which bcp_collen overrides for every row.
        varlen = 4 if t == SQLINT4 else 8000
        if lib.bcp_bind(hdbc, ctypes.cast(placeholder, ctypes.c_void_p), 0, varlen, None, 0, t, col) != SUCCEED:
            raise BcpError(f"bcp_bind({col}) failed: {_diag(hdbc)}")
    keep = []
    for row in rows:
        for col, (t, v) in enumerate(zip(types, row), 1):
            if v is None:
                lib.bcp_collen(hdbc, SQL_NULL_DATA, col)
                continue
            if t == SQLINT4:
                data = int(v).to_bytes(4, "little", signed=True)
            elif t == SQLNCHAR:
                data = v.encode("utf-16-le")
            elif t == SQLCHARACTER:
                data = v.encode("ascii")
            else:
                data = bytes(v)
            buf = ctypes.create_string_buffer(data, max(len(data), 1))
            keep.append(buf)
            lib.bcp_colptr(hdbc, ctypes.cast(buf, ctypes.c_void_p), col)
            lib.bcp_collen(hdbc, len(data), col)
        if lib.bcp_sendrow(hdbc) != SUCCEED:
            err = _diag(hdbc)
            lib.bcp_done(hdbc)
            raise BcpError(f"bcp_sendrow failed: {err}")
    n = lib.bcp_done(hdbc)
    if n < 0:
        raise BcpError(f"bcp_done failed: {_diag(hdbc)}")
    return n
