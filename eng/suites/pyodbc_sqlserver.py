"""Run pyodbc 5.5.0's own tests/sqlserver_test.py against the TDS peer (real pyodbc, Driver 18).

The sdist is downloaded at run time with pip (never committed), checked against the sha256
below, and unpacked into a temporary directory. The peer (eng/peers/tdspeer.py) is started on a
free port and the suite gets its connection string through PYODBC_SQLSERVER, the variable the
file reads. Prints passed / failed / skipped and exits non-zero when the pass share of the
tests that ran (passed / (passed + failed)) is below --floor, or when nothing ran.

The failures known and explained in eng/tds-peer/README.md are marked xfail(strict) in the
run (KNOWN_FAILURES): they still count as failed in the share, and one that starts passing
fails the run (XPASS), so the list and the README stay true.

    .venv/bin/python eng/suites/pyodbc_sqlserver.py [--floor 0.90] [-- extra pytest args]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tarfile
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "eng" / "peers"))

import tdspeer  # noqa: E402

VERSION = "5.5.0"
SDIST = f"pyodbc-{VERSION}.tar.gz"
SHA256 = "7a78873cac66b2857bf490a24a3e3aada24f839534e97c67e177f691e7d701ac"
# The share of the tests that run which must pass; raise it as the peer improves.
DEFAULT_FLOOR = 0.99
# The suite expects its own database, not master (test_set_string_attr switches to master).
DATABASE = "pyodbc_tests"


# test name -> why the peer fails it (eng/tds-peer/README.md has the same list).
KNOWN_FAILURES = {
    "test_func_param": "no user-defined functions (CREATE FUNCTION)",
}

PLUGIN = """
import pytest

KNOWN = {known!r}


def pytest_collection_modifyitems(items):
    for item in items:
        reason = KNOWN.get(item.name)
        if reason:
            item.add_marker(pytest.mark.xfail(reason="tds-peer limit: " + reason, strict=True))
"""


def fetch_sdist(dest: Path) -> Path:
    """pip-downloads the sdist into dest (or reuses PYODBC_SDIST_DIR's copy) and checks its hash."""
    cache = os.environ.get("PYODBC_SDIST_DIR")
    where = Path(cache) if cache else dest
    path = where / SDIST
    if not path.is_file():
        where.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:", f"pyodbc=={VERSION}", "-d", str(where)]
        subprocess.run(cmd, check=True)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != SHA256:
        raise SystemExit(f"{path}: sha256 {digest} is not the recorded {SHA256}")
    return path


def unpack_tests(sdist: Path, dest: Path) -> Path:
    """Extracts only tests/ of the sdist (the suite needs nothing else) and returns its folder."""
    root = f"pyodbc-{VERSION}/tests/"
    with tarfile.open(sdist) as tar:
        members = [m for m in tar.getmembers() if m.name.startswith(root) and m.isfile()]
        tar.extractall(dest, members=members, filter="data")
    return dest / root


def counts(junit: Path) -> dict:
    """passed / failed (known xfails included) / skipped, and strict XPASSes, from pytest's
    JUnit report."""
    c = {"passed": 0, "failed": 0, "known": 0, "skipped": 0, "xpassed": 0}
    for case in ET.parse(junit).getroot().iter("testcase"):
        outcome = {child.tag: child for child in case}
        if "failure" in outcome or "error" in outcome:
            bad = outcome.get("failure", outcome.get("error"))
            # A known failure that passed: it passed (and the run fails, to update the list).
            xpass = (bad.get("message") or "").startswith("[XPASS(strict)]")
            c["xpassed" if xpass else "failed"] += 1
            c["passed"] += xpass
        elif "skipped" in outcome:
            xfail = outcome["skipped"].get("type") == "pytest.xfail"
            c["failed" if xfail else "skipped"] += 1
            c["known"] += xfail
        else:
            c["passed"] += 1
    return c


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--floor", type=float, default=DEFAULT_FLOOR, help="minimum pass share of the tests that ran")
    ap.add_argument("pytest_args", nargs="*", help="extra pytest arguments (after --)")
    args = ap.parse_args()
    if tdspeer.peer_binary() is None:
        print("tds-peer binary not built (cargo build --release -p tds-peer)", file=sys.stderr)
        return 2
    if not tdspeer.drivers_available()["msodbcsql"]:
        print("ODBC Driver 18 is not registered with unixODBC (run eng/setup.sh)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="pyodbc-suite-") as tmp:
        tmp = Path(tmp)
        tests = unpack_tests(fetch_sdist(tmp), tmp)
        junit = tmp / "junit.xml"
        (tmp / "pyodbc_known_failures.py").write_text(PLUGIN.format(known=KNOWN_FAILURES))
        with tdspeer.start_peer() as peer:
            env = dict(os.environ, PYODBC_SQLSERVER=tdspeer.conn_str(peer, "msodbcsql", Database=DATABASE),
                       PYTHONPATH=os.pathsep.join(filter(None, [str(tmp), os.environ.get("PYTHONPATH")])))
            cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "pyodbc_known_failures", "-rfExX", "--tb=short",
                   f"--junitxml={junit}", "-o", "junit_family=xunit2", str(tests / "sqlserver_test.py"), *args.pytest_args]
            rc = subprocess.run(cmd, env=env, cwd=tmp).returncode
        if not junit.is_file():
            print(f"pytest wrote no report (exit {rc})", file=sys.stderr)
            return 1
        c = counts(junit)
    ran = c["passed"] + c["failed"]
    share = c["passed"] / ran if ran else 0.0
    print(f"pyodbc {VERSION} sqlserver_test.py vs tds-peer: pass share {share:.1%} (floor {args.floor:.0%})")
    print(f"pyodbc {VERSION} suite: {c['passed']} passed, {c['failed']} failed "
          f"({c['known']} of them known peer limits, see eng/tds-peer/README.md), {c['skipped']} skipped")
    if c["xpassed"]:
        print(f"{c['xpassed']} known failure(s) now pass: update KNOWN_FAILURES and the README", file=sys.stderr)
    return 0 if ran and share >= args.floor and not c["xpassed"] else 1


if __name__ == "__main__":
    sys.exit(main())
