"""What the console shows, as plain data (JSON-ready dicts): a stored run in a list, a run in
detail, the events a run takes now with the fields the spec gives them, a history step, how
long until a timer is due. The API returns these; the pages render the same dicts.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

from statechart_runtime.chart.spec import SpecTables
from statechart_runtime.chart.values import SENT_BY, time_text
from statechart_runtime.run import spec_of
from statechart_runtime.store import HistoryRow, StoredRun
from statechart_runtime.store.core.pages import Move


def tables(run_class: type[Any]) -> SpecTables:
    """A generated Run class's spec tables (`statechart_runtime.run.spec_of`)."""
    return spec_of(run_class)


def when(value: dt.datetime | None) -> str | None:
    """A time as the API gives it: RFC 3339, UTC as `Z`."""
    return None if value is None else time_text(value.astimezone(dt.UTC)).replace(
        "+00:00", "Z")


def due_in(due: dt.datetime, now: dt.datetime) -> str:
    """How long until `due`, for people: `in 1 h 5 min`, `in 40 s`, `overdue`."""
    seconds = int((due - now).total_seconds())
    if seconds <= 0:
        return "overdue"
    days, rest = divmod(seconds, 86_400)
    hours, rest = divmod(rest, 3_600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{days} d" if days else "", f"{hours} h" if hours else "",
             f"{minutes} min" if minutes and not days else "",
             f"{secs} s" if secs and not days and not hours and not minutes else ""]
    return "in " + " ".join(p for p in parts if p)


def innermost(run_class: type[Any] | None, states: tuple[str, ...]) -> list[str]:
    """The active states without their active ancestors, in document order."""
    if run_class is None:
        return sorted(states)
    chart = tables(run_class).chart
    known = [s for s in states if s in chart.order]
    parents = {chart.parent[s] for s in known}
    return [s for s in chart.sort(known) if s not in parents]


def run_summary(stored: StoredRun, run_class: type[Any] | None, now: dt.datetime
                ) -> dict[str, Any]:
    """A run in a list: its columns, no record."""
    return {"run_id": stored.run_id, "spec": stored.spec, "spec_version": stored.spec_version,
            "status": stored.status, "states": innermost(run_class, stored.states),
            "revision": stored.revision, "steps": stored.steps,
            "created_at": when(stored.created_at), "updated_at": when(stored.updated_at),
            "last_transition_at": when(stored.last_transition_at),
            "next_due": when(stored.next_due),
            "next_due_in": due_in(stored.next_due, now) if stored.next_due else None}


def accepted_events(run: Any) -> list[dict[str, Any]]:
    """The events the run takes now (guards are not asked: a guarded event is listed and
    may still be refused), each with the fields it may set from here: type, enum values,
    and `required` when every transition the event may take from here sets it (a value an
    alternative assigns itself, `assign:`, is not asked of the caller)."""
    spec = tables(type(run))
    active = {state.value for state in run.configuration}
    codec = spec.codec
    out = []
    for member in run.allowed_events:
        name = member.value
        sets: list[set[str]] = []
        keyed = spec.alternatives.keyed
        for key in dict.fromkeys(a.key for a in spec.alternatives.of_event(name)
                                 if a.source in active):
            assigned = {f for a in keyed[key] for f in a.assigns}
            sets.append(set(keyed[key][0].given) - assigned)
        union = set().union(*sets) if sets else set()
        required = set.intersection(*sets) if sets else set()
        fields = []
        for field in spec.alternatives.fields.get(name, ()):
            if field not in union:
                continue
            kind = codec.types[field]
            fields.append({"name": field, "type": kind, "required": field in required,
                           "enum": [m.value for m in codec.enums[field]] if kind == "enum"
                           else None})
        out.append({"event": name, "fields": fields})
    return out


def event_fields(run_class: type[Any] | None, event: str) -> list[dict[str, Any]]:
    """An event's fields from the spec, whatever the state (a form for many runs, or an
    answer to a run that moved on): each required."""
    if run_class is None:
        return []
    codec = tables(run_class).codec
    out = []
    for field in tables(run_class).alternatives.fields.get(event, ()):
        kind = codec.types[field]
        out.append({"name": field, "type": kind, "required": True,
                    "enum": [m.value for m in codec.enums[field]] if kind == "enum" else None})
    return out


