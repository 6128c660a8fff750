"""SQL Server 2025's VECTOR(n) and JSON as the peer speaks them (src/vector.rs, src/sql/vector.rs,
src/sql/json.rs; the clients' own bytes are in captures/vector.md).

- A client that asks for VECTORSUPPORT in LOGIN7 (Driver 18 with `VectorTypeSupport=v1`,
  mssql-python's bulk copy) is acknowledged at the lower version and gets native 0xF5 values;
  everyone else (pyodbc, FreeTDS, mssql-python's queries) gets SQL Server's downgrade: a
  varchar(max) JSON array with 8 significant digits per element (`1.0000000e+000`).
- Native values are checked through Driver 18 itself: SQLGetData / SQLBindParameter with
  SQL_C_SS_VECTOR (odbc_vector.py) and pyodbc's raw output converter for type -156.
"""

import math
import socket
import struct
import sys
import uuid
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import odbc_vector as ov
import rawtds

import tdspeer
from conftest import pyodbc

np = pytest.importorskip("numpy") if not tdspeer.in_ci() else __import__("numpy")

F32_MAX = struct.unpack("<f", struct.pack("<I", 0x7F7FFFFF))[0]
SUBNORMAL = struct.unpack("<f", struct.pack("<I", 1))[0]
EDGES = [F32_MAX, -F32_MAX, SUBNORMAL, -SUBNORMAL, -0.0, 0.0, 0.1, 1.0 / 3.0]


def f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def sql_text(vals) -> str:
    """SQL Server's downgrade text of a vector: `%.7e` with a signed 3-digit exponent."""
    def one(v):
        m, e = f"{f32(v):.7e}".split("e")
        return f"{m}e{'-' if int(e) < 0 else '+'}{abs(int(e)):03d}"
    return "[" + ",".join(one(v) for v in vals) + "]"


def shortest(vals) -> str:
    """JSON-array text that converts back to exactly these float32 values (9 digits)."""
    return "[" + ",".join(repr(np.float32(v).item()) if v != 0 else ("-0.0" if math.copysign(1, v) < 0 else "0")
                          for v in vals) + "]"


def tname(prefix="tv"):
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def same_bits(a, b) -> bool:
    return [struct.pack("<f", x) for x in a] == [struct.pack("<f", x) for x in b]


@pytest.fixture
def native_cs(peer, msodbcsql):
    return tdspeer.conn_str(peer, "msodbcsql", VectorTypeSupport="v1")


# ---- LOGIN7 FeatureExt: acknowledged only when asked, at the lower version --------------------

def _login_with_features(features: list[tuple[int, bytes]]) -> bytes:
    """rawtds's LOGIN7 with a FeatureExt block (OptionFlags3 fExtension, ibExtension)."""
    body = bytearray(rawtds.login7("vectest")[4:])
    if not features:
        return rawtds.login7("vectest")
    ext_at = len(body) + 4
    body[23] |= 0x10
    body[52:56] = ext_at.to_bytes(2, "little") + (4).to_bytes(2, "little")
    feats = b"".join(bytes([fid]) + len(d).to_bytes(4, "little") + d for fid, d in features) + b"\xff"
    body += (ext_at + 4).to_bytes(4, "little") + feats
    return (len(body) + 4).to_bytes(4, "little") + bytes(body)


def _acks(port: int, features) -> dict[int, bytes] | None:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(rawtds.packet(0x12, bytes([0, 0, 11, 0, 6, 1, 0, 17, 0, 1, 0xFF]) + bytes(6) + bytes([2])))
        rawtds.message(s)
        s.sendall(rawtds.packet(0x10, _login_with_features(features)))
        reply = rawtds.message(s)
    assert 0xAD in reply
    p = 0
    while p < len(reply):
        tok = reply[p]
        if tok == 0xAE:
            out, p = {}, p + 1
            while reply[p] != 0xFF:
                n = int.from_bytes(reply[p + 1:p + 5], "little")
                out[reply[p]] = reply[p + 5:p + 5 + n]
                p += 5 + n
            return out
        if tok in (0xE3, 0xAB, 0xAA, 0xAD):
            p += 3 + int.from_bytes(reply[p + 1:p + 3], "little")
        elif tok in (0xFD, 0xFE, 0xFF):
            p += 13
        else:
            raise AssertionError(f"token {tok:#x}")
    return None


