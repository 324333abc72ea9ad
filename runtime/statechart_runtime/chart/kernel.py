"""The step kernel: what one step does to a run, computed once, then committed.

Everything that changes a run goes through here: a live run's events, completion events and
timers (`statechart_runtime.run`), and the replay that checks and upgrades stored records
(`statechart_runtime.replay`). Two pure functions and one commit:

- `select`: which transitions an event takes from a run's state (SCXML selection,
  `Chart.select`), with each alternative's limit and guard asked in turn: an alternative whose
  target would be entered beyond its `limit`, or whose guard says no, is not enabled, and
  selection goes on to the next one. What was refused, and why, comes back with the result,
  so a refusal can name its cause.
- `step`: from a run's state (`RunState`) and one set of transitions, the whole effect
  (`Effect`): states exited and entered, the next configuration, remembered history, entry
  counts, the values set and cleared (the caller's, and the constants of an `assign:`
  alternative: this is the one place values enter a step), the armed timers, the completion
  events raised, and the history steps. It mutates nothing; a step the spec does not allow
  raises `Refused`, naming why, which each caller turns into its own error (a live run's
  `MissingField` or `LimitExceeded`, the integrity check's `InvalidRecord` at `history[i]`).
- `commit`: writes an effect into a record and returns what undoes it, so an event whose
  action fails is taken back whole, whatever fields a spec has.

And the order of a macrostep's microsteps after its first (`settle`): eventless transitions
while any is enabled, then the next pending completion event, as SCXML's mainEventLoop, at
most MAX_MICROSTEPS of them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from statechart_runtime.chart import events as _events
from statechart_runtime.chart import timers as _timers
from statechart_runtime.chart.alternatives import Alternative
from statechart_runtime.chart.chart import TARGETLESS, Move, Remembered, step_target
from statechart_runtime.chart.values import JsonValue
from statechart_runtime.errors import MacrostepLoop

# What a step needs of one value it sets: the typed value, and its JSON form for the history.
Given = Mapping[str, tuple[Any, JsonValue]]
# How `select` asks an alternative's guard (only one that has guards: `Alternative.guarded`):
# python-statemachine's callbacks, the methods the guards name, or a table of answers.
Ask = Callable[[Alternative], bool]
# The most microsteps a macrostep takes after its event's own (eventless transitions and
# completion events): more means a loop whose guards keep saying yes (MacrostepLoop).
MAX_MICROSTEPS = 1_000


class Refused(Exception):
    """A step the spec does not allow. `cause`: "missing" (a transition sets `field` and no
    value was given), "limit" (`state` would be entered beyond its `limit`), "requires"
    (`state` requires `field`, and the step leaves it unset: `cleared` says whether the step
    cleared it)."""

    def __init__(self, cause: str, *, state: str | None = None, field: str | None = None,
                 limit: int | None = None, move: tuple[str, str] | None = None,
                 cleared: bool = False) -> None:
        super().__init__(cause)
        self.cause = cause
        self.state = state
        self.field = field
        self.limit = limit
        self.move = move
        self.cleared = cleared


@dataclass(slots=True)
class RunState:
    """What a step reads of a run: its configuration (document order), remembered history,
    entry counts, armed timers, and a field's current typed value (`value_of`: None when
    unset). `context_known` is False for a replay: run context is set by the application
    outside the history, so what it held at a past step is not known (its `requires` are
    checked on the record itself instead)."""

    configuration: tuple[str, ...]
    remembered: Remembered
    counts: dict[str, int]
    timers: list[_timers.Timer[Any, Any]]
    value_of: Callable[[str], Any]
    context_known: bool = True


@dataclass(frozen=True, slots=True)
class Effect:
    """What one step does to a run (`step` computes it; `commit` writes it)."""

    event: str
    at: dt.datetime
    configuration: tuple[str, ...]
    entered: tuple[str, ...]
    remembered: Remembered
    counts: dict[str, int]
    # field -> its typed value after the step (None: cleared), in the order they change
    changes: dict[str, Any]
    # per transition: (source, target, move kind or None, {field: JSON value it set})
    steps: tuple[tuple[str, str, str | None, dict[str, JsonValue]], ...]
    timers: list[_timers.Timer[Any, Any]] | None  # None: the spec has no timers
    raised: tuple[str, ...]  # states whose `done.state` event this step raised, in order


@dataclass(slots=True)
class Selection:
    """What `select` found: the transitions to take (`moves`, with their alternatives in
    `taken`), and the alternatives it passed over (`refused`: (state, target, cause, detail):
    cause "in" with the first `in:` state that is not active, "limit" with the state that is
    at its limit, or "guard" with the alternative).
    `handled` is False when no active state (nor an ancestor) has a transition for the event
    at all."""

    moves: list[Move] = field(default_factory=list)
    taken: list[Alternative] = field(default_factory=list)
    refused: list[tuple[str, str, str, object]] = field(default_factory=list)
    handled: bool = False


def over_limit(spec: Any, counts: Mapping[str, int], entered: Iterable[str]) -> str | None:
    """The first of `entered` that would be entered beyond its `limit`, or None."""
    limits = spec.limits
    for name in entered:
        if name in limits and counts[name] >= limits[name]:
            return name
    return None


def unmet(spec: Any, configuration: Iterable[str], value_of: Callable[[str], Any],
          skip: Iterable[str] = ()) -> tuple[str, str] | None:
    """The first (state, field) of `configuration` whose required field is unset, or None;
    fields in `skip` are not looked at."""
    requires = spec.requires
    skipped = frozenset(skip)
    for name in configuration:
        for required in requires.get(name, ()):
            if required not in skipped and value_of(required) is None:
                return name, required
    return None


def select(spec: Any, state: RunState, event: str, ask: Ask) -> Selection:
    """The transitions `event` takes from `state` (`Chart.select`: for each active atomic
    state in document order, the first enabled alternative on it or on an ancestor; then
    SCXML conflict resolution), over the spec's alternatives (`spec.alternatives.on`, in
    document order). Each is enabled unless one of its `in:` states is not in the
    configuration (SCXML `In()`, asked before the step), its target would be entered beyond
    a limit (asked before the guard, so a guard is not called for it) or its guard says no
    (`ask(alternative)`, for one that has guards)."""
    chart = spec.chart
    found = Selection()
    by_move: dict[Move, Alternative] = {}
    limits = spec.limits
    table = spec.alternatives.on
    active: frozenset[str] | None = None

    def enabled(name: str) -> Iterator[str | tuple[str, str]]:
        nonlocal active
        for alternative in table.get((name, event), ()):
            found.handled = True
            target, kind = alternative.target, alternative.kind
            needed = alternative.in_states
            if needed:
                if active is None:
                    active = frozenset(state.configuration)
                if not active.issuperset(needed):
                    missing = next(s for s in needed if s not in active)
                    found.refused.append((name, target, "in", missing))
                    continue
            if limits:
                # What the alternative enters (an exit set is not needed here: cheap, cached
                # for a plain transition).
                entered = chart.entry_set(name, target) if kind is None else \
                    chart.move(state.configuration, alternative.move, state.remembered)[1]
                beyond = over_limit(spec, state.counts, entered)
                if beyond is not None:
                    found.refused.append((name, target, "limit", beyond))
                    continue
            if alternative.guarded and not ask(alternative):
                found.refused.append((name, target, "guard", alternative))
                continue
            by_move[alternative.move] = alternative
            yield target if kind is None else (target, kind)

    found.moves = chart.select(state.configuration, enabled)
    found.taken = [by_move[m] for m in found.moves]
    return found


def settle(spec: Any, event: str, active: Callable[[], Sequence[str]], raised: list[str],
           take: Callable[[str], bool]) -> None:
    """The rest of a macrostep after `event`'s microstep (SCXML mainEventLoop, XState's
    macrostep): while an eventless transition of the active states may be enabled, one
    microstep of them (`take(ALWAYS)`: selected as any event's, `select`); when none is,
    the first pending completion event of `raised` whose state is still active
    (`take("done.state.X")`). `take` says whether it took a microstep (it adds the
    completion events that one raised to `raised`); `active()` is the configuration now.
    Raises MacrostepLoop on a microstep beyond MAX_MICROSTEPS."""
    eventless = spec.alternatives.eventless
    steps = 0
    while True:
        if eventless and not eventless.isdisjoint(active()) and take(_events.ALWAYS):
            pass
        else:
            while raised:
                state = raised.pop(0)
                # One whose state a microstep left selects nothing (SCXML drops it).
                if state in active() and take(_events.done_event(state)):
                    break
            else:
                return
        steps += 1
        if steps > MAX_MICROSTEPS:
            raise MacrostepLoop(event, steps, tuple(active()))


def in_history_order(moves: Sequence[Move], taken: Sequence[Alternative] = ()
                     ) -> tuple[Sequence[Move], Sequence[Alternative]]:
    """`moves` (and their alternatives, `taken`) in the order a step takes and records them."""
    if len(moves) < 2 or not any(m[2:] == (TARGETLESS,) for m in moves):
        return moves, taken
    # A targetless transition conflicts with none, so another one of the microstep may exit
    # its source: it goes first (its values too), so that the history, replayed one step at
    # a time, finds each step's source active (docs/semantics.md).
    order = sorted(range(len(moves)), key=lambda i: moves[i][2:] != (TARGETLESS,))
    return [moves[i] for i in order], [taken[i] for i in order] if taken else taken


def step(spec: Any, state: RunState, event: str, moves: Sequence[Move], given: Given,
         at: dt.datetime, taken: Sequence[Alternative] = ()) -> Effect:
    """The effect of taking `moves` (a conflict-free set, as `select` returns) on `event` at
    `at`, with the values `given` (field -> (typed, JSON)); raises `Refused` for a step the
    spec does not allow. `taken`: each move's alternative (`Selection.taken`), which says
    what it sets, clears and assigns (its `assign:` constants replace a value given for the
    same field); empty: each move's is the first alternative with its source, event and
    target. Pure: `state` is not changed."""
    chart = spec.chart
    configuration = state.configuration
    kinds = any(len(m) == 3 for m in moves)  # history, internal or targetless moves
    if not taken:
        keyed = spec.alternatives.keyed
        taken = [keyed[(m[0], event, m[1])][0] for m in moves]
    moves, taken = in_history_order(moves, taken)
    for move, alternative in zip(moves, taken, strict=True):
        for name in alternative.sets:
            if name not in given:
                raise Refused("missing", field=name, move=(move[0], move[1]))
    remembered = state.remembered
    # A flat spec's configuration is its one state: the common case, kept cheap.
    if spec.flat:
        after: tuple[str, ...] = (moves[0][1],)
        entered: tuple[str, ...] = () if moves[0][2:] == (TARGETLESS,) else after
    elif kinds and all(m[2:] == (TARGETLESS,) for m in moves):
        # Targetless moves exit and enter nothing (so nothing is remembered either): the
        # configuration stays as it is.
        after, entered = tuple(configuration), ()
    elif chart.remembers or kinds:
        after, entered, remembered = chart.step(configuration, moves, remembered)
    else:
        plain = [(m[0], m[1]) for m in moves]
        after = chart.next_configuration(configuration, plain)
        entered = chart.sort(name for s, t in plain for name in chart.entry_set(s, t)) \
            if len(plain) > 1 else chart.entry_set(*plain[0])
    counts = state.counts
    if spec.limits:
        beyond = over_limit(spec, counts, entered)
        if beyond is not None:
            raise Refused("limit", state=beyond, limit=spec.limits[beyond])
    # Per transition, the fields it clears (the `clear:` of each state it exits, then its
    # own), then those it sets: a transition can replace a value.
    changes: dict[str, Any] = {}
    steps = []
    for move, alternative in zip(moves, taken, strict=True):
        if spec.clearing:
            source, target = move[0], move[1]
            exited = chart.exit_set(configuration, source, target) if len(move) == 2 else \
                chart.move(configuration, move, state.remembered)[0]
            for name in exited:
                for cleared in spec.exit_clears.get(name, ()):
                    changes[cleared] = None
            for cleared in alternative.clears:
                changes[cleared] = None
        values: dict[str, JsonValue] = {}
        for name in alternative.sets:
            typed, as_json = given[name]
            changes.pop(name, None)  # set after cleared: the order the record sees them
            changes[name] = typed
            values[name] = as_json
        for name, (typed, as_json) in alternative.assigns.items():
            changes.pop(name, None)
            changes[name] = typed
            values[name] = as_json
        # A multi-target step records its first target (the spec maps it back: replay).
        steps.append((move[0], step_target(move), move[2] if len(move) == 3 else None, values))
    if spec.requires:
        def value_after(name: str) -> Any:
            return changes[name] if name in changes else state.value_of(name)
        # Run context a replay cannot know (see RunState) is not looked at, unless the
        # step itself sets or clears it.
        unknown = () if state.context_known else spec.context - changes.keys()
        found = unmet(spec, after, value_after, unknown)
        if found is not None:
            raise Refused("requires", state=found[0], field=found[1],
                          cleared=found[1] in changes)
    if spec.counted:
        counts = dict(counts)
        for name in entered:
            if name in counts:
                counts[name] += 1
    armed = None
    if spec.timers:
        # A replay reads a run-context deadline as the record holds it now: the application
        # may have moved it since the step set it (`update` re-arms the timer).
        settled = spec.context if not state.context_known else ()

        def deadline(name: str) -> Any:
            if name in changes and name not in settled:
                return changes[name]
            return state.value_of(name)
        running = state.timers
        if kinds and event in spec.internal:
            # A timer taken by a transition that does not exit its state (targetless,
            # internal) has fired all the same: it is not armed any more.
            running = [t for t in running if t.event.value != event]
        armed = _timers.rearm(spec, running, after, entered, at, changes, deadline)
    raised = tuple(chart.raised(chart.sort(entered), after)) if chart.completes else ()
    return Effect(event, at, after, entered, remembered, counts, changes, tuple(steps), armed,
                  raised)


def commit(spec: Any, record: Any, effect: Effect, step_class: Callable[..., Any]
           ) -> Callable[[], None]:
    """Write `effect` into `record` (its status, configuration, counts, remembered history,
    timers, last transition time, fields, and the new history steps, made by `step_class`:
    the record's `<Name>Step`); returns the function that puts the record back as it was."""
    states = spec.states_by_name
    attrs = spec.attrs
    writes: dict[str, Any] = {
        "status": spec.reported(effect.configuration) if spec.status_of
        else states[effect.configuration[0]],
        "lastTransitionAt": effect.at,
    }
    if not spec.flat:
        writes["configuration"] = [states[name] for name in effect.configuration]
    if spec.counted:
        writes["counts"] = effect.counts
    if effect.timers is not None:
        writes["timers"] = effect.timers
    if spec.chart.remembers:
        writes["remembered"] = effect.remembered
    for name, value in effect.changes.items():
        writes[attrs[name]] = value
    before = {attr: getattr(record, attr) for attr in writes}
    history = record.history
    length = len(history)
    for attr, value in writes.items():
        setattr(record, attr, value)
    event = spec.event_member(effect.event)  # a family's member by its full name
    at = effect.at
    history.extend(step_class(event, states[source], states[target], at, values, kind)
                   for source, target, kind, values in effect.steps)

    def undo() -> None:
        for attr, value in before.items():
            setattr(record, attr, value)
        del history[length:]

    return undo
