"""A run store: runs kept in SQLite or PostgreSQL, saved with optimistic concurrency, events
fired in one transaction, every transition appended to a queryable history (docs/runs.md).

```python
from statechart_runtime.store import open_store

store = open_store("sqlite:///runs.db")           # or "postgresql://user@host/db"
store.create(AgentRun())
store.fire(AgentRun, run_id, "approve", idempotency_key="approval-17")
```

The logic is here, once, and speaks no SQL dialect: each backend is a module of its own
(`BACKENDS`: `store_sqlite`, standard library `sqlite3`, so the runtime gains no dependency;
`store_postgres`, psycopg 3, the `postgres` extra) holding its statements (`Statements`), its
schema as a list of migrations, how it connects and which of its errors mean what. Adding a
backend is one new module and one entry in `BACKENDS`. One store holds one connection: use
one per process (or per thread); any number of processes may share the database.

A run's row holds its record without the history (the "head"); the steps are rows of their
own. `fire` restores the run from the head alone and appends the new steps, so its cost does
not grow with the run's history; `load` reads the steps too and checks the whole record.

This module holds the API (`open_store`, `RunStore`) and how runs are created, loaded, saved
and fired; the rest of the logic is in modules of its own, each saying what it holds:
`store_connection` (transactions, retries, reconnecting, what a driver's errors mean; the
`Statements` a backend gives), `store_schema` (the schema's version, upgrade and check),
`store_writes` (a run encoded into the statements that store it), `store_restore` (a run
restored from its rows), `store_queries` (`history`, `find`, `next_due`), `store_read` (the
views tools read, the decoding of stored rows), `store_pages` (the paged views consoles
read), `store_checks` (what a restored head is
checked against) and `store_versions` (runs of other spec versions).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import importlib
import json
import random
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from statechart_runtime import (
    store_checks,
    store_pages,
    store_queries,
    store_read,
    store_restore,
    store_versions,
    store_writes,
)
from statechart_runtime.errors import (
    ConcurrentUpdate,
    DamagedRow,
    OutcomeUnknown,
    ReadOnlyStore,
    RunError,
    RunIdTaken,
    RunNotFound,
    SchemaProblem,
    StoreError,
    StoreFull,
    StoreUnavailable,
    TimerFailed,
    UnknownName,
    UnstorableValue,
)
from statechart_runtime.run import Run
from statechart_runtime.store_connection import UNREACHABLE_HINT as UNREACHABLE_HINT
from statechart_runtime.store_connection import Statements, StoreConnection
from statechart_runtime.store_pages import RunFilter
from statechart_runtime.store_read import HistoryRow, StoredRun
from statechart_runtime.store_schema import OLDEST_VERSION as OLDEST_VERSION
from statechart_runtime.store_schema import SCHEMA_VERSION
from statechart_runtime.store_schema import UPGRADE_HINT as UPGRADE_HINT
from statechart_runtime.store_writes import (
    MARK_ATTR,
    Computed,
    Mark,
    Writes,
    json_value,
    mark_of,
    next_deadline,
    saved,
)
from statechart_runtime.values import Clock, is_aware

__all__ = ["BACKENDS", "SCHEMA_VERSION", "ConcurrentUpdate", "DamagedRow", "Fired", "HistoryRow",
           "OutcomeUnknown", "ReadOnlyStore", "RunFilter", "RunIdTaken", "RunNotFound", "RunStore",
           "SchemaProblem", "Statements", "StoreError", "StoreFull", "StoreUnavailable",
           "StoredRun", "TimerFailed", "UnknownName", "UnstorableValue", "open_store"]

# Imported `as` themselves above: OLDEST_VERSION and the hints a caller may reword (the CLI
# does) are this module's names too, where they were before their modules were split off.
_utc_text = store_checks.utc_text  # times in the store's columns
RunT = TypeVar("RunT", bound=Run[Any, Any, Any])
# How many of the runs due first a claim that is only a read (SQLite) picks one of, once
# overtaken.
_CLAIM_AMONG = 8
# No condition: every stored run (`runs_page`, `status_counts`).
_ANY_RUN = RunFilter()


# The backends, by URL scheme: the module that holds each (imported when a URL needs it, so
# that psycopg is needed only for PostgreSQL) and what to install when it cannot be imported.
# The module provides `open_url(url, *, timeout, read_only) -> RunStore`. A path with no
# scheme is a SQLite file.
# What to install for a backend's driver: a name every index has (the extras say the same).
_PSYCOPG = ("'psycopg[binary]>=3.1' (the `postgres` extra of statechart-runtime and "
            "statechart-compiler)")
BACKENDS: dict[str, tuple[str, str]] = {
    "sqlite": ("statechart_runtime.store_sqlite", ""),
    "postgresql": ("statechart_runtime.store_postgres", _PSYCOPG),
    "postgres": ("statechart_runtime.store_postgres", _PSYCOPG),
}


def _stored_version(run_id: str, head: tuple[Any, ...]) -> int:
    """The spec version of a head row; DamagedRow if it is not a whole number."""
    return store_read.whole_number(run_id, "runs.spec_version", head[1])


@dataclasses.dataclass(frozen=True, slots=True)
class Fired:
    """What `store.fire` (or `fire_due`) did: `run` is the stored run after it, saved at
    `revision`; `applied` is False when nothing was fired (an idempotency key already seen,
    no timer due); `events` are the events fired. The run is restored from the stored head:
    its record's history holds only the steps this call added (`store.load` reads them all)."""

    run: Any
    applied: bool
    revision: int
    events: tuple[str, ...] = ()



