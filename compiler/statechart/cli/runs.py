"""`statechart runs list|show|verify|work --store URL`: the runs kept in a run store
(docs/runs.md); `work` (statechart.cli.runs_work) fires their due timers.

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
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from statechart.cli import add_report_arguments, colour, missing_paths, runs_work
from statechart.report import REPORTERS, concise, inert, one_line
from statechart_runtime.errors import StatechartError

# --diagram PATH: the picture's format by the file's suffix.
DIAGRAM_SUFFIXES = {".svg": "svg", ".png": "png", ".dot": "dot", ".gv": "dot",
                    ".mmd": "mermaid", ".mermaid": "mermaid"}


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


# `--due` without a time: every run with an armed timer.
_ANY_TIME = datetime.datetime.max.replace(tzinfo=datetime.UTC)


def _due_before(text: str) -> Any:
    from statechart_runtime.values import parse_time

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
    from statechart_runtime.errors import StoreError

    action = {"list": _list, "show": _show, "verify": _verify,
              "work": runs_work.work}[args.action]
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


def _names(spec: Any, value: str | None, what: str) -> None:
    """Refuse (Usage) a state name the spec does not have."""
    from statechart.build_model import did_you_mean

    if value is None or spec is None:
        return
    if value not in spec.states:
        hint = did_you_mean(value, spec.states)
        raise Usage(f"{what}: no state `{value}` in spec `{spec.name}`"
                    + (f"; {hint}" if hint else ""))


# -- list ------------------------------------------------------------------------------------

def _list(args: argparse.Namespace) -> int:
    spec = checked_spec(args.spec, args) if args.spec else None
    if args.tag and spec is None:
        raise Usage("--tag needs --spec (tags are the spec's, the store does not keep them)")
    _statuses(spec, args.status)
    _names(spec, args.state, "--state")
    tagged: set[str] | None = None
    if args.tag is not None and spec is not None:
        from statechart.build_model import did_you_mean

        tagged = {name for name, state in spec.states.items() if args.tag in state.tags}
        if not tagged:
            tags = {t for state in spec.states.values() for t in state.tags}
            hint = did_you_mean(args.tag, tags)
            raise Usage(f"--tag: no state of spec `{spec.name}` is tagged `{args.tag}`"
                        + (f"; {hint}" if hint else ""))
    with open_existing(args.store) as store:
        runs = store.stored_runs(spec.name if spec is not None else None)
    if spec is not None and (args.status, args.state, tagged) != (None, None, None):
        # In the spec's names, as `find` answers: runs stored at an older version through
        # their migration's renames, runs of a newer version not at all.
        tables = compiled(spec)._sc_spec
        runs = [r for r in runs if _answers(tables, r, args.status, args.state, tagged)]
    else:
        runs = [r for r in runs
                if (args.status is None or r.status == args.status)
                and (args.state is None or args.state in r.states)]
    runs = [r for r in runs
            if args.due is None or (r.next_due is not None and r.next_due <= args.due)]
    if args.due is not None:
        runs.sort(key=lambda r: (r.next_due, r.run_id))
    # The runs' specs, for the states in document order (the store keeps them by name) and
    # the innermost ones in the table: `--spec`, else each found in the project's specs.
    specs = {spec.name: spec} if spec is not None else _project_specs({r.spec for r in runs})
    rows = [{"run_id": r.run_id, "spec": r.spec, "spec_version": r.spec_version,
             "status": r.status, "states": _in_order(specs.get(r.spec), r.states),
             "revision": r.revision, "steps": r.steps,
             "last_transition_at": _time(r.last_transition_at),
             "updated_at": _time(r.updated_at),
             "next_due": _time(r.next_due) if r.next_due else None} for r in runs]
    if args.format == "json":
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    if not rows:
        filtered = args.status or args.state or args.tag or args.due
        print("no stored runs" + (" match" if filtered else ""))
        return 0
    header = ("RUN ID", "SPEC", "STATUS", "STATES", "REVISION", "STEPS", "LAST TRANSITION",
              "NEXT DUE")
    table = [header] + [(r["run_id"], f"{r['spec']} v{r['spec_version']}", r["status"],
                         ",".join(_innermost(specs.get(r["spec"]), r["states"])),
                         str(r["revision"]), str(r["steps"]), r["last_transition_at"],
                         r["next_due"] or "-") for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        print(inert("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True))
                    .rstrip()))
    return 0


def _answers(tables: Any, stored: Any, status: str | None, state: str | None,
             tagged: set[str] | None) -> bool:
    """Whether `store.find` with the Run class of `tables` (a spec version) answers the stored
    run `stored` for these conditions: from its columns at that version, through the
    migration's renames from an older one, never for a newer one."""
    from statechart_runtime import store_versions

    if stored.spec_version > tables.version:
        return False
    if stored.spec_version == tables.version:
        active = frozenset(stored.states)
        return (status is None or stored.status == status) \
            and (state is None or state in active) and (not tagged or bool(tagged & active))
    active = store_versions.current_states(tables, stored.spec_version, stored.states)
    return store_versions.matches(tables, active, status, state,
                                  None if tagged is None else frozenset(tagged))


