"""What users would pick instead of the run store, for `bench_store.py --parts peers`: one
durable step of LangGraph (a graph `invoke` with its `SqliteSaver` / `PostgresSaver`) and of
DBOS (a `@DBOS.step` inside a workflow), on the same database as the store, with the same
durability (SQLite WAL with `synchronous=FULL`; PostgreSQL with fsync and
`synchronous_commit` on). Each keeps the same record fields the store's run keeps.

These libraries are not dependencies of the project: `pip install -e '.[bench]'`.
"""

from __future__ import annotations

import sqlite3
import statistics
import time
import uuid
from typing import Any, TypedDict


def _graph(fields: dict[str, Any], checkpointer: Any) -> Any:
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


def _invokes(graph: Any, fields: dict[str, Any], events: int) -> float:
    """The p50 (ms) of one `invoke` on a thread (a run) whose state holds `fields`."""
    config = {"configurable": {"thread_id": uuid.uuid4().hex}}
    graph.invoke(fields, config)
    latencies = []
    for n in range(events):
        started = time.perf_counter()
        graph.invoke({"event": ("call_tool", "tool_result")[n % 2]}, config)
        latencies.append(time.perf_counter() - started)
    return statistics.median(latencies) * 1000


def langgraph_sqlite(path: str, fields: dict[str, Any], events: int) -> float:
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(path, check_same_thread=False)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    try:
        return _invokes(_graph(fields, SqliteSaver(conn)), fields, events)
    finally:
        conn.close()


def langgraph_postgres(url: str, fields: dict[str, Any], events: int) -> float:
    from langgraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(url) as saver:
        saver.setup()
        return _invokes(_graph(fields, saver), fields, events)


def dbos_steps(system_database_url: str, fields: dict[str, Any], events: int) -> float:
    """The p50 (ms) of one `@DBOS.step` (its output checkpointed) inside one workflow of
    `events` steps, each returning the run's fields with the event applied. On SQLite, DBOS
    keeps SQLite's defaults (a rollback journal, `synchronous=FULL`); on PostgreSQL its
    tables go in a schema of their own."""
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
