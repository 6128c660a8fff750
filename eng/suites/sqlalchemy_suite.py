"""Run SQLAlchemy's dialect compliance suite against the TDS peer, through Driver 18, twice:
once with mssql+pyodbc and once with mssql+ferrodbc.

The suite (`sqlalchemy.testing.suite`) comes with the pip-installed SQLAlchemy; it is run the
way third-party dialects run it (eng/suites/sqlalchemy/: a conftest importing SQLAlchemy's
pytest plugin, a setup.cfg naming the requirements class, `--dburi`). The requirements class is
SQLAlchemy's own `test/requirements.py` (what its CI says each backend supports), taken from
the SQLAlchemy sdist downloaded at run time with pip and checked by sha256; nothing of
SQLAlchemy's is committed. Each dialect gets a fresh peer (with the schemas test_schema and
test_schema_2 the suite expects).

With --as-pyodbc another run is SQLAlchemy's own mssql+pyodbc dialect with
ferrodbc.install_as_pyodbc() called first (the suite's conftest does it), compared with the run
behind the real pyodbc: libraries that import pyodbc by name run on ferrodbc unchanged.

With --async a third run goes through the async dialect (`mssql+ferrodbc_async`: ferrodbc.aio
under SQLAlchemy's greenlet adapters; SQLAlchemy's test plugin runs fixtures and tests in asyncio
when the URL's dialect is async), compared with the sync ferrodbc run as ferrodbc is with pyodbc.

Prints passed / failed / skipped per dialect and the tests mssql+pyodbc passes that
mssql+ferrodbc does not (and, with --async, those mssql+ferrodbc passes that the async dialect
does not). Exits non-zero when a pass share (passed / (passed + failed)) is below its floor, when
more tests than --max-behind are behind in either comparison, or when a run produced no report.

    .venv/bin/python eng/suites/sqlalchemy_suite.py [--floor-pyodbc 0.8] [--floor-ferrodbc 0.8]
        [--async [--floor-ferrodbc-async 0.8]] [--as-pyodbc [--floor-ferrodbc-as-pyodbc 0.8]]
        [--max-behind 0] [--only pyodbc|ferrodbc|ferrodbc_async|ferrodbc_as_pyodbc ...] [--report DIR] [-- extra pytest args]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SUITE_DIR = Path(__file__).resolve().parent / "sqlalchemy"
sys.path.insert(0, str(REPO / "eng" / "peers"))

import tdspeer  # noqa: E402

VERSION = "2.1.9"  # the version eng/requirements.txt pins
SDIST = f"sqlalchemy-{VERSION}.tar.gz"
SHA256 = "d700a8b2edfb26282a470333d6bc4a454c4acda4d201a3bea7b72fa76c217d28"
DIALECTS = ("pyodbc", "ferrodbc", "ferrodbc_async", "ferrodbc_as_pyodbc")
# (ahead, behind): each pair compared when both ran.
COMPARISONS = (("pyodbc", "ferrodbc"), ("ferrodbc", "ferrodbc_async"), ("pyodbc", "ferrodbc_as_pyodbc"))
# Runs that are SQLAlchemy's mssql+pyodbc dialect over ferrodbc: the suite's conftest calls
# ferrodbc.install_as_pyodbc() first (FERRODBC_INSTALL_AS_PYODBC=1).
AS_PYODBC = {"ferrodbc_as_pyodbc": "pyodbc"}
# A hung run must not hang CI: the whole suite takes minutes, not this.
RUN_TIMEOUT_S = 1800


def fetch_sdist(dest: Path) -> Path:
    """pip-downloads the sdist into dest (or reuses SQLALCHEMY_SDIST_DIR's copy), checks its hash."""
    cache = os.environ.get("SQLALCHEMY_SDIST_DIR")
    where = Path(cache) if cache else dest
    path = where / SDIST
    if not path.is_file():
        where.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
               f"sqlalchemy=={VERSION}", "-d", str(where)]
        subprocess.run(cmd, check=True)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != SHA256:
        raise SystemExit(f"{path}: sha256 {digest} is not the recorded {SHA256}")
    return path


