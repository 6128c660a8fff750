"""The SQL side of a partitioned read (``ferrodbc.read_arrow``): whether a query can be wrapped
in a derived table, and the wrapped queries (type check, MIN/MAX probe, one per range).

Only a light scan, not a parser: it skips string literals, quoted identifiers ("..." and
[...]) and comments (``--`` and nested ``/* */``, as T-SQL and PostgreSQL nest them), follows
parenthesis depth and looks at the words at depth 0. That is enough for the three ways a query
breaks when wrapped as ``SELECT * FROM (<query>) AS p WHERE ...``:

- it is not one SELECT: several statements, or ``WITH`` (SQL Server refuses a CTE inside a
  derived table), ``EXEC``, DML;
- ``ORDER BY`` at its top level without ``TOP``/``OFFSET``/``LIMIT``: SQL Server refuses ORDER
  BY in a derived table (error 1033), and the order would not survive the gather anyway.
"""

from __future__ import annotations

from ._native import ProgrammingError

_ALIAS = "ferrodbc_partition"


def top_level_words(query: str) -> tuple[list[str], bool]:
    """The upper-cased words outside parentheses, literals and comments, and whether something
    other than blanks and comments follows a top-level ';' (a second statement)."""
    words, second, _ = _scan(query)
    return words, second


def _scan(query: str) -> tuple[list[str], bool, int]:
    """`top_level_words`, and the end of the statement: the offset after its last character
    that is not a blank, a comment or a top-level ';'."""
    words: list[str] = []
    depth = 0
    i = 0
    n = len(query)
    end = 0
    after_semicolon = False
    second_statement = False
    while i < n:
        c = query[i]
        if c == "-" and query.startswith("--", i):
            eol = query.find("\n", i)
            i = n if eol < 0 else eol + 1
            continue
        if c == "/" and query.startswith("/*", i):
            nest, i = 1, i + 2
            while i < n and nest:
                if query.startswith("/*", i):
                    nest, i = nest + 1, i + 2
                elif query.startswith("*/", i):
                    nest, i = nest - 1, i + 2
                else:
                    i += 1
            continue
        if c.isspace():
            i += 1
            continue
        if after_semicolon and c != ";":
            second_statement = True
        if c in "'\"[":
            close = "]" if c == "[" else c
            i += 1
            while i < n:
                if query[i] == close:
                    if query.startswith(close * 2, i):  # '' "" ]] escape the quote
                        i += 2
                        continue
                    break
                i += 1
            i += 1
            end = min(i, n)
            continue
        if c == ";" and depth == 0:
            after_semicolon = True
            i += 1
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c.isalpha() or c in "_@#":
            start = i
            while i < n and (query[i].isalnum() or query[i] in "_@#$"):
                i += 1
            if depth == 0:
                words.append(query[start:i].upper())
            end = i
            continue
        i += 1
        end = i
    return words, second_statement, end


def check_wrappable(query: str) -> str:
    """The query without what follows its last token (';', blanks, a trailing comment, which
    would swallow the wrapper's closing parenthesis), or ProgrammingError saying why it cannot
    be partitioned."""
    words, second_statement, end = _scan(query)
    if second_statement:
        raise ProgrammingError(
            "A partitioned read takes one SELECT statement; this query has several. Pass a "
            "list of queries to read several, one per connection.")
    if not words or words[0] != "SELECT":
        first = words[0] if words else "nothing"
        hint = (" (SQL Server does not allow a WITH common table expression inside a derived "
                "table: write it as a subquery in FROM)" if first == "WITH" else "")
        raise ProgrammingError(
            f"A partitioned read wraps the query in a derived table, so it must be one SELECT; "
            f"this one starts with {first}{hint}.")
    limited = any(w in ("TOP", "OFFSET", "LIMIT") for w in words)
    for a, b in zip(words, words[1:]):
        if (a, b) == ("ORDER", "BY") and not limited:
            raise ProgrammingError(
                "A partitioned read cannot keep a top-level ORDER BY (SQL Server refuses ORDER BY "
                "in a derived table without TOP or OFFSET, and rows are gathered partition by "
                "partition): remove it and sort the result.")
        if a == "INTO":
            raise ProgrammingError("SELECT ... INTO is not a query that returns rows.")
    return query[:end]


def type_probe(query: str, column: str) -> str:
    """No rows, just the description of the partition column."""
    return f"SELECT {column} FROM ({query}) AS {_ALIAS} WHERE 1 = 0"


def range_probe(query: str, column: str) -> str:
    return f"SELECT MIN({column}), MAX({column}) FROM ({query}) AS {_ALIAS}"


def split(low: int, high: int, partitions: int) -> list[int]:
    """Boundaries b0 < b1 < ... < bn of `partitions` contiguous ranges [b_i, b_{i+1}) over the
    integers low..high (fewer ranges when there are fewer integers than partitions)."""
    count = min(partitions, high - low + 1)
    width = high - low + 1
    return [low + (width * i) // count for i in range(count)] + [high + 1]


def partition_queries(query: str, column: str, bounds: list[int]) -> list[str]:
    """One query per range. The first range is open below and also takes the NULLs, the last is
    open above: every row of the query is in exactly one partition even when a given
    partition_range does not cover all of them."""
    n = len(bounds) - 1
    if n == 1:
        return [query]
    out = []
    for i in range(n):
        lo, hi = int(bounds[i]), int(bounds[i + 1])
        if i == 0:
            cond = f"{column} < {hi} OR {column} IS NULL"
        elif i == n - 1:
            cond = f"{column} >= {lo}"
        else:
            cond = f"{column} >= {lo} AND {column} < {hi}"
        out.append(f"SELECT * FROM ({query}) AS {_ALIAS} WHERE {cond}")
    return out
