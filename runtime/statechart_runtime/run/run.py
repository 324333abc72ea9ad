"""`Run`: the base of every generated run facade (`AgentRun`), which keeps the run record.

A generated facade adds one typed method per event (its keyword arguments are the fields the
event sets) and default guards and actions; everything else is here. The facade is the
python-statemachine machine's `model`: guards and entry/exit actions are its methods (override
them in a subclass), and a `model=` object given by the caller is added as a listener, whose
guards are combined with the facade's by `and` and whose actions run too.
"""

from __future__ import annotations

import datetime as dt
import functools
import uuid
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from dataclasses import replace as with_fields
from typing import Any, ClassVar, Generic, Self, TypeVar

from statechart_runtime.chart import kernel, plans, timers
from statechart_runtime.chart.alternatives import Alternative
from statechart_runtime.chart.spec import SpecTables
from statechart_runtime.chart.values import (
    SENT_BY,
    Clock,
    JsonValue,
    is_aware,
    now,
    outside_utc,
    sent_by_problem,
    utcnow,
)
from statechart_runtime.chart.work import EMPTY as NO_WORK
from statechart_runtime.chart.work import WorkChange, WorkTable
from statechart_runtime.errors import LimitExceeded, MissingField, RunError
from statechart_runtime.listeners import Listener, RunListeners
from statechart_runtime.listeners import Macrostep as _Macrostep
from statechart_runtime.psm.machine import (
    DirectCalls,
    Machine,
    RunHooks,
    declared_alternatives,
    direct_calls,
    number_states,
)
from statechart_runtime.psm.names import OrderedSet, StateMachine, TransitionNotAllowed
from statechart_runtime.run import driver
from statechart_runtime.run.record import Record, check_record, step_class_of
from statechart_runtime.testing import coverage

R = TypeVar("R", bound=Record)
S = TypeVar("S")
E = TypeVar("E")
# What `_pending` names while a new run's initial entry actions run (no event is handled yet).
_CREATING = "the run's creation"
_NO_VALUES: dict[str, tuple[Any, JsonValue]] = {}
_UNPLANNED: Any = object()  # a (configuration, event) not looked at yet (`_take_planned`)
# The most timer steps one `fire_due` (or one event's catching up) takes: the driver's,
# read here at each call (a test lowers it).
MAX_TIMER_STEPS = driver.MAX_TIMER_STEPS


class EventNotAccepted(RunError, TransitionNotAllowed):
    """The run cannot take this event now, and says why (`cause`): the spec has no such event
    ("unknown"), the run raises it itself ("internal"), the run has ended ("ended"), no active
    state (nor an ancestor) handles it ("unhandled"), or every alternative's guard said no
    ("guard": `guards` names them) or needs a state that is not active ("in": `inactive`
    names those of their `in:` conditions; with guards too, the cause is "guard"). A
    `TransitionNotAllowed` too, so code written against python-statemachine keeps catching
    it. (A limit reached raises LimitExceeded, a missing
    value MissingField.)"""

    def __init__(self, event: str, configuration: tuple[str, ...], *, ended: bool,
                 known: bool = True, internal: bool = False,
                 guards: tuple[str, ...] = (), inactive: tuple[str, ...] = ()) -> None:
        where = ", ".join(configuration)
        if not known:
            cause, reason = "unknown", "the spec has no such event"
        elif internal:
            cause, reason = "internal", ("the run raises it itself (completion, timer or "
                                         "eventless); it cannot be sent")
        elif ended:
            cause, reason = "ended", f"the run has ended (in {where})"
        elif guards or inactive:
            said = [f"its guard{'s' if len(guards) > 1 else ''} said no: "
                    + ", ".join(f"`{g}`" for g in guards)] if guards else []
            said += [f"it needs {', '.join(f'`{s}`' for s in inactive)} active (`in:`)"
                     ] if inactive else []
            cause, reason = "guard" if guards else "in", "; ".join(said) + f" (in {where})"
        else:
            cause, reason = "unhandled", f"no active state handles it (active: {where})"
        Exception.__init__(self, f"event `{event}`: {reason}")
        # Names, where the library's exception keeps its Event and State objects.
        self.event = event  # type: ignore[assignment]
        self.configuration = configuration  # type: ignore[assignment]
        self.ended = ended
        self.known = known
        self.internal = internal
        self.guards = guards
        self.inactive = inactive
        self.cause = cause

    def __reduce__(self) -> tuple[object, ...]:  # picklable: it crosses process boundaries
        return (_event_not_accepted, (type(self), self.event, self.configuration, self.ended,
                                      self.known, self.internal, self.guards, self.inactive))


def _event_not_accepted(cls: type[EventNotAccepted], event: str,
                        configuration: tuple[str, ...], ended: bool,
                        known: bool, internal: bool = False,
                        guards: tuple[str, ...] = (),
                        inactive: tuple[str, ...] = ()) -> EventNotAccepted:
    return cls(event, configuration, ended=ended, known=known, internal=internal,
               guards=guards, inactive=inactive)


