"""Output converters changed in the middle of a result set (issue 15, point 1) through Driver 18
and FreeTDS against the TDS peer, with enough rows that the change lands while the prefetch
thread reads the next row array.

A text column is bound when the query is executed (as the driver's bytes for a converter
registered then, else as UTF-16); converters changed later apply from the next fetch on the same
binding. nchar/nvarchar/ntext bytes are UTF-16LE from both drivers, so every change is exact:
every row arrives once, as it would have at execute. varchar's bytes are in its collation's code
page, which ferrodbc does not know, and xml is no character type: there every fetch raises
ProgrammingError (taking no row) until the query is executed again or the converters restored.
The driver-neutral versions: tests/python/test_converters.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pyarrow as pa
import pytest

import ferrodbc

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from fetch_shapes import cursor_for, rest

N = 3_000
BEFORE = 300
WIDE = f"SELECT id, c_nvarchar, c_nchar FROM peer.types_all_{N}"
# nvarchar(max), streamed with SQLGetData (read as str it is slow: fewer rows).
WIDE_MAX = "SELECT id, c_nvarchar_max, c_nvarchar FROM peer.types_all_600"
NARROW = f"SELECT id, c_varchar FROM peer.types_all_{N}"
XML = f"SELECT id, c_xml FROM peer.types_all_{N}"
TEXT_SQL_TYPES = (
    ferrodbc.SQL_CHAR, ferrodbc.SQL_VARCHAR, ferrodbc.SQL_LONGVARCHAR,
    ferrodbc.SQL_WCHAR, ferrodbc.SQL_WVARCHAR, ferrodbc.SQL_WLONGVARCHAR, ferrodbc.SQL_SS_XML,
)
SHAPES = ("fetchone", "fetchmany", "fetchall", "iter", "lazy", "dict")


def converters(conn, func) -> None:
    for t in TEXT_SQL_TYPES:
        conn.add_output_converter(t, func)


def tag(tagname):
    return lambda raw: (tagname, raw)


def values(rows) -> list[tuple]:
    """Every row of any shape as a tuple of its values (lazy rows decoded now)."""
    return [tuple(r.values()) if isinstance(r, dict) else tuple(r) for r in rows]


def first_rows(cur, shape) -> list:
    if shape in ("fetchone", "iter", "lazy"):
        return [cur.fetchone() for _ in range(BEFORE)]
    return cur.fetchmany(BEFORE)


def fetch_rest(cur, shape) -> list:
    return rest(cur, shape, many=777)
    if shape == "iter":
        return list(cur)
    if shape == "fetchall":
        return cur.fetchall()
    rows = []
    while batch := cur.fetchmany(777):
        rows.extend(batch)
    return rows


def read(conn, sql, func=None) -> list[tuple]:
    """The whole result with `func` as the text converter at execute (None: no converter)."""
    conn.clear_output_converters()
    if func is not None:
        converters(conn, func)
    rows = values(conn.cursor().execute(sql).fetchall())
    conn.clear_output_converters()
    return rows


def refuses(cur, shape, column) -> None:
    for _ in range(2):
        with pytest.raises(ferrodbc.ProgrammingError, match=rf"changed in the middle.*{column}.*Re-execute"):
            fetch_rest(cur, shape)


@pytest.mark.parametrize("shape", SHAPES)
def test_wide_text_converters_cleared_mid_result(conn, shape):
    plain, tagged = read(conn, WIDE), read(conn, WIDE, tag("c"))
    converters(conn, tag("c"))
    cur = cursor_for(conn, shape).execute(WIDE)
    before = first_rows(cur, shape)
    conn.clear_output_converters()
    after = values(fetch_rest(cur, shape))
    assert values(before) == tagged[:BEFORE]
    assert after == plain[BEFORE:], "every later row once, as str, equal to a plain read"
    assert any(type(v) is str for v in after[0][1:]), "str, not bytes"


@pytest.mark.parametrize("shape", SHAPES)
def test_wide_text_converter_added_mid_result(conn, shape):
    """The converter gets the UTF-16LE bytes it would get had it been registered at execute."""
    plain, tagged = read(conn, WIDE), read(conn, WIDE, tag("c"))
    cur = cursor_for(conn, shape).execute(WIDE)
    before = first_rows(cur, shape)
    converters(conn, tag("c"))
    after = values(fetch_rest(cur, shape))
    assert values(before) == plain[:BEFORE]
    assert after == tagged[BEFORE:]


@pytest.mark.parametrize("shape", SHAPES)
def test_wide_text_converter_replaced_mid_result(conn, shape):
    tagged, retagged = read(conn, WIDE, tag("c")), read(conn, WIDE, tag("r"))
    converters(conn, tag("c"))
    cur = cursor_for(conn, shape).execute(WIDE)
    before = first_rows(cur, shape)
    converters(conn, tag("r"))
    assert values(fetch_rest(cur, shape)) == retagged[BEFORE:]
    assert values(before) == tagged[:BEFORE]


@pytest.mark.parametrize("shape", ["fetchmany", "lazy"])
def test_streamed_wide_text_converters_cleared_and_added_mid_result(conn, shape):
    plain, tagged = read(conn, WIDE_MAX), read(conn, WIDE_MAX, tag("c"))
    converters(conn, tag("c"))
    cur = cursor_for(conn, shape).execute(WIDE_MAX)
    before = first_rows(cur, shape)
    conn.clear_output_converters()
    assert values(fetch_rest(cur, shape)) == plain[BEFORE:]
    assert values(before) == tagged[:BEFORE]
    cur.execute(WIDE_MAX)
    before = first_rows(cur, shape)
    converters(conn, tag("c"))
    assert values(fetch_rest(cur, shape)) == tagged[BEFORE:]
    assert values(before) == plain[:BEFORE]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("sql, column", [(NARROW, "c_varchar"), (XML, "c_xml")])
def test_unknown_encodings_are_refused_when_cleared_mid_result(conn, shape, sql, column):
    tagged = read(conn, sql, tag("c"))
    converters(conn, tag("c"))
    cur = cursor_for(conn, shape).execute(sql)
    before = first_rows(cur, shape)
    conn.clear_output_converters()
    refuses(cur, shape, column)
    converters(conn, tag("c"))
    assert values(fetch_rest(cur, shape)) == tagged[BEFORE:], "restored: no row lost"
    assert values(before) == tagged[:BEFORE]
    conn.clear_output_converters()
    assert values(cur.execute(sql).fetchall()) == read(conn, sql), "the next execute is normal"


@pytest.mark.parametrize("shape", SHAPES)
def test_a_varchar_converter_added_mid_result_is_refused(conn, shape):
    plain, tagged = read(conn, NARROW), read(conn, NARROW, tag("c"))
    cur = cursor_for(conn, shape).execute(NARROW)
    before = first_rows(cur, shape)
    converters(conn, tag("c"))
    refuses(cur, shape, "c_varchar")
    conn.clear_output_converters()
    assert values(fetch_rest(cur, shape)) == plain[BEFORE:]
    assert values(before) == plain[:BEFORE]
    converters(conn, tag("c"))
    assert values(cur.execute(NARROW).fetchall()) == tagged, "the next execute binds for it"


def test_arrow_after_text_converters_cleared_mid_result(conn):
    plain = read(conn, WIDE)
    converters(conn, tag("c"))
    cur = conn.cursor().execute(WIDE)
    cur.fetchmany(BEFORE)
    conn.clear_output_converters()
    for fetch in (cur.fetch_arrow_table, cur.fetch_record_batch):
        with pytest.raises(ferrodbc.ProgrammingError, match=r"changed in the middle.*c_nvarchar.*Re-execute"):
            fetch()
    assert values(cur.fetchall()) == plain[BEFORE:], "the refusal took no row"
    t = pa.table(cur.execute(WIDE).fetch_arrow_table())
    assert t.schema.field("c_nvarchar").type == pa.utf8()
    assert t.column("c_nvarchar").to_pylist() == [r[1] for r in plain]
