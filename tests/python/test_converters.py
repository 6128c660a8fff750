"""Output converters (pyodbc's add_output_converter) and the text decoding policy."""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import pytest

import ferrodbc

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from fetch_shapes import cursor_for, rest

N = 1000


@pytest.fixture
def ids(conn, table):
    """`table` with ids 0..N-1 (and every 7th `v` NULL), committed."""
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (id INTEGER, v INTEGER, label VARCHAR(20))")
    cur.executemany(
        f"INSERT INTO {table} (id, v, label) VALUES (?, ?, ?)",
        [(i, None if i % 7 == 0 else i * 10, f"L{i}") for i in range(N)],
    )
    conn.commit()
    return table


def int_from_raw(raw: bytes) -> int:
    """SQL_INTEGER cells reach converters as the native 32-bit C value."""
    return struct.unpack("=i", raw)[0]


def test_add_get_remove_and_clear_output_converters(conn):
    def f(raw):
        return raw

    def g(raw):
        return raw

    assert conn.get_output_converter(ferrodbc.SQL_INTEGER) is None
    conn.add_output_converter(ferrodbc.SQL_INTEGER, f)
    conn.add_output_converter(ferrodbc.SQL_BIGINT, g)
    assert conn.get_output_converter(ferrodbc.SQL_INTEGER) is f
    assert conn.get_output_converter(ferrodbc.SQL_BIGINT) is g
    conn.add_output_converter(ferrodbc.SQL_INTEGER, g)
    assert conn.get_output_converter(ferrodbc.SQL_INTEGER) is g, "adding again replaces"
    conn.remove_output_converter(ferrodbc.SQL_INTEGER)
    assert conn.get_output_converter(ferrodbc.SQL_INTEGER) is None
    assert conn.get_output_converter(ferrodbc.SQL_BIGINT) is g
    conn.remove_output_converter(ferrodbc.SQL_INTEGER)  # removing a missing one is a no-op
    conn.clear_output_converters()
    assert conn.get_output_converter(ferrodbc.SQL_BIGINT) is None


def test_converter_receives_the_raw_bytes_of_the_cell(conn, ids):
    seen = []

    def convert(raw):
        seen.append(raw)
        return ("converted", int_from_raw(raw))

    conn.add_output_converter(ferrodbc.SQL_INTEGER, convert)
    row = conn.cursor().execute(f"SELECT id FROM {ids} WHERE id = 3").fetchone()
    assert row[0] == ("converted", 3)
    assert seen == [struct.pack("=i", 3)]
    assert all(type(raw) is bytes for raw in seen)


def test_text_converter_receives_the_drivers_bytes(peer, conn, ids):
    # As pyodbc: a converted text column is read as SQL_C_BINARY, the driver's own bytes (UTF-8
    # from SQLite3 ODBC and psqlODBC), not the UTF-16 ferrodbc decodes text from.
    # The SQL type of VARCHAR(20) differs per driver: SQLite says SQL_VARCHAR, psqlODBC's
    # Unicode driver SQL_WVARCHAR.
    sqltype = ferrodbc.SQL_WVARCHAR if peer.is_pg else ferrodbc.SQL_VARCHAR
    conn.add_output_converter(sqltype, lambda raw: raw)
    cur = conn.cursor()
    row = cur.execute(f"SELECT label FROM {ids} WHERE id = 5").fetchone()
    assert row[0] == b"L5"
    assert cur.description[0][1] is str, "the description still names the column's type"
    cur.execute(f"UPDATE {ids} SET label = ? WHERE id = 5", "h\u00e9llo \u20ac")
    assert cur.execute(f"SELECT label FROM {ids} WHERE id = 5").fetchval() == "h\u00e9llo \u20ac".encode()
    # add_output_converter(sqltype, None) removes it (pyodbc).
    conn.add_output_converter(sqltype, None)
    assert cur.execute(f"SELECT label FROM {ids} WHERE id = 5").fetchval() == "h\u00e9llo \u20ac"


def test_converter_added_between_fetches_applies_from_the_next_fetch_without_losing_rows(conn, ids):
    """Switching converters mid-result never skips, repeats or reorders a row."""
    cur = conn.cursor()
    cur.execute(f"SELECT id FROM {ids} ORDER BY id")
    plain = cur.fetchmany(100)
    assert all(type(r[0]) is int for r in plain)
    conn.add_output_converter(ferrodbc.SQL_INTEGER, lambda raw: ("c", int_from_raw(raw)))
    converted = cur.fetchmany(300)
    assert all(r[0][0] == "c" for r in converted), "the converter applies from the next fetch"
    conn.remove_output_converter(ferrodbc.SQL_INTEGER)
    reverted = cur.fetchmany(250)
    assert all(type(r[0]) is int for r in reverted), "removing it reverts to plain values"
    conn.add_output_converter(ferrodbc.SQL_INTEGER, lambda raw: -int_from_raw(raw))
    negated = cur.fetchall()
    ids_seen = (
        [r[0] for r in plain]
        + [r[0][1] for r in converted]
        + [r[0] for r in reverted]
        + [-r[0] for r in negated]
    )
    assert ids_seen == list(range(N))


