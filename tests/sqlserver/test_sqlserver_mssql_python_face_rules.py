"""mssql-python's own rules in the mssql_python face, against the peer through both drivers:
its log records and CSV log format (with no secret in them), set_attr's and setinputsizes'
checks, values refused before the driver, batch_execute's cursor handling, skip/scroll,
cursor.messages as one list, foreignKeys' argument check and the Arrow reader's close()."""

from __future__ import annotations

import contextlib
import datetime
import decimal
import logging
import warnings
from collections.abc import Iterator

import pytest

import ferrodbc
from ferrodbc import mssql_python as face


@contextlib.contextmanager
def debug_records() -> Iterator[list[logging.LogRecord]]:
    """Every record of the face's logger at DEBUG, in memory; the logger off again after."""
    logger = face.logging.logger
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield records
    finally:
        logger.setLevel(logging.CRITICAL)
        logger.removeHandler(handler)


@pytest.fixture
def debug_log(tmp_path):
    """mssql-python's logging on, into a file; off again (and its handlers closed) after."""
    log = tmp_path / "trace.log"
    logger = face.setup_logging(log_file_path=str(log))
    yield log
    logger.setLevel(logging.CRITICAL)
    for h in logger.handlers:
        h.close()
        logger.removeHandler(h)


def test_log_records_in_csv_form_without_secrets(debug_log, face_conn):
    cur = face_conn.cursor()
    cur.execute("SELECT 1 AS n")
    assert cur.fetchall() == [[1]]
    face_conn.commit()
    face_conn.close()
    with pytest.raises(face.Error):
        face.connect("Server=127.0.0.1,1;UID=sa;PWD=TopSecret42;Encrypt=no", timeout=2)
    lines = debug_log.read_text().splitlines()
    assert lines[0].startswith("# MSSQL-Python Driver Log | Script: ")
    assert lines[1] == "Timestamp, ThreadID, Level, Location, Source, Message"
    rows = [[p.strip() for p in line.split(",", 5)] for line in lines[2:]]
    assert all(len(r) == 6 and r[1].isdigit() for r in rows)
    text = "\n".join(lines)
    for record in ("Final connection string", "PWD=***", "execute: Starting", "FetchAll",
                   "Transaction committed successfully", "Connection closed successfully",
                   ", ERROR, ", "Connected: driver"):
        assert record in text, record
    assert {r[4] for r in rows} >= {"Python", "DDBC"}
    assert "TopSecret42" not in text and "PWD=x" not in text
    # Logging off: fetchall is the engine's own method again, nothing per call.
    face.logging.logger.setLevel(logging.CRITICAL)
    assert face.Cursor.fetchall is ferrodbc.Cursor.fetchall


def test_log_file_rules(tmp_path, monkeypatch):
    logger = face.logging.logger
    monkeypatch.chdir(tmp_path)
    try:
        with pytest.raises(ValueError, match="Path traversal"):
            face.setup_logging(log_file_path="../outside.log")
        with pytest.raises(ValueError, match="Invalid log file extension"):
            face.setup_logging(log_file_path="trace.json")
        logger._custom_log_path = None  # (another test may have named a file)
        face.setup_logging()
        assert logger.log_file.startswith(str(tmp_path / "mssql_python_logs" / "mssql_python_trace_"))
        face.setup_logging(log_file_path=str(tmp_path / "new" / "dir" / "t.csv"))
        assert (tmp_path / "new" / "dir" / "t.csv").is_file()
        logger.debug("bad %d format", "x")  # never raises into the program
    finally:
        logger.setLevel(logging.CRITICAL)
        for h in logger.handlers:
            h.close()
            logger.removeHandler(h)


def test_set_attr_checks(face_conn):
    bad = [("x", 1, "Attribute must be an integer"), (999, 1, "Unsupported attribute"),
           (face.SQL_ATTR_CONNECTION_TIMEOUT, 1.5, "Unsupported attribute value type"),
           (face.SQL_ATTR_CONNECTION_TIMEOUT, -1, "Integer value cannot be negative"),
           (face.ConstantsDDBC.SQL_ATTR_PACKET_SIZE.value, 8192, "must be set before connection")]
    for attr, value, words in bad:
        with pytest.raises(face.ProgrammingError, match=words):
            face_conn.set_attr(attr, value)
    face_conn.set_attr(face.SQL_ATTR_TXN_ISOLATION, face.SQL_TXN_READ_COMMITTED)
    from mssql_python.constants import AttributeSetTime, get_attribute_set_timing  # noqa: F401
    assert face.constants.get_attribute_set_timing(103) is face.constants.AttributeSetTime.BEFORE_ONLY
    assert face.helpers.validate_attribute_value(108, "x" * 9000)[1].startswith("String value too large")


