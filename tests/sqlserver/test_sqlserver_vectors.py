"""SQL Server 2025 VECTOR(n) and JSON columns through ferrodbc (docs/vectors.md), against the
TDS peer, which serves them as SQL Server 2025 does (eng/tds-peer/captures/vector.md).

Without `VectorTypeSupport=v1` (Driver 18's default, and always through FreeTDS) the server
sends a vector as varchar(max) JSON text, so it reads as `str`, as in pyodbc; JSON columns read
as `str` through both drivers (Driver 18.6 has no JSON type). SQLAlchemy's JSON type works
through mssql+ferrodbc, and a json column reflects as JSON.
"""

from __future__ import annotations

import json
import urllib.parse

import pytest

from sqlserver_support import in_ci, require_driver, tdspeer, tname

try:
    import sqlalchemy
except ImportError:  # eng/setup.sh installs it (eng/requirements.txt): CI fails, never skips
    if in_ci():
        raise
    pytest.skip("SQLAlchemy is not installed (eng/requirements.txt)", allow_module_level=True)


def test_vectors_and_json_read_as_text_without_vector_support(connect):
    cn = connect()
    t = tname("vec")
    cn.execute(f"CREATE TABLE {t} (id int, v vector(3), j json)")
    cn.execute(f"INSERT INTO {t} VALUES (1, '[0.1, 2, 30]', '{{\"a\":[1,2]}}'), (2, NULL, NULL)")
    cur = cn.execute(f"SELECT id, v, j FROM {t} ORDER BY id")
    assert [d[1] for d in cur.description] == [int, str, str]
    assert [tuple(r) for r in cur.fetchall()] == [
        (1, "[1.0000000e-001,2.0000000e+000,3.0000000e+001]", '{"a":[1,2]}'),
        (2, None, None),
    ]
    pa = pytest.importorskip("pyarrow") if not in_ci() else __import__("pyarrow")
    table = pa.table(cn.execute(f"SELECT v, j FROM {t} ORDER BY id").fetch_arrow_table())
    assert table.column("v").to_pylist() == ["[1.0000000e-001,2.0000000e+000,3.0000000e+001]", None]
    assert str(table.schema.field("j").type) in ("string", "large_string")


def test_text_parameters_convert_to_vectors(connect):
    cn = connect()
    t = tname("vec")
    cn.execute(f"CREATE TABLE {t} (id int, v vector(2))")
    cn.cursor().executemany(f"INSERT INTO {t} VALUES (?, ?)", [(1, "[1, 2]"), (2, None)])
    rows = [tuple(r) for r in cn.execute(f"SELECT id, v FROM {t} ORDER BY id").fetchall()]
    assert rows == [(1, "[1.0000000e+000,2.0000000e+000]"), (2, None)]
    with pytest.raises(Exception, match="42204"):
        cn.execute(f"INSERT INTO {t} VALUES (3, ?)", "[1, 2, 3]")


def _engine(peer):
    odbc = urllib.parse.quote_plus(tdspeer.conn_str(peer, "msodbcsql"))
    return sqlalchemy.create_engine(f"mssql+ferrodbc:///?odbc_connect={odbc}")


def test_sqlalchemy_json_type_round_trips(peer):
    require_driver("msodbcsql")
    eng = _engine(peer)
    md = sqlalchemy.MetaData()
    t = sqlalchemy.Table(tname("saj"), md, sqlalchemy.Column("id", sqlalchemy.Integer, primary_key=True,
                                                             autoincrement=False),
                         sqlalchemy.Column("doc", sqlalchemy.JSON))
    md.create_all(eng)
    doc = {"a": [1, 2], "b": "x/é", "c": None}
    with eng.begin() as c:
        c.execute(t.insert(), [{"id": 1, "doc": doc}, {"id": 2, "doc": None}])
        assert c.execute(sqlalchemy.select(t.c.doc).order_by(t.c.id)).scalars().all() == [doc, None]
        assert c.execute(sqlalchemy.select(t.c.doc["a"][1].as_integer()).where(t.c.id == 1)).scalar() == 2
    eng.dispose()


