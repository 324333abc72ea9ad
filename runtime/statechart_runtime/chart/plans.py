"""Plans: one event's microstep from one configuration, worked out once per spec.

Most events of a live run select the same transitions from the same configuration every time
(no guard asked, no limit or timer read): what `kernel.select` and `kernel.step` compute for
them, and what `kernel.commit` writes, is then the same but for the event's values and time.
A `Plan` keeps that part (the next configuration and its record members, the transitions'
history entries, the fields each clears, sets and assigns, the `requires:` to check), so that
a run without a machine takes such an event in a few record writes, then calls its actions
(`Run._take_planned`) instead of selecting and stepping it again (issue 31: in-memory events
toward XState's speed).

A plan is made only where it cannot differ from the kernel's answer: `plan` returns None for
a spec with timers, remembered history or eventless transitions, an event that is a family's
member, a selection that asked a guard or looked at a transition into a state with a
`limit:`, and a step that enters a counted state or raises completion events. Those events
take the kernel's path, as before.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from statechart_runtime.chart import kernel
from statechart_runtime.chart.alternatives import Alternative
from statechart_runtime.chart.values import JsonValue

# At most this many (configuration, event) pairs are planned per spec: a chart with many
# parallel regions has many configurations, and the rest take the kernel's path.
MAX_PLANS = 4096


@dataclass(frozen=True, slots=True)
class PlannedMove:
    """One transition of a plan: its history entry's source, target and kind (record
    members), and the fields it clears, sets (the caller's) and assigns (constants)."""

    source: Any
    target: Any
    kind: str | None
    clears: tuple[str, ...]
    sets: tuple[str, ...]
    assigns: tuple[tuple[str, tuple[Any, JsonValue]], ...]


@dataclass(frozen=True, slots=True)
class Plan:
    """`event`'s microstep from one configuration (see the module's docstring)."""

    event: Any  # the history entries' event member
    configuration: tuple[str, ...]  # after the step, in document order
    status: Any  # the record's status after the step
    members: tuple[Any, ...] | None  # the record's configuration members (None: a flat spec)
    counted: bool  # the spec counts entries: the record gets its counts anew (unchanged)
    moves: tuple[PlannedMove, ...]
    needs: frozenset[str]  # the fields the caller must give
    required: tuple[tuple[str, str], ...]  # (state, field) of `requires:` after the step
    # For a class with actions (`Run._act`'s order): the states exited, deepest first (none
    # when the step exits and enters nothing), the alternatives in the order selected, and
    # the states entered, in document order.
    exited: tuple[str, ...]
    taken: tuple[Alternative, ...]
    entered: tuple[str, ...]

    def changes(self, given: Mapping[str, tuple[Any, JsonValue]]
                ) -> tuple[dict[str, Any], list[dict[str, JsonValue]]]:
        """The fields the step changes (typed, None: cleared, in the order `kernel.step`
        changes them) and each transition's values for its history entry."""
        changes: dict[str, Any] = {}
        values: list[dict[str, JsonValue]] = []
        for move in self.moves:
            for name in move.clears:
                changes[name] = None
            these: dict[str, JsonValue] = {}
            for name in move.sets:
                typed, as_json = given[name]
                changes.pop(name, None)
                changes[name] = typed
                these[name] = as_json
            for name, (typed, as_json) in move.assigns:
                changes.pop(name, None)
                changes[name] = typed
                these[name] = as_json
            values.append(these)
        return changes, values


def plannable(spec: Any) -> bool:
    """Whether any event of `spec` can have a plan: none reads timers or remembered history,
    and no eventless transition follows a step."""
    return not (spec.timers or spec.chart.remembers or spec.alternatives.eventless)


def counts_read(spec: Any, configuration: tuple[str, ...], event: str) -> bool:
    """Whether selecting `event` from `configuration` may read the entry counts: one of the
    alternatives it looks at enters a state with a `limit:` (or is not a plain transition,
    whose entry set depends on more than its source and target)."""
    limits = spec.limits
    if not limits:
        return False
    table, chart = spec.alternatives.on, spec.chart
    return any(alternative.kind is not None
               or not limits.keys().isdisjoint(chart.entry_set(name, alternative.target))
               for name in configuration for alternative in table.get((name, event), ()))


def plan(spec: Any, configuration: tuple[str, ...], event: str) -> Plan | None:
    """`event`'s plan from `configuration` (see the module's docstring), or None when the
    kernel must take it each time. The step is worked out as if every field were given and
    set; what that assumes (the caller's values, `requires:`) the plan keeps to check."""
    if not plannable(spec) or spec.listed(event) != event \
            or counts_read(spec, configuration, event):
        return None
    asked = False

    def ask(alternative: Alternative) -> bool:
        nonlocal asked
        asked = True
        return False

    state = kernel.RunState(configuration, {}, {}, [], lambda name: True)
    selection = kernel.select(spec, state, event, ask)
    if asked or not selection.moves:
        return None
    every_field = {name: (True, True) for name in spec.attrs}
    try:
        effect = kernel.step(spec, state, event, selection.moves, every_field,
                             dt.datetime.min, selection.taken)
    except kernel.Refused:
        return None
    if effect.raised or not spec.counted.isdisjoint(effect.entered):
        return None  # completion events follow, or the step counts an entry
    chart = spec.chart
    moves, taken = kernel.in_history_order(selection.moves, selection.taken)
    states = spec.states_by_name
    planned = []
    for move, alternative, entry in zip(moves, taken, effect.steps, strict=True):
        clears: tuple[str, ...] = ()
        if spec.clearing:
            left = chart.exit_set(configuration, move[0], move[1]) if len(move) == 2 else \
                chart.move(configuration, move, {})[0]
            clears = tuple(cleared for name in left
                           for cleared in spec.exit_clears.get(name, ())) + alternative.clears
        planned.append(PlannedMove(states[entry[0]], states[entry[1]], entry[2], clears,
                                   tuple(alternative.sets),
                                   tuple(alternative.assigns.items())))
    after = effect.configuration
    exited: tuple[str, ...] = ()
    if effect.entered or after != configuration:
        kept, entered = set(after), set(effect.entered)
        exited = tuple(sorted((s for s in configuration if s not in kept or s in entered),
                              key=chart.order.__getitem__, reverse=True))
    return Plan(
        event=spec.event_member(event),
        configuration=after,
        status=spec.reported(after) if spec.status_of else states[after[0]],
        members=None if spec.flat else tuple(states[name] for name in after),
        counted=bool(spec.counted),
        moves=tuple(planned),
        needs=frozenset(name for move in planned for name in move.sets),
        required=tuple((name, required) for name in after
                       for required in spec.requires.get(name, ())),
        exited=exited,
        taken=tuple(selection.taken),
        entered=tuple(effect.entered))
