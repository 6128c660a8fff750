"""Identifiers as SQL Server spells them (issue 36 item 3): table and column names with `]]`,
`;`, `'`, spaces, dots inside brackets, non-ASCII and three-part names work in the peer's
metadata, the catalog calls, `bulkcopy`, `bulkcopy_arrow` and `column_mappings`; anything that
is not an identifier is refused with a PEP 249 error before any SQL is sent, and nothing passed
as a name runs as SQL (each test checks that the statement an injection would run did not)."""

from __future__ import annotations

import uuid

import pyarrow as pa
import pytest

import ferrodbc

from sqlserver_support import tname


def _weird(prefix: str) -> tuple[str, str]:
    """(real name, bracket-quoted name) of a table named with `]`, `;`, `'`, a space and a dot."""
    real = f"{prefix} we]ird; it's.t_{uuid.uuid4().hex[:8]}"
    return real, "[" + real.replace("]", "]]") + "]"


# (real column name, as created)
COLUMNS = [
    ("c]d", "[c]]d] int"),
    ("a b", "[a b] nvarchar(20)"),
    ("x.y", "[x.y] int"),
    ("ünï 表", "[ünï 表] int"),
    ("it's; --", "[it's; --] int"),
    ('q"r', '"q""r" int'),
]
REAL = [c for c, _ in COLUMNS]


@pytest.fixture
def weird(conn):
    real, quoted = _weird("T")
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {quoted} ({', '.join(d for _, d in COLUMNS)})")
    cur.execute(f"INSERT INTO {quoted} VALUES (1, N'one', 2, 3, 4, 5)")
    return real, quoted


def test_select_star_names_every_column_as_created(conn, weird):
    _, quoted = weird
    cur = conn.cursor()
    cur.execute(f"SELECT * FROM {quoted}")
    assert [d[0] for d in cur.description] == REAL
    assert [tuple(r) for r in cur.fetchall()] == [(1, "one", 2, 3, 4, 5)]
    cur.execute(f'SELECT [c]]d], "q""r" FROM {quoted}')
    assert [d[0] for d in cur.description] == ["c]d", 'q"r']


def test_catalog_calls_find_the_table_and_its_columns_by_their_real_names(conn, weird):
    real, _ = weird
    cur = conn.cursor()
    assert [r[2] for r in cur.tables(table=real).fetchall()] == [real]
    assert [r[3] for r in cur.columns(table=real).fetchall()] == REAL
    assert [r[3] for r in cur.columns(table=real, column="c]d").fetchall()] == ["c]d"]


@pytest.mark.parametrize("kind", ["rows", "arrow"])
def test_bulk_loads_into_a_weird_table_by_position_and_by_name(conn, weird, kind):
    _, quoted = weird
    cur = conn.cursor()
    rows = [(10, "ten", 11, 12, 13, 14)]
    by_name = [(20, "twenty")]

    def load(data, **options):
        if kind == "rows":
            return cur.bulkcopy(quoted, data, **options)
        cols = list(zip(*data))
        return cur.bulkcopy_arrow(
            quoted, pa.table({f"f{i}": list(c) for i, c in enumerate(cols)}), **options
        )

    assert load(rows)["rows_copied"] == 1
    assert load(by_name, column_mappings=["c]d", "a b"])["rows_copied"] == 1
    assert load([(30, 31)], column_mappings=[(1, "it's; --"), (0, 'q"r')])["rows_copied"] == 1
    cur.execute(f"SELECT * FROM {quoted} ORDER BY 1")
    got = [tuple(r) for r in cur.fetchall()]
    assert got == [
        (None, None, None, None, 31, 30),
        (1, "one", 2, 3, 4, 5),
        (10, "ten", 11, 12, 13, 14),
        (20, "twenty", None, None, None, None),
    ]


def test_identity_and_default_columns_of_a_weird_table_are_found(conn):
    real, quoted = _weird("I")
    cur = conn.cursor()
    cur.execute(
        f"CREATE TABLE {quoted} ([i]]d] int IDENTITY(1,1), [v;al] int, [d'f] int DEFAULT 7)"
    )
    # The identity column is skipped by position, and the NULL takes the DEFAULT.
    assert cur.bulkcopy(quoted, [(5, None)])["rows_copied"] == 1
    cur.execute(f"SELECT * FROM {quoted}")
    assert [d[0] for d in cur.description] == ["i]d", "v;al", "d'f"]
    assert [tuple(r) for r in cur.fetchall()] == [(1, 5, 7)]
    assert [r[3] for r in cur.columns(table=real).fetchall()] == ["i]d", "v;al", "d'f"]


def test_schema_and_three_part_names(conn):
    cur = conn.cursor()
    db = cur.execute("SELECT DB_NAME()").fetchval()
    t = tname("three")
    cur.execute(f"CREATE TABLE {t} (a int, b nvarchar(5))")
    for name in [f"{db}.dbo.{t}", f"[{db}].[dbo].[{t}]", f"dbo.[{t}]", f"{db}..{t}"]:
        assert cur.bulkcopy(name, [(1, "x")])["rows_copied"] == 1, name
    assert cur.execute(f"SELECT COUNT(*) FROM {t}").fetchval() == 4


