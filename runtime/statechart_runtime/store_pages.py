"""The store's paged views, now `statechart_runtime.store.core.pages` (this name is kept)."""

from statechart_runtime.store.core.pages import MAX_PAGE, Move, RunFilter

__all__ = ["MAX_PAGE", "Move", "RunFilter"]
