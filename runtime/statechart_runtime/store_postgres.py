"""The PostgreSQL backend, now `statechart_runtime.store.postgres` (this name is kept)."""

from statechart_runtime.store.postgres import DUE_CHANNEL, MIGRATIONS, SQL, failure, open_url
from statechart_runtime.store.postgres._sync import PostgresStore

__all__ = ["DUE_CHANNEL", "MIGRATIONS", "SQL", "PostgresStore", "failure", "open_url"]
