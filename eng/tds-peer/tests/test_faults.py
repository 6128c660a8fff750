"""The peer's value faults, `kill`, `stall` on any statement and `KILL <spid>`, seen through
pyodbc (what the drivers themselves make of them; ferrodbc's handling is tested in
tests/sqlserver)."""

import uuid

import pyodbc
import pytest


def rows_until_error(cur):
    got = []
    try:
        while (r := cur.fetchone()) is not None:
            got.append(r)
    except pyodbc.Error as e:
        return got, e
    return got, None


def raw_name(connect, fault):
    """Row 3's `name` as the raw bytes the driver hands over (a converter sees them)."""
    cn = connect()
    cn.add_output_converter(pyodbc.SQL_WVARCHAR, lambda b: b)
    rows = cn.cursor().execute(f"SELECT * FROM peer.mixed_10 /* fault:{fault}=3 */").fetchall()
    return [r[3] for r in rows]


def test_surrogate_and_odd_length_reach_the_client_as_sent(connect):
    names = raw_name(connect, "surrogate_at")
    assert names[3] == "name".encode("utf-16-le") + b"\x00\xd8" + b"3\x00"
    assert names[2] == "name 2".encode("utf-16-le")
    assert raw_name(connect, "oddlen_at")[3] == "name 3".encode("utf-16-le") + b"A"


def test_bigdate_and_bigdec(connect, driver):
    cur = connect().cursor().execute("SELECT * FROM peer.mixed_10 /* fault:bigdec_at=3 */")
    assert str(cur.fetchall()[3][5]) == "-1844674407370955.1615"
    cur = connect().cursor().execute("SELECT * FROM peer.mixed_10 /* fault:bigdate_at=3 */")
    got, err = rows_until_error(cur)
    if driver == "msodbcsql":
        # Driver 18 refuses the cell (22007) after the rows before it.
        assert len(got) == 3 and "22007" in str(err)
    else:
        # FreeTDS hands over year -19601; pyodbc turns that into 0001-06-17 without a word
        # (ferrodbc raises DataError naming the cell: tests/sqlserver).
        assert err is None and got[3][4].year == 1


def test_truncated_row_drops_the_link(connect):
    cur = connect().cursor().execute("SELECT * FROM peer.mixed_10 /* fault:truncated_at=3 */")
    got, err = rows_until_error(cur)
    assert len(got) == 3 and err is not None


def test_plp_unknown_length_values_whole(connect):
    rows = connect().cursor().execute("SELECT * FROM peer.lob_varbinarymax_100k_3 /* fault:plp_unknown=1 */").fetchall()
    assert [len(r[1]) for r in rows] == [102400] * 3


def test_value_faults_need_the_mixed_shape(connect):
    with pytest.raises(pyodbc.Error, match="value faults need"):
        connect().cursor().execute("SELECT * FROM peer.int_nvarchar_10 /* fault:surrogate_at=3 */").fetchall()


def test_kill_fault_rolls_back_the_session(connect):
    t = f"kill_{uuid.uuid4().hex[:10]}"
    admin = connect()
    admin.cursor().execute(f"CREATE TABLE {t} (x INT)")
    w = connect(autocommit=False)
    w.cursor().execute(f"INSERT INTO {t} VALUES (1)")
    with pytest.raises(pyodbc.Error):
        w.cursor().execute("SELECT 1 /* fault:kill=1 */")
    assert admin.cursor().execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] == 0


def test_kill_spid(connect):
    a, b = connect(), connect()
    spid = a.cursor().execute("SELECT @@SPID").fetchone()[0]
    b.cursor().execute(f"KILL {spid}")
    with pytest.raises(pyodbc.Error):
        a.cursor().execute("SELECT 1").fetchall()
    with pytest.raises(pyodbc.Error, match="6106|not an active process"):
        b.cursor().execute(f"KILL {spid}")
    with pytest.raises(pyodbc.Error, match="6104|your own process"):
        b.cursor().execute(f"KILL {b.cursor().execute('SELECT @@SPID').fetchone()[0]}")


def test_stall_on_a_user_table_statement_is_cancelled_unrun(connect):
    t = f"stall_{uuid.uuid4().hex[:10]}"
    admin = connect()
    admin.cursor().execute(f"CREATE TABLE {t} (x INT)")
    w = connect()
    w.timeout = 1
    with pytest.raises(pyodbc.Error):
        w.cursor().execute(f"INSERT INTO {t} VALUES (1) /* fault:stall=5 */")
    assert admin.cursor().execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] == 0
