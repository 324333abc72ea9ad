"""OpenTelemetry traces of runs (the `otel` extra: opentelemetry-api; docs/observability.md).

`TracingListener` is a listener (statechart_runtime.listeners) that makes one span per event
a run takes or refuses, after the store committed it, from the call's start to its commit:

- `create {spec}`: the run was stored. Its context (W3C `traceparent`) is what the store
  keeps with the run (the listener is a `TraceContextSource`), so every later step of the
  run, in any process and any day, joins that trace: its span's parent is the run's
  `create` span, or, when the caller has a span of its own (an HTTP request), that span,
  with a link to the run's.
- `send {spec}`, `timer {spec}`, `work {spec}`: a macrostep, by how it was taken (an event
  sent; a timer fired; a work item's outcome or error event). Through a store, the span is
  started before the write (`new_step_context`: the store keeps its context with the
  states the step entered and the work items it enqueued) and ended once it committed (a
  step whose write failed is never ended, so never exported). A timer's and a work
  outcome's span links to the span of the step that entered the state that armed the timer
  or enqueued the work, in whichever process that step was taken.
- a refused event: the span its event would have had, status ERROR, `error.type` the reason;
  due timers that could not be fired (a guard or an action raised): a `timer {spec}` span,
  status ERROR, `error.type` the original error's type name.
- `work_attempt {spec}`: a work item's attempt, from its claim (in this process) to its
  outcome, failure or lost lease (`statechart.work.result`; status ERROR and `error.type`
  but for `completed`), linked to the step that enqueued the item. With
  `genai_operations={handler: operation}`, an attempt of that handler follows OpenTelemetry's
  GenAI conventions (development status) instead: `{operation} {handler}`, with
  `gen_ai.operation.name` (and `gen_ai.tool.name` for `execute_tool`).

Span names are of low cardinality (the operation and the spec); everything else is an
attribute: `statechart.run.id`, `statechart.spec.name`, `statechart.spec.version`,
`statechart.event`, `statechart.source`, `statechart.target`, `statechart.configuration`,
`statechart.status`, `statechart.revision`, `statechart.via`, `statechart.timer.state`,
`statechart.work.key`, `statechart.work.handler`, `statechart.work.attempt`,
`statechart.work.owner`, `statechart.work.result`, `error.type`.
No span stays open for a run's life: each ends when its call committed. `batch=N`: the
spans of steps taken and events refused made N at a time (`TracingListener.__init__`).
"""

from __future__ import annotations

import atexit
import collections
import json
import logging
import threading
import time
import weakref
from collections.abc import Mapping
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.propagate import extract, inject
from opentelemetry.trace import Link, SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from statechart_runtime import listeners as heard

_SECOND = 1_000_000_000
LOG = logging.getLogger("statechart_runtime.otel")
# The span attributes of this module (besides OpenTelemetry's `error.type`): names in the
# `statechart` namespace, not modules.
ATTRIBUTES = frozenset({
    "statechart.configuration", "statechart.event", "statechart.link", "statechart.revision",
    "statechart.run.id", "statechart.source", "statechart.spec.name",
    "statechart.spec.version", "statechart.status", "statechart.target",
    "statechart.timer.state", "statechart.via", "statechart.work.attempt",
    "statechart.work.call", "statechart.work.handler", "statechart.work.key",
    "statechart.work.owner", "statechart.work.result"})
# How many spans of runs this process remembers: a run's new-run span until its create
# committed, a step's span until its write committed, and the span of the step that
# entered each state (timer and work links).
_REMEMBERED = 10_000
# A step's context as the store keeps it (with the states it entered and the work items it
# enqueued): W3C trace context, whatever propagator the application set globally.
_W3C = TraceContextTextMapPropagator()


def _ns(seconds: float) -> int:
    return int(seconds * _SECOND)


# The caller's span: looked up in the current context once per span (a module-level name,
# not `trace.get_current_span` through the module at each call).
_current_span = trace.get_current_span


