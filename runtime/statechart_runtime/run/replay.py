"""Replaying a record's history through the step kernel: the integrity check and upgrades.

One replay, two modes. Strict (`check_record`, `from_dict`): the first step the spec could
not have taken raises the spec's InvalidRecord naming it (`history[3]`, `history[3].values.x`).
Lenient (`upgrade`, which must decide what an old record's states are before checking it):
the same replay, returning None where it breaks; the strict check then says why.

Each step is taken with `kernel.step`, the function a live run takes its steps with, so what
the check accepts is what the run does: the configuration, entry counts, remembered history,
field values and armed timers a history ends in are the kernel's, not a copy of it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from statechart_runtime.chart import events as _events
from statechart_runtime.chart import kernel, step_kinds
from statechart_runtime.chart import timers as _timers
from statechart_runtime.chart.chart import Move, Remembered
from statechart_runtime.chart.events import FamilyEvent
from statechart_runtime.chart.values import (
    SENT_BY,
    JsonValue,
    is_aware,
    parse_time,
    sent_by_problem,
    time_text,
)
from statechart_runtime.errors import MacrostepLoop
from statechart_runtime.run import driver

# A step as the replay reads it: event, source, target, time, values (JSON), its kind.
Raw = tuple[str, str, str, dt.datetime, Mapping[str, JsonValue], str | None]


class Replayed(NamedTuple):
    """Where a history ends: the configuration, entry counts, each field's last value
    (field -> (JSON value, typed value, the step that set or cleared it, -1 for its default;
    None values when cleared)), remembered history, and the armed timers (None for a spec
    without timers, or when no creation time was given)."""

    configuration: tuple[str, ...]
    counts: dict[str, int]
    last: dict[str, tuple[Any, Any, int]]
    remembered: Remembered
    timers: list[_timers.Timer[Any, Any]] | None


# How a step took its transition: statechart_runtime.chart.step_kinds (these names stay
# here for the modules that import them from the replay).
HISTORY_KINDS = step_kinds.HISTORY_KINDS
OTHER_KINDS = step_kinds.OTHER_KINDS


def kind_entry(kind: str) -> dict[str, str]:
    """A step's kind as its JSON object holds it (`step_kinds.to_json`)."""
    return step_kinds.to_json(kind)


def raw_step(spec: Any, where: str, step: object) -> Raw:
    """A history entry as JSON holds it (a dict), checked and read: InvalidRecord at `where`
    when it is not one."""
    invalid = spec.invalid
    keys = {"event", "source", "target", "at", "values"}
    if not isinstance(step, dict) or not keys <= set(step) <= keys | {"history", "kind"} \
            or {"history", "kind"} <= set(step):
        raise invalid(where, f"expected an object with keys {sorted(keys)} (and `history` for "
                      "a step that entered its target by history, or `kind` for an internal or "
                      "targetless one)")
    kind = step_kinds.from_json(step, where, invalid)
    event = step["event"]
    if not isinstance(event, str) or spec.listed(event) is None:
        raise invalid(where + ".event", f"unknown event {event!r}")
    for end in ("source", "target"):
        if not isinstance(step[end], str) or step[end] not in spec.states_by_name:
            raise invalid(f"{where}.{end}", f"unknown state {step[end]!r}")
    values = step["values"]
    if not isinstance(values, dict):
        raise invalid(where + ".values", "expected an object")
    return (event, step["source"], step["target"], parse_time(where + ".at", step["at"], invalid),
            _field_values(spec, where, values), kind)


def _field_values(spec: Any, where: str, values: dict[str, Any]) -> dict[str, Any]:
    """A step's values as the replay reads them: the fields it set, each checked; the
    reserved `@by` (who sent the event: `values.SENT_BY`) is checked and left out, since no
    transition sets it."""
    for name, value in values.items():
        if name == SENT_BY:
            problem = sent_by_problem(value)
            if problem is not None:
                raise spec.invalid(f"{where}.values.{name}", problem)
            continue
        if name not in spec.codec.types:
            raise spec.invalid(f"{where}.values.{name}", "not a field of the record")
        spec.codec.from_json(name, value, f"{where}.values.{name}")
    if SENT_BY in values:
        return {name: value for name, value in values.items() if name != SENT_BY}
    return values


def typed_step(spec: Any, step_class: type[Any], where: str, step: object) -> Raw:
    """A history entry of a record object (a `Step`), checked and read."""
    invalid = spec.invalid
    if not isinstance(step, step_class):
        raise invalid(where, f"expected a {step_class.__name__}, got {step!r}")
    if not isinstance(step.event, spec.event_enum) and not (
            isinstance(step.event, FamilyEvent) and spec.listed(step.event) is not None):
        raise invalid(where + ".event", f"expected a {spec.event_enum.__name__}, got "
                      f"{step.event!r}")
    for end, state in (("source", step.source), ("target", step.target)):
        if not isinstance(state, spec.state_enum):
            raise invalid(f"{where}.{end}", f"expected a {spec.state_enum.__name__}, got "
                          f"{state!r}")
    if not is_aware(step.at):
        raise invalid(where + ".at", f"expected a datetime with a time zone, got {step.at!r}")
    if not isinstance(step.values, dict):
        raise invalid(where + ".values", f"expected a dict, got {step.values!r}")
    values = _field_values(spec, where, step.values)
    return (step.event.value, step.source.value, step.target.value, step.at, values,
            step_kinds.checked(step.kind, where, invalid))