@pytest.mark.parametrize("asked, acked", [
    ([], None),
    ([(0x0A, b"\x01")], {0x0A: b"\x01"}),
    ([(0x0E, b"\x01")], {0x0E: b"\x01"}),
    ([(0x0E, b"\x02")], {0x0E: b"\x01"}),            # float16 asked: the peer speaks v1
    ([(0x0D, b"\x01"), (0x0E, b"\x01")], {0x0D: b"\x01", 0x0E: b"\x01"}),
])
def test_feature_ext_acked_only_when_asked_at_the_lower_version(peer, asked, acked):
    assert _acks(peer.port, asked) == acked


# ---- the downgrade: every client that did not ask reads SQL Server's JSON text ----------------

def test_downgraded_vector_and_json_read_as_sql_servers_text(connect, driver):
    cn = connect()
    t = tname()
    cn.execute(f"CREATE TABLE {t} (id int, v vector(3), j json)")
    cn.execute(f"INSERT INTO {t} VALUES (1, '[0.1, 2, 30]', '{{\"a\":[1,2]}}'), (2, NULL, NULL)")
    cur = cn.execute(f"SELECT id, v, j FROM {t} ORDER BY id")
    assert [d[1] for d in cur.description] == [int, str, str]
    assert [tuple(r) for r in cur.fetchall()] == [
        (1, "[1.0000000e-001,2.0000000e+000,3.0000000e+001]", '{"a":[1,2]}'), (2, None, None)]


def test_downgraded_text_of_edge_values(connect, driver):
    cn = connect()
    t = tname()
    cn.execute(f"CREATE TABLE {t} (v vector({len(EDGES)}))")
    cn.execute(f"INSERT INTO {t} VALUES (?)", shortest(EDGES))
    assert cn.execute(f"SELECT v FROM {t}").fetchval() == sql_text(EDGES)
    assert sql_text(EDGES[:3]) == "[3.4028235e+038,-3.4028235e+038,1.4012985e-045]"


def test_pyodbc_driver18_without_vector_support_sends_text_parameters(connect, driver):
    """A str parameter converts implicitly (JSON-array text), through both drivers."""
    cn = connect()
    t = tname()
    cn.execute(f"CREATE TABLE {t} (id int, v vector(2))")
    cn.cursor().executemany(f"INSERT INTO {t} VALUES (?, ?)", [(1, "[1,2]"), (2, "[-0.5, 1e-3]"), (3, None)])
    rows = [tuple(r) for r in cn.execute(f"SELECT id, v FROM {t} ORDER BY id").fetchall()]
    assert rows == [(1, "[1.0000000e+000,2.0000000e+000]"), (2, "[-5.0000000e-001,1.0000000e-003]"), (3, None)]


# ---- native values through Driver 18 with VectorTypeSupport=v1 --------------------------------

@pytest.mark.parametrize("dims", [1, 3, 768, 1998])
def test_driver18_native_round_trip_is_exact(native_cs, dims):
    rng = np.random.default_rng(dims)
    vals = [float(x) for x in rng.standard_normal(dims).astype(np.float32)]
    vals[: min(dims, len(EDGES))] = EDGES[: min(dims, len(EDGES))]
    t = tname()
    with ov.Connection(native_cs) as c:
        c.execute(f"CREATE TABLE {t} (id int, v vector({dims}))")
        c.execute(f"INSERT INTO {t} VALUES (?, ?)", [1, vals])
        c.execute(f"INSERT INTO {t} VALUES (?, ?)", [2, ov.Null(dims)])
        rows, _ = c.execute(f"SELECT id, v FROM {t} ORDER BY id")
    assert rows[1] == ("2", None)
    assert rows[0][0] == "1" and same_bits(rows[0][1], vals)


def test_driver18_native_output_parameter(native_cs):
    t = tname("pv")
    with ov.Connection(native_cs) as c:
        c.execute(f"CREATE PROCEDURE {t} @v vector(2), @o vector(2) OUTPUT AS SET @o = @v")
        _, out = c.execute(f"{{call {t}(?, ?)}}", [[4.0, -0.0], ov.Null(2)], out_dims={2: 2})
    assert same_bits(out[2], [4.0, -0.0])


def test_driver18_native_dimension_mismatch_is_42204(native_cs):
    t = tname()
    with ov.Connection(native_cs) as c:
        c.execute(f"CREATE TABLE {t} (v vector(3))")
        with pytest.raises(ov.OdbcError) as e:
            c.execute(f"INSERT INTO {t} VALUES (?)", [[1.0, 2.0]])
    assert e.value.records[0][1] == 42204
    assert "The vector dimensions 3 and 2 do not match." in e.value.records[0][2]


