"""`statechart new NAME`: add `specs/NAME.yaml` (the configuration's first spec folder), a
minimal spec that checks clean, naming the editor schema when the project has one.

Exit codes: 0 written; 1 the file exists or cannot be written; 2 a name that is not a spec
name, or a configuration that cannot be read.
"""

from __future__ import annotations

import argparse
import sys

from statechart.cli import add_config_argument, project_config
from statechart.report import inert


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", metavar="NAME",
                        help="the spec's name (lowercase, digits, `_`): specs/NAME.yaml")
    add_config_argument(parser)


def run(args: argparse.Namespace) -> int:
    from statechart import names, writes
    from statechart.scaffold import ScaffoldError, spec_file

    config = project_config("new", args, [])
    if config is None:
        return 2
    try:
        rel, data = spec_file(config, args.name)
        writes.write_atomic(config.root / rel, data)
    except ScaffoldError as exc:
        bad_name = not names.SPEC_NAME.match(args.name) or \
            args.name in names.RESERVED_SPEC_NAMES
        print(f"statechart new: {inert(str(exc))}", file=sys.stderr)
        return 2 if bad_name else 1
    except writes.WriteError as exc:
        print(f"statechart new: {inert(str(exc))}", file=sys.stderr)
        return 1
    print(f"created {inert(rel)}")
    return 0
