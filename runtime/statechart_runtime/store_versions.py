"""Runs of other spec versions, now `statechart_runtime.store.core.versions` (this name is kept)."""

from statechart_runtime.store.core.versions import (
    chart_order,
    current_states,
    found,
    matches,
    same_key_values,
    state_name,
    status_name,
)

__all__ = ["chart_order", "current_states", "found", "matches", "same_key_values", "state_name",
           "status_name"]