class Run(Generic[R, S, E]):
    _sc_spec: ClassVar[SpecTables]
    _sc_record: ClassVar[type[Any]]
    _sc_machine: ClassVar[type[Machine]]
    # The machine's event ids -> the spec's event names (ids differ only where mapped).
    _sc_names: ClassVar[dict[str, str]]
    # Each alternative of the spec's table (`spec.alternatives`) -> the machine's transition
    # object for it (what the machine path asks the guards of and hands back to the engine):
    # None until a run builds a machine, when the rows list the alternatives (API 1.7).
    _sc_transitions: ClassVar[dict[Alternative, Any] | None]
    # Where the spec writes each state and transition (the module's `_SOURCE`; None in a module
    # generated before it had one): what spec coverage reports (statechart_runtime.coverage).
    _sc_source: ClassVar[Mapping[str, Any] | None] = None
    # (what the class's runs call without a machine, or None: they need one), once found
    # (`_sc_direct_calls`; its transition actions keyed by alternative)
    _sc_direct: ClassVar[tuple[DirectCalls | None]]

    # (configuration, event) -> its plan, or None: the kernel takes it (`_take_planned`);
    # one table per generated class, shared by its subclasses (a plan reads only the spec).
    _sc_plans: ClassVar[dict[tuple[tuple[str, ...], str], plans.Plan | None]]
    # The record's step class (`<Name>Step`), which a step's history entries are made of.
    _sc_step_class: ClassVar[type[Any]]
    # The spec's work (`work:` of its states; the module's `_WORK`): empty in a module
    # generated before work existed.
    _sc_work: ClassVar[WorkTable] = NO_WORK
    # Watched (statechart_runtime.listeners.watch): the macrosteps taken since, else None.
    _sc_watch: list[Any] | None = None
    # The listeners of this run in memory (`listen`), else None.
    _sc_heard: RunListeners | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        machine = cls.__dict__.get("_sc_machine")
        if machine is not None:
            number_states(machine, cls._sc_spec.chart)
            ids = cls._sc_spec.event_ids
            cls._sc_names = {ids.get(name, name): name for name in cls._sc_spec.events_by_name}
            # A module of API 1.7 lists its alternatives in its spec tables, complete without
            # the machine; an older one's table is completed by its machine's order here.
            cls._sc_transitions = None if cls._sc_spec.alternatives.listed else \
                _bind(cls._sc_spec, machine, cls._sc_names, cls.__module__)
            cls._sc_step_class = step_class_of(cls._sc_record)
            cls._sc_plans = {}
        if hasattr(cls, "_sc_machine"):  # a generated class, or a subclass of one
            _RUN_CLASSES[cls] = RunClass(cls._sc_spec, cls._sc_record, cls._sc_names,
                                         cls._sc_source, cls._sc_direct_calls)

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
        # The event being handled: (name, its values, its time), while `_take` runs.
        self._pending: tuple[str, kernel.Given, dt.datetime] | None = None
        self._stepped = False  # whether the pending event has taken its one microstep
        self._effect: kernel.Effect | None = None  # computed by `_sc_select`, committed next
        self._selection: kernel.Selection | None = None  # the last selection that took none
        self._undo: list[Callable[[], None]] = []  # what puts the record back, per step
        # While a family's member is taken: (the listed event taking it, the name sent).
        self._sent_as: tuple[str, str] | None = None
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

            def value_of(field: str) -> Any:
                return getattr(record, spec.attrs[field])

            found = kernel.unmet(spec, initial, value_of)
            if found is not None:
                raise spec.missing(found[1], f"the initial state `{found[0]}` requires it; "
                                   + ("pass it" if found[1] in spec.context else
                                      "start from a record that sets it"))
            if spec.timers:
                rec: Any = record
                rec.timers = timers.rearm(spec, [], initial, initial, at, (), value_of)
            active = initial
            entered: tuple[str, ...] = initial
            if self._sc_work:  # the work of the initial states: entered by no step
                started = self._sc_work.change((), initial)
                if started:
                    _WORK_LOGS[self] = [WorkEntry(None, "", at, started)]
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
            entered = ()  # a restored run enters nothing: its past is not covered again
        self.record: R = record
        self._active: tuple[str, ...] = active
        self._raised: list[str] = []  # states whose `done.state` event awaits its microstep
        # The python-statemachine machine, built when first needed: a run of a class whose
        # guards and actions take only `self` (and no `model=`) steps through the kernel
        # alone (`_direct_step`), calling them itself.
        self._machine: Machine | None = None
        self._direct = None if model is not None else self._sc_direct_calls()
        # The initial states' entry actions run below (the machine's constructor runs them
        # too): an event they send, or the machine they ask for, is refused until the run
        # exists, as during an event.
        self._pending = (_CREATING, _NO_VALUES, record.lastTransitionAt)  # type: ignore[union-attr]
        try:
            if self._direct is None:
                self._build_machine(model)
            elif entered:  # a new run: where a machine built later finds the configuration
                self._sc_state = active[0] if len(active) == 1 else OrderedSet(active)
                # The entry actions of the initial states, as the machine runs them.
                self._call_actions(self._direct.entry, entered)
        finally:
            self._pending = None
        if coverage.RECORDER is not None:
            coverage.RECORDER.started(self, entered)
        if entered and driver.opens(spec):
            # A new run's macrostep: the eventless transitions its initial states enable
            # (SCXML and XState take them before the first event).
            self._take(driver.OPENING, None, at)

    def _value_of(self, field: str) -> Any:
        return getattr(self.record, self._sc_spec.attrs[field])

    def _state(self) -> kernel.RunState:
        """What the next step reads of this run (statechart_runtime.kernel)."""
        spec = self._sc_spec
        record: Any = self.record
        return kernel.RunState(self._active,
                               record.remembered if spec.chart.remembers else {},
                               record.counts, record.timers if spec.timers else [],
                               self._value_of)

    @classmethod
    def _sc_direct_calls(cls) -> DirectCalls | None:
        """The class's guards and actions if its runs can step without a machine, else None
        (statechart_runtime.psm.machine.direct_calls); found once per class."""
        found = cls.__dict__.get("_sc_direct")
        if found is None:
            calls = direct_calls(cls, cls._sc_machine)
            if calls is not None and calls.on:  # by alternative, as a step names them
                table = cls._sc_spec.alternatives
                on = {a: a.actions for found in table.on.values() for a in found
                      if a.actions} if table.listed else \
                    {a: calls.on[t] for a, t in cls._sc_machine_transitions().items()
                     if t in calls.on}
                calls = with_fields(calls, on=on)
            found = (calls,)
            cls._sc_direct = found
        return found[0]

    @classmethod
    def _sc_machine_transitions(cls) -> dict[Alternative, Any]:
        """Each alternative -> its transition in the machine class (bound when first asked
        for, in a module whose rows list the alternatives: by the first machine built)."""
        found = cls._sc_transitions
        if found is None:  # kept on the generated class, whose subclasses share its machine
            owner = next(c for c in cls.__mro__ if "_sc_machine" in c.__dict__)
            found = _bind(cls._sc_spec, cls._sc_machine, cls._sc_names, owner.__module__)
            setattr(owner, "_sc_transitions", found)  # noqa: B010 (a class of the MRO)
        return found

    @property
    def machine(self) -> Machine:
        """The run's python-statemachine machine (`run.machine.send(...)` is the run's own
        send). A run whose class has no actions is stepped by the kernel alone, and builds
        its machine only when asked for it here; from then on, the machine steps it."""
        machine = self._machine
        if machine is None:
            if self._pending is not None:
                # An action of a run stepped without a machine asked for it.
                raise RuntimeError("the machine of a run is built between events, not while "
                                   f"`{self._pending[0]}` is being handled: an action reads "
                                   "the run (its record, configuration) and sends events "
                                   "after it returns")
            # Where the machine finds the configuration (a planned step does not keep it:
            # `_take_planned`), in document order.
            active = self._active
            self._sc_state = active[0] if len(active) == 1 else OrderedSet(active)
            machine = self._build_machine(None)
        return machine

    def _build_machine(self, model: object) -> Machine:
        self._sc_machine_transitions()  # what `_sc_select` hands back to the engine
        machine = self._machine = self._sc_machine(
            model=self, state_field="_sc_state",
            listeners=None if model is None else [model])
        machine._sc_run = RunHooks(self._sc_select, self._sc_microstep, self._machine_send)
        if self._sc_spec.history_ids:
            self._restore_history(machine)
        return machine

    def _restore_history(self, machine: Machine) -> None:
        """Give python-statemachine the remembered configurations of the record (the library
        keeps them per history pseudo-state and does not persist them)."""
        spec = self._sc_spec
        states = machine.states_map
        values = machine.history_values
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
                value = spec.codec.checked(field, value)[0]
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
        new = {spec.context_attrs[attr]: value for attr, value in changes}

        def value_after(field: str) -> Any:
            return new[field] if field in new else self._value_of(field)

        found = kernel.unmet(spec, self._active, value_after)
        if found is not None:
            raise spec.missing(found[1], f"`{found[0]}` requires it; it cannot be unset now")
        for attr, value in changes:
            setattr(self.record, attr, value)
        if spec.timers:  # a deadline read from a context field follows the new value
            record: Any = self.record
            record.timers = timers.rearm(spec, record.timers, self._active, (),
                                         record.lastTransitionAt, new, self._value_of)

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
                     and not active.isdisjoint(spec.alternatives.sources.get(name, ())))

    def send(self, event: str | E, **values: Any) -> None:
        """Send `event` (its name or its enum member), with the values it sets as keyword
        arguments, at the run's clock's time. A value may be the field's Python value or its
        JSON form (an enum's value, RFC 3339 text for a datetime: `FieldCodec.from_input`), so
        a JSON payload can be forwarded as it is. A value the transition taken does not set is
        not recorded; a value no transition of the event sets, or one of the wrong type, is a
        TypeError. Timers due by then fire first."""
        if self._sc_heard is None:
            self._send(event, values, None)
        else:
            self._sc_heard.observed(self, event, lambda: self._send(event, values, None))

    def send_at(self, at: dt.datetime, event: str | E, **values: Any) -> None:
        """`send`, at the time `at` (aware) instead of the clock's: every timer due at or
        before `at` fires first, then the event is taken at `at` (or at the run's last
        transition time, if that is later: a run's time never goes back)."""
        if self._sc_heard is None:
            self._send(event, values, at)
        else:
            self._sc_heard.observed(self, event, lambda: self._send(event, values, at))

    def listen(self, listener: Listener) -> Listener:
        """Tell `listener` of this run's macrosteps and refused events from now on
        (statechart_runtime.listeners: StepTaken and EventRefused, `via` `run`), after each
        `send`, `send_at` and `fire_due` returns or raises; returns it. A run a store
        restores has no listeners of its own: the store tells its listeners after it
        commits."""
        if self._sc_heard is None:
            self._sc_heard = RunListeners()
        return self._sc_heard.add(listener)

    def _send(self, event: str | E, values: dict[str, Any], at: dt.datetime | None) -> None:
        spec = self._sc_spec
        name = event.value if isinstance(event, spec.event_enum) else event
        # A member of a family the spec lists (`error.tool.ratelimit`) takes its key's
        # transitions and sets its fields; it is recorded by its own name (`_take`).
        listed = spec.listed(name) if isinstance(name, str) else None
        if not isinstance(name, str) or listed is None:
            raise EventNotAccepted(str(name), self._active, ended=False, known=False)
        if name in spec.internal:
            raise EventNotAccepted(name, self._active, ended=False, internal=True)
        by = values.pop(SENT_BY, None)
        if by is not None and (problem := sent_by_problem(by)) is not None:
            raise TypeError(f"`{name}`: {SENT_BY}: {problem}")
        settable = spec.alternatives.fields.get(listed, ())
        for field in values:
            if field not in settable:
                raise TypeError(f"`{name}` takes no value `{field}` (it sets "
                                f"{', '.join(settable) or 'nothing'})")
        codec = spec.codec
        history = self.record.history  # type: ignore[attr-defined]
        length = len(history)
        self._fire(name, {f: codec.from_input(f, v) for f, v in values.items()}, at)
        if by is not None:
            # Who sent it, kept with the steps of its macrostep (not with the timer steps
            # that fired before it): the reserved value of a step (values.SENT_BY).
            for step in history[length:]:
                if step.event.value == name:
                    step.values = {**step.values, SENT_BY: by}

    def _machine_send(self, event_id: str, *args: Any, **kwargs: Any) -> None:
        """`run.machine.send(...)`: the run's own `send` (the record is kept), by the
        machine's event id; refused while an event is being handled."""
        if self._pending is not None:
            raise RuntimeError(f"`{event_id}` was sent to the machine directly while "
                               f"`{self._pending[0]}` is being handled: send events through "
                               f"{type(self).__name__}'s methods, after the action returns")
        if args or kwargs:
            raise TypeError(f"`machine.send({event_id!r}, ...)`: send values with "
                            f"{type(self).__name__}.send({event_id!r}, FIELD=...)")
        self.send(self._sc_names.get(event_id, event_id))

    def _when(self, at: dt.datetime | None) -> dt.datetime:
        """The time of the next step: `at`, or the clock's; never before the last step."""
        when = now(self.clock) if at is None else at
        if not is_aware(when):
            raise TypeError(f"a step's time must be a datetime with a time zone, got {when!r}")
        outside = outside_utc(when)
        if outside is not None:
            raise TypeError(f"a step's time {outside}")
        last: dt.datetime = self.record.lastTransitionAt  # type: ignore[attr-defined]
        return last if when < last else when

    def _fire(self, event: str, values: dict[str, Any] | None,
              at: dt.datetime | None = None) -> None:
        if self._sc_heard is not None and not self._sc_heard.busy:
            # A generated event method's call (`send` is observed before it gets here).
            self._sc_heard.observed(self, event, lambda: self._fire(event, values, at))
            return
        if self._pending is not None:
            raise RuntimeError(f"event `{event}` sent while `{self._pending[0]}` is being "
                               "handled; send it after the action returns")
        spec = self._sc_spec
        when = self._when(at)
        if spec.timers:
            self._fire_timers(when)  # the past first: a deadline holds without a worker
        if spec.chart.ended(self._active):
            raise EventNotAccepted(event, self._active, ended=True)
        codec = spec.codec
        checked = {f: codec.checked(f, v) for f, v in values.items()
                   if v is not None} if values else _NO_VALUES
        if not self._take_planned(event, checked, when):
            self._take(event, checked, when)

    def _take_planned(self, event: str, checked: kernel.Given, at: dt.datetime) -> bool:
        """Take `event` by its plan from the configuration (statechart_runtime.chart.plans)
        for a run that steps without a machine, without work or spec
        coverage: what `_take` would do, without selecting and stepping it again (the
        actions called in `_act`'s order, the step taken back whole if one raises). False,
        with nothing changed, where there is no plan or it does not hold (a value missing,
        a `requires:` unmet): `_take` then takes the event, or says why not."""
        direct = self._direct
        if direct is None or self._machine is not None or self._raised \
                or self._sc_work or coverage.RECORDER is not None:
            return False
        before = self._active
        key = (before, event)
        table = self._sc_plans
        found = table.get(key, _UNPLANNED)
        if found is _UNPLANNED:
            if len(table) >= plans.MAX_PLANS:
                # Full: a pair not planned yet is taken by the kernel alone (planning it
                # without keeping the plan would select and step it twice).
                return False
            found = table[key] = plans.plan(self._sc_spec, before, event)
        if found is None or (found.needs and not found.needs <= checked.keys()):
            return False
        changes, values = found.changes(checked)
        for _, name in found.required:
            if (changes[name] if name in changes else self._value_of(name)) is None:
                return False
        record: Any = self.record
        attrs = self._sc_spec.attrs
        acts = direct.acts
        # Watched by a listener: what this macrostep did, recorded once it holds (as `_take`).
        first, since = len(record.history), record.lastTransitionAt
        if acts:  # what puts the run back if an action raises (as `kernel.commit`'s undo)
            written = ["status", "lastTransitionAt",
                       *(["configuration"] if found.members is not None else []),
                       *(["counts"] if found.counted else []), *(attrs[n] for n in changes)]
            kept = ([(attr, getattr(record, attr)) for attr in written],
                    len(record.history), before)
        # As `kernel.commit` writes an effect.
        record.status = found.status
        record.lastTransitionAt = at
        if found.members is not None:
            record.configuration = list(found.members)
        if found.counted:
            record.counts = dict(record.counts)
        for name, value in changes.items():
            setattr(record, attrs[name], value)
        step, member = self._sc_step_class, found.event
        record.history.extend(step(member, move.source, move.target, at, these, move.kind)
                              for move, these in zip(found.moves, values, strict=True))
        self._active = found.configuration
        self._selection = None
        if acts:
            self._planned_actions(direct, found, (event, checked, at), kept)
        watch = self._sc_watch
        if watch is not None:
            watch.append(_Macrostep(event, first, len(record.history), self._active,
                                    record.status.value, at, since))
        self._exit_if_ended(direct)
        return True

    def _exit_if_ended(self, direct: DirectCalls) -> None:
        """A run that steps without a machine and has just ended: every state's exit actions,
        deepest first (SCXML exits every active state when the run ends), called once its
        macrostep is recorded. The event is applied by now: an exception from these reaches
        the caller with the record in its final state."""
        active = self._active
        if direct.exit and self._sc_spec.chart.ended(active):
            self._call_actions(direct.exit, tuple(reversed(active)))

    def _planned_actions(self, direct: DirectCalls, found: plans.Plan,
                         pending: tuple[str, kernel.Given, dt.datetime],
                         kept: tuple[list[tuple[str, Any]], int, tuple[str, ...]]) -> None:
        """A planned step's actions, as `_act` calls them after `_direct_step`; if one
        raises, the record and the configuration are put back (`kept`) before the error
        reaches the caller. (When the run ends, every state's exit actions follow in
        `_take_planned`, as in `_take`.)"""
        self._pending = pending
        try:
            if direct.exit:
                self._call_actions(direct.exit, found.exited)
            if direct.on:
                on = direct.on
                for alternative in found.taken:
                    for name in on.get(alternative, ()):
                        getattr(self, name)()
            if direct.entry:
                self._call_actions(direct.entry, found.entered)
        except BaseException:
            record: Any = self.record
            written, length, before = kept
            for attr, value in written:
                setattr(record, attr, value)
            del record.history[length:]
            self._active = before
            raise
        finally:
            self._pending = None

    def _take(self, event: str, checked: dict[str, tuple[Any, JsonValue]] | None,
              at: dt.datetime) -> None:
        """Take `event` and the eventless transitions and completion events that follow, as
        one atomic step (a macrostep, `driver.macrostep`): each microstep computed by the
        kernel and committed before the actions run, through the machine (`_machine_step`)
        or, for a run with no machine, directly (`_direct_step`); taken back whole if
        anything raises. `checked` None: a new run's first macrostep, which has no event of
        its own (only the eventless transitions its initial states enable)."""
        machine = self._machine
        active = self._active
        history_values = dict(machine.history_values) \
            if machine is not None and self._sc_spec.chart.remembers else None
        watch = self._sc_watch
        record: Any = self.record
        first = len(record.history) if watch is not None else 0
        since = record.lastTransitionAt if watch is not None else None
        self._undo = []
        self._selection = None
        self._pending = (event, checked or _NO_VALUES, at)  # an event is being handled
        take = self._direct_step if machine is None else self._machine_step
        # A family's member (`error.tool.ratelimit`) is taken as the listed event whose
        # transitions take it (`error.tool`), and its step recorded by its own name (`_commit`).
        listed = self._sc_spec.listed(event) or event
        self._sent_as = (listed, event) if listed != event else None
        try:
            if not driver.macrostep(self._sc_spec, listed, checked, take, self._configuration,
                                    self._raised):
                raise self._refusal(event)
        except BaseException as exc:
            # All or nothing: every step this event committed is undone, and the machine goes
            # back too (python-statemachine rolls back only what failed inside a step's
            # actions, not an `after_` hook or a BaseException such as KeyboardInterrupt).
            for undo in reversed(self._undo):
                undo()
            self._active = active
            self._raised.clear()
            if machine is not None:
                if history_values is not None:
                    machine.history_values.clear()
                    machine.history_values.update(history_values)
                machine.reset_to(active)
                if isinstance(exc, TransitionNotAllowed) and \
                        not isinstance(exc, EventNotAccepted):
                    raise self._refusal(event) from None
            raise
        finally:
            self._pending = None
            self._effect = None
            self._undo = []
            self._sent_as = None
        if watch is not None:  # watched by a listener: what this macrostep did
            watch.append(_Macrostep(event, first, len(record.history), self._active,
                                    record.status.value, at, since))
        if machine is None:
            active = self._active
            # Where a machine built later finds the configuration (document order).
            self._sc_state = active[0] if len(active) == 1 else OrderedSet(active)
            if self._direct is not None:  # as `run_exit_actions` below
                self._exit_if_ended(self._direct)
        elif self._sc_spec.chart.ended(self._active):
            # SCXML exits every active state when the run ends; python-statemachine does not.
            # The event is applied by now: an exception from these actions reaches the caller
            # with the record in its final state.
            machine.run_exit_actions(list(reversed(self._active)), event)

    def _configuration(self) -> tuple[str, ...]:
        return self._active

    def _machine_step(self, event: str, values: kernel.Given) -> bool:
        """One microstep of `event` through the machine (`driver.Take`): the engine asks the
        run to select (`_sc_select`) and to commit (`_sc_microstep`), then runs the actions;
        whether it took one."""
        assert self._pending is not None
        self._pending = (event, values, self._pending[2])
        self._stepped = False
        spec = self._sc_spec
        try:
            # The machine's event id: the spec's name unless the module maps it.
            StateMachine.send(self.machine,
                              spec.event_ids.get(event, event) if spec.event_ids else event)
        except TransitionNotAllowed:
            if self._stepped:
                raise
        return self._stepped

    def _direct_step(self, event: str, values: kernel.Given) -> bool:
        """One microstep of `event` for a run with no machine (`machine`), committed
        (`driver.Take`), then its actions called: the guards and actions are the methods
        they name; whether it took one."""
        assert self._pending is not None
        at = self._pending[2]
        self._pending = (event, values, at)
        direct = self._direct
        assert direct is not None
        selection, effect = self._selected(event, values, at, self._ask)
        if effect is None:
            return False
        before = self._active
        self._commit(effect)
        if direct.acts:
            self._act(direct, before, effect, selection.taken)
        return True

    def _act(self, direct: DirectCalls, before: tuple[str, ...], effect: kernel.Effect,
             taken: list[Any]) -> None:
        """A committed microstep's actions, in the order python-statemachine runs them (and
        SCXML): the exit actions of the states it exits, deepest first (reverse document
        order), then each transition's actions in the order they were selected, then the
        entry actions of the states it enters, in document order. An action that raises
        ends the event, which `_take` takes back whole."""
        if direct.exit and (effect.entered or effect.configuration != before):
            after = set(effect.configuration)
            entered = set(effect.entered)
            order = self._sc_spec.chart.order
            exited = sorted((s for s in before if s not in after or s in entered),
                            key=order.__getitem__, reverse=True)
            self._call_actions(direct.exit, exited)
        if direct.on:
            on = direct.on  # by alternative (`_sc_direct_calls`)
            for alternative in taken:
                for name in on.get(alternative, ()):
                    getattr(self, name)()
        if direct.entry:
            self._call_actions(direct.entry, effect.entered)

    def _call_actions(self, actions: dict[str, tuple[str, ...]], states: Iterable[str]
                      ) -> None:
        """The actions of `states` (entry or exit ones), state by state in this order."""
        for state in states:
            for name in actions.get(state, ()):
                getattr(self, name)()

    def _commit(self, effect: kernel.Effect) -> None:
        """Apply a microstep's effect to the run (its record, configuration, raised events)."""
        if self._sent_as is not None and effect.event == self._sent_as[0]:
            effect = with_fields(effect, event=self._sent_as[1])
        work = self._sc_work
        if work:
            # The index of the step that enters the states: the first this microstep adds.
            index = len(self.record.history)  # type: ignore[attr-defined]
        self._undo.append(kernel.commit(self._sc_spec, self.record, effect,
                                        self._sc_step_class))
        if work:
            change = work.step(self._active, effect.configuration, effect.entered)
            if change:
                log = _WORK_LOGS.setdefault(self, [])
                log.append(WorkEntry(index, effect.event, effect.at, change))
                self._undo.append(functools.partial(_drop_last, log))
        self._active = effect.configuration
        if effect.raised:
            self._raised.extend(effect.raised)

    def _ask(self, alternative: Alternative) -> bool:
        """An alternative's guards on the direct path, asked as python-statemachine asks
        them: each method's answer must be the one that lets it through (`cond`: true)."""
        return all(bool(getattr(self, name)()) == wanted for name, wanted in alternative.guards)

    def _selected(self, event: str, values: kernel.Given,
                  at: dt.datetime, ask: kernel.Ask
                  ) -> tuple[kernel.Selection, kernel.Effect | None]:
        """What `event` selects from the run and its effect (`driver.microstep`; None when it
        selects nothing: the selection is kept for `_refusal`); a step the spec refuses
        raises the run's error for it."""
        selection, effect, refused = driver.microstep(self._sc_spec, self._state(), event,
                                                      values, at, ask)
        # Spec coverage (statechart_runtime.coverage): the one check it costs when off.
        if coverage.RECORDER is not None:
            coverage.RECORDER.selected(self, selection, effect)
        if refused is not None:
            raise self._refused(refused, event) from None
        if effect is None:
            self._selection = selection
        return selection, effect

    def _refusal(self, event: str) -> Exception:
        """Why the event took no transition (the last selection says)."""
        spec = self._sc_spec
        selection = self._selection
        refused = selection.refused if selection is not None else []
        limited = [detail for _, _, cause, detail in refused if cause == "limit"]
        if limited:
            state = str(limited[0])
            return spec.limit(state, spec.limits[state])
        guards = tuple(dict.fromkeys(
            name for _, _, cause, alternative in refused if cause == "guard"
            and isinstance(alternative, Alternative) for name in alternative.guard_names))
        inactive = tuple(dict.fromkeys(
            str(detail) for _, _, cause, detail in refused if cause == "in"))
        return EventNotAccepted(event, self._active, ended=False, guards=guards,
                                inactive=inactive)

    # -- timers ------------------------------------------------------------------------------

    @property
    def timers(self) -> tuple[timers.Timer[S, E], ...]:
        """The armed timers (state, event, due time in UTC, declined), in due order: the
        record's."""
        record: Any = self.record
        return tuple(record.timers) if self._sc_spec.timers else ()

    @property
    def next_deadline(self) -> dt.datetime | None:
        """When the earliest armed timer that has not been declined is due (aware, UTC), or
        None when there is none: call `fire_due` then (a store schedules its runs by this)."""
        return timers.next_due(self._sc_spec, self.record)

    def fire_due(self, now: dt.datetime | None = None) -> list[str]:
        """Fire every timer due at `now` (default: the run's clock), earliest first, each as
        its own step stamped with its due time (or the last step's time, if that is later);
        returns the events taken. A timer armed by one of these steps that is due by `now`
        fires too: the run ends as it would had a worker fired each timer on time. A timer
        with no enabled transition (its guards all said no) is marked declined: it fires
        again only when its state is re-entered or, for a deadline, when its field changes.
        At most MAX_TIMER_STEPS steps are taken per call (a spec whose deadlines in the past
        send the run round a loop would not end otherwise); the rest wait for the next."""
        if not self._sc_spec.timers:
            return []
        if self._pending is not None:
            raise RuntimeError("fire_due() called while an event is being handled; call it "
                               "after the action returns")
        if self._sc_heard is not None:
            return self._sc_heard.observed(self, "", lambda: self._fire_timers(self._when(now)))
        return self._fire_timers(self._when(now))

    def _fire_timers(self, when: dt.datetime) -> list[str]:
        record: Any = self.record
        if not timers.pending(record.timers, when):
            return []  # before every event: most often nothing is due
        chart = self._sc_spec.chart

        def fire(event: str, at: dt.datetime) -> bool:
            try:
                # One atomic step, as `send` takes one: a completion it causes is part of it.
                self._take(event, _NO_VALUES, at)
            except (EventNotAccepted, LimitExceeded, MissingField):
                # No transition of it is enabled (guards, a limit, a value a state needs):
                # it stays armed, declined, so the record shows it.
                return False
            return True

        def decline(timer: timers.Timer[Any, Any]) -> None:
            record.timers = timers.declined(record.timers, timer)

        return driver.fire_due(when, armed=lambda: record.timers,
                               ended=lambda: chart.ended(self._active),
                               last=lambda: record.lastTransitionAt, fire=fire,
                               decline=decline, limit=MAX_TIMER_STEPS)

    # -- the steps (called by the engine, statechart_runtime.machine) ------------------------

    def _sc_select(self, engine: Any, trigger_data: Any, predicate: Any) -> Any:
        """The engine's selection, by the runtime (`kernel.select`: SCXML order, limits and
        guards, the guards asked through python-statemachine), and the step's effect, computed
        here before anything runs (`kernel.step`; a step the spec refuses raises)."""
        pending = self._pending
        spec = self._sc_spec
        trigger = str(trigger_data.event)
        if pending is None or self._stepped or trigger != (
                spec.event_ids.get(pending[0], pending[0]) if spec.event_ids else pending[0]):
            if trigger not in self._sc_names:
                return OrderedSet()  # the library's own (`done.state.x`): the run raises its own
            raise RuntimeError(f"`{trigger}` was sent to the machine directly: send events "
                               f"through {type(self).__name__}'s methods (after the action "
                               "that is running returns): they keep the run record")
        event, values, at = pending
        transitions = self._sc_machine_transitions()

        def ask(alternative: Alternative) -> bool:
            return bool(engine._conditions_match(transitions[alternative], trigger_data))

        selection, effect = self._selected(event, values, at, ask)
        if effect is None:
            return OrderedSet()
        self._effect = effect
        return OrderedSet(transitions[a] for a in selection.taken)

    def _refused(self, refused: kernel.Refused, event: str) -> Exception:
        spec = self._sc_spec
        error: Exception
        if refused.cause == "limit":
            error = spec.limit(str(refused.state), int(refused.limit or 0))
            return error
        name = refused.field or "?"
        if refused.cause == "missing":
            source, target = refused.move or ("?", "?")
            error = spec.missing(name, f"`{event}` from `{source}` to `{target}` sets it; "
                                 f"pass {name}=...")
        else:
            error = spec.missing(name, f"`{refused.state}` requires it, and `{event}` "
                                 + ("clears it" if refused.cleared else "does not set it"))
        return error

    def _sc_microstep(self, transitions: list[Any], trigger: str) -> None:
        """Called by the engine for every microstep, before any action: commits the effect
        `_sc_select` computed (the actions then see the record as the step leaves it)."""
        effect = self._effect
        if effect is None or self._stepped:
            raise RuntimeError(f"`{trigger}` was sent to the machine directly: send events "
                               f"through {type(self).__name__}'s methods")
        self._effect = None
        self._commit(effect)
        self._stepped = True


