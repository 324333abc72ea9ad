"""The SQLite backend, now `statechart_runtime.store.sqlite` (this name is kept)."""

from statechart_runtime.store.sqlite import MIGRATIONS, SQL, failure, open_url
from statechart_runtime.store.sqlite._sync import SqliteStore

__all__ = ["MIGRATIONS", "SQL", "SqliteStore", "failure", "open_url"]