def _statuses(spec: Any, value: str | None) -> None:
    """Refuse (Usage) a `--status` the spec's records never report."""
    from statechart.build_model import did_you_mean

    if value is None or spec is None:
        return
    vocabulary = spec.statuses() or [n for n, s in spec.states.items() if s.parent is None]
    if value not in vocabulary:
        hint = did_you_mean(value, vocabulary)
        nested = f"; `{value}` is a nested state: use --state" if value in spec.states else ""
        raise Usage(f"--status: spec `{spec.name}` reports no status `{value}` (its statuses: "
                    f"{', '.join(vocabulary)}){nested}" + (f"; {hint}" if hint and not nested
                                                           else ""))


def _project_specs(names: set[str]) -> dict[str, Any]:
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


def _in_order(spec: Any, states: tuple[str, ...]) -> list[str]:
    """Active states in the spec's document order (by name without the spec)."""
    order = {name: i for i, name in enumerate(spec.states)} if spec is not None else {}
    return sorted(states, key=lambda s: (order.get(s, len(order)), s))


def _innermost(spec: Any, states: list[str]) -> list[str]:
    """The active states without their active ancestors (all of them without the spec)."""
    if spec is None:
        return states
    parents = {spec.states[s].parent for s in states if s in spec.states}
    return [s for s in states if s not in parents]


def _time(value: Any) -> str:
    return str(value.isoformat().replace("+00:00", "Z"))


# -- show ------------------------------------------------------------------------------------

def _show(args: argparse.Namespace) -> int:
    from statechart_runtime.errors import InvalidRecord, RunNotFound

    fmt = None
    if args.diagram not in (None, "-"):
        fmt = DIAGRAM_SUFFIXES.get(Path(args.diagram).suffix.lower())
        if fmt is None:
            raise Usage(f"--diagram {args.diagram}: the suffix picks the format: "
                        f"{', '.join(DIAGRAM_SUFFIXES)} (or `-` for Mermaid on stdout)")
    spec = checked_spec(args.spec, args) if args.spec else None
    with open_existing(args.store) as store:
        try:
            stored, _ = store.stored_record(args.run_id)
        except RunNotFound:
            raise Usage(_unknown_run(store, args.run_id)) from None
        if spec is None:  # the store names the spec; the project says where specs are
            spec = _project_specs({stored.spec}).get(stored.spec)
            if spec is None:
                raise Usage(f"run `{args.run_id}` is a run of `{stored.spec}`, and no spec "
                            f"`{stored.spec}` without errors is under the project's spec "
                            "folders (the configuration's `specs`); name its file: --spec "
                            "FILE")
            args.spec = spec.path
        run_class = compiled(spec)
        if stored.spec != spec.name:
            raise Usage(f"run `{args.run_id}` is a run of `{stored.spec}`, not of "
                        f"`{spec.name}` ({args.spec})")
        try:
            run = store.load(run_class, args.run_id)
        except InvalidRecord as exc:
            raise Failure(f"run `{args.run_id}`: {args.spec} refuses the stored record: {exc} "
                          "(`statechart runs verify` reports every such run)") from None
        history = store.history(args.run_id)
    active = [state.value for state in run.configuration]
    record = run.record.to_dict()
    data = {"run_id": stored.run_id, "spec": stored.spec, "spec_version": spec.version,
            "revision": stored.revision, "status": record["status"], "states": active,
            "created_at": _time(stored.created_at), "updated_at": _time(stored.updated_at),
            "last_transition_at": _time(run.record.lastTransitionAt),
            "context": {f.name: record.get(f.name) for f in spec.record},
            "timers": [{"state": t.state.value, "event": t.event.value, "due": _time(t.due),
                        "declined": t.declined} for t in run.timers],
            "history": [{"index": h.index, "at": _time(h.at), "event": h.event,
                         "source": h.source, "target": h.target, "values": h.values}
                        for h in history]}
    diagram = _diagram(spec, active, fmt or "mermaid") if args.diagram else None
    if args.format == "json":
        if args.diagram == "-":
            data["diagram"] = diagram.decode("utf-8") if diagram else ""
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        sys.stdout.write(inert_lines(_show_text(data)))
        if args.diagram == "-" and diagram is not None:
            print("\ndiagram (Mermaid):")
            sys.stdout.write(diagram.decode("utf-8"))
    if args.diagram not in (None, "-") and diagram is not None:
        try:
            Path(args.diagram).write_bytes(diagram)
        except OSError as exc:
            raise Failure(f"cannot write {args.diagram}: {exc.strerror or exc}") from None
        print(f"wrote {inert(args.diagram)}", file=sys.stderr)
    return 0


