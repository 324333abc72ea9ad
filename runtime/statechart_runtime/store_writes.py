"""A run encoded into its statements, now `statechart_runtime.store.core.writes` (this name is
kept)."""

from statechart_runtime.store.core.writes import (
    MARK_ATTR,
    Computed,
    Fired,
    Mark,
    Writes,
    encode,
    encode_sorted,
    json_value,
    mark_of,
    next_deadline,
    saved,
    unstorable,
    writes,
)

__all__ = ["MARK_ATTR", "Computed", "Fired", "Mark", "Writes", "encode", "encode_sorted",
           "json_value", "mark_of", "next_deadline", "saved", "unstorable", "writes"]
