"""Cursor behaviour: execute, every fetch shape, description, rowcount, executemany, nextset,
messages, setinputsizes and the context managers."""

from __future__ import annotations

import datetime
import decimal

import pytest

import ferrodbc


@pytest.fixture
def numbers(conn, table):
    """`table` with ids 0..99 and their squares, committed."""
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (id INTEGER, sq INTEGER, label VARCHAR(20))")
    cur.executemany(
        f"INSERT INTO {table} (id, sq, label) VALUES (?, ?, ?)",
        [(i, i * i, f"n{i}") for i in range(100)],
    )
    conn.commit()
    return table


def test_execute_returns_the_cursor_so_calls_chain(conn):
    """`cur.execute(sql).fetchone()` is the common one-liner."""
    cur = conn.cursor()
    assert cur.execute("SELECT 1") is cur
    assert cur.fetchone() == (1,)


def test_fetchone_returns_rows_in_order_then_none(conn, numbers):
    cur = conn.cursor()
    cur.execute(f"SELECT id FROM {numbers} WHERE id < 3 ORDER BY id")
    assert cur.fetchone() == (0,)
    assert cur.fetchone() == (1,)
    assert cur.fetchone() == (2,)
    assert cur.fetchone() is None
    assert cur.fetchone() is None, "fetching past the end keeps returning None"


def test_fetchmany_with_size_returns_at_most_size_rows(conn, numbers):
    cur = conn.cursor()
    cur.execute(f"SELECT id FROM {numbers} ORDER BY id")
    assert [r[0] for r in cur.fetchmany(7)] == list(range(7))
    assert [r[0] for r in cur.fetchmany(90)] == list(range(7, 97))
    assert [r[0] for r in cur.fetchmany(10)] == [97, 98, 99]
    assert cur.fetchmany(10) == []
    assert cur.fetchmany(0) == []


def test_fetchmany_without_size_uses_arraysize(conn, numbers):
    """PEP 249: fetchmany() fetches `cursor.arraysize` rows (default 1)."""
    cur = conn.cursor()
    assert cur.arraysize == 1
    cur.execute(f"SELECT id FROM {numbers} ORDER BY id")
    assert [r[0] for r in cur.fetchmany()] == [0]
    cur.arraysize = 40
    assert cur.arraysize == 40
    assert [r[0] for r in cur.fetchmany()] == list(range(1, 41))
    with pytest.raises(ferrodbc.ProgrammingError):
        cur.arraysize = 0


def test_fetchall_returns_every_remaining_row(conn, numbers):
    cur = conn.cursor()
    cur.execute(f"SELECT id, sq FROM {numbers} ORDER BY id")
    cur.fetchone()
    rest = cur.fetchall()
    assert len(rest) == 99
    assert [tuple(r) for r in rest] == [(i, i * i) for i in range(1, 100)]
    assert cur.fetchall() == []


def test_fetchval_returns_the_first_column_of_the_next_row(conn, numbers):
    cur = conn.cursor()
    assert cur.execute(f"SELECT COUNT(*) FROM {numbers}").fetchval() == 100
    cur.execute(f"SELECT sq, id FROM {numbers} WHERE id IN (3, 4) ORDER BY id")
    assert cur.fetchval() == 9
    assert cur.fetchval() == 16
    assert cur.fetchval() is None, "no row left"


def test_iterating_a_cursor_yields_every_row(conn, numbers):
    cur = conn.cursor()
    cur.execute(f"SELECT id FROM {numbers} ORDER BY id")
    assert iter(cur) is cur
    assert [row[0] for row in cur] == list(range(100))


def test_mixed_fetch_shapes_share_one_position(conn, numbers):
    """fetchone, fetchmany, fetchval, iteration and fetchall continue where the last one stopped."""
    cur = conn.cursor()
    cur.execute(f"SELECT id FROM {numbers} ORDER BY id")
    seen = [cur.fetchone()[0]]
    seen += [r[0] for r in cur.fetchmany(5)]
    seen.append(cur.fetchval())
    seen.append(next(cur)[0])
    seen += [r[0] for r in cur.fetchall()]
    assert seen == list(range(100))


