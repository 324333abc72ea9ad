"""The runs of a generated Run class, explored step by step: what `statechart_runtime.testing`
builds its paths and its hypothesis strategy on.

A step here is what a caller does to a run: send one event (`Run.send`), or let the clock run
to the next armed timer (`Run.fire_due` at its due time). Its effect is computed by the step
kernel (`statechart_runtime.kernel`: `select`, then `step`), exactly as a live run computes it,
with the completion events a step raises taken in the same step and the due timers fired in
due order; so a path found here is one the generated class takes. Nothing here runs
python-statemachine: a `Snapshot` is the part of a run a step reads.

What the caller chooses at each step, and the explorer enumerates:
- the event (every sendable event some active state handles);
- the guards' answers, one answer per guard name for the whole step (as a `model=` object
  that answers from a table would give them): each guard asked is tried both ways;
- the values: a typed placeholder per field the step sets (`placeholder`), a time one hour
  after the step for a `datetime`, so a deadline is never due by the next event;
- the time: events are sent at the time of the step before, so a timer fires only when a
  clock step runs the clock to the earliest one's due time.

Runs that differ only in their times and values are one configuration of the exploration
(`Snapshot.key`): the configuration, remembered history, entry counts of limited states, which
of the fields a step reads (`requires`, deadlines) are set, and the armed timers in due order.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from statechart_runtime.chart import events as _events
from statechart_runtime.chart import kernel
from statechart_runtime.chart import timers as _timers
from statechart_runtime.chart.alternatives import Alternative
from statechart_runtime.chart.chart import step_target
from statechart_runtime.chart.spec import SpecTables
from statechart_runtime.errors import MacrostepLoop
from statechart_runtime.run import driver

START = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)  # the clock of every explored run
DEADLINE = dt.timedelta(hours=1)  # how far after its step a placeholder time lies

# One microstep as a step takes it: (source, event, target, step kind or None, position
# of the alternative among the event's alternatives on its source).
Micro = tuple[str, str, str, str | None, int]
# A guard asked during a step: (state, event, position of the alternative, guard, answer).
Asked = tuple[str, str, int, str, bool]


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What a step reads of a run (`kernel.RunState`) and its time."""

    configuration: tuple[str, ...]
    remembered: Mapping[str, tuple[str, ...]]
    counts: Mapping[str, int]
    timers: tuple[_timers.Timer[Any, Any], ...]
    values: Mapping[str, Any]  # field -> typed value (absent: unset)
    at: dt.datetime


@dataclass(frozen=True, slots=True)
class Move:
    """One step: an `event` sent (`kind` "event") or the clock run to `at` ("clock", which
    fires `fired`, the timer events taken in order). `refused`: the event was refused (every
    alternative's guard said no); the run did not change."""

    kind: Literal["event", "clock"]
    event: str | None
    values: Mapping[str, Any]
    guards: Mapping[str, bool]
    at: dt.datetime
    micro: tuple[Micro, ...]
    entered: tuple[str, ...]
    asked: tuple[Asked, ...]
    fired: tuple[str, ...] = ()
    refused: bool = False