def _bind(spec: SpecTables, machine: type[Machine], names: Mapping[str, str],
          module: str) -> dict[Alternative, Any]:
    """Bind the spec's table of alternatives to the order and guards the machine class
    declares (`AlternativeTable.bind`), and map each alternative to its transition object
    (the machine class's are shared by its instances)."""
    declared = declared_alternatives(machine, spec.history_targets, dict(names))
    table = spec.alternatives
    table.bind((row for row, _ in declared), module)
    out: dict[Alternative, Any] = {}
    seen: dict[tuple[str, str], int] = {}
    for (source, event, *_), transition in declared:
        position = seen.get((source, event), 0)
        seen[(source, event)] = position + 1
        out[table.on[(source, event)][position]] = transition
    return out


# -- what other modules read of runs and their classes (run stores, the test tooling) -------
#
# Module functions, not methods: a generated class's public names are its spec's events.


@dataclass(frozen=True, slots=True)
class WorkEntry:
    """What one microstep did to a run's work items: the index in the run's record history
    of its first step (None: the run's initial states, entered by no step), its event and
    time, and the items it ended and started."""

    index: int | None
    event: str
    at: dt.datetime
    change: WorkChange


def _drop_last(log: list[WorkEntry]) -> None:
    log.pop()


# What the steps taken since a run was made or last stored did to its work items, for a run
# store to write in the same transaction as the steps (runs of a spec with work only).
_WORK_LOGS: weakref.WeakKeyDictionary[Run[Any, Any, Any], list[WorkEntry]] = \
    weakref.WeakKeyDictionary()