def test_converter_change_mid_result_with_fetchone(conn, ids):
    cur = conn.cursor()
    cur.execute(f"SELECT id FROM {ids} ORDER BY id")
    got = [cur.fetchone()[0] for _ in range(50)]
    conn.add_output_converter(ferrodbc.SQL_INTEGER, lambda raw: int_from_raw(raw) + 0.5)
    got += [cur.fetchone()[0] - 0.5 for _ in range(50)]
    conn.clear_output_converters()
    got += [r[0] for r in cur]
    assert got == list(range(N))


def test_converters_are_not_called_for_null(conn, ids):
    calls = []

    def convert(raw):
        calls.append(raw)
        return int_from_raw(raw)

    conn.add_output_converter(ferrodbc.SQL_INTEGER, convert)
    rows = conn.cursor().execute(f"SELECT v FROM {ids} WHERE id < 21 ORDER BY id").fetchall()
    values = [r[0] for r in rows]
    assert values == [None if i % 7 == 0 else i * 10 for i in range(21)]
    assert len(calls) == 21 - 3, "three NULLs (ids 0, 7, 14) never reach the converter"


def test_a_converter_exception_propagates(conn, ids):
    def boom(raw):
        raise ValueError("converter failed")

    conn.add_output_converter(ferrodbc.SQL_INTEGER, boom)
    with pytest.raises(ValueError, match="converter failed"):
        conn.cursor().execute(f"SELECT id FROM {ids}").fetchone()


def test_converters_belong_to_their_connection(peer, conn, ids):
    conn.add_output_converter(ferrodbc.SQL_INTEGER, lambda raw: "converted")
    other = peer.connect()
    try:
        assert other.cursor().execute(f"SELECT id FROM {ids} WHERE id = 1").fetchval() == 1
    finally:
        other.close()
    assert conn.cursor().execute(f"SELECT id FROM {ids} WHERE id = 1").fetchval() == "converted"


# --- decode_errors -----------------------------------------------------------------------------


def test_decode_errors_accepts_the_three_policies(conn):
    assert conn.decode_errors == "strict"
    for name in ("replace", "surrogatepass", "strict"):
        conn.decode_errors = name
        assert conn.decode_errors == name


@pytest.mark.parametrize("bad", ["ignore", "STRICT", "", "backslashreplace"])
def test_decode_errors_rejects_other_names(conn, bad):
    with pytest.raises(ferrodbc.InterfaceError):
        conn.decode_errors = bad
    assert conn.decode_errors == "strict", "a rejected value changes nothing"


def test_changing_decode_errors_mid_result_keeps_every_row(conn, ids):
    """The policy change rebuilds the decoding plan; the position in the result is kept."""
    cur = conn.cursor()
    cur.execute(f"SELECT label FROM {ids} ORDER BY id")
    got = [r[0] for r in cur.fetchmany(10)]
    conn.decode_errors = "replace"
    got += [r[0] for r in cur.fetchall()]
    assert got == [f"L{i}" for i in range(N)]


# SQLite stores whatever bytes it is given as TEXT; the driver turns the UTF-8 encoding of a lone
# surrogate (ED A0 80) into the UTF-16 code unit D800: malformed UTF-16 reaching the decoder.
LONE_SURROGATE_SQL = "SELECT CAST(x'61eda08062' AS TEXT) AS t"


def test_strict_decoding_rejects_a_lone_surrogate_with_data_error(sqlite_conn):
    cur = sqlite_conn.cursor()
    cur.execute(LONE_SURROGATE_SQL)
    with pytest.raises(ferrodbc.DataError, match="decode_errors"):
        cur.fetchone()


def test_replace_decoding_turns_a_lone_surrogate_into_u_fffd(sqlite_conn):
    sqlite_conn.decode_errors = "replace"
    assert sqlite_conn.cursor().execute(LONE_SURROGATE_SQL).fetchval() == "a\ufffdb"


