"""`statechart check [PATH ...]`: report every problem of every spec, then pick the exit code."""

from __future__ import annotations

import argparse
import os
import sys

from statechart.cli import add_config_argument, colour, missing_paths, project_config
from statechart.report import REPORTERS, inert


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", metavar="PATH",
                        help="spec files or folders to search for *.yaml (default: the "
                             "configuration's `specs`, or specs/)")
    parser.add_argument("--format", choices=list(REPORTERS), default=None,
                        help="output format (default: full; `github` when run in GitHub "
                             "Actions; env STATECHART_OUTPUT_FORMAT)")
    parser.add_argument("--strict", action="store_true",
                        help="warnings fail the check too (exit 1)")
    add_config_argument(parser)
    colour.add_argument(parser)


def output_format(requested: str | None) -> str:
    if requested:
        return requested
    env = os.environ.get("STATECHART_OUTPUT_FORMAT")
    if env in REPORTERS:
        return env
    if os.environ.get("GITHUB_ACTIONS") == "true" and os.environ.get("GITHUB_WORKFLOW"):
        return "github"
    return "full"


def run(args: argparse.Namespace) -> int:
    from statechart.linter import FileResult, check_file, spec_files
    from statechart.spec_file import SpecFileError, read_spec

    config = project_config("check", args, args.paths)
    if config is None:
        return 2
    paths = args.paths or config.spec_paths()
    if missing_paths("check", paths, config=None if args.paths else config):
        return 2
    results: list[FileResult] = [check_file(file, config) for file in spec_files(paths)]
    if not results:
        print(f"statechart: no spec files (*.yaml, *.yml) under {inert(' '.join(paths))}",
              file=sys.stderr)
        return 2
    # A base's problem is found again through each overlay that extends it: show it once.
    diagnostics = list(dict.fromkeys(d for r in results for d in r.diagnostics))
    fmt = output_format(args.format)
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
    return 1 if errors or (args.strict and warnings) else 0
