"""The table of a spec's transition alternatives: one `Alternative` per alternative, the one
place the runtime keeps what a transition is (issue 28, "one representation of an alternative").

An *alternative* is one entry of an event's list on a state (`on: {assess: [a, b, c]}` has
three), at its *position* among the event's alternatives on that state (document order, from
0). Selection (`kernel.select`) asks them in that order, the step (`kernel.step`) reads what
they set and clear, the replay (`statechart_runtime.replay`) finds the alternative a stored
step took, and the test tooling (explore, coverage) enumerates them.

Built from the literal data of a generated module:
- API 1.7: its `SpecTables(alternatives=...)` rows, one per alternative in the order its
  machine declares them (`AlternativeRow`: key, the fields the caller gives, and its kind,
  guard, actions and constants), with `in:` per position and `clear:` per key: the table is
  complete from the rows alone;
- a module of API 1.6 or older: its `SpecTables(transitions=...)` rows, one per distinct
  (source, event, target): the fields the caller gives (merged over the alternatives with that
  key), the kinds its alternatives take (`history` rows), `in:` and `assign:` per position,
  `clear:` per key; then the order its machine declares the alternatives in, with their
  guards (`bind`), which those rows do not carry:
  `statechart_runtime.psm.machine.declared_alternatives` reads it once per generated class.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from statechart_runtime.chart.chart import MULTI, Move
from statechart_runtime.chart.values import JsonValue
from statechart_runtime.errors import RuntimeVersionError

# (source, event, target) as the module's rows and a step of the record key a transition: a
# targetless one's target is its source, a multi-target one's its targets joined by spaces.
Key = tuple[str, str, str]
# A guard as python-statemachine asks it: (method name, the answer that lets it through:
# False for `unless`).
Guard = tuple[str, bool]
# One alternative as its machine declares it (`bind`), in declaration order: (source, event,
# target, kind, guards, guarded: it has guards or validators, which are asked as guards).
Declared = tuple[str, str, str, str | None, tuple[Guard, ...], bool]
# API 1.7: one alternative as a module's rows list it, in declaration order: (source, event,
# target, fields the caller gives), and a fifth element when it has any of `kind` (a step
# kind other than external), `guard` (the method asked for yes), `actions` (method names, in
# order) and `assigns` ({field: JSON constant}).
AlternativeRow = tuple[Any, ...]
_NONE: Mapping[str, tuple[Any, JsonValue]] = {}


@dataclass(frozen=True, slots=True, eq=False)
class Alternative:
    """One alternative of an event on a state (compared by identity: a table has one of
    each)."""

    source: str
    event: str
    position: int  # among the event's alternatives on `source`, in document order
    target: str  # as the rows key it (see `Key`); `targets` has every state it enters
    kind: str | None  # step_kinds: None (external), a history kind, internal, targetless, multi
    guards: tuple[Guard, ...]
    guarded: bool  # whether selection asks it (guards, or a library validator)
    in_states: tuple[str, ...]  # `in:`: states that must all be active for it to be enabled
    given: tuple[str, ...]  # the fields a caller gives (merged over the alternatives of its key)
    clears: tuple[str, ...]  # `clear:` (merged over the alternatives of its key)
    assigns: Mapping[str, tuple[Any, JsonValue]]  # `assign:`: field -> (typed, JSON) constant
    # Its actions, the methods a run calls (API 1.7 rows; empty in the table of an older
    # module, whose runs find them on the machine's transition)
    actions: tuple[str, ...] = ()
    sets: tuple[str, ...] = field(init=False)  # `given` without the fields it assigns itself
    move: Move = field(init=False)  # as the chart's algorithms take it (`Chart.step`)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sets", tuple(f for f in self.given if f not in self.assigns)
                           if self.assigns else self.given)
        object.__setattr__(self, "move", (self.source, self.target) if self.kind is None
                           else (self.source, self.target, self.kind))

    @property
    def key(self) -> Key:
        return (self.source, self.event, self.target)

    @property
    def targets(self) -> tuple[str, ...]:
        return tuple(self.target.split(" ")) if self.kind == MULTI else (self.target,)

    @property
    def step_target(self) -> str:
        """The target a step of the record names: a multi-target one's first."""
        return self.targets[0] if self.kind == MULTI else self.target

    @property
    def guard_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.guards)