def test_surrogatepass_decoding_keeps_the_lone_surrogate(sqlite_conn):
    sqlite_conn.decode_errors = "surrogatepass"
    value = sqlite_conn.cursor().execute(LONE_SURROGATE_SQL).fetchval()
    assert value == "a\ud800b"
    assert value.encode("utf-16-le", "surrogatepass") == b"a\x00\x00\xd8b\x00"


def test_decode_errors_set_after_execute_applies_to_the_pending_rows(sqlite_conn):
    cur = sqlite_conn.cursor()
    cur.execute(LONE_SURROGATE_SQL)
    sqlite_conn.decode_errors = "replace"
    assert cur.fetchone() == ("a\ufffdb",)


def test_a_converter_failing_on_one_row_keeps_the_rows_around_it(conn, ids):
    """Rows before the failing one are delivered, the failing row raises, later rows follow."""

    def picky(raw):
        value = int_from_raw(raw)
        if value == 5:
            raise ValueError("five")
        return value

    conn.add_output_converter(ferrodbc.SQL_INTEGER, picky)
    cur = conn.cursor()
    cur.execute(f"SELECT id FROM {ids} WHERE id < 10 ORDER BY id")
    assert [r[0] for r in cur.fetchmany(100)] == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match="five"):
        cur.fetchmany(100)
    assert [r[0] for r in cur.fetchmany(100)] == [6, 7, 8, 9]
    # fetchall cannot return every row: it raises, with the rows before the failure attached.
    cur.execute(f"SELECT id FROM {ids} WHERE id < 10 ORDER BY id")
    with pytest.raises(ValueError, match="five") as info:
        cur.fetchall()
    assert [r[0] for r in info.value.partial_rows] == [0, 1, 2, 3, 4]
    assert [r[0] for r in cur.fetchall()] == [6, 7, 8, 9]


def test_raw_bytes_of_fixed_size_and_decimal_cells_follow_the_odbc_c_layout(pg_conn):
    """Decimals arrive as ASCII digits, dates/timestamps as SQL_DATE/TIMESTAMP_STRUCT, GUIDs as
    SQLGUID (uuid's bytes_le), so converters can decode them with struct/uuid alone."""
    import datetime
    import uuid

    raw = {}
    for code in (ferrodbc.SQL_NUMERIC, ferrodbc.SQL_TYPE_DATE, ferrodbc.SQL_TYPE_TIMESTAMP,
                 ferrodbc.SQL_GUID, ferrodbc.SQL_BIGINT, ferrodbc.SQL_FLOAT, ferrodbc.SQL_BIT):
        pg_conn.add_output_converter(code, (lambda c: lambda b: raw.setdefault(c, b))(code))
    pg_conn.cursor().execute(
        "SELECT CAST(-1.25 AS numeric(10,2)), DATE '2020-02-29', "
        "TIMESTAMP '2020-02-29 01:02:03.5', "
        "CAST('00112233-4455-6677-8899-aabbccddeeff' AS uuid), CAST(5 AS bigint), "
        "CAST(0.5 AS float8), true"
    ).fetchone()
    assert raw[ferrodbc.SQL_NUMERIC] == b"-1.25"
    assert datetime.date(*struct.unpack("=hHH", raw[ferrodbc.SQL_TYPE_DATE])) == datetime.date(2020, 2, 29)
    y, mo, d, h, mi, s, frac_ns = struct.unpack("=hHHHHHI", raw[ferrodbc.SQL_TYPE_TIMESTAMP])
    assert (y, mo, d, h, mi, s, frac_ns) == (2020, 2, 29, 1, 2, 3, 500_000_000)
    assert uuid.UUID(bytes_le=raw[ferrodbc.SQL_GUID]) == uuid.UUID("00112233-4455-6677-8899-aabbccddeeff")
    assert struct.unpack("=q", raw[ferrodbc.SQL_BIGINT]) == (5,)
    assert struct.unpack("=d", raw[ferrodbc.SQL_FLOAT]) == (0.5,)
    assert raw[ferrodbc.SQL_BIT] == b"\x01"


# UTF-16 code units the SQLite driver produces from these (CESU-8 style) UTF-8 byte strings.
SURROGATE_CASES = {
    "lone-low": ("edb080", "\ufffd", "\udc00"),
    "high-at-end": ("61eda080", "a\ufffd", "a\ud800"),
    "reversed-pair": ("edb080eda080", "\ufffd\ufffd", "\udc00\ud800"),
    "valid-pair": ("eda0bdedb880", "😀", "😀"),
    "high-then-pair": ("eda080eda0bdedb880", "\ufffd😀", "\ud800😀"),
}


