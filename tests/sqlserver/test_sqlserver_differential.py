"""Differential: ferrodbc returns exactly what pyodbc returns through the same driver (same
values, same Python types) wherever pyodbc supports the type, and what mssql-python returns.
Where ferrodbc is richer the difference is asserted explicitly:

- datetimeoffset: pyodbc raises HY106 "ODBC SQL type -155 is not yet supported" unless an output
  converter is registered; ferrodbc returns an aware datetime (equal to pyodbc + converter).
- uniqueidentifier: pyodbc returns str unless pyodbc.native_uuid (a module global) is set;
  ferrodbc returns uuid.UUID (str with conn.native_uuid = False, equal to pyodbc's).
- sql_variant: pyodbc 5.5 fails the query (Driver 18: HY106 on the cell's C type -16; FreeTDS:
  HY091); ferrodbc returns the underlying value (Driver 18) or its text (FreeTDS).
"""

from __future__ import annotations

import uuid

import pytest

import ferrodbc

from sqlserver_support import in_ci, missing, synthetic

pyodbc = pytest.importorskip("pyodbc") if not in_ci() else __import__("pyodbc")

TYPES_ALL_N = 2000
MIXED_N = 10000
COLS = [c for c, _ in synthetic.columns("types_all")]
DTO = ["c_dto0", "c_dto7"]
NOT_PYODBC = DTO + ["c_guid", "c_variant"]  # compared separately below
PLAIN = [c for c in COLS if c not in NOT_PYODBC]


def as_tuples(rows):
    return [tuple(bytes(v) if isinstance(v, bytearray) else v for v in r) for r in rows]


def types_of(rows):
    return {tuple(type(v).__name__ for v in r) for r in rows}