def test_sqlalchemy_reflects_and_reads_a_native_json_column(peer):
    require_driver("msodbcsql")
    eng = _engine(peer)
    name = tname("saj")
    with eng.begin() as c:
        c.exec_driver_sql(f"CREATE TABLE {name} (id int, j json)")
        c.exec_driver_sql(f"INSERT INTO {name} VALUES (1, ?)", (json.dumps({"k": [1, 2]}),))
        cols = {col["name"]: col["type"] for col in sqlalchemy.inspect(c).get_columns(name)}
        assert isinstance(cols["j"], sqlalchemy.JSON)
        t = sqlalchemy.Table(name, sqlalchemy.MetaData(), autoload_with=c)
        assert c.execute(sqlalchemy.select(t.c.j)).scalar() == {"k": [1, 2]}
        assert c.execute(sqlalchemy.select(t.c.j["k"][0].as_integer())).scalar() == 1
    eng.dispose()


def test_the_text_opt_in_parses_into_float32_arrays(connect):
    """ferrodbc.vectors: `to_text` writes a parameter SQL Server converts to exactly these
    float32 values; `from_text` parses the text SQL Server sends into `array('f')`, which numpy
    takes without a copy. 8 significant digits lose what they cannot tell apart."""
    import array
    import struct

    np = pytest.importorskip("numpy") if not in_ci() else __import__("numpy")
    from ferrodbc.vectors import from_text, to_text

    f32 = [struct.unpack("<f", struct.pack("<I", b))[0] for b in (0x7F7FFFFF, 0xFF7FFFFF, 1, 0x80000000)]
    edges = [*f32, 0.1, 1 / 3]
    cn = connect()
    t = tname("vec")
    cn.execute(f"CREATE TABLE {t} (id int, v vector({len(edges)}))")
    cn.execute(f"INSERT INTO {t} VALUES (1, ?), (2, NULL)", to_text(edges))
    got = [from_text(r[0]) for r in cn.execute(f"SELECT v FROM {t} ORDER BY id").fetchall()]
    assert got[1] is None and isinstance(got[0], array.array) and got[0].typecode == "f"
    expect = array.array("f", edges)
    assert got[0].tobytes() == expect.tobytes()
    view = np.asarray(got[0])
    assert view.dtype == np.float32 and np.shares_memory(view, np.frombuffer(got[0], np.float32))
    # 1000.00006f and 1000.00012f both come back as 1.0000001e+003.
    near = [struct.unpack("<f", struct.pack("<I", b))[0] for b in (0x447A0001, 0x447A0002)]
    cn.execute(f"CREATE TABLE {t}_n (v vector(2))")
    cn.execute(f"INSERT INTO {t}_n VALUES (?)", to_text(near))
    text = cn.execute(f"SELECT v FROM {t}_n").fetchval()
    assert text == "[1.0000001e+003,1.0000001e+003]"
    assert from_text(text)[0] == from_text(text)[1]
    for bad in ("[1, NaN]", "[1e39]", "[1,x]", "1,2"):
        with pytest.raises(ValueError):
            from_text(bad)
    with pytest.raises(ValueError):
        to_text([float("nan")])


# ---- native vectors: Driver 18 with VectorTypeSupport=v1 ---------------------------------------

F32_EDGES_BITS = (0x7F7FFFFF, 0xFF7FFFFF, 0x00000001, 0x80000001, 0x80000000, 0x00000000, 0x3DCCCCCD, 0x447A0001)


@pytest.fixture
def native(peer):
    """connect() -> a ferrodbc connection through Driver 18 that asked for native vectors."""
    import ferrodbc

    require_driver("msodbcsql")
    opened = []

    def _connect(**kw):
        cn = ferrodbc.connect(tdspeer.conn_str(peer, "msodbcsql", VectorTypeSupport="v1"), autocommit=True, **kw)
        opened.append(cn)
        return cn

    yield _connect
    for cn in opened:
        cn.close()


def _vectors(dims: int, rows: int = 4):
    """Deterministic float32 rows with the edge values in the first, NULL in the third."""
    import array
    import random
    import struct

    rnd = random.Random(dims)
    out = []
    for r in range(rows):
        if r == 2:
            out.append(None)
            continue
        vals = [struct.unpack("<f", struct.pack("<f", rnd.gauss(0, 1)))[0] for _ in range(dims)]
        if r == 0:
            edges = [struct.unpack("<f", struct.pack("<I", b))[0] for b in F32_EDGES_BITS]
            vals[: min(dims, len(edges))] = edges[: min(dims, len(edges))]
        out.append(array.array("f", vals))
    return out


