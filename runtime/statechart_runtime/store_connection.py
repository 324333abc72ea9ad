"""The store's transactions, now in `statechart_runtime.store` (this name is kept)."""

from statechart_runtime.store.core.failures import UNREACHABLE_HINT
from statechart_runtime.store.core.statements import Statements

__all__ = ["UNREACHABLE_HINT", "Statements"]
