"""`statechart check [PATH ...]`: report every problem of every spec, then pick the exit code."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from statechart.cli import (
    add_config_argument,
    add_report_arguments,
    colour,
    missing_paths,
    project_config,
)
from statechart.report import REPORTERS, inert

if TYPE_CHECKING:
    from statechart.config import Config


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", metavar="PATH",
                        help="spec files or folders to search for *.yaml (default: the "
                             "configuration's `specs`, or specs/)")
    parser.add_argument("--format", choices=list(REPORTERS), default=None,
                        help="output format (default: full; `github` when run in GitHub "
                             "Actions; env STATECHART_OUTPUT_FORMAT)")
    parser.add_argument("--strict", action="store_true",
                        help="warnings fail the check too (exit 1)")
    add_report_arguments(parser)
    add_config_argument(parser)
    colour.add_argument(parser)


def output_format(requested: str | None) -> str:
    """`--format`, else `STATECHART_OUTPUT_FORMAT` (a value that is no format is a usage
    error, not a silent fallback), else `github` in GitHub Actions, else `full`."""
    if requested:
        return requested
    env = os.environ.get("STATECHART_OUTPUT_FORMAT")
    if env in REPORTERS:
        return env
    if env:
        from statechart.cli import UsageError
        from statechart.report import inert

        raise UsageError(f"STATECHART_OUTPUT_FORMAT={inert(env)!r} is not an output format "
                         f"(one of: {', '.join(REPORTERS)}); set one, or unset it")
    if os.environ.get("GITHUB_ACTIONS") == "true" and os.environ.get("GITHUB_WORKFLOW"):
        return "github"
    return "full"


def run(args: argparse.Namespace) -> int:
    from statechart.linter import FileResult, check_file, spec_files, unique
    from statechart.overlay import extending
    from statechart.spec_file import SpecFileError, read_spec

    fmt = output_format(args.format)  # a bad STATECHART_OUTPUT_FORMAT: before any work
    config = project_config("check", args, args.paths)
    if config is None:
        return 2
    paths = args.paths or config.spec_paths()
    if missing_paths("check", paths, config=None if args.paths else config):
        return 2
    files = list(spec_files(paths))
    if not files:
        print(f"statechart: no spec files (*.yaml, *.yml) under {inert(' '.join(paths))}",
              file=sys.stderr)
        return 2
    # A change to a base can break the overlays that extend it: `check BASE` (the pre-commit
    # hook names only the files that changed) checks them too, and says so.
    overlays = extending(files, _neighbours(paths, config))
    results: list[FileResult] = [check_file(file, config) for file in [*files, *overlays]]
    diagnostics = unique(results)
    if fmt in ("full", "concise"):  # the machine formats carry findings only
        for overlay, base in overlays.items():
            print(f"statechart check: also checked {inert(str(overlay))}: it extends "
                  f"{inert(str(base))}")
    sources: dict[str, str] = {}
    if fmt == "full":
        # Every file a problem points into: an overlay's problems can sit in its base.
        for file in dict.fromkeys(d.span.file for d in diagnostics):
            try:
                # utf-8-sig: positions are counted after a BOM, so the snippet must drop it too
                # read as the checker read it: a file it refused is not read for a snippet
                sources[file] = read_spec(file).decode("utf-8-sig", "replace")
            except (OSError, SpecFileError):
                pass
    if fmt == "sarif":  # the one format that also lists what the spec's comments suppressed
        from statechart.report import sarif

        suppressed = list(dict.fromkeys(d for r in results for d in r.suppressed))
        sys.stdout.write(sarif(diagnostics, sources, suppressed))
    else:
        sys.stdout.write(colour.report(REPORTERS, fmt, diagnostics, sources,
                                       colour.enabled(args.color, sys.stdout)))
    errors = sum(d.severity == "error" for d in diagnostics)
    warnings = len(diagnostics) - errors
    if fmt == "full" and not diagnostics:
        print(f"{len(results)} spec{'s' * (len(results) != 1)} checked: no problems.")
    return 1 if (errors or (args.strict and warnings)) and not args.exit_zero else 0


def _neighbours(paths: list[str], config: Config) -> list[Path]:
    """Where an overlay of a spec named on the command line can be: the spec files next to it
    and in the project's spec folders. (A folder on the command line is checked whole.)"""
    from statechart.linter import SPEC_SUFFIXES, spec_files

    named = [Path(p) for p in paths if not Path(p).is_dir()]
    if not named:
        return []
    folders = [p for p in config.spec_paths() if Path(p).is_dir()]
    siblings = [f for p in named for f in sorted(p.parent.iterdir())
                if f.suffix in SPEC_SUFFIXES and f.is_file()]
    return list({f.resolve(): f for f in [*spec_files(folders), *siblings]}.values())
