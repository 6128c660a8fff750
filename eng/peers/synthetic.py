"""Python mirror of tds-peer's synthetic tables (`SELECT * FROM peer.<shape>_<rows>`).

Every value is a pure function of the row index i (0-based); the formulas are documented in
eng/tds-peer/README.md and implemented in eng/tds-peer/src/synthetic.rs. `rows(shape, n)`
yields tuples with the Python types pyodbc returns where it can:

- bit -> bool; integers -> int; decimal/numeric/money -> Decimal; real/float -> float
- date -> date; time -> time; datetime/smalldatetime/datetime2 -> datetime (microseconds,
  i.e. a 7-digit fraction truncated to 6 digits as the drivers do)
- datetimeoffset -> timezone-aware datetime (pyodbc needs an output converter for type -155;
  see `decode_dto`)
- char/varchar/nchar/nvarchar/xml -> str (char/nchar padded with spaces)
- binary/varbinary -> bytes; uniqueidentifier -> uuid.UUID (pyodbc returns str unless
  `pyodbc.native_uuid = True`)
- sql_variant -> int (the peer sends INT-based variants; pyodbc needs a converter for -150,
  see `decode_variant_int`)

`columns(shape)` gives [(name, sql type text)].
"""

from __future__ import annotations

import datetime as _dt
import struct
import uuid
from decimal import Context, Decimal

M64 = 2**64
TICKS_PER_DAY = 864_000_000_000

TYPES_ALL = [
    ("id", "int"),
    ("c_bit", "bit"),
    ("c_tinyint", "tinyint"),
    ("c_smallint", "smallint"),
    ("c_int", "int"),
    ("c_bigint", "bigint"),
    ("c_dec1", "decimal(1,0)"),
    ("c_dec9", "decimal(9,2)"),
    ("c_dec18", "decimal(18,4)"),
    ("c_dec19", "decimal(19,0)"),
    ("c_dec28", "decimal(28,10)"),
    ("c_dec38", "decimal(38,10)"),
    ("c_num", "numeric(10,3)"),
    ("c_money", "money"),
    ("c_smallmoney", "smallmoney"),
    ("c_real", "real"),
    ("c_float", "float"),
    ("c_date", "date"),
    ("c_time0", "time(0)"),
    ("c_time3", "time(3)"),
    ("c_time7", "time(7)"),
    ("c_datetime", "datetime"),
    ("c_smalldatetime", "smalldatetime"),
    ("c_dt2_0", "datetime2(0)"),
    ("c_dt2_3", "datetime2(3)"),
    ("c_dt2_7", "datetime2(7)"),
    ("c_dto0", "datetimeoffset(0)"),
    ("c_dto7", "datetimeoffset(7)"),
    ("c_char", "char(10)"),
    ("c_varchar", "varchar(50)"),
    ("c_varchar_utf8", "varchar(50) collate Latin1_General_100_CI_AS_SC_UTF8"),
    ("c_nchar", "nchar(10)"),
    ("c_nvarchar", "nvarchar(50)"),
    ("c_varchar_max", "varchar(max)"),
    ("c_nvarchar_max", "nvarchar(max)"),
    ("c_varbinary_max", "varbinary(max)"),
    ("c_binary8", "binary(8)"),
    ("c_varbinary50", "varbinary(50)"),
    ("c_guid", "uniqueidentifier"),
    ("c_xml", "xml"),
    ("c_variant", "sql_variant"),
]

_WIDE_TYPES = ["int", "nvarchar(30)", "float", "datetime2(3)", "decimal(12,2)"]


def columns(shape: str) -> list[tuple[str, str]]:
    if shape == "types_all":
        return list(TYPES_ALL)
    if shape == "mixed":
        return [("id", "int"), ("big", "bigint"), ("f", "float"), ("name", "nvarchar(50)"), ("ts", "datetime2(7)"),
                ("amount", "decimal(18,4)"), ("flag", "bit"), ("note", "nvarchar(100)")]
    if shape == "int_nvarchar":
        return [("id", "int"), ("name", "nvarchar(50)")]
    if shape == "int_nvarchar_float":
        return [("id", "int"), ("name", "nvarchar(50)"), ("val", "float")]
    if shape == "wide32":
        return [(f"c{k}", _WIDE_TYPES[k % 5]) for k in range(32)]
    if shape == "dto_dec_guid":
        return [c for j in range(3) for c in ((f"dto_{j}", "datetimeoffset(7)"), (f"dec_{j}", "decimal(38,10)"), (f"guid_{j}", "uniqueidentifier"))]
    if shape.startswith("lob_nvarcharmax_") and shape.endswith("k"):
        return [("id", "int"), ("body", "nvarchar(max)")]
    if shape.startswith("lob_varbinarymax_") and shape.endswith("k"):
        return [("id", "int"), ("body", "varbinary(max)")]
    raise ValueError(f"unknown shape {shape!r}")


