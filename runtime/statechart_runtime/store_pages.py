"""The run store's paged views, for consoles and dashboards (docs/runs.md, "Pages"): a page
of runs by conditions on the store's columns (`runs_page`, keyset pagination), the number of
runs by status (`status_counts`), and a run's head alone (`head`: no history read, O(1) in
its length). `RunStore` (store.py) keeps the methods; they call these with the store itself.

Conditions are in the names the runs are stored in (a run stored at an older spec version
keeps that version's names until it is written again); every value reaches SQL as a
parameter.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Sequence
from typing import Any

from statechart_runtime import store_read
from statechart_runtime.store_checks import utc_text
from statechart_runtime.store_read import StoredRun

# The most runs one page holds.
MAX_PAGE = 500


@dataclasses.dataclass(frozen=True, slots=True)
class RunFilter:
    """Which runs a page or a count takes; every condition given must hold. `spec`: the
    spec's name; `status`: the status column; `active`: groups of states, each group
    satisfied when one of its states is active (a state: a group of one; a tag: the group of
    the states it is on); `due_by`: an armed timer due at or before it (`datetime.max` with
    a time zone: any armed timer); `run_id`: that run only."""

    spec: str | None = None
    status: str | None = None
    active: tuple[tuple[str, ...], ...] = ()
    due_by: dt.datetime | None = None
    run_id: str | None = None


def _where(store: Any, conditions: RunFilter, *, with_status: bool = True
           ) -> tuple[str, list[Any]]:
    p = store.sql.param
    parts = ["1 = 1"]
    args: list[Any] = []
    if conditions.spec is not None:
        parts.append(f"r.spec = {p}")
        args.append(conditions.spec)
    if conditions.run_id is not None:
        parts.append(f"r.run_id = {p}")
        args.append(conditions.run_id)
    if with_status and conditions.status is not None:
        parts.append(f"r.status = {p}")
        args.append(conditions.status)
    for group in conditions.active:
        if not group:
            return "1 = 0", []
        marks = ", ".join([p] * len(group))
        parts.append(f"EXISTS (SELECT 1 FROM run_states s WHERE s.run_id = r.run_id AND "
                     f"s.state IN ({marks}))")
        args += list(group)
    if conditions.due_by is not None:
        parts.append(f"r.next_due IS NOT NULL AND r.next_due <= {p}")
        args.append(utc_text(conditions.due_by) if conditions.due_by.year < 9999
                    else "9999-12-31T23:59:59.999999Z")
    return " AND ".join(parts), args


def runs_page(store: Any, conditions: RunFilter, *, by_due: bool, after: tuple[Any, ...] | None,
              limit: int) -> list[StoredRun]:
    """`RunStore.runs_page`: at most `limit` runs matching `conditions`, after the cursor."""
    if not 1 <= limit <= MAX_PAGE:
        raise ValueError(f"limit must be 1 to {MAX_PAGE}, got {limit}")
    p = store.sql.param
    where, args = _where(store, conditions)
    if by_due:
        where += " AND r.next_due IS NOT NULL"
        order = "r.next_due, r.run_id"
        if after is not None:
            where += f" AND (r.next_due > {p} OR (r.next_due = {p} AND r.run_id > {p}))"
            due = utc_text(after[0])
            args += [due, due, after[1]]
    else:
        order = "r.run_id"
        if after is not None:
            where += f" AND r.run_id > {p}"
            args.append(after[0])
    sql = ("SELECT r.run_id, r.spec, r.spec_version, r.revision, r.status, r.steps, "
           "r.created_at, r.updated_at, r.next_due, (SELECT h.at FROM history h WHERE "
           "h.run_id = r.run_id AND h.idx = r.steps - 1) "
           f"FROM runs r WHERE {where} ORDER BY {order} LIMIT {int(limit)}")

    def work() -> tuple[list[Any], list[Any]]:  # one snapshot
        rows = store._x(sql, args).fetchall()
        if not rows:
            return rows, []
        ids = [row[0] for row in rows]
        states = store._x("SELECT run_id, state FROM run_states WHERE run_id IN ("
                          + ", ".join([p] * len(ids)) + ") ORDER BY run_id, state",
                          ids).fetchall()
        return rows, states

    rows, state_rows = store._read(work)
    states: dict[str, list[str]] = {}
    for run_id, state in state_rows:
        states.setdefault(run_id, []).append(state)
    return [store_read.stored_run(row[:9], tuple(states.get(row[0], ())), row[9])
            for row in rows]


def status_counts(store: Any, conditions: RunFilter, statuses: Sequence[str] | None = None,
                  cap: int | None = None) -> dict[str, int]:
    """`RunStore.status_counts`: how many runs matching `conditions` (but their status)
    report each status; with `statuses`, only those, each counted up to `cap` (a bounded
    read of an index range per status, whatever the number of runs)."""
    where, args = _where(store, conditions, with_status=False)
    if statuses is None:
        rows = store._query(f"SELECT r.status, COUNT(*) FROM runs r WHERE {where} "
                            "GROUP BY r.status ORDER BY r.status", args)
        return {status: int(count) for status, count in rows}
    if not statuses:
        return {}
    p = store.sql.param
    limit = "" if cap is None else f" LIMIT {int(cap)}"
    parts, all_args = [], []
    for status in statuses:
        parts.append(f"SELECT {p}, COUNT(*) FROM (SELECT 1 FROM runs r WHERE {where} AND "
                     f"r.status = {p}{limit}) AS counted")
        all_args += [status, *args, status]
    rows = store._query(" UNION ALL ".join(parts), all_args)
    return {status: int(count) for status, count in rows if count}


# A step as a walk over the chart needs it: (index, event, source, target, kind).
Move = tuple[int, str, str, str, str | None]


def moves(store: Any, run_id: str, first: int) -> list[Move]:
    """`RunStore.moves`: the run's steps from index `first`, as moves, nothing parsed."""
    p = store.sql.param
    rows = store._query(f"SELECT idx, event, source, target, kind FROM history WHERE "
                        f"run_id = {p} AND idx >= {p} ORDER BY idx", [run_id, int(first)])
    return [(int(i), e, s, t, k or None) for i, e, s, t, k in rows]