def first_difference(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y or [type(v) for v in x] != [type(v) for v in y]:
            return i, x, y
    return None


def test_types_all_same_as_pyodbc(conn, driver, pyodbc_connect):
    """Every column pyodbc supports, 2,000 rows: identical values AND Python types; and both equal
    the synthetic mirror."""
    q = f"SELECT {', '.join(PLAIN)} FROM peer.types_all_{TYPES_ALL_N}"
    mine = as_tuples(conn.cursor().execute(q).fetchall())
    theirs = as_tuples(pyodbc_connect().cursor().execute(q).fetchall())
    assert len(mine) == len(theirs) == TYPES_ALL_N
    assert first_difference(mine, theirs) is None, first_difference(mine, theirs)
    idx = [COLS.index(c) for c in PLAIN]
    expected = [tuple(r[j] for j in idx) for r in synthetic.rows("types_all", TYPES_ALL_N)]
    assert mine == expected


def test_mixed_same_as_pyodbc(conn, driver, pyodbc_connect):
    q = f"SELECT * FROM peer.mixed_{MIXED_N}"
    mine = as_tuples(conn.cursor().execute(q).fetchall())
    theirs = as_tuples(pyodbc_connect().cursor().execute(q).fetchall())
    assert len(mine) == MIXED_N
    assert first_difference(mine, theirs) is None, first_difference(mine, theirs)
    assert types_of(mine) == types_of(theirs)
    assert mine == list(synthetic.rows("mixed", MIXED_N))


@pytest.mark.parametrize("shape,n", [("int_nvarchar_float", 5000), ("wide32", 500), ("lob_nvarcharmax_64k", 4), ("lob_varbinarymax_1024k", 2)])
def test_other_shapes_same_as_pyodbc(conn, driver, pyodbc_connect, shape, n):
    q = f"SELECT * FROM peer.{shape}_{n}"
    mine = as_tuples(conn.cursor().execute(q).fetchall())
    theirs = as_tuples(pyodbc_connect().cursor().execute(q).fetchall())
    assert first_difference(mine, theirs) is None, first_difference(mine, theirs)
    assert mine == list(synthetic.rows(shape, n))


def test_datetimeoffset_richer_than_pyodbc(conn, driver, pyodbc_connect):
    """pyodbc cannot read datetimeoffset without a converter; with synthetic.decode_dto it agrees
    with ferrodbc's aware datetimes (Driver 18). Through FreeTDS pyodbc's converter receives text,
    not the struct, so only ferrodbc is compared with the mirror there."""
    q = f"SELECT id, {', '.join(DTO)} FROM peer.types_all_300"
    pc = pyodbc_connect()
    with pytest.raises(pyodbc.Error) as ei:
        pc.cursor().execute(q).fetchall()
    assert "-155" in str(ei.value)
    mine = as_tuples(conn.cursor().execute(q).fetchall())
    exp = [(r[0], r[COLS.index("c_dto0")], r[COLS.index("c_dto7")]) for r in synthetic.rows("types_all", 300)]
    assert mine == exp
    assert all(v.tzinfo is not None and v.utcoffset() == e.utcoffset() for r, x in zip(mine, exp) for v, e in zip(r[1:], x[1:]) if e is not None)
    if driver == "msodbcsql":
        pc.add_output_converter(synthetic.SQL_SS_TIMESTAMPOFFSET, synthetic.decode_dto)
        assert as_tuples(pc.cursor().execute(q).fetchall()) == mine


def test_uniqueidentifier_vs_pyodbc(conn, driver, pyodbc_connect):
    q = "SELECT c_guid FROM peer.types_all_200"
    theirs = [r[0] for r in pyodbc_connect().cursor().execute(q).fetchall()]
    mine = [r[0] for r in conn.cursor().execute(q).fetchall()]
    assert all(type(v) is str for v in theirs if v is not None)
    assert all(type(v) is uuid.UUID for v in mine if v is not None)
    assert [None if v is None else str(v).upper() for v in mine] == theirs
    conn.native_uuid = False
    assert [r[0] for r in conn.cursor().execute(q).fetchall()] == theirs
    saved = pyodbc.native_uuid
    pyodbc.native_uuid = True
    try:
        assert [r[0] for r in pyodbc_connect().cursor().execute(q).fetchall()] == mine
    finally:
        pyodbc.native_uuid = saved


def test_sql_variant_vs_pyodbc(conn, driver, pyodbc_connect):
    q = "SELECT id, c_variant FROM peer.types_all_100"
    with pytest.raises(pyodbc.Error):
        pyodbc_connect().cursor().execute(q).fetchall()
    mine = [r[1] for r in conn.cursor().execute(q).fetchall()]
    exp = [r[COLS.index("c_variant")] for r in synthetic.rows("types_all", 100)]
    if driver == "msodbcsql":
        assert mine == exp and all(type(v) is int for v in mine if v is not None)
    else:
        assert mine == [None if e is None else str(e) for e in exp]


def test_params_same_as_pyodbc(conn, driver, pyodbc_connect):
    """The same parameters echo the same values through both (types pyodbc binds the same way)."""
    import datetime as dt
    from decimal import Decimal

    values = [None, True, 7, -(2**63), 2.5, Decimal("-1234567890123456789012345678.0123456789"), "héllo 😀",
              "x" * 4000, b"\x00\xff" * 10, dt.date(2024, 2, 29), dt.datetime(2024, 2, 29, 23, 59, 58, 123456)]
    pc = pyodbc_connect()
    for v in values:
        a = conn.cursor().execute("SELECT ?", v).fetchval()
        b = pc.cursor().execute("SELECT ?", v).fetchone()[0]
        b = bytes(b) if isinstance(b, bytearray) else b
        assert (a, type(a)) == (b, type(b)), v


# --- mssql-python ------------------------------------------------------------------------------

@pytest.fixture
def mssql(peer):
    try:
        import mssql_python
    except ImportError:
        missing("mssql-python is not installed in the venv")
    cn = mssql_python.connect(f"Server=127.0.0.1,{peer.port};UID=sa;PWD=x;Encrypt=no;TrustServerCertificate=yes")
    yield cn
    cn.close()


@pytest.fixture
def ferro18(peer):
    """ferrodbc through Driver 18 (mssql-python bundles the same driver)."""
    from sqlserver_support import require_driver, tdspeer

    require_driver("msodbcsql")
    cn = ferrodbc.connect(tdspeer.conn_str(peer, "msodbcsql"), autocommit=True)
    yield cn
    cn.close()


def test_types_all_same_as_mssql_python(ferro18, mssql):
    """mssql-python supports every types_all column (datetimeoffset, UUID and sql_variant
    included): ferrodbc returns the very same values and types."""
    q = "SELECT * FROM peer.types_all_500"
    mine = as_tuples(ferro18.cursor().execute(q).fetchall())
    cur = mssql.cursor()
    cur.execute(q)
    theirs = as_tuples(cur.fetchall())
    assert len(theirs) == 500
    assert first_difference(mine, theirs) is None, first_difference(mine, theirs)


@pytest.mark.parametrize("shape,n", [("mixed", 10000), ("int_nvarchar_float", 3000), ("dto_dec_guid", 300)])
def test_shapes_same_as_mssql_python(ferro18, mssql, shape, n):
    q = f"SELECT * FROM peer.{shape}_{n}"
    mine = as_tuples(ferro18.cursor().execute(q).fetchall())
    cur = mssql.cursor()
    cur.execute(q)
    theirs = as_tuples(cur.fetchall())
    assert first_difference(mine, theirs) is None, first_difference(mine, theirs)
    assert mine == list(synthetic.rows(shape, n))




def test_description_same_as_pyodbc(conn, driver, pyodbc_connect):
    """Names, sizes, precision, scale and null_ok equal pyodbc's through the same driver (FreeTDS
    says NOT NULL for the id column, Driver 18 does not: both libraries report what the driver
    says). Stated differences: (MAX) columns have display/internal size None (pyodbc: 0); the type
    objects are bytes (pyodbc: bytearray), uuid.UUID (str), datetime for datetimeoffset (bytearray),
    object/str for sql_variant (bytearray)."""
    q = "SELECT TOP 1 * FROM peer.types_all_2"
    mine = conn.cursor().execute(q).description
    theirs = pyodbc_connect().cursor().execute(q).description
    assert [d[0] for d in mine] == [d[0] for d in theirs] == COLS
    for m, t in zip(mine, theirs):
        if m[3] is None:
            assert (m[3], m[4], t[3], t[4]) == (None, None, 0, 0), m
        else:
            assert m[3:5] == tuple(t[3:5]), (m, t)
        assert m[5:7] == tuple(t[5:7]), (m, t)
        if t[1] is bytearray or m[0] == "c_guid":
            continue  # the stated differences, checked below
        assert m[1] is t[1], (m, t)
    by_name = {d[0]: d[1] for d in mine}
    assert by_name["c_varbinary50"] is bytes and by_name["c_guid"] is uuid.UUID
    assert by_name["c_dto7"].__name__ == "datetime"
    assert by_name["c_variant"] is (object if driver == "msodbcsql" else str)
