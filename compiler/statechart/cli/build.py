"""`statechart build [PATH ...] [--check]`: generate code, schemas and docs from checked specs.

Exit codes: 0 built (or, with --check, up to date); 1 a spec has errors or a generator cannot
be loaded (nothing written), or an output could not be made (the diagram's layout failed: every
other output is written, that file is left as it was), or the outputs could not be written (a
full disk, a read-only file system, a file where `generated/` should be: the message names the
path and what to do, and no output is changed), or with --check an output is missing, stale,
orphaned or cannot be made; 2 usage (no spec files found, a bad layout setting). Two builds in
one folder take turns: the second says on stderr that it waits. A spec over the layout bound
(`statechart.render.bounds`) is not a failure: its page says why it has no picture.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, TextIO

from statechart.cli import add_config_argument, colour, missing_paths, project_config
from statechart.diagnostics import Diagnostic, Span
from statechart.report import REPORTERS, concise, full, inert, paint

if TYPE_CHECKING:  # imported by `run`: `statechart build --help` imports no compiler
    from statechart import build


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", metavar="PATH",
                        help="spec files or folders to search for *.yaml (default: the "
                             "configuration's `specs`, or specs/)")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 with a diff when any output is missing, "
                             "stale or orphaned (for CI)")
    parser.add_argument("--full-diff", action="store_true",
                        help="with --check, print every diff in full, missing and orphaned "
                             f"files' content too (default: the first {DIFF_PREVIEW_LINES} "
                             "lines of each stale file's diff)")
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="print only files that change")
    parser.add_argument("--format", choices=list(REPORTERS), default=None,
                        help="how spec errors and (with --check) out-of-date outputs are "
                             "reported, as `check` reports (default: full; `github` in GitHub "
                             "Actions, as annotations; env STATECHART_OUTPUT_FORMAT); with "
                             "json or sarif, stdout carries only that document and the rest "
                             "goes to stderr")
    add_config_argument(parser)
    colour.add_argument(parser)
    add_layout_arguments(parser)


DIFF_PREVIEW_LINES = 20  # per stale file, in `--check` without --full-diff


def _preview(diff: str, limit: int) -> tuple[str, int]:
    """The first `limit` lines of `diff`, and how many lines were left out."""
    lines = diff.splitlines(keepends=True)
    return "".join(lines[:limit]), max(0, len(lines) - limit)


def positive(kind: type[int] | type[float]) -> Callable[[str], float]:
    """An argparse type: a number above zero."""
    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            value = 0
        if value <= 0:
            raise argparse.ArgumentTypeError(f"expected a positive number, not {text!r}")
        return value
    return parse


def add_layout_arguments(parser: argparse.ArgumentParser, timeout: str = "--layout-timeout"
                         ) -> None:
    """The diagram layout's bounds (`statechart.render.bounds`), shared with `render`."""
    from statechart.render import bounds

    parser.add_argument("--layout-max-transitions", type=positive(int), metavar="N",
                        help="lay out no diagram for a spec with more transitions than this "
                             f"(default: ${bounds.ENV_MAX_TRANSITIONS} or "
                             f"{bounds.DEFAULT_MAX_TRANSITIONS}); above "
                             f"{bounds.FULL_MAX_TRANSITIONS}, the fast settings are used")
    parser.add_argument(timeout, type=positive(float), metavar="SECONDS",
                        help="fail when one diagram's layout takes longer than this (default: "
                             f"${bounds.ENV_TIMEOUT} or {bounds.DEFAULT_TIMEOUT:g})")


def _command(args: argparse.Namespace) -> str:
    # The layout bound changes the pages: the command to rerun keeps it.
    bound = [] if args.layout_max_transitions is None else \
        ["--layout-max-transitions", str(args.layout_max_transitions)]
    return "statechart build" + "".join(" " + shlex.quote(p) for p in [*bound, *args.paths])


def run(args: argparse.Namespace) -> int:
    from statechart import build, writes
    from statechart.cli.check import output_format
    from statechart.render import bounds

    fmt = output_format(args.format)
    # The human text (diffs, what was written, the summary); with json or sarif, stdout
    # carries only the document, so the rest goes to stderr.
    human = sys.stderr if fmt in ("json", "sarif") else sys.stdout
    findings: list[Diagnostic] = []  # what the machine formats report, at the end
    code = _run(args, build, writes, bounds, fmt, human, findings)
    if fmt not in ("full", "concise") and code != 2:  # a usage error reports nothing
        sys.stdout.write(REPORTERS[fmt](findings, {}))
    return code