@dataclass(slots=True)
class Space:
    """A Run class's spec as the explorer asks it (made once per class). `run_class` may be
    the spec's bound `SpecTables` instead: the exploration reads nothing else of the class."""

    run_class: Any
    spec: Any = field(init=False)  # its alternatives: `spec.alternatives` (SpecTables)
    sendable: list[str] = field(init=False)
    watched: frozenset[str] = field(init=False)  # fields whose being set changes a step
    watched_order: tuple[str, ...] = field(init=False)  # the same, sorted
    # What a new run's constructor takes (its eventless steps, as `start` found them): the
    # microsteps, and the states it was in (its initial ones, those the steps entered);
    # every path starts after them.
    opening: tuple[tuple[Micro, ...], tuple[str, ...]] = field(init=False, default=((), ()))
    # Every step computed so far (`_branches`), by what it reads of its snapshot: a step
    # taken again from a snapshot that reads the same is looked up, not computed (the walk
    # of `paths` retakes its routes from the snapshots it reaches).
    known: dict[tuple[object, ...], list[_Known]] = field(init=False, default_factory=dict)
    # An event's placeholders at a time (`placeholder`), and their typed and JSON forms.
    placed: dict[tuple[str, dt.datetime], tuple[dict[str, Any], kernel.Given]] = field(
        init=False, default_factory=dict)

    def __post_init__(self) -> None:
        if isinstance(self.run_class, SpecTables):  # the tables alone (`statechart paths`)
            spec = self.spec = self.run_class
        else:
            from statechart_runtime.run.run import spec_of

            spec = self.spec = spec_of(self.run_class)
        self.sendable = [e for e in spec.events_by_name if e not in spec.internal]
        self.watched = frozenset({f for fields in spec.requires.values() for f in fields}
                                 | set(spec.timers.by_field))
        self.watched_order = tuple(sorted(self.watched))

    # -- values ------------------------------------------------------------------------------

    def placeholder(self, name: str, at: dt.datetime) -> Any:
        """A value of field `name`'s type for a step at `at`: the field's name in angle
        brackets, 0, 0.0, True, the enum's first value, `at` plus one hour, or for a `json`
        field an object naming it."""
        codec = self.spec.codec
        kind = codec.types[name]
        if kind == "enum":
            return next(iter(codec.enums[name]))
        if kind == "datetime":
            return at + DEADLINE
        return {"string": f"<{name}>", "integer": 0, "number": 0.0, "boolean": True,
                "json": {"placeholder": name}}[kind]

    def context(self) -> dict[str, Any]:
        """The run context a new run is given: the context fields a state requires that no
        transition sets (the application sets them, outside the run's steps)."""
        spec = self.spec
        set_by_steps = {f for fields in spec.alternatives.fields.values() for f in fields}
        return {f: self.placeholder(f, START) for f in sorted(spec.context)
                if f in self.watched and f not in set_by_steps}

    def start(self) -> Snapshot:
        """A new run, as `Run.__init__` makes it, started at START with `context()`."""
        spec = self.spec
        initial = spec.chart.initial_configuration()
        values = dict(self.context())
        armed = _timers.rearm(spec, [], initial, initial, START, (), values.get) \
            if spec.timers else []
        snap = Snapshot(initial, {}, dict(spec.initial_counts), tuple(armed), values, START)
        if not driver.opens(spec):
            return snap
        # The eventless transitions the initial states enable, taken by the constructor with
        # every guard saying yes (as `follow`'s model answers before the first step).
        steps = _Steps(self, snap, _answerer({}))
        steps.first = False  # no event of its own
        driver.macrostep(spec, driver.OPENING, None, steps.take, steps.configuration,
                         steps.raised)
        self.opening = (tuple(steps.micro), spec.chart.sort((*initial, *steps.entered)))
        return steps.snap

    def key(self, snap: Snapshot) -> tuple[object, ...]:
        limits, values, counts = self.spec.limits, snap.values, snap.counts
        # (each part without a generator when there is nothing to look at: the exploration
        # keys every step it takes)
        return (snap.configuration,
                tuple(sorted(snap.remembered.items())) if snap.remembered else (),
                tuple(min(counts.get(s, 0), n) for s, n in limits.items()) if limits else (),
                tuple(f for f in self.watched_order if f in values) if values else (),
                tuple((t.event.value, t.declined) for t in snap.timers) if snap.timers else ())

    # -- steps -------------------------------------------------------------------------------

    def moves(self, snap: Snapshot, refusals: bool = False) -> Iterator[tuple[Move, Snapshot]]:
        """Every step a caller can take from `snap`, each guard answer tried both ways (with
        `refusals`, also the events every guard refuses), with the snapshot it leads to."""
        chart = self.spec.chart
        if chart.ended(snap.configuration):
            return
        active = set(snap.configuration)
        sources = self.spec.alternatives.sources
        for event in self.sendable:
            if active.isdisjoint(sources.get(event, ())):
                continue
            for branch in self._branches(snap, event):
                if branch.move is not None and (refusals or not branch.move.refused):
                    yield branch.move, branch.landed(snap)
        if any(not t.declined for t in snap.timers):
            for branch in self._branches(snap, None):
                if branch.move is not None:
                    yield branch.move, branch.landed(snap)

    def send(self, snap: Snapshot, event: str, guards: Mapping[str, bool],
             values: Mapping[str, Any] | None = None) -> tuple[Move, Snapshot] | None:
        """`event` sent to `snap` with these guard answers (a guard not in `guards` says
        yes), and `values` (default: placeholders); None when the run refuses it for another
        reason than its guards (a limit, a required field)."""
        if values is None:
            return self._answered(snap, event, guards)
        try:
            move, after, _ = self._event(snap, event, _answerer(guards), values)
        except (kernel.Refused, MacrostepLoop):
            return None
        return move, after

    def advance(self, snap: Snapshot, guards: Mapping[str, bool]
                ) -> tuple[Move, Snapshot] | None:
        """The clock run to the earliest armed timer (see `_clock`)."""
        return self._answered(snap, None, guards)

    def _answered(self, snap: Snapshot, event: str | None, guards: Mapping[str, bool]
                  ) -> tuple[Move, Snapshot] | None:
        """The branch of `event` (None: the clock) whose guards answer as `guards` says."""
        for branch in self._branches(snap, event):
            if all(guards.get(name, True) == answer for name, answer in branch.used.items()):
                return None if branch.move is None else (branch.move, branch.landed(snap))
        return None  # not reached: the branches' answers cover every answer

    def _branches(self, snap: Snapshot, event: str | None) -> list[_Branch]:
        """The step `event` (None: the clock) takes from `snap` under every set of answers
        that makes it go differently: first with every guard saying yes, then with each
        guard it asked saying no in turn (a decision tree over the guards, in the order the
        step asks them); a branch the spec refuses (a limit, a required field: the run
        refuses it too) has no move.

        Computed once per thing a step reads (`_Known`): the configuration, remembered
        history, entry counts, armed timers and time of the snapshot, and the values of the
        fields the steps asked for (`kernel.RunState.value_of`; the values a step sets are a
        function of its time, `placeholder`). Another snapshot that agrees on those takes
        the same steps, to the same snapshots but for the fields the steps did not change."""
        values = snap.values
        where = (event, snap.configuration,
                 tuple(sorted(snap.remembered.items())) if snap.remembered else (),
                 tuple(sorted(snap.counts.items())) if snap.counts else (),
                 snap.timers, snap.at)
        known = self.known.get(where)
        if known is None:
            known = self.known[where] = []
        for entry in known:
            if all(values.get(name) == value for name, value in entry.reads):
                return entry.branches
        reads: dict[str, Any] = {}
        branches: list[_Branch] = []
        pending: list[dict[str, bool]] = [{}]
        while pending:
            used = pending.pop()

            def ask(name: str, used: dict[str, bool] = used) -> bool:
                if name not in used:
                    used[name] = True
                    pending.append({**used, name: False})
                return used[name]

            try:
                move, after, changes = self._event(snap, event, ask, None, reads) \
                    if event is not None else self._clock(snap, ask, reads)
            except (kernel.Refused, MacrostepLoop):
                branches.append(_Branch(used, None, values, snap, ()))
            else:
                branches.append(_Branch(used, move, values, after, changes))
        known.append(_Known(tuple(reads.items()), branches))
        return branches

    def _event(self, snap: Snapshot, event: str, ask: Callable[[str], bool],
               values: Mapping[str, Any] | None = None, reads: dict[str, Any] | None = None
               ) -> tuple[Move, Snapshot, tuple[tuple[str, Any], ...]]:
        spec = self.spec
        if values is None:  # the placeholders: the same for every step at that time
            placed = self.placed.get((event, snap.at))
            if placed is None:
                given = {f: self.placeholder(f, snap.at)
                         for f in spec.alternatives.fields.get(event, ())}
                placed = self.placed[(event, snap.at)] = (
                    given, {f: (v, spec.codec.to_json(f, v)) for f, v in given.items()})
            given, typed = placed
        else:
            given = dict(values)
            typed = {f: (v, spec.codec.to_json(f, v)) for f, v in given.items()}
        steps = _Steps(self, snap, ask, reads)
        taken = driver.macrostep(spec, event, typed, steps.take, steps.configuration,
                                 steps.raised)
        needed: dict[str, Any] = {}
        for source, taken_on, _, _, position in steps.micro:
            if taken_on != event:  # the rest of the macrostep: the run raised its events
                continue
            for name in spec.alternatives.on[(source, event)][position].sets:
                if name in given:
                    needed[name] = given[name]
        asked = steps.asked
        if not taken:  # refused: every alternative's guard said no
            # every value the event can set: its method may require them all
            return (Move("event", event, given, _answers(asked), snap.at, (), (),
                         tuple(asked), refused=True), snap, ())
        return (Move("event", event, needed, _answers(asked), snap.at, tuple(steps.micro),
                     tuple(steps.entered), tuple(asked)), steps.snap, tuple(steps.changes))

    def _clock(self, snap: Snapshot, ask: Callable[[str], bool],
               reads: dict[str, Any] | None = None
               ) -> tuple[Move, Snapshot, tuple[tuple[str, Any], ...]]:
        """`fire_due` at the earliest armed timer's due time (`driver.fire_due`, as the run
        fires them): every timer due by then, in due order (those armed meanwhile too), each
        one macrostep; one with no enabled transition is declined."""
        when = next(t for t in snap.timers if not t.declined).due
        steps = _Steps(self, snap, ask, reads)

        def fire(event: str, at: dt.datetime) -> bool:
            mark = (steps.snap, len(steps.micro), len(steps.entered), len(steps.changes))
            steps.at, steps.first = at, True
            steps.raised.clear()
            try:
                if driver.macrostep(self.spec, event, driver.NO_VALUES, steps.take,
                                    steps.configuration, steps.raised):
                    return True
            except kernel.Refused:
                pass
            steps.snap = mark[0]
            del steps.micro[mark[1]:], steps.entered[mark[2]:], steps.changes[mark[3]:]
            return False

        def decline(timer: _timers.Timer[Any, Any]) -> None:
            steps.snap = _replace(steps.snap, timers=tuple(
                _timers.declined(list(steps.snap.timers), timer)))

        fired = driver.fire_due(when, armed=lambda: list(steps.snap.timers),
                                ended=lambda: self.spec.chart.ended(steps.snap.configuration),
                                last=lambda: steps.snap.at, fire=fire, decline=decline,
                                limit=driver.MAX_TIMER_STEPS)
        after = steps.snap
        return (Move("clock", None, {}, _answers(steps.asked), when, tuple(steps.micro),
                     tuple(steps.entered), tuple(steps.asked), tuple(fired)),
                _replace(after, at=max(after.at, when)), tuple(steps.changes))