def _load_text(cn, t, dims, vecs):
    from ferrodbc.vectors import to_text

    cn.execute(f"CREATE TABLE {t} (id int, v vector({dims}))")
    cn.cursor().executemany(f"INSERT INTO {t} VALUES (?, ?)",
                            [(i, None if v is None else to_text(v)) for i, v in enumerate(vecs)])


@pytest.mark.parametrize("dims", [1, 3, 768, 1998])
def test_native_reads_are_exact_in_every_shape(native, dims):
    import array

    import ferrodbc

    cn = native()
    t = tname("vn")
    vecs = _vectors(dims)
    _load_text(cn, t, dims, vecs)
    sql = f"SELECT id, v FROM {t} ORDER BY id"
    cur = cn.execute(sql)
    assert cur.description[1][1] is array.array
    assert cur.description[1][3] == 16 + 4 * dims
    rows = cur.fetchall()
    assert [r[1] for r in rows] == vecs
    assert all(r[1] is None or (r[1].typecode == "f" and r[1].tobytes() == v.tobytes()) for r, v in zip(rows, vecs))
    lazy = cn.cursor()
    lazy.row_factory = ferrodbc.LazyRow
    assert [tuple(r)[1] for r in lazy.execute(sql).fetchall()] == vecs
    assert [r[1] for r in cn.execute(sql)] == vecs
    assert [r[1] for r in cn.execute(sql).fetchmany(10)] == vecs
    # After a (MAX) column the vector is read with SQLGetData instead of a bound buffer.
    got = [r[1] for r in cn.execute(f"SELECT CAST(N'x' AS nvarchar(max)) AS s, v FROM {t} ORDER BY id").fetchall()]
    assert got == vecs


@pytest.mark.parametrize("dims", [1, 3, 768, 1998])
def test_native_arrow_is_fixed_size_list_float32(native, dims):
    pa = pytest.importorskip("pyarrow") if not in_ci() else __import__("pyarrow")
    cn = native()
    t = tname("va")
    vecs = _vectors(dims)
    _load_text(cn, t, dims, vecs)
    table = pa.table(cn.execute(f"SELECT id, v FROM {t} ORDER BY id").fetch_arrow_table())
    assert table.schema.field("v").type == pa.list_(pa.float32(), dims)
    col = table.column("v").combine_chunks()
    assert col.null_count == 1 and not col.is_valid()[2].as_py()
    for got, want in zip(col.to_pylist(), vecs):
        assert got == (None if want is None else list(want))
    values = col.values.to_numpy(zero_copy_only=True)
    assert values.dtype.name == "float32" and values.shape == (4 * dims,)
    reader = pa.RecordBatchReader.from_stream(cn.execute(f"SELECT v FROM {t} ORDER BY id").fetch_record_batch())
    assert sum(b.num_rows for b in reader) == 4


def test_native_vectors_into_numpy_without_a_copy(native):
    np = pytest.importorskip("numpy") if not in_ci() else __import__("numpy")
    cn = native()
    v = cn.execute("SELECT CAST('[0.5, -1, 3e-39]' AS vector(3))").fetchval()
    a = np.asarray(v)
    assert a.dtype == np.float32 and a.tolist() == [0.5, -1.0, np.float32(3e-39).item()]
    a[0] = 2.0  # the array shares the value's memory
    assert v[0] == 2.0