class TracingListener:
    """Spans of runs (module docstring), made with `tracer_provider`'s tracer (default: the
    global one, `opentelemetry.trace.set_tracer_provider`). Register it on a store
    (`open_store(url, listeners=[TracingListener()])`), the console, the worker
    (`statechart runs work --listener statechart_runtime.otel:TracingListener`) or a run."""

    def __init__(self, tracer_provider: Any = None, *,
                 genai_operations: Mapping[str, str] | None = None, batch: int = 0,
                 max_delay: float = 1.0) -> None:
        """`batch` > 0: the spans of steps taken and events refused are made `batch` at a
        time (in the call that completes a batch), or by a thread of the listener's once the
        oldest waited `max_delay` seconds, or at `flush()` and at exit: the same spans, with
        the same times, parents and links, made for a fraction of the CPU (the SDK's code
        stays in the processor's caches while it makes a batch), exported later. Spans
        started before a store's write (a step that enters a state with a timer or work)
        are made at once all the same."""
        from importlib.metadata import PackageNotFoundError, version

        if batch < 0 or max_delay <= 0:
            raise ValueError(f"TracingListener: batch must be 0 or more and max_delay more "
                             f"than 0 seconds, got batch={batch!r}, max_delay={max_delay!r}")

        try:
            found = version("statechart-compiler")
        except PackageNotFoundError:
            found = None
        self._tracer = trace.get_tracer("statechart_runtime", found,
                                        tracer_provider=tracer_provider)
        # run id -> its `create` span, open until the create committed (ended then; one
        # whose create failed is never ended, so never exported).
        self._creating: collections.OrderedDict[str, Any] = collections.OrderedDict()
        # Work handler -> its GenAI operation (`execute_tool`, `chat`, `invoke_agent`, ...).
        self._genai = dict(genai_operations or {})
        # (work item key, attempt) -> when this process's claim of it committed.
        self._claims: collections.OrderedDict[tuple[str, int], float] = \
            collections.OrderedDict()
        # (run id, state) -> the span context of the step that entered the state.
        self._entered: collections.OrderedDict[tuple[str, str], Any] = \
            collections.OrderedDict()
        # A step's context given to the store -> its span, started before the write and
        # ended once it committed (one whose write failed is never ended, so never exported).
        self._pending: collections.OrderedDict[str, Any] = collections.OrderedDict()
        # A run's stored context -> (its span context or None, the context a span of the
        # run starts in when the caller has none): parsed once per run.
        self._parsed: collections.OrderedDict[str, tuple[Any, Any]] = \
            collections.OrderedDict()
        # `batch`: the observations whose spans are not made yet, each with the caller's
        # span when it was told (its parent), oldest first; made by `flush`, one at a time.
        self._batch = batch
        self._max_delay = max_delay
        self._waiting: collections.deque[tuple[Any, Any]] = collections.deque()
        # Held while the maps above change, by the caller's thread and by the flusher's (a
        # batch's spans are made by either): re-entrant, as a call may flush.
        self._flushing = threading.RLock()
        self._flusher: threading.Thread | None = None

    # -- the run's context, kept by the store -----------------------------------------------

    def new_run_context(self, run_id: str, spec: str) -> str | None:
        span = self._tracer.start_span(f"create {spec}", kind=SpanKind.INTERNAL, attributes={
            "statechart.run.id": run_id, "statechart.spec.name": spec})
        self._creating[run_id] = span
        while len(self._creating) > _REMEMBERED:
            self._creating.popitem(last=False)
        carrier: dict[str, str] = {}
        inject(carrier, context=trace.set_span_in_context(span))
        return json.dumps(carrier, sort_keys=True)

    def new_step_context(self, step: heard.StepStarting) -> str | None:
        """Start the span of a macrostep a store is about to write (ended by its StepTaken,
        once the write committed); its context, for the store to keep with the states the
        step entered and the work items it enqueued."""
        if self._batch:  # the flusher's thread may be making spans, and changing the maps
            with self._flushing:
                return self._new_step_context(step)
        return self._new_step_context(step)

    def _new_step_context(self, step: heard.StepStarting) -> str | None:
        parent, links = self._parent(step.trace_context)
        origin = _span_context(step.origin_context)
        if origin is None and step.timer is not None:  # armed in this process, not stored
            if self._waiting:
                self.flush()  # the step that armed it may wait in a batch
            origin = self._entered.get((step.run_id, step.timer))
        if origin is not None:
            links.append(Link(origin, {"statechart.link": "armed" if step.timer is not None
                                       else "enqueued"}))
        span = self._tracer.start_span(f"{_operation(step.timer, step.via)} {step.spec}",
                                       context=parent, links=links,
                                       attributes=_step_attributes(step),
                                       start_time=_ns(step.started))
        made = span.get_span_context()
        if not made.is_valid:  # no SDK: nothing to keep
            return None
        # W3C's traceparent, as its propagator writes it (formatted here: once per step).
        context = (f'{{"traceparent": "00-{made.trace_id:032x}-{made.span_id:016x}-'
                   f'{made.trace_flags:02x}"}}')
        self._pending[context] = span
        while len(self._pending) > _REMEMBERED:
            self._pending.popitem(last=False)
        return context

    def _run_context(self, stored: str | None) -> tuple[Any, Any]:
        """The span context the store kept with the run (None: none, or not one), and the
        context a span of the run starts in without a caller's span (the run's, or an empty
        one: a root)."""
        if not stored:
            return None, otel_context.Context()
        found = self._parsed.get(stored)
        if found is not None:
            return found
        try:
            carrier = json.loads(stored)
        except ValueError:
            carrier = {}
        span = trace.get_current_span(extract(carrier, context=otel_context.Context()))
        span_context = span.get_span_context()
        found = (span_context, trace.set_span_in_context(span)) if span_context.is_valid \
            else (None, otel_context.Context())
        self._parsed[stored] = found
        while len(self._parsed) > _REMEMBERED:
            self._parsed.popitem(last=False)
        return found

    def _parent(self, stored: str | None, caller: Any = None) -> tuple[Any, list[Link]]:
        """The context a span of the run starts in, and its links: the caller's span if it
        has one (linked to the run's), else the run's. `caller`: the caller's span when it
        was told (a span made later, in a batch), else the current one."""
        run, context = self._run_context(stored)
        current = (_current_span() if caller is None else caller).get_span_context()
        if current.is_valid:
            links = [Link(run)] if run is not None and run.trace_id != current.trace_id \
                else []
            return None if caller is None else trace.set_span_in_context(caller), links
        return context, []

    # -- the listener --------------------------------------------------------------------

    def __call__(self, seen: heard.Observation) -> None:
        if self._batch:  # the flusher's thread may be making spans, and changing the maps
            with self._flushing:
                self._observe(seen)
        else:
            self._observe(seen)

    def _observe(self, seen: heard.Observation) -> None:
        if self._batch and (isinstance(seen, heard.EventRefused) or (
                isinstance(seen, heard.StepTaken) and seen.step_context not in self._pending)):
            self._wait(seen)
        elif isinstance(seen, heard.StepTaken):
            self._step(seen)
        elif isinstance(seen, heard.EventRefused):
            self._refused(seen)
        elif isinstance(seen, heard.TimersFailed):
            self._timers_failed(seen)
        elif isinstance(seen, heard.RunCreated):
            span = self._creating.pop(seen.run_id, None)
            if span is not None:
                span.set_attribute("statechart.spec.version", seen.version)
                span.set_attribute("statechart.status", seen.status)
                span.set_attribute("statechart.configuration", list(seen.configuration))
                span.end()
                # The initial states were entered by the creation: their timers and work
                # link to it.
                self._remember(seen.run_id, seen.configuration, span.get_span_context())
        elif isinstance(seen, heard.WorkClaimed):
            # The attempt's span starts now (the claim committed) and ends with its outcome.
            self._claims[(seen.key, seen.attempt)] = time.time()
            while len(self._claims) > _REMEMBERED:
                self._claims.popitem(last=False)
        elif isinstance(seen, heard.WorkCompleted):
            self._attempt(seen, "completed", None, seen.ended)
        elif isinstance(seen, heard.WorkFailed):
            self._attempt(seen, "retry" if seen.retry_at is not None else "failed",
                          ("WorkFailed", seen.error), seen.ended)
        elif isinstance(seen, heard.LeaseLost):
            self._attempt(seen, "lease_lost", (seen.reason, f"{seen.call}: {seen.reason}"),
                          time.time())

    # -- spans made in batches (`batch`) ----------------------------------------------------

    def _wait(self, seen: heard.StepTaken | heard.EventRefused) -> None:
        """Keep `seen` for the next batch (with the caller's span: its parent then)."""
        self._waiting.append((seen, _current_span()))
        if len(self._waiting) >= self._batch:
            self.flush()
        elif self._flusher is None:
            self._start_flusher()

    def flush(self) -> None:
        """Make the spans of the observations kept for a batch (`batch`), oldest first; a
        span that fails is logged (logger `statechart_runtime.otel`), the others made."""
        with self._flushing:
            waiting = self._waiting
            while waiting:
                seen, caller = waiting.popleft()
                try:
                    if isinstance(seen, heard.StepTaken):
                        self._step(seen, caller)
                    else:
                        self._refused(seen, caller)
                except Exception:
                    LOG.exception("the span of %s of run %r could not be made",
                                  type(seen).__name__, seen.run_id)

    def _start_flusher(self) -> None:
        """A daemon thread that makes the waiting spans once the oldest waited `max_delay`
        (a process that stops taking steps exports them all the same), and a flush at exit
        (before the tracer provider's own shutdown: registered after it)."""
        mine = weakref.ref(self)
        delay = self._max_delay

        def run() -> None:
            while True:
                time.sleep(delay)
                listener = mine()
                if listener is None:
                    return
                listener.flush()
                del listener

        def at_exit() -> None:
            listener = mine()
            if listener is not None:
                listener.flush()

        with self._flushing:
            if self._flusher is not None:
                return
            self._flusher = threading.Thread(target=run, name="statechart-tracing-batch",
                                             daemon=True)
            self._flusher.start()
        atexit.register(at_exit)

    def _step(self, seen: heard.StepTaken, caller: Any = None) -> None:
        started = _ns(seen.started)
        span = self._pending.pop(seen.step_context, None) \
            if seen.step_context is not None else None
        if span is None:  # not started before the write (a run in memory)
            parent, links = self._parent(seen.trace_context, caller)
            # The state whose timer fired, or whose work item's outcome this is (its key is
            # `run id/state/n`).
            armed = seen.timer if seen.timer is not None else \
                seen.work.rsplit("/", 2)[1] if seen.work is not None else None
            if armed is not None:
                found = _span_context(seen.origin_context) or \
                    self._entered.get((seen.run_id, armed))
                if found is not None:
                    links.append(Link(found, {"statechart.link": "armed"
                                              if seen.timer is not None else "enqueued"}))
            span = self._tracer.start_span(f"{_operation(seen.timer, seen.via)} {seen.spec}",
                                           context=parent, links=links,
                                           attributes=_step_attributes(seen),
                                           start_time=started)
        span.end(end_time=max(_ns(seen.ended), started))
        if seen.step_context is None:
            # What a later timer or work outcome links to (a step started before its write
            # has its context kept by the store, with the states it entered).
            self._remember(seen.run_id, [step.target for step in seen.steps],
                           span.get_span_context())

    def _remember(self, run_id: str, entered: Any, span_context: Any) -> None:
        for state in entered:
            self._entered[(run_id, state)] = span_context
            self._entered.move_to_end((run_id, state))
        while len(self._entered) > _REMEMBERED:
            self._entered.popitem(last=False)

    def _refused(self, seen: heard.EventRefused, caller: Any = None) -> None:
        parent, links = self._parent(seen.trace_context, caller)
        attributes: dict[str, Any] = {
            "statechart.run.id": seen.run_id, "statechart.spec.name": seen.spec,
            "statechart.spec.version": seen.version, "statechart.event": seen.event,
            "statechart.via": seen.via, "error.type": seen.reason}
        if seen.work is not None:
            attributes["statechart.work.key"] = seen.work
        if seen.attempt is not None:
            attributes["statechart.work.attempt"] = seen.attempt
        span = self._tracer.start_span(
            f"{'work' if seen.via == 'work' else 'send'} {seen.spec}", context=parent,
            links=links, attributes=attributes, start_time=_ns(seen.started))
        span.set_status(Status(StatusCode.ERROR, str(seen.error)[:500]))
        span.end(end_time=max(_ns(seen.ended), _ns(seen.started)))

    def _timers_failed(self, seen: heard.TimersFailed) -> None:
        parent, links = self._parent(seen.trace_context)
        span = self._tracer.start_span(
            f"timer {seen.spec}", context=parent, links=links, attributes={
                "statechart.run.id": seen.run_id, "statechart.spec.name": seen.spec,
                "statechart.spec.version": seen.version, "statechart.via": seen.via,
                "error.type": seen.reason}, start_time=_ns(seen.started))
        span.set_status(Status(StatusCode.ERROR, str(seen.error)[:500]))
        span.end(end_time=max(_ns(seen.ended), _ns(seen.started)))

    def _attempt(self, seen: heard.WorkCompleted | heard.WorkFailed | heard.LeaseLost,
                 result: str, error: tuple[str, str] | None, ended: float) -> None:
        """A span of a work item's attempt: from its claim (when this process claimed it)
        to its outcome, failure or lost lease, linked to the step that enqueued it."""
        handler = getattr(seen, "handler", None)
        parent, links = self._parent(seen.trace_context)
        state = seen.key.rsplit("/", 2)[1]
        enqueued = _span_context(seen.origin_context) or \
            self._entered.get((seen.run_id, state))
        if enqueued is not None:
            links.append(Link(enqueued, {"statechart.link": "enqueued"}))
        attributes: dict[str, Any] = {
            "statechart.run.id": seen.run_id, "statechart.spec.name": seen.spec,
            "statechart.work.key": seen.key, "statechart.work.attempt": seen.attempt,
            "statechart.work.owner": seen.owner, "statechart.work.result": result}
        name = f"work_attempt {seen.spec}"
        if handler is not None:
            attributes["statechart.work.handler"] = handler
            operation = self._genai.get(handler)
            if operation is not None:  # OpenTelemetry's GenAI conventions (development)
                name = f"{operation} {handler}"
                attributes["gen_ai.operation.name"] = operation
                if operation == "execute_tool":
                    attributes["gen_ai.tool.name"] = handler
        if isinstance(seen, heard.LeaseLost):
            attributes["statechart.work.call"] = seen.call
        if error is not None:
            attributes["error.type"] = error[0]
        started = self._claims.pop((seen.key, seen.attempt), None)
        if started is None:  # claimed in another process: the outcome's call alone
            started = getattr(seen, "started", ended)
        span = self._tracer.start_span(name, context=parent, links=links,
                                       attributes=attributes, start_time=_ns(started))
        if error is not None:
            span.set_status(Status(StatusCode.ERROR, error[1][:500]))
        span.end(end_time=max(_ns(ended), _ns(started)))


