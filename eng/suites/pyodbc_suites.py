"""Run pyodbc 5.5.0's own test files with real pyodbc and with ferrodbc standing in; compare.

    python -m eng.suites.pyodbc_suites [--suites sqlite postgresql sqlserver] [--show N]

The pyodbc sdist is downloaded at test time (`pip download --no-binary :all:`), its sha256
checked against the value below, and unpacked into a temporary directory: nothing from it is
committed or written into the repository. Each test file runs twice in fresh pytest processes:
once importing the installed pyodbc, once with a one-line module named `pyodbc` that *is*
ferrodbc first on PYTHONPATH. The run FAILS when ferrodbc does not pass a test that real pyodbc
passed in the same run, unless the test is listed in pyodbc_differences.toml (deliberate
differences, each with its reason).

Peers: SQLite3 ODBC (the tests' own default connection string: a fresh file per test),
PostgreSQL + psqlODBC Unicode (`FERRODBC_PG_CONNSTR`, else `eng/peers/postgres.sh` is started)
and the project's TDS peer through ODBC Driver 18 (started for the run). On the TDS peer real
pyodbc must also pass every test but the peer's known limits (KNOWN_FAILURES of
eng/suites/pyodbc_sqlserver.py): a test real pyodbc newly fails there is a peer regression, and
would otherwise silently shrink what ferrodbc is compared on.
With CI=true a missing driver or peer fails the run instead of skipping that file.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import tomllib

PYODBC_VERSION = "5.5.0"
# sha256 of pyodbc-5.5.0.tar.gz as published on PyPI (checked on first download, 2026-12-01).
PYODBC_SDIST_SHA256 = "7a78873cac66b2857bf490a24a3e3aada24f839534e97c67e177f691e7d701ac"

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
DIFFERENCES_FILE = HERE / "pyodbc_differences.toml"
# The project's shim: importing `pyodbc` gives the ferrodbc module itself.
SHIM_SOURCE = "import sys, ferrodbc; sys.modules[__name__] = ferrodbc\n"
MODULES = ("pyodbc", "ferrodbc")
RUN_TIMEOUT_S = 900
CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


@dataclass
class Suite:
    name: str
    test_file: str
    env: dict[str, str] = field(default_factory=dict)
    # Test name -> why real pyodbc fails it on this peer; None: real pyodbc's results are not
    # checked (a database we do not own).
    real_known_failures: dict[str, str] | None = None


def log(message: str) -> None:
    print(f"pyodbc-suites: {message}", file=sys.stderr, flush=True)


def fetch_sdist(cache: Path) -> Path:
    """The verified sdist, downloaded into `cache` unless a verified copy is already there."""
    cache.mkdir(parents=True, exist_ok=True)
    sdist = cache / f"pyodbc-{PYODBC_VERSION}.tar.gz"
    if not sdist.exists() or sha256(sdist) != PYODBC_SDIST_SHA256:
        sdist.unlink(missing_ok=True)
        log(f"downloading the pyodbc {PYODBC_VERSION} sdist")
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "-q",
                "--no-deps",
                "--no-binary",
                ":all:",
                f"pyodbc=={PYODBC_VERSION}",
                "-d",
                str(cache),
            ],
            check=True,
        )
    digest = sha256(sdist)
    if digest != PYODBC_SDIST_SHA256:
        raise SystemExit(
            f"pyodbc-suites: {sdist} has sha256 {digest}, expected {PYODBC_SDIST_SHA256}"
        )
    return sdist


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def unpack_tests(sdist: Path, into: Path) -> Path:
    """Only the sdist's tests/ directory, checked for paths that would leave `into`."""
    prefix = f"pyodbc-{PYODBC_VERSION}/tests/"
    with tarfile.open(sdist) as tar:
        members = [
            m for m in tar.getmembers() if m.name.startswith(prefix) and m.isfile()
        ]
        tar.extractall(into, members=members, filter="data")
    return into / f"pyodbc-{PYODBC_VERSION}"


