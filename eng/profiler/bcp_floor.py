"""The ODBC driver's own per-row cost of a bulk load: Microsoft ODBC Driver 18's bcp_sendrow
called N times from a C loop (`bcp_floor.c`, built here with `cc`) on pre-bound values, against
the TDS peer started with --bulk-discard (so the peer only parses and counts).

    python -m eng.profiler.bcp_floor [--rows 1000000] [--rounds 5]

Two ways of binding the narrow table (id INT, big BIGINT, val FLOAT):

- `fixed`: each column bound once to one fixed-length value of its native bcp type (SQLINT4,
  SQLINT8, SQLFLT8), then bcp_sendrow only: the least a row can cost through the bcp API;
- `prefixed`: every column an 8-byte length prefix with SQL_VARLEN_DATA (ints as SQLINT8),
  and before each bcp_sendrow one bcp_colptr per column pointing at that row's cell in a
  1,024-row array of cells. ferrodbc bound every column so until it copied each cell into a
  slot bound once (src/bulk/load.rs, `Feed`); it still points at (MAX) and other large cells.
  Its narrow load now sits between the two modes: one cell copy per column instead of a
  bcp_colptr call.

Prints, per mode, the median and range of rows/s and ns per row over the rounds, with the
client's and the peer's CPU time. The loop runs in one ctypes call, timed around it.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import resource
import statistics
import struct
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
OUT = HERE / "out"
TICK = os.sysconf("SC_CLK_TCK")

SQLINT4, SQLINT8, SQLFLT8 = 0x38, 0x7F, 0x3E
SQL_VARLEN_DATA = -10
SQL_COPT_SS_BCP = 1219
CELLS = 1024  # rows of cells the prefixed mode cycles through


def build() -> ctypes.CDLL:
    OUT.mkdir(parents=True, exist_ok=True)
    so = OUT / "bcp_floor.so"
    src = HERE / "bcp_floor.c"
    if not so.exists() or so.stat().st_mtime < src.stat().st_mtime:
        subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", str(so), str(src)], check=True)
    lib = ctypes.CDLL(str(so))
    vp = ctypes.c_void_p
    lib.bcp_floor_loop.argtypes = [vp, ctypes.c_longlong, vp, vp, ctypes.c_int, ctypes.POINTER(vp),
                                   ctypes.c_longlong, ctypes.c_int]
    lib.bcp_floor_loop.restype = ctypes.c_longlong
    return lib


def peer_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def own_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def one_load(cn, b18, floor, mode: str, rows: int, peer_pid: int | None) -> tuple[float, float, float | None]:
    """(wall s, client CPU s, peer CPU s) of one load of `rows` rows."""
    d = b18._library()
    hdbc = cn.hdbc
    name = b18._utf16z("bcp_floor_t")
    if d.bcp_initW(hdbc, ctypes.cast(name, ctypes.c_wchar_p), None, None, b18.DB_IN) != 1:
        raise RuntimeError(f"bcp_initW failed: {b18._diag(hdbc)}")
    keep = []
    if mode == "fixed":
        values = [(struct.pack("<i", 7), SQLINT4), (struct.pack("<q", 1 << 33), SQLINT8), (struct.pack("<d", 0.5), SQLFLT8)]
        for col, (raw, t) in enumerate(values, 1):
            buf = ctypes.create_string_buffer(raw, len(raw))
            keep.append(buf)
            if d.bcp_bind(hdbc, ctypes.cast(buf, ctypes.c_void_p), 0, len(raw), None, 0, t, col) != 1:
                raise RuntimeError(f"bcp_bind failed: {b18._diag(hdbc)}")
        cells = (ctypes.c_void_p * 3)()
        per_row, stride = 0, 0
    else:
        placeholder = ctypes.create_string_buffer(struct.pack("<q", -1), 8)
        keep.append(placeholder)
        cells = (ctypes.c_void_p * 3)()
        for col, t in enumerate((SQLINT8, SQLINT8, SQLFLT8), 1):
            if d.bcp_bind(hdbc, ctypes.cast(placeholder, ctypes.c_void_p), 8, SQL_VARLEN_DATA, None, 0, t, col) != 1:
                raise RuntimeError(f"bcp_bind failed: {b18._diag(hdbc)}")
            fmt = "<qd" if t == SQLFLT8 else "<qq"
            data = b"".join(struct.pack(fmt, 8, (i * 0.5) if t == SQLFLT8 else i) for i in range(CELLS))
            buf = ctypes.create_string_buffer(data, len(data))
            keep.append(buf)
            cells[col - 1] = ctypes.cast(buf, ctypes.c_void_p)
        per_row, stride = 1, 16
    sendrow = ctypes.cast(d.bcp_sendrow, ctypes.c_void_p)
    colptr = ctypes.cast(d.bcp_colptr, ctypes.c_void_p)
    c0, p0, t0 = own_cpu(), peer_cpu(peer_pid) if peer_pid else None, time.perf_counter()
    sent = floor.bcp_floor_loop(hdbc, rows, sendrow, colptr, 3, cells, stride, per_row)
    done = d.bcp_done(hdbc)
    wall = time.perf_counter() - t0
    c1, p1 = own_cpu(), peer_cpu(peer_pid) if peer_pid else None
    if sent != rows or done != rows:
        raise RuntimeError(f"{mode}: sent {sent}, bcp_done {done} of {rows}: {b18._diag(hdbc)}")
    return wall, c1 - c0, (p1 - p0) if p0 is not None else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eng.profiler.bcp_floor")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT / "eng/tds-peer/tests"))
    sys.path.insert(0, str(ROOT / "eng/peers"))
    import bcp_driver18 as b18

    import ferrodbc

    import tdspeer
    from .target import _prefer_newest_peer_binary

    floor = build()
    _prefer_newest_peer_binary()
    with tdspeer.start_peer(encrypt="notsup", extra_args=["--bulk-discard"]) as peer:
        cn = ferrodbc.connect(tdspeer.conn_str(peer, "msodbcsql"), attrs_before={SQL_COPT_SS_BCP: 1},
                              autocommit=True)
        cn.cursor().execute("CREATE TABLE bcp_floor_t (id INT NOT NULL, big BIGINT NOT NULL, val FLOAT NOT NULL)")
        modes = ["fixed", "prefixed"]
        samples: dict[str, list] = {m: [] for m in modes}
        for m in modes:  # warm-up
            one_load(cn, b18, floor, m, min(args.rows, 100_000), peer.proc.pid)
        for k in range(args.rounds):
            for m in modes[k % 2:] + modes[: k % 2]:
                samples[m].append(one_load(cn, b18, floor, m, args.rows, peer.proc.pid))
        cn.close()
    print(f"{args.rows:,} rows per load, {args.rounds} rounds, load average {os.getloadavg()[0]:.1f} at end")
    print("| mode | rows/s median (min..max) | ns/row | client CPU s | peer CPU s |")
    print("|---|---|---|---|---|")
    for m, rs in samples.items():
        rates = [args.rows / w for w, _, _ in rs]
        ns = statistics.median(w for w, _, _ in rs) / args.rows * 1e9
        cpu = statistics.median(c for _, c, _ in rs)
        pc = statistics.median(p for _, _, p in rs) if rs[0][2] is not None else float("nan")
        print(f"| {m} | {statistics.median(rates):,.0f} ({min(rates):,.0f}..{max(rates):,.0f}) | {ns:.0f} | "
              f"{cpu:.2f} | {pc:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
