"""The rows tools read, now `statechart_runtime.store.core.rows` (this name is kept).

`stored_record` and `stored_records` took the store first: they are its methods now, and
these call them. (`stored_runs(store, where, args)` took a condition in SQL, which only a
backend holds now: call `store.stored_runs(spec)`.)"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from statechart_runtime.errors import StoreError
from statechart_runtime.store.core.rows import (
    HistoryRow,
    Invalid,
    Stored,
    StoredRun,
    column_time,
    history_rows,
    step_dicts,
    step_values,
    stored_run,
    whole_number,
)

__all__ = ["HistoryRow", "Invalid", "Stored", "StoredRun", "column_time", "history_rows",
           "step_dicts", "step_values", "stored_record", "stored_records", "stored_run",
           "whole_number"]


def stored_record(store: Any, run_id: str) -> Stored:
    """`store.stored_record(run_id)`."""
    found: Stored = store.stored_record(run_id)
    return found


def stored_records(store: Any, spec: str, batch: int = 500
                   ) -> Iterator[tuple[str, Stored | StoreError]]:
    """`store.stored_records(spec, batch=)`."""
    found: Iterator[tuple[str, Stored | StoreError]] = store.stored_records(spec, batch=batch)
    return found
