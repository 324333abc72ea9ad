"""The run store's own schema: which version of its tables this runtime writes, the upgrade
a writable store applies when it is opened (every backend's `migrations`, in one
transaction), and the check a read-only store makes instead. `StoreConnection`
(store_connection.py) calls these when a store is opened.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from statechart_runtime.errors import ReadOnlyStore, SchemaProblem, StoreError

if TYPE_CHECKING:
    from statechart_runtime.store_connection import StoreConnection

# The version of the store's own tables this runtime writes: every backend's MIGRATIONS has
# one step per version (MIGRATIONS[v] turns version v-1 into v), so it is their length - 1.
SCHEMA_VERSION = 3
# Versions below this one were development schemas no release wrote: no step leads from them.
OLDEST_VERSION = 2
# What a read-only store says to do about a schema it would have to upgrade (the CLI words
# it as a command instead).
UPGRADE_HINT = "open it once writable (read_only=False) to upgrade it"


def schema_version(store: StoreConnection) -> int:
    """The store's schema version, -1 for a database with no store tables at all."""
    has_meta = store._x(store.sql.table_count, ("store_meta",)).fetchone()[0]
    row = store._x(store.sql.read_version).fetchone() if has_meta else None
    if row is None:
        if store._x(store.sql.table_count, ("runs",)).fetchone()[0]:
            create = "" if has_meta else f"{store.migrations[0][0]}; then "
            raise SchemaProblem(
                f"{store.where}: the store's tables are there but its schema_version row "
                f"is missing (deleted by hand?); put it back: {create}INSERT INTO "
                f"store_meta VALUES ('schema_version', '{SCHEMA_VERSION}') if the tables "
                "are this runtime's")
        return -1
    try:
        return int(row[0])
    except (TypeError, ValueError):
        raise SchemaProblem(
            f"{store.where}: the store's schema_version row holds {row[0]!r}, not a "
            f"version number (edited by hand?); set it back: UPDATE store_meta SET value "
            f"= '{SCHEMA_VERSION}' WHERE key = 'schema_version' if the tables are this "
            "runtime's") from None

def checked_version(store: StoreConnection) -> int:
    version = schema_version(store)
    if version > SCHEMA_VERSION:
        raise SchemaProblem(
            f"{store.where}: the run store's schema is version {version}, written by a "
            f"newer statechart-runtime; this one reads version {SCHEMA_VERSION}: "
            "upgrade statechart-runtime")
    if 0 < version < OLDEST_VERSION:  # 1: a development version that kept whole records
        raise SchemaProblem(
            f"{store.where}: run store schema version {version} was written by a "
            "development version of statechart-runtime and is not read by this one: "
            "create a new store")
    return version

def upgrade_schema(store: StoreConnection) -> None:
    """Bring the schema to SCHEMA_VERSION, every missing step in this one transaction
    (another store opening at the same time waits, then finds it done)."""
    if store.sql.lock_schema:
        store._x(store.sql.lock_schema).fetchone()
    version = store._found_version = checked_version(store)
    if version == SCHEMA_VERSION:
        return
    for step in store.migrations[version + 1:]:
        for statement in step:
            store._x(statement)
    store._x(store.sql.write_version, (str(SCHEMA_VERSION),))

def check_schema(store: StoreConnection) -> None:
    """A read-only store: the schema must be this runtime's already (nothing is created
    nor upgraded)."""
    version = checked_version(store)
    if version < 0:
        raise StoreError(f"{store.where} is not a run store (it has no store tables): "
                         "opened writable, a store creates its tables")
    if version < SCHEMA_VERSION:
        raise ReadOnlyStore(
            f"{store.where}: the store's schema is version {version} and must be upgraded "
            f"to {SCHEMA_VERSION} before this runtime reads it; {UPGRADE_HINT}")

