"""`drivers`: the same tasks through ferrodbc, pyodbc and mssql-python (+ the floor) on
the same peer and data; a side-by-side table of medians and paired ratios other/ferrodbc."""

from __future__ import annotations

import argparse
import json
import platform
from functools import partial

from . import floor, procs, report
from .contestants import DRIVERS
from .expectations import for_run
from .rounds import Summary, rotating, run_rounds, summarize
from .stats import median
from .target import connection_string, describe, load_note
from .workloads import FLOOR_TASKS, REGISTRY, select

BASELINE = "ferrodbc"
FLOOR = "floor"


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--tasks", nargs="*", help="task names (default: all)")
    ap.add_argument("--pairs", type=int, help="measured rounds (default 5; quick: 3)")
    ap.add_argument("--quick", action="store_true", help="small sizes; 3 rounds allowed")
    ap.add_argument("--connection-string", help="use this server instead of starting the TDS peer")
    ap.add_argument("--pin", action="store_true", help="pin the peer to the last CPU and the clients to the others")
    ap.add_argument("--odbc-driver", default="msodbcsql", choices=["msodbcsql", "freetds"],
                    help="ODBC driver between the Python drivers and the peer (default: Microsoft ODBC Driver 18)")
    ap.add_argument("--drivers", nargs="*", default=list(DRIVERS), choices=list(DRIVERS))
    ap.add_argument("--no-floor", action="store_true")
    ap.add_argument("--bulk-discard", action="store_true",
                    help="peer with --bulk-discard: bulk rows counted, not stored (bulk_* tasks measure the client)")
    ap.add_argument("--insert-discard", action="store_true",
                    help="peer with --insert-discard: INSERT parameter arrays counted, not stored "
                         "(*_executemany tasks measure the client)")


def rounds_for(args: argparse.Namespace) -> int:
    n = args.pairs or (3 if args.quick else 5)
    floor_n = 3 if args.quick else 5
    if n < floor_n:
        raise SystemExit(f"at least {floor_n} measured rounds are needed ({'quick' if args.quick else 'full'} mode)")
    return n


def floor_round(exe, cs: str, names: list[str], quick: bool, expected: dict) -> dict:
    tasks = {}
    for n in names:
        t = REGISTRY[n]
        size = t.size.pick(quick)
        exp_rows = expected[n][0] if isinstance(expected.get(n), list) else size
        fetched = floor.run(exe, cs, t.floor_query(size), exp_rows)
        if fetched["status"] == "ok" and t.floor_shape:
            built = floor.objects(t.floor_shape, size, t.floor_chunk)
            if built["status"] != "ok":
                fetched = built
            else:
                fetched = {**fetched, "ms": fetched["ms"] + built["ms"], "fetch_ms": fetched["ms"],
                           "objects_ms": built["ms"]}
        tasks[n] = fetched
    return {"driver": FLOOR, "tasks": tasks}


def run(args: argparse.Namespace) -> tuple[str, dict]:
    """Returns (markdown, data)."""
    tasks = select(args.tasks)
    names = [t.name for t in tasks]
    measured = rounds_for(args)
    floor_names = [] if args.no_floor else [n for n in names if n in FLOOR_TASKS]
    run_notes: list[str] = []
    drivers = list(args.drivers)
    if args.odbc_driver == "freetds" and "mssql-python" in drivers:
        drivers.remove("mssql-python")
        run_notes.append("mssql-python left out: it always uses its bundled Microsoft driver, not FreeTDS")
    with connection_string(args.connection_string, args.pin, run_notes, args.odbc_driver,
                           getattr(args, "bulk_discard", False),
                           getattr(args, "insert_discard", False)) as cs:
        run_notes += [f"server: {describe(cs)}", f"at start: {load_note()}"]
        expect_file, sources = for_run(names, args.quick, cs)
        try:
            expected = json.loads(expect_file.read_text())
            runners = {d: partial(procs.worker, d, cs, names, args.quick, expect_file) for d in drivers}
            if floor_names:
                runners[FLOOR] = partial(floor_round, floor.build(), cs, floor_names, args.quick, expected)
                run_notes.append("floor = native fetch (odbc-floor: the driver drained into bound buffers, no Python "
                                 "objects) + the same rows' objects built from memory (unpickled, GC off), "
                                 "in fresh processes (the arrow_* tasks: the native fetch alone, Arrow builds no Python objects); "
                                 "the floor's per-part medians are in the JSON")
            samples = run_rounds(runners, measured, rotating)
            run_notes.append(f"at end: {load_note()}")
        finally:
            expect_file.unlink(missing_ok=True)
    return render(args, names, samples, sources, measured, run_notes)