def timers(run: Any, now: dt.datetime) -> list[dict[str, Any]]:
    return [{"state": t.state.value, "event": t.event.value, "due": when(t.due),
             "due_in": due_in(t.due, now), "declined": t.declined} for t in run.timers]


def run_detail(run: Any, revision: int, stored: StoredRun, now: dt.datetime
               ) -> dict[str, Any]:
    """A run in detail, from its head: record (without history), configuration, timers,
    revision, the events it takes now."""
    record = run.record.to_dict()
    record.pop("history", None)
    return {**run_summary(stored, type(run), now), "revision": revision,
            "status": record.get("status"),
            "configuration": [state.value for state in run.configuration],
            "states": innermost(type(run), tuple(s.value for s in run.configuration)),
            "ended": run.is_terminated, "record": record, "timers": timers(run, now),
            "accepted_events": [] if run.is_terminated else accepted_events(run)}


def work_item(item: Any, now: dt.datetime) -> dict[str, Any]:
    """A run's work item (docs/work.md) as the console shows it, with each attempt."""
    return {"key": item.key, "state": item.state, "handler": item.handler,
            "status": item.status, "attempts": item.attempts, "failures": item.failures,
            "owner": item.owner, "ready_at": when(item.ready_at),
            "ready_in": due_in(item.ready_at, now) if item.ready_at else None,
            "lease_until": when(item.lease_until), "last_error": item.last_error,
            "created_at": when(item.created_at), "ended_at": when(item.ended_at),
            "ended_by": item.ended_by,
            "history": [{"attempt": a.attempt, "owner": a.owner,
                         "claimed_at": when(a.claimed_at), "ended_at": when(a.ended_at),
                         "result": a.result, "error": a.error} for a in item.history]}


def step(row: HistoryRow) -> dict[str, Any]:
    """A history step: who sent it (the reserved `@by`, None when nobody said) apart from
    the values it set."""
    values = dict(row.values)
    by = values.pop(SENT_BY, None)
    return {"index": row.index, "at": when(row.at), "event": row.event, "source": row.source,
            "target": row.target, "values": values, "by": by}


class Trail:
    """The configuration after each step of one run's history, from the start: a walk over
    the chart (`Chart.step`, history returns through what the walk remembers), extended as
    the history grows. Steps the chart does not know (a run stored at another spec
    version) end the walk: their configurations are unknown (None)."""

    __slots__ = ("broken", "configuration", "configurations", "remembered")

    def __init__(self, run_class: type[Any]) -> None:
        self.configuration: tuple[str, ...] = tables(run_class).chart.initial_configuration()
        self.remembered: dict[str, tuple[str, ...]] = {}
        self.configurations: list[tuple[str, ...] | None] = []
        self.broken = False

    def extend(self, run_class: type[Any], steps: list[Move]) -> None:
        """Walk on through `steps` (`store.moves`: index, event, source, target, kind)."""
        spec = tables(run_class)
        chart = spec.chart
        for index, event, source, target, kind in steps:
            if index != len(self.configurations):
                raise ValueError(f"step {index} follows step {len(self.configurations) - 1}")
            entered = spec.alternatives.recorded(source, event, target, kind)
            if self.broken or source not in self.configuration or target not in chart.order:
                self.broken = True
                self.configurations.append(None)
                continue
            move: Any = (source, entered) if kind is None else (source, entered, kind)
            self.configuration, _, self.remembered = chart.step(
                self.configuration, [move], self.remembered)
            self.configurations.append(self.configuration)


def state_tree(run_class: type[Any], active: set[str]) -> Iterator[tuple[str, int, str, bool]]:
    """The spec's states in document order as (name, depth, kind, active): the diagram a
    runtime-only console draws (an indented tree, active states marked)."""
    chart = tables(run_class).chart
    stack = [(name, 0) for name in reversed(chart.top)]
    while stack:
        name, depth = stack.pop()
        yield name, depth, chart.kind[name], name in active
        stack.extend((child, depth + 1) for child in reversed(chart.children[name]))
