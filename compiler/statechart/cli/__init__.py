"""The command line: parses arguments, calls the core, prints, and picks the exit code.

Subcommands are modules in this package, registered in `COMMANDS`; each has `HELP`,
`add_arguments(parser)` and `run(args) -> int`. Exit codes: 0 ok, 1 problems found,
2 usage error (argparse's own code), which includes a PATH that does not exist
(`missing_paths`, the same in every command and output format). An OS error is a message on
stderr and exit 1, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

from statechart import __version__
from statechart.report import inert

COMMANDS: dict[str, str] = {
    "check": "statechart.cli.check",
    "build": "statechart.cli.build",
    "render": "statechart.cli.render",
    "schema": "statechart.cli.schema",
    "rule": "statechart.cli.rule",
    "diff": "statechart.cli.diff",
    "resolve": "statechart.cli.resolve",
}


def missing_paths(command: str, paths: Iterable[str], *, files: bool = False,
                  found_elsewhere: Callable[[str], bool] | None = None) -> bool:
    """Print a usage error on stderr for each PATH that does not exist (or, with `files`, is
    a folder where a spec file is needed); True when there was one: the command then exits 2
    having done nothing. A mistyped path is a mistake on the command line, not a finding about
    a spec, so it is never a diagnostic in the output format and never exit 1.

    `found_elsewhere(path)` is True for a path that is missing here but not a mistake (`diff
    --against REF`: a spec deleted since REF)."""
    bad = False
    for path in paths:
        if not Path(path).exists():
            if found_elsewhere is not None and found_elsewhere(path):
                continue
            reason = "no such file or folder"
        elif files and Path(path).is_dir():
            reason = "a folder, not a spec file"
        else:
            continue
        print(f"statechart {command}: {reason}: {inert(path)}", file=sys.stderr)
        bad = True
    return bad


def _parser(modules: dict[str, object]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="statechart",
        description="Validate, render and compile YAML statechart specs.",
    )
    parser.add_argument("--version", action="version", version=f"statechart {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, module in modules.items():
        sub_parser = sub.add_parser(name, help=module.HELP, description=module.HELP)  # type: ignore[attr-defined]
        module.add_arguments(sub_parser)  # type: ignore[attr-defined]
    return parser


def main(argv: list[str] | None = None) -> int:
    modules: dict[str, object] = {}
    for name, path in COMMANDS.items():
        try:
            modules[name] = importlib.import_module(path)
        except ImportError:  # a command whose module is not part of this installation
            continue
    args = _parser(modules).parse_args(argv)
    try:
        return int(modules[args.command].run(args))  # type: ignore[attr-defined]
    except KeyboardInterrupt:
        print("statechart: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:
        # The last line of defence: each command turns the OS errors it expects into its own
        # message; one it did not expect is still a message, naming the path, not a traceback.
        where = f": {inert(os.fsdecode(exc.filename))}" if exc.filename else ""
        print(f"statechart {args.command}: {exc.strerror or exc}{where}; check the path, its "
              "permissions and the free space, then run the command again", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
