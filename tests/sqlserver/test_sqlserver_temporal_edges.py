"""Temporal parameters at the edges of every SQL Server date/time type, through both drivers:
stored exactly, or refused with DataError — never stored or returned as another value.

FreeTDS 1.3.17 puts the wrong day number on the wire for DATE/DATETIME2 parameters before
1600-03-01 (0001-01-01 went out as day -1 and came back as 9999-12-31; 382,066 of the 584,082
days before 1600-03-01 were wrong in a sweep, every later day exact), and its text parser reads
'0001-01-01' as 2001-01-01. ferrodbc therefore sends such values through FreeTDS as ISO text that
the server converts (src/params/mod.rs, `freetds_misencodes`). These tests failed before that.
"""

from __future__ import annotations

import datetime as dt

import pytest

import ferrodbc

from sqlserver_support import tname

TZ = lambda minutes: dt.timezone(dt.timedelta(minutes=minutes))  # noqa: E731
D, T = dt.date, dt.datetime

EARLY_DATES = [D(1, 1, 1), D(1, 1, 2), D(1, 3, 1), D(100, 2, 28), D(1000, 1, 1), D(1582, 10, 4),
               D(1582, 10, 15), D(1600, 2, 29)]
LATE_DATES = [D(1600, 3, 1), D(1752, 12, 31), D(1753, 1, 1), D(1899, 12, 31), D(1900, 1, 1),
              D(2079, 6, 6), D(9999, 12, 31)]

# (declared column type, values that column holds): each type's own range edges, plus the dates
# around FreeTDS's 1600-03-01 boundary.
EDGES = [
    ("DATE", EARLY_DATES + LATE_DATES),
    ("DATETIME2(7)", [T(d.year, d.month, d.day) for d in EARLY_DATES + LATE_DATES]
     + [T(1, 1, 1, 23, 59, 59, 999999), T(1600, 2, 29, 12, 0, 0, 1), T(9999, 12, 31, 23, 59, 59, 999999)]),
    ("DATETIME2(0)", [T(1, 1, 1), T(1600, 2, 29, 23, 59, 59), T(9999, 12, 31, 23, 59, 59)]),
    ("DATETIME", [T(1753, 1, 1), T(1899, 12, 31, 23, 59, 59), T(9999, 12, 31, 23, 59, 59, 997000)]),
    ("SMALLDATETIME", [T(1900, 1, 1), T(2079, 6, 6, 23, 59)]),
    ("TIME(7)", [dt.time(0), dt.time(0, 0, 0, 1), dt.time(23, 59, 59, 999999)]),
    ("DATETIMEOFFSET(7)", [T(1, 1, 1, 14, tzinfo=TZ(840)), T(1, 1, 1, tzinfo=TZ(-840)),
                           T(1600, 2, 29, 12, tzinfo=TZ(330)), T(9999, 12, 31, 9, 59, 59, 999999, tzinfo=TZ(-840)),
                           T(9999, 12, 31, 23, 59, 59, 999999, tzinfo=TZ(0))]),
]

# Values a column of that type cannot hold: SQL Server refuses them (the peer as well).
OUT_OF_RANGE = [
    ("DATETIME", T(1752, 12, 31, 23, 59, 59)),
    ("DATETIME", T(1, 1, 1)),
    ("SMALLDATETIME", T(1899, 12, 31, 23, 59)),
    ("SMALLDATETIME", T(2079, 6, 7)),
    # the UTC instant of these lies outside 0001-01-01..9999-12-31
    ("DATETIMEOFFSET(7)", T(1, 1, 1, 0, 0, tzinfo=TZ(840))),
    ("DATETIMEOFFSET(7)", T(9999, 12, 31, 23, 59, tzinfo=TZ(-840))),
]


def same(got, want) -> bool:
    if type(got) is not type(want) or got != want:
        return False
    return not isinstance(want, dt.datetime) or got.utcoffset() == want.utcoffset()


def table_of(conn, sqltype: str) -> str:
    t = tname("edge")
    conn.cursor().execute(f"CREATE TABLE {t} (i INT, v {sqltype})")
    return t