def test_values_refused_before_the_driver(face_conn):
    cur = face_conn.cursor()
    for value, words in [(decimal.Decimal("NaN"), "non-finite"), (decimal.Decimal("-Infinity"), "non-finite"),
                         (decimal.Decimal("1" + "0" * 38), "maximum precision supported by SQL Server is 38"),
                         (2**63, "out of range for SQL BIGINT"),
                         (datetime.time(1, 2, tzinfo=datetime.timezone.utc), "UTC offset")]:
        with pytest.raises(ValueError, match=words):
            cur.execute("SELECT ?", [value])
    assert cur.execute("SELECT ?", [2**63 - 1]).fetchval() == 2**63 - 1


def test_setinputsizes_rules(face_conn):
    cur = face_conn.cursor()
    for sizes, words in [([(face.SQL_VARCHAR, -1, 0)], "Invalid column size"),
                         ([(face.SQL_DECIMAL, 10, "x")], "Invalid decimal digits"),
                         ([99999], "Invalid SQL type")]:
        with pytest.raises(ValueError, match=words):
            cur.setinputsizes(sizes)
    cur.setinputsizes([(face.SQL_VARCHAR, 5, 0)])
    with pytest.warns(Warning, match="Number of input sizes"):
        cur.execute("SELECT ?, ?", ["hello", 42])
    assert cur.fetchone() == ["hello", 42]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the sizes applied to that execute only
        cur.execute("SELECT ?, ?", ["again", 1])
    cur.execute("CREATE TABLE #sis (p DECIMAL(18, 2))")
    cur.setinputsizes([(face.SQL_DECIMAL, 18, 2)])
    with pytest.raises(ValueError, match="row 1, column 0 \\(value type: str\\)") as e:
        cur.executemany("INSERT INTO #sis VALUES (?)", [("1.5",), ("123-45-6789",)])
    assert "123-45-6789" not in str(e.value)


def test_batch_execute_and_connection_execute(face_conn):
    mine = face_conn.cursor()
    results, cur = face_conn.batch_execute(["SELECT 'a' AS x", "SELECT 2"], reuse_cursor=mine,
                                           auto_close=True)
    assert cur is mine and not mine.closed and results == [[["a"]], [[2]]]
    results, cur = face_conn.batch_execute(["SELECT 1"], auto_close=True)
    assert cur.closed
    with pytest.raises(TypeError):
        face_conn.batch_execute("SELECT 1")
    with pytest.raises(ValueError):
        face_conn.batch_execute(["SELECT 1"], [None, None])
    with pytest.raises(face.ProgrammingError):
        face_conn.batch_execute(["SELECT 1", "SELECT * FROM no_such_table"], reuse_cursor=mine,
                                auto_close=True)
    assert mine.closed  # closed on failure, as mssql-python does
    assert face_conn.execute("SELECT ?", 7).fetchval() == 7


def test_skip_scroll_messages_foreign_keys(face_conn):
    cur = face_conn.cursor()
    cur.execute("SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3")
    with pytest.raises(face.ProgrammingError, match="Invalid scroll mode"):
        cur.scroll(1, mode="sideways")
    with pytest.raises(face.ProgrammingError):
        cur.skip("one")
    with pytest.raises(face.NotSupportedError):
        cur.skip(-1)
    cur.skip(1)
    assert cur.fetchone() == [2]
    with pytest.raises(IndexError):
        cur.skip(5)
    cur.execute("PRINT 'one'")
    assert len(cur.messages) == 1
    del cur.messages[:]
    assert cur.messages == []
    cur.execute("PRINT 'one'")
    assert len(cur.messages) == 1
    with pytest.raises(face.ProgrammingError, match="Either table or foreignTable"):
        cur.foreignKeys(table=None, foreignTable=None)


def test_arrow_reader_close_and_no_result_set(face_conn):
    pa = pytest.importorskip("pyarrow")
    cur = face_conn.cursor()
    reader = cur.execute("SELECT 1 AS a UNION ALL SELECT 2").arrow_reader(batch_size=1)
    assert reader.read_next_batch().num_rows == 1
    reader.close()
    assert reader.closed
    reader.__del__()  # a finalizer that never raises, as mssql-python's
    for use in (lambda: reader.read_all(), reader.__arrow_c_stream__, reader.__enter__):
        with pytest.raises(pa.ArrowInvalid):
            use()
    tbl = cur.execute("SELECT 1 AS a").arrow(batch_size=-1)
    assert tbl.num_rows == 0 and cur.fetchone() == [1]
    cur.execute("DECLARE @a INT")
    with pytest.raises(face.ProgrammingError, match="No active result set"):
        cur.arrow_batch(10)


