"""`ci`: `drivers --quick` for .ci/run. Prints the report; the exit status reflects only errors
and wrong results of ferrodbc and the native floor, never timings. Other drivers' failures are
findings about them, reported but not fatal."""

from __future__ import annotations

import argparse

from . import drivers_cmd


def add_arguments(ap: argparse.ArgumentParser) -> None:
    drivers_cmd.add_arguments(ap)


def main(args: argparse.Namespace) -> int:
    args.quick = True
    return drivers_cmd.main(args, stem="ci-drivers")