def test_rownumber_counts_rows_handed_out(conn, numbers):
    cur = conn.cursor()
    assert cur.rownumber is None
    cur.execute(f"SELECT id FROM {numbers} ORDER BY id")
    assert cur.rownumber == 0
    cur.fetchmany(10)
    assert cur.rownumber == 10


def test_description_is_seven_tuples_named_after_the_columns(conn, numbers):
    cur = conn.cursor()
    assert cur.description is None, "no statement executed yet"
    cur.execute(f"SELECT id, label AS name FROM {numbers}")
    desc = cur.description
    assert [d[0] for d in desc] == ["id", "name"]
    for d in desc:
        assert len(d) == 7
        name, type_code, display_size, internal_size, precision, scale, null_ok = d
        assert isinstance(name, str)
        assert internal_size is None or isinstance(internal_size, int)
        assert null_ok in (True, False)
    assert desc[0][1] == ferrodbc.NUMBER
    assert desc[1][1] == ferrodbc.STRING


def test_description_type_codes_match_the_type_objects(conn, peer, table):
    """Every column's type code compares equal to the DB-API type object of its group."""
    t = peer.types
    cur = conn.cursor()
    cur.execute(
        f"CREATE TABLE {table} (i {t['int']}, f {t['float']}, s {t['varchar']}, "
        f"b {t['bytes']}, d {t['date']}, ts {t['timestamp']}, x {t['text']})"
    )
    cur.execute(f"SELECT i, f, s, b, d, ts, x FROM {table}")
    codes = [d[1] for d in cur.description]
    assert codes[0] == ferrodbc.NUMBER and codes[0] is int
    assert codes[1] == ferrodbc.NUMBER and codes[1] is float
    assert codes[2] == ferrodbc.STRING
    assert codes[3] == ferrodbc.BINARY
    assert codes[4] == ferrodbc.DATETIME and codes[4] is datetime.date
    assert codes[5] == ferrodbc.DATETIME and codes[5] is datetime.datetime
    assert codes[6] == ferrodbc.STRING
    assert codes[2] != ferrodbc.NUMBER and codes[0] != ferrodbc.STRING


def test_description_of_a_decimal_column_is_number(pg_conn):
    cur = pg_conn.cursor()
    cur.execute("SELECT CAST(1.25 AS numeric(10,2)) AS n")
    (name, code, _, size, _, scale, _), = cur.description
    assert code is decimal.Decimal and code == ferrodbc.NUMBER
    assert (size, scale) == (10, 2)


def test_description_is_none_after_a_statement_without_results(conn, table):
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (id INTEGER)")
    assert cur.description is None


def test_rowcount_is_exact_for_insert_update_delete_and_the_drivers_for_select(peer, conn, table):
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (id INTEGER, v INTEGER)")
    cur.execute(f"INSERT INTO {table} (id, v) VALUES (1, 0), (2, 0), (3, 0)")
    assert cur.rowcount == 3
    cur.execute(f"UPDATE {table} SET v = 1 WHERE id >= 2")
    assert cur.rowcount == 2
    cur.execute(f"UPDATE {table} SET v = 2 WHERE id > 100")
    assert cur.rowcount == 0, "an UPDATE that matches nothing affects 0 rows, not -1"
    cur.execute(f"DELETE FROM {table} WHERE id = 1")
    assert cur.rowcount == 1
    # After a SELECT: the driver's SQLRowCount, as pyodbc reports it (psqlODBC counts the rows,
    # SQLite3 ODBC says 0; SQL Server's drivers -1, tests/sqlserver).
    selected = 2 if peer.is_pg else 0
    cur.execute(f"SELECT id FROM {table}")
    assert cur.rowcount == selected
    cur.fetchall()
    assert cur.rowcount == selected


def test_rowcount_before_any_execute_is_minus_one(conn):
    assert conn.cursor().rowcount == -1