def test_native_output_converters_row_factories_and_text_connections_agree(native, peer):
    import ferrodbc

    cn = native()
    t = tname("vc")
    vecs = _vectors(3)
    _load_text(cn, t, 3, vecs)
    cn.add_output_converter(-156, lambda raw: None if raw is None else len(raw))
    assert [r[0] for r in cn.execute(f"SELECT v FROM {t} ORDER BY id").fetchall()] == [28, 28, None, 28]
    cn.clear_output_converters()
    from ferrodbc.rows import namedtuple_row

    for factory, pick in ((dict, lambda r: r["v"]), (namedtuple_row, lambda r: r.v), (tuple, lambda r: r[0])):
        cur = cn.cursor()
        cur.row_factory = factory
        assert [pick(r) for r in cur.execute(f"SELECT v FROM {t} ORDER BY id").fetchall()] == vecs
    text = ferrodbc.connect(tdspeer.conn_str(peer, "msodbcsql"), autocommit=True)
    from ferrodbc.vectors import from_text

    parsed = [from_text(r[0]) for r in text.execute(f"SELECT v FROM {t} ORDER BY id").fetchall()]
    text.close()
    # The text keeps 8 digits: equal where 8 digits name the float32, which these values do
    # except the last edge (1000.00006, which reads back as 1000.0001).
    assert parsed[1:] == vecs[1:]


# ---- vector parameters -------------------------------------------------------------------------

def _param_forms(vals):
    """The Python values that bind as one vector: lists, tuples, array('f'/'d'), numpy
    float32/float64 arrays and memoryviews of them."""
    import array

    np = pytest.importorskip("numpy") if not in_ci() else __import__("numpy")
    return {
        "list": list(vals),
        "tuple": tuple(vals),
        "array_f": array.array("f", vals),
        "array_d": array.array("d", vals),
        "numpy_f32": np.asarray(vals, dtype=np.float32),
        "numpy_f64": np.asarray(vals, dtype=np.float64),
        "memoryview": memoryview(array.array("f", vals)),
        "numpy_strided": np.asarray([v for x in vals for v in (x, 0.0)], dtype=np.float32)[::2],
    }


@pytest.mark.parametrize("dims", [1, 3, 768, 1998])
def test_native_parameters_are_exact(native, dims):
    cn = native()
    t = tname("vp")
    cn.execute(f"CREATE TABLE {t} (id int, form varchar(20), v vector({dims}))")
    want = _vectors(dims, 1)[0]
    forms = _param_forms(list(want))
    for i, (name, value) in enumerate(forms.items()):
        cn.execute(f"INSERT INTO {t} VALUES (?, ?, ?)", i, name, value)
    rows = cn.execute(f"SELECT form, v FROM {t} ORDER BY id").fetchall()
    assert [r[0] for r in rows] == list(forms)
    for name, v in rows:
        assert v.tobytes() == want.tobytes(), name
    assert cn.execute("SELECT ?", want).fetchval().tobytes() == want.tobytes()


def test_native_executemany_and_null(native):
    cn = native()
    t = tname("vm")
    vecs = _vectors(768, 6)
    cn.execute(f"CREATE TABLE {t} (id int, v vector(768))")
    cn.cursor().executemany(f"INSERT INTO {t} VALUES (?, ?)", list(enumerate(vecs)))
    assert [r[0] for r in cn.execute(f"SELECT v FROM {t} ORDER BY id").fetchall()] == vecs


def test_vector_parameters_through_text_connections(connect):
    """Without native vectors (Driver 18's default, FreeTDS) the same values go as their JSON
    text, which the server converts exactly."""
    np = pytest.importorskip("numpy") if not in_ci() else __import__("numpy")
    from ferrodbc.vectors import from_text

    cn = connect()
    t = tname("vt")
    want = _vectors(5, 1)[0][:4]
    cn.execute(f"CREATE TABLE {t} (id int, v vector(4))")
    cn.cursor().executemany(f"INSERT INTO {t} VALUES (?, ?)",
                            [(1, np.asarray(want, dtype=np.float32)), (2, list(want)), (3, None)])
    got = [from_text(r[0]) for r in cn.execute(f"SELECT v FROM {t} ORDER BY id").fetchall()]
    assert got[2] is None
    # The text comes back with 8 digits: compare after the same rounding.
    # (A list as execute's only argument is the parameter sequence, as in pyodbc: wrap it.)
    text = cn.execute("SELECT CAST(CAST(? AS vector(4)) AS varchar(max))", (list(want),)).fetchval()
    assert [list(g) for g in got[:2]] == [list(from_text(text))] * 2


