"""`statechart render SPEC --format dot|svg|png|mermaid|scxml|xstate [-o FILE|-]`: draw one
spec, or write it as an SCXML document (`statechart.scxml.export`) or an XState v5 machine
config (`statechart.xstate.export`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from statechart.cli import add_config_argument, colour, missing_paths, project_config
from statechart.cli.build import add_layout_arguments
from statechart.model import Spec
from statechart.render.bounds import LayoutBounds
from statechart.report import concise, inert

FORMATS = ("svg", "png", "dot", "mermaid", "scxml", "xstate")
# The formats other engines run: written only for a spec without errors.
MACHINES = {"scxml": "SCXML", "xstate": "An XState config"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("spec", metavar="SPEC", help="the spec file (*.yaml)")
    parser.add_argument("--format", "-f", choices=FORMATS, default="svg",
                        help="output format (default: svg)")
    parser.add_argument("-o", "--output", metavar="FILE", default=None,
                        help="write here; `-` is stdout (default: stdout for text formats, "
                             "SPEC's name with the format's suffix for png)")
    parser.add_argument("--engine", choices=("graphviz-pure", "dot"), default=None,
                        help="layout program for svg/png (default: the configuration's "
                             "`diagrams.engine`, or graphviz-pure, installed with this tool; "
                             "`dot` is a system Graphviz)")
    parser.add_argument("--highlight", metavar="STATE|RECORD", action="append", default=[],
                        help="mark STATE and its ancestors as the current configuration "
                             "(repeatable); a path to a run record file (JSON) works too")
    parser.add_argument("--record", metavar="FILE", default=None,
                        help="mark the configuration stored in a run record (JSON with "
                             "`configuration` or `status`)")
    add_layout_arguments(parser, timeout="--timeout")
    add_config_argument(parser)
    colour.add_argument(parser)


def _error(message: str, code: int = 2) -> int:
    """Print the message; return the exit code: 2 for a usage error (the default), 1 when the
    command line was fine but the work failed (the layout)."""
    # Messages quote state names from run records and the command line, and a layout
    # program's own error text: shown the way `check` shows spec text, never sent raw.
    print(f"statechart render: {inert(message)}", file=sys.stderr)
    return code


def run(args: argparse.Namespace) -> int:
    from statechart import outputs, writes
    from statechart.linter import check_file
    from statechart.render import bounds, layout
    from statechart.render.highlight import HighlightError, active_configuration, names_from_record
    from statechart.scxml.export import ExportError

    if missing_paths("render", [args.spec, *([args.record] if args.record else [])],
                     files=True):
        return 2
    config = project_config("render", args, [args.spec])
    if config is None:
        return 2
    result = check_file(args.spec, config)
    draft = None
    if result.errors:
        # A spec with errors is drawn when its model could be built (to see why a state is
        # unreachable, say), marked as a work in progress; only a file that could not be read
        # as a spec, or has no state to draw, is refused.
        sys.stderr.write(concise(result.errors, {},
                                 colour=colour.enabled(args.color, sys.stderr)))
        count = f"{len(result.errors)} error{'s' * (len(result.errors) != 1)}"
        if result.spec is None or not result.spec.states:
            print(f"statechart render: {inert(args.spec)} has {count} and cannot be drawn; fix "
                  "them first (`statechart check` explains each)", file=sys.stderr)
            return 1
        if args.format in MACHINES:  # for other engines to run: not a drawing to look at
            print(f"statechart render: {inert(args.spec)} has {count}; "
                  f"{MACHINES[args.format]} is written only for a spec without errors "
                  "(`statechart check` explains each)", file=sys.stderr)
            return 1
        draft = f"{count}; `statechart check` explains each"
        print(f"statechart render: {inert(args.spec)} has {count}; drawn as a work in "
              "progress (`statechart check` explains each)", file=sys.stderr)
    spec = result.spec
    assert spec is not None
    try:
        names: list[str] = []
        for value in args.highlight:
            # A state name, or a run record file when no state has that name.
            is_record = value not in spec.states and Path(value).is_file()
            names += names_from_record(value) if is_record else [value]
        if args.record:
            names += names_from_record(args.record)
        active = active_configuration(spec, names)
    except HighlightError as exc:
        return _error(str(exc))

    try:
        with bounds.using(args.layout_max_transitions, args.timeout, config) as limits, \
                outputs.using(config):  # the SVG's header names the spec from the root
            data = render_bytes(spec, args.format, active, args.engine or limits.engine, limits,
                                draft)
    except bounds.BoundsError as exc:
        return _error(str(exc))
    except ExportError as exc:
        return _error(str(exc), 1)
    except layout.LayoutError as exc:  # timed out, out of memory, no program: not usage
        return _error(str(exc), 1)
    output = args.output
    if output is None:
        output = "-" if args.format != "png" else str(Path(args.spec).with_suffix(".png").name)
    if output == "-":
        if args.format == "png" and sys.stdout.isatty():
            return _error("refusing to write PNG bytes to a terminal; use -o FILE")
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return 0
    try:
        writes.write_atomic(Path(output), data)  # the old file, or the new one whole
    except writes.WriteError as exc:
        return _error(str(exc), 1)
    print(f"wrote {inert(output)}", file=sys.stderr)
    return 0


def render_bytes(spec: Spec, fmt: str, active: frozenset[str], engine: str,
                 limits: LayoutBounds, draft: str | None = None) -> bytes:
    """The output bytes. DOT is the text that svg/png would lay out (the spec's size chooses
    the settings: `statechart.render.bounds`); a spec over the bound gets DOT and Mermaid
    only. `draft`: the spec has errors, drawn as a work in progress (said in the picture)."""
    from statechart.outputs import header_lines, spec_display_path
    from statechart.render import dot, labels, layout, mermaid

    if fmt == "scxml":
        from statechart.scxml.export import scxml_text

        lines = [*header_lines(spec)[:2],
                 f"Regenerate with: statechart render {spec_display_path(spec)} -f scxml"]
        return scxml_text(spec, lines).encode("utf-8")
    if fmt == "xstate":
        from statechart.xstate.export import config_text

        lines = [*header_lines(spec)[:2],
                 f"Regenerate with: statechart render {spec_display_path(spec)} -f xstate"]
        return config_text(spec, lines).encode("utf-8")
    if fmt == "mermaid":
        return mermaid.mermaid_source(spec, active, draft=draft).encode("utf-8")
    settings = limits.settings(spec)
    source = dot.dot_source(spec, active, fast=settings != "full", draft=draft)
    if fmt == "dot":
        return source.encode("utf-8")
    if settings is None:
        raise layout.LayoutError(
            f"{limits.omitted(spec)}: its layout could take minutes and gigabytes; use "
            "--format dot or mermaid, or raise the bound with --layout-max-transitions N")
    picture = layout.layout(source, fmt, engine=engine, timeout=limits.timeout,
                            max_memory=limits.max_memory)
    if fmt == "svg":
        return layout.with_svg_header(picture, labels.header(header_lines(spec), "svg"))
    return picture
