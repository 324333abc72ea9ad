"""Listeners: observers of what runs do (docs/observability.md).

A listener is any callable taking one observation, an instance of one of the frozen
dataclasses of statechart_runtime.observations (imported from here too):

- `RunCreated`: a run was stored;
- `StepTaken`: one macrostep (an event sent, or a timer fired, and the eventless transitions
  and completions that followed it), with its transitions (`steps`) and the configuration
  after it;
- `EventRefused`: an event was refused, and why (`reason`: the error's type name);
- `TimersFailed`: a run's due timers could not be fired (a guard or an action raised);
- `WorkClaimed`, `WorkCompleted`, `WorkFailed`, `LeaseLost`: a work item's life;
- `Answered`: a person answered a run in the console.

Register one on a store (`open_store(url, listeners=[...])`, `store.listen(listener)`), on a
console (`console.app(..., listeners=[...])`) or on a run kept in memory
(`run.listen(listener)`). A store tells its listeners after its transaction committed: a step
it rolled back is never reported as taken. A listener is called in the caller's thread (on
the asynchronous store, in its event loop): keep it quick, or hand the observation to a
queue. A listener that raises is logged (logger `statechart_runtime.listeners`) and the call
goes on: observing never changes what a run does.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from statechart_runtime.chart.chart import INTERNAL, MULTI, TARGETLESS
from statechart_runtime.observations import (
    Answered,
    EventRefused,
    LeaseLost,
    Listener,
    Observation,
    RunCreated,
    Step,
    StepStarting,
    StepTaken,
    TimersFailed,
    TraceContextSource,
    WorkClaimed,
    WorkCompleted,
    WorkFailed,
)

# The observations are defined in statechart_runtime.observations and imported from here too.
__all__ = [
    "Answered", "EventRefused", "LeaseLost", "Listener", "Listeners", "Macrostep",
    "Observation", "RunCreated", "RunListeners", "Step", "StepStarting", "StepTaken",
    "TimersFailed", "TraceContextSource", "WorkClaimed", "WorkCompleted", "WorkFailed",
    "load_listener", "watch",
]

LOG = logging.getLogger("statechart_runtime.listeners")
T = TypeVar("T")


class Listeners:
    """The listeners of a store, a console or a run: told each observation in the order
    they were added; one that raises is logged, and the others are told all the same."""

    __slots__ = ("_all", "_context_sources", "_step_sources")

    def __init__(self, listeners: Iterable[Listener] = ()) -> None:
        self._all: tuple[Listener, ...] = ()
        self._context_sources: tuple[Any, ...] = ()
        self._step_sources: tuple[Any, ...] = ()
        for listener in listeners:
            self.add(listener)

    def __bool__(self) -> bool:
        return bool(self._all)

    def __iter__(self) -> Any:
        return iter(self._all)

    def add(self, listener: Listener) -> Listener:
        """Add `listener` (told from the next call on); returns it (a decorator too)."""
        if not callable(listener):
            raise TypeError(f"a listener is a callable taking one observation, got "
                            f"{listener!r}")
        # A new tuple: a call under way in another thread iterates the old one.
        self._all = (*self._all, listener)
        if callable(getattr(listener, "new_run_context", None)):
            self._context_sources = (*self._context_sources, listener)
            if callable(getattr(listener, "new_step_context", None)):
                self._step_sources = (*self._step_sources, listener)
        return listener

    def remove(self, listener: Listener) -> None:
        """Stop telling `listener` (ValueError if it was not added)."""
        # Equality: a bound method (`seen.append`) is a new object at each access.
        if listener not in self._all:
            raise ValueError(f"{listener!r} is not a listener here")
        self._all = tuple(one for one in self._all if one != listener)
        self._context_sources = tuple(one for one in self._context_sources
                                      if one != listener)
        self._step_sources = tuple(one for one in self._step_sources if one != listener)

    @property
    def wants_context(self) -> bool:
        """Whether a listener keeps a context with each new run (`TraceContextSource`)."""
        return bool(self._context_sources)

    def new_run_context(self, run_id: str, spec: str) -> str | None:
        """The first context a `TraceContextSource` listener gives for a new run (one that
        raises is logged and passed over)."""
        for source in self._context_sources:
            try:
                found = source.new_run_context(run_id, spec)
            except Exception:
                LOG.exception("listener %r failed to give a new run's context", source)
                continue
            if found is not None:
                return str(found)
        return None

    @property
    def wants_step_context(self) -> bool:
        """Whether a listener gives a context for each macrostep before it is written."""
        return bool(self._step_sources)

    def new_step_context(self, step: StepStarting) -> str | None:
        """The first context a listener gives for a macrostep about to be written (one
        that raises is logged and passed over)."""
        for source in self._step_sources:
            try:
                found = source.new_step_context(step)
            except Exception:
                LOG.exception("listener %r failed to give a step's context", source)
                continue
            if found is not None:
                return str(found)
        return None

    def notify(self, seen: Observation) -> None:
        for listener in self._all:
            try:
                listener(seen)
            except Exception:
                # Observing never changes what a run does: the call was committed already.
                LOG.exception("listener %r failed on %s of run %r", listener,
                              type(seen).__name__, getattr(seen, "run_id", None))

    def notify_all(self, seen: Iterable[Observation]) -> None:
        for one in seen:
            self.notify(one)


# -- what a run records of its macrosteps while watched -----------------------------------

@dataclasses.dataclass(frozen=True, slots=True)
class Macrostep:
    """What `Run._take` appends to a watched run's `_sc_watch` after each macrostep: its
    event, the history indexes of its transitions, the configuration and status after it,
    its time, and the run's last step's time before it."""

    event: str
    first: int
    end: int
    configuration: tuple[str, ...]
    status: str
    at: dt.datetime
    since: dt.datetime | None
    # Given before the store writes it (`start_steps`): its own trace context, and the one
    # of the step that armed its timer or enqueued its work item.
    context: str | None = None
    origin: str | None = None


def watch(run: Any) -> None:
    """Have `run` record its macrosteps from now on (`steps_taken` reads them)."""
    run._sc_watch = []


def steps_taken(run: Any, *, via: str, revision: int | None, started: float,
                work: str | None = None, attempt: int | None = None,
                trace_context: str | None = None) -> list[StepTaken]:
    """The macrosteps `run` recorded since `watch`, as StepTakens (and stop watching it)."""
    macrosteps: list[Macrostep] | None = getattr(run, "_sc_watch", None)
    if not macrosteps:
        return []
    run._sc_watch = None
    spec = _spec_of(run)
    history = run.record.history
    timer_rows = spec.timers.by_event
    ended = time.time()
    found: list[StepTaken] = []
    for macro in macrosteps:
        steps = tuple(Step(s.event.value, s.source.value, s.target.value, s.at,
                           dict(s.values), s.kind) for s in history[macro.first:macro.end])
        if not steps:
            continue
        row = timer_rows.get(macro.event) if timer_rows else None
        timer = None if row is None else row[0]
        found.append(StepTaken(
            run.record.runId, spec.name, spec.version, macro.event, timer, steps[0].source,
            steps[-1].target, steps[0].values, macro.configuration, macro.status, steps,
            macro.at, via, revision, started, ended, work, attempt, trace_context,
            macro.since, macro.context, macro.origin))
    return found


def entered_states(chart: Any, macro: Macrostep, before: tuple[str, ...],
                   history: Any) -> set[str]:
    """The states a macrostep entered: those active after it and not before, and every
    state active after it inside the domain of one of its transitions (entered again: a
    transition exits everything inside its domain, a self-transition of a compound state
    its children too; a re-entered state's timer is armed again, its work re-enqueued). A
    multi-target transition is recorded by its first target: its domain may be taken
    lower than it is (states entered again above it are missed)."""
    after = macro.configuration
    found = set(after).difference(before)
    for step in history[macro.first:macro.end]:
        kind = step.kind
        if kind == TARGETLESS:
            continue
        source, target = step.source.value, step.target.value
        if kind == INTERNAL:
            domain = chart.internal_effect(source, target)[0]
        elif kind is None or kind == MULTI:
            domain = chart.effect(source, target)[0]
        else:  # a history transition: its domain does not depend on what is remembered
            domain = chart.history_effect(source, target, kind, None)[0]
        if domain is None:  # the root's: every active state was exited
            return set(after)
        found.update(state for state in after if chart.is_descendant(state, domain))
    return found


def rearmed_states(timers: Any, macro: Macrostep, history: Any) -> set[str]:
    """The active states whose deadline timer a macrostep armed again by changing its field
    (a state entered is armed anyway): the step that set the field armed it."""
    by_field = timers.by_field
    if not by_field:
        return set()
    active = macro.configuration
    return {row[0] for step in history[macro.first:macro.end] for name in step.values
            for row in by_field.get(name, ()) if row[0] in active}


def start_steps(run: Any, sources: Listeners, *, via: str, started: float, revision: int,
                trace_context: str | None, linked: frozenset[str], before: tuple[str, ...],
                origins: Callable[[], Mapping[str, str]], work: str | None = None,
                attempt: int | None = None, work_origin: str | None = None
                ) -> dict[str, str]:
    """Before a store writes the macrosteps `run` recorded since `watch` (at `revision`): a
    context from the `TraceContextSource`s (`new_step_context`) for each that entered one
    of the `linked` states (with a timer or work: what links back to it later), kept on it
    for its StepTaken with the context of the step that armed its timer or enqueued its
    work item (`origin_context`). `before`: the states active before the first;
    `origins()`: the stored contexts of those (state -> the step that entered it; asked
    for only when a timer fired); `work`, `attempt`, `work_origin`: the work item whose
    outcome this call applies, its claim's attempt, the context of the step that enqueued
    it. Returns the linked states entered, each with the context of the last macrostep
    that entered it: what the store writes with their rows."""
    macrosteps: list[Macrostep] | None = getattr(run, "_sc_watch", None)
    if not macrosteps:
        return {}
    spec = _spec_of(run)
    timer_rows = spec.timers.by_event
    history = run.record.history
    stored: Mapping[str, str] | None = None
    entered: dict[str, str] = {}
    previous = before
    for number, macro in enumerate(macrosteps):
        if macro.end <= macro.first:
            continue
        row = timer_rows.get(macro.event) if timer_rows else None
        timer = None if row is None else row[0]
        origin = work_origin if via == "work" else None
        if timer is not None:  # armed by a step of this call, else by a stored one
            origin = entered.get(timer)
            if origin is None:
                stored = origins() if stored is None else stored
                origin = stored.get(timer)
        kept = linked.intersection(entered_states(spec.chart, macro, previous, history))
        if timer_rows:
            kept |= rearmed_states(spec.timers, macro, history)
        previous = macro.configuration
        context = None
        if kept:  # else nothing links back to it: its span is made after the commit
            context = sources.new_step_context(StepStarting(
                run.record.runId, spec.name, spec.version, macro.event, timer,
                history[macro.first].source.value, history[macro.end - 1].target.value,
                macro.configuration, macro.status, via, revision, work, attempt, started,
                trace_context, origin))
            if context is not None:
                for state in kept:
                    entered[state] = context
        if context is not None or origin is not None:
            macrosteps[number] = Macrostep(macro.event, macro.first, macro.end,
                                           macro.configuration, macro.status, macro.at,
                                           macro.since, context, origin)
    return entered


_SPEC_OF: Callable[[Any], Any] | None = None


def _spec_of(run: Any) -> Any:
    """The spec tables of a run or of its class: statechart_runtime.run's `spec_of`,
    imported when first needed (that package imports this module), then kept (an import
    statement in a function costs about 2 µs at each call)."""
    global _SPEC_OF
    if _SPEC_OF is None:
        from statechart_runtime.run import spec_of

        _SPEC_OF = spec_of
    return _SPEC_OF(run)


def reason_of(error: BaseException) -> str:
    """An error's reason, for people and metrics: its type's name, or, for a spec's own
    subclass (`TicketMissingField`), the runtime's class it refines (`MissingField`): one
    name per kind of refusal, whatever the spec."""
    for cls in type(error).__mro__:
        if cls.__module__.startswith(("statechart_runtime.", "builtins")):
            return cls.__name__
    return type(error).__name__


def refused(run_class: Any, run_id: str, event: str, error: BaseException, *, via: str,
            started: float, work: str | None = None, attempt: int | None = None,
            trace_context: str | None = None) -> EventRefused:
    spec = _spec_of(run_class)
    return EventRefused(run_id, spec.name, spec.version, event, reason_of(error), error,
                        via, started, time.time(), work, attempt, trace_context)


class RunListeners(Listeners):
    """The listeners of a run in memory (`Run.listen`): its sends and fire_due, observed."""

    __slots__ = ("busy",)

    def __init__(self, listeners: Iterable[Listener] = ()) -> None:
        super().__init__(listeners)
        self.busy = False  # a call is being observed (a send reaches `_fire`: once)

    def observed(self, run: Any, event: Any, call: Callable[[], T]) -> T:
        """`call()` (a send or fire_due of `run`), its macrosteps and the refusal of
        `event` told afterwards. A run a store watches too (loaded, to be saved) keeps its
        macrosteps for the store as well."""
        from statechart_runtime.errors import RunError

        started = time.time()
        prior: list[Macrostep] | None = getattr(run, "_sc_watch", None)
        watch(run)
        self.busy = True
        try:
            result = call()
        except RunError as exc:
            # Timers that fired before the refused event were taken all the same.
            self._told(run, prior, started)
            self.notify(refused(type(run), run.record.runId, str(getattr(event, "value", event)),
                                exc, via="run", started=started))
            raise
        except BaseException:
            # A macrostep is recorded once it holds: what is recorded stays applied (a run
            # that ended, then an exit action raised), the store's to tell when it is saved.
            if prior is not None:
                prior.extend(getattr(run, "_sc_watch", None) or ())
            run._sc_watch = prior
            raise
        finally:
            self.busy = False
        self._told(run, prior, started)
        return result

    def _told(self, run: Any, prior: list[Macrostep] | None, started: float) -> None:
        mine = list(getattr(run, "_sc_watch", None) or ())
        self.notify_all(steps_taken(run, via="run", revision=None, started=started))
        if prior is not None:  # the store's: it tells its listeners when the run is saved
            prior.extend(mine)
        run._sc_watch = prior


def load_listener(where: str) -> Listener:
    """The listener named by `module:object` (`statechart runs work --listener`): a callable
    taking one observation, or a class, made with no arguments. ValueError says what is
    wrong."""
    from statechart_runtime.named import named_object

    found = named_object(where, "--listener", "a callable taking one observation",
                         "myservice.observe:LISTENER")
    attr = where.partition(":")[2]
    if isinstance(found, type):
        try:
            found = found()
        except Exception as exc:
            raise ValueError(f"--listener {where!r}: {attr}() failed: {exc}") from None
    if not callable(found):
        raise ValueError(f"--listener {where!r}: {attr!r} is "
                         f"{'missing' if found is None else type(found).__name__}, not a "
                         "callable taking one observation")
    listener: Listener = found
    return listener
