"""The store's queries by a spec's names (this name is kept): `history`, `find`, `find_sql`
and `next_due` took the store first; they are its methods now (their SQL is each backend's,
statechart_runtime.store.sqlite and .postgres), and these call them."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

__all__ = ["find", "find_sql", "history", "next_due"]


def history(store: Any, run_id: str, *, event: str | None = None,
            since: dt.datetime | None = None, until: dt.datetime | None = None,
            first: int = 0, limit: int | None = None) -> Any:
    """`store.history(run_id, event=, since=, until=, first=, limit=)`."""
    return store.history(run_id, event=event, since=since, until=until, first=first,
                         limit=limit)


def find(store: Any, run_class: type[Any], *, status: Any = None, state: Any = None,
         tag: str | None = None) -> Any:
    """`store.find(run_class, status=, state=, tag=)`."""
    return store.find(run_class, status=status, state=state, tag=tag)


def find_sql(store: Any, run_class: type[Any], *, status: Any = None, state: Any = None,
             tag: str | None = None) -> Any:
    """`store.find_sql(run_class, status=, state=, tag=)`."""
    return store.find_sql(run_class, status=status, state=state, tag=tag)


def next_due(store: Any, run_class: type[Any], *, skip: Sequence[str] = ()) -> Any:
    """`store.next_due(run_class, skip=)`."""
    return store.next_due(run_class, skip=skip)
