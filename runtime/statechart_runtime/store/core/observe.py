"""What a store tells its listeners (statechart_runtime.listeners), built here with no I/O:
the store's calls gather what happened and call these once their transaction committed."""

from __future__ import annotations

import datetime as dt
import json
import time
import weakref
from collections.abc import Mapping
from typing import Any

from statechart_runtime import listeners as heard
from statechart_runtime.chart.work import work_of
from statechart_runtime.run import Run, active_states, spec_of
from statechart_runtime.store.core.work import Failure, WorkClaim
from statechart_runtime.store.core.writes import MARK_ATTR


def watch(store_listeners: heard.Listeners, run: Run[Any, Any, Any]) -> None:
    """Have a run the store restored record its macrosteps, when anyone listens."""
    if store_listeners:
        heard.watch(run)


def steps(store_listeners: heard.Listeners, run: Any, via: str, started: float,
          trace_context: str | None, claim: WorkClaim | None = None) -> None:
    """Tell the macrosteps a committed run took (its mark holds the revision written)."""
    if run is None or not getattr(run, "_sc_watch", None):
        return
    mark = getattr(run, MARK_ATTR, None)
    store_listeners.notify_all(heard.steps_taken(
        run, via=via, revision=None if mark is None else mark.revision, started=started,
        work=None if claim is None else claim.key,
        attempt=None if claim is None else claim.attempt, trace_context=trace_context))
    # The run goes on being watched: steps taken on it in memory are told when it is saved.
    heard.watch(run)


_LINKED: weakref.WeakKeyDictionary[type, frozenset[str]] = weakref.WeakKeyDictionary()


def linked_states(run_class: type[Run[Any, Any, Any]]) -> frozenset[str]:
    """The states of a run class's spec that a later step links back to the step that
    entered them: those with a timer (that step armed it) or with work (it enqueued the
    item). A store keeps a step's trace context only when it entered one of these; a spec
    with none costs a tracing listener nothing more than a span after the commit."""
    found = _LINKED.get(run_class)
    if found is None:
        found = frozenset(spec_of(run_class).timers.by_state) \
            | frozenset(work.state for work in work_of(run_class))
        _LINKED[run_class] = found
    return found


def run_context(row: tuple[Any, ...]) -> str | None:
    """The run's trace context, from a head read traced (`head_checks_traced`,
    `head_checked_traced`: the last of its columns)."""
    return row[11] if len(row) > 11 and isinstance(row[11], str) else None


def origins(row: tuple[Any, ...]) -> dict[str, str]:
    """The stored trace context of each active state (the step that entered it), from a
    head read traced. A value that is not what the store wrote is passed over: a trace
    loses a link, the run's step goes on."""
    if len(row) <= 11 or not row[10]:
        return {}
    try:
        found = json.loads(row[10])
    except ValueError:
        return {}
    if not isinstance(found, dict):
        return {}
    return {state: context for state, context in found.items() if isinstance(context, str)}


def kept_origins(run: Run[Any, Any, Any], stored: Mapping[str, str] | None,
                 written: Mapping[str, str]) -> dict[str, str]:
    """The trace contexts a run's active states hold after a save wrote `written` (the
    states its steps entered) over `stored` (what it held before, None: not read)."""
    found = {**(stored or {}), **written}
    return {state: found[state] for state in active_states(run) if state in found}


def created(run: Run[Any, Any, Any], at: dt.datetime,
            trace_context: str | None) -> heard.RunCreated:
    spec = spec_of(run)
    record: Any = run.record
    return heard.RunCreated(record.runId, spec.name, spec.version, record.status.value,
                            active_states(run), at, trace_context)


def refused(run_class: type[Run[Any, Any, Any]], run_id: str, event: Any,
            error: BaseException, via: str, started: float, trace_context: str | None,
            claim: WorkClaim | None = None) -> heard.EventRefused:
    return heard.refused(run_class, run_id, str(getattr(event, "value", event)), error,
                         via=via, started=started,
                         work=None if claim is None else claim.key,
                         attempt=None if claim is None else claim.attempt,
                         trace_context=trace_context)


def timers_failed(run_class: type[Run[Any, Any, Any]], run_id: str, error: BaseException,
                  cause: BaseException, started: float, trace_context: str | None
                  ) -> heard.TimersFailed:
    spec = spec_of(run_class)
    return heard.TimersFailed(run_id, spec.name, spec.version, heard.reason_of(cause), error,
                              "fire_due", started, time.time(), trace_context)


def claimed(run_class: type[Run[Any, Any, Any]], claim: WorkClaim, at: dt.datetime,
            expired: str | None, trace_context: str | None) -> heard.WorkClaimed:
    return heard.WorkClaimed(claim.run_id, spec_of(run_class).name, claim.key, claim.state,
                             claim.handler, claim.attempt, claim.owner, claim.lease_until, at,
                             expired, claim.exhausted, trace_context, claim.origin_context)


def completed(run_class: type[Run[Any, Any, Any]], claim: WorkClaim, event: str,
              applied: bool, started: float, trace_context: str | None
              ) -> heard.WorkCompleted:
    return heard.WorkCompleted(claim.run_id, spec_of(run_class).name, claim.key, claim.state,
                               claim.handler, claim.attempt, claim.owner, event, applied,
                               started, time.time(), trace_context, claim.origin_context)


def failed(run_class: type[Run[Any, Any, Any]], claim: WorkClaim, error: str,
           failure: Failure, started: float, trace_context: str | None) -> heard.WorkFailed:
    fired = failure.fired
    return heard.WorkFailed(claim.run_id, spec_of(run_class).name, claim.key, claim.state,
                            claim.handler, claim.attempt, claim.owner, error,
                            failure.retry_at, fired.events[0] if fired is not None else None,
                            started, time.time(), trace_context, claim.origin_context)


def lease_lost(run_class: type[Run[Any, Any, Any]], claim: WorkClaim, call: str,
               error: BaseException, trace_context: str | None) -> heard.LeaseLost:
    return heard.LeaseLost(claim.run_id, spec_of(run_class).name, claim.key, claim.attempt,
                           claim.owner, call, heard.reason_of(error), trace_context,
                           claim.origin_context)
