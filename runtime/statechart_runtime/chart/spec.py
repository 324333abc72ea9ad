"""`SpecTables`: everything a generated module tells the runtime about its spec, as data.

A generated module builds one `SpecTables` at import from literal tables (states, transitions,
fields, limits, ...) and hands it to its record and run classes. The runtime derives the rest
(the state tree, each transition's effect) through `statechart_runtime.semantics`.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from typing import Any

from statechart_runtime.chart.alternatives import AlternativeRow, AlternativeTable
from statechart_runtime.chart.chart import Chart, StateRow
from statechart_runtime.chart.events import ALWAYS, FamilyEvent, family_key, is_done
from statechart_runtime.chart.timers import GeneratedTimerRow, TimerTable
from statechart_runtime.chart.values import FieldCodec, JsonValue
from statechart_runtime.errors import InvalidRecord, LimitExceeded, MissingField

# (source, event, target, fields the caller gives), one row per distinct (source, event,
# target); API 1.4: a key with an `assign:` alternative adds ((position among the event's
# alternatives on the source, {field: JSON constant}), ...) for each of its alternatives.
TransitionRow = tuple[Any, ...]
# {from version: ({old state: new state}, {old field: new field, or None when dropped})}
Migrations = Mapping[int, tuple[Mapping[str, str], Mapping[str, str | None]]]


class SpecTables:
    __slots__ = (
        "alternatives",
        "attrs",
        "chart",
        "clearing",
        "codec",
        "compiler",
        "context",
        "context_attrs",
        "counted",
        "counters",
        "defaults",
        "event_enum",
        "event_ids",
        "events_by_name",
        "exit_clears",
        "fills",
        "flat",
        "history_defaults",
        "history_ids",
        "history_targets",
        "initial_counts",
        "internal",
        "invalid",
        "limit",
        "limits",
        "migrations",
        "missing",
        "name",
        "requires",
        "sha256",
        "state_enum",
        "states_by_name",
        "status_enum",
        "status_of",
        "statuses_by_name",
        "tags",
        "timers",
        "version",
    )

    def __init__(
        self,
        *,
        name: str,
        version: int,
        sha256: str,
        compiler: str,
        states: Sequence[StateRow],
        initial: str,
        transitions: Sequence[TransitionRow] = (),
        state_enum: type[enum.Enum],
        event_enum: type[enum.Enum],
        fields: Mapping[str, str | type[enum.Enum]] | None = None,
        limits: Mapping[str, int] | None = None,
        requires: Mapping[str, tuple[str, ...]] | None = None,
        migrations: Migrations | None = None,
        tags: Mapping[str, tuple[str, ...]] | None = None,  # tag -> the states it is on
        errors: tuple[type[InvalidRecord], type[LimitExceeded], type[MissingField]] = (
            InvalidRecord, LimitExceeded, MissingField),
        event_ids: Mapping[str, str] | None = None,
        attrs: Mapping[str, str] | None = None,
        internal: Mapping[str, str] | None = None,
        timers: Sequence[GeneratedTimerRow] | None = None,
        history: Sequence[tuple[str, str, str, str | None]] = (),
        history_ids: Mapping[str, str] | None = None,
        context: Sequence[str] = (),
        defaults: Mapping[str, JsonValue] | None = None,
        clears: Mapping[tuple[str, str, str], tuple[str, ...]] | None = None,
        exit_clears: Mapping[str, tuple[str, ...]] | None = None,
        fills: Mapping[int, tuple[str, ...]] | None = None,
        statuses: Mapping[str, str] | None = None,
        status_enum: type[enum.Enum] | None = None,
        counters: Mapping[str, str] | None = None,
        in_states: Mapping[tuple[str, str, int], tuple[str, ...]] | None = None,
        history_defaults: Mapping[tuple[str, str], str] | None = None,
        alternatives: Sequence[AlternativeRow] | None = None,
    ) -> None:
        """`event_ids` and `attrs` hold the spec's names that the generated module maps to
        other Python names (docs/generated-code.md, "Names"): event -> python-statemachine
        event id, record field -> attribute. Absent names are their own Python names.

        `internal`: the events the run raises itself (`done.state.X`, timers) -> the state
        that declares them. `history`: (source, event, target, KIND) for every transition of
        a kind other than external (KIND `shallow`|`deep` for a history transition, else
        `internal` or `targetless`, whose target is its source), and None for a plain
        alternative with the same key (a step of the record says which one it took);
        `history_ids`: `TARGET.KIND` -> the id of the machine's HistoryState for it.
        `timers`: the `after:` timers (statechart_runtime.timers), whose events are internal
        too (they need not be listed in `internal`).

        Run context and status (docs/spec-format.md): `context` fields the application sets;
        `defaults` (field -> JSON value) a new run starts with; `clears` ((source, event,
        target) -> fields the transition unsets) and `exit_clears` (state -> fields unset
        when it is exited); `fills` (version -> fields its migration fills with their
        default); `statuses` (state -> the status it reports) with `status_enum`; `counters`
        (record key -> the state whose entries it reports).

        `in_states`: (source, event, position among the event's alternatives on the source)
        -> the states that must all be active for that alternative to be enabled (`in:`,
        asked by `kernel.select`). The rows, `history`, `clears` and `in_states` are kept as
        one table, `alternatives` (statechart_runtime.chart.alternatives: one `Alternative`
        each). `history_defaults` (API 1.5): (target, history kind) -> the
        state a history transition enters while the target remembers nothing
        (`history_default:`; else the target's default entry).

        `alternatives` (API 1.7), in place of `transitions` and `history`: one row per
        alternative, in the order the module's machine declares them, with its kind, guard,
        actions and constants (`chart.alternatives.AlternativeRow`): the table of
        alternatives is then complete without the machine."""
        self.name = name
        self.version = version
        self.sha256 = sha256
        self.compiler = compiler
        self.internal: dict[str, str] = dict(internal or {})
        self.internal.update((row[1], row[0]) for row in timers or ())
        self.history_ids: dict[str, str] = dict(history_ids or {})
        self.history_defaults = dict(history_defaults or {})
        # The machine's HistoryState id -> the state it stands for (a step's target).
        self.history_targets: dict[str, tuple[str, str]] = {
            hid: tuple(key.rsplit(".", 1)) for key, hid in self.history_ids.items()}  # type: ignore[misc]
        fields = fields or {}
        self.invalid, self.limit, self.missing = errors
        # A field's type is a type name, or the enum class of an `enum` field.
        self.codec = FieldCodec(
            {f: t if isinstance(t, str) else "enum" for f, t in fields.items()},
            {f: t for f, t in fields.items() if not isinstance(t, str)}, self.invalid)
        # Every transition alternative: the one table of them (chart.alternatives), complete
        # once the module's run class binds the order its machine declares them in.
        self.alternatives = AlternativeTable(transitions, history, in_states or {},
                                             clears or {}, self._constant, ALWAYS,
                                             alternatives)
        self.chart = Chart(states, initial,
                           completes={state for event, state in self.internal.items()
                                      if is_done(event)},
                           remembers=self.alternatives.remembered,
                           history_defaults=history_defaults)
        self.flat = all(row[1] is None for row in states)
        self.state_enum: Any = state_enum
        self.event_enum: Any = event_enum
        # Spec name -> member: a member's name may be a mapped one, its value is the name.
        self.states_by_name: dict[str, Any] = {m.value: m for m in state_enum}
        self.events_by_name: dict[str, Any] = {m.value: m for m in event_enum}
        self.event_ids: dict[str, str] = dict(event_ids or {})
        for row in timers or ():  # a timer's machine event: `_sc_` + its enum member's name
            self.event_ids.setdefault(row[1], "_sc_" + self.events_by_name[row[1]].name)
        self.attrs: dict[str, str] = {f: f for f in fields}
        self.attrs.update(attrs or {})
        self.limits = dict(limits or {})
        self.requires = dict(requires or {})
        self.migrations = dict(migrations or {})
        self.timers = TimerTable(timers or ())
        self.tags = {tag: frozenset(states) for tag, states in (tags or {}).items()}
        self._context_tables(context, defaults, bool(clears), exit_clears, fills)
        self._status_tables(statuses, status_enum, counters)
        self.initial_counts: dict[str, int] = dict.fromkeys(self.counted, 0)
        for state in self.chart.initial_configuration():
            if state in self.initial_counts:
                self.initial_counts[state] += 1

    def listed(self, event: str) -> str | None:
        """The event of the spec's list whose transitions take `event`: `event` itself when
        the spec lists it, the listed event whose family it is a member of
        (`events.family_key`: `error.tool` for `error.tool.ratelimit`), else None (unknown)."""
        if event in self.events_by_name:
            return event
        return family_key(event, self.events_by_name, self.internal)

    def event_member(self, event: str) -> Any:
        """What a history step holds for `event`: its enum member, or for a member of a family
        the spec lists (`listed`) a FamilyEvent with its full name."""
        member = self.events_by_name.get(event)
        if member is not None:
            return member
        key = self.listed(event)
        if key is None:
            raise KeyError(event)
        return FamilyEvent(event, self.events_by_name[key])

    def _constant(self, name: str, raw: JsonValue) -> tuple[Any, JsonValue]:
        """An `assign:` constant as a step holds it: typed, and in the JSON a caller's value
        of the field takes (a time as `time_text` writes it)."""
        typed = self.codec.from_json(name, raw, name)
        return typed, self.codec.to_json(name, typed)

    # -- run context and status (docs/spec-format.md "Run context", "Status") ----------------
    def _context_tables(self, context: Sequence[str],
                        defaults: Mapping[str, JsonValue] | None,
                        clears: bool, exit_clears: Mapping[str, tuple[str, ...]] | None,
                        fills: Mapping[int, tuple[str, ...]] | None) -> None:
        self.context = frozenset(context)
        # The facade's keyword (the field's attribute) -> the field.
        self.context_attrs = {self.attrs[f]: f for f in context}
        self.defaults = dict(defaults or {})
        self.exit_clears = dict(exit_clears or {})
        self.clearing = clears or bool(self.exit_clears)
        self.fills = dict(fills or {})

    def _status_tables(self, statuses: Mapping[str, str] | None,
                       status_enum: type[enum.Enum] | None,
                       counters: Mapping[str, str] | None) -> None:
        self.status_enum: Any = status_enum if statuses and status_enum else self.state_enum
        self.statuses_by_name: dict[str, Any] = {m.value: m for m in self.status_enum}
        # state -> (depth, status member) for states that name a status: the deepest wins.
        self.status_of: dict[str, tuple[int, Any]] = {
            state: (len(self.chart.ancestors(state)), self.statuses_by_name[status])
            for state, status in (statuses or {}).items()}
        # A record with a status vocabulary keeps its configuration: `status` no longer
        # names a state.
        self.flat = self.flat and not self.status_of
        self.counters = dict(counters or {})
        self.counted = frozenset({*self.limits, *self.counters.values()})

    def reported(self, configuration: Sequence[str]) -> Any:
        """The status a record in `configuration` reports: the status of its deepest state
        that names one (the first in document order among equals), else its top-level
        state."""
        if not self.status_of:
            return self.states_by_name[configuration[0]]
        best: tuple[int, Any] | None = None
        for name in configuration:
            found = self.status_of.get(name)
            if found is not None and (best is None or found[0] > best[0]):
                best = found
        return best[1] if best is not None else self.statuses_by_name[configuration[0]]

    def configuration_names(self, record: Any) -> tuple[str, ...]:
        """The record's configuration as names (a flat spec's record keeps only `status`)."""
        if self.flat:
            return (record.status.value,)
        return tuple(state.value for state in record.configuration)