def test_executemany_inserts_every_row_and_reports_the_total(conn, table):
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (id INTEGER, name VARCHAR(20))")
    rows = [(i, f"name {i}") for i in range(250)]
    cur.executemany(f"INSERT INTO {table} (id, name) VALUES (?, ?)", rows)
    assert cur.rowcount == 250
    cur.executemany(f"UPDATE {table} SET name = ? WHERE id = ?", [("x", 1), ("y", 2), ("z", 999)])
    assert cur.rowcount == 2
    assert cur.execute(f"SELECT id, name FROM {table} ORDER BY id").fetchall()[:3] == [
        (0, "name 0"),
        (1, "x"),
        (2, "y"),
    ]


def test_executemany_with_mixed_parameter_types_per_column(conn, table):
    """A column holding None in some rows and ints in others still inserts every value."""
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (id INTEGER, v INTEGER)")
    cur.executemany(f"INSERT INTO {table} (id, v) VALUES (?, ?)", [(1, None), (2, 5), (3, None)])
    assert cur.rowcount == 3
    assert cur.execute(f"SELECT v FROM {table} ORDER BY id").fetchall() == [(None,), (5,), (None,)]


def test_execute_without_parameters_after_executemany_runs_once(conn, table):
    """Reusing a cursor after executemany must not replay the next statement per parameter row."""
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (id INTEGER)")
    cur.executemany(f"INSERT INTO {table} (id) VALUES (?)", [(i,) for i in range(50)])
    cur.execute(f"INSERT INTO {table} (id) VALUES (1000)")
    check = conn.cursor()
    assert check.execute(f"SELECT COUNT(*) FROM {table} WHERE id = 1000").fetchval() == 1
    assert check.execute(f"SELECT COUNT(*) FROM {table}").fetchval() == 51


def test_execute_with_parameters_after_executemany_runs_once(conn, table):
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (id INTEGER)")
    cur.executemany(f"INSERT INTO {table} (id) VALUES (?)", [(i,) for i in range(50)])
    cur.execute(f"INSERT INTO {table} (id) VALUES (?)", 2000)
    assert cur.rowcount == 1
    assert cur.execute(f"SELECT COUNT(*) FROM {table}").fetchval() == 51


def test_executemany_keeps_each_rows_own_length_for_bytes_and_text(peer, conn, table):
    """Variable-length values in one parameter array: every row keeps its own length."""
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (id INTEGER, b {peer.types['bytes']}, s {peer.types['text']})")
    rows = [
        (0, b"abc", "abc"),
        (1, b"d", "d"),
        (2, b"", ""),
        (3, None, None),
        (4, b"\x00\x01", "é😀"),
        (5, b"y" * 20000, "z" * 20000),
    ]
    cur.executemany(f"INSERT INTO {table} (id, b, s) VALUES (?, ?, ?)", rows)
    got = conn.cursor().execute(f"SELECT id, b, s FROM {table} ORDER BY id").fetchall()
    assert [tuple(r) for r in got] == rows


def test_executemany_decimals_of_different_scales_in_one_column(pg_conn, pg_table):
    """One binding carries every row: the widest scale and integer part must fit them all."""
    cur = pg_conn.cursor()
    cur.execute(f"CREATE TABLE {pg_table} (id integer, d numeric(38,10))")
    values = [decimal.Decimal("1.5"), decimal.Decimal("-12.345"), decimal.Decimal("100"),
              decimal.Decimal("0.0000000001"), 7, decimal.Decimal("123456789012345678901234567.5")]
    cur.executemany(f"INSERT INTO {pg_table} (id, d) VALUES (?, ?)", list(enumerate(values)))
    got = [r[0] for r in pg_conn.cursor().execute(f"SELECT d FROM {pg_table} ORDER BY id").fetchall()]
    assert got == values


def test_executemany_with_no_rows_does_nothing(conn, table):
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (id INTEGER)")
    cur.executemany(f"INSERT INTO {table} (id) VALUES (?)", [])
    assert cur.execute(f"SELECT COUNT(*) FROM {table}").fetchval() == 0


def test_execute_accepts_parameters_as_varargs_or_one_sequence(conn):
    cur = conn.cursor()
    assert tuple(cur.execute("SELECT ?, ?", 1, "a").fetchone()) == (1, "a")
    assert tuple(cur.execute("SELECT ?, ?", (2, "b")).fetchone()) == (2, "b")
    assert tuple(cur.execute("SELECT ?, ?", [3, "c"]).fetchone()) == (3, "c")


