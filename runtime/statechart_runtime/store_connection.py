"""The store's transactions, now in `statechart_runtime.store` (this name is kept).

`StoreConnection` was the synchronous store's base class, holding its connection and its
transactions: the synchronous `RunStore` is that class now (every store is one)."""

from statechart_runtime.store._sync.run_store import RunStore as StoreConnection
from statechart_runtime.store._sync.transactions import T
from statechart_runtime.store.core.failures import UNREACHABLE_HINT
from statechart_runtime.store.core.statements import Statements

__all__ = ["UNREACHABLE_HINT", "Statements", "StoreConnection", "T"]