def unpack_requirements(sdist: Path, dest: Path) -> Path:
    """Extracts test/__init__.py and test/requirements.py; returns the folder to put on sys.path."""
    root = f"sqlalchemy-{VERSION}/"
    wanted = {root + "test/__init__.py", root + "test/requirements.py"}
    with tarfile.open(sdist) as tar:
        members = [m for m in tar.getmembers() if m.name in wanted]
        tar.extractall(dest, members=members, filter="data")
    if len(members) != len(wanted):
        raise SystemExit(f"{sdist}: no test/requirements.py")
    return dest / root


def outcomes(junit: Path) -> dict[str, str]:
    """test id -> passed / failed / skipped, from pytest's JUnit report. SQLAlchemy's expected
    failures (fails_if / fails_on in the requirements) are reported as skips by its plugin
    when they fail as expected, and as failures when they pass unexpectedly."""
    result = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        # The plugin names each class after the database it runs on
        # (`RowCountTest_mssql+pyodbc_16_0_4096_0`): without that part both runs share ids.
        cls = re.sub(r"_mssql\+\w+?_[\d_]+$", "", case.get("classname") or "")
        name = f"{cls}::{case.get('name')}"
        tags = {child.tag for child in case}
        messages = " ".join(child.get("message") or "" for child in case)
        if "failure" in tags and "Unexpected success for" in messages:
            # A test the requirements mark as failing for the driver passed: the driver does
            # what they say it cannot (ferrodbc under install_as_pyodbc() reports sane
            # executemany row counts, which the requirements deny pyodbc). Not behind.
            result[name] = "xpassed"
        elif "failure" in tags or "error" in tags:
            result[name] = "failed"
        elif "skipped" in tags:
            result[name] = "skipped"
        else:
            result[name] = "passed"
    return result


def url_for(dialect: str, peer: tdspeer.Peer) -> str:
    dialect = AS_PYODBC.get(dialect, dialect)
    return (f"mssql+{dialect}://sa:x@127.0.0.1:{peer.port}/master"
            "?driver=ODBC+Driver+18+for+SQL+Server&Encrypt=no")


def prepare(peer: tdspeer.Peer) -> None:
    """The schemas SQLAlchemy's mssql provisioning creates in each test database."""
    import pyodbc

    with pyodbc.connect(tdspeer.conn_str(peer, "msodbcsql"), autocommit=True) as cnxn:
        for schema in ("test_schema", "test_schema_2"):
            cnxn.execute(f"CREATE SCHEMA {schema}")


def run(dialect: str, reqs_path: Path, report_dir: Path, extra: list[str]) -> tuple[dict[str, str], float]:
    junit = report_dir / f"sqlalchemy-{dialect}.xml"
    log = report_dir / f"sqlalchemy-{dialect}.log"
    junit.unlink(missing_ok=True)
    start = time.monotonic()
    with tdspeer.start_peer() as peer:
        prepare(peer)
        # test.requirements from the sdist; ferrodbc (and its dialect) is the installed one.
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(reqs_path), os.environ.get("PYTHONPATH")])))
        env["FERRODBC_INSTALL_AS_PYODBC"] = "1" if dialect in AS_PYODBC else ""
        cmd = [sys.executable, "-m", "pytest", "-c", str(SUITE_DIR / "setup.cfg"), "--rootdir", str(SUITE_DIR),
               "-q", "--tb=line", "-rN", f"--junitxml={junit}", "-o", "junit_family=xunit2",
               "--dburi", url_for(dialect, peer), str(SUITE_DIR / "test_suite.py"), *extra]
        with open(log, "w") as out:
            try:
                rc = subprocess.run(cmd, env=env, cwd=SUITE_DIR, stdout=out, stderr=subprocess.STDOUT,
                                    timeout=RUN_TIMEOUT_S).returncode
            except subprocess.TimeoutExpired:
                rc = "timeout"
    elapsed = time.monotonic() - start
    if not junit.is_file():
        raise SystemExit(f"mssql+{dialect}: pytest wrote no report (exit {rc}); see {log}")
    return outcomes(junit), elapsed