def replay(spec: Any, steps: Sequence[object], read: Callable[[Any, str, object], Raw], *,
           created_at: dt.datetime | None, context_of: Callable[[str], Any],
           strict: bool = True) -> Replayed | None:
    """Replay `steps` (each read by `read`: `raw_step` or a `typed_step` partial) from the
    initial state through `kernel.step`. `created_at`: when the run was created, where delay
    timers of the initial states count from (None: timers are not replayed). `context_of`:
    a run-context field's value, as the record holds it now (deadline timers read it).
    Strict: InvalidRecord at the first step the spec could not have taken; lenient (`strict`
    False): None instead."""
    try:
        return _replay(spec, steps, read, created_at, context_of)
    except spec.invalid:
        if strict:
            raise
        return None


def _replay(spec: Any, steps: Sequence[object], read: Callable[[Any, str, object], Raw],
            created_at: dt.datetime | None, context_of: Callable[[str], Any]) -> Replayed:
    invalid = spec.invalid
    replaying = _Replaying(spec, steps, read, created_at, context_of)
    # The macrosteps are the driver's, as a live run takes them (`driver.macrostep`): an
    # event's own microstep, then eventless ones and the completion events it raised, in
    # order; `_Replaying.take` takes each from the history instead of selecting it.
    try:
        if driver.opens(spec):
            driver.macrostep(spec, driver.OPENING, None, replaying.take, replaying.active,
                             replaying.raised)
        while replaying.index < len(steps):
            # A new event: what the last one raised and did not take was dropped (the driver
            # leaves none pending), and this one takes its own microstep whatever it is.
            replaying.own = True
            driver.macrostep(spec, replaying.event_at(replaying.index), driver.NO_VALUES,
                             replaying.take, replaying.active, replaying.raised)
    except MacrostepLoop as loop:
        # More microsteps in one macrostep than a run takes: no run could have recorded it.
        raise invalid(f"history[{replaying.index - 1}]", str(loop)) from None
    state = replaying.state
    return Replayed(state.configuration, state.counts, replaying.last, state.remembered,
                    state.timers if replaying.with_timers else None)


