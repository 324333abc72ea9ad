"""What a backend gives the run store: its SQL, by what each statement does (`Statements`).
Every SQL text is a backend's (store/sqlite, store/postgres), in its own dialect; the
statements composed from a call's conditions (`find`, `history`'s filters, the skipped runs
of the due queries) are composed by the backend's own methods here."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any


@dataclasses.dataclass(frozen=True, slots=True)
class Statements:
    """The SQL a backend runs, in its own dialect (placeholders, locking clauses): every
    statement the backend-neutral logic needs, by what it does. A backend subclasses it to
    give the statements composed at run time (the methods below)."""

    begin_write: str  # a transaction that will write
    begin_read: str  # a transaction that only reads (one snapshot where the backend can)
    lock_schema: str  # inside the schema's transaction: new stores take turns ("": none)
    table_count: str  # (name) -> one row: how many tables of that name the store sees
    read_version: str  # -> the schema_version row of store_meta, if any
    write_version: str  # (version text): insert or replace it
    run_exists: str  # (run_id)
    # (run_id, spec, spec_version, status, created_at, updated_at, trace_context)
    insert_run: str
    read_context: str  # (run_id) -> trace_context: what a listener keeps with the run
    head: str  # (run_id) -> spec, spec_version, revision, steps, record, status
    head_locked: str  # the same, holding the run's row until the transaction ends
    # (run_id, run_id) -> one row: what `fire` checks the head against (checks.py):
    # the run_states rows (names joined by spaces, or NULL), the last history row's idx,
    # target and at (NULLs: no step). Run after head_locked (PostgreSQL: in the same
    # round trip), so that it reads what the last holder of the row committed.
    head_checks: str
    # (run_id, run_id) -> head and head_checks in one row, read by one statement (one
    # snapshot without a transaction): `fire`'s read before it takes the write lock, on a
    # backend with `optimistic_fire` ("" on the others).
    head_checked: str
    # head_checks and head_checked with two more columns, read when a tracing listener
    # listens (else not: no cost): the stored trace contexts of the run's states (a JSON
    # object, state -> the context of the step that entered it; NULL: none) and the run's
    # (runs.trace_context). head_checks_traced takes (run_id, run_id, run_id).
    head_checks_traced: str
    head_checked_traced: str
    revision_locked: str  # (run_id) -> revision, holding the row
    update_head: str  # (revision, spec_version, status, steps, record, next_due, at, run_id)
    # The same with `revision` (the one the step was computed from) appended: the row is
    # written only if its revision is still that (the cursor's rowcount says whether).
    # "": the backend checks the revision with revision_locked first (PostgreSQL, whose
    # pipelined UPDATE gives its rowcount only a round trip later).
    update_head_if: str
    steps: str  # (run_id) -> event, source, target, at, values, kind, in order
    delete_steps: str  # (run_id)
    # (run_id), before delete_steps: keeps the highest step number deleted, so that the
    # steps written next are numbered above it ("": positions never reused: PostgreSQL).
    keep_step_number: str
    insert_step: str  # (run_id, idx, event, source, target, at, values, kind)
    delete_states: str  # (run_id)
    delete_state: str  # (run_id, state)
    insert_state: str  # (run_id, spec, state, trace_context)
    # (trace_context, run_id, state): a state entered again keeps its new step's context
    state_context: str
    key_seen: str  # (run_id, key) -> event, values, call
    insert_key: str  # (run_id, key, event, values, revision, call, at)
    due: str  # (spec, version, now, limit) -> run ids, earliest due first
    # (spec, spec_version, spec, spec_version) -> the runs of the spec's other versions:
    # older ones with their states (run_id, spec_version, state), newer ones by id (state
    # NULL): what `find` answers in the caller's names.
    other_versions: str
    # (channel, spec) -> tell the workers listening on `channel` (at commit) that a run of
    # `spec` got an earlier deadline; "": the backend cannot notify (its workers poll).
    announce_due: str
    # (spec) -> tell the `watch`es listening (at commit) that a run of `spec` took a step;
    # "": the backend cannot notify (they poll).
    announce_step: str
    # -> (position, run_id, idx) of the end of the steps committed now (`watch` from now).
    watch_end: str
    # (spec, position, run_id, idx, limit) -> (position, run_id, idx, event, source, target,
    # at, values, kind) of the spec's steps after that one in commit order, at most `limit`;
    # only steps no earlier one can still commit before (PostgreSQL: of transactions older
    # than every running one).
    watch_steps: str
    # Work items (store/core/work.py). work_items columns: item_key, run_id, spec, state,
    # handler, attempts, failures, token, owner, ready_at, lease_until, last_error,
    # created_at, ended_at, ended_by, trace_context; work_attempts: item_key, attempt,
    # owner, claimed_at, ended_at, result, error.
    # (key, run_id, spec, state, handler, ready_at, created_at, trace_context)
    insert_item: str
    end_items: str  # (at, ended_by, run_id, state): the state's open item ends
    end_attempts_of_state: str  # (at, result, run_id, state): its running attempt ends
    # (key) -> token, owner, lease_until, ended_at, ended_by, state, failures, attempts,
    # holding the item's row
    item_locked: str
    # (attempts, failures, token, owner, ready_at, lease_until, key): a claim
    claim_item: str
    insert_attempt: str  # (key, attempt, owner, claimed_at)
    end_attempt: str  # (at, result, error, key, attempt)
    extend_lease: str  # (ready_at, lease_until, key)
    retry_item: str  # (failures, ready_at, last_error, key): pending again, after a wait
    end_item: str  # (at, ended_by, failures, last_error, key), if it is open
    release_item: str  # (ready_at, key): pending again, at once
    items_of_run: str  # (run_id) -> the work_items columns but spec, token
    attempts_of_run: str  # (run_id) -> item_key and the work_attempts columns
    # (spec) -> handler, `pending` or `claimed`, count: the spec's open items (metrics)
    work_counts: str

    # -- for a person to run -------------------------------------------------------------

    def version_repair(self, version: int, *, missing: bool) -> str:
        """The statement that puts `version` in the schema_version row, as a repair hint
        says it (no placeholders): an INSERT of the row if it is `missing`, else an
        UPDATE of its value."""
        raise NotImplementedError

    # -- composed from a call's conditions -----------------------------------------------

    def skip_arg(self, values: Sequence[str]) -> list[Any]:
        """The parameters of `claim_due`'s and `next_due`'s skipped runs (none for none)."""
        raise NotImplementedError

    def claim_due(self, *, skip: bool, limit: int) -> str:
        """(spec, version, now, the skipped ids' parameter if `skip`) -> the runs due first
        of a spec stored at `version` or older (a newer one is not the caller's to fire);
        claimed for the transaction where the backend holds rows (`limit` 1), else the first
        `limit` (a claim that is only a read picks one of them at random)."""
        raise NotImplementedError

    def claim_work(self) -> str:
        """(spec, now, the states' parameter as `skip_arg` makes it, version) -> (key,
        run_id, state, handler, attempts, failures, token, owner, lease_until, the item's
        trace_context, the run's trace_context, and the run's head as `head` reads it:
        spec, spec_version, revision, steps, record, status) of the item of
        one of those states of the spec's runs stored at `version` or older (a newer one is
        not the caller's to run) ready first (pending, or its lease expired by `now`):
        claimed for the transaction (PostgreSQL skips the items other workers hold)."""
        raise NotImplementedError

    def next_due(self, *, skip: bool) -> str:
        """(spec, version, the skipped ids' parameter if `skip`) -> (run_id, next_due) of the
        run due first."""
        raise NotImplementedError

    def history(self, *, event: bool, since: bool, until: bool, first: bool = False,
                limit: int | None = None) -> str:
        """(run_id, [event], [since], [until], [first index]) -> (run_id, idx, event,
        source, target, at, values, kind), in order, at most `limit`: the conditions given."""
        raise NotImplementedError

    def run_filter(self, *, spec: bool, run_id: bool, status: bool, groups: Sequence[int],
                   due_by: bool) -> str:
        """A condition on `runs r` (pages.py's `filter_args` gives its shape and its
        arguments): the spec, the run, the status, one group of states each active, an
        armed timer due by a time."""
        raise NotImplementedError

    def runs_page(self, where: str, *, by_due: bool, after: bool, limit: int) -> str:
        """(the condition's arguments, the cursor's) -> a page of `runs` rows (as
        `stored_runs`', and the last step's time), by id or by when due."""
        raise NotImplementedError

    def states_of(self, count: int) -> str:
        """(`count` run ids) -> their (run_id, state) rows."""
        raise NotImplementedError

    def status_counts_capped(self, where: str, statuses: int, cap: int | None) -> str:
        """(status, the condition's arguments, status) for each of `statuses` -> (status,
        how many runs, at most `cap`): a bounded read of an index range per status."""
        raise NotImplementedError

    def moves(self) -> str:
        """(run_id, first index) -> (idx, event, source, target, kind), in order."""
        raise NotImplementedError

    def status_counts(self, where: str) -> str:
        """(the condition's arguments) -> (status, how many runs)."""
        raise NotImplementedError

    def find(self, *, status: bool, state: bool, tagged: int) -> str:
        """([spec, status], [spec, state], [spec, *tagged states]) -> the ids, sorted, of
        the runs meeting every condition given (all of the spec's runs for none): one set
        of ids per condition, intersected, each from an index that gives them in order."""
        raise NotImplementedError

    def stored_runs(self, *, spec: bool) -> tuple[str, str, str]:
        """([spec]) -> three queries of one snapshot: the `runs` rows (run_id, spec,
        spec_version, revision, status, steps, created_at, updated_at, next_due) sorted by
        id; their (run_id, state) rows; their (run_id, last step's time) rows."""
        raise NotImplementedError

    def snapshot(self, *, by: str, limit: int | None) -> tuple[str, str, str]:
        """Three queries of one snapshot of runs, sorted by id: their heads (run_id, spec,
        spec_version, revision, status, steps, created_at, updated_at, next_due, record);
        their (run_id, state) rows; their steps (run_id, event, source, target, at, values,
        kind) by run and index. `by` "run": (run_id) for each of the three; "spec": (spec),
        (spec, last id), (spec, last id, first id, last id) at most `limit` runs; "after":
        the same with the id the batch starts after, after `spec`."""
        raise NotImplementedError