def test_connection_execute_is_a_shortcut_for_a_new_cursor(conn):
    cur = conn.execute("SELECT ?", 5)
    assert isinstance(cur, ferrodbc.Cursor)
    assert cur.connection is conn
    assert cur.fetchval() == 5


def test_nextset_walks_every_result_of_a_batch(pg_conn):
    """Several statements in one execute: nextset moves to each result, then returns False."""
    cur = pg_conn.cursor()
    cur.execute("SELECT 1 AS a; SELECT 2 AS b, 3 AS c UNION ALL SELECT 4, 5")
    assert [d[0] for d in cur.description] == ["a"]
    assert cur.fetchall() == [(1,)]
    assert cur.nextset() is True
    assert [d[0] for d in cur.description] == ["b", "c"]
    assert cur.fetchall() == [(2, 3), (4, 5)]
    assert cur.nextset() is False


def test_nextset_from_a_row_count_to_a_result_set(pg_conn, pg_table):
    """A batch starting with DML: its first result is a row count, the next one the rows."""
    cur = pg_conn.cursor()
    cur.execute(f"CREATE TABLE {pg_table} (id integer)")
    cur.execute(f"INSERT INTO {pg_table} VALUES (1), (2); SELECT id FROM {pg_table} ORDER BY id")
    assert cur.description is None
    assert cur.rowcount == 2
    assert cur.nextset() is True
    assert cur.rowcount == 2, "psqlODBC counts the SELECT's rows (pyodbc passes it on)"
    assert cur.fetchall() == [(1,), (2,)]
    assert cur.nextset() is False


def test_nextset_skips_unread_rows(pg_conn):
    cur = pg_conn.cursor()
    cur.execute("SELECT generate_series(1, 1000); SELECT 'second'")
    cur.fetchone()
    assert cur.nextset() is True
    assert cur.fetchall() == [("second",)]


def test_sqlite_rejects_multiple_statements_in_one_execute(sqlite_conn):
    """The SQLite ODBC driver has no batches: it refuses them rather than running half."""
    cur = sqlite_conn.cursor()
    with pytest.raises(ferrodbc.Error, match="only one SQL statement"):
        cur.execute("SELECT 1; SELECT 2")


def test_nextset_after_the_only_result_returns_false(conn):
    cur = conn.cursor()
    cur.execute("SELECT 1")
    assert cur.fetchall() == [(1,)]
    assert cur.nextset() is False
    with pytest.raises(ferrodbc.ProgrammingError):
        cur.fetchall()


def test_nextset_before_execute_returns_false(conn):
    assert conn.cursor().nextset() is False


def test_messages_collects_server_notices(pg_conn):
    """RAISE NOTICE arrives as an informational message, pyodbc-style ('[state] (native)', text)."""
    cur = pg_conn.cursor()
    cur.execute("DO $$ BEGIN RAISE NOTICE 'ferrodbc says hi'; END $$")
    assert len(cur.messages) == 1
    prefix, text = cur.messages[0]
    assert prefix.startswith("[") and "(" in prefix
    assert "ferrodbc says hi" in text
    cur.execute("SELECT 1")
    assert cur.messages == [], "messages are per execute"


def test_messages_is_an_empty_list_without_notices(conn):
    cur = conn.cursor()
    assert cur.messages == []
    cur.execute("SELECT 1")
    assert cur.messages == []


def test_setinputsizes_and_setoutputsize_are_accepted(conn, table):
    """PEP 249 requires both; the declared sizes must not break the next execute."""
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (id INTEGER, name VARCHAR(50))")
    cur.setinputsizes([None, (ferrodbc.SQL_WVARCHAR, 50)])
    cur.setoutputsize(1000)
    cur.setoutputsize(1000, 1)
    cur.execute(f"INSERT INTO {table} (id, name) VALUES (?, ?)", 1, "sized")
    cur.setinputsizes(None)
    cur.setinputsizes([int, str])
    cur.execute(f"INSERT INTO {table} (id, name) VALUES (?, ?)", 2, "typed")
    assert cur.execute(f"SELECT name FROM {table} ORDER BY id").fetchall() == [("sized",), ("typed",)]