def open_store(url: str | Path, *, timeout: float = 30.0, read_only: bool = False,
               clock: Clock | None = None) -> RunStore:
    """The store at `url`: a file path, `sqlite:///relative/runs.db`, `sqlite:////abs/runs.db`,
    or `postgresql://user:password@host:port/database` (any libpq URL; psycopg 3 must be
    installed: the `postgres` extra). A writable store creates its tables if the database
    has none and upgrades an older store schema (one transaction); a newer one is refused
    (SchemaProblem). `read_only`: never writes, creates nor locks anything (docs/runs.md).
    `timeout` is how long a writer waits for another one, and the budget for reconnecting to
    a server that went away, in seconds. `clock` (a `Clock`, as runs take; default: the
    system's UTC time) is the store's one time source: steps, row times and due queries of
    every call that is not given a time (docs/runs.md, Clocks)."""
    text = str(url)
    scheme = text.partition("://")[0] if "://" in text else "sqlite"
    if scheme not in BACKENDS:
        raise StoreError(f"unsupported store URL {text!r}: expected one of "
                         + ", ".join(f"{name}://..." for name in BACKENDS)
                         + " or a file path")
    module_name, extra = BACKENDS[scheme]
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise StoreError(f"a {scheme}:// store needs {exc.name or 'a missing module'} ({exc})"
                         + (f": pip install {extra}" if extra else "")) from None
    store: RunStore = module.open_url(text, timeout=timeout, read_only=read_only)
    if clock is not None:
        store.clock = clock
    return store



