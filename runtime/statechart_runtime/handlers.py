"""Handlers: the code a worker runs for a run's work items (docs/work.md).

A spec's state declares its work (`work: {handler: call_tool, ...}`); an application gives the
worker a mapping from handler names to functions. A handler gets a `WorkContext` (the run's
record as it was when the item was claimed, the item's key and attempt, `heartbeat()`, the
time) and returns the event to fire (`Outcome("tool_output", toolOutput=...)`, or the event's
name alone), or raises: `WorkError("why", **values)` says why (its values go to the work's
error event once the attempts are used up), any other exception is a failure too. A handler
may be a coroutine function (awaited on the worker's loop) or a plain function (run in a
thread of its own).

```python
from statechart_runtime.handlers import Outcome, WorkContext, WorkError

async def call_tool(work: WorkContext) -> Outcome:
    output = await tools.run(work.record.toolCallId, idempotency_key=work.key)
    return Outcome("tool_output", toolOutput=output)

HANDLERS = {"call_tool": call_tool}
```

`run_item` runs one claimed item (the worker calls it): the handler under the work's time
limit, then its outcome applied (`store.complete_work`) or its failure recorded
(`store.fail_work`), and one log line.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import inspect
import logging
from collections.abc import Callable, Mapping
from typing import Any

from statechart_runtime.chart.work import Work, work_of
from statechart_runtime.errors import LeaseLost, OutcomeNotAllowed, RunError
from statechart_runtime.named import named_object

__all__ = ["Handler", "Outcome", "WorkContext", "WorkError", "load_handlers", "run_item"]

log = logging.getLogger("statechart_runtime.worker")


class Outcome:
    """What a handler returns: the event to fire on the run (one of its work's `outcomes`)
    and the event's values."""

    __slots__ = ("event", "values")

    def __init__(self, event: str, **values: Any) -> None:
        self.event = event
        self.values = values

    def __repr__(self) -> str:
        return f"Outcome({self.event!r}, **{self.values!r})"


class WorkError(Exception):
    """Raised by a handler: the attempt failed, for the reason given. The item is tried
    again after the work's backoff while attempts remain; then the work's error event is
    fired with `values` (the agent run's `error` takes why and when to retry)."""

    def __init__(self, message: str, **values: Any) -> None:
        super().__init__(message)
        self.values = values


class WorkContext:
    """What a handler gets: the claimed item (`key`: the same on every attempt, for the
    systems the handler calls to deduplicate by; `attempt`, 1 for the first), the run's
    `record` when the item was claimed (a copy: changing it changes nothing), `heartbeat()`
    to keep the lease (LeaseLost when it is lost: stop), and `now()`, the store's time."""

    def __init__(self, store: Any, run_class: type[Any], claim: Any, record: Any,
                 loop: asyncio.AbstractEventLoop) -> None:
        self.store = store
        self.run_class = run_class
        self.claim = claim
        self.record = record
        self._loop = loop

    @property
    def key(self) -> str:
        return str(self.claim.key)

    @property
    def run_id(self) -> str:
        return str(self.claim.run_id)

    @property
    def state(self) -> str:
        return str(self.claim.state)

    @property
    def attempt(self) -> int:
        return int(self.claim.attempt)

    def now(self) -> dt.datetime:
        return self.store.now()  # type: ignore[no-any-return]

    async def heartbeat(self) -> dt.datetime:
        """Extend the lease (by the work's heartbeat); its new expiry. LeaseLost if the
        item is no longer this attempt's: stop working on it."""
        until: dt.datetime = await self.store.heartbeat_work(self.run_class, self.claim)
        return until

    def heartbeat_blocking(self) -> dt.datetime:
        """`heartbeat()` from a plain (thread) handler."""
        return asyncio.run_coroutine_threadsafe(self.heartbeat(), self._loop).result()


Handler = Callable[[WorkContext], Any]


def load_handlers(where: str) -> dict[str, Handler]:
    """The handlers named by `module:object` (a mapping from handler names to functions),
    for `statechart runs work --handlers`. ValueError says what is wrong."""
    found = named_object(where, "--handlers", "a mapping from handler names to functions",
                         "myservice.work:HANDLERS")
    attr = where.partition(":")[2]
    if not isinstance(found, Mapping):
        raise ValueError(f"--handlers {where!r}: {attr!r} is "
                         f"{'missing' if found is None else type(found).__name__}, not a "
                         "mapping from handler names to functions")
    handlers = dict(found)
    for name, handler in handlers.items():
        if not isinstance(name, str) or not callable(handler):
            raise ValueError(f"--handlers {where!r}: {name!r} -> {handler!r} is not a "
                             "handler name and a function")
    return handlers


def missing_handlers(run_class: type[Any], handlers: Mapping[str, Handler]) -> list[str]:
    """The handler names `run_class`'s spec declares that `handlers` lacks, sorted."""
    return sorted(work_of(run_class).handlers - set(handlers))


def time_limit(work: Work) -> float:
    """Seconds a handler may run: the work's timeout, less a margin for its outcome or
    failure to reach the store before the lease expires (a tenth of the lease, at least a
    quarter of a second but never more than half the lease, at most a second): a failure
    recorded after the lease is a lost lease, retried at once without its backoff."""
    lease = work.lease.total_seconds()
    margin = min(max(lease / 10, min(0.25, lease / 2)), 1.0)
    return max(work.timeout.total_seconds() - margin, 0.001)


async def _call(handler: Handler, context: WorkContext) -> Any:
    if inspect.iscoroutinefunction(handler):
        return await handler(context)
    result = await asyncio.to_thread(handler, context)
    if inspect.isawaitable(result):
        return await result
    return result


def _outcome(result: Any) -> tuple[str, dict[str, Any]]:
    if isinstance(result, Outcome):
        return result.event, dict(result.values)
    if isinstance(result, str):
        return result, {}
    raise TypeError(f"the handler returned {result!r}: return an Outcome(event, **values) "
                    "or an event name")


async def run_item(store: Any, run_class: type[Any], claim: Any,
                   handlers: Mapping[str, Handler]) -> str:
    """Run one claimed item to its end: the handler under the work's time limit, then the
    outcome applied or the failure recorded. Returns what happened: "applied", "failed",
    "lease lost" (the outcome or failure of a claim that lost its item was refused). Store
    failures are raised (the lease then expires, and the item is claimed again)."""
    work = work_of(run_class).get(claim.state)
    handler = handlers.get(claim.handler)
    if work is None or claim.exhausted or handler is None:
        why = ("its lease was lost and its attempts are used up" if claim.exhausted else
               f"no handler `{claim.handler}` is registered with this worker"
               if handler is None else f"state `{claim.state}` has no work")
        return await _failed(store, run_class, claim, why, {})
    record = claim.record  # read with the claim; else (unreadable then) read now
    if record is None:
        record = (await store.head(run_class, claim.run_id)).run.record
    context = WorkContext(store, run_class, claim, record, asyncio.get_running_loop())
    task = asyncio.ensure_future(_call(handler, context))
    try:
        done, _ = await asyncio.wait({task}, timeout=time_limit(work))
    except asyncio.CancelledError:  # the worker is shutting down: the handler stops too
        task.cancel()
        raise
    if not done:
        task.cancel()  # a plain function's thread runs on: its outcome is never applied
        await asyncio.gather(task, return_exceptions=True)
        return await _failed(store, run_class, claim, f"the handler did not return within "
                             f"the work's timeout ({work.timeout})", {})
    try:
        event, values = _outcome(task.result())
    except LeaseLost as exc:  # a heartbeat found the lease lost: the handler stopped
        log.warning("work item %s (attempt %d): %s", claim.key, claim.attempt, exc)
        return "lease lost"
    except WorkError as exc:
        return await _failed(store, run_class, claim, str(exc), exc.values)
    except Exception as exc:  # the handler's own failure: recorded, not raised
        return await _failed(store, run_class, claim, f"{type(exc).__name__}: {exc}", {})
    try:
        fired = await store.complete_work(run_class, claim, event, **values)
    except LeaseLost as exc:
        log.warning("work item %s (attempt %d): its outcome `%s` was refused: %s", claim.key,
                    claim.attempt, event, exc)
        return "lease lost"
    except (OutcomeNotAllowed, RunError) as exc:
        return await _failed(store, run_class, claim,
                             f"its outcome `{event}` was refused: {exc}", {})
    log.info("work item %s (attempt %d): %s applied, run %s now in %s (revision %d)",
             claim.key, claim.attempt, event, claim.run_id,
             fired.run.record.history[-1].target.value if fired.run.record.history
             else "?", fired.revision)
    return "applied"


async def _failed(store: Any, run_class: type[Any], claim: Any, error: str,
                  values: dict[str, Any]) -> str:
    try:
        failure = await store.fail_work(run_class, claim, error, **values)
    except LeaseLost as exc:
        log.warning("work item %s (attempt %d) failed (%s), and %s", claim.key,
                    claim.attempt, error, exc)
        return "lease lost"
    if failure.retry_at is not None:
        log.warning("work item %s (attempt %d) failed, tried again from %s: %s", claim.key,
                    claim.attempt, failure.retry_at.isoformat(), error)
    elif failure.fired is not None:
        log.error("work item %s (attempt %d) failed, its attempts used up: %s fired: %s",
                  claim.key, claim.attempt, failure.fired.events[0], error)
    else:
        log.error("work item %s (attempt %d) failed, its attempts used up, the run stays "
                  "in %s: %s%s", claim.key, claim.attempt, claim.state, error,
                  f" (the error event was refused: {failure.refused})"
                  if failure.refused is not None else "")
    return "failed"