def test_setinputsizes_rejects_nonsense(conn):
    with pytest.raises(ferrodbc.ProgrammingError):
        conn.cursor().setinputsizes([object()])


def test_cursor_context_manager_closes_the_cursor(conn):
    with conn.cursor() as cur:
        assert cur.execute("SELECT 1").fetchval() == 1
        assert cur.closed is False
    assert cur.closed is True
    with pytest.raises(ferrodbc.ProgrammingError):
        cur.execute("SELECT 1")


def test_cursor_close_is_idempotent_and_discards_pending_rows(conn, numbers):
    cur = conn.cursor()
    cur.execute(f"SELECT id FROM {numbers}")
    cur.fetchone()
    cur.close()
    cur.close()
    assert cur.closed
    # The connection is still fine.
    assert conn.cursor().execute(f"SELECT COUNT(*) FROM {numbers}").fetchval() == 100


def test_connection_context_manager_commits_on_success(peer, conn, table):
    conn.cursor().execute(f"CREATE TABLE {table} (id INTEGER)")
    conn.commit()
    with conn as c:
        assert c is conn
        c.cursor().execute(f"INSERT INTO {table} (id) VALUES (1)")
    assert not conn.closed, "pyodbc semantics: __exit__ ends the transaction, not the connection"
    other = peer.connect()
    try:
        assert other.cursor().execute(f"SELECT COUNT(*) FROM {table}").fetchval() == 1
    finally:
        other.close()


def test_connection_context_manager_rolls_back_on_error(peer, conn, table):
    conn.cursor().execute(f"CREATE TABLE {table} (id INTEGER)")
    conn.commit()
    with pytest.raises(ZeroDivisionError):
        with conn:
            conn.cursor().execute(f"INSERT INTO {table} (id) VALUES (1)")
            1 / 0  # noqa: B018
    assert conn.cursor().execute(f"SELECT COUNT(*) FROM {table}").fetchval() == 0


def test_cursor_constructor_and_connection_attribute(conn):
    cur = ferrodbc.Cursor(conn)
    assert cur.connection is conn
    assert cur.execute("SELECT 11").fetchval() == 11
    conn.close()
    with pytest.raises(ferrodbc.ProgrammingError):
        ferrodbc.Cursor(conn)


def test_connection_reports_the_dbms_and_driver(peer, conn):
    expected = {"sqlite": ("sqlite", "sqlite"), "postgres": ("postgresql", "psqlodbc")}[peer.name]
    assert expected[0] in conn.dbms_name.lower()
    assert expected[1] in conn.driver_name.lower()


def test_a_cursor_can_be_reused_for_many_statements(conn, numbers):
    cur = conn.cursor()
    for i in range(20):
        assert cur.execute(f"SELECT sq FROM {numbers} WHERE id = ?", i).fetchval() == i * i


def test_two_cursors_on_one_connection_fetch_independently(conn, numbers):
    a = conn.cursor()
    b = conn.cursor()
    a.execute(f"SELECT id FROM {numbers} ORDER BY id")
    b.execute(f"SELECT id FROM {numbers} ORDER BY id DESC")
    assert a.fetchone() == (0,)
    assert b.fetchone() == (99,)
    assert a.fetchone() == (1,)
    assert b.fetchone() == (98,)


def test_one_cursor_alternating_result_shapes_returns_the_right_values(conn, table):
    """Re-executing with a different column layout rebinds; going back rebinds again, and no
    value from an earlier layout leaks into a later result."""
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (i INTEGER, s VARCHAR(5), w VARCHAR(50), f DOUBLE PRECISION)")
    cur.execute(f"INSERT INTO {table} VALUES (1, 'ab', 'wide value', 2.5), (2, NULL, 'w2', NULL)")
    for _ in range(3):
        assert cur.execute(f"SELECT i, s FROM {table} ORDER BY i").fetchall() == [(1, "ab"), (2, None)]
        assert cur.execute(f"SELECT w, i FROM {table} ORDER BY i").fetchall() == [("wide value", 1), ("w2", 2)]
        assert cur.execute(f"SELECT f FROM {table} ORDER BY i").fetchall() == [(2.5,), (None,)]


