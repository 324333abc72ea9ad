"""`statechart runs list|show|verify|work|serve --store URL`: the runs kept in a run store
(docs/runs.md). This module holds the command line and what the actions share (the store
opened as it must exist, the spec checked and compiled); each action is a module of its own:
`list` (statechart.cli.runs_list), `show` (runs_show), `verify` (runs_verify) and `work`
(runs_work), which fires the runs' due timers, and `serve` (runs_serve), the run console.

`list` and `show` print their product on stdout (a table or JSON); `verify` reports like
`check` (`--format full|concise|json|github|sarif`, exit 0 ok, 1 findings that are errors).
Every action exits 2 on a usage error (a store or spec that does not exist, a file that is
not a run store, an unknown run id or state) and 1 when a spec has errors or a stored run
cannot be read. The commands only read: a SQLite store is looked at read-only before it is
opened, because opening creates the tables of a new store.

A spec's Run class is compiled in memory (`statechart.codegen.in_memory`): nothing is written.
"""

from __future__ import annotations

import argparse
import datetime
import sqlite3
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from statechart.cli import add_report_arguments, colour, missing_paths, runs_serve, runs_work
from statechart.report import REPORTERS, concise, one_line
from statechart_runtime.errors import StatechartError


class Usage(StatechartError):
    """A mistake on the command line (exit 2)."""


