"""Spec coverage: which states, transitions and guard outcomes of each spec the live runs of
this process took (`pytest --statechart-cov`, docs/testing-coverage.md).

Off unless `start()` is called: `RECORDER` is None, and the run (statechart_runtime.run) looks
at it once per microstep and once per run created or restored; that None check is all that
coverage costs when off. On, a `Recorder` counts, per spec:

- each state entered (a new run's initial states too; a restored run's current states are
  not entered again, so they do not count);
- each transition alternative taken, `(source, event, position)`: completion (`done.state.X`)
  and timer (`after.ID.X`) transitions and history ones included, each guarded alternative of
  one event separately;
- each guard outcome, yes and no, of each guarded alternative whose guard was asked.

Only what a live run does counts: a run restored from a record or a store counts the steps it
takes after the restore, never the history it was restored from (replaying a history to check
it goes through `statechart_runtime.replay`, not through a run). A transition counts once the
run has committed its step (its guard said yes, the step is allowed): an action that then
raises takes the event back, and the transition still counts, as coverage.py counts a line
that raised.

The data of a spec (`SpecCoverage`) is plain JSON-ready values, so processes (pytest-xdist's
workers) send theirs to one that merges them (`merge`). Reports: statechart_runtime.
coverage_report.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from statechart_runtime.chart.alternatives import Alternative
from statechart_runtime.chart.kernel import Effect, Selection

KINDS = ("transition", "state", "guard")


@dataclass(frozen=True, slots=True)
class Item:
    """One thing of a spec that tests can cover: its kind ("state", "transition", "guard"),
    its id (unique in its spec), where the spec writes it (file relative to the project root,
    line; None in a module generated without `_SOURCE`) and how a report names it."""

    kind: str
    id: str
    file: str | None
    line: int | None
    text: str


@dataclass(slots=True)
class SpecCoverage:
    """The items of one spec (in the order the spec writes them) and how often each was
    covered (`hits`: item id -> count; an item absent was not covered)."""

    name: str
    version: int
    sha256: str
    items: list[Item] = field(default_factory=list)
    hits: dict[str, int] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """What identifies the spec across processes: its name and source hash."""
        return f"{self.name}@{self.sha256}"

    def counts(self, kind: str) -> tuple[int, int]:
        """(covered, total) items of `kind`."""
        hits = self.hits
        of_kind = [item for item in self.items if item.kind == kind]
        return sum(1 for item in of_kind if hits.get(item.id)), len(of_kind)

    def missing(self) -> list[Item]:
        """The items not covered, in the order the spec writes them."""
        return [item for item in self.items if not self.hits.get(item.id)]

    def as_data(self) -> dict[str, Any]:
        """JSON-ready (what a pytest-xdist worker sends)."""
        return {"name": self.name, "version": self.version, "sha256": self.sha256,
                "items": [[i.kind, i.id, i.file, i.line, i.text] for i in self.items],
                "hits": dict(self.hits)}

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> SpecCoverage:
        return cls(str(data["name"]), int(data["version"]), str(data["sha256"]),
                   [Item(*row) for row in data["items"]],
                   {str(k): int(v) for k, v in data["hits"].items()})


def merge(parts: Iterable[Iterable[Mapping[str, Any]]]) -> list[SpecCoverage]:
    """The coverage of every spec in `parts` (each one process's `Recorder.data()`), counts
    added up; specs sorted by name, then version."""
    merged: dict[str, SpecCoverage] = {}
    for part in parts:
        for data in part:
            found = SpecCoverage.from_data(data)
            kept = merged.get(found.key)
            if kept is None:
                merged[found.key] = found
                continue
            if found.items and not any(i.line for i in kept.items):
                kept.items = found.items  # one process's module had `_SOURCE`: keep its lines
            for item_id, count in found.hits.items():
                kept.hits[item_id] = kept.hits.get(item_id, 0) + count
    return sorted(merged.values(), key=lambda s: (s.name, s.version, s.sha256))


@dataclass(slots=True)
class _Table:
    """What the recorder needs of one spec, made once from its Run class: its coverage, the
    item ids of its states, and per alternative of the spec's table the ids of the
    transition and of its guard outcomes (yes, no; None when it has no guard)."""

    coverage: SpecCoverage
    states: dict[str, str]
    transitions: dict[Alternative, tuple[str, tuple[str, str] | None]]


class Recorder:
    """Counts what the live runs of this process cover (see the module docstring)."""

    def __init__(self) -> None:
        self._tables: dict[object, _Table] = {}  # spec tables -> its table
        self._by_class: dict[type[Any], _Table] = {}  # run class -> its spec's table

    def _table(self, run_class: type[Any]) -> _Table:
        table = self._by_class.get(run_class)
        if table is None:
            from statechart_runtime.run.run import spec_of  # run imports this module

            spec = spec_of(run_class)
            table = self._tables.get(spec)
            if table is None:
                table = self._tables[spec] = _table_of(run_class)
            self._by_class[run_class] = table
        return table

    def started(self, run: Any, entered: Iterable[str]) -> None:
        """A run was created (`entered`: its initial states) or restored (nothing entered)."""
        table = self._table(type(run))
        hits = table.coverage.hits
        for name in entered:
            item = table.states[name]
            hits[item] = hits.get(item, 0) + 1

    def selected(self, run: Any, selection: Selection, effect: Effect | None) -> None:
        """A microstep's selection (`kernel.select`): the guards it asked, and the transitions
        it takes with the states they enter when the step was allowed (`effect`)."""
        table = self._table(type(run))
        hits = table.coverage.hits
        transitions = table.transitions
        for _, _, cause, detail in selection.refused:
            if cause == "guard" and isinstance(detail, Alternative):
                guards = transitions[detail][1]
                if guards is not None:
                    hits[guards[1]] = hits.get(guards[1], 0) + 1
        for taken in selection.taken:
            item, guards = transitions[taken]
            if guards is not None:
                hits[guards[0]] = hits.get(guards[0], 0) + 1
            if effect is not None:
                hits[item] = hits.get(item, 0) + 1
        if effect is not None:
            for name in effect.entered:
                item = table.states[name]
                hits[item] = hits.get(item, 0) + 1

    def data(self) -> list[dict[str, Any]]:
        """Every spec whose runs this process used, JSON-ready (`merge` reads it)."""
        return [table.coverage.as_data() for table in self._tables.values()]


def _table_of(run_class: type[Any]) -> _Table:
    """The items of a generated Run class's spec: its states in document order, then its
    transition alternatives and their guard outcomes, as the spec writes them (`_SOURCE`)."""
    from statechart_runtime.run.run import run_class_of  # run imports this

    generated = run_class_of(run_class)
    spec = generated.spec
    source: Mapping[str, Any] = generated.source or {}
    files: tuple[str, ...] = tuple(source.get("files", ()))
    state_lines: Mapping[str, tuple[int, int]] = source.get("states", {})
    transition_lines: Mapping[tuple[str, str, int], tuple[int, int, int | None]] = \
        source.get("transitions", {})
    coverage = SpecCoverage(spec.name, spec.version, spec.sha256)
    items: list[Item] = []
    states: dict[str, str] = {}
    for name in spec.states_by_name:
        at = state_lines.get(name)
        states[name] = f"state {name}"
        items.append(Item("state", states[name], files[at[0]] if at else None,
                          at[1] if at else None, f"state `{name}`"))
    transitions: dict[Alternative, tuple[str, tuple[str, str] | None]] = {}
    for (state, event), found in spec.alternatives.on.items():
        for alternative in found:
            position, target, kind = alternative.position, alternative.target, alternative.kind
            key = (state, event, position)
            where = transition_lines.get(key)
            file = files[where[0]] if where else None
            line = where[1] if where else None
            item_id = f"transition {state} {event} {position}"
            move = f"`{state}` --{event}--> `{target}`"
            text = "transition " + move
            if kind is not None:  # a history kind, `internal` or `targetless`
                text += f" (history: {kind})" if kind in ("shallow", "deep") else f" ({kind})"
            if len(found) > 1:
                text += f" (alternative {position + 1} of {len(found)})"
            items.append(Item("transition", item_id, file, line, text))
            guards = None
            if alternative.guarded:
                guard_line = where[2] if where and where[2] is not None else line
                named = " and ".join(f"`{g}`" for g in alternative.guard_names) or "guard"
                guards = (f"guard {state} {event} {position} yes",
                          f"guard {state} {event} {position} no")
                for outcome, guard_id in zip(("yes", "no"), guards, strict=True):
                    items.append(Item("guard", guard_id, file, guard_line,
                                      f"guard {named} of {move}: {outcome}"))
            transitions[alternative] = (item_id, guards)
    # As the spec writes them (items of a module without `_SOURCE` keep the class's order).
    order = {f: i for i, f in enumerate(files)}
    items.sort(key=lambda i: (order.get(i.file, len(order)) if i.file else len(order),
                              i.line or 0))
    coverage.items = items
    return _Table(coverage, states, transitions)


# The recorder runs report to; None: coverage is off (see the module docstring).
RECORDER: Recorder | None = None


def start() -> tuple[Recorder, Recorder | None]:
    """Turn recording on in this process: (the new recorder, the one it replaces, which
    `stop` puts back)."""
    global RECORDER
    previous = RECORDER
    RECORDER = Recorder()
    return RECORDER, previous


def stop(previous: Recorder | None = None) -> None:
    """Turn recording off (or back to `previous`)."""
    global RECORDER
    RECORDER = previous