@pytest.mark.parametrize("sqltype,values", EDGES, ids=[t for t, _ in EDGES])
def test_edges_are_stored_exactly_by_execute_and_executemany(conn, driver, sqltype, values):
    t = table_of(conn, sqltype)
    cur = conn.cursor()
    for i, v in enumerate(values):
        cur.execute(f"INSERT INTO {t} VALUES (?, ?)", i, v)
    # one parameter array (FreeTDS: row by row where it has to, see statement.rs)
    cur.executemany(f"INSERT INTO {t} VALUES (?, ?)", [(1000 + i, v) for i, v in enumerate(values)])
    # a column mixing early and late values, NULL in between
    cur.executemany(f"INSERT INTO {t} VALUES (?, ?)", [(2000, values[0]), (2001, None), (2002, values[-1])])
    got = dict(cur.execute(f"SELECT i, v FROM {t}").fetchall())
    wrong = [(k, v, got.get(k)) for i, v in enumerate(values) for k in (i, 1000 + i) if not same(got.get(k), v)]
    wrong += [(k, v, got.get(k)) for k, v in ((2000, values[0]), (2001, None), (2002, values[-1]))
              if not (got.get(k) is None if v is None else same(got.get(k), v))]
    assert wrong == [], f"{sqltype} through {driver}: (row, sent, read back)"


@pytest.mark.parametrize("sqltype,value", OUT_OF_RANGE, ids=[f"{t}-{v.isoformat()}" for t, v in OUT_OF_RANGE])
def test_out_of_range_is_a_data_error_not_another_value(conn, driver, sqltype, value):
    t = table_of(conn, sqltype)
    with pytest.raises(ferrodbc.DataError):
        conn.cursor().execute(f"INSERT INTO {t} VALUES (1, ?)", value)
    assert conn.cursor().execute(f"SELECT COUNT(*) FROM {t}").fetchval() == 0


@pytest.mark.parametrize("value", EARLY_DATES + [T(1, 1, 1, 1, 2, 3, 456789), T(1600, 2, 29, 23, 59, 59, 999999)],
                         ids=lambda v: v.isoformat())
def test_select_of_an_early_date_is_exact(conn, driver, value):
    """`SELECT ?` echoes the parameter's declared type: through Driver 18 the date itself; through
    FreeTDS the ISO text it was sent as (a deliberate difference: the text is exact, a date
    would not be)."""
    got = conn.cursor().execute("SELECT ?", value).fetchval()
    if driver == "msodbcsql":
        assert same(got, value)
    else:
        assert type(got) is str
        parsed = (dt.date if type(value) is dt.date else dt.datetime).fromisoformat(got[:26])
        assert parsed == value


def test_select_from_1600_03_01_keeps_the_native_type(conn, driver):
    for v in LATE_DATES + [T(1600, 3, 1, 0, 0, 0, 1)]:
        assert same(conn.cursor().execute("SELECT ?", v).fetchval(), v)


def test_early_dates_compare_and_convert_on_the_server(conn, driver):
    t = table_of(conn, "DATE")
    cur = conn.cursor()
    cur.executemany(f"INSERT INTO {t} VALUES (?, ?)", [(i, d) for i, d in enumerate(EARLY_DATES + LATE_DATES)])
    got = cur.execute(f"SELECT i FROM {t} WHERE v = ?", D(1000, 1, 1)).fetchall()
    assert [r[0] for r in got] == [EARLY_DATES.index(D(1000, 1, 1))]
    got = cur.execute(f"SELECT COUNT(*) FROM {t} WHERE v < ?", D(1600, 3, 1)).fetchval()
    assert got == len(EARLY_DATES)


def test_early_input_output_date_through_freetds_is_refused(conn, driver):
    p = tname("p")
    conn.cursor().execute(f"CREATE PROCEDURE {p} @d DATE OUTPUT AS BEGIN SET @d = DATEADD(day, 1, @d) END")
    out = ferrodbc.Output(dt.date, D(1000, 1, 1))
    if driver == "freetds":
        with pytest.raises(ferrodbc.DataError, match="1600-03-01"):
            conn.cursor().callproc(p, [out])
    else:
        assert conn.cursor().callproc(p, [out]) == [D(1000, 1, 2)]
    ok = ferrodbc.Output(dt.date, D(1600, 3, 1))
    assert conn.cursor().callproc(p, [ok]) == [D(1600, 3, 2)]
