"""Run mssql-django's test app (``manage.py test testapp`` of its checkout) and record each
test's outcome; the result is one JSON object on the last line of stdout. Run by
eng/suites/django_suite.py --testapp DIR with DIR as the working directory (where manage.py and
testapp/ are); FERRODBC_INSTALL_AS=pyodbc installs ferrodbc under that name first.
"""

from __future__ import annotations

import json
import os
import sys
import unittest

sys.path.insert(0, os.getcwd())
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ["DJANGO_SETTINGS_MODULE"] = "testapp_settings"

_as = os.environ.get("FERRODBC_INSTALL_AS", "")
if _as:
    import ferrodbc

    getattr(ferrodbc, f"install_as_{_as}")()

import django  # noqa: E402

django.setup()

from django.test.runner import DiscoverRunner  # noqa: E402

OUTCOMES: dict[str, str] = {}


def _first_line(test: unittest.TestCase, err: object) -> str:
    exc = err[1] if isinstance(err, tuple) else err
    text = f"{type(exc).__name__}: {exc}".strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


class RecordingResult(unittest.TextTestResult):
    def addSuccess(self, test):
        super().addSuccess(test)
        OUTCOMES.setdefault(test.id(), "passed")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        OUTCOMES[test.id()] = "failed: " + _first_line(test, err)

    def addError(self, test, err):
        super().addError(test, err)
        OUTCOMES[test.id()] = "error: " + _first_line(test, err)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        OUTCOMES[test.id()] = "skipped"

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        OUTCOMES[test.id()] = "skipped"

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        OUTCOMES[test.id()] = "failed: unexpected success"

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            kind = "failed" if issubclass(err[0], test.failureException) else "error"
            OUTCOMES[test.id()] = f"{kind}: {subtest.id()[len(test.id()):].strip()} " + _first_line(test, err)


class RecordingRunner(DiscoverRunner):
    def get_resultclass(self):
        return RecordingResult


def main() -> int:
    labels = sys.argv[1:] or ["testapp"]
    runner = RecordingRunner(verbosity=1, interactive=False, keepdb=True)
    failures = runner.run_tests(labels)
    print(json.dumps({"tests": OUTCOMES, "failures": failures}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
