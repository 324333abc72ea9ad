"""The store's checks, now `statechart_runtime.store.core.checks` (this name is kept)."""

from statechart_runtime.store.core.checks import (
    REPAIR_HINT,
    head_disagreement,
    row_disagreements,
    state_set,
    utc_text,
)

__all__ = ["REPAIR_HINT", "head_disagreement", "row_disagreements", "state_set", "utc_text"]
