"""The run store's calls on runs and events: create, load, save, fire, fire_due, fire_next_due,
next_due (on StoreTransactions, transactions.py).

tools/async_to_sync.py generates its synchronous twin in store/_sync/ (edit this file, then run
the script).
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import random
import time
import uuid
from collections.abc import Sequence
from typing import Any

from statechart_runtime import listeners as heard
from statechart_runtime.chart.values import is_aware
from statechart_runtime.errors import (
    ConcurrentUpdate,
    RunError,
    RunIdTaken,
    RunNotFound,
    StoreError,
    TimerFailed,
)
from statechart_runtime.run import Run, spec_of, steps_without_machine
from statechart_runtime.store._async.transactions import (
    _CLAIM_AMONG,
    RunT,
    StoreTransactions,
)
from statechart_runtime.store.core import (
    observe,
    restore,
    rows,
    versions,
    writes,
)
from statechart_runtime.store.core.checks import utc_text
from statechart_runtime.store.core.writes import (
    Computed,
    Fired,
    Mark,
    Writes,
    json_value,
    keep_origins,
    mark_of,
    saved,
)


class RunCalls(StoreTransactions):
    """Runs and events: what `fire` and its kin read, decide (store/core) and write."""

    # -- runs ----------------------------------------------------------------------------

    async def create(self, run: Run[Any, Any, Any]) -> None:
        """Store a run that is not stored yet (a new one, or one restored from a record):
        its record, state and history. StoreError if its run id is taken."""
        self._writable()
        record: Any = run.record
        spec = spec_of(run)
        created = Mark(0, 0, 0, (), rewrite=True)
        # What a listener keeps with the run (a tracing listener's context), made first.
        context = self.listeners.new_run_context(record.runId, spec.name) \
            if self.listeners.wants_context else None
        # The states it starts in (and their work items) were entered by its creation.
        contexts = None if context is None or not self._linked(type(run)) \
            else writes.Everywhere(context)

        async def work(db: Any) -> None:
            if await (await db.execute(self.sql.run_exists, (record.runId,))).fetchone():
                raise RunIdTaken(record.runId)
            at = utc_text(self.now())
            await db.execute(self.sql.insert_run, (record.runId, spec.name, spec.version,
                                                   record.status.value, at, at, context))
            await self._write(db, writes.writes(self.sql, run, created, at, contexts),
                              created, locked=True)

        # Two processes creating the same id at once: the loser's INSERT meets the winner's
        # key (on PostgreSQL, at a later statement of the pipeline): the same RunIdTaken.
        await self._with_retries(work, repeatable=False,
                                 duplicate=lambda: RunIdTaken(record.runId))
        saved(run, created, 1)
        if self.listeners:
            if self.listeners.wants_context:
                self._remember_context(record.runId, context)
            self.listeners.notify(observe.created(run, record.lastTransitionAt, context))
            observe.watch(self.listeners, run)  # steps taken on it next: told when saved

    async def load(self, run_class: type[RunT], run_id: str, **kwargs: Any) -> RunT:
        """The stored run `run_id`, restored as a `run_class` (keyword arguments go to
        `run_class.restore`: `model=`, `clock=`), with its whole history. The record is
        checked as `from_json` checks it, replaying the history (the spec's InvalidRecord);
        a run of another spec is refused the same way."""
        traced = bool(self._linked(run_class))

        async def work(db: Any) -> RunT:
            row = await (await db.execute(self.sql.head, (run_id,))).fetchone()
            if row is None:
                raise RunNotFound(run_id)
            steps = await (await db.execute(self.sql.steps, (run_id,))).fetchall()
            # Traced: the stored contexts of its states too, what the steps it takes in
            # memory link to when it is saved (a timer fired: the step that armed it).
            checks = await (await db.execute(*self._head_checks(run_id, True))).fetchone() \
                if traced else None
            found = restore.full_run(run_class, run_id, tuple(row), steps, self.clock, kwargs)
            if checks is not None:
                head = (*row, *checks)
                self._remember_context(run_id, observe.run_context(head))
                keep_origins(found, observe.origins(head))
            return found
        run = await self._read(work)
        observe.watch(self.listeners, run)  # its steps in memory are told when it is saved
        return run

    async def _checked_head(self, db: Any, run_id: str, sql: str, *,
                            traced: bool = False) -> tuple[Any, ...]:
        """The run's head read by `sql`, with what `restore.head_run` checks it against:
        sent together, the second read once the row is held (a statement of its own: on
        PostgreSQL a SELECT ... FOR UPDATE that waited for another writer sees that writer's
        row, but its other tables as they were when it started). `traced`: with the stored
        trace contexts (`head_checks_traced`)."""
        return (await self._checked_head_and(db, run_id, sql, traced=traced))[0]

    async def _checked_head_and(self, db: Any, run_id: str, sql: str, *then: Any,
                                traced: bool = False) -> tuple[tuple[Any, ...], Any]:
        """`_checked_head`, and the row of `then` (a statement and its arguments) sent with
        them before any is waited for: one round trip on PostgreSQL, which runs them in
        order (a row `then` locks is locked after the run's)."""
        if self.sql.head_checked and sql == self.sql.head:
            # A read that takes no row lock (SQLite's: the write lock is the database's,
            # taken by BEGIN IMMEDIATE), so the head and its checks in one statement.
            checked = await db.execute(
                self.sql.head_checked_traced if traced else self.sql.head_checked,
                (run_id, run_id))
            after = await db.execute(*then) if then else None
            row = await checked.fetchone()
            if row is None:
                raise RunNotFound(run_id)
            return tuple(row), None if after is None else await after.fetchone()
        head = await db.execute(sql, (run_id,))
        checks = await db.execute(*self._head_checks(run_id, traced))
        after = await db.execute(*then) if then else None
        row = await head.fetchone()
        if row is None:
            raise RunNotFound(run_id)
        found = (*row, *(await checks.fetchone()))
        return found, None if after is None else await after.fetchone()

    async def _one_row(self, sql: str, args: tuple[Any, ...], run_id: str) -> tuple[Any, ...]:
        """The row of one reading statement, in no transaction; RunNotFound if none."""
        found = await self._rows(sql, args)
        if not found:
            raise RunNotFound(run_id)
        return tuple(found[0])

    async def _head_run(self, db: Any, run_class: type[RunT], run_id: str,
                        row: tuple[Any, ...]) -> RunT:
        """The run from its stored head (`restore.head_run`); a head of another spec version
        is read whole, with its steps, to be upgraded and checked."""
        if restore.needs_history(run_class, row):
            restore.head_data(run_class, run_id, row)  # a newer version's: refused first
            steps = await (await db.execute(self.sql.steps, (run_id,))).fetchall()
            return restore.full_run(run_class, run_id, row, steps, self.clock, {})
        return restore.head_run(run_class, run_id, row, self.clock)

    async def save(self, run: Run[Any, Any, Any]) -> int:
        """Save a run this store created or loaded; its new revision. ConcurrentUpdate if
        the stored run was saved since (by this process or another): nothing is written."""
        self._writable()
        started = time.time() if self.listeners else 0.0  # for the listeners
        mark = mark_of(run)
        # The stored contexts of its states (`load` read them, or the last save kept them):
        # what its timers fired in memory link to.
        contexts = self._start_steps(run, "save", started, None, mark,
                                     run_context=await self._context(run.record.runId),
                                     origins=mark.origins) \
            if self._linked(type(run)) else None
        stored = writes.writes(self.sql, run, mark, utc_text(self.now()), contexts)

        async def work(db: Any) -> int:
            return await self._write(db, stored, mark, locked=False)

        revision = await self._with_retries(work, repeatable=False)
        saved(run, mark, revision, None if contexts is None else
              observe.kept_origins(run, mark.origins, contexts))
        if self.listeners:
            observe.steps(self.listeners, run, "save", started,
                          await self._context(run.record.runId))
        return revision

    async def _write(self, db: Any, stored: Writes, mark: Mark, *, locked: bool) -> int:
        """`stored`, inside the caller's transaction; the new revision. Unless the caller
        holds the run's row (`locked`: it read the row in this transaction),
        ConcurrentUpdate if the stored revision is not `mark.revision`. No statement here
        needs a result but that check: PostgreSQL sends them all with the COMMIT, in one
        round trip."""
        if stored.announce is not None and self.due_channel is not None:
            await db.execute(self.sql.announce_due, (self.due_channel, stored.announce))
        if locked:
            await db.execute(self.sql.update_head, stored.head)
        elif not self.sql.update_head_if or (await db.execute(
                self.sql.update_head_if, (*stored.head, mark.revision))).rowcount != 1:
            # Written only if unchanged (one statement where the backend can), else which
            # of the two it is.
            found = await (await db.execute(self.sql.revision_locked,
                                            (stored.run_id,))).fetchone()
            if found is None:
                raise RunNotFound(stored.run_id)
            if found[0] != mark.revision:
                raise ConcurrentUpdate(stored.run_id, mark.revision, found[0])
            await db.execute(self.sql.update_head, stored.head)
        for sql, args in stored.statements:
            if len(args) == 1:  # the common case (one step), in one round trip
                await db.execute(sql, args[0])
            elif args:
                await self._many(db, sql, args)
        return mark.revision + 1

    # -- events --------------------------------------------------------------------------

    async def fire(self, run_class: type[RunT], run_id: str, event: Any, *,
                   idempotency_key: str | None = None, at: dt.datetime | None = None,
                   if_revision: int | None = None, **values: Any) -> Fired:
        """Load the run, send it `event` with `values` at `at` (default: now), save it: one
        transaction, holding the run's row from load to save, or (`optimistic_fire`: SQLite)
        written only if the run's revision is the one the step was computed from, and
        computed again from the new head if not (docs/runs.md). Timers due by then fire first,
        each at its due time (`Run.send_at`). An event the run refuses raises
        (EventNotAccepted, MissingField, ...) and changes nothing, except that the timers
        that fired before it are saved (they happened: an approval sent after its deadline
        finds, and leaves, the run timed out). With `idempotency_key`, an event already
        applied with that key for this run is not fired again (`applied` is False); the key
        reused for another event is a StoreError. With `if_revision`, the event is fired
        only if the run is at that revision (an answer given for what someone saw):
        ConcurrentUpdate otherwise, checked in the transaction that writes (a repeat of an
        applied key is answered as such first). A busy database is retried up to
        `max_attempts` times, a lost connection for up to `timeout` seconds."""
        self._writable()
        started = time.time() if self.listeners else 0.0  # for the listeners
        try:
            return await self._fire(run_class, run_id, event, idempotency_key, at,
                                    if_revision, values, started)
        except RunError as refusal:
            if self.listeners:
                self.listeners.notify(observe.refused(
                    run_class, run_id, event, refusal, "fire", started,
                    await self._context(run_id)))
            raise

    async def _fire(self, run_class: type[RunT], run_id: str, event: Any,
                    idempotency_key: str | None, at: dt.datetime | None,
                    if_revision: int | None, values: dict[str, Any], started: float
                    ) -> Fired:
        spec = spec_of(run_class)
        name = event.value if isinstance(event, spec.event_enum) else event
        ran: list[Any] = []  # the run the committed write stored
        try:
            key_values = "" if idempotency_key is None else json.dumps(
                {f: json_value(spec, f, v) for f, v in values.items()}, sort_keys=True)
        except ValueError as exc:  # an integer too long for JSON text
            raise writes.unstorable(run_id, exc) from None
        # Tells this call's own commit from an earlier call's (a key's retry after a lost
        # connection).
        call = "" if idempotency_key is None else uuid.uuid4().hex

        # The key's row is read with the head, sent before either is waited for (one round
        # trip on PostgreSQL, where it was a second one), after the head's lock is taken.
        key_read = () if idempotency_key is None else (self.sql.key_seen,
                                                       (run_id, idempotency_key))

        async def compute(db: Any, row: tuple[Any, ...], seen: Any) -> Fired | Computed:
            """The call from the head `row` and the key's row (`seen`), nothing written yet:
            a Fired when there is nothing to write (the key was used already), else the run
            with the event taken (and the refusal, when timers fired before it)."""
            if seen is not None:
                if seen[0] != name or (seen[1] != key_values and not versions
                                       .same_key_values(spec, seen[1], key_values)):
                    raise StoreError(
                        f"idempotency key {idempotency_key!r} of run {run_id!r} was "
                        f"used for `{seen[0]}` {seen[1]}, not `{name}` {key_values}")
                # The call whose commit was cut off by a lost connection did apply it.
                mine = seen[2] == call
                return Fired(await self._head_run(db, run_class, run_id, row), mine, row[2],
                             [name] if mine else [])
            if if_revision is not None and row[2] != if_revision:
                raise ConcurrentUpdate(run_id, if_revision, row[2])
            run = await self._head_run(db, run_class, run_id, row)
            if self.listeners:
                heard.watch(run)
            mark = mark_of(run)
            when = at if at is not None else self.now()  # the one time of this call
            try:
                run.send_at(when, event, **values)
            except RunError as refusal:
                if not run.record.history:  # nothing happened: nothing to save
                    raise
                # Timers fired before the event was refused: they are kept.
                return (run, mark, utc_text(when), refusal,
                        self._start_steps(run, "fire", started, row, mark))
            return (run, mark, utc_text(when), None,
                    self._start_steps(run, "fire", started, row, mark))

        async def write(computed: Computed, stored: Writes, db: Any, *, locked: bool
                        ) -> Fired | RunError:
            run, mark, stamp, refusal, _ = computed
            ran.clear()
            revision = await self._write(db, stored, mark, locked=locked)
            if refusal is None and idempotency_key is not None:
                await db.execute(self.sql.insert_key, (run_id, idempotency_key, name,
                                                       key_values, revision, call, stamp))
            saved(run, mark, revision)
            ran.append(run)
            return refusal if refusal is not None else Fired(run, True, revision, [name])

        traced = bool(self._linked(run_class))

        async def work(db: Any) -> Fired | RunError:  # holding the run from read to write
            head, seen = await self._checked_head_and(db, run_id, self.sql.head_locked,
                                                      *key_read, traced=traced)
            done = await compute(db, head, seen)
            if isinstance(done, Fired):
                return done
            return await write(done, writes.writes(self.sql, *done[:3], done[4]), db,
                               locked=True)

        async def read_unlocked(db: Any) -> tuple[tuple[Any, ...], Any]:
            return await self._checked_head_and(db, run_id, self.sql.head, *key_read,
                                                traced=traced)

        async def no_io(db: Any) -> None:
            return None

        repeatable = idempotency_key is not None
        done: Fired | RunError | None = None
        if self._computes_before_locking(run_class):
            # The step is computed before the write lock is taken, and written only if the
            # run's revision is still the one it was computed from; else computed again.
            for _ in range(self.max_attempts):
                # The head, what its checks read and the key, in one snapshot: with no key,
                # one statement (no transaction).
                if idempotency_key is None:
                    row, seen = await self._one_row(self._head_checked(run_class),
                                                    (run_id, run_id), run_id), None
                else:
                    row, seen = await self._read(read_unlocked)
                if restore.stored_version(run_id, row) < spec.version:
                    # An older version's head is upgraded from its whole history, read with
                    # it in one moment: holding the run.
                    break
                computed = await compute(None, row, seen)
                if isinstance(computed, Fired):
                    return computed
                # Encoded before the lock, too.
                stored = writes.writes(self.sql, *computed[:3], computed[4])
                try:
                    done = await self._with_retries(
                        functools.partial(write, computed, stored, locked=False),
                        repeatable=repeatable)
                    break
                except ConcurrentUpdate:  # another writer fired the run meanwhile: again
                    continue
        if done is None:  # overtaken every time, or a backend that holds the run
            done = await self._with_retries(work, repeatable=repeatable)
        if self.listeners and ran:
            observe.steps(self.listeners, ran[0], "fire", started, await self._context(run_id))
        if isinstance(done, RunError):
            raise done  # refused, after the timers that fired were committed
        return done

    async def fire_due(self, run_class: type[RunT], run_id: str,
                       now: dt.datetime | None = None) -> Fired:
        """Load the run, fire every timer due at `now` (default: the current time) with
        `run.fire_due(now)` (each step at its timer's due time), save it: one transaction,
        holding the run's row, or (`optimistic_fire`: SQLite) computed before the write lock
        and written only if the run is unchanged, as `fire` does. A run with no timer due
        fires nothing (`applied` False): two workers firing the same due run fire its timers
        once. A timer whose guards said no is saved as declined, so `next_due` moves on to
        the run's next timer."""
        self._writable()
        started = time.time() if self.listeners else 0.0  # for the listeners
        when = now if now is not None else self.now()  # the one time of this call
        done = None
        try:
            if self._computes_before_locking(run_class):
                done = await self._fire_due_unlocked(run_class, run_id, when, started)
            if done is None:
                done = await self._with_retries(
                    functools.partial(self._fire_due, run_class, run_id, when, started),
                    repeatable=False)
        except Exception as exc:
            # The run's own failure (a guard or an action raised), not the store's.
            if self.listeners and not isinstance(exc, RunNotFound) \
                    and not self.store_failed(exc):
                self.listeners.notify(observe.timers_failed(
                    run_class, run_id, exc, exc, started, await self._context(run_id)))
            raise
        if self.listeners and done.applied:
            observe.steps(self.listeners, done.run, "fire_due", started,
                          await self._context(run_id))
        return done

    def _computes_before_locking(self, run_class: type[Run[Any, Any, Any]]) -> bool:
        """Whether a step of `run_class` is computed before the write lock is taken and
        written only if the run's revision is unchanged (`optimistic_fire`), rather than
        computed holding the run: a run whose class has actions is held (they would run
        again when the step is computed again)."""
        return (self.optimistic_fire and bool(self.sql.head_checked)
                and steps_without_machine(run_class))

    async def _due_step(self, db: Any, run_class: type[RunT], run_id: str,
                        row: tuple[Any, ...], when: dt.datetime, started: float
                        ) -> tuple[RunT, Mark, tuple[str, ...], dict[str, str] | None] | Fired:
        """The run from its head `row` with its timers due at `when` fired, its mark, the
        events fired and the trace contexts of the states entered (`_start_steps`); a Fired
        (`applied` False) when nothing is to be written: no timer was due, and none was
        declined."""
        run = await self._head_run(db, run_class, run_id, row)
        if self.listeners:
            heard.watch(run)
        mark = mark_of(run)
        armed = list(run.timers)
        events = tuple(run.fire_due(when))
        if not events and list(run.timers) == armed:  # nothing due (or no timers at all)
            return Fired(run, False, row[2])
        # A declined timer (its guards said no) is saved even when nothing fired: it no
        # longer counts for `next_due`, so it cannot keep other runs' timers waiting.
        return run, mark, events, self._start_steps(run, "fire_due", started, row, mark)

    async def _fire_due(self, run_class: type[RunT], run_id: str, when: dt.datetime,
                        started: float, db: Any) -> Fired:
        """fire_due holding the run, inside the caller's write transaction."""
        head = await self._checked_head(db, run_id, self.sql.head_locked,
                                        traced=bool(self._linked(run_class)))
        due = await self._due_step(db, run_class, run_id, head, when, started)
        if isinstance(due, Fired):
            return due
        return await self._write_due(
            due, writes.writes(self.sql, *due[:2], utc_text(when), due[3]), db, locked=True)

    async def _write_due(self, due: tuple[RunT, Mark, tuple[str, ...], Any], stored: Writes,
                         db: Any, *, locked: bool) -> Fired:
        """Write a run's due timers fired (`_due_step`, encoded as `stored`), inside the
        caller's write transaction."""
        run, mark, events, _ = due
        revision = await self._write(db, stored, mark, locked=locked)
        saved(run, mark, revision)
        return Fired(run, bool(events), revision, list(events))

    async def _fire_due_unlocked(self, run_class: type[RunT], run_id: str,
                                 when: dt.datetime, started: float, *, claimed: bool = False
                                 ) -> Fired | None:
        """fire_due computed from the head before the write lock, written only if the run's
        revision is unchanged, computed again if not, up to `max_attempts` times; None when
        overtaken every time. A run `claimed` (by fire_next_due's read) is tried once, and
        None also when it has nothing due any more (another writer fired it since the
        claim): the caller claims again."""
        for _ in range(1 if claimed else self.max_attempts):
            row = await self._one_row(self._head_checked(run_class), (run_id, run_id), run_id)
            if restore.stored_version(run_id, row) < spec_of(run_class).version:
                # An older version's head is upgraded from its whole history, read with it
                # in one moment: holding the run.
                return await self._with_retries(
                    functools.partial(self._fire_due, run_class, run_id, when, started),
                    repeatable=False)
            due = await self._due_step(None, run_class, run_id, row, when, started)
            if isinstance(due, Fired):
                return None if claimed else due
            # Encoded before the lock.
            stored = writes.writes(self.sql, *due[:2], utc_text(when), due[3])
            try:
                return await self._with_retries(
                    functools.partial(self._write_due, due, stored, locked=False),
                    repeatable=False)
            except ConcurrentUpdate:  # another worker fired the run meanwhile: again
                continue
        return None

    async def fire_next_due(self, run_class: type[Run[Any, Any, Any]],
                            now: dt.datetime | None = None, *, skip: Sequence[str] = ()
                            ) -> Fired | None:
        """Claim the run of `run_class`'s spec whose timer is due first (at `now`), fire its
        due timers and save it, in one transaction; None when no run is due. On PostgreSQL
        the claim skips runs other workers hold (FOR UPDATE SKIP LOCKED), so any number of
        workers can call this in a loop and never fire one timer twice. On SQLite the claim
        is a read, and the run is fired as `fire_due` fires it (computed before the write
        lock, written only if unchanged; a run another worker fired meanwhile is claimed
        again). Runs in `skip` are passed over; a claimed run that cannot be fired raises
        TimerFailed (naming it: skip it to go on), with nothing saved; failures of the store
        itself (busy, away, full, damaged) are raised as they are."""
        self._writable()
        at = now if now is not None else self.now()  # claimed and fired at one time
        if not is_aware(at):  # the caller's mistake, not a TimerFailed of the run claimed
            raise TypeError(f"fire_next_due: `now` must be a datetime with a time zone, got "
                            f"{at!r}")
        spec = spec_of(run_class)  # runs of a newer version are passed over: not ours
        args = (spec.name, spec.version, utc_text(at), *self.sql.skip_arg(skip))
        claim = self.sql.claim_due(skip=bool(skip), limit=1)
        # A claim that is only a read: workers that read at once compute the same run, and
        # all but one are overtaken. Those claim again one of the first few due at random
        # (all are due), not all of them the next one.
        first_due = self.sql.claim_due(skip=bool(skip), limit=_CLAIM_AMONG)
        claimed: list[str] = []  # the run this attempt claimed
        started = time.time() if self.listeners else 0.0  # for the listeners

        async def work(db: Any) -> Fired | None:  # claimed and fired holding the run
            claimed.clear()
            row = await (await db.execute(claim, args)).fetchone()
            if row is None:
                return None
            claimed.append(row[0])
            return await self._fire_due(run_class, row[0], at, started, db)

        async def unlocked() -> Fired | None:  # claimed by a read, fired as fire_due does
            for attempt in range(self.max_attempts):
                claimed.clear()
                found = await self._rows(first_due if attempt else claim, args)
                if not found:
                    return None
                claimed.append(random.choice(found)[0])
                # Overtaken, or found with nothing due (another writer fired the run since
                # the claim): claimed again.
                done = await self._fire_due_unlocked(run_class, claimed[0], at, started,
                                                     claimed=True)
                if done is not None:
                    return done
            return await self._with_retries(work, repeatable=False)  # overtaken every time

        try:
            if self._computes_before_locking(run_class):
                done = await unlocked()
            else:
                done = await self._with_retries(work, repeatable=False)
            if self.listeners and done is not None and done.applied:
                observe.steps(self.listeners, done.run, "fire_due", started,
                              await self._context(done.run.record.runId))
            return done
        except Exception as exc:
            # The claimed run's own failure (a guard raised, a value or a row the database
            # refuses), unless it is the store's: then no other run would fare better.
            if not claimed or isinstance(exc, TimerFailed) or self.store_failed(exc):
                raise
            failed = TimerFailed(claimed[0], f"{type(exc).__name__}: {exc}")
            failed.__cause__ = exc  # as the listeners see it, too
            if self.listeners:
                self.listeners.notify(observe.timers_failed(
                    run_class, claimed[0], failed, exc, started,
                    await self._context(claimed[0])))
            raise failed from exc

    async def next_due(self, run_class: type[Run[Any, Any, Any]], *,
                       skip: Sequence[str] = ()) -> dt.datetime | None:
        """When the earliest armed timer of the runs `run_class` may fire is due (runs in
        `skip` and runs of a newer spec version left out), or None: how long a worker may
        sleep."""
        spec = spec_of(run_class)
        sql = self.sql.next_due(skip=bool(skip))
        args = [spec.name, spec.version, *self.sql.skip_arg(skip)]

        async def work(db: Any) -> list[Any]:
            return list(await (await db.execute(sql, args)).fetchall())

        found = await self._read(work)
        return rows.column_time(found[0][0], "runs.next_due", found[0][1]) if found \
            else None
