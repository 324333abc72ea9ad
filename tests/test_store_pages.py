"""The run store's paged views (`runs_page`, `status_counts`, `head`, `history(first=,
limit=)`), on SQLite and PostgreSQL: keyset pages that cover every run once, conditions that
reach SQL as parameters (a hostile value matches nothing and damages nothing), due order."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from store_support import Backend, import_path

from statechart_runtime.errors import RunNotFound
from statechart_runtime.store import RunFilter, open_store

ROOT = Path(__file__).resolve().parents[1]
T0 = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)


@pytest.fixture(scope="module")
def ar() -> ModuleType:
    return import_path(ROOT / "generated" / "agent_run.py", "agent_run")


def _runs(ar: ModuleType, store: Any) -> None:
    for i in range(7):
        run = ar.AgentRun(run_id=f"r-{i}", clock=lambda: T0)
        run.triage()
        if i % 2:
            run.start()
            run.send("interrupt", interruptReason="approval")
            run.await_approval(approvalId=f"a-{i}", approvalDeadline=T0 + dt.timedelta(hours=10 - i))
        store.create(run)


def test_pages_cover_every_run_once_and_filter(ar: ModuleType, backend: Backend) -> None:
    with open_store(backend.url) as store:
        _runs(ar, store)
        seen: list[str] = []
        after = None
        while True:
            page = store.runs_page(RunFilter(spec="agent_run"), after=after, limit=3)
            seen += [r.run_id for r in page]
            if len(page) < 3:
                break
            after = (page[-1].run_id,)
        assert seen == [f"r-{i}" for i in range(7)]
        waiting = store.runs_page(RunFilter(spec="agent_run", status="waiting"))
        assert [r.run_id for r in waiting] == ["r-1", "r-3", "r-5"]
        assert "waiting_for_approval" in waiting[0].states
        assert waiting[0].last_transition_at == T0 and waiting[0].steps == 4
        tagged = store.runs_page(RunFilter(active=(("interrupted", "resumed"),)))
        assert [r.run_id for r in tagged] == ["r-1", "r-3", "r-5"]
        by_due = store.runs_page(RunFilter(due_by=T0 + dt.timedelta(hours=8)), by_due=True)
        assert [r.run_id for r in by_due] == ["r-5", "r-3"]
        second = store.runs_page(by_due=True, after=(by_due[0].next_due, "r-5"), limit=1)
        assert [r.run_id for r in second] == ["r-3"]
        assert store.status_counts(RunFilter(spec="agent_run", status="waiting")) == {
            "triaging": 4, "waiting": 3}
        assert store.status_counts(RunFilter(spec="agent_run"), statuses=["waiting", "triaging",
                                                                          "running"], cap=3) == {
            "triaging": 3, "waiting": 3}
        assert store.status_counts(RunFilter(spec="agent_run"), statuses=["triaging"],
                                   cap=10) == {"triaging": 4}
        hostile = "x' OR '1'='1"
        assert store.runs_page(RunFilter(spec=hostile, status=hostile)) == []
        assert store.runs_page(RunFilter(active=((hostile,),))) == []
        assert store.status_counts(RunFilter(spec=hostile)) == {}
        assert len(store.runs_page()) == 7
        assert [r.run_id for r in store.runs_page(RunFilter(run_id="r-2"))] == ["r-2"]


def test_head_and_a_page_of_history(ar: ModuleType, backend: Backend) -> None:
    with open_store(backend.url) as store:
        _runs(ar, store)
        head = store.head(ar.AgentRun, "r-3")
        assert head.revision == 1 and head.run.record.history == []
        assert head.run.record.approvalId == "a-3"
        assert [h.index for h in store.history("r-3", first=2, limit=2)] == [2, 3]
        assert [h.event for h in store.history("r-3", first=3)] == ["await_approval"]
        assert store.moves("r-3", first=2) == [
            (2, "interrupt", "running", "interrupted", None),
            (3, "await_approval", "suspended", "waiting_for_approval", None)]
        assert store.moves("nope") == []
        with pytest.raises(RunNotFound):
            store.head(ar.AgentRun, "nope")


def test_fire_if_revision_refuses_a_run_that_moved_on(ar: ModuleType, backend: Backend) -> None:
    from statechart_runtime.errors import ConcurrentUpdate

    with open_store(backend.url) as store:
        _runs(ar, store)
        with pytest.raises(ConcurrentUpdate) as caught:
            store.fire(ar.AgentRun, "r-1", "approve", if_revision=7, approvedBy="x")
        assert (caught.value.expected, caught.value.found) == (7, 1)
        assert store.head(ar.AgentRun, "r-1").revision == 1  # nothing written
        fired = store.fire(ar.AgentRun, "r-1", "approve", if_revision=1, approvedBy="x",
                           idempotency_key="k")
        assert fired.revision == 2
        # A repeat of the applied key is answered as a repeat, not as moved on.
        again = store.fire(ar.AgentRun, "r-1", "approve", if_revision=1, approvedBy="x",
                           idempotency_key="k")
        assert not again.applied and again.revision == 2
