"""`statechart runs list --store URL [--spec SPEC] [--status S] [--state S] [--tag T]
[--due [BEFORE]]`: the stored runs, sorted by id (by due time with `--due`), as a table or
JSON; the conditions in a spec's names answered as `store.find` answers them.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from statechart.cli.runs import (
    Usage,
    checked_spec,
    compiled,
    open_existing,
    project_specs,
    time_text,
)
from statechart.report import inert


def list_runs(args: argparse.Namespace) -> int:
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
        from statechart_runtime.run import spec_of

        tables = spec_of(compiled(spec))
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
    specs = {spec.name: spec} if spec is not None else project_specs({r.spec for r in runs})
    rows = [{"run_id": r.run_id, "spec": r.spec, "spec_version": r.spec_version,
             "status": r.status, "states": _in_order(specs.get(r.spec), r.states),
             "revision": r.revision, "steps": r.steps,
             "last_transition_at": time_text(r.last_transition_at),
             "updated_at": time_text(r.updated_at),
             "next_due": time_text(r.next_due) if r.next_due else None} for r in runs]
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
    from statechart_runtime.store.core import versions as store_versions

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


def _names(spec: Any, value: str | None, what: str) -> None:
    """Refuse (Usage) a state name the spec does not have."""
    from statechart.build_model import did_you_mean

    if value is None or spec is None:
        return
    if value not in spec.states:
        hint = did_you_mean(value, spec.states)
        raise Usage(f"{what}: no state `{value}` in spec `{spec.name}`"
                    + (f"; {hint}" if hint else ""))