def mix(i: int, k: int) -> int:
    return ((i * 2_654_435_761 + k * 40_503) * 11_400_714_819_323_198_485) % M64


def mix128(i: int, k: int) -> int:
    return (mix(i, k) << 64) | mix(i, k + 1000)


def _signed64(x: int) -> int:
    return x - M64 if x >= 2**63 else x


def _dec(unscaled: int, scale: int) -> Decimal:
    # exact: the default context would round 38-digit values to 28 significant digits
    return Decimal(unscaled).scaleb(-scale, context=Context(prec=80))


def gen_dec(i: int, k: int, p: int, s: int) -> Decimal:
    lim = 10**p
    return _dec(mix128(i, k) % (2 * lim - 1) - (lim - 1), s)


def _date(days: int) -> _dt.date:
    """days since 0001-01-01."""
    return _dt.date.fromordinal(days + 1)


def _time(ticks: int) -> _dt.time:
    secs, frac = divmod(ticks, 10_000_000)
    return _dt.time(secs // 3600, secs // 60 % 60, secs % 60, frac // 10)


def _datetime(days: int, ticks: int) -> _dt.datetime:
    return _dt.datetime.combine(_date(days), _time(ticks))


def _ticks_for(i: int, k: int, scale: int) -> int:
    m2 = mix(i, k + 1000)
    if scale == 0:
        return (m2 % 86_400) * 10_000_000
    if scale == 3:
        return (m2 % 86_400_000) * 10_000
    return m2 % 864_000_000_000


DAY_1900 = 693_595


def types_all_value(i: int, k: int, name: str):
    m1 = mix(i, k)
    if name == "id":
        return i
    if name == "c_bit":
        return bool(m1 % 2)
    if name == "c_tinyint":
        return m1 % 256
    if name == "c_smallint":
        return m1 % 65_536 - 32_768
    if name == "c_int":
        return m1 % 2**32 - 2**31
    if name == "c_bigint":
        return _signed64(m1)
    decs = {"c_dec1": (1, 0), "c_dec9": (9, 2), "c_dec18": (18, 4), "c_dec19": (19, 0), "c_dec28": (28, 10),
            "c_dec38": (38, 10), "c_num": (10, 3), "c_money": (18, 4)}
    if name in decs:
        return gen_dec(i, k, *decs[name])
    if name == "c_smallmoney":
        return _dec(m1 % 4_000_000_001 - 2_000_000_000, 4)
    if name == "c_real":
        return (m1 % 20_001 - 10_000) * 0.25
    if name == "c_float":
        return (_signed64(m1) >> 11) / 1_048_576.0
    if name == "c_date":
        return _date(m1 % 3_652_059)
    if name in ("c_time0", "c_time3", "c_time7"):
        return _time(_ticks_for(i, k, int(name[-1])))
    if name == "c_datetime":
        t300 = (mix(i, k + 1000) % 8_640_000) * 3
        return _datetime(DAY_1900 + m1 % 80_000, t300 // 3 * 100_000)
    if name == "c_smalldatetime":
        return _datetime(DAY_1900 + m1 % 60_000, (mix(i, k + 1000) % 1440) * 600_000_000)
    if name in ("c_dt2_0", "c_dt2_3", "c_dt2_7"):
        return _datetime(m1 % 3_652_059, _ticks_for(i, k, int(name[-1])))
    if name in ("c_dto0", "c_dto7"):
        off = (mix(i, k + 2000) % 57) * 30 - 840
        local = _datetime(1 + m1 % 3_652_057, _ticks_for(i, k, 0 if name == "c_dto0" else 7))
        return local.replace(tzinfo=_dt.timezone(_dt.timedelta(minutes=off)))
    if name == "c_char":
        return f"c{i % 1000}é€".ljust(10)
    if name == "c_varchar":
        return f"v{i} café €Š"
    if name == "c_varchar_utf8":
        return f"u{i} 中文 ü😀"
    if name == "c_nchar":
        return f"n{i % 1000}ж".ljust(10)
    if name == "c_nvarchar":
        return f"nv{i} 中文 ß 😀"
    if name == "c_varchar_max":
        return f"x{i};" * (i % 5 * 700)
    if name == "c_nvarchar_max":
        return f"ñ{i};" * (i % 4 * 1500)
    if name == "c_varbinary_max":
        return bytes((i + j) % 256 for j in range((i % 6) * 3000))
    if name == "c_binary8":
        return i.to_bytes(8, "big")
    if name == "c_varbinary50":
        return bytes((i * j) % 256 for j in range(i % 51))
    if name == "c_guid":
        return uuid.UUID(int=mix128(i, k))
    if name == "c_xml":
        return f'<r i="{i}">x&amp;y</r>'
    if name == "c_variant":
        return i * 3 - 1000
    raise ValueError(name)


def row(shape: str, i: int) -> tuple:
    if shape == "types_all":
        if i % 7 == 3:
            return (i,) + (None,) * (len(TYPES_ALL) - 1)
        return tuple(types_all_value(i, k, n) for k, (n, _) in enumerate(TYPES_ALL))
    if shape == "mixed":
        base = _dt.date(2020, 1, 1).toordinal() - 1
        ts = _datetime(base + i // 86_400, (i % 86_400) * 10_000_000 + (i % 1000) * 10_000)
        return (i, i * 1_000_003, i * 0.25, f"name {i}", ts, _dec((i * 12_345) % 10_000_000_000 - 5_000_000_000, 4),
                i % 3 == 0, None if i % 5 == 0 else f"note {i} é")
    if shape == "int_nvarchar":
        return (i, f"row {i} é中")
    if shape == "int_nvarchar_float":
        return (i, None if i % 10 == 3 else f"row {i} é中", i * 1.5)
    if shape == "wide32":
        out = []
        base = _dt.date(2021, 1, 1).toordinal() - 1
        for k in range(32):
            kind = k % 5
            if kind == 0:
                out.append(i + k)
            elif kind == 1:
                out.append(f"w{k}_{i}")
            elif kind == 2:
                out.append(i * 0.5 + k)
            elif kind == 3:
                mins = i + k
                out.append(_datetime(base + mins // 1440, (mins % 1440) * 600_000_000))
            else:
                out.append(_dec(i * 100 + k, 2))
        return tuple(out)
    if shape == "dto_dec_guid":
        out = []
        for j in range(3):
            k = 100 + j * 3
            out += [types_all_value(i, k, "c_dto7"), gen_dec(i, k + 1, 38, 10), types_all_value(i, k + 2, "c_guid")]
        return tuple(out)
    if shape.startswith("lob_nvarcharmax_"):
        n = int(shape[len("lob_nvarcharmax_"):-1]) * 512
        alpha = "".join(chr(65 + (i + j) % 26) for j in range(26))
        return (i, (alpha * (n // 26 + 1))[:n])
    if shape.startswith("lob_varbinarymax_"):
        n = int(shape[len("lob_varbinarymax_"):-1]) * 1024
        pat = bytes((i + j) % 256 for j in range(256))
        return (i, (pat * (n // 256 + 1))[:n])
    raise ValueError(f"unknown shape {shape!r}")


def rows(shape: str, n: int):
    """Expected rows of `SELECT * FROM peer.<shape>_<n>`."""
    for i in range(n):
        yield row(shape, i)


# ---- decoders for the types pyodbc cannot represent natively --------------------------------

SQL_SS_TIMESTAMPOFFSET = -155
SQL_SS_VARIANT = -150


def decode_dto(raw: bytes | None):
    """SQL_SS_TIMESTAMPOFFSET_STRUCT (20 bytes) -> aware datetime (microseconds truncated)."""
    if raw is None:
        return None
    y, mo, d, h, mi, s, frac_ns, tzh, tzm = struct.unpack("<6hI2h", raw)
    tz = _dt.timezone(_dt.timedelta(hours=tzh, minutes=tzm))
    return _dt.datetime(y, mo, d, h, mi, s, frac_ns // 1000, tzinfo=tz)


def decode_variant_int(raw: bytes | None):
    """sql_variant holding an INT, read as SQL_C_BINARY -> int."""
    if raw is None:
        return None
    return int.from_bytes(raw, "little", signed=True)


def add_converters(cnxn) -> None:
    """Registers the two output converters the expected values assume (pyodbc connection)."""
    cnxn.add_output_converter(SQL_SS_TIMESTAMPOFFSET, decode_dto)
    cnxn.add_output_converter(SQL_SS_VARIANT, decode_variant_int)