def _operation(timer: str | None, via: str) -> str:
    """A step span's operation: a timer fired, a work item's outcome, or an event sent."""
    return "timer" if timer is not None else "work" if via == "work" else "send"


def _step_attributes(seen: heard.StepTaken | heard.StepStarting) -> dict[str, Any]:
    """A step span's attributes (the configuration as the tuple it is: the SDK keeps
    sequences as tuples)."""
    attributes: dict[str, Any] = {
        "statechart.run.id": seen.run_id, "statechart.spec.name": seen.spec,
        "statechart.spec.version": seen.version, "statechart.event": seen.event,
        "statechart.source": seen.source, "statechart.target": seen.target,
        "statechart.configuration": seen.configuration,
        "statechart.status": seen.status, "statechart.via": seen.via}
    if seen.revision is not None:
        attributes["statechart.revision"] = seen.revision
    if seen.timer is not None:
        attributes["statechart.timer.state"] = seen.timer
    if seen.work is not None:
        attributes["statechart.work.key"] = seen.work
    if seen.attempt is not None:
        attributes["statechart.work.attempt"] = seen.attempt
    return attributes


def _span_context(stored: str | None) -> Any:
    """The span context of a step's context as the store keeps it (`new_step_context`), or
    None (none, or not one)."""
    if not stored:
        return None
    try:
        carrier = json.loads(stored)
    except ValueError:
        return None
    if not isinstance(carrier, dict):
        return None
    found = trace.get_current_span(_W3C.extract(carrier, context=otel_context.Context()))
    span_context = found.get_span_context()
    return span_context if span_context.is_valid else None