def test_pyodbc_reads_native_vectors_through_an_output_converter(peer, msodbcsql, native_cs):
    """pyodbc cannot read type -156 by itself; a raw converter gets Driver 18's struct (16
    bytes: dimension, type, pointer) followed by the floats."""
    cn = pyodbc.connect(native_cs, autocommit=True)
    t = tname()
    cn.execute(f"CREATE TABLE {t} (v vector(3))")
    cn.execute(f"INSERT INTO {t} VALUES ('[0.1, -2, 3e10]'), (NULL)")
    with pytest.raises(pyodbc.Error, match="-156"):
        cn.execute(f"SELECT v FROM {t}").fetchall()
    cn.add_output_converter(-156, lambda raw: None if raw is None else ov.parse_struct(bytes(raw)))
    rows = [r[0] for r in cn.execute(f"SELECT v FROM {t}").fetchall()]
    assert rows[1] is None and same_bits(rows[0], [0.1, -2.0, 3e10])
    cn.close()


# ---- conversions, functions and errors -------------------------------------------------------

def test_vector_functions_agree_with_numpy(connect, driver):
    cn = connect()
    t = tname()
    rng = np.random.default_rng(7)
    data = rng.standard_normal((20, 8)).astype(np.float32)
    q = rng.standard_normal(8).astype(np.float32)
    cn.execute(f"CREATE TABLE {t} (id int, e vector(8))")
    cn.cursor().executemany(f"INSERT INTO {t} VALUES (?, ?)", [(i, shortest(r)) for i, r in enumerate(data)])
    d64, q64 = data.astype(np.float64), q.astype(np.float64)
    cos = 1 - d64 @ q64 / (np.linalg.norm(d64, axis=1) * np.linalg.norm(q64))
    expect = [int(i) for i in np.argsort(cos)[:5]]
    got = [r[0] for r in cn.execute(
        f"SELECT TOP 5 id FROM {t} ORDER BY VECTOR_DISTANCE('cosine', e, CAST(? AS vector(8)))", shortest(q)).fetchall()]
    assert got == expect
    row = cn.execute(
        f"SELECT VECTOR_DISTANCE('euclidean', e, ?), VECTOR_DISTANCE('dot', e, ?), VECTOR_NORM(e, 'norm2'), "
        f"VECTOR_NORM(e, 'norm1'), VECTOR_NORM(e, 'norminf'), VECTORPROPERTY(e, 'Dimensions'), "
        f"VECTORPROPERTY(e, 'BaseType') FROM {t} WHERE id = 0", shortest(q), shortest(q)).fetchone()
    assert row[0] == pytest.approx(np.linalg.norm(d64[0] - q64))
    assert row[1] == pytest.approx(-(d64[0] @ q64))
    assert row[2] == pytest.approx(np.linalg.norm(d64[0]))
    assert row[3] == pytest.approx(np.abs(d64[0]).sum())
    assert row[4] == pytest.approx(np.abs(d64[0]).max())
    assert (row[5], row[6]) == (8, "float32")
    norm = cn.execute("SELECT VECTOR_NORMALIZE(CAST('[3, 4]' AS vector(2)), 'norm2')").fetchval()
    assert norm == sql_text([0.6, 0.8]) == "[6.0000002e-001,8.0000001e-001]"


def test_vector_errors(connect, driver):
    cn = connect()
    t = tname()
    cn.execute(f"CREATE TABLE {t} (v vector(3))")
    for bad, number in [("[1,2]", 42204), ("[1,2,x]", 8114), ("not a vector", 8114), ("[1,2,1e39]", 8115)]:
        with pytest.raises(pyodbc.Error, match=rf"\({number}\)"):
            cn.execute(f"INSERT INTO {t} VALUES (?)", bad)
    with pytest.raises(pyodbc.Error, match=r"\(42204\)"):
        cn.execute("SELECT VECTOR_DISTANCE('cosine', CAST('[1,2]' AS vector(2)), CAST('[1,2,3]' AS vector(3)))")
    with pytest.raises(pyodbc.Error):
        cn.execute("SELECT VECTOR_DISTANCE('manhattan', CAST('[1,2]' AS vector(2)), CAST('[1,2]' AS vector(2)))")
    assert cn.execute(f"SELECT COUNT(*) FROM {t}").fetchval() == 0


