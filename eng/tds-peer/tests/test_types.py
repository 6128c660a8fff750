"""Every column of the synthetic `types_all` shape (and the other shapes) equals the Python
mirror in eng/peers/synthetic.py, through both drivers."""

import uuid

import pytest

import synthetic


def normalize(v):
    # pyodbc returns uniqueidentifier as str unless pyodbc.native_uuid is set (a global we leave alone).
    if isinstance(v, uuid.UUID):
        return str(v).upper()
    if isinstance(v, (bytearray, memoryview)):
        return bytes(v)
    return v


def fetch_compare(cn, shape, n, cols="*"):
    # datetimeoffset (-155) and sql_variant (-150) are not native pyodbc types: the converters
    # decode the raw SQL_SS_TIMESTAMPOFFSET_STRUCT / INT bytes (see synthetic.decode_*).
    synthetic.add_converters(cn)
    cur = cn.cursor()
    cur.execute(f"SELECT {cols} FROM peer.{shape}_{n}")
    names = [d[0] for d in cur.description]
    got = cur.fetchall()
    assert len(got) == n
    exp_cols = [c for c, _ in synthetic.columns(shape)]
    assert names == (exp_cols if cols == "*" else [c.strip() for c in cols.split(",")])
    idx = [exp_cols.index(c) for c in names]
    mismatches = []
    for i, (g, e) in enumerate(zip(got, synthetic.rows(shape, n))):
        for name, j, gv in zip(names, idx, g):
            ev = normalize(e[j])
            gv = normalize(gv)
            if gv != ev or (ev is not None and type(gv) is not type(ev)):
                mismatches.append((i, name, repr(gv)[:80], repr(ev)[:80]))
    assert not mismatches, mismatches[:10]
    return got


def test_types_all_1000_rows(connect):
    got = fetch_compare(connect(), "types_all", 1000)
    # NULL rows exist (both NBCROW and ROW encodings) and every nullable column is NULL there.
    assert got[3][1:] == tuple([None] * (len(got[3]) - 1))
    assert got[10][1:] == tuple([None] * (len(got[10]) - 1))


def test_types_all_descriptions(connect):
    cn = connect()
    synthetic.add_converters(cn)
    cur = cn.cursor()
    cur.execute("SELECT TOP 1 * FROM peer.types_all_10")
    d = {c[0]: c for c in cur.description}
    assert d["c_dec38"][4:6] == (38, 10)
    assert d["c_dec9"][4:6] == (9, 2)
    assert d["c_nvarchar"][3] == 50
    assert d["c_time7"][5] == 7
    cur.fetchall()


@pytest.mark.parametrize("shape,n", [("mixed", 5000), ("int_nvarchar", 1000), ("int_nvarchar_float", 1000), ("wide32", 500), ("dto_dec_guid", 500), ("lob_nvarcharmax_64k", 5), ("lob_varbinarymax_4096k", 2)])
def test_other_shapes(connect, shape, n):
    fetch_compare(connect(), shape, n)


def test_column_subset_and_top(connect):
    cur = connect().cursor()
    cur.execute("SELECT TOP 3 id, name FROM peer.mixed_100")
    assert [tuple(r) for r in cur.fetchall()] == [(i, f"name {i}") for i in range(3)]


def test_repeat_query_served_from_cache(connect):
    cn = connect()
    a = fetch_compare(cn, "mixed", 20000)
    b = fetch_compare(cn, "mixed", 20000)
    assert [tuple(r) for r in a] == [tuple(r) for r in b]


def test_prewarmed_table_matches(driver):
    import tdspeer
    from conftest import pyodbc

    with tdspeer.start_peer(extra_args=["--prewarm", "peer.int_nvarchar_float_3000,wide32_100"]) as p:
        cn = pyodbc.connect(tdspeer.conn_str(p, driver), timeout=10, autocommit=True)
        fetch_compare(cn, "int_nvarchar_float", 3000)
        fetch_compare(cn, "wide32", 100)
        cn.close()