def paired_ratio(samples: dict, other: str, task: str) -> str:
    """Median over rounds of other_i / ferrodbc_i (same round, same machine state)."""
    pairs = []
    for a, b in zip(samples[other], samples[BASELINE]):
        ra, rb = a["tasks"].get(task, {}), b["tasks"].get(task, {})
        if ra.get("status") == "ok" and rb.get("status") == "ok":
            pairs.append(ra["ms"] / rb["ms"])
    return f"{median(pairs):.2f}" if pairs and len(pairs) == len(samples[BASELINE]) else "–"


def summary_line(samples: dict, names: list[str], others: list[str]) -> str:
    """How often ferrodbc is clearly faster / clearly slower than each other contestant."""
    parts = []
    for o in others:
        ratios = [float(r) for n in names if (r := paired_ratio(samples, o, n)) != "–"]
        if ratios:
            faster = sum(r > 1.2 for r in ratios)
            slower = sum(r < 0.8 for r in ratios)
            parts.append(f"vs {o}: {BASELINE} faster by > 20 % on {faster}, slower by > 20 % on {slower}, "
                         f"within ±20 % on {len(ratios) - faster - slower} of {len(ratios)} tasks")
    return "**" + "; ".join(parts) + ".**" if parts else ""


def noise_line(summaries: dict[str, dict[str, Summary]]) -> str:
    spreads = sorted(s.spread for d in summaries.values() for s in d.values() if s.status == "ok" and len(s.ms) > 1)
    if not spreads:
        return ""
    p90 = spreads[min(len(spreads) - 1, int(0.9 * len(spreads)))]
    return (f"Noise: spread (max − min) / median of a cell's rounds — median {median(spreads):.0%}, "
            f"90th percentile {p90:.0%} over {len(spreads)} cells. Treat ratios within that band as ties.")


def render(args, names, samples, sources, measured, run_notes) -> tuple[str, dict]:
    labels = list(samples)
    summaries: dict[str, dict[str, Summary]] = {
        label: {n: summarize(samples[label], n) for n in names if label != FLOOR or n in samples[FLOOR][0]["tasks"]}
        for label in labels
    }
    others = [label for label in labels if label != BASELINE]
    headers = ["task", "n", *labels, *(f"{o}/{BASELINE}" for o in others if BASELINE in labels), f"{BASELINE} counters"]
    rows = []
    for n in names:
        row = [f"`{n}` {REGISTRY[n].title}", f"{REGISTRY[n].size.pick(args.quick):,}"]
        row += [report.cell(summaries[label][n]) if n in summaries[label] else "" for label in labels]
        if BASELINE in labels:
            row += [paired_ratio(samples, o, n) if n in summaries[o] else "" for o in others]
        row.append(report.counters(summaries.get(BASELINE, {}).get(n, Summary("n/a")).counters))
        rows.append(row)
    failed = [(label, n, s.reason) for label in labels for n, s in summaries[label].items() if s.status == "FAILED"]
    versions = {label: samples[label][0].get("version", "") for label in labels if label != FLOOR}
    mode = "QUICK mode (small sizes" + (", 3 rounds)" if measured < 5 else ")") if args.quick else "full mode"
    md = [
        f"# Drivers side by side — {mode}",
        "",
        f"{measured} measured rounds after 1 discarded warm-up; each driver in a fresh process per round, "
        f"order rotated per round. Cells: median ±half the range of the rounds (noise). "
        f"Ratios: median over rounds of other/{BASELINE} in the same round (> 1: {BASELINE} faster).",
        "",
        summary_line(samples, names, [o for o in others if o != FLOOR]) if BASELINE in labels else "",
        "",
        report.table(headers, rows),
        "",
        noise_line(summaries),
        "",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()) + f"; Python {platform.python_version()}.",
    ]
    notes = sorted({f"{label} `{n}`: {note}" for label in labels for n, s in summaries[label].items() for note in s.notes})
    if FLOOR in samples and BASELINE in samples:
        notes += floor_part_notes(samples, names)
    notes += metric_notes(samples, names)
    driver_notes = [note for d in labels if d in DRIVERS for note in DRIVERS[d].notes]
    for note in [*run_notes, *driver_notes, *notes, *(f"`{k}`: {v}" for k, v in sources.items())]:
        md.append(f"- {note}")
    if failed:
        md += ["", "## FAILED", ""] + [f"- {label} `{n}`: {reason}" for label, n, reason in failed]
    text = "\n".join(md) + "\n"
    data = {"mode": "quick" if args.quick else "full", "rounds": measured, "samples": samples,
            "summaries": {label: {n: vars(s) for n, s in d.items()} for label, d in summaries.items()}}
    return text, data