def odbc_driver_registered(name: str) -> bool:
    result = subprocess.run(
        ["odbcinst", "-q", "-d", "-n", name], check=False, capture_output=True
    )
    return result.returncode == 0


def postgres_connection_string() -> str | None:
    connstr = os.environ.get("FERRODBC_PG_CONNSTR")
    if connstr:
        return connstr
    result = subprocess.run(
        ["bash", str(ROOT / "eng/peers/postgres.sh")],
        check=False,
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        log(f"PostgreSQL peer did not start: {result.stderr.strip()[-500:]}")
        return None
    return result.stdout.strip()


def sqlserver_connection_string(stack: contextlib.ExitStack) -> str | None:
    """The TDS peer through Driver 18, started for this run (stopped when `stack` closes)."""
    sys.path.insert(0, str(ROOT / "eng" / "peers"))
    import tdspeer

    if tdspeer.peer_binary() is None or not odbc_driver_registered("ODBC Driver 18 for SQL Server"):
        return None
    peer = stack.enter_context(tdspeer.start_peer())
    # The database eng/suites/pyodbc_sqlserver.py gives the file (it switches to master itself).
    return tdspeer.conn_str(peer, "msodbcsql", Database="pyodbc_tests")


def available_suites(
    names: list[str], stack: contextlib.ExitStack
) -> tuple[list[Suite], list[str]]:
    suites, missing = [], []
    for name in names:
        if name == "sqlite":
            if odbc_driver_registered("SQLite3"):
                # Unset PYODBC_SQLITE: the file's default is a fresh database file per test.
                suites.append(
                    Suite("sqlite", "tests/sqlite_test.py", {"PYODBC_SQLITE": ""})
                )
            else:
                missing.append(
                    "sqlite: the SQLite3 ODBC driver is not registered (eng/setup.sh)"
                )
        elif name == "postgresql":
            connstr = postgres_connection_string()
            if connstr:
                suites.append(
                    Suite(
                        "postgresql",
                        "tests/postgresql_test.py",
                        {"PYODBC_POSTGRESQL": connstr},
                    )
                )
            else:
                missing.append("postgresql: no PostgreSQL peer (eng/peers/postgres.sh)")
        elif name == "sqlserver":
            connstr = sqlserver_connection_string(stack)
            if connstr:
                from eng.suites.pyodbc_sqlserver import KNOWN_FAILURES

                suites.append(
                    Suite(
                        "sqlserver",
                        "tests/sqlserver_test.py",
                        {"PYODBC_SQLSERVER": connstr},
                        real_known_failures=KNOWN_FAILURES,
                    )
                )
            else:
                missing.append("sqlserver: no tds-peer binary or no ODBC Driver 18 (eng/setup.sh)")
        else:
            raise SystemExit(f"pyodbc-suites: unknown suite {name!r}")
    return suites, missing


def run_file(
    tree: Path, suite: Suite, module: str, shim_dir: Path, work: Path
) -> dict[str, dict]:
    """{nodeid: {"outcome": passed|failed|skipped|crashed, "message": ...}} for one module.

    A test that kills the interpreter is recorded as crashed and the file is run again with it
    deselected, until a run completes.
    """
    outcomes: dict[str, dict] = {}
    deselected: list[str] = []
    for attempt in range(20):
        record = work / f"{suite.name}-{module}-{attempt}.jsonl"
        env = dict(os.environ)
        env.update(suite.env)
        for key, value in suite.env.items():
            if value == "":
                env.pop(key, None)
        paths = [str(HERE)]  # the outcomes plugin
        if module == "ferrodbc":
            paths.insert(0, str(shim_dir))
        env["PYTHONPATH"] = os.pathsep.join(paths)
        env["FERRODBC_SUITE_OUTCOMES"] = str(record)
        cmd = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "outcomes_plugin",
            "--rootdir",
            str(tree),
            suite.test_file,
        ]
        for nodeid in deselected:
            cmd += ["--deselect", nodeid]
        try:
            proc = subprocess.run(
                cmd,
                check=False,
                cwd=tree,
                env=env,
                capture_output=True,
                text=True,
                timeout=RUN_TIMEOUT_S,
            )
            returncode = proc.returncode
        except subprocess.TimeoutExpired:
            returncode = None
        running = read_record(record, outcomes)
        if returncode is not None and returncode in (0, 1) and running is None:
            return outcomes
        if running is None:
            tail = (
                (proc.stdout + proc.stderr)[-2000:]
                if returncode is not None
                else "timed out"
            )
            raise SystemExit(
                f"pyodbc-suites: {suite.name}/{module}: pytest exit {returncode} "
                f"outside any test:\n{tail}"
            )
        how = (
            "timed out"
            if returncode is None
            else f"killed the interpreter (exit {returncode})"
        )
        outcomes[running] = {"outcome": "crashed", "message": how}
        deselected.append(running)
        log(
            f"{suite.name}/{module}: {running} {how}; running the rest again without it"
        )
    raise SystemExit(f"pyodbc-suites: {suite.name}/{module}: too many crashes")


