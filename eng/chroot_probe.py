"""A round trip through an installed ferrodbc (eng/chroot.py runs it inside a Debian chroot).

    python eng/chroot_probe.py CONNECTION_STRING

Against the project's TDS peer (through Driver 18 or FreeTDS): parameters in and values out of
the main type families, a 60,000-row fetch (the prefetch thread at work) as rows and as Arrow's
C stream, and the installed module's own facts. Prints one line; any failure raises.
"""

from __future__ import annotations

import datetime as dt
import sys
from decimal import Decimal

import pyarrow as pa

import ferrodbc

cs = sys.argv[1]
with ferrodbc.connect(cs, autocommit=True) as conn:
    cur = conn.cursor()
    row = cur.execute(
        "SELECT ? + 1 AS n, ? AS s, ? AS d, ? AS t, ? AS b", 41, "h\u00e9 \u2603", Decimal("12.34"),
        dt.datetime(2026, 12, 6, 17, 30, 1, 250000), b"\x00\xff",
    ).fetchone()
    assert tuple(row) == (42, "h\u00e9 \u2603", Decimal("12.34"), dt.datetime(2026, 12, 6, 17, 30, 1, 250000),
                          b"\x00\xff"), tuple(row)
    ids = [r[0] for r in cur.execute("SELECT * FROM peer.int_nvarchar_60000").fetchall()]
    assert ids == list(range(60_000)), (len(ids), ids[:3])
    table = pa.table(cur.execute("SELECT * FROM peer.int_nvarchar_60000").fetch_record_batch(10_000))
    assert table.column(0).to_pylist() == ids
    driver = conn.getinfo(ferrodbc.SQL_DRIVER_NAME)
print(f"{driver}: params and types ok, 60000 rows as rows and as Arrow ({table.num_rows}), ferrodbc {ferrodbc.__version__} from {ferrodbc.__file__.rsplit('/', 3)[0]}")
