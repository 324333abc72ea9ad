"""`statechart paths SPEC`: event sequences from a new run that cover the spec.

A small set of paths that together take every reachable transition (`--cover transitions`,
the default), enter every reachable state (`states`) or get each answer of every guard
(`guards`); `--to STATE`: the shortest path to STATE. Computed by
`statechart_runtime.testing.paths` on the spec's tables, built in memory as the generated
module's (`codegen.spec_tables`: nothing is built, no class is compiled). stdout is the
product (text, JSON, or a pytest module); a spec's problems go to stderr. Exit codes: 0, 1
(the spec has errors, or the file cannot be written), 2 (usage).
"""

from __future__ import annotations

import argparse
import atexit
import gc
import sys
from pathlib import Path, PurePosixPath

from statechart.cli import add_config_argument, colour, missing_paths, project_config
from statechart.report import concise, inert

FORMATS = ("text", "json", "pytest")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("spec", metavar="SPEC", help="a spec file")
    parser.add_argument("--cover", choices=("transitions", "states", "guards"),
                        default="transitions",
                        help="what the paths must cover together (default: transitions)")
    parser.add_argument("--to", metavar="STATE",
                        help="instead: the shortest path from a new run to STATE")
    parser.add_argument("--format", choices=FORMATS, default="text",
                        help="text (default), json, or pytest: a test module that drives the "
                             "generated class along each path")
    parser.add_argument("--module", metavar="NAME",
                        help="pytest: the generated module to import (default: from the "
                             "project's code folder, `generated.NAME`)")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="write to FILE (atomically) instead of stdout")
    parser.add_argument("--max-configurations", type=int, default=None, metavar="N",
                        help="stop exploring after N configurations (default: 20000)")
    add_config_argument(parser)
    colour.add_argument(parser)


def run(args: argparse.Namespace) -> int:
    from statechart import outputs, paths_output
    from statechart.codegen.spec_tables import spec_tables
    from statechart.linter import check_file
    from statechart_runtime import testing
    from statechart_runtime.errors import MacrostepLoop

    if missing_paths("paths", [args.spec], files=True):
        return 2
    # The process ends after the command: the collection Python makes at exit would scan
    # the objects the model, the tables and the explored steps left (a few hundred
    # thousand at 500 states, about 10 ms), none of which needs a finalizer; the memory
    # goes back to the system with the process. Registered once, however many commands an
    # in-process caller runs.
    atexit.unregister(gc.disable)
    atexit.register(gc.disable)
    config = project_config("paths", args, [args.spec])
    if config is None:
        return 2
    result = check_file(args.spec, config)
    if result.errors or result.spec is None:
        sys.stderr.write(concise(result.errors, {},
                                 colour=colour.enabled(args.color, sys.stderr)))
        print(f"statechart paths: {inert(args.spec)} has errors; fix them first "
              "(`statechart check` explains each)", file=sys.stderr)
        return 1
    spec = result.spec
    if args.to is not None and args.to not in spec.states:
        print(f"statechart paths: `{inert(args.to)}` is not a state of `{spec.name}`",
              file=sys.stderr)
        return 2
    limit = testing.MAX_CONFIGURATIONS if args.max_configurations is None \
        else args.max_configurations
    if limit < 1:
        print("statechart paths: --max-configurations must be at least 1", file=sys.stderr)
        return 2
    try:
        found = testing.paths(spec_tables(spec), args.cover, to=args.to,
                              max_configurations=limit)
    except MacrostepLoop as exc:  # a new run's eventless steps, every guard saying yes
        print(f"statechart paths: a new run of `{spec.name}` cannot start with every guard "
              f"saying yes, as paths start: {inert(str(exc))}", file=sys.stderr)
        return 1
    with outputs.using(config):  # file names relative to the project root
        if args.format == "json":
            product = paths_output.as_json(spec, found)
        elif args.format == "pytest":
            module = args.module or ".".join(
                [*PurePosixPath(outputs.folder("code")).parts, spec.name])
            command = " ".join(["statechart paths", outputs.spec_display_path(spec),
                                *(["--cover", args.cover] if args.cover != "transitions"
                                  else []), *(["--to", args.to] if args.to else []),
                                "--format pytest"])
            product = paths_output.pytest_module(spec, found, module, command)
        else:
            product = paths_output.text(spec, found)
    if args.output is None:
        sys.stdout.write(product)
        return 0
    from statechart.writes import WriteError, write_atomic  # (tempfile: only for a file)

    try:
        write_atomic(Path(args.output), product.encode("utf-8"))
    except WriteError as exc:
        print(f"statechart paths: {inert(str(exc))}", file=sys.stderr)
        return 1
    print(f"wrote {inert(args.output)}", file=sys.stderr)
    return 0