def test_catalog_and_describe_answer_as_sql_server(connect, driver):
    """sys.columns: vector is varbinary (165) underneath, user type 255, 8 + 4n bytes; json is
    244. sp_describe_first_result_set: varchar(max) (167) for both."""
    cn = connect()
    t = tname()
    cn.execute(f"CREATE TABLE {t} (v vector(3), j json)")
    cols = [tuple(r) for r in cn.execute(
        "SELECT name, system_type_id, user_type_id, max_length FROM sys.columns "
        f"WHERE object_id = OBJECT_ID('{t}') ORDER BY column_id").fetchall()]
    assert cols == [("v", 165, 255, 20), ("j", 244, 244, -1)]
    rows = cn.execute(f"EXEC sp_describe_first_result_set N'SELECT v, j FROM {t}'").fetchall()
    assert [(r.name, r.system_type_id, r.system_type_name, r.max_length) for r in rows] == [
        ("v", 167, "varchar(max)", -1), ("j", 167, "varchar(max)", -1)]


# ---- JSON ------------------------------------------------------------------------------------

@pytest.mark.parametrize("sql, expect", [
    ("SELECT JSON_OBJECT('a':1, 'b':'x/y', 'c':NULL, 'd':JSON_ARRAY(1, NULL, 'z'))",
     '{"a":1,"b":"x\\/y","c":null,"d":[1,"z"]}'),
    ("SELECT JSON_OBJECT('a':1, 'c':NULL ABSENT ON NULL)", '{"a":1}'),
    ("SELECT JSON_ARRAY(1, NULL, 2 NULL ON NULL)", "[1,null,2]"),
    ("SELECT JSON_MODIFY('{\"a\":1,\"b\":[1]}', '$.a', 5)", '{"a":5,"b":[1]}'),
    ("SELECT JSON_MODIFY('{\"a\":1,\"b\":[1]}', 'append $.b', 2)", '{"a":1,"b":[1,2]}'),
    ("SELECT JSON_MODIFY('{\"a\":1,\"b\":[1]}', '$.a', NULL)", '{"b":[1]}'),
    ("SELECT JSON_MODIFY('{\"a\":1}', '$.c', JSON_QUERY('{\"x\":[1]}', '$.x'))", '{"a":1,"c":[1]}'),
    ("SELECT JSON_VALUE('{\"a\":{\"b\":2.5}}', '$.a.b')", "2.5"),
    ("SELECT ISJSON('{\"a\":1}') + 10 * ISJSON('x')", 1),
])
def test_json_functions(connect, driver, sql, expect):
    assert connect().execute(sql).fetchval() == expect


def test_openjson_default_schema(connect, driver):
    rows = [tuple(r) for r in connect().execute(
        "SELECT * FROM OPENJSON('{\"a\":1,\"b\":\"s\",\"c\":[1,2],\"d\":true,\"e\":null,\"f\":{\"g\":1}}')").fetchall()]
    assert rows == [("a", "1", 2), ("b", "s", 1), ("c", "[1,2]", 4), ("d", "true", 3), ("e", None, 0),
                    ("f", '{"g":1}', 5)]


def test_json_column_checks_and_errors(connect, driver):
    cn = connect()
    t = tname()
    cn.execute(f"CREATE TABLE {t} (id int, j json)")
    with pytest.raises(pyodbc.Error, match=r"\(13609\)"):
        cn.execute(f"INSERT INTO {t} VALUES (1, '{{bad')")
    with pytest.raises(pyodbc.Error, match=r"\(13608\)"):
        cn.execute("SELECT JSON_MODIFY('{\"a\":1}', 'strict $.z', 1)")
    cn.execute(f"INSERT INTO {t} VALUES (2, ?)", '{"k":[1,"é"]}')
    assert tuple(cn.execute(f"SELECT j, JSON_VALUE(j, '$.k[1]') FROM {t}").fetchone()) == ('{"k":[1,"é"]}', "é")


# ---- bulk loads ------------------------------------------------------------------------------

