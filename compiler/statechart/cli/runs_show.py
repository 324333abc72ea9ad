"""`statechart runs show RUN_ID --store URL [--spec SPEC] [--diagram PATH]`: one stored run,
loaded through its spec's Run class (so its record is checked): its state, context (record
fields), armed timers and history, as text or JSON, and its spec's diagram with the run's
active states marked.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from statechart.cli.runs import (
    Failure,
    Usage,
    checked_spec,
    compiled,
    open_existing,
    project_specs,
    time_text,
)
from statechart.report import inert

# --diagram PATH: the picture's format by the file's suffix.
DIAGRAM_SUFFIXES = {".svg": "svg", ".png": "png", ".dot": "dot", ".gv": "dot",
                    ".mmd": "mermaid", ".mermaid": "mermaid"}


def show_run(args: argparse.Namespace) -> int:
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
            spec = project_specs({stored.spec}).get(stored.spec)
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
        items = store.work_items(args.run_id)
    active = [state.value for state in run.configuration]
    record = run.record.to_dict()
    data = {"run_id": stored.run_id, "spec": stored.spec, "spec_version": spec.version,
            "revision": stored.revision, "status": record["status"], "states": active,
            "created_at": time_text(stored.created_at), "updated_at": time_text(stored.updated_at),
            "last_transition_at": time_text(run.record.lastTransitionAt),
            "context": {f.name: record.get(f.name) for f in spec.record},
            "timers": [{"state": t.state.value, "event": t.event.value, "due": time_text(t.due),
                        "declined": t.declined} for t in run.timers],
            "history": [{"index": h.index, "at": time_text(h.at), "event": h.event,
                         "source": h.source, "target": h.target, "values": h.values}
                        for h in history],
            "work": [_work_item(item) for item in items]}
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


def _work_item(item: Any) -> dict[str, Any]:
    """A work item (docs/work.md) as `runs show` gives it, each attempt with it."""
    return {"key": item.key, "state": item.state, "handler": item.handler,
            "status": item.status, "attempts": item.attempts, "failures": item.failures,
            "owner": item.owner, "ready_at": _when(item.ready_at),
            "lease_until": _when(item.lease_until), "last_error": item.last_error,
            "created_at": time_text(item.created_at), "ended_at": _when(item.ended_at),
            "ended_by": item.ended_by,
            "history": [{"attempt": a.attempt, "owner": a.owner,
                         "claimed_at": time_text(a.claimed_at),
                         "ended_at": _when(a.ended_at), "result": a.result,
                         "error": a.error} for a in item.history]}


def _when(value: Any) -> str | None:
    return None if value is None else time_text(value)


def inert_lines(text: str) -> str:
    return "".join(inert(line) + "\n" for line in text.splitlines())


def _show_text(data: dict[str, Any]) -> str:
    from statechart_runtime.chart.json_values import shortened

    def value(v: Any) -> str:
        """A value as JSON, a long one (a `json` field's) cut short: `--format json` has it
        whole."""
        return "-" if v is None else shortened(v)

    def values(step: dict[str, Any]) -> str:
        return "{" + ", ".join(f"{json.dumps(k)}: {value(v)}" for k, v in step.items()) + "}"

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
              + (f"  {values(h['values'])}" if h["values"] else "") for h in steps]
    if data["work"]:
        lines += ["", f"work items ({len(data['work'])}):"]
        for item in data["work"]:
            lines += [f"  {item['key']}  {item['handler']} in {item['state']}: "
                      f"{_item_status(item)}"]
            lines += [f"    attempt {a['attempt']}  {a['claimed_at']}  by {a['owner']}: "
                      f"{a['result'] or 'running'}"
                      + (f" ({a['error']})" if a["error"] else "") for a in item["history"]]
    return "\n".join(lines) + "\n"


def _item_status(item: dict[str, Any]) -> str:
    if item["status"] == "ended":
        return f"ended by {item['ended_by']} at {item['ended_at']}"
    if item["status"] == "claimed":
        return f"claimed by {item['owner']} until {item['lease_until']}"
    again = f", {item['failures']} failed" if item["failures"] else ""
    return f"pending from {item['ready_at']}{again}"


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