def _run(args: argparse.Namespace, build: ModuleType, writes: ModuleType, bounds: ModuleType,
         fmt: str, human: TextIO, findings: list[Diagnostic]) -> int:
    config = project_config("build", args, args.paths)
    if config is None:
        return 2
    paths = args.paths or config.spec_paths()
    if missing_paths("build", paths, config=None if args.paths else config):
        return 2
    try:
        with bounds.using(args.layout_max_transitions, args.layout_timeout, config):
            p = build.plan(paths, config)
    except bounds.BoundsError as exc:
        print(f"statechart build: {inert(str(exc))}", file=sys.stderr)
        return 2
    if not p.results:
        print(f"statechart: no spec files (*.yaml, *.yml) under {inert(' '.join(paths))}",
              file=sys.stderr)
        return 2
    diagnostics = p.diagnostics
    painted = colour.enabled(args.color, human)
    if not p.ok:
        shown = [d for d in diagnostics if d.severity == "error"]
        if fmt == "full":  # with their help ("did you mean"): the pre-commit hook shows this
            human.write(full(shown, {}, summary=False, colour=painted))
        elif fmt == "concise":
            human.write(concise(shown, {}, colour=painted))
        else:
            findings.extend(shown)
        if fmt in ("full", "concise"):
            _print_problems(p.problems, painted, human)
        else:
            findings.extend(_as_findings(p.problems))
        failing = len({d.span.file for d in shown} | {q.path for q in p.problems})
        print(f"statechart build: {len(shown) + len(p.problems)} error(s) in {failing} "
              "file(s); nothing written", file=human)
        return 1
    for note in p.notes:
        print(f"statechart build: {inert(note)}", file=human)
    unmade = " ".join(inert(q.output or q.path) for q in p.unavailable)
    def waiting() -> None:
        print(f"statechart build: waiting for another build in {inert(str(p.root))} to finish",
              file=sys.stderr, flush=True)

    if args.check:
        changes = build.stale(p, on_wait=waiting)
        cut = False
        for rel, kind, diff in changes:
            # A fresh project misses every output: their whole content is no help in a CI
            # log. By default a missing or orphaned file is only named, a stale one shows the
            # start of its diff; --full-diff shows everything.
            # A stale file says first what changed in the spec's terms; a diagram only
            # that (its text diff is coordinates).
            said = build.change_summary(p, rel) if kind == "stale" else None
            if args.full_diff:
                preview = diff
            elif kind == "stale" and not (said and rel.endswith(".svg")):
                preview, left = _preview(diff, DIFF_PREVIEW_LINES)
                if left:
                    preview += f"... {left} more line(s) of this diff\n"
            else:
                preview = ""
            cut = cut or preview != diff
            print(f"{kind:<9} {rel}", file=human)
            for line in said or ():
                print(f"  {inert(line)}", file=human)
            human.write(colour.unified_diff(preview, painted))
        _print_problems(p.unavailable, painted, human)
        # Located as a spec's findings are: from here (the output's path is from the root).
        findings.extend(Diagnostic(
            "build", "error", f"{rel} is {_WHAT[kind]}",
            Span.point(os.path.relpath(p.root / rel), 1, 1),
            f"run `{_command(args)}` and commit the result") for rel, kind, _ in changes)
        findings.extend(_as_findings(p.unavailable))
        if changes:
            kinds = ", ".join(f"{n} {k}" for k in ("missing", "stale", "orphaned")
                              if (n := sum(c[1] == k for c in changes)))
            print(f"statechart build --check: {len(changes)} output(s) out of date ({kinds}); "
                  f"run `{_command(args)}` and commit the result", file=human)
            if cut:
                print("statechart build --check: diffs shortened; add --full-diff to see them "
                      "in full", file=human)
        if p.unavailable:
            print(f"statechart build --check: could not make, so could not compare: {unmade}",
                  file=human)
        if changes or p.unavailable:
            return 1
        if not args.quiet:
            print(f"statechart build --check: {len(p.files)} output(s) up to date", file=human)
        return 0
    try:
        done = build.apply(p, on_wait=waiting)
    except writes.WriteError as exc:
        print(f"statechart build: {inert(str(exc))}", file=sys.stderr)
        return 1
    for rel, action in done:
        if action != "unchanged" or not args.quiet:
            print(f"{action:<9} {rel}", file=human)
    if p.unavailable:
        # Reported after the writes: the outputs that could be made are written, and the
        # build still fails, so that CI never takes a missing or old picture for a fresh one.
        _print_problems(p.unavailable, painted, human)
        findings.extend(_as_findings(p.unavailable))
        print(f"statechart build: could not make {unmade}; left as it was (every other output "
              "is written)", file=human)
        return 1
    return 0


# What `--check` found, in the words of a finding (`--format json|github|sarif`).
_WHAT = {"missing": "missing: the build would create it",
         "stale": "out of date: it differs from what its spec generates",
         "orphaned": "orphaned: its spec is gone or no longer makes it, the build would "
                     "delete it"}


def _as_findings(problems: list[build.Problem]) -> list[Diagnostic]:
    return [Diagnostic("build", "error", q.message, Span.point(q.output or q.path, 1, 1))
            for q in problems]


def _print_problems(problems: list[build.Problem], painted: bool, stream: TextIO) -> None:
    for problem in problems:
        print(f"{paint(inert(problem.path) + ':', 'location', painted)} "
              f"{paint('error', 'error', painted)}[{paint('build', 'rule', painted)}]: "
              f"{inert(problem.message)}", file=stream)