class Failure(StatechartError):
    """The command line was fine, the work failed: a spec with errors, a record (exit 1)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    p = actions.add_parser("list", help="the stored runs: id, spec, status, active states, "
                           "revision, last transition", description="The stored runs, "
                           "sorted by id.")
    _store_argument(p)
    p.add_argument("--spec", metavar="SPEC", help="only runs of this spec (needed by --tag; "
                   "checks the names given to --status and --state)")
    p.add_argument("--status", metavar="STATUS", help="only runs whose record reports STATUS "
                   "(the spec's status vocabulary: its `status:` names, and the top-level "
                   "states that name none)")
    p.add_argument("--state", metavar="STATE", help="only runs in which STATE is active")
    p.add_argument("--tag", metavar="TAG", help="only runs in a state tagged TAG (needs --spec)")
    p.add_argument("--due", metavar="BEFORE", nargs="?", const=_ANY_TIME, type=_due_before,
                   help="only runs with an armed timer, sorted by when it is due; with BEFORE "
                   "(an RFC 3339 time, or `now`) only those due by then")
    p.add_argument("--format", choices=("text", "json", "table"), default="text",
                   help="output format, as `runs show`: text (a table) or json (default: "
                        "text; `table` is its old name)")

    p = actions.add_parser("show", help="one run: state, context, history, diagram",
                           description="One stored run: its state, context (record fields) "
                           "and history; --diagram draws the spec with its states marked.")
    p.add_argument("run_id", metavar="RUN_ID")
    _store_argument(p)
    p.add_argument("--spec", metavar="SPEC", help="the run's spec file (default: the spec of "
                   "the run's name under the project configuration's `specs`)")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="output format (default: text)")
    p.add_argument("--diagram", metavar="PATH", help="write the diagram with the run's active "
                   "states marked: .svg, .png, .dot or .mmd (Mermaid); `-` prints Mermaid "
                   "after the run")

    p = actions.add_parser("verify", help="replay every stored run against the spec (and a "
                           "proposed new version of it)", description="Replay every stored "
                           "run of SPEC against it; with --spec-new, also report the runs the "
                           "new version would strand or could not replay. Exit 0: no problems; "
                           "1: problems (or a spec with errors); 2: usage.")
    _store_argument(p)
    p.add_argument("--spec", metavar="SPEC", required=True, help="the spec in force")
    p.add_argument("--spec-new", "--against", dest="spec_new", metavar="NEW",
                   help="a proposed new version of SPEC: which stored runs would it break?")
    p.add_argument("--format", choices=list(REPORTERS), default=None,
                   help="output format, as `check` (default: full; `github` in GitHub "
                   "Actions; env STATECHART_OUTPUT_FORMAT)")
    add_report_arguments(p)
    colour.add_argument(p)
    runs_work.add_arguments(actions, _store_argument)
    runs_serve.add_arguments(actions, _store_argument)


# `--due` without a time: every run with an armed timer.
_ANY_TIME = datetime.datetime.max.replace(tzinfo=datetime.UTC)


def _due_before(text: str) -> Any:
    from statechart_runtime.chart.values import parse_time

    if text == "now":
        return datetime.datetime.now(datetime.UTC)
    try:
        return parse_time("--due", text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a time with an offset (2025-01-01T12:00:00Z) or `now`, got {text!r}"
        ) from None


def _store_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--store", metavar="URL", required=True,
                        help="the run store: a SQLite file (a path, or sqlite:///PATH) or a "
                             "PostgreSQL database (postgresql://USER@HOST:PORT/DB; needs the "
                             "`postgres` extra)")


def run(args: argparse.Namespace) -> int:
    from statechart.cli import runs_list, runs_show, runs_verify
    from statechart_runtime.errors import StoreError

    action = {"list": runs_list.list_runs, "show": runs_show.show_run,
              "verify": runs_verify.verify_runs, "work": runs_work.work,
              "serve": runs_serve.serve}[args.action]
    try:
        return action(args)
    except _Reported as exc:
        return exc.code
    except Usage as exc:
        _say(args, str(exc))
        return 2
    except (Failure, StoreError) as exc:
        _say(args, str(exc))
        return 1
    except sqlite3.Error as exc:  # a locked, damaged or unreadable database
        _say(args, f"the store {location(args.store)}: {exc}")
        return 1


def _say(args: argparse.Namespace, message: str) -> None:
    print(f"statechart runs {args.action}: {one_line(message)}", file=sys.stderr)


# -- the store and the spec ------------------------------------------------------------------

def sqlite_path(url: str) -> str | None:
    """The database file of a SQLite store URL (as `open_store` reads it), or None for a URL
    of another kind (which `open_store` accepts or refuses itself)."""
    if "://" not in url:
        return url if url and url != ":memory:" else None
    scheme, _, rest = url.partition("://")
    if scheme != "sqlite" or not rest.startswith("/") or rest == "/":
        return None
    return rest[1:] or None


def location(url: str) -> str:
    """Where findings about the store's runs point, and how messages name it: its database
    file, or its URL without a password."""
    path = sqlite_path(url)
    if path is not None:
        return path
    parts = urlsplit(url)
    if parts.password is not None:
        host = parts.netloc.rpartition("@")[2]
        parts = parts._replace(netloc=f"{parts.username}:***@{host}")
    return urlunsplit(parts)


def open_existing(url: str, *, read_only: bool = True) -> Any:
    """The store at `url`, which must exist, opened read-only unless said otherwise (a
    replica, a backup, a read-only mount; no wait for a writer's lock): a SQLite file is
    first looked at read-only, since a writable `open_store` turns any file (even a missing
    one) into a new, empty store."""
    from statechart_runtime.errors import ReadOnlyStore, StoreUnavailable
    from statechart_runtime.store import UNREACHABLE_HINT, UPGRADE_HINT, open_store

    path = sqlite_path(url)
    if path is not None:
        if not Path(path).exists():
            raise Usage(f"no such store: {url}")
        if Path(path).is_dir():
            raise Usage(f"a folder, not a store: {url}")
        if not read_only:  # a writable open_store would make any file a store: look first
            try:
                with open_store(url, read_only=True):
                    pass
            except ReadOnlyStore:  # a store, only not readable as it is: the open below is
                pass
            except StatechartError as exc:
                raise Usage(str(exc)) from None
    try:
        return open_store(url, read_only=read_only)
    except sqlite3.Error as exc:
        raise Failure(f"cannot open the store {location(url)}: {exc}") from None
    except StoreUnavailable as exc:  # a server away: not a usage error, worth repeating
        raise Failure(str(exc).replace(
            UNREACHABLE_HINT, "is the server running? the command can be repeated")) from None
    except ReadOnlyStore as exc:  # the runtime's words are for a Python caller
        raise Usage(str(exc).replace(
            UPGRADE_HINT, "run `statechart runs work --store URL --spec SPEC --once` once to "
            "upgrade it (its writable open does)")) from None
    except StatechartError as exc:  # an unsupported or malformed URL, a newer schema
        raise Usage(str(exc)) from None


def checked_spec(path: str, args: argparse.Namespace) -> Any:
    """The checked model of the spec at `path`; Usage when it does not exist, Failure (its
    errors on stderr) when it has errors."""
    from statechart.linter import check_file

    if missing_paths(f"runs {args.action}", [path], files=True):
        raise _Reported(2)
    result = check_file(path)
    if result.errors or result.spec is None:
        sys.stderr.write(concise(result.errors, {},
                                 colour=colour.enabled(getattr(args, "color", "auto"),
                                                       sys.stderr)))
        raise Failure(f"{path} has errors; fix them first (`statechart check` explains each)")
    return result.spec


class _Reported(StatechartError):
    """Already said on stderr; exit with `code`."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def compiled(spec: Any) -> type[Any]:
    from statechart.codegen import CodegenError
    from statechart.codegen.in_memory import run_class

    try:
        return run_class(spec)
    except CodegenError as exc:
        raise Failure(f"{spec.path} cannot be compiled: {exc}") from None


def project_specs(names: set[str]) -> dict[str, Any]:
    """The checked specs of `names` among the project configuration's spec files (files
    `NAME.yaml` first, each checked once): a spec with errors, or none, is left out."""
    from statechart.config import ConfigError, load
    from statechart.linter import check_file, spec_files

    try:
        config = load()
    except ConfigError as exc:
        raise Usage(str(exc)) from None
    paths = [p for p in config.spec_paths() if Path(p).exists()]
    found: dict[str, Any] = {}
    for file in sorted(spec_files(paths), key=lambda f: Path(f).stem not in names):
        if found.keys() >= names:
            break
        result = check_file(file, config)
        if result.spec is not None and result.spec.name in names and not result.errors:
            found.setdefault(result.spec.name, result.spec)
    return found


def time_text(value: Any) -> str:
    """A time as the commands print it: RFC 3339, UTC as `Z`."""
    return str(value.isoformat().replace("+00:00", "Z"))