class _Replaying:
    """The replay's side of the driver (`driver.Take`): each microstep the driver asks for is
    the history's next steps, when they are of the event it asks for, checked against the
    spec and taken with `kernel.step` (the function a live run takes its steps with)."""

    def __init__(self, spec: Any, steps: Sequence[object],
                 read: Callable[[Any, str, object], Raw], created_at: dt.datetime | None,
                 context_of: Callable[[str], Any]) -> None:
        self.spec = spec
        self.steps = steps
        self.read_step = read
        self.created_at = created_at
        codec = spec.codec
        self.last: dict[str, tuple[Any, Any, int]] = {
            f: (raw, codec.from_json(f, raw, f), -1) for f, raw in spec.defaults.items()
            if f not in spec.context}
        context = spec.context
        last = self.last

        def value_of(name: str) -> Any:
            if name in context:
                return context_of(name)
            found = last.get(name)
            return None if found is None else found[1]

        self.value_of = value_of
        initial = spec.chart.initial_configuration()
        self.with_timers = bool(spec.timers) and created_at is not None
        armed: list[_timers.Timer[Any, Any]] = _timers.rearm(
            spec, [], initial, initial, created_at, (), value_of) \
            if self.with_timers and created_at is not None else []
        self.state = kernel.RunState(initial, {}, dict(spec.initial_counts), armed, value_of,
                                     context_known=False)
        self.raised: list[str] = []  # states whose `done.state` event is pending (the driver's)
        self.previous: dt.datetime | None = None  # the last step's time
        self.index = 0  # the next step to take
        self.own = False  # the next microstep is a new event's own (not the driver's settle)
        self.read: dict[int, Raw] = {}

    def active(self) -> tuple[str, ...]:
        return self.state.configuration

    def entry(self, index: int) -> Raw:
        """Step `index` of the history, read (once)."""
        found = self.read.get(index)
        if found is None:
            found = self.read[index] = self.read_step(self.spec, f"history[{index}]",
                                                      self.steps[index])
        return found

    def event_at(self, index: int) -> str:
        return self.entry(index)[0]

    def take(self, event: str, given: kernel.Given) -> bool:
        """The microstep of `event` (`given` is the history's: unused): the history's next
        step if it is of `event`, with the steps of the same event after it (a microstep
        that moved several regions is recorded one step per transition), each taken in
        turn; False when the next step is of another event (the run took none: nothing to
        take)."""
        own, self.own = self.own, False
        if self.index >= len(self.steps) or self.event_at(self.index) != event:
            return False
        self.take_step(self.index, own)
        if not _events.is_done(event):
            while self.index < len(self.steps) and self.event_at(self.index) == event:
                self.take_step(self.index, own)
        return True

    def take_step(self, index: int, own: bool) -> None:
        """Check step `index` against the spec and take it (`kernel.step`). `own`: it is a
        new event's own microstep, which a completion event cannot be (the driver takes
        those after the event that raised them)."""
        spec = self.spec
        invalid = spec.invalid
        codec = spec.codec
        state = self.state
        where = f"history[{index}]"
        sent, source, target, at, values, kind = self.entry(index)
        del self.read[index]
        self.index = index + 1
        # A family's member (`error.tool.ratelimit`) took the transitions of the listed event
        # whose family it is (`error.tool`): the tables know that one.
        event = spec.listed(sent) or sent
        table = spec.alternatives
        # A multi-target step is recorded by its first target: the table has them all.
        target = table.recorded(source, event, target, kind)
        key = (source, event, target)
        alternatives = table.keyed.get(key)
        if alternatives is None:
            raise invalid(where, f"the spec has no transition {source} -{event}-> {target}")
        if source not in state.configuration:
            raise invalid(where, f"`{source}` was not active (active: "
                          f"{', '.join(state.configuration)})")
        earliest = self.previous if self.previous is not None else self.created_at
        if earliest is not None and at < earliest:
            raise invalid(where + ".at", f"{time_text(at)} is before "
                          + (f"history[{index - 1}]'s {time_text(earliest)}"
                             if self.previous is not None
                             else f"createdAt {time_text(earliest)}")
                          + ": a run's time only moves forward")
        if own and _events.is_done(event):
            # The run takes the completion events its event raised, in order (those it
            # skips had no enabled transition), right after it: the driver found none
            # pending for `source`. (SCXML takes a raised event even when an earlier one
            # left its state and re-entered it unfinished: the pending list, not
            # `is_done`, is the test.)
            raise invalid(where, f"`{source}` had not completed (active: "
                          f"{', '.join(state.configuration)})")
        taken = alternatives[0]
        sets = taken.given
        constants: Mapping[str, tuple[Any, JsonValue]] = {}
        if any(a.assigns for a in alternatives):
            # Which alternative the step took: the first whose `assign:` constants the step's
            # values hold (one that assigns nothing takes the caller's values); a value that
            # is none of them is refused below, naming the constant.
            taken = next((a for a in alternatives
                          if all(values.get(f) == v[1] for f, v in a.assigns.items())),
                         next(a for a in alternatives if a.assigns))
            constants = taken.assigns
            sets = tuple(dict.fromkeys((*sets, *constants)))
        for name in set(values) | set(sets):
            if name not in sets:
                raise invalid(f"{where}.values.{name}", f"`{event}` does not set it")
            if name not in values:
                raise invalid(f"{where}.values.{name}", f"`{event}` sets it; missing")
            if name in constants and values[name] != constants[name][1]:
                raise invalid(f"{where}.values.{name}", f"`{event}` from `{source}` to "
                              f"`{target}` assigns {constants[name][1]!r} (`assign:`), not "
                              f"{values[name]!r}")
        allowed = table.kinds(key)
        if kind not in allowed:
            by_history = kind in HISTORY_KINDS or (kind is None and None not in allowed
                                                   and not set(allowed) & set(OTHER_KINDS))
            raise invalid(where + (".history" if by_history else ".kind"),
                          f"`{event}` from `{source}` to `{target}` is taken "
                          + " or ".join(step_kinds.in_words(k) for k in sorted(allowed, key=str))
                          + f", not {step_kinds.in_words(kind).replace(' transition', ' one')}")
        given = {name: (codec.from_json(name, raw, f"{where}.values.{name}"), raw)
                 for name, raw in values.items()}
        move: Move = (source, target) if kind is None else (source, target, kind)
        try:
            effect = kernel.step(spec, state, event, [move], given, at, [taken])
        except kernel.Refused as refused:
            raise invalid(where, _refusal_text(refused, self.last)) from None
        for name, value in effect.changes.items():
            self.last[name] = (given[name][1] if name in given else None, value, index)
        self.state = kernel.RunState(effect.configuration, effect.remembered, effect.counts,
                                     effect.timers if effect.timers is not None else [],
                                     self.value_of, context_known=False)
        self.raised.extend(effect.raised)
        self.previous = at


def _refusal_text(refused: kernel.Refused, last: Mapping[str, tuple[Any, Any, int]]) -> str:
    if refused.cause == "limit":
        return f"enters `{refused.state}` more than {refused.limit} times (its limit)"
    if refused.cause == "requires":
        required = refused.field
        found = last.get(required or "")
        how = ("this step clears it" if refused.cleared else "no step so far set it"
               if found is None else f"history[{found[2]}] cleared it")
        return f"enters `{refused.state}`, which requires `{required}`, and {how}"
    return f"`{refused.field}` is not set by the step"  # "missing": values are checked first