def work_log(run: Run[Any, Any, Any]) -> list[WorkEntry]:
    """What the steps a run took since it was made, restored or last stored did to its
    work items, in order: a run store writes it with the steps, then `forget_work_log`."""
    return _WORK_LOGS.get(run, [])


def forget_work_log(run: Run[Any, Any, Any]) -> None:
    """The run's work changes were stored."""
    _WORK_LOGS.pop(run, None)


@dataclass(frozen=True, slots=True)
class RunClass:
    """What the runtime knows of a generated run class (made once per class)."""

    spec: SpecTables
    record: type[Any]
    names: Mapping[str, str]  # the machine's event ids -> the spec's event names
    source: Mapping[str, Any] | None  # where the spec writes each state and transition
    direct_calls: Callable[[], DirectCalls | None]


_RUN_CLASSES: weakref.WeakKeyDictionary[type, RunClass] = weakref.WeakKeyDictionary()


def run_class_of(run: Run[Any, Any, Any] | type[Run[Any, Any, Any]]) -> RunClass:
    """What the runtime knows of a generated run class (or of a run's)."""
    found = _RUN_CLASSES.get(run if isinstance(run, type) else type(run))
    if found is None:
        raise TypeError(f"{run!r} is not a generated run class nor one of its runs")
    return found


def spec_of(run: Run[Any, Any, Any] | type[Run[Any, Any, Any]]) -> SpecTables:
    """The spec tables of a run or of its class (its name, version, states, tags, ...)."""
    return run_class_of(run).spec


def record_class_of(run_class: type[Run[Any, Any, Any]]) -> type[Any]:
    """The record class of a run class (`from_dict` restores a stored record)."""
    return run_class_of(run_class).record


def active_states(run: Run[Any, Any, Any]) -> tuple[str, ...]:
    """The names of a run's active states, ancestors included (what a store indexes)."""
    return tuple(member.value for member in run.configuration)


def steps_without_machine(run_class: type[Run[Any, Any, Any]]) -> bool:
    """Whether the runs of `run_class` step without a python-statemachine machine and call
    nothing but guards (the class has no actions): a step can then be computed again
    without running anything twice (a store computes it before taking its write lock)."""
    calls = run_class_of(run_class).direct_calls()
    return calls is not None and not calls.acts
