"""The command line: parses arguments, calls the core, prints, and picks the exit code.

Subcommands are modules in this package, registered in `COMMANDS` with their one-line help;
each has `add_arguments(parser)` and `run(args) -> int`. Only the module of the command that
runs is imported (`--version` and `--help` import none), and each imports the compiler
(YAML, Jinja, the rules) inside `run`, so that `statechart check --help` starts as fast as
argparse does. Exit codes: 0 ok, 1 problems found,
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
from types import ModuleType
from typing import TYPE_CHECKING

from statechart import __version__
from statechart.report import inert
from statechart_runtime.errors import StatechartError

if TYPE_CHECKING:  # imported by the commands that read it: `--version` does not
    from statechart.config import Config

# name -> (module, one-line help). The help is here, not in the module, so that listing the
# commands imports none of them.
COMMANDS: dict[str, tuple[str, str]] = {
    "check": ("statechart.cli.check",
              "check spec files or folders (default: specs/) and report every problem"),
    "build": ("statechart.cli.build",
              "check specs (default: specs/) and write generated/NAME.py, NAME.schema.json and "
              "docs; --check only verifies they are up to date"),
    "render": ("statechart.cli.render",
               "draw a spec as DOT, SVG, PNG or Mermaid (optionally marking a run's current "
               "state), or write it as an SCXML document or an XState machine config"),
    "import": ("statechart.cli.import_scxml",
               "read an SCXML document or an XState machine config (*.json) into a spec "
               "(YAML with comments saying what was mapped); refuse what a spec cannot say"),
    "schema": ("statechart.cli.schema",
               "print the JSON Schema of the spec format (for editors)"),
    "rule": ("statechart.cli.rule",
             "print the documentation of a rule (all rules with --all, a list without ID)"),
    "diff": ("statechart.cli.diff",
             "compare two versions of a spec (or every spec changed since a git ref) and report "
             "each change as breaking or safe for stored runs and callers"),
    "resolve": ("statechart.cli.resolve",
                "print the resolved YAML of a spec that extends another (overlay merged onto "
                "its base)"),
    "init": ("statechart.cli.init",
             "start a project: an example spec, the editor schema, [tool.statechart] in "
             "pyproject.toml and a pre-commit configuration"),
    "new": ("statechart.cli.new", "add a spec: specs/NAME.yaml"),
    "paths": ("statechart.cli.paths",
              "event sequences from a new run that cover every reachable transition (or "
              "state, or guard answer) of a spec, as text, JSON or a pytest module"),
    "runs": ("statechart.cli.runs",
             "the runs in a run store: list them, show one (with its diagram), verify them "
             "against a spec or a proposed new version of it"),
}


def missing_paths(command: str, paths: Iterable[str], *, files: bool = False,
                  found_elsewhere: Callable[[str], bool] | None = None,
                  config: Config | None = None) -> bool:
    """Print a usage error on stderr for each PATH that does not exist (or, with `files`, is
    a folder where a spec file is needed); True when there was one: the command then exits 2
    having done nothing. A mistyped path is a mistake on the command line, not a finding about
    a spec, so it is never a diagnostic in the output format and never exit 1.

    `found_elsewhere(path)` is True for a path that is missing here but not a mistake (`diff
    --against REF`: a spec deleted since REF). `config`: the paths are its defaults, so with
    no configuration file there is no project here, and the message says how to start one."""
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
        hint = ""
        if config is not None and config.file is None:
            hint = (" (no project here: `statechart init` starts one; or name the spec files: "
                    f"`statechart {command} PATH`)")
        print(f"statechart {command}: {reason}: {inert(path)}{hint}", file=sys.stderr)
        bad = True
    return bad


class UsageError(StatechartError):
    """A mistake on the command line (or in the environment that stands in for it, such as
    `STATECHART_OUTPUT_FORMAT`) found while a command runs: `main` prints it, exit 2."""


def add_report_arguments(parser: argparse.ArgumentParser) -> None:
    """What the reporting commands (`check`, `diff`) share with ruff's: where the report goes
    and whether findings fail the command."""
    parser.add_argument("-o", "--output-file", metavar="FILE",
                        help="write the report (what goes to stdout) to FILE instead, "
                             "replacing it whole when the command is done")
    parser.add_argument("--exit-zero", action="store_true",
                        help="exit 0 even when there are errors (2 stays a usage error)")


def add_config_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="FILE",
                        help="the project configuration to use (default: the nearest "
                             "statechart.toml, or pyproject.toml with [tool.statechart], in "
                             "this folder or above; see docs/configuration.md)")


def project_config(command: str, args: argparse.Namespace, paths: list[str]) -> Config | None:
    """The configuration of this run (`statechart.config.load`: `--config`, else the nearest
    one above the current directory, else above the first of `paths`), or None after printing
    why it cannot be read: a usage error, the command exits 2."""
    from statechart.config import ConfigError, load

    try:
        return load(args.config, paths)
    except ConfigError as exc:
        print(f"statechart {command}: {inert(str(exc))}", file=sys.stderr)
        return None


def _command_name(argv: list[str]) -> str | None:
    """The command the user named: the first argument that is not an option (the top-level
    options, `--version` and `--help`, take no value)."""
    for arg in argv:
        if arg == "--":
            continue
        if not arg.startswith("-"):
            return arg
    return None


def _parser(name: str | None) -> tuple[argparse.ArgumentParser, ModuleType | None,
                                       argparse.ArgumentParser | None]:
    """The parser, with the arguments of command `name` only (its module imported); every other
    command is listed with its help and no arguments, as it would be parsed only if chosen.
    Also the module and the parser of that command."""
    parser = argparse.ArgumentParser(
        prog="statechart",
        description="Validate, render and compile YAML statechart specs.",
    )
    parser.add_argument("-V", "--version", action="version", version=f"statechart {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    module: ModuleType | None = None
    chosen: argparse.ArgumentParser | None = None
    for command, (path, help_text) in COMMANDS.items():
        sub_parser = sub.add_parser(command, help=help_text, description=help_text)
        if command == name:
            module = importlib.import_module(path)
            module.add_arguments(sub_parser)
            chosen = sub_parser
    return parser, module, chosen


def _innermost(parser: argparse.ArgumentParser,
               args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the (sub)command that was chosen: `runs list`'s, not `runs`'."""
    for action in parser._actions:  # argparse keeps its subparsers nowhere public
        if isinstance(action, argparse._SubParsersAction):
            chosen = getattr(args, action.dest, None)
            if chosen in action.choices:
                return _innermost(action.choices[chosen], args)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    name = _command_name(argv)
    parser, module, chosen = _parser(name)
    if name is not None and chosen is None:
        # As ruff and git do: a mistyped command gets the closest one (difflib, as
        # `build_model.did_you_mean`, which would import the compiler to say it).
        import difflib

        close = difflib.get_close_matches(name, list(COMMANDS), n=1, cutoff=0.6)
        parser.print_usage(sys.stderr)
        print(f"statechart: error: unknown command `{inert(name)}`"
              + (f"; did you mean `{close[0]}`?" if close else
                 f" (commands: {', '.join(COMMANDS)})"), file=sys.stderr)
        return 2
    args, unknown = parser.parse_known_args(argv)
    assert module is not None and chosen is not None  # argparse exits without a command
    if unknown:  # with the usage of the command they were given to, not the top level's
        _innermost(chosen, args).error(f"unrecognized arguments: {' '.join(unknown)}")
    try:
        output_file = getattr(args, "output_file", None)
        if output_file:
            return _to_file(module, args, output_file)
        return int(module.run(args))
    except UsageError as exc:
        print(f"statechart {args.command}: {inert(str(exc))}", file=sys.stderr)
        return 2
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


def _to_file(module: ModuleType, args: argparse.Namespace, path: str) -> int:
    """Run the command with its stdout (the report) written to `path`, whole and at once:
    a reader never sees half a report, and a usage error (exit 2: nothing was checked) or a
    run that stops with an exception leaves the old file."""
    import io
    from contextlib import redirect_stdout

    from statechart import writes

    buffer = io.StringIO()
    with redirect_stdout(buffer):
        code = int(module.run(args))
    if code == 2:
        return code
    try:
        writes.write_atomic(Path(path), buffer.getvalue().encode("utf-8"))
    except writes.WriteError as exc:
        print(f"statechart {args.command}: {inert(str(exc))}", file=sys.stderr)
        return 2 if code == 2 else 1
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
