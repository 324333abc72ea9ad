"""`Run`: the base of every generated run facade (`AgentRun`), which keeps the run record.

A generated facade adds one typed method per event (its keyword arguments are the fields the
event sets) and default guards and actions; everything else is here. The facade is the
python-statemachine machine's `model`: guards and entry/exit actions are its methods (override
them in a subclass), and a `model=` object given by the caller is added as a listener, whose
guards are combined with the facade's by `and` and whose actions run too.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any, ClassVar, Generic, Self, TypeVar

from statemachine.exceptions import TransitionNotAllowed
from statemachine.orderedset import OrderedSet

from statechart_runtime import timers
from statechart_runtime import values as _values
from statechart_runtime.errors import RunError
from statechart_runtime.machine import Machine, number_states
from statechart_runtime.record import Record, check_record
from statechart_runtime.spec import SpecTables
from statechart_runtime.values import Clock, JsonValue, is_aware, now, utcnow

R = TypeVar("R", bound=Record)
S = TypeVar("S")
E = TypeVar("E")
_NO_VALUES: dict[str, tuple[Any, JsonValue]] = {}


class EventNotAccepted(RunError, TransitionNotAllowed):
    """The run cannot take this event now: no transition for it is enabled in the active
    states, the run has ended, or the spec has no such event. A `TransitionNotAllowed`
    too, so code written against python-statemachine keeps catching it."""

    def __init__(self, event: str, configuration: tuple[str, ...], *, ended: bool,
                 known: bool = True, internal: bool = False) -> None:
        where = ", ".join(configuration)
        if not known:
            reason = "the spec has no such event"
        elif internal:
            reason = "the run raises it itself (completion or timer); it cannot be sent"
        elif ended:
            reason = f"the run has ended (in {where})"
        else:
            reason = f"no transition for it is enabled in {where}"
        Exception.__init__(self, f"event `{event}`: {reason}")
        # Names, where the library's exception keeps its Event and State objects.
        self.event = event  # type: ignore[assignment]
        self.configuration = configuration  # type: ignore[assignment]
        self.ended = ended
        self.known = known
        self.internal = internal

    def __reduce__(self) -> tuple[object, ...]:  # picklable: it crosses process boundaries
        return (_event_not_accepted, (type(self), self.event, self.configuration, self.ended,
                                      self.known, self.internal))


def _event_not_accepted(cls: type[EventNotAccepted], event: str,
                        configuration: tuple[str, ...], ended: bool,
                        known: bool, internal: bool = False) -> EventNotAccepted:
    return cls(event, configuration, ended=ended, known=known, internal=internal)


class Run(Generic[R, S, E]):
    _sc_spec: ClassVar[SpecTables]
    _sc_record: ClassVar[type[Any]]
    _sc_machine: ClassVar[type[Machine]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        machine = cls.__dict__.get("_sc_machine")
        if machine is not None:
            number_states(machine, cls._sc_spec.chart)

    def __init__(self, record: R | None = None, *, run_id: str | None = None,
                 model: object = None, clock: Clock | None = None, check: bool = True,
                 **context: Any) -> None:
        """A new run (entry actions of the initial states run), or, given a record, the run
        it describes, restored where it stopped (no entry action runs again). The record is
        checked (`check_record`) unless `check=False`: for a record already checked, or one
        a run store wrote itself, whose history may hold only the steps taken since.
        `context`: the run-context fields a new run starts with (docs/spec-format.md)."""
        spec = self._sc_spec
        self.clock: Clock = clock if clock is not None else utcnow
        self._pending: tuple[str, dict[str, tuple[Any, JsonValue]]] | None = None
        self._stepped = False  # whether the pending event has taken its one microstep
        self._sc_state: object = None  # where python-statemachine keeps the configuration
        if record is None:
            initial = spec.chart.initial_configuration()
            changes = self._context_changes(context)
            at = now(self.clock)
            # Only the record of a spec with timers has `createdAt` (delays count from it).
            record = self._sc_record(runId=run_id or uuid.uuid4().hex, lastTransitionAt=at,
                                     **({"createdAt": at} if spec.timers else {}))
            for attr, value in changes:
                setattr(record, attr, value)
            for name in initial:
                for field in spec.requires.get(name, ()):
                    if getattr(record, spec.attrs[field]) is None:
                        raise spec.missing(field, f"the initial state `{name}` requires it; "
                                           + ("pass it" if field in spec.context else
                                              "start from a record that sets it"))
            if spec.timers:
                timers.arm(spec, record, initial, initial, at, ())
            active = initial
        else:
            if run_id is not None:
                raise TypeError("run_id comes from the record when one is given")
            if context:
                raise TypeError("a restored run's context comes from its record; change it "
                                "with update()")
            if check:
                check_record(record, self._sc_record)
            elif not isinstance(record, self._sc_record):
                check_record(record, self._sc_record)  # refuses another spec's record
            active = spec.configuration_names(record)
            # Document order, as the engine selects transitions in (see machine.py).
            self._sc_state = active[0] if len(active) == 1 else OrderedSet(active)
        self.record: R = record
        self._active: tuple[str, ...] = active
        self.machine: Machine = self._sc_machine(
            model=self, state_field="_sc_state",
            listeners=None if model is None else [model])
        self.machine._sc_run = self
        if record is not None and spec.history_ids:
            self._restore_history()
        self._raised: list[str] = []  # states whose `done.state` event awaits its microstep

    def _restore_history(self) -> None:
        """Give python-statemachine the remembered configurations of the record (the library
        keeps them per history pseudo-state and does not persist them)."""
        spec = self._sc_spec
        states = self.machine.states_map
        values = self.machine.history_values
        remembered: dict[str, list[str]] = self.record.remembered  # type: ignore[attr-defined]
        for key, history_id in spec.history_ids.items():
            target, kind = key.rsplit(".", 1)
            names = remembered.get(target)
            if names is None:
                continue
            chart = spec.chart
            kept = names if kind == "deep" else [n for n in names if chart.parent[n] == target]
            values[history_id] = [states[n] for n in kept]

    @classmethod
    def restore(cls, record: R, **kwargs: Any) -> Self:
        """The run `record` describes (checked first: the spec's InvalidRecord names the
        field; `check=False` skips the check, see `__init__`)."""
        return cls(record, **kwargs)

    # -- run context (docs/spec-format.md "Run context") ------------------------------------
    def _context_changes(self, values: dict[str, Any]) -> list[tuple[str, Any]]:
        """(attribute, value) for context keyword arguments, each checked: a field that is not
        run context, or a value of the wrong type, is a TypeError. None unsets a field."""
        spec = self._sc_spec
        changes = []
        for key, value in values.items():
            field = spec.context_attrs.get(key)
            if field is None:
                raise TypeError(f"`{key}` is not a run-context field of `{spec.name}` (its "
                                f"context: {', '.join(sorted(spec.context)) or 'none'})")
            if value is not None:
                spec.codec.to_json(field, value)
            changes.append((key, value))
        return changes

    def _update(self, values: dict[str, Any]) -> None:
        """Set run-context fields (None unsets one). Not a transition: no history entry, and
        `lastTransitionAt` stays. All or nothing: a wrong type, or unsetting a field an
        active state requires, changes nothing."""
        if self._pending is not None:
            raise RuntimeError("update() called while an event is being handled; call it "
                               "after the action returns")
        spec = self._sc_spec
        changes = self._context_changes(values)
        unset = {spec.context_attrs[attr] for attr, value in changes if value is None}
        for name in self._active:
            for field in spec.requires.get(name, ()):
                if field in unset:
                    raise spec.missing(field, f"`{name}` requires it; it cannot be unset now")
        for attr, value in changes:
            setattr(self.record, attr, value)
        if spec.timers:  # a deadline read from a context field follows the new value
            record: Any = self.record
            timers.arm(spec, record, self._active, (), record.lastTransitionAt,
                       [spec.context_attrs[attr] for attr, _ in changes])

    @property
    def status(self) -> S:
        """The status the record reports: the active top-level state or, when the spec names
        statuses (`status:`), the status of the innermost active state that names one."""
        return self.record.status  # type: ignore[attr-defined, no-any-return]

    @property
    def configuration(self) -> tuple[S, ...]:
        """Every active state, ancestors included, in document order."""
        members = self._sc_spec.states_by_name
        return tuple(members[name] for name in self._active)

    @property
    def is_terminated(self) -> bool:
        """Whether the run has ended: a top-level final state is active, or a top-level
        parallel state has finished every region. An ended run takes no more events."""
        return self._sc_spec.chart.ended(self._active)

    def has_tag(self, tag: str) -> bool:
        """Whether an active state carries `tag` (`run.has_tag("paused")`)."""
        tagged = self._sc_spec.tags.get(tag)
        return tagged is not None and not tagged.isdisjoint(self._active)

    @property
    def allowed_events(self) -> tuple[E, ...]:
        """The events some transition of an active state (or of an ancestor) takes, in the
        spec's order of first use. Guards are not evaluated: a guarded event is listed, and
        may still be refused. An ended run allows none."""
        spec = self._sc_spec
        if spec.chart.ended(self._active):
            return ()
        active = set(self._active)
        return tuple(member for name, member in spec.events_by_name.items()
                     if name not in spec.internal
                     and not active.isdisjoint(spec.by_event.get(name, ())))

    def send(self, event: str | E, **values: Any) -> None:
        """Send `event` (its name or its enum member), with the values it sets as keyword
        arguments (the typed methods of a generated facade call this). A value the transition
        taken does not set is not recorded; a value no transition of the event sets is a
        TypeError."""
        spec = self._sc_spec
        name = event.value if isinstance(event, spec.event_enum) else event
        if not isinstance(name, str) or name not in spec.events_by_name:
            raise EventNotAccepted(str(name), self._active, ended=False, known=False)
        if name in spec.internal:
            raise EventNotAccepted(name, self._active, ended=False, internal=True)
        settable = spec.event_fields.get(name, ())
        for field in values:
            if field not in settable:
                raise TypeError(f"`{name}` takes no value `{field}` (it sets "
                                f"{', '.join(settable) or 'nothing'})")
        self._fire(name, values)

    def _fire(self, event: str, values: dict[str, Any] | None) -> None:
        if self._pending is not None:
            raise RuntimeError(f"event `{event}` sent while `{self._pending[0]}` is being "
                               "handled; send it after the action returns")
        spec = self._sc_spec
        chart = spec.chart
        if chart.ended(self._active):
            raise EventNotAccepted(event, self._active, ended=True)
        codec = spec.codec
        checked = {f: (v, codec.to_json(f, v)) for f, v in values.items()
                   if v is not None} if values else _NO_VALUES
        record: Any = self.record
        flat = spec.flat
        saved = (record.status, None if flat else record.configuration, record.counts,
                 record.lastTransitionAt, len(record.history), self._active)
        armed = record.timers if spec.timers else None  # `timers.arm` replaces the list
        remembered = record.remembered if spec.chart.remembers else None
        history_values = dict(self.machine.history_values) if remembered is not None else None
        attrs = spec.attrs
        # A transition may clear any field: then all are saved.
        fields = [(a, getattr(record, a)) for a in (attrs.values() if spec.clearing else
                                                    (attrs[f] for f in checked))]
        self._pending = (event, checked)
        self._stepped = False
        try:
            # The machine's event id: the spec's name unless the module maps it.
            self.machine.send(spec.event_ids.get(event, event) if spec.event_ids else event)
            if self._raised:
                self._complete()
        except BaseException as exc:
            # All or nothing: the record goes back to what it was, and so does the machine
            # (python-statemachine rolls back only what failed inside a step's actions, not an
            # `after_` hook or a BaseException such as KeyboardInterrupt). A completion
            # cascade is part of the event that caused it.
            (record.status, configuration, record.counts, record.lastTransitionAt, length,
             self._active) = saved
            if not flat:
                record.configuration = configuration
            del record.history[length:]
            if armed is not None:
                record.timers = armed
            for field, value in fields:
                setattr(record, field, value)
            if remembered is not None:
                record.remembered = remembered
                self.machine.history_values.clear()
                self.machine.history_values.update(history_values or {})
            self._raised.clear()
            self.machine.reset_to(self._active)
            if isinstance(exc, TransitionNotAllowed) and not isinstance(exc, EventNotAccepted):
                raise EventNotAccepted(event, self._active, ended=False) from None
            raise
        finally:
            self._pending = None
        if chart.ended(self._active):
            # SCXML exits every active state when the run ends; python-statemachine does not.
            # The event is applied by now: an exception from these actions reaches the caller
            # with the record in its final state.
            self.machine.run_exit_actions(list(reversed(self._active)), event)

    # -- timers ------------------------------------------------------------------------------

    @property
    def timers(self) -> tuple[timers.Timer[S, E], ...]:
        """The armed timers (state, event, due time in UTC), in due order: the record's."""
        record: Any = self.record
        return tuple(record.timers) if self._sc_spec.timers else ()

    @property
    def next_deadline(self) -> dt.datetime | None:
        """When the earliest armed timer is due (aware, UTC), or None when none is armed:
        call `fire_due` then (a store schedules its runs by this)."""
        record: Any = self.record
        armed = record.timers if self._sc_spec.timers else None
        return armed[0].due if armed else None

    def fire_due(self, now: dt.datetime | None = None) -> list[str]:
        """Fire every armed timer due at `now` (default: the run's clock), in due order, each
        as its own step whose time is the clock's; returns the events taken. A timer whose
        guards all fail is dropped (it fires again only when its state is re-entered, or for
        a deadline, when its field changes). Timers armed by the steps this call takes wait
        for the next call, so a zero-delay loop cannot spin here."""
        if not self._sc_spec.timers:
            return []
        when = _values.now(self.clock) if now is None else now
        if not is_aware(when):
            raise TypeError(f"now must be a datetime with a time zone, got {when!r}")
        record: Any = self.record
        fired: list[str] = []
        for timer in [t for t in record.timers if t.due <= when]:
            if timer not in record.timers or self._sc_spec.chart.ended(self._active):
                continue  # disarmed by a timer fired before it
            event = timer.event.value
            try:
                # One atomic step, as `send` takes one: a completion it causes is part of it.
                self._fire(event, None)
            except EventNotAccepted:  # no transition of it enabled: its guards all failed
                record.timers = [t for t in record.timers if t != timer]
            else:
                fired.append(event)
        return fired

    # -- internal events ---------------------------------------------------------------------

    def _complete(self) -> None:
        """Take the `done.state` events the last microsteps raised, one microstep each, in
        order (SCXML's internal queue; each may raise more). An event whose state a previous
        one left, or whose guards all refuse, selects nothing and is dropped, as SCXML drops
        it."""
        spec = self._sc_spec
        while self._raised:
            state = self._raised.pop(0)
            if state not in self._active:
                continue
            event = "done.state." + state
            self._pending = (event, _NO_VALUES)
            self._stepped = False
            try:
                self.machine.send(spec.event_ids[event])
            except TransitionNotAllowed:
                if self._stepped:
                    raise

    def _sc_microstep(self, transitions: list[Any], trigger: str) -> None:
        """Called by the engine for every microstep, before any action: checks the spec's
        contract (raising cancels the step), then updates the record. One function: it runs
        on every event."""
        pending = self._pending
        spec = self._sc_spec
        if pending is None or self._stepped or trigger != (
                spec.event_ids.get(pending[0], pending[0]) if spec.event_ids else pending[0]):
            raise RuntimeError(f"`{trigger}` was sent to the machine directly: send events "
                               f"through {type(self).__name__}'s methods (after the action "
                               "that is running returns): they keep the run record")
        event, values = pending
        chart = spec.chart
        record: Any = self.record
        moves = [(t.source.value, t.target.value) for t in transitions]  # spec names
        kinds: list[str | None] = []  # each move's history kind (None: not a history one)
        if spec.history_targets:  # a history pseudo-state stands for its parent
            targets = spec.history_targets
            kinds = [targets[t][1] if t in targets else None for _, t in moves]
            moves = [(s, targets[t][0] if t in targets else t) for s, t in moves]
        entered: list[str] = []
        all_sets: list[tuple[str, ...]] = []
        for source, target in moves:
            sets = spec.effects[(source, event, target)]
            for field in sets:
                if field not in values:
                    raise spec.missing(field, f"`{event}` from `{source}` to `{target}` sets "
                                       f"it; pass {field}=...")
            all_sets.append(sets)
        # A flat spec's configuration is its one state: the common case, kept cheap.
        remembered = None
        if spec.flat:
            configuration: tuple[str, ...] = (moves[0][1],)
            entered.append(moves[0][1])
        elif chart.remembers:
            configuration, entering, remembered = chart.step(
                self._active, [(s, t, kind) if kind else (s, t)
                               for (s, t), kind in zip(moves, kinds or [None] * len(moves),
                                                       strict=True)],
                record.remembered)
            entered.extend(entering)
        else:
            configuration = chart.next_configuration(self._active, moves)
            for source, target in moves:
                entered.extend(chart.effect(source, target)[1])
        # Fields each move clears (its exit set's `clear:`, then its own), before it sets.
        clears = self._clears(event, moves) if spec.clearing else None
        counts = record.counts
        if spec.limits:
            for name in entered:
                if name in spec.limits and counts[name] >= spec.limits[name]:
                    raise spec.limit(name, spec.limits[name])
        if spec.requires:
            # field -> whether this step leaves it set (True) or cleared (False)
            after: dict[str, bool] = {}
            for i, sets in enumerate(all_sets):
                after.update(dict.fromkeys(clears[i] if clears else (), False))
                after.update(dict.fromkeys(sets, True))
            for name in configuration:
                for field in spec.requires.get(name, ()):
                    if not after.get(field, getattr(record, spec.attrs[field]) is not None):
                        raise spec.missing(field, f"`{name}` requires it, and `{event}` "
                                           + ("clears it" if field in after else
                                              "does not set it"))
        at = now(self.clock)
        # Checked: from here on nothing raises, and `_fire` undoes it if the library does.
        if spec.counted:
            counts = dict(counts)  # a new dict: `_fire`'s snapshot keeps the old one
            for name in entered:
                if name in counts:
                    counts[name] += 1
            record.counts = counts
        states = spec.states_by_name
        attrs = spec.attrs
        step_class = self._sc_record._sc_step
        event_member = spec.events_by_name[event]
        for i, ((source, target), sets) in enumerate(zip(moves, all_sets, strict=True)):
            step_values: dict[str, JsonValue] = {}
            for field in clears[i] if clears else ():
                setattr(record, attrs[field], None)
            for field in sets:
                typed, as_json = values[field]
                setattr(record, attrs[field], typed)
                step_values[field] = as_json
            record.history.append(step_class(event_member, states[source], states[target], at,
                                             step_values, kinds[i] if kinds else None))
        record.status = spec.reported(configuration) if spec.status_of \
            else states[configuration[0]]
        if not spec.flat:
            record.configuration = [states[name] for name in configuration]
        record.lastTransitionAt = at
        if spec.timers:
            timers.arm(spec, record, configuration, entered, at,
                       [f for sets in all_sets for f in sets]
                       + [f for fields in clears or () for f in fields])
        if remembered is not None:
            record.remembered = remembered
        if chart.completes:
            self._raised.extend(chart.raised(chart.sort(entered), configuration))
        self._active = configuration
        self._stepped = True

    def _clears(self, event: str, moves: list[tuple[str, str]]) -> list[tuple[str, ...]]:
        """Per move, the fields it clears: the `clear:` of each state it exits, then its own
        (the integrity check replays the same, record.replay)."""
        spec = self._sc_spec
        out = []
        for source, target in moves:
            fields: list[str] = []
            for name in spec.chart.exit_set(self._active, source, target):
                fields.extend(spec.exit_clears.get(name, ()))
            fields.extend(spec.clears.get((source, event, target), ()))
            out.append(tuple(fields))
        return out