def floor_part_notes(samples: dict, names: list[str]) -> list[str]:
    """The floor's two halves, and ferrodbc against the native fetch alone (the stricter view:
    the object half is CPython's unpickler, which ferrodbc's own decoders outrun)."""
    out = []
    for n in names:
        rounds = list(zip(samples[FLOOR], samples[BASELINE]))
        parts = [(f["tasks"][n], b["tasks"][n]) for f, b in rounds
                 if f["tasks"].get(n, {}).get("status") == "ok" and b["tasks"].get(n, {}).get("status") == "ok"]
        if not parts or len(parts) != len(rounds) or "fetch_ms" not in parts[0][0]:
            continue
        fetch = median([f["fetch_ms"] for f, _ in parts])
        objects = median([f["objects_ms"] for f, _ in parts])
        native = median([f["fetch_ms"] / b["ms"] for f, b in parts])
        out.append(f"floor `{n}`: native fetch {fetch:.1f} ms + objects {objects:.1f} ms; "
                   f"native fetch alone / {BASELINE} = {native:.2f}")
    return out


def metric_notes(samples: dict, names: list[str]) -> list[str]:
    """Figures tasks measure besides time (peak RSS, batch counts): each driver's median over
    its rounds."""
    out = []
    for n in names:
        per_label = []
        for label, reports in samples.items():
            ms = [r["tasks"].get(n, {}).get("metrics") for r in reports]
            if ms and all(ms):
                keys = list(ms[0])
                per_label.append(f"{label} " + ", ".join(f"{k} {median([m[k] for m in ms]):g}" for k in keys))
        if per_label:
            out.append(f"`{n}` (median of the rounds): " + "; ".join(per_label))
    return out


#: Whose failures fail the command: ours. Other drivers' failures are findings about them.
GATED = (BASELINE, FLOOR)


def gated_failures(data: dict) -> list[str]:
    return [
        f"{label} {task}: {s['reason']}"
        for label, per_task in data["summaries"].items()
        if label in GATED
        for task, s in per_task.items()
        if s["status"] == "FAILED"
    ]


def main(args: argparse.Namespace, stem: str = "drivers") -> int:
    """Exit status 1 only if ferrodbc or the floor errored or returned wrong data."""
    text, data = run(args)
    md, js = report.write(stem, text, data)
    print(text)
    print(f"(written to {md} and {js})")
    failed = gated_failures(data)
    if failed:
        print("profiler: FAILED (errors or wrong results):\n  " + "\n  ".join(failed))
        return 1
    print("profiler: ok (timings are informational, never a failure)")
    return 0