def inert_lines(text: str) -> str:
    return "".join(inert(line) + "\n" for line in text.splitlines())


def _show_text(data: dict[str, Any]) -> str:
    def value(v: Any) -> str:
        return "-" if v is None else json.dumps(v, ensure_ascii=False)

    lines = [f"run {data['run_id']}: {data['spec']} version {data['spec_version']}, "
             f"revision {data['revision']}",
             f"  status:          {data['status']}",
             f"  active states:   {', '.join(data['states'])}",
             f"  created:         {data['created_at']}",
             f"  updated:         {data['updated_at']}",
             f"  last transition: {data['last_transition_at']}", "", "context:"]
    lines += [f"  {name}: {value(v)}" for name, v in data["context"].items()] or ["  (no fields)"]
    timers = data["timers"]
    lines += ["", f"armed timers ({len(timers)}):"]
    lines += [f"  {t['due']}  {t['event']} (of {t['state']})"
              + ("  declined: its guards said no" if t["declined"] else "") for t in timers]
    steps = data["history"]
    lines += ["", f"history ({len(steps)} step{'s' * (len(steps) != 1)}):"]
    lines += [f"  {h['index']:>3}  {h['at']}  {h['event']}: {h['source']} -> {h['target']}"
              + (f"  {value(h['values'])}" if h["values"] else "") for h in steps]
    return "\n".join(lines) + "\n"


def _unknown_run(store: Any, run_id: str) -> str:
    import difflib

    ids = [r.run_id for r in store.stored_runs()]
    close = difflib.get_close_matches(run_id, ids, n=1, cutoff=0.6) \
        or [i for i in ids if i.startswith(run_id)][:1]
    return f"no run `{run_id}` in the store" + (f"; did you mean `{close[0]}`?" if close else "")


def _diagram(spec: Any, active: list[str], fmt: str) -> bytes:
    from statechart.cli.render import render_bytes
    from statechart.render import bounds, layout
    from statechart.render.highlight import active_configuration

    marked = active_configuration(spec, active)
    try:
        with bounds.using() as limits:
            return render_bytes(spec, fmt, marked, "graphviz-pure", limits)
    except (bounds.BoundsError, layout.LayoutError) as exc:
        raise Failure(f"no diagram: {exc}") from None


# -- verify ----------------------------------------------------------------------------------

def _verify(args: argparse.Namespace) -> int:
    from statechart.cli.check import output_format
    from statechart.linter import check_file
    from statechart.runs_verify import Against, reporters, verify

    paths = [args.spec, *([args.spec_new] if args.spec_new else [])]
    if missing_paths("runs verify", paths, files=True):
        return 2
    fmt = output_format(args.format)
    results = [check_file(p) for p in paths]
    errors = [d for r in results for d in r.errors]
    show = colour.enabled(args.color, sys.stdout)
    if errors:
        sources = _sources(paths) if fmt == "full" else {}
        sys.stdout.write(colour.report(reporters(), fmt, errors, sources, show))
        return 0 if args.exit_zero else 1
    spec = results[0].spec
    new = results[1].spec if args.spec_new else None
    assert spec is not None  # a spec without errors has a model
    if new is not None and new.name != spec.name:
        raise Usage(f"{args.spec_new} is spec `{new.name}`, {args.spec} is `{spec.name}`: "
                    "--spec-new is a new version of the same spec")
    against = Against(args.spec, compiled(spec))
    proposed = Against(args.spec_new, compiled(new), proposed=True) if new else None
    with open_existing(args.store) as store:
        found = verify(store, location(args.store), against, proposed)
    sys.stdout.write(colour.report(reporters(), fmt, found.diagnostics, {}, show))
    if fmt == "full" and not found.diagnostics:
        if found.runs == 0:
            print(f"no runs of `{spec.name}` in the store: nothing to verify.")
        else:
            also = f" and {args.spec_new}" if args.spec_new else ""
            print(f"{found.runs} run{'s' * (found.runs != 1)} of `{spec.name}` verified "
                  f"against {args.spec}{also}: no problems.")
    return 1 if any(d.severity == "error" for d in found.diagnostics) and not args.exit_zero \
        else 0


def _sources(paths: list[str]) -> dict[str, str]:
    """The spec texts for `full`'s snippets, read as the checker read them."""
    from statechart.spec_file import SpecFileError, read_spec

    out: dict[str, str] = {}
    for path in paths:
        try:
            out[path] = read_spec(path).decode("utf-8-sig", "replace")
        except (OSError, SpecFileError):
            pass
    return out
