"""The run store's paged views, for consoles and dashboards (docs/runs.md, "Pages"): which
runs a page or a count takes (`RunFilter`) and the arguments of their statements (the SQL is
the backend's: `Statements.run_filter`, `runs_page`, `status_counts`). Conditions are in the
names the runs are stored in; every value reaches SQL as a parameter."""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

from statechart_runtime.store.core.checks import utc_text

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


ANY_RUN = RunFilter()
# A step as a walk over the chart needs it (`moves`): (index, event, source, target, kind).
Move = tuple[int, str, str, str, str | None]


def filter_args(conditions: RunFilter, *, with_status: bool = True) -> tuple[dict[str, Any],
                                                                              list[Any]]:
    """The shape of `conditions` (the keyword arguments of `Statements.run_filter`) and the
    arguments of the condition it composes."""
    args: list[Any] = []
    if conditions.spec is not None:
        args.append(conditions.spec)
    if conditions.run_id is not None:
        args.append(conditions.run_id)
    status = with_status and conditions.status is not None
    if status:
        args.append(conditions.status)
    if any(not group for group in conditions.active):
        args = []  # nothing matches: the condition has no parameter
    else:
        for group in conditions.active:
            args += list(group)
        if conditions.due_by is not None:
            args.append(utc_text(conditions.due_by) if conditions.due_by.year < 9999
                        else "9999-12-31T23:59:59.999999Z")
    shape = {"spec": conditions.spec is not None, "run_id": conditions.run_id is not None,
             "status": status, "groups": [len(group) for group in conditions.active],
             "due_by": conditions.due_by is not None}
    if any(not group for group in conditions.active):
        shape = {"spec": False, "run_id": False, "status": False, "groups": [0],
                 "due_by": False}
    return shape, args


def after_args(by_due: bool, after: tuple[Any, ...] | None) -> list[Any]:
    """The arguments of a page's cursor (`after`: the last run of the previous page)."""
    if after is None:
        return []
    if by_due:
        due = utc_text(after[0])
        return [due, due, after[1]]
    return [after[0]]


def checked_limit(limit: int) -> int:
    if not 1 <= limit <= MAX_PAGE:
        raise ValueError(f"limit must be 1 to {MAX_PAGE}, got {limit}")
    return limit
