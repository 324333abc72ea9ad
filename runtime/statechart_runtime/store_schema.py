"""The store's own schema, now `statechart_runtime.store.core.schema` (this name is kept)."""

from statechart_runtime.store.core.schema import (
    OLDEST_VERSION,
    SCHEMA_VERSION,
    UPGRADE_HINT,
    check_read_only,
    checked_version,
    upgrade_steps,
)

__all__ = ["OLDEST_VERSION", "SCHEMA_VERSION", "UPGRADE_HINT", "check_read_only",
           "checked_version", "upgrade_steps"]
