"""What every comparison of `statechart diff` shares: the old -> new names of states, fields
and events found so far, and how a finding is added.

`DiffBase` holds them; the comparisons of states, transitions, descriptor shadowing, timers,
record fields and rules are its subclasses, and `statechart.diff.diff_specs` runs them in order.
"""

from __future__ import annotations

from collections.abc import Iterable

from statechart.diagnostics import Span
from statechart.diff.kinds import KINDS, Change
from statechart.model import Spec, Transition
from statechart_runtime.chart import events

Alt = tuple[str, str | None, frozenset[str]]  # (target, guard, sets) of one alternative


class DiffBase:
    """OLD and NEW, the findings so far, and the old -> new names the comparisons share."""

    def __init__(self, old: Spec, new: Spec, state_renames: dict[str, str],
                 field_renames: dict[str, str | None]) -> None:
        self.old, self.new = old, new
        self.changes: list[Change] = []
        self.state_renames = state_renames  # migrations
        # old state name -> new state name, for every old state that still exists somehow
        self.smap: dict[str, str] = {s: s for s in old.states if s in new.states}
        self.fmap: dict[str, str] = {f.name: f.name for f in old.record
                                     if new.record_field(f.name)}
        self.fmap.update({o: n for o, n in field_renames.items() if n and new.record_field(n)})
        # fields a migration drops on purpose (`note: null`)
        self.dropped = {o for o, n in field_renames.items() if n is None}
        self.emap: dict[str, str] = {e: e for e in sent_events(old) if e in set(sent_events(new))}
        # old states a migration folds into another existing state: their own shape is gone
        self.merged: set[str] = set()
        # (state, event) of NEW that `compare_shadowing` reported: not a `transition-added`
        self.shadowed: set[tuple[str, str]] = set()
        # fields NEW's migration from OLD's version fills with their default (`fill:`)
        self.fills = {name for m in new.migrations if m.from_version == old.version
                      for name, _ in m.fill}

    def lost(self, o: Transition) -> bool:
        """Whether a stored step of OLD's transition `o` no longer replays under NEW: NEW has
        no transition with its source, event and target (states through renames and
        migrations; a `done` event follows its state, a sent event keeps its name in a
        stored history), entered the same way. The replay refuses such a record."""
        if not hasattr(self, "_steps"):
            self._steps = {(t.source, t.event, t.target, t.move_kind)
                           for t in self.new.transitions()}
        source, target = self.smap.get(o.source), self.smap.get(o.target)
        event = events.done_event(source or "") if o.trigger == "done" else o.event
        return (source, event, target, o.move_kind) not in self._steps

    def add(self, kind: str, message: str, span: Span, *, runs: bool = False,
            callers: bool = False, help: str = "", migrated: bool = False,
            note: str = "") -> None:
        assert kind in KINDS, kind
        self.changes.append(Change(kind, message, span, runs, callers, help, migrated, note))

    def alt(self, t: Transition, old: bool) -> Alt:
        # What the caller gives identifies an alternative; its `assign:` is compared per pair.
        if not old:
            return (t.target, t.guard, frozenset(t.given))
        return (self.smap.get(t.target, t.target), t.guard,
                frozenset(self.fmap.get(f, f) for f in t.given))

    def compare_clears(self, where: str, old: tuple[str, ...], new: tuple[str, ...],
                       span: Span) -> None:
        old_set = {self.fmap.get(f, f) for f in old}
        if old_set == set(new):
            return
        context = {f.name for f in self.new.record if f.context}
        self.add("clear-changed", f"{where} now clears {names_text(new) or 'nothing'} (was "
                 f"{names_text(sorted(old_set)) or 'nothing'})", span,
                 runs=bool((old_set ^ set(new)) - context),
                 help="a stored run's history replays to other field values; the check "
                      "refuses records whose values follow the old clears")


def sent_events(spec: Spec) -> list[str]:
    """The events callers send (not those the run raises itself), in first-use order."""
    return list(dict.fromkeys(t.event for t in spec.transitions() if t.trigger == "event"))


def names_text(values: Iterable[str]) -> str:
    return ", ".join(f"`{v}`" for v in values)