@pytest.mark.parametrize("bad, error, match", [
    ([1.0, float("nan")], "DataError", "element 1 is NaN"),
    ([float("inf"), 1.0], "DataError", "float32's range|NaN|inf"),
    ([1e39, 1.0], "DataError", "float32's range"),
    ([1.0, "x"], "ProgrammingError", "element 1 is str, not a number"),
    ([1.0, True], "ProgrammingError", "element 1 is bool"),
    # Past SQL Server's 1998 dimensions (40000 once wrapped the struct's i16 count): refused here.
    ([0.5] * 1999, "ProgrammingError", "a vector of 1999 elements"),
    ([0.5] * 40000, "ProgrammingError", "a vector of 40000 elements"),
])
def test_bad_vector_parameters_are_clear_errors(native, bad, error, match):
    import ferrodbc

    cn = native()
    with pytest.raises(getattr(ferrodbc, error), match=match):
        cn.execute("SELECT ?", (bad,))
    assert cn.execute("SELECT 1").fetchval() == 1


def test_wrong_dimension_is_the_servers_42204(native):
    np = pytest.importorskip("numpy") if not in_ci() else __import__("numpy")
    import ferrodbc

    cn = native()
    t = tname("vd")
    cn.execute(f"CREATE TABLE {t} (v vector(3))")
    with pytest.raises(ferrodbc.DatabaseError, match="42204"):
        cn.execute(f"INSERT INTO {t} VALUES (?)", np.zeros(4, dtype=np.float32))
    with pytest.raises(ferrodbc.ProgrammingError, match="one-dimensional"):
        cn.execute(f"INSERT INTO {t} VALUES (?)", np.zeros((1, 3), dtype=np.float32))
    assert cn.execute(f"SELECT COUNT(*) FROM {t}").fetchval() == 0


def test_top_k_by_cosine_distance_with_a_numpy_query_vector(native):
    """ORDER BY VECTOR_DISTANCE('cosine', embedding, ?) with a numpy query: the ids numpy's own
    computation ranks first."""
    np = pytest.importorskip("numpy") if not in_ci() else __import__("numpy")
    cn = native()
    t = tname("vk")
    rng = np.random.default_rng(33)
    data = rng.standard_normal((200, 64)).astype(np.float32)
    q = rng.standard_normal(64).astype(np.float32)
    cn.execute(f"CREATE TABLE {t} (id int, embedding vector(64))")
    cn.cursor().executemany(f"INSERT INTO {t} VALUES (?, ?)", [(i, row) for i, row in enumerate(data)])
    ids = [r[0] for r in cn.execute(
        f"SELECT TOP 10 id FROM {t} ORDER BY VECTOR_DISTANCE('cosine', embedding, ?)", q).fetchall()]
    d, qq = data.astype(np.float64), q.astype(np.float64)
    cos = 1 - d @ qq / (np.linalg.norm(d, axis=1) * np.linalg.norm(qq))
    assert ids == [int(i) for i in np.argsort(cos, kind="stable")[:10]]


# ---- bulk loads --------------------------------------------------------------------------------

@pytest.mark.parametrize("driver, native_conn", [("msodbcsql", True), ("msodbcsql", False), ("freetds", False)],
                         ids=["msodbcsql18-v1", "msodbcsql18-text", "freetds-text"])
