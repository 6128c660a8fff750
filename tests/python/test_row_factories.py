"""Row factories: `cursor.row_factory` (and `connection.row_factory`, the default of new cursors)
decides once per result set what a row is: None → `ferrodbc.Row`; `dict`; `tuple`;
`ferrodbc.namedtuple_row`; any `factory(description)` returning a callable of the values.
Every fetch shape honours it.
"""

from __future__ import annotations

import pytest

import ferrodbc

ROWS = 1000


@pytest.fixture
def people(peer, conn, table):
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (id INTEGER, name VARCHAR(20), score {peer.types['float']})")
    cur.executemany(f"INSERT INTO {table} VALUES (?, ?, ?)",
                    [(i, f"p{i}", None if i % 5 == 0 else i / 4) for i in range(ROWS)])
    conn.commit()
    return f"SELECT id, name, score FROM {table} ORDER BY id"


def expected(i: int) -> tuple:
    return (i, f"p{i}", None if i % 5 == 0 else i / 4)


SHAPES = {
    "fetchall": lambda c: c.fetchall(),
    "fetchone": lambda c: list(iter(c.fetchone, None)),
    "fetchmany": lambda c: [r for batch in iter(lambda: c.fetchmany(77), []) for r in batch],
    "fetchmany1": lambda c: [r for batch in iter(lambda: c.fetchmany(1), []) for r in batch],
    "iteration": lambda c: list(c),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_dict_rows_from_every_fetch_shape(conn, people, shape):
    cur = conn.cursor()
    cur.row_factory = dict
    rows = SHAPES[shape](cur.execute(people))
    assert rows == [dict(zip(("id", "name", "score"), expected(i))) for i in range(ROWS)]
    assert all(type(r) is dict for r in rows)


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_tuple_namedtuple_and_custom_rows_from_every_fetch_shape(conn, people, shape):
    cur = conn.cursor()
    cur.row_factory = tuple
    rows = SHAPES[shape](cur.execute(people))
    assert rows == [expected(i) for i in range(ROWS)] and all(type(r) is tuple for r in rows)

    cur.row_factory = ferrodbc.namedtuple_row
    rows = SHAPES[shape](cur.execute(people))
    assert [r._asdict() for r in rows] == [dict(zip(("id", "name", "score"), expected(i))) for i in range(ROWS)]
    assert rows[3].name == "p3" and rows[3] == expected(3)

    cur.row_factory = lambda description: (lambda values: ("custom", *values))
    rows = SHAPES[shape](cur.execute(people))
    assert rows == [("custom", *expected(i)) for i in range(ROWS)]


def test_none_is_ferrodbc_row_and_the_default(conn, people):
    cur = conn.cursor()
    assert cur.row_factory is None
    row = cur.execute(people).fetchone()
    assert type(row) is ferrodbc.Row and row == expected(0)
    cur.row_factory = dict
    cur.row_factory = None
    assert type(cur.execute(people).fetchone()) is ferrodbc.Row


def test_the_factory_is_called_once_per_result_set_with_the_description(conn, people):
    seen = []

    def factory(description):
        seen.append(description)
        return lambda values: values

    cur = conn.cursor()
    cur.row_factory = factory
    cur.execute(people)
    while cur.fetchone() is not None:
        pass
    assert len(seen) == 1 and seen[0] == cur.description
    cur.execute(people).fetchmany(10)
    cur.fetchall()
    assert len(seen) == 2, "a new execute is a new result set: the factory is asked again"


def test_setting_the_factory_mid_result_set_applies_to_the_next_fetch(conn, people):
    cur = conn.cursor()
    cur.execute(people)
    first = cur.fetchone()
    cur.row_factory = dict
    second = cur.fetchone()
    cur.row_factory = None
    third = cur.fetchone()
    assert type(first) is ferrodbc.Row and second == {"id": 1, "name": "p1", "score": 0.25}
    assert type(third) is ferrodbc.Row and third[0] == 2


def test_dict_rows_with_duplicate_names_keep_the_later_column(conn):
    cur = conn.cursor()
    cur.row_factory = dict
    assert cur.execute("SELECT 1 AS a, 2 AS a, 3 AS b").fetchone() == {"a": 2, "b": 3}


def test_dict_rows_apply_output_converters(conn, people):
    for t in (1, 12, -1, -8, -9, -10):
        conn.add_output_converter(t, lambda raw: None if raw is None else f"converted {type(raw).__name__}")
    cur = conn.cursor()
    cur.row_factory = dict
    assert cur.execute(people).fetchone()["name"] == "converted bytes"


def test_a_maker_that_raises_consumes_its_row_only(conn, people):
    def factory(description):
        def make(values):
            if values[0] == 3:
                raise ValueError("no 3")
            return values[0]

        return make

    cur = conn.cursor()
    cur.row_factory = factory
    cur.execute(people)
    assert cur.fetchmany(5) == [0, 1, 2]  # the rows before it; the error comes next
    with pytest.raises(ValueError, match="no 3"):
        cur.fetchmany(5)
    assert cur.fetchone() == 4, "the row after the failing one is next"
    cur.execute(people)
    with pytest.raises(ValueError) as info:
        cur.fetchall()
    assert info.value.partial_rows == [0, 1, 2]


def test_bad_factories_are_type_errors(conn, people):
    cur = conn.cursor()
    with pytest.raises(TypeError, match="row_factory must be"):
        cur.row_factory = 5
    cur.row_factory = lambda description: "not callable"
    cur.execute(people)
    with pytest.raises(TypeError, match="must return a callable"):
        cur.fetchone()


def test_connection_row_factory_is_the_default_of_new_cursors(conn, people):
    old = conn.cursor()
    assert conn.row_factory is None
    conn.row_factory = dict
    new = conn.cursor()
    assert new.row_factory is dict and old.row_factory is None
    assert new.execute(people).fetchone() == {"id": 0, "name": "p0", "score": None}
    assert type(old.execute(people).fetchone()) is ferrodbc.Row
    conn.row_factory = ferrodbc.LazyRow
    assert type(conn.cursor().execute(people).fetchone()) is ferrodbc.LazyRow
    with pytest.raises(TypeError):
        conn.row_factory = "dict"


def test_rows_as_dicts_is_row_factory_dict(conn, people):
    cur = conn.cursor()
    cur.rows_as_dicts = True
    assert cur.row_factory is dict
    assert cur.execute(people).fetchone() == {"id": 0, "name": "p0", "score": None}
    cur.rows_as_dicts = False
    assert cur.row_factory is None
    cur.row_factory = dict
    assert cur.rows_as_dicts is True
