"""What users would pick instead of the run store, for `bench_store.py --parts peers`: one
durable step of LangGraph (a graph `invoke` with its `SqliteSaver` / `PostgresSaver`) and of
DBOS (a `@DBOS.step` inside a workflow), on the same database as the store, with the same
durability (SQLite WAL with `synchronous=FULL`; PostgreSQL with fsync and
`synchronous_commit` on). Each keeps the same record fields the store's run keeps.

LangGraph runs at its default durability (`"async"`: a checkpoint per superstep, written
while the next one runs) and at `durability="exit"` (one checkpoint when `invoke` returns:
still durable once it has returned, which is what `fire` promises). DBOS's SQLite database is
put in WAL mode before DBOS opens it (DBOS sets no pragma of its own: with SQLite's default
rollback journal it fsyncs about four times a step); SQLite's default `synchronous` in WAL
mode is FULL, which `sqlite_settings` reads back after the run.

These libraries are not dependencies of the project: `pip install -e '.[bench]'`.
"""

from __future__ import annotations

import sqlite3
import statistics
import time
import uuid
from typing import Any, TypedDict


def graph(fields: dict[str, Any], checkpointer: Any) -> Any:
    """A one-node graph whose state holds `fields` (the run's record without its history):
    each `invoke` applies one event, as `fire` does (the status and the time change)."""
    from langgraph.graph import END, START, StateGraph

    state = TypedDict("RunState", {**dict.fromkeys(fields, Any), "event": Any},  # type: ignore[misc]
                      total=False)

    def step(values: dict[str, Any]) -> dict[str, Any]:
        return {"status": "running", "event": values.get("event"),
                "lastTransitionAt": time.strftime("%Y-%m-%dT%H:%M:%SZ")}

    graph = StateGraph(state)
    graph.add_node("step", step)
    graph.add_edge(START, "step")
    graph.add_edge("step", END)
    return graph.compile(checkpointer=checkpointer)


def _invokes(graph: Any, fields: dict[str, Any], events: int, durability: str | None
             ) -> float:
    """The p50 (ms) of one `invoke` on a thread (a run) whose state holds `fields`, at
    `durability` (None: LangGraph's default)."""
    config = {"configurable": {"thread_id": uuid.uuid4().hex}}
    options = {} if durability is None else {"durability": durability}
    graph.invoke(fields, config, **options)
    latencies = []
    for n in range(events):
        started = time.perf_counter()
        graph.invoke({"event": ("call_tool", "tool_result")[n % 2]}, config, **options)
        latencies.append(time.perf_counter() - started)
    return statistics.median(latencies) * 1000


def langgraph_sqlite(path: str, fields: dict[str, Any], events: int,
                     durability: str | None = None) -> float:
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(path, check_same_thread=False)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    try:
        return _invokes(graph(fields, SqliteSaver(conn)), fields, events, durability)
    finally:
        conn.close()


def langgraph_postgres(url: str, fields: dict[str, Any], events: int,
                       durability: str | None = None) -> float:
    from langgraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(url) as saver:
        return _invokes(graph(fields, saver), fields, events, durability)


def langgraph_postgres_setup(url: str) -> None:
    """LangGraph's tables, once before the rounds (its migrations can meet another session's
    DDL on a shared server: tried again after a deadlock)."""
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver

    for attempt in range(5):
        try:
            with PostgresSaver.from_conn_string(url) as saver:
                saver.setup()
            return
        except psycopg.errors.DeadlockDetected:
            if attempt == 4:
                raise
            time.sleep(1)


def wal_database(path: str) -> str:
    """A new SQLite database file at `path` in WAL mode (persistent in the file: every
    connection DBOS opens later uses it); its SQLAlchemy URL."""
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA journal_mode = WAL").fetchone()[0] == "wal"
    finally:
        conn.close()
    return f"sqlite:///{path}"


def sqlite_settings(path: str) -> str:
    """The journal mode and a new connection's default `synchronous`, as SQLite reports them
    (2 is FULL)."""
    conn = sqlite3.connect(path)
    try:
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
        sync = conn.execute("PRAGMA synchronous").fetchone()[0]
    finally:
        conn.close()
    return f"journal_mode={mode}, synchronous={'FULL' if sync == 2 else sync}"


def dbos_steps(system_database_url: str, fields: dict[str, Any], events: int) -> float:
    """The p50 (ms) of one `@DBOS.step` (its output checkpointed) inside one workflow of
    `events` steps, each returning the run's fields with the event applied. On SQLite, give
    it a `wal_database` (else SQLite's rollback journal); on PostgreSQL its tables go in a
    schema of their own."""
    from dbos import DBOS

    name = f"bench_{uuid.uuid4().hex[:8]}"
    DBOS(config={"name": name, "system_database_url": system_database_url,
                 "dbos_system_schema": name, "log_level": "WARNING"})
    workflow = _dbos_workflow()
    DBOS.launch()
    try:
        latencies: list[float] = workflow(fields, events)
    finally:
        DBOS.destroy()
    return statistics.median(latencies) * 1000


_DBOS_WORKFLOW: list[Any] = []  # DBOS registers a function once per process


def _dbos_workflow() -> Any:
    if _DBOS_WORKFLOW:
        return _DBOS_WORKFLOW[0]
    from dbos import DBOS

    @DBOS.step()
    def apply(values: dict[str, Any], event: str) -> dict[str, Any]:
        return {**values, "status": "running", "event": event}

    @DBOS.workflow()
    def steps(values: dict[str, Any], count: int) -> list[float]:
        latencies = []
        for n in range(count):
            started = time.perf_counter()
            values = apply(values, ("call_tool", "tool_result")[n % 2])
            latencies.append(time.perf_counter() - started)
        return latencies

    _DBOS_WORKFLOW.append(steps)
    return steps