def test_re_executing_after_a_partial_read_starts_from_the_first_row(conn, numbers):
    cur = conn.cursor()
    sql = f"SELECT id FROM {numbers} ORDER BY id"
    cur.execute(sql)
    cur.fetchmany(40)
    assert [r[0] for r in cur.execute(sql).fetchall()] == list(range(100))


def test_description_reports_sizes_and_nullability_on_postgres(pg_conn, pg_table):
    cur = pg_conn.cursor()
    cur.execute(f"CREATE TABLE {pg_table} (a integer NOT NULL, b varchar(10), n numeric(12,3))")
    cur.execute(f"SELECT a, b, n FROM {pg_table}")
    assert [(d[0], d[3], d[5], d[6]) for d in cur.description] == [
        ("a", 10, 0, False),
        ("b", 10, 0, True),
        ("n", 12, 3, True),
    ]


@pytest.mark.parametrize("columns", ["i, i * 2", "i, md5(CAST(i AS text))"], ids=["bound", "streamed"])
def test_server_side_cursor_mode_returns_every_row_in_order(pg, columns):
    """With psqlODBC's UseDeclareFetch=1 the driver refills from the server every 100 rows,
    under ferrodbc's own growing row arrays; the two must not lose or repeat rows."""
    conn = ferrodbc.connect(pg.variant(UseDeclareFetch="1", Fetch="100"))
    try:
        cur = conn.cursor()
        cur.execute(f"SELECT {columns} FROM generate_series(0, 4999) AS s(i)")
        got = []
        while rows := cur.fetchmany(777):
            got += [r[0] for r in rows]
        assert got == list(range(5000))
    finally:
        conn.close()


def test_a_one_megabyte_statement_text(conn):
    """The SQL text itself may be large and non-ASCII: it is passed with its length, whole."""
    literal = "é" * (1 << 20)
    assert conn.cursor().execute(f"SELECT '{literal}'").fetchval() == literal


def test_empty_and_comment_only_statements(conn):
    """An empty statement is a ProgrammingError; whitespace or a comment is a no-op without
    results; the cursor works normally afterwards."""
    cur = conn.cursor()
    with pytest.raises(ferrodbc.ProgrammingError):
        cur.execute("")
    for sql in ("   ", "-- only a comment"):
        cur.execute(sql)
        assert cur.description is None
    assert cur.execute("SELECT 7").fetchval() == 7


