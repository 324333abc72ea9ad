"""The names the store's modules had before the store was a package (statechart_runtime.
store_*, and machine's) still import from those paths: a name the new home has is the same
object there; the functions that took the store first call its methods, answering what the
methods answer."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import pytest

from statechart_runtime.store import RunFilter, open_store

# Every public name of those modules before the move (their definitions and __all__).
OLD_NAMES = {
    "store_checks": ["REPAIR_HINT", "head_disagreement", "row_disagreements", "state_set",
                     "utc_text"],
    "store_connection": ["Statements", "StoreConnection", "T", "UNREACHABLE_HINT"],
    "store_pages": ["MAX_PAGE", "Move", "RunFilter", "moves", "runs_page", "status_counts"],
    "store_postgres": ["DUE_CHANNEL", "MIGRATIONS", "PostgresStore", "SQL", "open_url"],
    "store_queries": ["find", "find_sql", "history", "next_due"],
    # stored_runs(store, where, args) took a condition in SQL: only a backend holds SQL now.
    "store_read": ["HistoryRow", "Invalid", "Stored", "StoredRun", "column_time",
                   "history_rows", "step_dicts", "step_values", "stored_record",
                   "stored_records", "stored_run", "whole_number"],
    "store_restore": ["RunT", "full_run", "head_data", "head_run"],
    # check_schema, schema_version, upgrade_schema ran inside the opening transaction on the
    # store's own connection: opening a store does it now.
    "store_schema": ["OLDEST_VERSION", "SCHEMA_VERSION", "UPGRADE_HINT", "checked_version"],
    "store_sqlite": ["MIGRATIONS", "SQL", "SqliteStore", "open_url"],
    "store_versions": ["chart_order", "current_states", "matches", "same_key_values",
                       "state_name", "status_name"],
    "store_writes": ["Computed", "MARK_ATTR", "Mark", "Writes", "encode", "encode_sorted",
                     "json_value", "mark_of", "next_deadline", "saved", "unstorable",
                     "writes"],
    "machine": ["DirectGuards", "Machine", "RunHook", "direct_guards", "number_states"],
    "store": ["RunT"],
}
# Where each lives now.
HOMES = {
    "store_checks": ["store.core.checks"], "store_connection": ["store", "store._sync.run_store",
                                                                "store.core.failures"],
    "store_pages": ["store.core.pages"], "store_postgres": ["store.postgres"],
    "store_queries": [], "store_read": ["store.core.rows"],
    "store_restore": ["store.core.restore"], "store_schema": ["store.core.schema"],
    "store_sqlite": ["store.sqlite", "store.sqlite._sync"], "store_versions": ["store.core.versions"],
    "store_writes": ["store.core.writes"], "machine": ["psm.machine"],
    "store": ["store._sync.run_store"],
}


def _module(name: str) -> ModuleType:
    return importlib.import_module(f"statechart_runtime.{name}")


@pytest.mark.parametrize("old", sorted(OLD_NAMES))
def test_every_name_of_an_old_module_imports(old: str) -> None:
    module = _module(old)
    missing = [name for name in OLD_NAMES[old] if not hasattr(module, name)]
    assert missing == []
    for home in map(_module, HOMES[old]):
        for name in OLD_NAMES[old]:
            if hasattr(home, name):
                assert getattr(module, name) is getattr(home, name), (old, name, home)


def test_the_store_connection_is_the_store() -> None:
    from statechart_runtime.store import RunStore
    from statechart_runtime.store_connection import StoreConnection
    from statechart_runtime.store_sqlite import SqliteStore

    assert StoreConnection is RunStore and issubclass(SqliteStore, StoreConnection)
    from statechart_runtime.machine import RunHook
    from statechart_runtime.psm.machine import RunHooks

    assert RunHook is RunHooks


def test_the_functions_that_took_the_store_answer_as_its_methods(ticket: ModuleType,
                                                                 tmp_path: Path) -> None:
    from statechart_runtime import store_pages, store_queries, store_read

    with open_store(tmp_path / "runs.db") as store:
        store.create(run := ticket.Ticket())
        run_id = run.record.runId
        store.fire(ticket.Ticket, run_id, "approve", note="ok")
        assert store_pages.runs_page(store, RunFilter()) == store.runs_page(RunFilter())
        assert store_pages.status_counts(store, RunFilter()) == {"approved": 1}
        assert store_pages.moves(store, run_id) == store.moves(run_id) != []
        assert store_queries.history(store, run_id) == store.history(run_id) != []
        assert store_queries.find(store, ticket.Ticket, status="approved") == [run_id]
        assert store_queries.find_sql(store, ticket.Ticket) == store.find_sql(ticket.Ticket)
        assert store_queries.next_due(store, ticket.Ticket) is None
        assert store_read.stored_record(store, run_id) == store.stored_record(run_id)
        assert list(store_read.stored_records(store, "ticket", 1)) == list(
            store.stored_records("ticket"))
