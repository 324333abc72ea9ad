"""Work items in the run store, with no database: what a claim, a heartbeat, an outcome and a
failure decide, and the rows a run's steps write for the items they start and end.

An item (`work_items`) belongs to one entry of a state with `work:` (statechart_runtime.chart
.work): the step that enters the state inserts it, in the step's transaction; any step that
leaves the state ends it, in that step's transaction. Its `ready_at` says when a worker may
claim it: a pending item from when it was enqueued (or from the end of its retry backoff), a
claimed one from when its lease expires. A claim raises the item's fencing `token`; every
later call of that claim (heartbeat, outcome, failure, release) names its token, and is
refused (LeaseLost) once another claim has raised it, or once the lease has expired: a worker
presumed dead never applies a second outcome. Each claim is an attempt (`work_attempts`),
kept with how it ended.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Mapping
from typing import Any

from statechart_runtime.chart.work import Work, WorkTable, item_key
from statechart_runtime.errors import LeaseLost, OutcomeNotAllowed, WorkEnded
from statechart_runtime.store.core.checks import utc_text
from statechart_runtime.store.core.rows import column_time

# How an attempt ended (`work_attempts.result`; None while it runs).
APPLIED, FAILED, LEASE_LOST, RELEASED, LEFT = (
    "applied", "failed", "lease lost", "released", "state left")
# How an item ended (`work_items.ended_by`): the outcome event applied, or one of these.
ENDED_FAILED = "failed"  # its attempts were used up and its state has no error event
LEFT_BY = "left by "  # + the event whose step left the state


@dataclasses.dataclass(frozen=True, slots=True)
class WorkClaim:
    """A work item claimed by a worker: the item (`key`, stable across attempts: pass it to
    the systems the handler calls, so that they deduplicate), its run and state, the handler
    to run, this claim's attempt (1 for the first) and fencing `token`, who holds it and
    until when. `exhausted`: the item's earlier lease was lost and its attempts are used up:
    the worker does not run the handler, it ends the attempt with `fail_work`. `record`: the
    run's record as the claim read it (None if it could not be read then: `store.head`
    says why)."""

    key: str
    run_id: str
    state: str
    handler: str
    attempt: int
    token: int
    owner: str
    lease_until: dt.datetime
    exhausted: bool = False
    record: Any = dataclasses.field(default=None, compare=False, repr=False)
    # The trace context of the step that enqueued the item (a tracing listener's; None
    # without one), read with it: its observations link to it.
    origin_context: str | None = dataclasses.field(default=None, compare=False, repr=False)


@dataclasses.dataclass(frozen=True, slots=True)
class WorkAttempt:
    """One claim of an item: its number, who held it, when it was claimed and ended, and
    how (`result`: applied, failed, lease lost, released, state left; None: running)."""

    attempt: int
    owner: str
    claimed_at: dt.datetime
    ended_at: dt.datetime | None
    result: str | None
    error: str | None


@dataclasses.dataclass(frozen=True, slots=True)
class WorkItem:
    """A run's work item as stored (`store.work_items(run_id)`): its key, state and handler; its
    status (`pending`: waiting for a claim, from `ready_at`; `claimed`: held until
    `lease_until`; `ended`: how in `ended_by`); its attempts so far, failed ones, the last
    error, and each attempt."""

    key: str
    run_id: str
    state: str
    handler: str
    status: str
    attempts: int
    failures: int
    owner: str | None
    ready_at: dt.datetime | None
    lease_until: dt.datetime | None
    last_error: str | None
    created_at: dt.datetime
    ended_at: dt.datetime | None
    ended_by: str | None
    history: tuple[WorkAttempt, ...] = ()


def log_statements(sql: Any, run: Any, log: list[Any], *, spec: str, first_step: int,
                   known: int, contexts: Mapping[str, str] | None = None
                   ) -> list[tuple[str, list[tuple[Any, ...]]]]:
    """The statements that write a run's work log (`run.work_log`: what its new steps did
    to its items), in order: each entry's ended items, then its started ones. A history
    index of the run's record is the stored one plus `first_step - known` (the record may
    hold only the steps since it was loaded). `contexts`: the trace context of the step
    that entered each state (writes.writes'), kept with the items it enqueued."""
    run_id = run.record.runId
    statements: list[tuple[str, list[tuple[Any, ...]]]] = []
    for entry in log:
        at = utc_text(entry.at)
        if entry.change.ended:
            statements.append((sql.end_items, [
                (at, LEFT_BY + entry.event, run_id, work.state)
                for work in entry.change.ended]))
            statements.append((sql.end_attempts_of_state, [
                (at, LEFT, run_id, work.state) for work in entry.change.ended]))
        if entry.change.started:
            index = None if entry.index is None else entry.index + first_step - known
            statements.append((sql.insert_item, [
                (item_key(run_id, work.state, index), run_id, spec, work.state,
                 work.handler, at, at,
                 None if contexts is None else contexts.get(work.state))
                for work in entry.change.started]))
    return statements


def work_of_state(table: WorkTable, state: str, key: str) -> Work:
    """The work of an item's state in the caller's spec version (WorkEnded if that version's
    state has no work: the item belongs to an older version's state, ended by an upgrade)."""
    work = table.get(state)
    if work is None:
        raise WorkEnded(key, f"its state `{state}` has no work in this spec version")
    return work


def check_outcome(work: Work, key: str, event: str) -> None:
    """OutcomeNotAllowed unless `event` is one of the work's outcomes or its error event."""
    if not work.accepts(event):
        allowed = ", ".join(f"`{e}`" for e in (*work.outcomes, *filter(None, [work.error])))
        raise OutcomeNotAllowed(
            f"work item {key!r}: `{event}` is not an outcome of `{work.state}`'s work "
            f"(allowed: {allowed}); nothing was applied and the claim still holds the item")


def check_held(claim: WorkClaim, row: Any, at: dt.datetime) -> None:
    """Refuse a call of `claim` unless it still holds the item, whose row (token, owner,
    lease_until, ended_at, ended_by) was read in the call's transaction: WorkEnded if the
    item ended, LeaseLost if another claim raised its token, it was released, or its lease
    expired before `at`."""
    if row is None:
        raise WorkEnded(claim.key, "no such item is stored (its run was removed)")
    token, owner, lease_until, ended_at, ended_by = row
    if ended_at is not None:
        raise WorkEnded(claim.key, f"the item ended ({ended_by})")
    if token != claim.token:
        raise LeaseLost(claim.key, f"its lease was lost: attempt {claim.attempt}'s token "
                                   f"{claim.token} was superseded by token {token}")
    if owner is None or lease_until is None:
        raise LeaseLost(claim.key, "the claim was released")
    if owner != claim.owner:  # a claim object of another worker's, or edited by hand
        raise LeaseLost(claim.key, f"the item is held by {owner!r}, not {claim.owner!r}")
    until = column_time(claim.run_id, "work_items.lease_until", lease_until)
    if until < at:
        raise LeaseLost(claim.key, f"its lease expired at {utc_text(until)}, before "
                                   f"{utc_text(at)}")


@dataclasses.dataclass(frozen=True, slots=True)
class Failure:
    """What `fail_work` did: the time the item is claimable again (None: its attempts are
    used up and it ended), the error event fired on the run then (None: the work has none,
    or the run refused it), and the run's refusal of it."""

    retry_at: dt.datetime | None
    fired: Any
    refused: Exception | None


def _time(run_id: str, column: str, text: Any) -> dt.datetime | None:
    return None if text is None else column_time(run_id, column, text)


def items_of(items: list[Any], attempts: list[Any]) -> list[WorkItem]:
    """A run's work items from their rows (`items_of_run`, `attempts_of_run`)."""
    by_key: dict[str, list[WorkAttempt]] = {}
    for key, attempt, owner, claimed_at, ended_at, result, error in attempts:
        run_id = key.partition("/")[0]
        by_key.setdefault(key, []).append(WorkAttempt(
            attempt, owner, column_time(run_id, "work_attempts.claimed_at", claimed_at),
            _time(run_id, "work_attempts.ended_at", ended_at), result, error))
    found = []
    for (key, run_id, state, handler, tries, failures, owner, ready_at, lease_until,
         last_error, created_at, ended_at, ended_by) in items:
        status = "ended" if ended_at is not None else "claimed" if owner is not None \
            else "pending"
        found.append(WorkItem(
            key, run_id, state, handler, status, tries, failures, owner,
            _time(run_id, "work_items.ready_at", ready_at),
            _time(run_id, "work_items.lease_until", lease_until), last_error,
            column_time(run_id, "work_items.created_at", created_at),
            _time(run_id, "work_items.ended_at", ended_at), ended_by,
            tuple(by_key.get(key, ()))))
    return found
