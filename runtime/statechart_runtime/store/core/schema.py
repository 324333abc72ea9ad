"""The run store's own schema: which version of its tables this runtime writes, the upgrade
a writable store applies when it is opened (every backend's `migrations`, in one
transaction), and the check a read-only store makes instead: decisions from what the store
read, no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

from statechart_runtime.errors import ReadOnlyStore, SchemaProblem, StoreError

# The version of the store's own tables this runtime writes: every backend's MIGRATIONS has
# one step per version (MIGRATIONS[v] turns version v-1 into v), so it is their length - 1.
SCHEMA_VERSION = 7
# Versions below this one were development schemas no release wrote: no step leads from them.
OLDEST_VERSION = 2
# What a read-only store says to do about a schema it would have to upgrade (the CLI words
# it as a command instead).
UPGRADE_HINT = "open it once writable (read_only=False) to upgrade it"


def missing_version_row(where: str, repair: Sequence[str]) -> SchemaProblem:
    """The error of a store whose tables are there without their schema_version row;
    `repair`: the backend's statements that put it back (`Statements.version_repair`)."""
    return SchemaProblem(
        f"{where}: the store's tables are there but its schema_version row is missing "
        f"(deleted by hand?); put it back: {'; then '.join(repair)} if the tables are this "
        "runtime's")


def parsed_version(where: str, value: object, repair: str) -> int:
    """The schema_version row's value as a number (SchemaProblem if it is not one, saying
    to run `repair`, the backend's statement that sets it back)."""
    try:
        return int(value)  # type: ignore[call-overload, no-any-return]
    except (TypeError, ValueError):
        raise SchemaProblem(
            f"{where}: the store's schema_version row holds {value!r}, not a "
            f"version number (edited by hand?); set it back: {repair} if the tables are "
            "this runtime's") from None


def checked_version(where: str, version: int) -> int:
    """`version` (-1: no store tables) if this runtime reads it; SchemaProblem if not."""
    if version > SCHEMA_VERSION:
        raise SchemaProblem(
            f"{where}: the run store's schema is version {version}, written by a "
            f"newer statechart-runtime; this one reads version {SCHEMA_VERSION}: "
            "upgrade statechart-runtime")
    if 0 < version < OLDEST_VERSION:  # 1: a development version that kept whole records
        raise SchemaProblem(
            f"{where}: run store schema version {version} was written by a "
            "development version of statechart-runtime and is not read by this one: "
            "create a new store")
    return version


def upgrade_steps(migrations: Sequence[Sequence[str]], version: int) -> list[str]:
    """The statements that bring a store at `version` (-1: none) to SCHEMA_VERSION."""
    return [statement for step in migrations[version + 1:] for statement in step]


def check_read_only(where: str, version: int) -> None:
    """A read-only store: the schema must be this runtime's already (nothing is created
    nor upgraded)."""
    if version < 0:
        raise StoreError(f"{where} is not a run store (it has no store tables): "
                         "opened writable, a store creates its tables")
    if version < SCHEMA_VERSION:
        raise ReadOnlyStore(
            f"{where}: the store's schema is version {version} and must be upgraded "
            f"to {SCHEMA_VERSION} before this runtime reads it; {UPGRADE_HINT}")


def failed_upgrade(where: str, found: int, exc: BaseException) -> SchemaProblem:
    """The error of a driver error while a migration was applied (rolled back)."""
    what = ("creating the store's tables" if found < 0 else
            f"upgrading the store's schema from version {found} to {SCHEMA_VERSION}")
    return SchemaProblem(f"{where}: {what} failed, and was rolled back (the store is "
                         f"unchanged): {exc}")
