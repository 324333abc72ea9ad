"""A run restored from its rows, now `statechart_runtime.store.core.restore` (this name is kept)."""

from statechart_runtime.store.core.restore import (
    RunT,
    full_run,
    head_data,
    head_run,
    needs_history,
    stored_version,
)

__all__ = ["RunT", "full_run", "head_data", "head_run", "needs_history", "stored_version"]
