"""mssql-python's own tests against the TDS peer, with real mssql-python and with ferrodbc
standing in for it (ferrodbc.install_as_mssql_python()), compared test by test.

Local only: mssql-python publishes no sdist, so its tests come from a checkout of
microsoft/mssql-python (``--tests DIR``, its ``tests/`` folder; nothing of it is committed).
Each run gets a fresh peer (through Driver 18: ``DB_CONNECTION_STRING`` names no driver, as
mssql-python's CI writes it) and its own pytest process; the stand-in run loads a plugin that
calls ``ferrodbc.install_as_mssql_python()`` before the suite's conftest imports mssql_python.

The peer's 60 s cap on uncancellable lock waits is lowered to 1.5 s
(TDS_PEER_UNCANCELLABLE_WAIT_MS): many tests create a #temp table outside autocommit on one
connection and run DDL on another, which the peer serializes (eng/tds-peer/README.md) where SQL
Server does not wait at all; they fail either way, but 60 s each would make the run hours long.

    .venv/bin/python eng/suites/mssql_python_suite.py --tests /path/to/copy/of/tests
        [--only real|ferrodbc] [--report DIR] [-- extra pytest args]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "eng" / "peers"))

import tdspeer  # noqa: E402

# Not run: stress and timing tests (minutes each, and they measure the machine), and a file
# that reads mssql-python's CI scripts (.github/), which are not part of tests/.
IGNORED = (
    "test_011_singlethreaded_stress.py",
    "test_020_multithreaded_stress.py",
    "test_021_concurrent_connection_perf.py",
    "test_022_concurrent_query_gil_release.py",
    "test_023_ssh_tunnel_gil_release.py",
    "test_fork_coverage_security.py",
)
PLUGIN = "import ferrodbc\n\nferrodbc.install_as_mssql_python()\n"


def outcomes(junit: Path) -> dict[str, str]:
    result = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        tags = {child.tag for child in case}
        result[name] = ("failed" if tags & {"failure", "error"} else
                        "skipped" if "skipped" in tags else "passed")
    return result


def run(mode: str, tests: Path, work: Path, extra: list[str]) -> dict[str, str]:
    junit = work / f"mssql-python-{mode}.xml"
    # The peer inherits the cap from this process's environment.
    os.environ["TDS_PEER_UNCANCELLABLE_WAIT_MS"] = "1500"
    env = dict(os.environ)
    with tdspeer.start_peer() as peer:
        env["DB_CONNECTION_STRING"] = (f"Server=127.0.0.1,{peer.port};Database=master;UID=sa;PWD=x;"
                                       "Encrypt=no;TrustServerCertificate=yes")
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--tb=line", "-rN",
               "--continue-on-collection-errors", f"--junitxml={junit}", "-o", "junit_family=xunit2"]
        cmd += [f"--ignore={tests / f}" for f in IGNORED]
        if mode == "ferrodbc":
            (work / "ferrodbc_face_plugin.py").write_text(PLUGIN)
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(work), env.get("PYTHONPATH")]))
            cmd += ["-p", "ferrodbc_face_plugin"]
        with open(work / f"mssql-python-{mode}.log", "w") as log:
            subprocess.run([*cmd, str(tests), *extra], cwd=tests.parent, env=env, stdout=log,
                           stderr=subprocess.STDOUT, timeout=7200)
    if not junit.is_file():
        raise SystemExit(f"{mode}: pytest wrote no report (see {work})")
    return outcomes(junit)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tests", type=Path, required=True, help="mssql-python's tests/ folder")
    ap.add_argument("--only", choices=("real", "ferrodbc"), action="append")
    ap.add_argument("--report", type=Path, help="keep the JUnit reports and logs here")
    ap.add_argument("pytest_args", nargs="*")
    args = ap.parse_args()
    if (args.tests.resolve().parent / "mssql_python").is_dir():
        # pytest runs in the tests' parent folder, where a checkout's source package would be
        # imported instead of the installed wheel (its native module is not built there).
        raise SystemExit(f"copy {args.tests} (and pytest.ini) out of the mssql-python checkout "
                         "first: its source package beside tests/ shadows the installed one")
    with tempfile.TemporaryDirectory(prefix="mssql-python-suite-") as tmp:
        work = args.report or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        results = {m: run(m, args.tests.resolve(), work, args.pytest_args)
                   for m in ("real", "ferrodbc") if not args.only or m in args.only}
    for mode, res in results.items():
        counts = {k: sum(v == k for v in res.values()) for k in ("passed", "failed", "skipped")}
        print(f"mssql-python tests, {mode}: {counts['passed']} passed, {counts['failed']} failed, "
              f"{counts['skipped']} skipped")
    if len(results) == 2:
        real, ours = results["real"], results["ferrodbc"]
        behind = sorted(t for t, v in real.items() if v == "passed" and ours.get(t) != "passed")
        ahead = sum(v == "passed" and real.get(t) != "passed" for t, v in ours.items())
        passed_real = sum(v == "passed" for v in real.values())
        print(f"ferrodbc passes {passed_real - len(behind)} of the {passed_real} tests real mssql-python "
              f"passes ({(passed_real - len(behind)) / max(passed_real, 1):.1%}); {ahead} more that it fails")
        for t in behind:
            print(f"  behind: {t}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