def test_bulkcopy_and_bulkcopy_arrow_into_vector_columns(peer, driver, native_conn):
    """Rows of every vector form, and Arrow fixed_size_list / list / large_list of float32 and
    float64, through Driver 18's bcp (the column travels as exact JSON text: SQL Server describes
    it as varchar(max) to bcp) and FreeTDS's parameter arrays."""
    import array

    import ferrodbc

    np = pytest.importorskip("numpy") if not in_ci() else __import__("numpy")
    pa = pytest.importorskip("pyarrow") if not in_ci() else __import__("pyarrow")
    require_driver(driver)
    extra = {"VectorTypeSupport": "v1"} if native_conn else {}
    cn = ferrodbc.connect(tdspeer.conn_str(peer, driver, **extra), autocommit=True)
    t = tname("vb")
    cur = cn.cursor()
    cur.execute(f"CREATE TABLE {t} (id int NOT NULL, v vector(3) NULL)")
    edge = _vectors(3, 1)[0]
    rows = [(0, edge), (1, np.array([4, 5, 6], np.float32)), (2, [7.0, 8.0, 9.0]), (3, None),
            (4, array.array("d", [1.5, -0.0, 2.0]))]
    ferrodbc.reset_counters()
    assert cur.bulkcopy(t, rows)["rows_copied"] == 5
    # FreeTDS 1.3's bcp cannot take (MAX) columns: parameter arrays there (test_sqlserver_bulkcopy);
    # a v1 connection sends native vectors in parameter arrays (bcp would send text).
    assert ferrodbc.counters()["bulk_bcp_loads" if driver == "msodbcsql" and not native_conn else "bulk_array_loads"] == 1
    lists = [
        pa.array([[1, 2, 3], None], pa.list_(pa.float32(), 3)),
        pa.array([[4, 5, 6], None], pa.list_(pa.float64())),
        pa.array([[7, 8, 9], [1, 1, 1]], pa.large_list(pa.float32())),
    ]
    for k, arr in enumerate(lists):
        table = pa.table({"id": pa.array([10 + 2 * k, 11 + 2 * k], pa.int32()), "v": arr})
        assert cur.bulkcopy_arrow(t, table)["rows_copied"] == 2
    reader = ferrodbc.connect(tdspeer.conn_str(peer, "msodbcsql", VectorTypeSupport="v1"), autocommit=True)
    got = {r[0]: r[1] for r in reader.execute(f"SELECT id, v FROM {t}").fetchall()}
    reader.close()
    assert got[0].tobytes() == edge.tobytes()
    assert [list(got[i]) if got[i] is not None else None for i in (1, 2, 3, 4)] == [
        [4, 5, 6], [7, 8, 9], None, [1.5, -0.0, 2.0]]
    assert [got[i] and list(got[i]) for i in range(10, 16)] == [
        [1, 2, 3], None, [4, 5, 6], None, [7, 8, 9], [1, 1, 1]]
    bad = pa.table({"id": pa.array([99], pa.int32()), "v": pa.array([[1.0, None, 3.0]], pa.list_(pa.float32(), 3))})
    with pytest.raises(ferrodbc.Error, match="null"):
        cur.bulkcopy_arrow(t, bad)
    with pytest.raises(ferrodbc.DataError, match="NaN"):
        cur.bulkcopy(t, [(98, [1.0, float("nan"), 3.0])])
    cn.close()


@pytest.mark.parametrize("dims", [1, 3, 768, 1998])
@pytest.mark.parametrize("native_conn", [True, False], ids=["v1-arrays", "text-bcp"])
def test_bulk_loads_are_exact_in_every_shape(peer, dims, native_conn):
    """bulkcopy and bulkcopy_arrow of the edge values (+-3.4e38, subnormals, -0.0) and NULL,
    read back natively bit for bit: on a VectorTypeSupport=v1 connection as native vectors in
    INSERT parameter arrays, on a text connection as exact JSON text through Driver 18's bcp
    (the engine's counters say which path ran)."""
    import ferrodbc

    pa = pytest.importorskip("pyarrow") if not in_ci() else __import__("pyarrow")
    np = pytest.importorskip("numpy") if not in_ci() else __import__("numpy")
    require_driver("msodbcsql")
    extra = {"VectorTypeSupport": "v1"} if native_conn else {}
    cn = ferrodbc.connect(tdspeer.conn_str(peer, "msodbcsql", **extra), autocommit=True)
    reader = ferrodbc.connect(tdspeer.conn_str(peer, "msodbcsql", VectorTypeSupport="v1"), autocommit=True)
    vecs = _vectors(dims, 5)
    path = "bulk_array_loads" if native_conn else "bulk_bcp_loads"
    for how in ("rows", "numpy rows", "arrow"):
        t = tname("ve")
        cn.execute(f"CREATE TABLE {t} (id int NOT NULL, v vector({dims}) NULL)")
        cur = cn.cursor()
        ferrodbc.reset_counters()
        if how == "rows":
            got = cur.bulkcopy(t, list(enumerate(vecs)))
        elif how == "numpy rows":
            got = cur.bulkcopy(t, [(i, None if v is None else np.frombuffer(v, np.float32)) for i, v in enumerate(vecs)])
        else:
            arr = pa.array([None if v is None else list(v) for v in vecs], pa.list_(pa.float32(), dims))
            got = cur.bulkcopy_arrow(t, pa.table({"id": pa.array(range(len(vecs)), pa.int32()), "v": arr}))
        assert got["rows_copied"] == len(vecs)
        assert ferrodbc.counters()[path] == 1, (how, ferrodbc.counters())
        back = [r[1] for r in reader.execute(f"SELECT id, v FROM {t} ORDER BY id").fetchall()]
        assert [None if b is None else b.tobytes() for b in back] == [None if v is None else v.tobytes() for v in vecs], how
    with pytest.raises(ferrodbc.Error, match="vector|dimension"):
        cn.cursor().bulkcopy(t, [(1, [1.0] * (dims + 1))])
    reader.close()
    cn.close()


