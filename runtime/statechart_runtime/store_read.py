"""The rows tools read, now `statechart_runtime.store.core.rows` (this name is kept)."""

from statechart_runtime.store.core.rows import (
    HistoryRow,
    StoredRun,
    column_time,
    history_rows,
    step_dicts,
    step_values,
    whole_number,
)

__all__ = ["HistoryRow", "StoredRun", "column_time", "history_rows", "step_dicts", "step_values",
           "whole_number"]