def test_odbc_escape_sequences_reach_the_driver(pg_conn):
    """{d ...}, {ts ...} and {fn ...} are the driver's to translate; a '?' inside {fn} is a
    real parameter."""
    row = pg_conn.cursor().execute(
        "SELECT {d '2020-01-02'}, {ts '2020-01-02 03:04:05'}, {fn UCASE('abc')}, {fn CONCAT(?, 'x')}",
        "a",
    ).fetchone()
    assert tuple(row) == (
        datetime.date(2020, 1, 2),
        datetime.datetime(2020, 1, 2, 3, 4, 5),
        "ABC",
        "ax",
    )


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_mix_of_fetch_shapes_and_plan_changes_never_skips_or_repeats(conn, table, seed):
    """A seeded random walk over fetchone/fetchmany/fetchval/next/fetchall, converter and
    decoding-policy changes and re-executes: the ids must always continue where they stopped."""
    import random
    import struct

    n = 3000
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (id INTEGER, label VARCHAR(20))")
    conn.cursor().executemany(
        f"INSERT INTO {table} (id, label) VALUES (?, ?)", [(i, f"L{i}") for i in range(n)]
    )
    conn.commit()
    rng = random.Random(seed)
    sql = f"SELECT id, label FROM {table} ORDER BY id"

    def ident(value):
        return value[1] if isinstance(value, tuple) else value

    def tagged(raw):
        return ("c", struct.unpack("=i", raw)[0])

    cur.execute(sql)
    expected = 0
    for _ in range(300):
        op = rng.choice(["one", "many", "val", "next", "conv", "unconv", "policy", "reexec", "all"])
        if op == "one":
            row = cur.fetchone()
            if expected == n:
                assert row is None
            else:
                assert ident(row[0]) == expected and row[1] == f"L{expected}"
                expected += 1
        elif op == "many":
            k = rng.choice([0, 1, 5, 31, 32, 33, 255, 700])
            rows = cur.fetchmany(k)
            assert [ident(r[0]) for r in rows] == list(range(expected, min(n, expected + k)))
            expected += len(rows)
        elif op == "val":
            v = cur.fetchval()
            if expected == n:
                assert v is None
            else:
                assert ident(v) == expected
                expected += 1
        elif op == "next":
            if expected < n:
                assert ident(next(cur)[0]) == expected
                expected += 1
        elif op == "conv":
            conn.add_output_converter(ferrodbc.SQL_INTEGER, tagged)
        elif op == "unconv":
            conn.remove_output_converter(ferrodbc.SQL_INTEGER)
        elif op == "policy":
            conn.decode_errors = rng.choice(["strict", "replace", "surrogatepass"])
        elif op == "reexec":
            cur.execute(sql)
            expected = 0
        elif op == "all" and rng.random() < 0.2:
            rows = cur.fetchall()
            assert [ident(r[0]) for r in rows] == list(range(expected, n))
            expected = n


def test_parameters_may_be_subclasses_of_supported_types(conn):
    """IntEnum, str-based Enum, Decimal and datetime subclasses are sent as their base value."""
    import enum

    class Color(enum.IntEnum):
        RED = 7

    class Name(str, enum.Enum):
        A = "aa"

    class MyDecimal(decimal.Decimal):
        pass

    row = conn.cursor().execute("SELECT ?, ?, ?", Color.RED, Name.A, MyDecimal("1.5")).fetchone()
    assert row[0] == 7 and row[1] == "aa"
    # An untyped `SELECT ?` comes back as the driver's choice (SQLite: text), same value.
    assert decimal.Decimal(str(row[2])) == decimal.Decimal("1.5")


def test_nextset_across_grown_bound_and_streamed_results(pg_conn):
    """Each result of a batch gets its own plan and buffers: a grown bound array, a streamed
    (text) result left half-read, another bound one, then a single row."""
    cur = pg_conn.cursor()
    cur.execute(
        "SELECT i FROM generate_series(1, 5000) s(i); "
        "SELECT repeat('x', i), i FROM generate_series(1, 50) s(i); "
        "SELECT i, i * 2 FROM generate_series(1, 3000) s(i); "
        "SELECT 'done'"
    )
    assert [r[0] for r in cur.fetchall()] == list(range(1, 5001))
    assert cur.nextset() is True
    assert [tuple(r) for r in cur.fetchmany(10)] == [("x" * i, i) for i in range(1, 11)]
    assert cur.nextset() is True
    assert [tuple(r) for r in cur.fetchall()] == [(i, 2 * i) for i in range(1, 3001)]
    assert cur.nextset() is True
    assert cur.fetchall() == [("done",)]
    assert cur.nextset() is False


def test_same_shaped_results_keep_their_own_names_and_scales(peer, conn):
    """Buffers are reused when the layout matches; names, sizes and scales never are."""
    cur = conn.cursor()
    first = cur.execute("SELECT 1 AS a, 2 AS b").fetchone()
    second = cur.execute("SELECT 3 AS x, 4 AS y").fetchone()
    assert first._fields == ("a", "b") and second._fields == ("x", "y")
    assert [d[0] for d in cur.description] == ["x", "y"]
    assert second.x == 3 and first.a == 1
    if peer.is_pg:
        cur.execute("SELECT CAST(1.5 AS numeric(10,1)) AS n").fetchall()
        row = cur.execute("SELECT CAST(1.55 AS numeric(10,2)) AS m").fetchone()
        assert cur.description[0][0] == "m" and cur.description[0][5] == 2
        assert row.m == decimal.Decimal("1.55")