def test_driver18_bcp_sends_vectors_as_varchar_max_text(peer, msodbcsql):
    """bcp_initW's sp_describe_first_result_set says varchar(max), so Driver 18's bcp names the
    column `varchar(max)` in INSERT BULK and sends the text; the peer converts it."""
    ferrodbc = pytest.importorskip("ferrodbc") if not tdspeer.in_ci() else __import__("ferrodbc")
    import bcp_driver18 as b18

    t = tname()
    cn = ferrodbc.connect(tdspeer.conn_str(peer, "msodbcsql", VectorTypeSupport="v1"),
                          attrs_before={b18.SQL_COPT_SS_BCP: 1}, autocommit=True)
    cn.cursor().execute(f"CREATE TABLE {t} (id int, v vector(3))")
    assert b18.load(cn, t, [b18.SQLINT4, b18.SQLCHARACTER], [(1, "[0.1,2,30]"), (2, None)], keep_nulls=True) == 2
    cn.close()
    c2 = pyodbc.connect(tdspeer.conn_str(peer, "msodbcsql"), autocommit=True)
    assert [tuple(r) for r in c2.execute(f"SELECT id, v FROM {t} ORDER BY id").fetchall()] == [
        (1, "[1.0000000e-001,2.0000000e+000,3.0000000e+001]"), (2, None)]


def test_mssql_python_bulkcopy_sends_native_vectors(peer):
    """mssql-python 1.16's bulkcopy (mssql_py_core) asks for VECTORSUPPORT and JSONSUPPORT and
    sends `INSERT BULK t ([v] vector(3))` with 0xF5 values, from text or lists; its queries
    (Driver 18 without VectorTypeSupport) read the downgraded text."""
    mssql_python = pytest.importorskip("mssql_python") if not tdspeer.in_ci() else __import__("mssql_python")
    cn = mssql_python.connect(f"Server=127.0.0.1,{peer.port};UID=sa;PWD=x;Encrypt=no;TrustServerCertificate=yes",
                              autocommit=True)
    cur = cn.cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (id int NOT NULL, v vector(3) NULL, j json NULL)")
    assert cur.bulkcopy(t, [(1, "[0.1,2,30]", '{"a":1}'), (2, None, None)])["rows_copied"] == 2
    assert cur.bulkcopy(t, [(3, [1.0, -0.0, 3.4e38], "[1]")])["rows_copied"] == 1
    cur.execute(f"SELECT id, v, j FROM {t} ORDER BY id")
    assert [tuple(r) for r in cur.fetchall()] == [
        (1, "[1.0000000e-001,2.0000000e+000,3.0000000e+001]", '{"a":1}'), (2, None, None),
        (3, "[1.0000000e+000,-0.0000000e+000,3.4000000e+038]", "[1]")]
    cn.close()


def test_raw_insert_bulk_with_a_native_vector_column(peer, connect):
    """The form SqlClient and mssql_py_core send: `[v] vector(2)` and 0xF5 values."""
    from test_bulk import INTN, _bulk_message, _int, _raw_load

    cn = connect()
    t = tname()
    cn.execute(f"CREATE TABLE {t} (id int, v vector(2))")
    payload = bytes([0xA9, 1, 2, 0, 0, 0, 0, 0]) + struct.pack("<2f", 1.5, -2.0)
    vec_ti = bytes([0xF5, 16, 0, 0])
    msg = _bulk_message([("id", INTN), ("v", vec_ti)], [
        [_int(1), len(payload).to_bytes(2, "little") + payload],
        [_int(2), b"\xff\xff"],
    ])
    first, reply = _raw_load(peer.port, f"INSERT BULK {t} ([id] int, [v] vector(2))", msg)
    assert rawtds.errors(reply) == []
    assert [tuple(r) for r in cn.execute(f"SELECT id, v FROM {t} ORDER BY id").fetchall()] == [
        (1, "[1.5000000e+000,-2.0000000e+000]"), (2, None)]


def test_the_text_form_loses_float32_values_the_native_form_keeps(connect, driver, native_cs):
    """8 significant digits do not tell 1000.00006f from 1000.00012f; the native form does."""
    a, b = (struct.unpack("<f", struct.pack("<I", i))[0] for i in (0x447A0001, 0x447A0002))
    cn = connect()
    t = tname()
    cn.execute(f"CREATE TABLE {t} (id int, v vector(1))")
    cn.execute(f"INSERT INTO {t} VALUES (1, ?), (2, ?)", shortest([a]), shortest([b]))
    texts = [r[0] for r in cn.execute(f"SELECT v FROM {t} ORDER BY id").fetchall()]
    assert texts == ["[1.0000001e+003]", "[1.0000001e+003]"]
    with ov.Connection(native_cs) as c:
        rows, _ = c.execute(f"SELECT v FROM {t} ORDER BY id")
    assert same_bits([rows[0][0][0], rows[1][0][0]], [a, b])
