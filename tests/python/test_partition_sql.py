"""The query scan behind ferrodbc.read_arrow (python/ferrodbc/partition_sql.py): which queries
can be wrapped in a derived table, and the range split. No database needed."""

from __future__ import annotations

import pytest

import ferrodbc
from ferrodbc.partition_sql import check_wrappable, partition_queries, split, top_level_words


def test_words_outside_literals_identifiers_comments_and_parentheses():
    words, second = top_level_words(
        "SELECT a, 'ORDER BY; x' AS [order by], \"x;y\" -- ORDER BY\n /* a /* nested */ ORDER BY */"
        " FROM t WHERE b IN (SELECT c FROM u ORDER BY c) AND n = N'it''s'")
    assert words == ["SELECT", "A", "AS", "FROM", "T", "WHERE", "B", "IN", "AND", "N", "N"]
    assert second is False


@pytest.mark.parametrize("query, statement", [
    ("SELECT * FROM t", "SELECT * FROM t"),
    ("SELECT * FROM t;", "SELECT * FROM t"),
    ("select x from t ;  -- done", "select x from t"),
    ("SELECT * FROM t -- a note, no newline", "SELECT * FROM t"),
    ("SELECT * FROM t /* note */ ;;", "SELECT * FROM t"),
    ("SELECT a -- a\n FROM t", "SELECT a -- a\n FROM t"),
    ("SELECT TOP 5 * FROM t ORDER BY x", "SELECT TOP 5 * FROM t ORDER BY x"),
    ("SELECT * FROM t ORDER BY x OFFSET 5 ROWS", "SELECT * FROM t ORDER BY x OFFSET 5 ROWS"),
    ("SELECT * FROM t ORDER BY x LIMIT 3", "SELECT * FROM t ORDER BY x LIMIT 3"),
    ("SELECT * FROM (SELECT * FROM t ORDER BY x OFFSET 0 ROWS) q", "SELECT * FROM (SELECT * FROM t ORDER BY x OFFSET 0 ROWS) q"),
    ("SELECT ']' AS a FROM [t;x]", "SELECT ']' AS a FROM [t;x]"),
    ("SELECT 'it''s'", "SELECT 'it''s'"),
])
def test_wrappable(query, statement):
    assert check_wrappable(query) == statement


@pytest.mark.parametrize("query, message", [
    ("SELECT * FROM t ORDER BY x", "ORDER BY"),
    ("SELECT 1; SELECT 2", "several"),
    ("SELECT 1; -- trailing comment only is fine\n; DELETE FROM t", "several"),
    ("WITH c AS (SELECT 1 AS x) SELECT * FROM c", "WITH"),
    ("EXEC p", "EXEC"),
    ("", "nothing"),
    ("-- only a comment", "nothing"),
    ("SELECT * INTO t2 FROM t", "INTO"),
])
def test_not_wrappable(query, message):
    with pytest.raises(ferrodbc.ProgrammingError, match=message):
        check_wrappable(query)


def test_a_trailing_comment_after_the_semicolon_is_not_a_statement():
    assert check_wrappable("SELECT * FROM t; -- end") == "SELECT * FROM t"


@pytest.mark.parametrize("low, high, n", [(0, 99, 4), (-10, 10, 3), (5, 7, 8), (1, 1, 4), (0, 2**40, 7)])
def test_split_covers_the_range_once_in_contiguous_ranges(low, high, n):
    bounds = split(low, high, n)
    assert bounds[0] == low and bounds[-1] == high + 1
    assert all(a < b for a, b in zip(bounds, bounds[1:]))
    assert len(bounds) - 1 == min(n, high - low + 1)


def test_partition_queries_open_the_ends_and_take_the_nulls():
    qs = partition_queries("SELECT * FROM t", "id", [0, 10, 20, 31])
    assert qs == [
        "SELECT * FROM (SELECT * FROM t) AS ferrodbc_partition WHERE id < 10 OR id IS NULL",
        "SELECT * FROM (SELECT * FROM t) AS ferrodbc_partition WHERE id >= 10 AND id < 20",
        "SELECT * FROM (SELECT * FROM t) AS ferrodbc_partition WHERE id >= 20",
    ]
    assert partition_queries("SELECT * FROM t", "id", [0, 31]) == ["SELECT * FROM t"]