class RunStore(StoreConnection):
    """The API and its logic, in no SQL dialect; a backend subclass (a module of its own)
    gives its `sql`, its `migrations`, and says how it connects and what its errors mean
    (`StoreConnection`: the transactions and errors this class runs its statements in)."""

    # Whether `fire` computes the step before it takes the write lock and writes it only if
    # the run is unchanged (SQLite, whose write lock is the whole database's), rather than
    # holding the run from its read to its write (PostgreSQL's lock is the run's row).
    optimistic_fire = False

    # -- runs ----------------------------------------------------------------------------

    def create(self, run: Run[Any, Any, Any]) -> None:
        """Store a run that is not stored yet (a new one, or one restored from a record):
        its record, state and history. StoreError if its run id is taken."""
        self._writable()
        record: Any = run.record
        spec = run._sc_spec

        def work() -> None:
            if self._x(self.sql.run_exists, (record.runId,)).fetchone():
                raise RunIdTaken(record.runId)
            at = _utc_text(self.now())
            self._x(self.sql.insert_run,
                    (record.runId, spec.name, spec.version, record.status.value, at, at))
            created = Mark(0, 0, 0, (), rewrite=True)
            self._write(store_writes.writes(self.sql, run, created, at), created, locked=True)

        # Two processes creating the same id at once: the loser's INSERT meets the winner's
        # key (on PostgreSQL, at a later statement of the pipeline): the same RunIdTaken.
        self._with_retries(work, repeatable=False,
                           duplicate=lambda: RunIdTaken(record.runId))
        setattr(run, MARK_ATTR, Mark(1, len(record.history), len(record.history),
                                     run._active, due=next_deadline(run)))

    def load(self, run_class: type[RunT], run_id: str, **kwargs: Any) -> RunT:
        """The stored run `run_id`, restored as a `run_class` (keyword arguments go to
        `run_class.restore`: `model=`, `clock=`), with its whole history. The record is
        checked as `from_json` checks it, replaying the history (the spec's InvalidRecord);
        a run of another spec is refused the same way."""
        def work() -> RunT:
            return store_restore.full_run(self, run_class, run_id,
                                          self._head_row(run_id, self.sql.head), kwargs)
        return self._read(work)

    def _head_row(self, run_id: str, sql: str) -> tuple[Any, ...]:
        row = self._x(sql, (run_id,)).fetchone()
        if row is None:
            raise RunNotFound(run_id)
        return tuple(row)

    def _locked_head(self, run_id: str) -> tuple[Any, ...]:
        """The run's head, its row held until the transaction ends, and what `_head_run`
        checks it against: sent together, the second read once the row is held (a statement
        of its own: on PostgreSQL a SELECT ... FOR UPDATE that waited for another writer sees
        that writer's row, but its other tables as they were when it started)."""
        return self._checked_head(run_id, self.sql.head_locked)

    def _checked_head(self, run_id: str, sql: str) -> tuple[Any, ...]:
        """The run's head read by `sql`, with what `_head_run` checks it against."""
        head = self._x(sql, (run_id,))
        checks = self._x(self.sql.head_checks, (run_id, run_id))
        row = head.fetchone()
        if row is None:
            raise RunNotFound(run_id)
        return (*row, *checks.fetchone())

    def _one_row(self, sql: str, args: tuple[Any, ...], run_id: str) -> tuple[Any, ...]:
        """The row of one reading statement, in no transaction (the statement is its own
        snapshot); RunNotFound if it has none."""
        row = self._with_retries(lambda: self._x(sql, args).fetchone(), repeatable=True,
                                 begin="")
        if row is None:
            raise RunNotFound(run_id)
        return tuple(row)

    def _head_run(self, run_class: type[RunT], run_id: str, row: tuple[Any, ...]) -> RunT:
        """The run from its stored head (`store_restore.head_run`)."""
        return store_restore.head_run(self, run_class, run_id, row)

    def save(self, run: Run[Any, Any, Any]) -> int:
        """Save a run this store created or loaded; its new revision. ConcurrentUpdate if
        the stored run was saved since (by this process or another): nothing is written."""
        self._writable()
        mark = mark_of(run)
        at = _utc_text(self.now())
        writes = store_writes.writes(self.sql, run, mark, at)
        revision = self._with_retries(lambda: self._write(writes, mark, locked=False),
                                       repeatable=False)
        saved(run, mark, revision)
        return revision

    def _write(self, writes: Writes, mark: Mark, *, locked: bool) -> int:
        """`writes`, inside the caller's transaction; the new revision. Unless the caller
        holds the run's row (`locked`: it read the row in this transaction),
        ConcurrentUpdate if the stored revision is not `mark.revision`. No statement here
        needs a result but that check: PostgreSQL sends them all with the COMMIT, in one
        round trip."""
        if writes.announce is not None:
            self._announce_due(writes.announce)
        if locked:
            self._x(self.sql.update_head, writes.head)
        elif not self.sql.update_head_if or self._x(
                self.sql.update_head_if, (*writes.head, mark.revision)).rowcount != 1:
            # Written only if unchanged (one statement where the backend can), else which
            # of the two it is.
            found = self._x(self.sql.revision_locked, (writes.run_id,)).fetchone()
            if found is None:
                raise RunNotFound(writes.run_id)
            if found[0] != mark.revision:
                raise ConcurrentUpdate(writes.run_id, mark.revision, found[0])
            self._x(self.sql.update_head, writes.head)
        for sql, rows in writes.statements:
            self._many(sql, rows)
        return mark.revision + 1

    # -- events --------------------------------------------------------------------------

    def fire(self, run_class: type[RunT], run_id: str, event: Any, *,
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
        spec = run_class._sc_spec
        name = event.value if isinstance(event, spec.event_enum) else event
        try:
            key_values = "" if idempotency_key is None else json.dumps(
                {f: json_value(spec, f, v) for f, v in values.items()}, sort_keys=True)
        except ValueError as exc:  # an integer too long for JSON text
            raise store_writes.unstorable(run_id, exc) from None
        # Tells this call's own commit from an earlier call's (a key's retry after a lost
        # connection).
        call = "" if idempotency_key is None else uuid.uuid4().hex

        def key_row() -> Any:
            if idempotency_key is None:
                return None
            return self._x(self.sql.key_seen, (run_id, idempotency_key)).fetchone()

        def compute(row: tuple[Any, ...], seen: Any) -> Fired | Computed:
            """The call from the head `row` and the key's row (`seen`), nothing written yet:
            a Fired when there is nothing to write (the key was used already), else the run
            with the event taken (and the refusal, when timers fired before it)."""
            if seen is not None:
                if seen[0] != name or (seen[1] != key_values and not store_versions
                                       .same_key_values(spec, seen[1], key_values)):
                    raise StoreError(
                        f"idempotency key {idempotency_key!r} of run {run_id!r} was "
                        f"used for `{seen[0]}` {seen[1]}, not `{name}` {key_values}")
                # The call whose commit was cut off by a lost connection did apply it.
                mine = seen[2] == call
                return Fired(self._head_run(run_class, run_id, row), mine, row[2],
                             (name,) if mine else ())
            if if_revision is not None and row[2] != if_revision:
                raise ConcurrentUpdate(run_id, if_revision, row[2])
            run = self._head_run(run_class, run_id, row)
            mark = mark_of(run)
            when = at if at is not None else self.now()  # the one time of this call
            try:
                run.send_at(when, event, **values)
            except RunError as refusal:
                if not run.record.history:  # nothing happened: nothing to save
                    raise
                # Timers fired before the event was refused: they are kept.
                return run, mark, _utc_text(when), refusal
            return run, mark, _utc_text(when), None

        def write(computed: Computed, writes: Writes, *, locked: bool) -> Fired | RunError:
            run, mark, stamp, refusal = computed
            revision = self._write(writes, mark, locked=locked)
            if refusal is None and idempotency_key is not None:
                self._x(self.sql.insert_key,
                        (run_id, idempotency_key, name, key_values, revision, call, stamp))
            saved(run, mark, revision)
            return refusal if refusal is not None else Fired(run, True, revision, (name,))

        def work() -> Fired | RunError:  # holding the run from its read to its write
            done = compute(self._locked_head(run_id), key_row())
            if isinstance(done, Fired):
                return done
            return write(done, store_writes.writes(self.sql, *done[:3]), locked=True)

        repeatable = idempotency_key is not None
        done: Fired | RunError | None = None
        if self._computes_before_locking(run_class):
            # The step is computed before the write lock is taken, and written only if the
            # run's revision is still the one it was computed from; else computed again.
            for _ in range(self.max_attempts):
                # The head, what its checks read and the key, in one snapshot: with no key,
                # one statement (no transaction).
                if idempotency_key is None:
                    row, seen = self._one_row(self.sql.head_checked, (run_id, run_id),
                                              run_id), None
                else:
                    row, seen = self._read(lambda: (
                        self._checked_head(run_id, self.sql.head), key_row()))
                if _stored_version(run_id, row) < spec.version:
                    # An older version's head is upgraded from its whole history, read with
                    # it in one moment: holding the run.
                    break
                computed = compute(row, seen)
                if isinstance(computed, Fired):
                    return computed
                # Encoded before the lock, too.
                writes = store_writes.writes(self.sql, *computed[:3])
                try:
                    done = self._with_retries(
                        functools.partial(write, computed, writes, locked=False),
                        repeatable=repeatable)
                    break
                except ConcurrentUpdate:  # another writer fired the run meanwhile: again
                    continue
        if done is None:  # overtaken every time, or a backend that holds the run
            done = self._with_retries(work, repeatable=repeatable)
        if isinstance(done, RunError):
            raise done  # refused, after the timers that fired were committed
        return done

    def fire_due(self, run_class: type[RunT], run_id: str, now: dt.datetime | None = None
                 ) -> Fired:
        """Load the run, fire every timer due at `now` (default: the current time) with
        `run.fire_due(now)` (each step at its timer's due time), save it: one transaction,
        holding the run's row, or (`optimistic_fire`: SQLite) computed before the write lock
        and written only if the run is unchanged, as `fire` does. A run with no timer due
        fires nothing (`applied` False): two workers firing the same due run fire its timers
        once. A timer whose guards said no is saved as declined, so `next_due` moves on to
        the run's next timer."""
        self._writable()
        when = now if now is not None else self.now()  # the one time of this call
        if self._computes_before_locking(run_class):
            done = self._fire_due_unlocked(run_class, run_id, when)
            if done is not None:
                return done
        return self._with_retries(lambda: self._fire_due(run_class, run_id, when),
                                  repeatable=False)

    def _computes_before_locking(self, run_class: type[Run[Any, Any, Any]]) -> bool:
        """Whether a step of `run_class` is computed before the write lock is taken and
        written only if the run's revision is unchanged (`optimistic_fire`), rather than
        computed holding the run: a run whose class has actions is held (they would run
        again when the step is computed again)."""
        return (self.optimistic_fire and bool(self.sql.head_checked)
                and run_class._sc_direct_guards() is not None)

    def _due_step(self, run_class: type[RunT], run_id: str, row: tuple[Any, ...],
                  when: dt.datetime) -> tuple[RunT, Mark, tuple[str, ...]] | Fired:
        """The run from its head `row` with its timers due at `when` fired, its mark and the
        events fired; a Fired (`applied` False) when nothing is to be written: no timer was
        due, and none was declined."""
        run = self._head_run(run_class, run_id, row)
        mark = mark_of(run)
        armed = list(run.timers)
        events = tuple(run.fire_due(when))
        if not events and list(run.timers) == armed:  # nothing due (or no timers at all)
            return Fired(run, False, row[2])
        # A declined timer (its guards said no) is saved even when nothing fired: it no
        # longer counts for `next_due`, so it cannot keep other runs' timers waiting.
        return run, mark, events

    def _fire_due(self, run_class: type[RunT], run_id: str, when: dt.datetime) -> Fired:
        """fire_due holding the run, inside the caller's write transaction."""
        due = self._due_step(run_class, run_id, self._locked_head(run_id), when)
        if isinstance(due, Fired):
            return due
        return self._write_due(due, store_writes.writes(self.sql, *due[:2], _utc_text(when)),
                               locked=True)

    def _write_due(self, due: tuple[RunT, Mark, tuple[str, ...]], writes: Writes, *,
                   locked: bool) -> Fired:
        """Write a run's due timers fired (`_due_step`, encoded as `writes`), inside the
        caller's write transaction."""
        run, mark, events = due
        revision = self._write(writes, mark, locked=locked)
        saved(run, mark, revision)
        return Fired(run, bool(events), revision, events)

    def _fire_due_unlocked(self, run_class: type[RunT], run_id: str, when: dt.datetime, *,
                           claimed: bool = False) -> Fired | None:
        """fire_due computed from the head before the write lock, written only if the run's
        revision is unchanged, computed again if not, up to `max_attempts` times; None when
        overtaken every time. A run `claimed` (by fire_next_due's read) is tried once, and
        None also when it has nothing due any more (another writer fired it since the
        claim): the caller claims again."""
        for _ in range(1 if claimed else self.max_attempts):
            row = self._one_row(self.sql.head_checked, (run_id, run_id), run_id)
            if _stored_version(run_id, row) < run_class._sc_spec.version:
                # An older version's head is upgraded from its whole history, read with it
                # in one moment: holding the run.
                return self._with_retries(lambda: self._fire_due(run_class, run_id, when),
                                          repeatable=False)
            due = self._due_step(run_class, run_id, row, when)
            if isinstance(due, Fired):
                return None if claimed else due
            writes = store_writes.writes(self.sql, *due[:2], _utc_text(when))  # before the lock
            try:
                return self._with_retries(
                    functools.partial(self._write_due, due, writes, locked=False),
                    repeatable=False)
            except ConcurrentUpdate:  # another worker fired the run meanwhile: again
                continue
        return None

    def fire_next_due(self, run_class: type[Run[Any, Any, Any]],
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
        spec = run_class._sc_spec  # runs of a newer version are passed over: not ours to fire
        args = (spec.name, spec.version, _utc_text(at), *self._not_in_args(skip))
        skipped = self._not_in("run_id", skip)
        claim = self.sql.claim_due.format(skip=skipped, limit=1)

        claimed: list[str] = []  # the run this attempt claimed

        def work() -> Fired | None:  # claimed and fired holding the run
            claimed.clear()
            row = self._x(claim, args).fetchone()
            if row is None:
                return None
            claimed.append(row[0])
            return self._fire_due(run_class, row[0], at)

        # A claim that is only a read: workers that read at once compute the same run, and
        # all but one are overtaken. Those claim again one of the first few due at random
        # (all are due), not all of them the next one.
        first_due = self.sql.claim_due.format(skip=skipped, limit=_CLAIM_AMONG)

        def read_first() -> list[Any]:
            return list(self._x(claim, args).fetchall())

        def read_some() -> list[Any]:
            return list(self._x(first_due, args).fetchall())

        def unlocked() -> Fired | None:  # claimed by a read, fired as fire_due does
            for attempt in range(self.max_attempts):
                claimed.clear()
                rows = self._with_retries(read_some if attempt else read_first,
                                          repeatable=True, begin="")
                if not rows:
                    return None
                claimed.append(random.choice(rows)[0])
                # Overtaken, or found with nothing due (another writer fired the run since
                # the claim): claimed again.
                done = self._fire_due_unlocked(run_class, claimed[0], at, claimed=True)
                if done is not None:
                    return done
            return self._with_retries(work, repeatable=False)  # overtaken every time

        try:
            if self._computes_before_locking(run_class):
                return unlocked()
            return self._with_retries(work, repeatable=False)
        except Exception as exc:
            # The claimed run's own failure (a guard raised, a value or a row the database
            # refuses), unless it is the store's: then no other run would fare better.
            if not claimed or isinstance(exc, TimerFailed) or self._store_failed(exc):
                raise
            raise TimerFailed(claimed[0], f"{type(exc).__name__}: {exc}") from exc

    def next_due(self, run_class: type[Run[Any, Any, Any]], *, skip: Sequence[str] = ()
                 ) -> dt.datetime | None:
        """When the earliest armed timer of the runs `run_class` may fire is due (runs in
        `skip` and runs of a newer spec version left out), or None: how long a worker may
        sleep."""
        return store_queries.next_due(self, run_class, skip=skip)

    # -- queries -------------------------------------------------------------------------

    def history(self, run_id: str, *, event: str | None = None,
                since: dt.datetime | None = None, until: dt.datetime | None = None,
                first: int = 0, limit: int | None = None) -> list[HistoryRow]:
        """The stored transitions of `run_id` in order, optionally only those of `event`
        and those at or after `since` and before `until`; from the step of index `first`,
        at most `limit` of them (a page of a long history)."""
        return store_queries.history(self, run_id, event=event, since=since, until=until,
                                     first=first, limit=limit)

    # -- pages, for consoles (store_pages) -------------------------------------------------

    def runs_page(self, conditions: RunFilter = _ANY_RUN, *, by_due: bool = False,
                  after: tuple[Any, ...] | None = None, limit: int = 50) -> list[StoredRun]:
        """At most `limit` (up to 500) stored runs matching `conditions` (a `RunFilter`, in
        the names the runs are stored in), sorted by id, or with `by_due` by when their
        earliest timer is due (runs with none armed left out); after the cursor `after`:
        `(run_id,)`, or `(next_due, run_id)` with `by_due`, of the last run of the previous
        page. One snapshot; no record is loaded."""
        return store_pages.runs_page(self, conditions, by_due=by_due, after=after,
                                     limit=limit)

    def status_counts(self, conditions: RunFilter = _ANY_RUN, *,
                      statuses: Sequence[str] | None = None, cap: int | None = None
                      ) -> dict[str, int]:
        """How many stored runs matching `conditions` (its `status` aside) report each
        status (the `status` column), by status (statuses no run reports left out). With
        `statuses`, only those, each counted up to `cap`: a read bounded by `cap` per
        status, whatever the number of runs (a count equal to `cap` means at least)."""
        return store_pages.status_counts(self, conditions, statuses, cap)

    def moves(self, run_id: str, *, first: int = 0) -> list[store_pages.Move]:
        """The run's steps from index `first` as `(index, event, source, target, kind)`,
        read without parsing their times or values: what a walk over the chart needs (the
        console's configuration after each step). Empty for an unknown run."""
        return store_pages.moves(self, run_id, first)

    def head(self, run_class: type[RunT], run_id: str) -> Fired:
        """The stored run restored from its head alone, as `fire` restores it (its record's
        history is empty, its checks are `fire`'s; a run of an older spec version is
        upgraded from its whole history), as a `Fired` with `applied` False and the stored
        `revision`: the run as a console shows it, in a time that does not grow with its
        history. RunNotFound if there is none."""
        def work() -> Fired:
            row = self._checked_head(run_id, self.sql.head)
            if _stored_version(run_id, row) < run_class._sc_spec.version:
                run = store_restore.full_run(self, run_class, run_id,
                                             self._head_row(run_id, self.sql.head), {})
            else:
                run = self._head_run(run_class, run_id, row)
            return Fired(run, False, row[2])
        return self._read(work)

    def find(self, run_class: type[Run[Any, Any, Any]], *, status: Any = None,
             state: Any = None, tag: str | None = None) -> list[str]:
        """The ids (sorted) of the stored runs of `run_class`'s spec whose record reports
        `status` (its top-level state, or a name of its status vocabulary), of which `state`
        is active (at any depth), and of which a state carrying
        `tag` is active: every condition given must hold. Names are those of the class's spec
        version (UnknownName otherwise); runs stored at an older version are answered as
        their migration renames them, runs of a newer version are not answered."""
        return store_queries.find(self, run_class, status=status, state=state, tag=tag)

    def find_sql(self, run_class: type[Run[Any, Any, Any]], *, status: Any = None,
                 state: Any = None, tag: str | None = None
                 ) -> tuple[str, list[Any]] | None:
        """The query `find` runs, and its arguments (None: nothing can match): for EXPLAIN.
        One set of ids per condition, intersected; each is read from an index that gives the
        ids in order (runs_by_status, run_states_by_state)."""
        return store_queries.find_sql(self, run_class, status=status, state=state, tag=tag)

    def due(self, run_class: type[Run[Any, Any, Any]], now: dt.datetime | None = None, *,
            limit: int = 100) -> list[str]:
        """The ids of the runs of `run_class`'s spec with a timer due at `now` (default: the
        current time), earliest first, at most `limit`. Only a list: `fire_next_due` claims
        and fires them."""
        when = _utc_text(now if now is not None else self.now())
        spec = run_class._sc_spec
        return [row[0] for row in self._read(lambda: self._x(
            self.sql.due, (spec.name, spec.version, when, limit)).fetchall())]

    # -- read-only views for tools (`statechart runs`): no Run class needed ------------

    def stored_runs(self, spec: str | None = None) -> list[StoredRun]:
        """Every stored run (of the spec named `spec`), sorted by id, from the store's
        columns: no record is loaded or checked."""
        if spec is None:
            return self._stored_runs("1 = 1", [])
        return self._stored_runs(f"spec = {self.sql.param}", [spec])

    def stored_record(self, run_id: str) -> tuple[StoredRun, dict[str, Any]]:
        """The run `run_id` as stored, whatever its spec: its columns and its whole record as
        parsed JSON, its history from the `history` table, NOT checked (a tool checks it
        against a spec it chooses). RunNotFound if there is none; StoreError if the record is
        not a JSON object, holds a history other than the table's, or a step is damaged."""
        return store_read.stored_record(self, run_id)

    def stored_records(self, spec: str, *, batch: int = 500
                       ) -> Iterator[tuple[str, tuple[StoredRun, dict[str, Any]] | StoreError]]:
        """Every stored run of the spec named `spec`, sorted by id: `(run_id, (StoredRun,
        record))` as `stored_record` gives them, or `(run_id, error)` for a run whose row or
        record is damaged (the StoreError that says what). Read `batch` runs at a time, each
        batch in one read transaction: a run's columns, record and steps are of one moment,
        whatever commits meanwhile (`statechart runs verify` reads through here)."""
        return store_read.stored_records(self, spec, batch)

    def _stored_runs(self, where: str, args: list[Any]) -> list[StoredRun]:
        return store_read.stored_runs(self, where, args)