class AlternativeTable:
    """Every alternative of a spec (see the module docstring), indexed as its readers ask:

    - `on[(source, event)]`: the event's alternatives on the state, in document order
      (selection);
    - `keyed[(source, event, target)]`: the alternatives with that key, in document order (a
      step of the record names its key, and its kind);
    - `stepped[(source, event, step target)]`: the same by the target a step records (a
      multi-target one's first);
    - `sources[event]`: the states with alternatives of the event; `eventless`: those with
      eventless ones (`always:`); `fields[event]`: every field a caller may give with it.

    `sources`, `eventless` and `fields` come from the rows; the others too from rows that
    list every alternative (API 1.7), else once the order is bound (`bind`)."""

    __slots__ = ("_actions", "_assigns", "_clears", "_given", "_in_states", "_kinds", "declared",
                 "eventless", "fields", "keyed", "listed", "on", "sources", "stepped")

    def __init__(self, rows: Sequence[tuple[Any, ...]],
                 kinds: Iterable[tuple[str, str, str, str | None]],
                 in_states: Mapping[tuple[str, str, int], Sequence[str]],
                 clears: Mapping[Key, Sequence[str]],
                 constant: Callable[[str, JsonValue], tuple[Any, JsonValue]],
                 always: str, alternatives: Sequence[AlternativeRow] | None = None) -> None:
        """`alternatives` (API 1.7) makes the table complete at once (`rows` and `kinds` are
        then derived from it); without them, `bind` completes it."""
        self._given: dict[Key, tuple[str, ...]] = {}
        self._assigns: dict[tuple[str, str, str, int], Mapping[str, tuple[Any, JsonValue]]] = {}
        self._actions: dict[tuple[str, str, int], tuple[str, ...]] = {}
        self.fields: dict[str, tuple[str, ...]] = {}
        sources: dict[str, dict[str, None]] = {}
        declared: list[Declared] = []
        self.listed = alternatives is not None  # API 1.7: the rows list every alternative
        if alternatives is not None:
            rows, kinds = self._listed(alternatives, constant, declared)
        for row in rows:
            source, event, target, given = row[:4]
            self._given[(source, event, target)] = tuple(given)
            for position, constants in row[4] if len(row) > 4 else ():
                if constants:
                    self._assigns[(source, event, target, position)] = {
                        f: constant(f, v) for f, v in constants.items()}
            sources.setdefault(event, {})[source] = None
            known = self.fields.get(event, ())
            self.fields[event] = known + tuple(f for f in given if f not in known)
        self.sources: dict[str, frozenset[str]] = {
            event: frozenset(found) for event, found in sources.items()}
        self.eventless = self.sources.get(always, frozenset())
        # key -> the kinds its alternatives take, when one is not external (else absent)
        self._kinds: dict[Key, frozenset[str | None]] = {}
        for source, event, target, kind in kinds:
            key = (source, event, target)
            self._kinds[key] = self._kinds.get(key, frozenset()) | {kind}
        self._in_states = {key: tuple(states) for key, states in in_states.items()}
        self._clears = {key: tuple(fields) for key, fields in clears.items()}
        self.declared: tuple[Declared, ...] | None = None
        self.on: dict[tuple[str, str], tuple[Alternative, ...]] = {}
        self.keyed: dict[Key, tuple[Alternative, ...]] = {}
        self.stepped: dict[Key, tuple[Alternative, ...]] = {}
        if alternatives is not None:
            self._bound(tuple(declared))

    def _listed(self, alternatives: Sequence[AlternativeRow],
                constant: Callable[[str, JsonValue], tuple[Any, JsonValue]],
                declared: list[Declared]
                ) -> tuple[list[tuple[Any, ...]], list[tuple[str, str, str, str | None]]]:
        """API 1.7 rows as the tables of older modules hold them (one row per key, the given
        fields merged over its alternatives; the kinds of a key with one not external), the
        declaration order (`declared`), and each alternative's actions and constants."""
        given: dict[Key, list[str]] = {}
        kinds: dict[Key, dict[str | None, None]] = {}
        positions: dict[tuple[str, str], int] = {}
        for row in alternatives:
            source, event, target, fields = row[:4]
            extra: Mapping[str, Any] = row[4] if len(row) > 4 else {}
            key = (source, event, target)
            merged = given.setdefault(key, [])
            merged.extend(f for f in fields if f not in merged)
            kind = extra.get("kind")
            kinds.setdefault(key, {})[kind] = None
            guard = extra.get("guard")
            guards = ((guard, True),) if guard else ()
            declared.append((source, event, target, kind, guards, bool(guards)))
            position = positions.get((source, event), 0)
            positions[(source, event)] = position + 1
            if extra.get("actions"):
                self._actions[(source, event, position)] = tuple(extra["actions"])
            if extra.get("assigns"):
                self._assigns[(*key, position)] = {
                    f: constant(f, v) for f, v in extra["assigns"].items()}
        rows = [(*key, tuple(fields)) for key, fields in given.items()]
        return rows, [(*key, kind) for key, found in kinds.items()
                      if found.keys() != {None} for kind in found]

    def kinds(self, key: Key) -> frozenset[str | None]:
        """The kinds the alternatives of `key` take (the rows say; {None}: external)."""
        return self._kinds.get(key, frozenset({None}))

    @property
    def remembered(self) -> frozenset[str]:
        """The states some alternative enters by history."""
        return frozenset(key[2] for key, kinds in self._kinds.items()
                         if kinds & {"shallow", "deep"})

    def bind(self, declared: Iterable[Declared], module: str) -> None:
        """The alternatives in the order the module's machine declares them, with their
        guards (once per spec; again with the same order, or for a table its rows completed
        with that order, nothing). A machine that declares another transition than the rows
        list (a generated module edited by hand) is RuntimeVersionError: regenerate the
        module."""
        rows = tuple(declared)
        listed = self.declared
        if listed == rows:
            return
        known = set(listed) if listed is not None else None
        for source, event, target, kind, guards, guarded in rows:
            if (source, event, target) not in self._given or \
                    (known is not None and (source, event, target, kind, guards, guarded)
                     not in known):
                raise RuntimeVersionError(
                    f"{module}: its machine declares `{source}` -{event}-> `{target}`"
                    f"{f' ({kind})' if kind else ''}, which its spec tables do not list: "
                    "regenerate it with `statechart build`")
        if listed is not None:
            raise RuntimeVersionError(
                f"{module}: its machine declares its spec tables' transitions in another "
                "order, or not all of them: regenerate it with `statechart build`")
        self._bound(rows)

    def _bound(self, rows: tuple[Declared, ...]) -> None:
        """The table, complete: the alternatives in declaration order (`rows`)."""
        actions = self._actions
        on: dict[tuple[str, str], list[Alternative]] = {}
        for source, event, target, kind, guards, guarded in rows:
            key = (source, event, target)
            found = on.setdefault((source, event), [])
            position = len(found)
            found.append(Alternative(
                source, event, position, target, kind, guards, guarded,
                self._in_states.get((source, event, position), ()), self._given[key],
                self._clears.get(key, ()), self._assigns.get((*key, position), _NONE),
                actions.get((source, event, position), ()) if actions else ()))
        self.on = {key: tuple(found) for key, found in on.items()}
        keyed: dict[Key, list[Alternative]] = {}
        stepped: dict[Key, list[Alternative]] = {}
        for alternatives in self.on.values():
            for alternative in alternatives:
                keyed.setdefault(alternative.key, []).append(alternative)
                stepped.setdefault((alternative.source, alternative.event,
                                    alternative.step_target), []).append(alternative)
        self.keyed = {key: tuple(group) for key, group in keyed.items()}
        self.stepped = {key: tuple(group) for key, group in stepped.items()}
        self.declared = rows

    def of_event(self, event: str) -> Iterable[Alternative]:
        """The event's alternatives, in declaration order."""
        for found in self.on.values():
            if found[0].event == event:
                yield from found

    def recorded(self, source: str, event: str, target: str, kind: str | None) -> str:
        """The target of the alternative a step of the record names (`kind` multi: by its
        first target, the transition's targets joined by spaces), as the table keys it."""
        if kind != MULTI:
            return target
        return ([a.target for a in self.stepped.get((source, event, target), ())
                 if a.kind == MULTI] or [target])[-1]
