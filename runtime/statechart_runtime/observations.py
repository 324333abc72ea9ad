"""The observations listeners are told (statechart_runtime.listeners, docs/observability.md):
one frozen dataclass per kind of thing a run did, the `Listener` protocol, and what a
tracing listener gives a store (`TraceContextSource`, `StepStarting`).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Mapping
from typing import Protocol

from statechart_runtime.chart.values import JsonValue


@dataclasses.dataclass(frozen=True, slots=True)
class Step:
    """One transition of a macrostep, as the run's history keeps it (`kind`: how it took its
    transition, None for an external one; docs/runs.md)."""

    event: str
    source: str
    target: str
    at: dt.datetime
    values: Mapping[str, JsonValue]
    kind: str | None


@dataclasses.dataclass(frozen=True, slots=True)
class RunCreated:
    """A run was stored (`store.create`). `trace_context`: what the store keeps with the run
    for tracing (a `TraceContextSource` listener's; None without one)."""

    run_id: str
    spec: str
    version: int
    status: str
    configuration: tuple[str, ...]
    at: dt.datetime
    trace_context: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class StepTaken:
    """A macrostep a run took: `event` (the event sent, or the fired timer's: `timer` is then
    the state that armed it), from `source` (its first transition's) to `target` (its last
    transition's), the `values` its event set, `configuration` (every active state after it,
    in document order) and `status` after it; `steps` its transitions. `at` is its time (a
    timer's: its due time, or the run's last step's time if later).

    How it was taken: `via` is `run` (a run in memory), `fire`, `fire_due` (a timer fired by
    `fire_due`/`fire_next_due`: the worker's), `work` (a work item's outcome or error
    event), `save` (taken in memory on a run a store created, loaded or fired, told when
    `store.save` committed); `revision` the stored revision after the call (None in
    memory). `started` and `ended` (seconds since the epoch, `time.time()`) bound the call
    that took it, its commit included: one call may take several macrosteps (timers due
    first, then the event).
    `work`, `attempt`: the work item and its claim's attempt, for `via` `work`; `since`: the
    run's previous step's time. `step_context`, `origin_context`: trace contexts (below)."""

    run_id: str
    spec: str
    version: int
    event: str
    timer: str | None
    source: str
    target: str
    values: Mapping[str, JsonValue]
    configuration: tuple[str, ...]
    status: str
    steps: tuple[Step, ...]
    at: dt.datetime
    via: str
    revision: int | None
    started: float
    ended: float
    work: str | None = None
    attempt: int | None = None
    trace_context: str | None = None
    # The run's last step's time before this macrostep (its creation's, for the first):
    # `at - since` is how long the run stayed in `source`.
    since: dt.datetime | None = None
    # What a `TraceContextSource` gave for this macrostep before the commit (its span's
    # context, stored with the states it entered and the work items it enqueued), and what
    # the store held for the step that armed the fired timer (entered its state) or
    # enqueued the work item whose outcome this is: None without a tracing listener then.
    step_context: str | None = None
    origin_context: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class EventRefused:
    """`event` was refused: `error` is the exception the caller got, `reason` its type's
    name (`EventNotAccepted`, `MissingField`, `ConcurrentUpdate`, ...: `reason_of`). Nothing
    of the event was stored (timers that fired before it were: those are StepTaken)."""

    run_id: str
    spec: str
    version: int
    event: str
    reason: str
    error: BaseException
    via: str
    started: float
    ended: float
    work: str | None = None
    attempt: int | None = None
    trace_context: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class TimersFailed:
    """A run's due timers could not be fired by `store.fire_due` or `store.fire_next_due`
    (the worker's round): a timer's guard or action raised, or the stored run could not be
    read or written (not the store's own failure: busy, away, full). Nothing was saved and
    the run stays due. `error` is the exception the caller got (fire_next_due's TimerFailed,
    the original its `__cause__`; fire_due's the original), `reason` the original's type
    name (`reason_of`: `RuntimeError`, `DamagedRow`, ...); `via` is `fire_due`."""

    run_id: str
    spec: str
    version: int
    reason: str
    error: BaseException
    via: str
    started: float
    ended: float
    trace_context: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class WorkClaimed:
    """A worker (`owner`) claimed a work item until `lease_until`, for its `attempt`.
    `expired`: the owner whose lease had expired (this claim took the item over: a lease
    expiry), else None. `exhausted`: that expiry used the item's attempts up."""

    run_id: str
    spec: str
    key: str
    state: str
    handler: str
    attempt: int
    owner: str
    lease_until: dt.datetime
    at: dt.datetime
    expired: str | None
    exhausted: bool
    trace_context: str | None = None
    origin_context: str | None = None  # the step's that enqueued the item


@dataclasses.dataclass(frozen=True, slots=True)
class WorkCompleted:
    """A work item's outcome `event` was applied (`applied` False: a repeat of a call whose
    commit was cut off; it had been applied then). The run's step is a StepTaken of its
    own."""

    run_id: str
    spec: str
    key: str
    state: str
    handler: str
    attempt: int
    owner: str
    event: str
    applied: bool
    started: float
    ended: float
    trace_context: str | None = None
    origin_context: str | None = None  # the step's that enqueued the item


@dataclasses.dataclass(frozen=True, slots=True)
class WorkFailed:
    """A work item's attempt failed with `error`: claimable again at `retry_at`, or, None,
    its attempts are used up and it ended; `error_event` is the work's error event fired on
    the run then (None: none, or the run refused it)."""

    run_id: str
    spec: str
    key: str
    state: str
    handler: str
    attempt: int
    owner: str
    error: str
    retry_at: dt.datetime | None
    error_event: str | None
    started: float
    ended: float
    trace_context: str | None = None
    origin_context: str | None = None  # the step's that enqueued the item


@dataclasses.dataclass(frozen=True, slots=True)
class LeaseLost:
    """A worker's `call` (`complete_work`, `fail_work`, `heartbeat_work`, `release_work`)
    was refused: its claim no longer holds the item (LeaseLost, or WorkEnded: `reason`)."""

    run_id: str
    spec: str
    key: str
    attempt: int
    owner: str
    call: str
    reason: str
    trace_context: str | None = None
    origin_context: str | None = None  # the step's that enqueued the item


@dataclasses.dataclass(frozen=True, slots=True)
class Answered:
    """A person (`who`) answered a run in the console with `event`: applied (False: an
    idempotency key seen before) at `revision`, the run now `status`."""

    run_id: str
    spec: str
    event: str
    who: str
    applied: bool
    revision: int
    status: str


Observation = (RunCreated | StepTaken | EventRefused | TimersFailed | WorkClaimed
               | WorkCompleted | WorkFailed | LeaseLost | Answered)


class Listener(Protocol):
    """Anything called with each observation (a function will do)."""

    def __call__(self, seen: Observation, /) -> None: ...


@dataclasses.dataclass(frozen=True, slots=True)
class StepStarting:
    """A macrostep a store computed and is about to write (`TraceContextSource.
    new_step_context`): what its StepTaken will say once the write committed, as far as it
    is known before: its run, `event`, `timer` (the state that armed it, None for an event
    sent), `source`, `target`, `configuration` and `status` after it, `via`, the `revision`
    the write stores, `work` and `attempt` (for `via` `work`), when its call `started`, the
    run's `trace_context` and the `origin_context` of the step that armed the timer or
    enqueued the work item (None: not known)."""

    run_id: str
    spec: str
    version: int
    event: str
    timer: str | None
    source: str
    target: str
    configuration: tuple[str, ...]
    status: str
    via: str
    revision: int
    work: str | None
    attempt: int | None
    started: float
    trace_context: str | None
    origin_context: str | None


class TraceContextSource(Protocol):
    """A listener that also gives what a store keeps with a new run (`store.create`), read
    back into every later observation of the run (`trace_context`): the tracing listener's
    W3C trace context (statechart_runtime.otel). `new_step_context` (optional) gives one
    for each macrostep before the store writes it, kept with the states the step entered
    and the work items it enqueued: what a timer fired or a work item claimed later, in
    any process, links to (`origin_context`). Told as a StepTaken (`step_context`) once
    written; a step whose write failed is never told."""

    def __call__(self, seen: Observation, /) -> None: ...

    def new_run_context(self, run_id: str, spec: str) -> str | None: ...

    def new_step_context(self, step: StepStarting) -> str | None: ...
