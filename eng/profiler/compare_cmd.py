"""`compare`: base vs head revision of ferrodbc, paired and alternating, with the §2.8 verdicts."""

from __future__ import annotations

import argparse
import sys
from functools import partial

from . import builds, procs, report
from .expectations import for_run
from .rounds import alternating, run_rounds, summarize
from .stats import THRESHOLD, headline, verdict
from .target import connection_string, describe, load_note
from .workloads import REGISTRY, select


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--base", required=True, help="git revision to compare against")
    ap.add_argument("--head", default="HEAD", help="git revision under test (default HEAD)")
    ap.add_argument("--tasks", nargs="*", help="task names (default: all)")
    ap.add_argument("--pairs", type=int, help="measured pairs (default 5; at least 5, quick mode 3)")
    ap.add_argument("--quick", action="store_true", help="small sizes; 3 pairs allowed")
    ap.add_argument("--connection-string", help="use this server instead of starting the TDS peer")
    ap.add_argument("--pin", action="store_true", help="pin the peer to the last CPU and the clients to the others")
    ap.add_argument("--odbc-driver", default="msodbcsql", choices=["msodbcsql", "freetds"],
                    help="ODBC driver between the Python drivers and the peer (default: Microsoft ODBC Driver 18)")


def check_isolation(samples: dict, sites: dict) -> None:
    for label, reports in samples.items():
        for r in reports:
            where = r.get("module_file", "")
            if r.get("crashed"):
                continue
            if not where.startswith(str(sites[label])):
                raise SystemExit(f"{label}: ferrodbc was imported from {where}, not from {sites[label]}")


def counter_changes(b: dict | None, h: dict | None) -> str:
    if not b or not h:
        return ""
    return ", ".join(f"{k} {b.get(k)}→{h.get(k)}" for k in sorted(set(b) | set(h)) if b.get(k) != h.get(k))


def run(args: argparse.Namespace) -> tuple[str, dict]:
    pairs = args.pairs or (3 if args.quick else 5)
    if pairs < (3 if args.quick else 5):
        raise SystemExit("compare needs at least 5 measured pairs (3 in --quick mode)")
    names = [t.name for t in select(args.tasks)]
    shas = {"base": builds.resolve(args.base), "head": builds.resolve(args.head)}
    log = partial(print, file=sys.stderr, flush=True)
    sites = {label: builds.build(sha, log) for label, sha in shas.items()}
    run_notes: list[str] = []
    with connection_string(args.connection_string, args.pin, run_notes, args.odbc_driver) as cs:
        run_notes += [f"server: {describe(cs)}", f"at start: {load_note()}"]
        expect_file, sources = for_run(names, args.quick, cs)
        try:
            runners = {label: partial(procs.worker, "ferrodbc", cs, names, args.quick, expect_file, [str(site)])
                       for label, site in sites.items()}
            samples = run_rounds(runners, pairs, alternating)
            run_notes.append(f"at end: {load_note()}")
        finally:
            expect_file.unlink(missing_ok=True)
    check_isolation(samples, sites)
    return render(args, names, shas, samples, sources, pairs, run_notes)


def render(args, names, shas, samples, sources, pairs, run_notes) -> tuple[str, dict]:
    rows, labels, data_tasks = [], [], {}
    for n in names:
        b, h = summarize(samples["base"], n), summarize(samples["head"], n)
        if b.status != "ok" or h.status != "ok":
            # Partial results never give a verdict.
            label = "FAILED" if "FAILED" in (b.status, h.status) else "n/a"
            why = b.reason if b.status != "ok" else h.reason
            rows.append([f"`{n}` {REGISTRY[n].title}", b.status, h.status, "–", "–",
                         f"**{label}** ({report.short(why)})", ""])
            labels.append(label)
            data_tasks[n] = {"verdict": label, "reason": why}
            continue
        v = verdict(b.ms, h.ms)
        labels.append(v.label)
        shown = f"**{v.label}**" if v.label != "no signal" else v.label
        rows.append([f"`{n}` {REGISTRY[n].title}", report.ms(b.median), report.ms(h.median), f"{v.median_ratio:.3f}",
                     f"{v.agreeing}/{v.pairs}", shown, counter_changes(b.counters, h.counters)])
        data_tasks[n] = {"verdict": v.label, "median_ratio": v.median_ratio, "base_ms": b.ms, "head_ms": h.ms,
                         "base_counters": b.counters, "head_counters": h.counters}
    counted = {k: labels.count(k) for k in dict.fromkeys(labels)}
    head_line = headline(labels)
    if "FAILED" in labels:
        head_line += " — with FAILED tasks (no verdict for them)"
    mode = f"QUICK mode ({pairs} pairs)" if args.quick else f"full mode ({pairs} pairs)"
    md = [
        f"# ferrodbc compare: base `{shas['base'][:10]}` vs head `{shas['head'][:10]}` — {mode}",
        "",
        f"**{head_line}.** " + ", ".join(f"{v} {k}" for k, v in counted.items()) + ".",
        "",
        f"Order per pair alternates (base, head | head, base); 1 warm-up pair discarded; fresh process per sample. "
        f"Verdict: |median paired ratio − 1| > {THRESHOLD:.0%}, ≥ 1 ms between medians, ≥ 80 % of pairs beyond "
        f"the threshold the same way; a slowdown without that agreement is 'inconsistent'.",
        "",
        report.table(["task", "base median", "head median", "head/base", "pairs agreeing", "verdict",
                      "counter changes (base→head)"], rows),
        "",
    ]
    if pairs < 5:
        md.append(f"- Only {pairs} pairs (quick mode): a verdict needs {pairs}/{pairs} agreement and one "
                  "noisy pair decides it; confirm any verdict with ≥ 5 pairs before acting on it.")
    md += [f"- {note}" for note in run_notes]
    md += [f"- `{k}`: {v}" for k, v in sources.items()]
    md += sorted({f"- {side} `{n}`: {note}" for side in ("base", "head") for n in names
                  for note in summarize(samples[side], n).notes})
    text = "\n".join(md) + "\n"
    return text, {"base": shas["base"], "head": shas["head"], "pairs": pairs, "quick": args.quick,
                  "headline": head_line, "tasks": data_tasks, "samples": samples}


def main(args: argparse.Namespace) -> int:
    text, data = run(args)
    md, js = report.write("compare", text, data)
    print(text)
    print(f"(written to {md} and {js})")
    return 0