def share(res: dict[str, str]) -> tuple[int, int, int, float]:
    # An unexpected success ("xpassed") counts as passed.
    passed = sum(v in ("passed", "xpassed") for v in res.values())
    failed = sum(v == "failed" for v in res.values())
    skipped = sum(v == "skipped" for v in res.values())
    return passed, failed, skipped, (passed / (passed + failed) if passed + failed else 0.0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--floor-pyodbc", type=float, default=0.0, help="minimum pass share with mssql+pyodbc")
    ap.add_argument("--floor-ferrodbc", type=float, default=0.0, help="minimum pass share with mssql+ferrodbc")
    ap.add_argument("--floor-ferrodbc-async", type=float, default=0.0,
                    help="minimum pass share with mssql+ferrodbc_async (with --async)")
    ap.add_argument("--floor-ferrodbc-as-pyodbc", type=float, default=0.0,
                    help="minimum pass share of mssql+pyodbc over ferrodbc.install_as_pyodbc() (with --as-pyodbc)")
    ap.add_argument("--as-pyodbc", action="store_true",
                    help="also run mssql+pyodbc with ferrodbc.install_as_pyodbc() and compare it with pyodbc")
    ap.add_argument("--async", dest="run_async", action="store_true",
                    help="also run the async dialect (mssql+ferrodbc_async) and compare it with ferrodbc")
    ap.add_argument("--max-behind", type=int, default=None,
                    help="most tests allowed to pass with pyodbc but not with ferrodbc, and with ferrodbc "
                         "but not with ferrodbc_async (default: no limit)")
    ap.add_argument("--only", choices=DIALECTS, action="append", help="run only this dialect (repeatable)")
    ap.add_argument("--report", type=Path, help="keep the JUnit reports and logs in this folder")
    ap.add_argument("pytest_args", nargs="*", help="extra pytest arguments (after --)")
    args = ap.parse_args()
    if tdspeer.peer_binary() is None:
        print("tds-peer binary not built (cargo build --release -p tds-peer)", file=sys.stderr)
        return 2
    if not tdspeer.drivers_available()["msodbcsql"]:
        print("ODBC Driver 18 is not registered with unixODBC (run eng/setup.sh)", file=sys.stderr)
        return 2
    ok = True
    results: dict[str, dict[str, str]] = {}
    with tempfile.TemporaryDirectory(prefix="sqlalchemy-suite-") as tmp:
        tmp_path = Path(tmp)
        reqs = unpack_requirements(fetch_sdist(tmp_path), tmp_path)
        report_dir = args.report or tmp_path
        report_dir.mkdir(parents=True, exist_ok=True)
        for dialect in DIALECTS:
            if args.only and dialect not in args.only:
                continue
            if dialect == "ferrodbc_async" and not (args.run_async or args.only):
                continue
            if dialect in AS_PYODBC and not (args.as_pyodbc or args.only):
                continue
            res, elapsed = run(dialect, reqs, report_dir, args.pytest_args)
            results[dialect] = res
            passed, failed, skipped, frac = share(res)
            floor = getattr(args, f"floor_{dialect}")
            label = "mssql+pyodbc over ferrodbc.install_as_pyodbc()" if dialect in AS_PYODBC else f"mssql+{dialect}"
            print(f"SQLAlchemy {VERSION} suite, {label} vs tds-peer (Driver 18): {passed} passed, "
                  f"{failed} failed, {skipped} skipped; pass share {frac:.1%} (floor {floor:.0%}), {elapsed:.0f} s")
            ok &= bool(passed + failed) and frac >= floor
    for ahead, other in COMPARISONS:
        if ahead not in results or other not in results:
            continue
        behind = sorted(t for t, v in results[ahead].items()
                        if v in ("passed", "xpassed") and results[other].get(t) not in ("passed", "xpassed"))
        better = sorted(t for t, v in results[other].items() if v == "xpassed")
        if better:
            print(f"unexpected successes of mssql+{other} (passed where SQLAlchemy's requirements expect "
                  f"the driver to fail): {len(better)}")
            for name in better[:20]:
                print(f"  {name}")
        print(f"tests mssql+{ahead} passes and mssql+{other} does not: {len(behind)}")
        for name in behind[:60]:
            print(f"  {name}: {other} {results[other].get(name, 'not run')}")
        if len(behind) > 60:
            print(f"  ... and {len(behind) - 60} more")
        if args.max_behind is not None and len(behind) > args.max_behind:
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
