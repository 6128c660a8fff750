"""Decimals built through the verified `_decimal` layout (src/py/decimal.rs) are the very objects
`Decimal(text)` builds: same value, same exponent (trailing zeros kept), same str, hash and
arithmetic, for every shape of numeric text a driver writes. PostgreSQL's numeric keeps the
scale of its literal, so each value round-trips exactly as text."""

from __future__ import annotations

import decimal
import platform
import random
import sys

import pytest

from ferrodbc import _native

D = decimal.Decimal


def texts() -> list[str]:
    rng = random.Random(20261130)
    fixed = ["0", "0.0000", "1", "-1", "12.3400", "0.5", "-922337203685477.5808", "1234567890123456789",
             "12345678901234567890", "-" + "9" * 38, "0." + "0" * 37 + "1", "9" * 19, "1" + "0" * 19,
             "-0.00010", "100.0", "3.14159265358979323846264338327950288"]
    out = list(fixed)
    for _ in range(3000):
        digits = rng.randint(1, 38)
        scale = rng.randint(0, digits)
        coef = str(rng.randrange(10 ** (digits - 1), 10 ** digits))
        int_part, frac = coef[: digits - scale] or "0", coef[digits - scale:]
        out.append(("-" if rng.random() < 0.5 else "") + int_part + ("." + frac if frac else ""))
    return out


def test_the_fast_path_is_in_use_on_cpython():
    """On 64-bit CPython 3.11 (this project's CI) the layout verifies; elsewhere the constructor
    is a correct fallback, so this only asserts where the layout is known."""
    if platform.python_implementation() != "CPython" or sys.maxsize <= 2**32 or sys.version_info[:2] != (3, 11):
        pytest.skip("layout only asserted on 64-bit CPython 3.11")
    assert _native._decimal_fast_path() is True


def test_fetched_decimals_equal_the_constructor_in_every_respect(pg_conn):
    values = texts()
    cur = pg_conn.cursor()
    rows = []
    for i in range(0, len(values), 500):
        chunk = values[i:i + 500]
        sql = "SELECT v::numeric FROM (VALUES " + ", ".join(f"('{t}')" for t in chunk) + ") AS t(v)"
        rows += [r[0] for r in cur.execute(sql).fetchall()]
    assert len(rows) == len(values)
    for text, got in zip(values, rows):
        want = D(text)
        assert type(got) is D
        assert got.as_tuple() == want.as_tuple(), text
        assert str(got) == str(want) and repr(got) == repr(want)
        assert hash(got) == hash(want)
        assert got + 1 == want + 1 and got * -3 == want * -3 and -got == -want
        with decimal.localcontext(decimal.Context(prec=60)):
            assert got.quantize(D("0.01")) == want.quantize(D("0.01"))
        assert got.is_signed() == want.is_signed() and got.adjusted() == want.adjusted()


def test_beyond_38_digits_and_specials_take_the_constructor(pg_conn):
    cur = pg_conn.cursor()
    big = "1" * 50 + "." + "2" * 10
    got = cur.execute(f"SELECT '{big}'::numeric, 'NaN'::numeric").fetchone()
    assert got[0] == D(big) and str(got[0]) == big
    assert got[1].is_nan()
