"""``ferrodbc.install_as_mssql_python()``: mssql-python 1.16's public API over ferrodbc
(ferrodbc.mssql_python), on SQLite3 ODBC. Each test that installs the face runs in a fresh
interpreter so the real mssql-python (if installed) never meets it in this process; the
face's own module is imported directly otherwise."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

import ferrodbc
from ferrodbc import mssql_python as face
from ferrodbc.mssql_python import params


def _run(code: str, connstr: str) -> str:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code), connstr],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_import_mssql_python_gives_the_face(sqlite):
    out = _run(
        """
        import sys, ferrodbc
        pkg = ferrodbc.install_as_mssql_python()
        import mssql_python
        from mssql_python.exceptions import ProgrammingError
        from mssql_python.constants import ConstantsDDBC, GetInfoConstants
        from mssql_python.cursor import Cursor
        from mssql_python.row import Row
        assert mssql_python is pkg and ferrodbc.install_as_mssql_python() is pkg
        assert mssql_python.paramstyle == "pyformat" and ferrodbc.paramstyle == "qmark"
        assert issubclass(ProgrammingError, ferrodbc.ProgrammingError)
        assert ConstantsDDBC.SQL_WVARCHAR.value == -9 and mssql_python.SQL_WVARCHAR == -9
        cn = mssql_python.connect(sys.argv[1], autocommit=True)
        cur = cn.cursor()
        assert isinstance(cur, Cursor) and isinstance(cur, ferrodbc.Cursor)
        row = cur.execute("SELECT %(a)s + %(b)s AS s, %(a)s AS a", {"a": 1, "b": 2}).fetchone()
        assert isinstance(row, Row) and tuple(row) == (3, 1) and row.s == 3
        print(mssql_python.__version__)
        """,
        sqlite.connstr,
    )
    assert out.startswith("1.16.0+ferrodbc.")


@pytest.mark.parametrize(
    ("sql", "args", "want"),
    [
        ("SELECT ?, ?", (1, "x"), (1, "x")),
        ("SELECT ?, ?", ((1, "x"),), (1, "x")),
        ("SELECT ?, ?", ([1, "x"],), (1, "x")),
        ("SELECT ?", (5,), (5,)),
        ("SELECT %(a)s, %(b)s, %(a)s", ({"a": 1, "b": "y"},), (1, "y", 1)),
        ("SELECT '%(a)s', %(a)s", ({"a": 7},), ("%(a)s", 7)),
        ("SELECT '100%%', %(a)s", ({"a": 7},), ("100%", 7)),
    ],
)
def test_parameter_styles(sqlite_conn, sql, args, want):
    cn = face.Connection(sqlite_conn_string(sqlite_conn))
    try:
        assert tuple(cn.cursor().execute(sql, *args).fetchone()) == want
    finally:
        cn.close()


def sqlite_conn_string(conn) -> str:
    return conn._face_connstr  # set by the fixture below


@pytest.fixture
def sqlite_conn(sqlite):
    class Holder:
        _face_connstr = sqlite.connstr

    return Holder()


def test_style_mismatches_are_type_errors():
    with pytest.raises(TypeError, match="named placeholders"):
        params.convert("SELECT %(a)s", (1,))
    with pytest.raises(TypeError, match="positional placeholders"):
        params.convert("SELECT ?", {"a": 1})
    with pytest.raises(KeyError, match="'b'"):
        params.convert("SELECT %(a)s, %(b)s", {"a": 1})
    # Placeholders inside quotes, brackets and comments are text.
    assert params.convert("SELECT '?', [%(x)s], %(a)s -- %(c)s", {"a": 1}) == (
        "SELECT '?', [%(x)s], ? -- %(c)s", (1,))


def test_executemany_with_dicts(sqlite):
    cn = face.connect(sqlite.connstr, autocommit=True)
    cur = cn.cursor()
    cur.execute("CREATE TABLE t (a INTEGER, b TEXT)")
    cur.executemany("INSERT INTO t VALUES (%(a)s, %(b)s)", [{"a": 1, "b": "x"}, {"a": 2, "b": "y"}])
    cur.executemany("INSERT INTO t VALUES (?, ?)", [(3, "z")])
    assert [tuple(r) for r in cur.execute("SELECT a, b FROM t ORDER BY a").fetchall()] == [
        (1, "x"), (2, "y"), (3, "z")]
    cn.close()


def test_encodings_round_trip_through_the_getters(sqlite):
    cn = face.connect(sqlite.connstr)
    assert cn.getencoding() == {"encoding": "utf-16le", "ctype": -8}
    cn.setencoding("utf-8")
    assert cn.getencoding() == {"encoding": "utf-8", "ctype": 1}
    assert cn.getdecoding(face.SQL_CHAR) == {"encoding": "utf-16le", "ctype": -8}
    cn.setdecoding(face.SQL_CHAR, encoding="latin-1")
    assert cn.getdecoding(face.SQL_CHAR) == {"encoding": "latin-1", "ctype": 1}
    with pytest.raises(ferrodbc.ProgrammingError):
        cn.setdecoding(face.SQL_WCHAR, encoding="utf-8")
    with pytest.raises(ferrodbc.ProgrammingError):
        cn.setencoding("no-such-codec")
    cn.close()
    with pytest.raises(ferrodbc.InterfaceError):
        cn.getencoding()


def test_pooling_is_a_function_and_settings_are_shared(monkeypatch):
    monkeypatch.setattr(ferrodbc, "pooling", True)
    face.pooling(enabled=False)
    assert ferrodbc.pooling is False and not face.PoolingManager.is_enabled()
    face.pooling(max_size=5, idle_timeout=30)
    assert ferrodbc.pooling is True
    assert face.PoolingManager.get_config() == {"max_size": 5, "idle_timeout": 30, "enabled": True}
    with pytest.raises(ValueError):
        face.pooling(max_size=0)
    monkeypatch.setattr(ferrodbc, "lowercase", False)
    face.lowercase = True
    assert ferrodbc.lowercase is True
    with pytest.raises(ValueError):
        face.native_uuid = "yes"


def test_decimal_separator_binary_and_logging(tmp_path, monkeypatch):
    before = ferrodbc.getDecimalSeparator()
    try:
        face.setDecimalSeparator(",")
        assert face.getDecimalSeparator() == ","
        for bad in ("", "ab", " ", "\t", 5):  # a digit is accepted, as by mssql-python
            with pytest.raises(ValueError):
                face.setDecimalSeparator(bad)
    finally:
        ferrodbc.setDecimalSeparator(before)
    assert face.Binary("é") == "é".encode() and face.Binary(bytearray(b"x")) == b"x"
    log = tmp_path / "trace.log"
    logger = face.logging.logger
    assert face.setup_logging("file", str(log)) is logger and logger.log_file == str(log)
    logger.debug("hello %s", "there")
    assert "hello there" in log.read_text()
    with pytest.raises(ValueError):
        face.setup_logging("nowhere")
    face.setup_logging("stdout")
    logger.setLevel(face.logging.CRITICAL)  # off again: fetchall is the engine's own again
    for h in list(logger.handlers):
        logger.removeHandler(h)


def test_no_layer_per_row():
    """Fetching is the engine's own method: the face adds nothing per row (fetchall is a
    Python method only while mssql-python's DEBUG logging is on)."""
    for name in ("fetchone", "fetchmany", "fetchall", "__next__", "__iter__", "fetchval"):
        assert getattr(face.Cursor, name) is getattr(ferrodbc.Cursor, name), name


def test_arrow_methods(sqlite):
    pa = pytest.importorskip("pyarrow")
    cn = face.connect(sqlite.connstr, autocommit=True)
    cur = cn.cursor()
    cur.execute("CREATE TABLE t (a INTEGER)")
    cur.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(10)])
    t = cur.execute("SELECT a FROM t ORDER BY a").arrow()
    assert isinstance(t, pa.Table) and t.column("a").to_pylist() == list(range(10))
    batch = cur.execute("SELECT a FROM t ORDER BY a").arrow_batch(4)
    assert isinstance(batch, pa.RecordBatch) and batch.num_rows == 4
    reader = cur.execute("SELECT a FROM t ORDER BY a").arrow_reader(3)
    assert sum(b.num_rows for b in reader) == 10
    cn.close()