class _Branch(NamedTuple):  # (a named tuple: made for every step computed)
    """One branch of a step (`Space._branches`): the guard answers it `used`, its move (None:
    the spec refuses it), the values of the snapshot it was computed from (`origin`), the
    snapshot it led to from there, and the fields it changed on the way ((field, value),
    None: cleared, in order)."""

    used: dict[str, bool]
    move: Move | None
    origin: Mapping[str, Any]
    after: Snapshot
    changes: tuple[tuple[str, Any], ...]

    def landed(self, snap: Snapshot) -> Snapshot:
        """The snapshot this branch leads to from `snap` (one that reads what its own did):
        its own, with `snap`'s values as the branch changed them."""
        if self.move is None or self.move.refused:
            return snap
        if snap.values is self.origin:  # from the snapshot it was computed from
            return self.after
        values = dict(snap.values)
        for name, value in self.changes:
            if value is None:
                values.pop(name, None)
            else:
                values[name] = value
        after = self.after
        if values == after.values:
            return after
        return Snapshot(after.configuration, after.remembered, after.counts, after.timers,
                        values, after.at)


class _Known(NamedTuple):
    """The branches of one step (`Space._branches`), and the values they read (field, value
    in the snapshot they were computed from; None: unset): a snapshot with the same values
    of these fields takes the same branches."""

    reads: tuple[tuple[str, Any], ...]
    branches: list[_Branch]