def test_parameter_and_argument_words(peer, face_conn):
    cur = face_conn.cursor()
    with pytest.raises(TypeError, match="Unsupported parameter type: set"):
        cur.execute("SELECT ?", {1, 2})
    with pytest.raises(TypeError, match="Mixed parameter types in executemany: first row is dict"):
        cur.executemany("SELECT %(id)s", [{"id": 1}, (2,)])
    with pytest.raises(TypeError, match="positional placeholders"):
        cur.execute("SELECT 'fake %(name)s', ?", {"id": 1})
    assert cur.execute("SELECT '%%10' AS d", {}).fetchval() == "%10"
    with pytest.raises(ValueError, match="native_uuid must be a boolean"):
        face.connect(f"Server=127.0.0.1,{peer.port};UID=sa;PWD=x;Encrypt=no", native_uuid="yes")
    cn = face.connect(f"Server=127.0.0.1,{peer.port};UID=sa;PWD=x;Encrypt=no")
    cn.close()
    with pytest.raises(face.InterfaceError, match="Cannot create cursor on closed connection"):
        cn.cursor()


def test_bulkcopy_arrow_batches_and_mappings_by_name(face_conn):
    pa = pytest.importorskip("pyarrow")
    cur = face_conn.cursor()
    cur.execute("CREATE TABLE #bca (a INT NOT NULL, b NVARCHAR(20) NULL)")
    schema = pa.schema([("b", pa.string()), ("a", pa.int32())])
    batches = [pa.record_batch([pa.array(["p"]), pa.array([1], type=pa.int32())], schema=schema),
               pa.record_batch([pa.array(["q"]), pa.array([2], type=pa.int32())], schema=schema)]
    result = cur.bulkcopy_arrow("#bca", batches, column_mappings=[("a", "a"), ("b", "b")])
    assert result["rows_copied"] == 2
    assert cur.execute("SELECT a, b FROM #bca ORDER BY a").fetchall() == [[1, "p"], [2, "q"]]
    with pytest.raises(ValueError, match="not found"):
        cur.bulkcopy_arrow("#bca", pa.table({"x": pa.array([1], type=pa.int32())}),
                           column_mappings=[("missing", "a")])
    with pytest.raises(TypeError, match="source must be"):
        cur.bulkcopy_arrow("#bca", "not arrow")


def test_output_converters_keyed_and_called_as_mssql_pythons(face_conn):
    cur = face_conn.cursor()
    seen = []
    face_conn.add_output_converter(decimal.Decimal, lambda v: seen.append(v) or float(v))
    face_conn.add_output_converter(face.SQL_INTEGER, lambda v: v + 1)
    face_conn.add_output_converter(face.SQL_WVARCHAR, lambda v: "C:" + v.decode("utf-16-le"))
    face_conn.add_output_converter(datetime.datetime, lambda v: v.isoformat())
    face_conn.add_output_converter(set, lambda v: "never")  # stored, matches no column
    row = cur.execute("SELECT CAST(1.25 AS DECIMAL(5, 2)), CAST(41 AS INT), CAST('ab' AS VARCHAR(5)), "
                      "CAST(0x4100 AS VARBINARY(2)), CAST(NULL AS INT), "
                      "CAST('2024-01-02 03:04:05.5' AS DATETIME2), CAST(7 AS BIGINT)").fetchone()
    assert list(row) == [1.25, 42, "C:ab", "C:A", None, "2024-01-02T03:04:05.500000", 7]
    assert seen == [decimal.Decimal("1.25")]
    assert face_conn.get_output_converter(set) is not None
    for code in (face.SQL_DECIMAL, face.SQL_NUMERIC):  # FreeTDS reports decimal as NUMERIC
        face_conn.add_output_converter(code, lambda v: "int key wins")
    face_conn.add_output_converter(face.SQL_INTEGER, lambda v: 1 / 0)  # fails: value kept
    assert list(cur.execute("SELECT CAST(1.5 AS DECIMAL(5, 1)), 5").fetchone()) == ["int key wins", 5]
    face_conn.remove_output_converter(face.SQL_DECIMAL)
    face_conn.remove_output_converter(face.SQL_NUMERIC)
    assert cur.execute("SELECT CAST(1.5 AS DECIMAL(5, 1))").fetchval() == 1.5
    face_conn.clear_output_converters()
    assert face_conn.get_output_converter(decimal.Decimal) is None
    assert cur.execute("SELECT CAST(1.5 AS DECIMAL(5, 1))").fetchval() == decimal.Decimal("1.5")
    # time and datetimeoffset reach a converter as values whether the driver bound the C struct
    # (Driver 18) or ISO text (FreeTDS; every ODBC TYPE_TIME column).
    got = []
    for code in (face.SQL_TYPE_TIME, face.SQL_SS_TIME2, -155):  # -155: SQL_SS_TIMESTAMPOFFSET
        face_conn.add_output_converter(code, lambda v: got.append(v) or "seen")
    row = cur.execute("SELECT CAST('12:34:56.1234567' AS TIME(7)), CAST('00:00:01' AS TIME(0)), "
                      "CAST('2024-01-02 03:04:05.5 -05:30' AS DATETIMEOFFSET(7))").fetchone()
    assert list(row) == ["seen", "seen", "seen"]
    minus = datetime.timezone(-datetime.timedelta(hours=5, minutes=30))
    assert got == [datetime.time(12, 34, 56, 123456), datetime.time(0, 0, 1),
                   datetime.datetime(2024, 1, 2, 3, 4, 5, 500000, tzinfo=minus)]
    face_conn.clear_output_converters()