def read_record(path: Path, outcomes: dict[str, dict]) -> str | None:
    """Fold one run's events into `outcomes`; return the test that started but never finished."""
    running = None
    if not path.exists():
        return None
    for line in path.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        nodeid = event["nodeid"]
        if event["event"] == "start":
            running = nodeid
            outcomes[nodeid] = {"outcome": "passed", "message": ""}
        elif event["event"] == "phase":
            entry = outcomes[nodeid]
            if event["outcome"] == "failed" and entry["outcome"] != "failed":
                entry.update(
                    outcome="failed", message=f"{event['when']}: {event['message']}"
                )
            elif event["outcome"] == "skipped" and entry["outcome"] == "passed":
                entry.update(outcome="skipped", message=event["message"])
        elif event["event"] == "finish":
            running = None
    return running


def load_differences() -> tuple[dict[str, str], dict[str, str]]:
    """(deliberate differences, known gaps): test id -> reason, from the data file."""
    data = tomllib.loads(DIFFERENCES_FILE.read_text(encoding="utf-8"))
    lists: list[dict[str, str]] = []
    for section in ("difference", "known_gap"):
        entries = {}
        for entry in data.get(section, []):
            if not entry.get("reason", "").strip():
                raise SystemExit(
                    f"pyodbc-suites: {DIFFERENCES_FILE.name}: {entry['test']} has no reason"
                )
            entries[entry["test"]] = entry["reason"]
        lists.append(entries)
    return lists[0], lists[1]


def count(outcomes: dict[str, dict], outcome: str) -> int:
    return sum(1 for entry in outcomes.values() if entry["outcome"] == outcome)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--suites", nargs="+", default=["sqlite", "postgresql", "sqlserver"]
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
        / "ferrodbc",
    )
    parser.add_argument(
        "--show", type=int, default=40, help="list at most N differing tests per file"
    )
    parser.add_argument("--json", type=Path, help="write every outcome to this file")
    args = parser.parse_args(argv)

    differences, gaps = load_differences()
    stack = contextlib.ExitStack()
    suites, missing = available_suites(args.suites, stack)
    for reason in missing:
        log(("FAIL: " if CI else "skipped: ") + reason)
    sdist = fetch_sdist(args.cache)

    failed = bool(missing) and CI
    report = {}
    with stack, tempfile.TemporaryDirectory(prefix="ferrodbc-pyodbc-suites-") as tmp:
        work = Path(tmp)
        tree = unpack_tests(sdist, work / "sdist")
        shim_dir = work / "shim"
        shim_dir.mkdir()
        (shim_dir / "pyodbc.py").write_text(SHIM_SOURCE, encoding="utf-8")
        for suite in suites:
            results = {
                module: run_file(tree, suite, module, shim_dir, work)
                for module in MODULES
            }
            report[suite.name] = results
            failed |= compare(suite, results, differences, gaps, args.show)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1), encoding="utf-8")
    print("pyodbc-suites: " + ("FAILED" if failed else "ok"))
    return 1 if failed else 0


