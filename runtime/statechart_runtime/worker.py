"""A worker that fires the due timers of a run store (docs/runs.md, "The worker").

```python
from statechart_runtime.store import open_store
from statechart_runtime.worker import Worker

worker = Worker(open_store("postgresql://host/db"), AgentRun)
worker.run()          # until worker.stop() (a signal handler, another thread)
worker.run_once()     # or: every timer due now, then return (cron)
```

The loop is `store.fire_next_due` until nothing is due, then a sleep until the next deadline
(at most `max_sleep` seconds). A run whose timers cannot be fired (`TimerFailed`: an action
raised, a record the class cannot read) is logged and skipped for `retry_after` seconds: it
never holds up the others; a timer whose guards say no is saved as declined by the store and
never comes back. On PostgreSQL the worker LISTENs for the store's notice that a run got a
deadline, so a new earlier deadline wakes it at once. Several workers may share one store:
each claim holds its run (PostgreSQL: FOR UPDATE SKIP LOCKED; SQLite: the write lock).

`stop()` only sets a flag (and wakes the sleep): the transaction under way commits, then
`run` returns. It is safe in a signal handler: `with worker.stopped_by_signals(): worker.run()`
ends on SIGTERM and SIGINT that way, as `statechart runs work` does.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import os
import select
import signal
import socket
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager, suppress
from typing import Any

from statechart_runtime.errors import (
    DamagedRow,
    ReadOnlyStore,
    SchemaProblem,
    StoreError,
    TimerFailed,
)
from statechart_runtime.handlers import Handler, run_item
from statechart_runtime.run import spec_of
from statechart_runtime.store import AsyncRunStore, Fired, RunStore

__all__ = ["AsyncWorker", "Worker"]

log = logging.getLogger("statechart_runtime.worker")
# Seconds between attempts to LISTEN again after the listening connection failed.
LISTEN_RETRY = 30.0


class _Rounds:
    """What the synchronous and the asynchronous worker share: their settings, what they
    count, the runs they skip for a while, and what one fire says."""

    def __init__(self, store: Any, run_class: type[Any], *, max_sleep: float,
                 retry_after: float) -> None:
        if max_sleep <= 0:
            raise ValueError(f"max_sleep must be positive, got {max_sleep!r}")
        if store.read_only:
            raise ReadOnlyStore(f"{store.where} was opened read-only, and a worker saves the "
                                "runs whose timers it fires: open it with read_only=False")
        self.store = store
        self.run_class = run_class
        self.max_sleep = max_sleep
        self.retry_after = retry_after
        self.fired = self.failed = self.declined = self.errors = 0
        self._skipped: dict[str, float] = {}  # run id -> monotonic time to try it again

    def _report(self, fired: Fired) -> None:
        run_id = fired.run.record.runId
        if not fired.applied:
            self.declined += 1
            log.info("run %s: a due timer was declined (its guards said no)", run_id)
            return
        entered = fired.run.record.history[-1].target.value  # the last state it entered
        for event in fired.events:
            self.fired += 1
            log.info("run %s: fired %s, now in %s (revision %d)", run_id, event, entered,
                     fired.revision)

    def _idle(self, fired: Fired, idle: set[str]) -> None:
        """After a fire that applied nothing: a run claimed twice in a round with nothing to
        fire has a next_due that disagrees with its record (edited by hand?); it is skipped,
        so that it cannot keep the round going."""
        run_id = fired.run.record.runId
        if run_id in idle:
            self._skipped[run_id] = time.monotonic() + self.retry_after
            log.warning("run %s: due by its row but nothing to fire; skipped", run_id)
        else:
            idle.add(run_id)

    def _skip(self, run_id: str, what: str, why: str) -> None:
        self._skipped[run_id] = time.monotonic() + self.retry_after
        log.error("run %s: %s, skipped for %g s: %s", run_id, what, self.retry_after, why)

    def _skip_now(self) -> list[str]:
        now = time.monotonic()
        for run_id in [r for r, until in self._skipped.items() if until <= now]:
            del self._skipped[run_id]
        return sorted(self._skipped)

    def _bounded(self, due: dt.datetime | None) -> float:
        """Seconds to sleep: until `due` (the next deadline of a run not skipped), or until
        a skipped run may be tried again, at most `max_sleep`."""
        wait = self.max_sleep
        if self._skipped:
            wait = min(wait, max(0.0, min(self._skipped.values()) - time.monotonic()))
        if due is not None:
            wait = min(wait, max(0.0, (due - self.store.now()).total_seconds()))
        return wait


class Worker(_Rounds):
    """Fires the due timers of `run_class`'s runs in `store` (one worker: one store, one
    thread). `fired`, `failed`, `declined` and `errors` (of the store) count what it did.
    `run` closes it when it returns; after `run_once`, call `close` (or use `with`)."""

    def __init__(self, store: RunStore, run_class: type[Any], *, max_sleep: float = 60.0,
                 retry_after: float = 60.0, listen: bool = True) -> None:
        super().__init__(store, run_class, max_sleep=max_sleep, retry_after=retry_after)
        self._stopping = threading.Event()
        # A pipe that `stop()` writes to: it ends a sleep in select() at once, from a signal
        # handler too (setting an Event there would wait for the select to time out).
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_w, False)
        # PostgreSQL: a connection of its own that LISTENs for earlier deadlines (opened at
        # the first sleep, and again at most every LISTEN_RETRY seconds after it failed).
        # A backend that announces earlier deadlines says on which channel (`due_channel`).
        self._listens = listen and store.due_channel is not None
        self._listener: _Listener | None = None
        self._listen_at = 0.0  # monotonic time of the next attempt to listen

    def stop(self) -> None:
        """End `run` after the current transaction (safe in a signal handler)."""
        self._stopping.set()
        try:
            os.write(self._wake_w, b"x")
        except OSError:  # the pipe is full (already woken) or closed (already stopped)
            pass

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    @contextmanager
    def stopped_by_signals(self, *signals: int) -> Iterator[Worker]:
        """Within the block, SIGTERM and SIGINT (or `signals`) call `stop()`: the transaction
        under way commits, then `run` returns. The handlers before are put back after.
        Main thread only (where Python runs signal handlers)."""
        def stop(signum: int, frame: object) -> None:
            self.stop()

        chosen = signals or (signal.SIGTERM, signal.SIGINT)
        previous = {sig: signal.signal(sig, stop) for sig in chosen}
        try:
            yield self
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def run(self) -> None:
        """Fire due timers until `stop()`: after each round, sleep until the next deadline
        (at most `max_sleep` seconds), or until a run gets an earlier one (PostgreSQL). A
        store that fails (a database away for longer than the store's `timeout`, an outcome
        unknown) is logged, and tried again after `max_sleep`: the worker outlives it. What
        no retry can cure (ReadOnlyStore, SchemaProblem) is raised."""
        try:
            while not self.stopping:
                try:
                    self.run_once()
                    wait = self._sleep_time()
                except (ReadOnlyStore, SchemaProblem):
                    raise  # no retry can cure these: the worker would try forever
                except StoreError as exc:
                    self.errors += 1
                    log.error("the store failed, trying again in %g s: %s", self.max_sleep, exc)
                    wait = self.max_sleep
                if not self.stopping:
                    self._sleep(wait)
        finally:
            self.close()

    def run_once(self) -> int:
        """Fire every timer due now (the store's clock) and return how many runs fired; a
        run that fails is logged and skipped. Returns early when `stop()` was called. A
        failure of the store itself (StoreError) is raised."""
        count = 0
        idle: set[str] = set()  # claimed this round with nothing to fire
        while not self.stopping:
            skip = self._skip_now()
            try:
                fired = self.store.fire_next_due(self.run_class, skip=skip)
            except TimerFailed as exc:
                self.failed += 1
                self._skip(exc.run_id, "timer failed", exc.cause)
                continue
            if fired is None:
                break
            count += fired.applied
            self._report(fired)
            if not fired.applied:
                self._idle(fired, idle)
        return count

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._listener is not None:
            self._listener.close()
            self._listener = None
        for fd in (self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass
        self._wake_r = self._wake_w = -1

    # -- what run() is made of -------------------------------------------------------------

    def _sleep_time(self) -> float:
        """Seconds until the next deadline of a run not skipped, or until a skipped run may
        be tried again, at most `max_sleep`."""
        while True:
            try:
                due = self.store.next_due(self.run_class, skip=self._skip_now())
                break
            except DamagedRow as exc:  # that run's row, not the store: the others go on
                self._skip(exc.run_id, "row damaged", str(exc))
        return self._bounded(due)

    def _sleep(self, seconds: float) -> None:
        """Sleep `seconds`, or less: until `stop()`, or (PostgreSQL) a notice that a run of
        this spec got an earlier deadline."""
        if seconds <= 0:
            return
        if self._listens and self._listener is None and time.monotonic() >= self._listen_at:
            self._listener = _Listener(self.store)
        if self._listener is not None and self._listener.alive:
            self._listener.wait(seconds, self._wake_r, spec_of(self.run_class).name)
            if self._listener.alive:
                return
            # Lost while waiting (the server went away): plain sleeps until it is back.
        if self._listener is not None:
            self._listener.close()
            self._listener = None
            self._listen_at = time.monotonic() + max(LISTEN_RETRY, self.max_sleep)
            return
        select.select([self._wake_r], [], [], seconds)


class _Listener:
    """A connection of its own that LISTENs on the store's due channel (PostgreSQL)."""

    def __init__(self, store: Any) -> None:
        self.conn: Any = None
        self.alive = False
        try:
            self.conn = store.listening_connection()  # the backend's: its URL, its timeout
            self.alive = True
        except Exception as exc:  # no server now: the worker sleeps its bounded sleep
            log.warning("cannot listen for new deadlines (waking every max_sleep): %s", exc)

    def wait(self, seconds: float, wake: int, spec: str) -> bool:
        """Sleep up to `seconds`; True when woken by `wake` or by a notice for `spec`
        (False, and `alive` False, when the connection was lost)."""
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            ready, _, _ = select.select([wake, self.conn.fileno()], [], [], left)
            if wake in ready:
                return True
            if not ready:
                return False
            try:
                notices = list(self.conn.notifies(timeout=0))
            except Exception as exc:  # the connection went away
                log.warning("stopped listening for new deadlines: %s", exc)
                self.alive = False
                return False
            if any(n.payload == spec for n in notices):
                return True
        return False

    def close(self) -> None:
        if self.conn is not None:
            try:
                self.conn.close()
            except Exception:  # closing a broken connection
                pass
            self.conn = None
        self.alive = False


class AsyncWorker(_Rounds):
    """The worker of an asynchronous store (`open_async_store`), for an asyncio service:
    `await worker.run()` fires the due timers of `run_class`'s runs until `stop()` or until
    its task is cancelled (the transaction under way is rolled back, or committed whole:
    docs/runs.md), then closes its listening connection. `async with
    worker.stopped_by_signals():` makes SIGTERM and SIGINT call `stop()` (the loop's
    signal handlers: the main thread's loop). The rest is `Worker`'s (docs/runs.md, "The
    worker"): the same loop, counts, skips and logging."""

    def __init__(self, store: AsyncRunStore, run_class: type[Any], *,
                 max_sleep: float = 60.0, retry_after: float = 60.0,
                 listen: bool = True, handlers: Mapping[str, Handler] | None = None,
                 concurrency: int = 4, poll: float = 1.0, owner: str | None = None,
                 shutdown_grace: float = 30.0) -> None:
        super().__init__(store, run_class, max_sleep=max_sleep, retry_after=retry_after)
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency!r}")
        if poll <= 0:
            raise ValueError(f"poll must be positive, got {poll!r}")
        self._wake = asyncio.Event()
        self._stopping = False
        # Work items (docs/work.md): the handlers this worker runs, how many at once, how
        # often it looks for items (an expired lease is claimable again without a notice),
        # the name its claims carry, how long a shutdown waits for running handlers.
        self.handlers = dict(handlers or {})
        self.concurrency = concurrency
        self.poll = poll
        self.owner = owner or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self.shutdown_grace = shutdown_grace
        self.applied = self.work_failed = self.leases_lost = 0
        self._running: dict[asyncio.Task[str], Any] = {}  # handler task -> its claim
        self._listens = listen and store.due_channel is not None
        self._listener: Any = None  # a connection LISTENing for earlier deadlines
        self._listen_at = 0.0
        # When the timers are looked at next (monotonic): each round of `run` with handlers
        # looks at them only then, or after a notice (an earlier deadline), not after every
        # item that ends (two reads a cycle fewer).
        self._timers_next = 0.0
        self._noticed = False

    def stop(self) -> None:
        """End `run` after the current transaction (safe in a signal handler)."""
        self._stopping = True
        self._wake.set()

    @property
    def stopping(self) -> bool:
        return self._stopping

    @asynccontextmanager
    async def stopped_by_signals(self, *signals: int) -> AsyncIterator[AsyncWorker]:
        """Within the block, SIGTERM and SIGINT (or `signals`) call `stop()` through the
        running loop's signal handlers (removed after)."""
        loop = asyncio.get_running_loop()
        chosen = signals or (signal.SIGTERM, signal.SIGINT)
        for sig in chosen:
            loop.add_signal_handler(sig, self.stop)
        try:
            yield self
        finally:
            for sig in chosen:
                loop.remove_signal_handler(sig)

    async def run(self) -> None:
        """Fire due timers until `stop()` or cancellation (as `Worker.run`: a failing store
        is logged and tried again after `max_sleep`; ReadOnlyStore and SchemaProblem are
        raised)."""
        try:
            while not self._stopping:
                # Cleared before the round, not at the sleep: an item that ends during the
                # round (a slot freed) wakes the sleep after it, rather than waiting a poll.
                self._wake.clear()
                try:
                    if not self.handlers or self._noticed \
                            or time.monotonic() >= self._timers_next:
                        self._noticed = False
                        await self._fire_due()
                        until = await self._sleep_time()
                        self._timers_next = time.monotonic() + (
                            min(until, self.poll) if self.handlers else until)
                    await self._claim_work()
                    wait = max(self._timers_next - time.monotonic(), 0.0)
                    if self.handlers:
                        wait = min(wait, self.poll)
                except (ReadOnlyStore, SchemaProblem):
                    raise
                except StoreError as exc:
                    self.errors += 1
                    log.error("the store failed, trying again in %g s: %s", self.max_sleep,
                              exc)
                    wait = self.max_sleep
                    self._wake.clear()  # a failed store is tried again after max_sleep
                if not self._stopping:
                    await self._sleep(wait)
        finally:
            await self._drain()
            await self.close()

    async def run_once(self) -> int:
        """Fire every timer due now and return how many runs fired (as `Worker.run_once`);
        with handlers, also run every work item ready now (and those their outcomes make
        ready), then return."""
        count = await self._fire_due()
        if self.handlers:
            while await self._claim_work() or self._running:
                if self._running:
                    await asyncio.wait(set(self._running), return_when=asyncio.FIRST_COMPLETED)
                count += await self._fire_due()
        return count

    async def _claim_work(self) -> int:
        """Claim ready items while this worker has free slots, each run by a task of its
        own; how many it claimed."""
        claimed = 0
        while self.handlers and not self._stopping and len(self._running) < self.concurrency:
            claim = await self.store.claim_work(self.run_class, owner=self.owner,
                                                handlers=list(self.handlers))
            if claim is None:
                break
            claimed += 1
            task = asyncio.ensure_future(run_item(self.store, self.run_class, claim,
                                                  self.handlers))
            self._running[task] = claim
            task.add_done_callback(self._item_done)
        return claimed

    def _item_done(self, task: asyncio.Task[str]) -> None:
        claim = self._running.pop(task, None)
        self._wake.set()  # a slot is free
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:  # the lease expires, the item comes back
            self.errors += 1
            # A store failure, or the run's own (a record this class cannot read): named.
            log.error("work item %s (attempt %s): %s: %s; the item is claimed again once its "
                      "lease expires", getattr(claim, "key", "?"),
                      getattr(claim, "attempt", "?"), type(exc).__name__, exc)
            return
        result = task.result()
        if result == "applied":
            self.applied += 1
        elif result == "failed":
            self.work_failed += 1
        else:
            self.leases_lost += 1

    async def _drain(self) -> None:
        """On the way out: wait up to `shutdown_grace` seconds for the running handlers,
        then cancel the rest and give their items back (claimable again at once)."""
        if not self._running:
            return
        log.info("waiting up to %g s for %d running work item(s)", self.shutdown_grace,
                 len(self._running))
        await asyncio.wait(set(self._running), timeout=self.shutdown_grace)
        left = dict(self._running)
        for task in left:
            task.cancel()
        await asyncio.gather(*left, return_exceptions=True)
        for claim in left.values():
            try:
                await self.store.release_work(self.run_class, claim)
                log.info("work item %s (attempt %d): released", claim.key, claim.attempt)
            except StoreError as exc:  # lost already, or no store: the lease expires
                log.warning("work item %s (attempt %d): not released: %s", claim.key,
                            claim.attempt, exc)

    async def _fire_due(self) -> int:
        """Fire every timer due now; how many runs fired."""
        count = 0
        idle: set[str] = set()
        while not self._stopping:
            try:
                fired = await self.store.fire_next_due(self.run_class, skip=self._skip_now())
            except TimerFailed as exc:
                self.failed += 1
                self._skip(exc.run_id, "timer failed", exc.cause)
                continue
            if fired is None:
                break
            count += fired.applied
            self._report(fired)
            if not fired.applied:
                self._idle(fired, idle)
        return count

    async def close(self) -> None:
        if self._listener is not None:
            listener, self._listener = self._listener, None
            with suppress(Exception):
                await listener.close()

    async def __aenter__(self) -> AsyncWorker:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _sleep_time(self) -> float:
        while True:
            try:
                due = await self.store.next_due(self.run_class, skip=self._skip_now())
                break
            except DamagedRow as exc:
                self._skip(exc.run_id, "row damaged", str(exc))
        return self._bounded(due)

    async def _sleep(self, seconds: float) -> None:
        """Sleep `seconds`, or less: until `stop()`, or (PostgreSQL) a notice that a run of
        this spec got an earlier deadline."""
        if seconds <= 0:
            return
        if self._listens and self._listener is None and time.monotonic() >= self._listen_at:
            try:
                self._listener = await self.store.listening_connection()
            except Exception as exc:  # no server now: the worker sleeps its bounded sleep
                log.warning("cannot listen for new deadlines (waking every max_sleep): %s",
                            exc)
                self._listen_at = time.monotonic() + max(LISTEN_RETRY, self.max_sleep)
        waits: list[asyncio.Future[Any]] = [asyncio.ensure_future(self._wake.wait())]
        if self._listener is not None:
            waits.append(asyncio.ensure_future(self._notice(seconds)))
        try:
            await asyncio.wait(waits, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiting in waits:
                waiting.cancel()
            await asyncio.gather(*waits, return_exceptions=True)

    async def _notice(self, seconds: float) -> None:
        """Returns at a notice for this spec; on a lost connection, after closing it."""
        spec = spec_of(self.run_class).name
        try:
            async for notice in self._listener.notifies(timeout=seconds):
                if notice.payload == spec:
                    self._noticed = True  # an earlier deadline, or a new item: look at both
                    return
        except Exception as exc:  # the connection went away: plain sleeps until it is back
            log.warning("stopped listening for new deadlines: %s", exc)
            listener, self._listener = self._listener, None
            with suppress(Exception):
                await listener.close()
            self._listen_at = time.monotonic() + max(LISTEN_RETRY, self.max_sleep)
            await asyncio.sleep(seconds)
