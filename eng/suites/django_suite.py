"""Django through mssql-django against the TDS peer (Driver 18), with the real drivers and with
ferrodbc standing in for them, step by step side by side.

Django 5.2 and mssql-django 2.0 (which drives either pyodbc or, with OPTIONS
python_driver=mssql_python, mssql-python) are pip-installed at run time from
eng/suites/django/requirements.txt with --require-hashes into a cache outside the clone
(~/.cache/ferrodbc/django-<hash of that file>); nothing of theirs is committed. Each run gets a
fresh peer and runs eng/suites/django/flow.py (migrate, CRUD, transactions, aggregates,
bulk_create, select_for_update, ...) in its own process:

- pyodbc: mssql-django's default path, real pyodbc
- ferrodbc_as_pyodbc: the same with ferrodbc.install_as_pyodbc() first
- with --mssql-python, also: mssql_python (real mssql-python 1.16) and ferrodbc_as_mssql_python
  (ferrodbc.install_as_mssql_python() first)

Fails when a ferrodbc run fails a step its real driver passes, when real pyodbc fails a step
that is not a known peer limit (KNOWN_PEER_LIMITS, each in eng/tds-peer/README.md), or when a
known limit passes with pyodbc (the list must stay true).

    .venv/bin/python eng/suites/django_suite.py [--mssql-python] [--only RUN ...]

With --testapp DIR (local only: mssql-django publishes its tests in its repository, not on
PyPI), it runs mssql-django's own test app instead of the flow: DIR holds a copy of the
checkout's manage.py and testapp/ (nothing of it is committed). Each run gets two fresh peers
(testapp's "default" and "other" databases) and eng/suites/django/testapp_run.py, which runs
``manage.py test testapp``'s tests with eng/suites/django/testapp_settings.py and records each
test; the two runs are then compared test by test. --syncdb creates testapp's tables from its
models instead of running its migrations (several ALTER COLUMN, which the peer cannot).

    .venv/bin/python eng/suites/django_suite.py --testapp DIR [--syncdb] [--mssql-python] [--only RUN ...]
        [--report FILE] [TEST LABEL ...]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PROJECT = Path(__file__).resolve().parent / "django"
REQUIREMENTS = PROJECT / "requirements.txt"
sys.path.insert(0, str(REPO / "eng" / "peers"))

import tdspeer  # noqa: E402

# run -> (the real driver it stands beside or None, environment)
RUNS: dict[str, tuple[str | None, dict[str, str]]] = {
    "pyodbc": (None, {}),
    "ferrodbc_as_pyodbc": ("pyodbc", {"FERRODBC_INSTALL_AS": "pyodbc"}),
    "mssql_python": (None, {"DJANGO_PYTHON_DRIVER": "mssql_python"}),
    "ferrodbc_as_mssql_python": (
        "mssql_python",
        {"DJANGO_PYTHON_DRIVER": "mssql_python", "FERRODBC_INSTALL_AS": "mssql_python"},
    ),
}
MSSQL_PYTHON_RUNS = ("mssql_python", "ferrodbc_as_mssql_python")
# Steps real pyodbc fails on the peer because the peer differs from SQL Server there
# (eng/tds-peer/README.md, "What it does not emulate").
KNOWN_PEER_LIMITS = {
    "savepoint_rollback": "ROLLBACK TRANSACTION <savepoint> rolls the whole transaction back",
    "aggregates": "MAX/MIN of a decimal column compare its text (MAX(9.75, 62.25) is 9.75)",
}
RUN_TIMEOUT_S = 600
TESTAPP_TIMEOUT_S = 3600


def django_libs() -> Path:
    """The hash-checked Django + mssql-django install (made once per requirements file)."""
    digest = hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()[:16]
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "ferrodbc"
    target = base / f"django-{digest}"
    if not (target / ".complete").is_file():
        target.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                        "--require-hashes", "--no-deps", "--upgrade", "--target", str(target),
                        "-r", str(REQUIREMENTS)], check=True)
        (target / ".complete").write_text("ok\n")
    return target


def run(name: str, libs: Path) -> tuple[dict[str, str], str]:
    _, extra = RUNS[name]
    with tdspeer.start_peer() as peer:
        env = {k: v for k, v in os.environ.items() if k not in ("FERRODBC_INSTALL_AS", "DJANGO_PYTHON_DRIVER")}
        env.update(extra, DJANGO_PEER_PORT=str(peer.port),
                   PYTHONPATH=os.pathsep.join(filter(None, [str(libs), os.environ.get("PYTHONPATH")])))
        out = subprocess.run([sys.executable, str(PROJECT / "flow.py")], env=env, text=True,
                             capture_output=True, timeout=RUN_TIMEOUT_S)
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if out.returncode != 0 or not lines:
        raise SystemExit(f"{name}: the flow did not finish (exit {out.returncode}):\n{out.stderr[-4000:]}")
    result = json.loads(lines[-1])
    return result["steps"], result["connection_class_module"]


def run_testapp(name: str, libs: Path, app: Path, labels: list[str], syncdb: bool,
                log: Path | None) -> dict[str, str]:
    _, extra = RUNS[name]
    with tdspeer.start_peer() as peer, tdspeer.start_peer() as other:
        env = {k: v for k, v in os.environ.items() if k not in ("FERRODBC_INSTALL_AS", "DJANGO_PYTHON_DRIVER")}
        env.update(extra, DJANGO_PEER_PORT=str(peer.port), DJANGO_OTHER_PEER_PORT=str(other.port),
                   PYTHONPATH=os.pathsep.join(filter(None, [str(libs), os.environ.get("PYTHONPATH")])))
        if syncdb:
            env["DJANGO_TESTAPP_SYNCDB"] = "1"
        out = subprocess.run([sys.executable, str(PROJECT / "testapp_run.py"), *labels], cwd=app, env=env,
                             text=True, capture_output=True, timeout=TESTAPP_TIMEOUT_S)
    if log:
        log.write_text(out.stderr)
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        raise SystemExit(f"{name}: the test app did not finish (exit {out.returncode}):\n{out.stderr[-4000:]}")
    return json.loads(lines[-1])["tests"]


def testapp_main(args: argparse.Namespace, libs: Path) -> int:
    names = [n for n in RUNS if (n in args.only if args.only else (args.mssql_python or n not in MSSQL_PYTHON_RUNS))]
    results = {}
    for name in names:
        started = time.monotonic()
        results[name] = run_testapp(name, libs, args.testapp.resolve(), args.labels, args.syncdb,
                                    args.report and args.report.with_suffix(f".{name}.log"))
        counts = {k: sum(v.split(":")[0] == k for v in results[name].values())
                  for k in ("passed", "failed", "error", "skipped")}
        print(f"mssql-django test app, {name}: {counts['passed']} passed, {counts['failed']} failed, "
              f"{counts['error']} errors, {counts['skipped']} skipped ({time.monotonic() - started:.0f} s)")
    if args.report:
        args.report.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    behind_any = False
    for name in names:
        real_name = RUNS[name][0]
        if real_name not in results:
            continue
        real, ours = results[real_name], results[name]
        behind = sorted(t for t, v in real.items() if v == "passed" and ours.get(t) != "passed")
        ahead = sorted(t for t, v in ours.items() if v == "passed" and real.get(t) != "passed")
        passed_real = sum(v == "passed" for v in real.values())
        print(f"{name} passes {passed_real - len(behind)} of the {passed_real} tests real {real_name} "
              f"passes; {len(ahead)} more")
        for t in behind:
            print(f"  behind: {t}: {ours.get(t, 'not run')}")
        for t in ahead:
            print(f"  ahead: {t}: {real_name} {real[t]}")
        behind_any |= bool(behind)
    return 1 if behind_any else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mssql-python", action="store_true",
                    help="also run mssql-django's mssql-python path, real and ferrodbc.install_as_mssql_python()")
    ap.add_argument("--only", choices=list(RUNS), action="append", help="run only this (repeatable)")
    ap.add_argument("--testapp", type=Path, help="run mssql-django's test app from this copy of its checkout")
    ap.add_argument("--syncdb", action="store_true", help="--testapp: tables from models, not migrations")
    ap.add_argument("--report", type=Path, help="--testapp: write every test's outcome here (JSON)")
    ap.add_argument("labels", nargs="*", help="--testapp: test labels (default testapp)")
    args = ap.parse_args()
    if tdspeer.peer_binary() is None:
        print("tds-peer binary not built (cargo build --release -p tds-peer)", file=sys.stderr)
        return 2
    libs = django_libs()
    if args.testapp:
        return testapp_main(args, libs)
    names = [n for n in RUNS if (n in args.only if args.only else (args.mssql_python or n not in MSSQL_PYTHON_RUNS))]
    results: dict[str, dict[str, str]] = {}
    for name in names:
        results[name], module = run(name, libs)
        passed = sum(v == "passed" for v in results[name].values())
        print(f"Django 5.2.19 + mssql-django 2.0.0 flow, {name} (connections from {module}): "
              f"{passed} of {len(results[name])} steps passed")
    ok = True
    steps = list(next(iter(results.values()))) if results else []
    width = max(map(len, steps), default=0)
    print(f"{'step':<{width}}  " + "  ".join(f"{n:<24}" for n in names))
    for step in steps:
        print(f"{step:<{width}}  " + "  ".join(f"{results[n][step].split(':')[0]:<24}" for n in names))
    for name in names:
        real, _ = RUNS[name]
        for step, outcome in results[name].items():
            if outcome == "passed":
                if name == "pyodbc" and step in KNOWN_PEER_LIMITS:
                    print(f"pyodbc passes {step}, listed as a peer limit: update KNOWN_PEER_LIMITS")
                    ok = False
                continue
            if real is None:
                if step in KNOWN_PEER_LIMITS:
                    print(f"  {name} {step}: peer limit ({KNOWN_PEER_LIMITS[step]})")
                    continue
                print(f"  {name} {step}: {outcome}")
                ok &= name != "pyodbc"
            elif results.get(real, {}).get(step) == "passed":
                print(f"  {name} {step} (behind {real}): {outcome}")
                ok = False
            else:
                print(f"  {name} {step} (fails with {real} too): {outcome}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