# Microsteps of one macrostep before the explorer looks for a loop (most come to rest sooner).
_LOOP_WATCH = 16


class _Steps:
    """The explorer's side of the driver (`driver.Take`): a macrostep's microsteps taken from
    a snapshot, each the next snapshot, with the guards they asked (answered by `ask`), the
    microsteps and the states they entered. With `reads`, each field a microstep reads is
    added to it with its value in the first snapshot (see `Space._branches`)."""

    __slots__ = ("ask", "asked", "at", "base", "changes", "entered", "first", "micro",
                 "origin", "own", "raised", "reads", "settled", "snap", "space", "streak")

    def __init__(self, space: Space, snap: Snapshot, ask: Callable[[str], bool],
                 reads: dict[str, Any] | None = None) -> None:
        self.space = space
        self.snap = snap
        self.origin = snap.values
        self.reads = reads
        self.at = snap.at
        self.ask = ask
        self.asked: list[Asked] = []
        self.micro: list[Micro] = []
        self.entered: list[str] = []
        self.raised: list[str] = []  # completion events pending (the driver's queue)
        self.changes: list[tuple[str, Any]] = []  # (field, value; None: cleared), in order
        self.first = True  # the macrostep's own microstep: a limit refuses it (`strict`)
        # The macrostep under way (a clock step takes one per timer): its own event (a new
        # run's opening is `driver.OPENING`, as the run reports it), where its microsteps
        # start in `micro`, where its rest has been and where its eventless steps have been.
        self.own = driver.OPENING
        self.base = 0
        self.settled: set[tuple[object, ...]] = set()
        self.streak: set[tuple[object, ...]] = set()

    def configuration(self) -> tuple[str, ...]:
        return self.snap.configuration

    def take(self, event: str, given: kernel.Given) -> bool:
        """One microstep of `event` (`driver.microstep`), applied: the next snapshot; False
        when it selects no transition. Raises kernel.Refused for a step the spec refuses,
        and, for an event's or a timer's own microstep, when a limit kept an alternative from
        being taken (`Run` names the limit, LimitExceeded: not a refusal by the guards, which
        is all a path may expect)."""
        space, snap, ask, asked = self.space, self.snap, self.ask, self.asked
        spec = space.spec
        strict, self.first = self.first, False
        if strict:  # a new macrostep: nothing of the one before counts
            self.own, self.base = event, len(self.micro)
            self.settled.clear()
            self.streak.clear()
        elif len(self.micro) - self.base > _LOOP_WATCH:
            # The rest of a macrostep is a function of the snapshot (as `key` tells them
            # apart), of what is pending and of the guard answers, which a branch fixes once
            # asked: back where it has been, it loops for good. The run would go on to
            # MAX_MICROSTEPS and refuse the event; the explorer stops here (guarded eventless
            # loops made `paths` spend most of its time in them). In a streak of eventless
            # steps the pending completions are not looked at (they grow as it loops): the
            # streak's places are forgotten when a completion event is taken.
            eventless = event == _events.ALWAYS
            if not eventless:
                self.streak.clear()
            seen = self.streak if eventless else self.settled
            where = (event, space.key(snap), () if eventless else tuple(self.raised))
            if self.reads is not None:  # `key` looks at which watched fields are set
                for name in space.watched:
                    self.reads.setdefault(name, self.origin.get(name))
            if where in seen:
                # What the run raises past the bound; the configuration is a place of the
                # loop (the run stops wherever its MAX_MICROSTEPS-th microstep leaves it).
                raise MacrostepLoop(self.own, kernel.MAX_MICROSTEPS + 1, snap.configuration)
            seen.add(where)
        at = self.at

        def answer(alternative: Alternative) -> bool:
            guards = alternative.guard_names
            answers = [ask(g) for g in guards]
            asked.extend((alternative.source, event, alternative.position, g, a)
                         for g, a in zip(guards, answers, strict=True))
            return all(answers)

        state = kernel.RunState(snap.configuration, dict(snap.remembered), dict(snap.counts),
                                list(snap.timers), self._reader(snap.values))
        selection, effect, refused = driver.microstep(spec, state, event, given, at,
                                                      answer)
        if refused is not None:
            raise refused
        if effect is None:
            if strict and any(r[2] == "limit" for r in selection.refused):
                raise kernel.Refused("limit")
            return False
        for move, alternative in zip(*kernel.in_history_order(selection.moves,
                                                              selection.taken), strict=True):
            self.micro.append((move[0], event, step_target(move),
                               move[2] if len(move) == 3 else None, alternative.position))
        self.entered.extend(effect.entered)
        values = dict(snap.values)
        for name, value in effect.changes.items():
            if value is None:
                values.pop(name, None)
            else:
                values[name] = value
        self.changes.extend(effect.changes.items())
        self.snap = Snapshot(effect.configuration, effect.remembered, effect.counts,
                             tuple(effect.timers) if effect.timers is not None else (),
                             values, at)
        self.raised.extend(effect.raised)
        return True

    def _reader(self, values: Mapping[str, Any]) -> Callable[[str], Any]:
        """`values.get`, noting in `reads` each field asked for (see `__init__`)."""
        reads, origin = self.reads, self.origin
        if reads is None:
            return values.get

        def value_of(name: str) -> Any:
            if name not in reads:
                reads[name] = origin.get(name)
            return values.get(name)
        return value_of


def _answerer(guards: Mapping[str, bool]) -> Callable[[str], bool]:
    return lambda name: guards.get(name, True)


def _answers(asked: list[Asked]) -> dict[str, bool]:
    return {guard: answer for _, _, _, guard, answer in asked}


def _replace(snap: Snapshot, **changes: Any) -> Snapshot:
    fields = {name: getattr(snap, name) for name in Snapshot.__slots__}
    fields.update(changes)
    return Snapshot(**fields)