def test_pooled_connection_back_at_read_committed_and_quiet_batches(peer, face_conn):
    """A pooled connection whose isolation level was set comes back at READ COMMITTED; the
    batch's DEBUG record has its shape, never its values; SQLTypes has DATETIMEOFFSET."""
    q = "SELECT transaction_isolation_level FROM sys.dm_exec_sessions WHERE session_id = @@SPID"
    cs = f"Server=127.0.0.1,{peer.port};UID=sa;PWD=x;Encrypt=no;TrustServerCertificate=yes"
    face.pooling(enabled=True)
    c1 = face.connect(cs)
    c1.set_attr(face.SQL_ATTR_TXN_ISOLATION, face.SQL_TXN_SERIALIZABLE)
    assert c1.cursor().execute(q).fetchval() == 4
    c1.close()
    c2 = face.connect(cs)
    assert c2.cursor().execute(q).fetchval() == 2
    c2.close()
    assert face.ConstantsDDBC.SQL_DATETIMEOFFSET.value in face.SQLTypes.get_valid_types()
    with debug_records() as records:
        cur = face_conn.cursor()
        cur.execute("CREATE TABLE #pii (d NVARCHAR(50))")
        cur.executemany("INSERT INTO #pii VALUES (?)", [("123-45-6789",), ("jane@example.com",)])
    text = "\n".join(r.getMessage() for r in records)
    assert "Executing batch query with 2 parameter sets (1 columns per row)" in text
    assert "123-45-6789" not in text and "jane@example.com" not in text


def test_bulkcopy_arrow_refuses_aware_timestamps_for_naive_columns(face_conn):
    pa = pytest.importorskip("pyarrow")
    cur = face_conn.cursor()
    cur.execute("IF OBJECT_ID('face_tz', 'U') IS NOT NULL DROP TABLE face_tz")
    cur.execute("CREATE TABLE face_tz (ts DATETIME2 NULL, o DATETIMEOFFSET NULL)")
    try:
        aware = pa.array([datetime.datetime(2020, 1, 1, 12)], type=pa.timestamp("us", tz="UTC"))
        with pytest.raises(ValueError, match="datetimeoffset"):
            cur.bulkcopy_arrow("face_tz", pa.table({"ts": aware, "o": aware}))
        assert cur.bulkcopy_arrow("dbo.face_tz", pa.table({"o": aware}),
                                  column_mappings=["o"])["rows_copied"] == 1
    finally:
        cur.execute("DROP TABLE face_tz")


def test_error_records_name_the_class_and_codes_never_the_data(face_conn):
    """mssql-python logs each error it raises; the server's message can quote the data (245's
    value that did not convert, 2627's duplicate key, 2628's truncated value), so the face's
    record carries the class and the codes only."""
    with debug_records() as records:
        cur = face_conn.cursor()
        with pytest.raises(face.DataError) as ei:
            cur.execute("SELECT CAST('123-45-6789' AS INT)")
    assert "123-45-6789" in str(ei.value)  # the program still gets the whole message
    errors = [r.getMessage() for r in records if r.levelno >= logging.ERROR]
    assert errors == ["[Python] Raising exception: DataError (SQLSTATE 22018, native error 245)"]
    assert not any("123-45-6789" in r.getMessage() for r in records)
