"""`statechart diff OLD NEW` / `statechart diff --against GIT_REF [PATH ...]` /
`statechart diff --base OVERLAY`.

When NEW is an overlay that extends OLD (or with `--base OVERLAY`, which compares an overlay
with its base), the diff shows what the overlay changes; the overlay's own name and version
are not changes (see `diff_specs(overlay=True)`). `--base` and `--against` do not combine (a
usage error that says which to use): one compares an overlay with its base, the other each
spec with its own past.

Lists every change between spec versions as breaking (error) or safe (warning) for stored runs
and callers, with the reporters of `check`. Exit 0: nothing breaking; 1: something breaking, or
a spec that does not pass `check`'s errors; 2: usage (wrong arguments, unknown git ref, a PATH
that does not exist: with --against, one that exists neither here nor at the ref).

This module only parses: the work is in `statechart.cli.diff_command`, imported by `run`.
"""

from __future__ import annotations

import argparse

from statechart.cli import add_config_argument, add_report_arguments, colour
from statechart.report import REPORTERS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", metavar="PATH",
                        help="OLD NEW; with --against: spec files or folders to compare "
                             "(default: the configuration's `specs`, or specs/)")
    parser.add_argument("--against", metavar="GIT_REF",
                        help="compare every spec changed since GIT_REF with its text there "
                             "(working tree against the ref, as `git diff GIT_REF`)")
    parser.add_argument("--base", metavar="OVERLAY",
                        help="compare the overlay OVERLAY with the spec it extends: what it "
                             "changes, breaking or safe (not with --against)")
    # The diff's reporters are `check`'s (its SARIF one also lists the change kinds).
    parser.add_argument("--format", choices=list(REPORTERS), default=None,
                        help="output format (default: full; `github` in GitHub Actions; "
                             "env STATECHART_OUTPUT_FORMAT)")
    add_report_arguments(parser)
    add_config_argument(parser)
    colour.add_argument(parser)


def run(args: argparse.Namespace) -> int:
    from statechart.cli.diff_command import run as compare

    return compare(args)