def compare(
    suite: Suite,
    results: dict[str, dict[str, dict]],
    differences: dict[str, str],
    gaps: dict[str, str],
    show: int,
) -> bool:
    """Print the comparison; True when it fails: ferrodbc fails a test real pyodbc passes that
    is on neither list, or a listed known gap now passes (the list must shrink with it)."""
    real, ours = results["pyodbc"], results["ferrodbc"]
    real_passed = [
        nodeid for nodeid, entry in real.items() if entry["outcome"] == "passed"
    ]
    ours_passed_of_those = [
        nodeid
        for nodeid in real_passed
        if ours.get(nodeid, {}).get("outcome") == "passed"
    ]
    regressions, deliberate, known = [], [], []
    for nodeid in real_passed:
        if nodeid in ours_passed_of_those:
            continue
        if nodeid in differences:
            deliberate.append(nodeid)
        elif nodeid in gaps:
            known.append(nodeid)
        else:
            regressions.append(nodeid)
    print(f"\n== {suite.test_file} ({len(real)} tests)")
    for module in MODULES:
        outcomes = results[module]
        print(
            f"  {module:9s} passed {count(outcomes, 'passed'):4d}  failed {count(outcomes, 'failed'):4d}  "
            f"skipped {count(outcomes, 'skipped'):3d}  crashed {count(outcomes, 'crashed')}"
        )
    print(
        f"  ferrodbc passes {len(ours_passed_of_those)} of the {len(real_passed)} tests real pyodbc passes"
        f" ({len(deliberate)} deliberate differences, {len(known)} known gaps)"
    )
    for nodeid in deliberate:
        print(f"    deliberate: {nodeid}: {differences[nodeid]}")
    for nodeid in known:
        print(f"    known gap: {nodeid}: {gaps[nodeid]}")
    stale = [
        nodeid
        for nodeid in {**differences, **gaps}
        if nodeid.startswith(suite.test_file)
        and ours.get(nodeid, {}).get("outcome") == "passed"
    ]
    for nodeid in stale:
        print(
            f"    listed in pyodbc_differences.toml but ferrodbc passes it (remove it): {nodeid}"
        )
    for nodeid in regressions[:show]:
        print(f"    FAIL {nodeid}: {ours.get(nodeid, {}).get('message', 'not run')}")
    if len(regressions) > show:
        print(f"    ... and {len(regressions) - show} more")
    extra = [
        nodeid
        for nodeid, entry in ours.items()
        if entry["outcome"] == "passed"
        and real.get(nodeid, {}).get("outcome") != "passed"
    ]
    if extra:
        print(
            f"  ferrodbc also passes {len(extra)} test(s) real pyodbc does not: {', '.join(extra[:10])}"
        )
    stale_gaps = [nodeid for nodeid in stale if nodeid in gaps]
    return bool(regressions) or bool(stale_gaps) or real_failures_unexpected(suite, real)


def real_failures_unexpected(suite: Suite, real: dict[str, dict]) -> bool:
    """On a peer we own, real pyodbc fails exactly the peer's known limits: print and return
    True for any other failure (a peer regression) and for a known limit that now passes."""
    if suite.real_known_failures is None:
        return False
    known = suite.real_known_failures
    bad = False
    for nodeid, entry in real.items():
        name = nodeid.split("::", 1)[-1].split("[", 1)[0]
        if entry["outcome"] in ("failed", "crashed") and name not in known:
            print(f"    real pyodbc FAILS on the peer (peer regression?): {nodeid}: {entry['message']}")
            bad = True
        elif entry["outcome"] == "passed" and name in known:
            print(f"    real pyodbc now passes known peer limit {name} (update KNOWN_FAILURES): {nodeid}")
            bad = True
    return bad


if __name__ == "__main__":
    sys.exit(main())
