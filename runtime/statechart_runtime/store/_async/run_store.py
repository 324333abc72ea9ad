"""The run store's logic that reads and writes: the API (`AsyncRunStore`), its transactions,
retries and reconnection, in no SQL dialect and for no driver in particular.

THE SOURCE of both APIs, with the layers it is built on (transactions.py: the machinery;
run_calls.py: runs and events; work_calls.py: work items; this module: the reads, watching
and pages): `tools/async_to_sync.py` generates the synchronous `RunStore` and its layers
(store/_sync/) from these modules (`async def` -> `def`, no `await`, `asyncio.sleep` ->
`time.sleep`, the `if is_async():` branches dropped). Edit them, then run
`python tools/async_to_sync.py`; a test fails while a generated module is stale.

What to read and write is decided without I/O in store/core (writes, restore, checks, rows,
schema, failures); every SQL text is a backend's (`self.sql`, store/sqlite, store/postgres),
and so is how it connects and what its driver's errors mean (`_failure`). The synchronous
store holds one connection; the asynchronous one a pool (`_take_pooled`), so that many tasks use
it at once: each call leases a connection for its transaction.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
from collections.abc import AsyncIterator, Sequence
from contextlib import suppress
from typing import Any

from statechart_runtime.errors import (
    RunNotFound,
    StoreError,
)
from statechart_runtime.run import Run, spec_of
from statechart_runtime.store._async.transactions import RunT
from statechart_runtime.store._async.work_calls import WorkCalls
from statechart_runtime.store.core import (
    pages,
    rows,
    versions,
)
from statechart_runtime.store.core import watch as watch_core
from statechart_runtime.store.core.checks import utc_text
from statechart_runtime.store.core.pages import RunFilter
from statechart_runtime.store.core.rows import HistoryRow, Stored, StoredRun
from statechart_runtime.store.core.writes import (
    Fired,
)


class AsyncRunStore(WorkCalls):
    """The API and its logic, in no SQL dialect; a backend subclass (a module of its own)
    gives its `sql`, its `migrations`, and says how it connects and what its errors mean.
    Built in layers: StoreTransactions (transactions.py) <- RunCalls (run_calls.py) <-
    WorkCalls (work_calls.py) <- this: the reads, watching, and pages for consoles."""

    # -- queries -------------------------------------------------------------------------

    async def history(self, run_id: str, *, event: str | None = None,
                      since: dt.datetime | None = None, until: dt.datetime | None = None,
                      first: int = 0, limit: int | None = None) -> list[HistoryRow]:
        """The stored transitions of `run_id` in order, optionally only those of `event`
        and those at or after `since` and before `until`; from the step of index `first`,
        at most `limit` of them (a page of a long history)."""
        sql = self.sql.history(event=event is not None, since=since is not None,
                               until=until is not None, first=bool(first), limit=limit)
        args: list[Any] = [run_id]
        if event is not None:
            args.append(getattr(event, "value", event))
        if since is not None:
            args.append(utc_text(since))
        if until is not None:
            args.append(utc_text(until))
        if first:
            args.append(int(first))

        async def work(db: Any) -> list[Any]:
            return list(await (await db.execute(sql, args)).fetchall())

        return rows.history_rows(await self._read(work))

    # -- watching the steps as they commit (store/core/watch.py) ---------------------------

    async def watch_position(self) -> str:
        """The position of the end of the steps committed now: `changes` and `watch` after
        it give the steps that commit later (on PostgreSQL also those that transactions
        younger than one still running committed just before)."""
        async def work(db: Any) -> Any:
            return await (await db.execute(self.sql.watch_end)).fetchone()

        found = await self._read(work)
        return watch_core.position_text((int(found[0]), found[1], int(found[2])))

    async def changes(self, run_class: type[Run[Any, Any, Any]], *,
                      after: str = watch_core.BEGINNING, limit: int = 100
                      ) -> list[watch_core.Change]:
        """The steps of the spec's runs after position `after` (a `Change.position`, or
        BEGINNING), in the order they committed, at most `limit`: one read, at once.
        PostgreSQL gives a step once every transaction older than its own has ended (no
        step can then still commit before it). BadPosition for a position no Change gave."""
        position = watch_core.parse_position(after)
        args = (spec_of(run_class).name, *position, max(1, int(limit)))

        async def work(db: Any) -> list[Any]:
            return list(await (await db.execute(self.sql.watch_steps, args)).fetchall())

        return watch_core.changes(await self._read(work))

    async def watch(self, run_class: type[Run[Any, Any, Any]], *, after: str | None = None,
                    poll: float = 1.0, batch: int = 100) -> AsyncIterator[watch_core.Change]:
        """The steps of the spec's runs as they commit, in commit order, without end: after
        position `after` (a `Change.position` kept from an earlier watch, BEGINNING for
        every step; None: from now). Between reads it sleeps up to `poll` seconds, woken on
        PostgreSQL by the notice every step sends at its commit. A step comes again, with
        its run and index, only if its run's history is rewritten (an upgrade to a newer
        spec version): key what you do by (run_id, index). A failure of the store ends it
        with the store's error: watch again from the last position. Close it when done
        (`contextlib.aclosing`, or `break` out of its loop, which closes it)."""
        position = watch_core.parse_position(after) if after is not None else \
            watch_core.parse_position(await self.watch_position())
        listener: Any = None
        try:
            while True:
                if listener is None and self.due_channel is not None:
                    # Listening before reading: a step committed after the read wakes us.
                    with suppress(*self.driver_errors, OSError):
                        listener = await self.listening_connection(steps=True)
                found = await self.changes(run_class, after=watch_core.position_text(position),
                                           limit=batch)
                for change in found:
                    position = watch_core.parse_position(change.position)
                    yield change
                if len(found) == batch:
                    continue  # more are there already
                listener = await self._wait_for_steps(listener, poll)
        finally:
            if listener is not None:
                with suppress(Exception):
                    await listener.close()

    async def listening_connection(self, *, steps: bool = False) -> Any:
        """A connection of its own that LISTENs for the store's notices (backends that
        announce: see `due_channel`)."""
        raise StoreError(f"{self.where} cannot listen for notices: its workers and watches poll")

    async def _wait_for_steps(self, listener: Any, seconds: float) -> Any:
        """Sleep up to `seconds`, or until the listener gets a notice; the listener to go on
        with (None once its connection failed: plain sleeps until `watch` listens again)."""
        if listener is None:
            await asyncio.sleep(seconds)
            return None
        try:
            async for _notice in listener.notifies(timeout=seconds, stop_after=1):
                pass
            return listener
        except Exception:  # the connection went away: poll, and listen again next time
            with suppress(Exception):
                await listener.close()
            await asyncio.sleep(seconds)
            return None

    # -- pages, for consoles (store/core/pages.py's RunFilter) -------------------------

    async def runs_page(self, conditions: RunFilter = pages.ANY_RUN, *, by_due: bool = False,
                        after: tuple[Any, ...] | None = None, limit: int = 50
                        ) -> list[StoredRun]:
        """At most `limit` (up to 500) stored runs matching `conditions` (a `RunFilter`, in
        the names the runs are stored in), sorted by id, or with `by_due` by when their
        earliest timer is due (runs with none armed left out); after the cursor `after`:
        `(run_id,)`, or `(next_due, run_id)` with `by_due`, of the last run of the previous
        page. One snapshot; no record is loaded."""
        shape, args = pages.filter_args(conditions)
        sql = self.sql.runs_page(self.sql.run_filter(**shape), by_due=by_due,
                                 after=after is not None, limit=pages.checked_limit(limit))
        args += pages.after_args(by_due, after)

        async def work(db: Any) -> tuple[list[Any], list[Any]]:  # one snapshot
            found = list(await (await db.execute(sql, args)).fetchall())
            if not found:
                return found, []
            ids = [row[0] for row in found]
            states = await (await db.execute(self.sql.states_of(len(ids)), ids)).fetchall()
            return found, list(states)

        found, state_rows = await self._read(work)
        return rows.page(found, state_rows)

    async def status_counts(self, conditions: RunFilter = pages.ANY_RUN, *,
                            statuses: Sequence[str] | None = None, cap: int | None = None
                            ) -> dict[str, int]:
        """How many stored runs matching `conditions` (its `status` aside) report each
        status (the `status` column), by status (statuses no run reports left out). With
        `statuses`, only those, each counted up to `cap`: a read bounded by `cap` per
        status, whatever the number of runs (a count equal to `cap` means at least)."""
        shape, args = pages.filter_args(conditions, with_status=False)
        where = self.sql.run_filter(**shape)
        if statuses is None:
            found = await self._rows(self.sql.status_counts(where), args)
            return {status: int(count) for status, count in found}
        if not statuses:
            return {}
        every: list[Any] = []
        for status in statuses:
            every += [status, *args, status]
        found = await self._rows(self.sql.status_counts_capped(where, len(statuses), cap),
                                 every)
        return {status: int(count) for status, count in found if count}

    async def moves(self, run_id: str, *, first: int = 0) -> list[pages.Move]:
        """The run's steps from index `first` as `(index, event, source, target, kind)`,
        read without parsing their times or values: what a walk over the chart needs (the
        console's configuration after each step). Empty for an unknown run."""
        found = await self._rows(self.sql.moves(), [run_id, int(first)])
        return [(int(i), e, s, t, k or None) for i, e, s, t, k in found]

    async def head(self, run_class: type[RunT], run_id: str) -> Fired:
        """The stored run restored from its head alone, as `fire` restores it (its record's
        history is empty, its checks are `fire`'s; a run of an older spec version is
        upgraded from its whole history), as a `Fired` with `applied` False and the stored
        `revision`: the run as a console shows it, in a time that does not grow with its
        history. RunNotFound if there is none."""
        async def work(db: Any) -> Fired:
            row = await self._checked_head(db, run_id, self.sql.head)
            return Fired(await self._head_run(db, run_class, run_id, row), False, row[2])
        return await self._read(work)

    async def find(self, run_class: type[Run[Any, Any, Any]], *, status: Any = None,
                   state: Any = None, tag: str | None = None) -> list[str]:
        """The ids (sorted) of the stored runs of `run_class`'s spec whose record reports
        `status` (its top-level state, or a name of its status vocabulary), of which `state`
        is active (at any depth), and of which a state carrying
        `tag` is active: every condition given must hold. Names are those of the class's spec
        version (UnknownName otherwise); runs stored at an older version are answered as
        their migration renames them, runs of a newer version are not answered."""
        query = self.find_sql(run_class, status=status, state=state, tag=tag)
        if query is None:
            return []
        spec = spec_of(run_class)

        async def work(db: Any) -> tuple[list[Any], list[Any]]:  # one snapshot, round trip
            ids = await db.execute(*query)
            # The runs of other versions (index runs_by_version): older ones with their
            # states, newer ones by id alone. None, in the usual case.
            others = await db.execute(self.sql.other_versions,
                                      (spec.name, spec.version, spec.name, spec.version))
            return list(await ids.fetchall()), list(await others.fetchall())

        found, others = await self._read(work)
        return versions.found(spec, found, others, status=status, state=state, tag=tag)

    def find_sql(self, run_class: type[Run[Any, Any, Any]], *, status: Any = None,
                 state: Any = None, tag: str | None = None
                 ) -> tuple[str, list[Any]] | None:
        """The query `find` runs, and its arguments (None: nothing can match): for EXPLAIN.
        One set of ids per condition, intersected; each is read from an index that gives the
        ids in order (runs_by_status, run_states_by_state)."""
        spec = spec_of(run_class)
        args: list[Any] = []
        if status is not None:
            args += [spec.name, versions.status_name(spec, status)]
        if state is not None:
            args += [spec.name, versions.state_name(spec, state)]
        tagged: list[str] = []
        if tag is not None:
            tagged = sorted(spec.tags.get(tag, ()))
            if not tagged:
                return None
            args += [spec.name, *tagged]
        if status is None and state is None and tag is None:
            args.append(spec.name)
        return self.sql.find(status=status is not None, state=state is not None,
                             tagged=len(tagged)), args

    async def due(self, run_class: type[Run[Any, Any, Any]], now: dt.datetime | None = None,
                  *, limit: int = 100) -> list[str]:
        """The ids of the runs of `run_class`'s spec with a timer due at `now` (default: the
        current time), earliest first, at most `limit`. Only a list: `fire_next_due` claims
        and fires them."""
        when = utc_text(now if now is not None else self.now())
        spec = spec_of(run_class)

        async def work(db: Any) -> list[Any]:
            return list(await (await db.execute(
                self.sql.due, (spec.name, spec.version, when, limit))).fetchall())

        return [row[0] for row in await self._read(work)]

    # -- read-only views for tools (`statechart runs`): no Run class needed ------------

    async def stored_runs(self, spec: str | None = None) -> list[StoredRun]:
        """Every stored run (of the spec named `spec`), sorted by id, from the store's
        columns: no record is loaded or checked."""
        queries = self.sql.stored_runs(spec=spec is not None)
        args = [] if spec is None else [spec]

        async def work(db: Any) -> list[list[Any]]:
            return [list(await (await db.execute(sql, args)).fetchall()) for sql in queries]

        found = await self._read(work)
        return rows.stored_runs(*found)

    async def stored_record(self, run_id: str) -> Stored:
        """The run `run_id` as stored, whatever its spec: its columns and its whole record as
        parsed JSON, its history from the `history` table, NOT checked (a tool checks it
        against a spec it chooses). RunNotFound if there is none; StoreError if the record is
        not a JSON object, holds a history other than the table's, or a step is damaged."""
        queries = self.sql.snapshot(by="run", limit=None)

        async def work(db: Any) -> rows.Snapshot:
            found = [list(await (await db.execute(sql, (run_id,))).fetchall())
                     for sql in queries]
            return rows.snapshot(*found)

        found = await self._read(work)
        if not found:
            raise RunNotFound(run_id)
        result = rows.assembled(*found[0])
        if isinstance(result, StoreError):
            raise result
        return result

    async def stored_records(self, spec: str, *, batch: int = 500
                             ) -> AsyncIterator[tuple[str, Stored | StoreError]]:
        """Every stored run of the spec named `spec`, sorted by id: `(run_id, (StoredRun,
        record))` as `stored_record` gives them, or `(run_id, error)` for a run whose row or
        record is damaged (the StoreError that says what). Read `batch` runs at a time, each
        batch in one read transaction: a run's columns, record and steps are of one moment,
        whatever commits meanwhile (`statechart runs verify` reads through here)."""
        after: str | None = None
        while True:
            found = await self._read(functools.partial(self._batch, spec, after, batch))
            for head, states, steps in found:
                yield head[0], rows.assembled(head, states, steps)
            if len(found) < batch:
                return
            after = found[-1][0][0]

    async def _batch(self, spec: str, after: str | None, batch: int, db: Any
                     ) -> rows.Snapshot:
        """Inside a read transaction: the next `batch` runs of `spec` after the id `after`,
        each its head, its states and its steps (the states and steps read over the ids of
        the batch alone: a condition on `runs` only lets PostgreSQL scan the whole history
        table for every batch)."""
        heads_sql, states_sql, steps_sql = self.sql.snapshot(
            by="spec" if after is None else "after", limit=batch)
        args = [spec] if after is None else [spec, after]
        heads = list(await (await db.execute(heads_sql, args)).fetchall())
        if not heads:
            return []
        ranged = [*args, heads[-1][0], heads[0][0], heads[-1][0]]
        states = await db.execute(states_sql, ranged)
        steps = await db.execute(steps_sql, ranged)
        return rows.snapshot(heads, list(await states.fetchall()),
                             list(await steps.fetchall()))
