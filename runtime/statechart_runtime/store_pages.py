"""The store's paged views, now `statechart_runtime.store.core.pages` (this name is kept).

`runs_page`, `status_counts` and `moves` took the store first: they are its methods now, and
these call them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from statechart_runtime.store.core.pages import MAX_PAGE, Move, RunFilter

__all__ = ["MAX_PAGE", "Move", "RunFilter", "moves", "runs_page", "status_counts"]


def runs_page(store: Any, conditions: RunFilter, *, by_due: bool = False,
              after: tuple[Any, ...] | None = None, limit: int = 50) -> Any:
    """`store.runs_page(conditions, by_due=, after=, limit=)`."""
    return store.runs_page(conditions, by_due=by_due, after=after, limit=limit)


def status_counts(store: Any, conditions: RunFilter, statuses: Sequence[str] | None = None,
                  cap: int | None = None) -> Any:
    """`store.status_counts(conditions, statuses=, cap=)`."""
    return store.status_counts(conditions, statuses=statuses, cap=cap)


def moves(store: Any, run_id: str, first: int = 0) -> Any:
    """`store.moves(run_id, first=)`."""
    return store.moves(run_id, first=first)