def test_vector_output_parameters(native, peer):
    """`ferrodbc.Output(array.array, value, size=n)`: an output or input/output vector of n
    dimensions (native vectors only: a text connection refuses it before sending)."""
    import array

    import ferrodbc

    cn = native()
    p = tname("pv")
    cn.execute(f"CREATE PROCEDURE {p} @v vector(3), @o vector(3) OUTPUT, @io vector(3) OUTPUT AS "
               "BEGIN SET @o = @v; SET @io = VECTOR_NORMALIZE(@io, 'norm2') END")
    edge = _vectors(3, 1)[0]
    o = ferrodbc.Output(array.array, size=3)
    io = ferrodbc.Output(array.array, array.array("f", [3.0, 0.0, 4.0]), size=3)
    got = cn.cursor().callproc(p, [edge, o, io])
    assert o.value.tobytes() == edge.tobytes() and got[1] == o.value
    assert io.value == array.array("f", [0.6, 0.0, 0.8])
    with pytest.raises(ferrodbc.ProgrammingError, match="size="):
        cn.cursor().callproc(p, [edge, ferrodbc.Output(array.array), io])
    text = ferrodbc.connect(tdspeer.conn_str(peer, "msodbcsql"), autocommit=True)
    with pytest.raises(ferrodbc.ProgrammingError, match="VectorTypeSupport=v1"):
        text.cursor().callproc(p, [edge, ferrodbc.Output(array.array, size=3), io])
    text.close()


def test_a_vector_cell_error_leaves_the_connection_usable(native):
    """A cell that fails (here an output converter raising on a vector) raises from fetchall; the
    cursor keeps its result set, as pyodbc's does, so the rows after the failing one are read by
    the next fetch. Driver 18 runs one result set per connection (no MARS): while it is open
    another cursor is "busy with results for another command" (pyodbc 5.x alike); re-executing
    the cursor, reading it to the end or closing it frees the connection."""
    import ferrodbc

    cn = native()
    t = tname("vc")
    cn.execute(f"CREATE TABLE {t} (id int, e vector(3))")
    cn.cursor().executemany(f"INSERT INTO {t} VALUES (?, ?)", [(i, [1.0, 2.0, float(i)]) for i in range(3000)])
    calls = []

    def once(b):
        calls.append(1)
        if len(calls) == 1:
            raise ValueError("converter says no")
        return b

    cn.add_output_converter(-156, once)
    cur = cn.cursor()
    with pytest.raises(ValueError, match="says no"):
        cur.execute(f"SELECT id, e FROM {t} ORDER BY id").fetchall()
    assert len(cur.fetchall()) == 2999  # the rows after the failing one
    assert cn.cursor().execute(f"SELECT COUNT(*) FROM {t}").fetchval() == 3000
    calls.clear()
    with pytest.raises(ValueError, match="says no"):
        cur.execute(f"SELECT id, e FROM {t} ORDER BY id").fetchall()
    assert cur.execute("SELECT 1").fetchval() == 1  # re-executing closes the old result set
    calls.clear()
    with pytest.raises(ValueError, match="says no"):
        cur.execute(f"SELECT id, e FROM {t} ORDER BY id").fetchall()
    with pytest.raises(ferrodbc.Error, match="busy"):
        cn.cursor().execute("SELECT 2").fetchval()
    cur.close()
    assert cn.cursor().execute("SELECT 2").fetchval() == 2
    cn.clear_output_converters()