@pytest.mark.parametrize("case", sorted(SURROGATE_CASES))
def test_each_decoding_policy_on_surrogate_edge_cases(sqlite_conn, case):
    hex_bytes, replaced, passed = SURROGATE_CASES[case]
    sql = f"SELECT CAST(x'{hex_bytes}' AS TEXT)"
    cur = sqlite_conn.cursor()
    if case == "valid-pair":
        assert cur.execute(sql).fetchval() == "😀", "a well-formed pair is fine under strict"
    else:
        with pytest.raises(ferrodbc.DataError, match="lone surrogate"):
            cur.execute(sql).fetchval()
    sqlite_conn.decode_errors = "replace"
    assert cur.execute(sql).fetchval() == replaced
    sqlite_conn.decode_errors = "surrogatepass"
    assert cur.execute(sql).fetchval() == passed


# --- converters changed in the middle of a result set ------------------------------------------
#
# A text column is bound when the query is executed: as the driver's bytes for a converter
# registered then, else as UTF-16. Converters changed later apply from the next fetch, but the
# binding stays: each column then either gets exactly what it would have got at execute, or every
# fetch raises ProgrammingError (no row consumed) until the query is executed again or the
# converters are restored. Exact needs the encoding of the driver's bytes: psqlODBC describes
# text as wide and hands UTF-8; SQLite3 ODBC describes it as narrow VARCHAR, whose code page
# ferrodbc does not know.

TEXT_SQL_TYPES = (
    ferrodbc.SQL_CHAR, ferrodbc.SQL_VARCHAR, ferrodbc.SQL_LONGVARCHAR,
    ferrodbc.SQL_WCHAR, ferrodbc.SQL_WVARCHAR, ferrodbc.SQL_WLONGVARCHAR,
)
CHANGE_SHAPES = ("fetchone", "fetchmany", "fetchall", "iter", "lazy", "dict")
M = 300
BEFORE = 10


@pytest.fixture
def labels(conn, table):
    """`table` (id, label) with non-ASCII labels, every 9th NULL, committed; the labels."""
    values = [None if i % 9 == 4 else f"é{i}€" for i in range(M)]
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (id INTEGER, label VARCHAR(20))")
    cur.executemany(f"INSERT INTO {table} (id, label) VALUES (?, ?)", list(enumerate(values)))
    conn.commit()
    return table, values


def text_converters(conn, func) -> None:
    for t in TEXT_SQL_TYPES:
        conn.add_output_converter(t, func)


def driver_bytes_known(peer) -> bool:
    """Whether the label column's driver bytes have a known encoding (see above)."""
    return peer.is_pg


def pairs(rows) -> list[tuple]:
    """(id, label) of rows of any shape (dict rows by name; lazy rows decoded now)."""
    return [(r["id"], r["label"]) if isinstance(r, dict) else (r[0], r[1]) for r in rows]


def fetch_rest(cur, shape) -> list:
    return rest(cur, shape, many=37)
    if shape == "iter":
        return list(cur)
    if shape == "fetchall":
        return cur.fetchall()
    rows = []
    while batch := cur.fetchmany(37):
        rows.extend(batch)
    return rows


def first_rows(cur, shape) -> list:
    if shape in ("fetchone", "iter"):
        return [cur.fetchone() for _ in range(BEFORE)]
    return cur.fetchmany(BEFORE)


def refuses(cur, shape) -> None:
    """Every fetch shape raises the documented ProgrammingError and takes no row."""
    for _ in range(2):
        with pytest.raises(ferrodbc.ProgrammingError, match=r"changed in the middle.*.label.*Re-execute"):
            fetch_rest(cur, shape)
    with pytest.raises(ferrodbc.ProgrammingError, match="changed in the middle"):
        cur.fetchval()


def raw_at_execute(conn, table) -> list:
    """What a converter registered before the execute receives for each label."""
    text_converters(conn, lambda raw: raw)
    raws = [r[0] for r in conn.cursor().execute(f"SELECT label FROM {table} ORDER BY id").fetchall()]
    conn.clear_output_converters()
    return raws


def converted(values, raws) -> list[tuple]:
    """(id, label) as the tests' converter `("c", raw)` gives them."""
    return [(i, None if v is None else ("c", raws[i])) for i, v in enumerate(values)]