# Names that are not identifiers, each an injection attempt that would create `pwned_<tag>`.
def _attacks(tag: str) -> list[str]:
    p = f"pwned_{tag}"
    return [
        f"t; CREATE TABLE {p} (i int)",
        f"t; CREATE TABLE {p} (i int) --",
        f"[t]; CREATE TABLE {p} (i int); --",
        f"[t]]; CREATE TABLE {p} (i int); --]x",
        f"t WHERE 1=0; CREATE TABLE {p} (i int)",
        f"t' ; CREATE TABLE {p} (i int) --",
        f"t/**/;CREATE TABLE {p} (i int)",
        f"(SELECT 1) x; CREATE TABLE {p} (i int)",
        f"t\n; CREATE TABLE {p} (i int)",
        f"[x}}; CREATE TABLE {p} (i int); --]",
        f"a.b.c.d; CREATE TABLE {p} (i int)",
        "[unclosed",
        "t\0",
    ]


def _exists(conn, table: str) -> bool:
    return bool(conn.cursor().tables(table=table).fetchall())


def _refused_before_sql(call) -> ferrodbc.Error:
    before = ferrodbc.counters()["executes"]
    with pytest.raises(ferrodbc.ProgrammingError) as err:
        call()
    assert ferrodbc.counters()["executes"] == before, "a statement was sent"
    return err.value


@pytest.mark.parametrize("kind", ["bulkcopy", "bulkcopy_arrow", "callproc"])
def test_non_identifiers_are_refused_before_any_sql(conn, kind):
    tag = uuid.uuid4().hex[:8]
    cur = conn.cursor()
    for name in _attacks(tag):
        if kind == "bulkcopy":
            err = _refused_before_sql(lambda name=name: cur.bulkcopy(name, [(1,)]))
        elif kind == "bulkcopy_arrow":
            err = _refused_before_sql(
                lambda name=name: cur.bulkcopy_arrow(name, pa.table({"i": [1]}))
            )
        else:
            err = _refused_before_sql(lambda name=name: cur.callproc(name, [1]))
        assert "is not a" in str(err), name
    assert not _exists(conn, f"pwned_{tag}")


def test_an_empty_table_name_is_refused_before_any_sql(conn):
    # ProgrammingError as every refused name (the mssql_python face: mssql-python's ValueError).
    cur = conn.cursor()
    before = ferrodbc.counters()["executes"]
    for call in (
        lambda: cur.bulkcopy("", [(1,)]),
        lambda: cur.bulkcopy_arrow("", pa.table({"i": [1]})),
    ):
        with pytest.raises(ferrodbc.ProgrammingError, match="non-empty"):
            call()
    assert ferrodbc.counters()["executes"] == before


def test_column_mappings_never_run_as_sql(conn, weird):
    _, quoted = weird
    tag = uuid.uuid4().hex[:8]
    cur = conn.cursor()
    for name in _attacks(tag) + ["c]d]; CREATE TABLE pwned_" + tag + " (i int); --", "[c]]d]"]:
        for mapping in ([name], [(0, name)]):
            with pytest.raises(ferrodbc.ProgrammingError, match="has no column"):
                cur.bulkcopy(quoted, [(1,)], column_mappings=mapping)
            with pytest.raises(ferrodbc.ProgrammingError, match="has no column"):
                cur.bulkcopy_arrow(quoted, pa.table({"i": [1]}), column_mappings=mapping)
    assert not _exists(conn, f"pwned_{tag}")
    assert cur.execute(f"SELECT COUNT(*) FROM {quoted}").fetchval() == 1


def test_catalog_arguments_are_data_never_sql(conn):
    """The drivers pass catalog arguments as values (RPC parameters or quoted literals): an
    injection finds nothing and runs nothing."""
    tag = uuid.uuid4().hex[:8]
    cur = conn.cursor()
    for name in [a for a in _attacks(tag) if "pwned" in a] + [
        f"x' ; CREATE TABLE pwned_{tag} (i int); --"
    ]:
        calls = [
            lambda name=name: cur.tables(table=name),
            lambda name=name: cur.tables(schema=name),
            lambda name=name: cur.tables(catalog=name),
            lambda name=name: cur.columns(table=name),
            lambda name=name: cur.columns(table="t", column=name),
            lambda name=name: cur.statistics(name),
            lambda name=name: cur.primaryKeys(name),
            lambda name=name: cur.foreignKeys(table=name),
            lambda name=name: cur.foreignKeys(foreignTable=name),
            lambda name=name: cur.procedures(procedure=name),
            lambda name=name: cur.procedureColumns(procedure=name),
            lambda name=name: cur.rowIdColumns(name),
            lambda name=name: cur.rowVerColumns(name),
            lambda name=name: cur.tablePrivileges(table=name),
        ]
        for call in calls:
            try:
                assert call().fetchall() == [], name
            except ferrodbc.Error:
                pass  # refused by the driver or the server: also never run
    assert not _exists(conn, f"pwned_{tag}")
