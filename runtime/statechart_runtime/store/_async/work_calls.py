"""The run store's calls on work items (store/core/work.py decides): claim, heartbeat, release,
complete and fail, and the reads of items (on RunCalls, run_calls.py).

tools/async_to_sync.py generates its synchronous twin in store/_sync/ (edit this file, then run
the script).
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Sequence
from contextlib import suppress
from typing import Any

from statechart_runtime import listeners as heard
from statechart_runtime.chart.values import is_aware
from statechart_runtime.chart.work import work_of
from statechart_runtime.errors import (
    LeaseLost,
    RunError,
    StoreError,
    WorkEnded,
)
from statechart_runtime.run import Run, spec_of
from statechart_runtime.store._async.run_calls import RunCalls
from statechart_runtime.store._async.transactions import (
    RunT,
)
from statechart_runtime.store.core import (
    observe,
    restore,
    writes,
)
from statechart_runtime.store.core import work as work_core
from statechart_runtime.store.core.checks import utc_text
from statechart_runtime.store.core.writes import (
    Fired,
    Mark,
    Writes,
    mark_of,
    saved,
)


class WorkCalls(RunCalls):
    """Work items: claimed under a lease with a fencing token, their outcome applied once."""

    # -- work items (store/core/work.py) -------------------------------------------------

    async def claim_work(self, run_class: type[Run[Any, Any, Any]], *, owner: str,
                         handlers: Sequence[str] | None = None,
                         now: dt.datetime | None = None) -> work_core.WorkClaim | None:
        """Claim the work item of `run_class`'s spec ready first (pending since longest, or
        its lease expired), of the `handlers` given (default: all of the spec's), for
        `owner` (a name that says which worker holds it): its lease lasts the state's work
        `heartbeat`, or its `timeout` without one, from `now`. None when no item is ready.
        The claim raises the item's fencing token: calls of an earlier claim are refused
        from now on (LeaseLost). An expired lease counts as a failed attempt; when that
        used the item's attempts up, the claim is `exhausted`: end it with `fail_work`
        (which fires the work's error event). PostgreSQL skips the items other workers
        hold (FOR UPDATE SKIP LOCKED); SQLite's write lock makes the claim a turn. Items of
        runs stored by a newer version of the spec are left to its workers (a rolling
        deploy); those of older versions are claimed, their runs upgraded by the outcome."""
        self._writable()
        at = now if now is not None else self.now()
        if not is_aware(at):
            raise TypeError(f"claim_work: `now` must be a datetime with a time zone, got "
                            f"{at!r}")
        table = work_of(run_class)
        states = [w.state for w in table if handlers is None or w.handler in handlers]
        if not states:
            return None
        spec = spec_of(run_class)
        args = (spec.name, utc_text(at), *self.sql.skip_arg(states), spec.version)
        claim = self.sql.claim_work()
        expired: list[str | None] = [None]  # whose lease the claim found expired

        async def take(db: Any) -> work_core.WorkClaim | None:
            row = await (await db.execute(claim, args)).fetchone()
            if row is None:
                return None
            key, run_id, state, handler, attempts, failures, token, held_by, lease, \
                enqueued, run_context = row[:11]
            expired[0] = held_by
            state_work = table.get(state)
            assert state_work is not None  # the claim reads the class's work states only
            exhausted = False
            if held_by is not None:  # its lease expired: that attempt failed
                await db.execute(self.sql.end_attempt, (lease, work_core.LEASE_LOST, None, key,
                                                        attempts))
                failures += 1
                exhausted = state_work.retry_delay(failures) is None
            until = at + state_work.lease
            await db.execute(self.sql.claim_item, (attempts + 1, failures, token + 1, owner,
                                                   utc_text(until), utc_text(until), key))
            await db.execute(self.sql.insert_attempt, (key, attempts + 1, owner,
                                                       utc_text(at)))
            record = None  # the handler's record, read with the item: unless the run is of
            head = tuple(row[11:])  # another version (upgraded when read) or unreadable, when
            if not restore.needs_history(run_class, head):  # the worker's head() says why
                with suppress(RunError, StoreError):
                    record = restore.head_record(run_class, run_id, head)
            if self.listeners.wants_context:
                self._remember_context(run_id, run_context)  # read with it: no read after
            return work_core.WorkClaim(key, run_id, state, handler, attempts + 1, token + 1,
                                       owner, until, exhausted, record, enqueued)

        taken = await self._with_retries(take, repeatable=False)
        if self.listeners and taken is not None:
            self.listeners.notify(observe.claimed(run_class, taken, at, expired[0],
                                                  await self._context(taken.run_id)))
        return taken

    async def _lease_lost(self, run_class: type[Run[Any, Any, Any]],
                          claim: work_core.WorkClaim, call: str, exc: LeaseLost) -> None:
        if self.listeners:
            self.listeners.notify(observe.lease_lost(run_class, claim, call, exc,
                                                     await self._context(claim.run_id)))

    async def heartbeat_work(self, run_class: type[Run[Any, Any, Any]],
                             claim: work_core.WorkClaim, now: dt.datetime | None = None
                             ) -> dt.datetime:
        """Extend `claim`'s lease by the work's heartbeat (its timeout without one) from
        `now`; the new expiry. LeaseLost (WorkEnded) if the claim no longer holds the item:
        stop working on it."""
        self._writable()
        at = now if now is not None else self.now()
        lease = work_core.work_of_state(work_of(run_class), claim.state, claim.key).lease

        async def extend(db: Any) -> dt.datetime:
            row = await (await db.execute(self.sql.item_locked, (claim.key,))).fetchone()
            work_core.check_held(claim, None if row is None else row[:5], at)
            until = at + lease
            await db.execute(self.sql.extend_lease, (utc_text(until), utc_text(until),
                                                     claim.key))
            return until

        try:
            return await self._with_retries(extend, repeatable=True)
        except LeaseLost as exc:
            await self._lease_lost(run_class, claim, "heartbeat_work", exc)
            raise

    async def release_work(self, run_class: type[Run[Any, Any, Any]],
                           claim: work_core.WorkClaim, now: dt.datetime | None = None) -> None:
        """Give the item back unfinished (a worker shutting down): claimable again at once,
        the attempt not counted as failed. LeaseLost (WorkEnded) if the claim no longer
        holds the item."""
        self._writable()
        at = now if now is not None else self.now()

        async def release(db: Any) -> None:
            row = await (await db.execute(self.sql.item_locked, (claim.key,))).fetchone()
            work_core.check_held(claim, None if row is None else row[:5], at)
            await db.execute(self.sql.end_attempt, (utc_text(at), work_core.RELEASED, None,
                                                    claim.key, claim.attempt))
            await db.execute(self.sql.release_item, (utc_text(at), claim.key))

        try:
            await self._with_retries(release, repeatable=False)
        except LeaseLost as exc:
            await self._lease_lost(run_class, claim, "release_work", exc)
            raise

    async def _held_item(self, db: Any, run_class: type[RunT], claim: work_core.WorkClaim,
                         at: dt.datetime) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        """The claimed item's run head and the item's row, in the caller's write
        transaction, both held: the run first (as every step of the run takes them, which
        ends its items), then the item (read with the head: one round trip on PostgreSQL).
        Refused unless the claim still holds the item."""
        head, row = await self._checked_head_and(db, claim.run_id, self.sql.head_locked,
                                                 self.sql.item_locked, (claim.key,),
                                                 traced=bool(self._linked(run_class)))
        work_core.check_held(claim, None if row is None else row[:5], at)
        return head, tuple(row)

    async def _step_held(self, db: Any, run_class: type[RunT], claim: work_core.WorkClaim,
                         head: tuple[Any, ...], at: dt.datetime, event: str,
                         values: dict[str, Any], started: float
                         ) -> tuple[RunT, Mark, Writes]:
        """The claimed item's run from its held `head` with `event` taken at `at`, and what
        writes it; the run's refusal raises (nothing written)."""
        run = await self._head_run(db, run_class, claim.run_id, head)
        if self.listeners:
            heard.watch(run)
        mark = mark_of(run)
        run.send_at(at, event, **values)
        contexts = self._start_steps(run, "work", started, head, mark, claim)
        return run, mark, writes.writes(self.sql, run, mark, utc_text(at), contexts)

    async def complete_work(self, run_class: type[RunT], claim: work_core.WorkClaim,
                            event: Any, *, now: dt.datetime | None = None,
                            **values: Any) -> Fired:
        """Apply the handler's outcome: fire `event` (one of the work's `outcomes`) with
        `values` on the item's run and end the item, in one transaction, only if `claim`
        still holds it: LeaseLost (WorkEnded) otherwise, with nothing applied, so an
        outcome is applied once. OutcomeNotAllowed for an event that is not an outcome of
        the work; the run's refusal (EventNotAccepted, MissingField, ...) as `fire` raises
        it: nothing written, the claim still holds the item. A call repeated after its
        commit was cut off (a lost connection) finds its outcome applied: `applied` False."""
        self._writable()
        name = event.value if isinstance(event, spec_of(run_class).event_enum) else event
        state_work = work_core.work_of_state(work_of(run_class), claim.state, claim.key)
        work_core.check_outcome(state_work, claim.key, name)
        at = now if now is not None else self.now()

        async def apply(db: Any) -> Fired:
            try:
                head, row = await self._held_item(db, run_class, claim, at)
            except WorkEnded:
                found = await (await db.execute(self.sql.item_locked, (claim.key,))
                               ).fetchone()
                if found is None or found[4] != name or found[0] != claim.token:
                    raise
                # This claim's own outcome, applied by a call whose commit was cut off.
                head = await self._checked_head(db, claim.run_id, self.sql.head)
                return Fired(await self._head_run(db, run_class, claim.run_id, head), False,
                             head[2])
            stamp = utc_text(at)
            # The item ends by its outcome before the step's own writes (which end the
            # items of the states it leaves: this one is no longer open).
            await db.execute(self.sql.end_attempt, (stamp, work_core.APPLIED, None, claim.key,
                                                    claim.attempt))
            await db.execute(self.sql.end_item, (stamp, name, row[6], None, claim.key))
            run, mark, stored = await self._step_held(db, run_class, claim, head, at, name,
                                                      values, started)
            revision = await self._write(db, stored, mark, locked=True)
            saved(run, mark, revision)
            return Fired(run, True, revision, [name])

        started = time.time() if self.listeners else 0.0  # for the listeners
        try:
            done = await self._with_retries(apply, repeatable=True)
        except LeaseLost as exc:
            await self._lease_lost(run_class, claim, "complete_work", exc)
            raise
        except RunError as refusal:
            if self.listeners:
                self.listeners.notify(observe.refused(
                    run_class, claim.run_id, name, refusal, "work", started,
                    await self._context(claim.run_id), claim))
            raise
        if self.listeners:
            context = await self._context(claim.run_id)
            observe.steps(self.listeners, done.run, "work", started, context, claim)
            self.listeners.notify(observe.completed(run_class, claim, name, done.applied,
                                                    started, context))
        return done

    async def fail_work(self, run_class: type[RunT], claim: work_core.WorkClaim, error: str, *,
                        now: dt.datetime | None = None, **values: Any) -> work_core.Failure:
        """Record the claim's attempt as failed with `error` (why, for people): the item is
        claimable again after the work's retry backoff while attempts remain; once they are
        used up it ends, and the work's `error` event is fired on the run with `values` in
        the same transaction (the run's refusal of it is kept in the item's last error, and
        the run stays). LeaseLost (WorkEnded) if the claim no longer holds the item."""
        self._writable()
        state_work = work_core.work_of_state(work_of(run_class), claim.state, claim.key)
        at = now if now is not None else self.now()

        async def record(db: Any) -> work_core.Failure:
            head, row = await self._held_item(db, run_class, claim, at)
            # An exhausted claim's lost lease was counted when it was claimed.
            failures = row[6] if claim.exhausted else row[6] + 1
            stamp = utc_text(at)
            await db.execute(self.sql.end_attempt, (stamp, work_core.FAILED, error, claim.key,
                                                    claim.attempt))
            delay = None if claim.exhausted else state_work.retry_delay(failures)
            if delay is not None:
                await db.execute(self.sql.retry_item, (failures, utc_text(at + delay), error,
                                                       claim.key))
                return work_core.Failure(at + delay, None, None)
            if state_work.error is None:
                await db.execute(self.sql.end_item, (stamp, work_core.ENDED_FAILED, failures, error,
                                                     claim.key))
                return work_core.Failure(None, None, None)
            try:
                step = await self._step_held(db, run_class, claim, head, at,
                                             state_work.error, values, started)
            except RunError as refusal:
                why = f"{error}; its error event `{state_work.error}` was refused: {refusal}"
                await db.execute(self.sql.end_item, (stamp, work_core.ENDED_FAILED, failures, why,
                                                     claim.key))
                return work_core.Failure(None, None, refusal)
            await db.execute(self.sql.end_item, (stamp, state_work.error, failures, error,
                                                 claim.key))
            run, mark, stored = step
            revision = await self._write(db, stored, mark, locked=True)
            saved(run, mark, revision)
            return work_core.Failure(None, Fired(run, True, revision, [state_work.error]), None)

        started = time.time() if self.listeners else 0.0  # for the listeners
        try:
            failure = await self._with_retries(record, repeatable=False)
        except LeaseLost as exc:
            await self._lease_lost(run_class, claim, "fail_work", exc)
            raise
        if self.listeners:
            context = await self._context(claim.run_id)
            if failure.fired is not None:
                observe.steps(self.listeners, failure.fired.run, "work", started, context,
                              claim)
            if failure.refused is not None and state_work.error is not None:
                self.listeners.notify(observe.refused(
                    run_class, claim.run_id, state_work.error, failure.refused, "work",
                    started, context, claim))
            self.listeners.notify(observe.failed(run_class, claim, error, failure, started,
                                                 context))
        return failure

    async def work_items(self, run_id: str) -> list[work_core.WorkItem]:
        """The run's work items, oldest first, each with its attempts: what is pending,
        who holds what until when, what failed and why, how each ended."""
        async def read(db: Any) -> tuple[list[Any], list[Any]]:
            items = list(await (await db.execute(self.sql.items_of_run, (run_id,))).fetchall())
            attempts = list(await (await db.execute(self.sql.attempts_of_run, (run_id,))
                                   ).fetchall())
            return items, attempts

        items, attempts = await self._read(read)
        return work_core.items_of(items, attempts)

    async def work_counts(self, spec: str) -> dict[tuple[str, str], int]:
        """How many open work items of the spec named `spec` each handler has, by status:
        {(handler, `pending` or `claimed`): count} (one read of the open items' index:
        statechart_runtime.metrics' queue depth)."""
        found = await self._rows(self.sql.work_counts, (spec,))
        return {(row[0], row[1]): int(row[2]) for row in found}