@pytest.mark.parametrize("shape", CHANGE_SHAPES)
def test_text_converters_cleared_mid_result(peer, conn, labels, shape):
    table, values = labels
    raws = raw_at_execute(conn, table)
    text_converters(conn, lambda raw: ("c", raw))
    cur = cursor_for(conn, shape)
    cur.execute(f"SELECT id, label FROM {table} ORDER BY id")
    before = first_rows(cur, shape)
    conn.clear_output_converters()
    if driver_bytes_known(peer):
        after = pairs(fetch_rest(cur, shape))
        assert after == list(enumerate(values))[BEFORE:], "every row once, as str"
        assert all(type(v) is str for _, v in after if v is not None)
    else:
        refuses(cur, shape)
        # Restoring the converter reads on from where the refusal left off: no row lost.
        text_converters(conn, lambda raw: ("c", raw))
        assert pairs(fetch_rest(cur, shape)) == converted(values, raws)[BEFORE:]
    # Lazy rows decode now, with the converters of their fetch.
    assert pairs(before) == converted(values, raws)[:BEFORE], "rows fetched before stay as they were"
    conn.clear_output_converters()
    cur.execute(f"SELECT id, label FROM {table} ORDER BY id")
    assert pairs(fetch_rest(cur, shape)) == list(enumerate(values)), "the next execute is normal"


@pytest.mark.parametrize("shape", CHANGE_SHAPES)
def test_text_converter_added_mid_result(peer, conn, labels, shape):
    """A converter added mid-result gets the bytes it would get at execute, or is refused."""
    table, values = labels
    raws = raw_at_execute(conn, table)
    cur = cursor_for(conn, shape)
    cur.execute(f"SELECT id, label FROM {table} ORDER BY id")
    before = first_rows(cur, shape)
    text_converters(conn, lambda raw: ("c", raw))
    if driver_bytes_known(peer):
        assert pairs(fetch_rest(cur, shape)) == converted(values, raws)[BEFORE:]
    else:
        refuses(cur, shape)
        conn.clear_output_converters()
        after = pairs(fetch_rest(cur, shape))
        assert after == list(enumerate(values))[BEFORE:], "removing it again reads on"
    assert pairs(before) == list(enumerate(values))[:BEFORE]
    text_converters(conn, lambda raw: ("c", raw))
    cur.execute(f"SELECT id, label FROM {table} ORDER BY id")
    assert pairs(fetch_rest(cur, shape)) == converted(values, raws), "the next execute is normal"


@pytest.mark.parametrize("shape", CHANGE_SHAPES)
def test_text_converter_replaced_mid_result(conn, labels, shape):
    """The binding was made for a converter: its replacement gets the same bytes (any driver)."""
    table, values = labels
    raws = raw_at_execute(conn, table)
    text_converters(conn, lambda raw: ("c", raw))
    cur = cursor_for(conn, shape)
    cur.execute(f"SELECT id, label FROM {table} ORDER BY id")
    before = first_rows(cur, shape)
    text_converters(conn, lambda raw: ("r", raw))
    after = pairs(fetch_rest(cur, shape))
    assert pairs(before) == converted(values, raws)[:BEFORE]
    assert after == [(i, None if v is None else ("r", raws[i])) for i, v in enumerate(values)][BEFORE:]


def test_arrow_after_text_converters_cleared_mid_result(peer, conn, labels):
    """Arrow reads the bound buffers: a text column still bound as the driver's bytes would be a
    binary Arrow column, so it is refused (ProgrammingError) and the rows stay readable."""
    pa = pytest.importorskip("pyarrow")
    table, values = labels
    text_converters(conn, lambda raw: raw)
    cur = conn.cursor()
    cur.execute(f"SELECT id, label FROM {table} ORDER BY id")
    cur.fetchmany(BEFORE)
    with pytest.raises(ferrodbc.NotSupportedError, match="converter"):
        cur.fetch_arrow_table()
    conn.clear_output_converters()
    for fetch in (cur.fetch_arrow_table, cur.fetch_record_batch):
        with pytest.raises(ferrodbc.ProgrammingError, match=r"changed in the middle.*.label.*Re-execute"):
            fetch()
    if driver_bytes_known(peer):
        assert pairs(cur.fetchall()) == list(enumerate(values))[BEFORE:], "no row was taken"
    cur.execute(f"SELECT id, label FROM {table} ORDER BY id")
    t = pa.table(cur.fetch_arrow_table())
    assert t.schema.field("label").type == pa.utf8()
    assert t.column("label").to_pylist() == values


def test_arrow_after_a_text_converter_added_mid_result(conn, labels):
    """A converter for a type of the result: Arrow refuses as at execute (NotSupportedError)."""
    table, values = labels
    cur = conn.cursor()
    cur.execute(f"SELECT id, label FROM {table} ORDER BY id")
    cur.fetchmany(BEFORE)
    text_converters(conn, lambda raw: raw)
    with pytest.raises(ferrodbc.NotSupportedError, match="converter"):
        cur.fetch_record_batch()
    conn.clear_output_converters()
    assert pairs(cur.fetchall()) == list(enumerate(values))[BEFORE:]
