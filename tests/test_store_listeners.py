"""Listeners of a run store (part of the conformance suite: every backend, both APIs): told
what each call did once it committed (a step, a refusal and why, a timer fired, a work
item's claim, outcome, failure and lost lease); a step the store rolled back is never told
as taken; a listener that raises is logged and changes nothing."""

from __future__ import annotations

import datetime as dt
import logging
from types import ModuleType
from typing import Any

import pytest
from store_support import Backend, Clock, gate_class, job_class

from statechart_runtime.errors import LeaseLost, StoreError
from statechart_runtime.listeners import (
    EventRefused,
    RunCreated,
    StepTaken,
    WorkClaimed,
    WorkCompleted,
    WorkFailed,
)
from statechart_runtime.listeners import (
    LeaseLost as LeaseLostSeen,
)
from statechart_runtime.run import EventNotAccepted
from statechart_runtime.store import ConcurrentUpdate, open_store

T0 = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)
SECOND = dt.timedelta(seconds=1)


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> type[Any]:
    return job_class(tmp_path_factory.mktemp("job"))


@pytest.fixture(scope="module")
def job3(tmp_path_factory: pytest.TempPathFactory) -> type[Any]:
    return job_class(tmp_path_factory.mktemp("job3"), retries=3)


@pytest.fixture(scope="module")
def gate(tmp_path_factory: pytest.TempPathFactory) -> type[Any]:
    return gate_class(tmp_path_factory.mktemp("gate"))


def test_a_fire_is_told_after_its_commit(ticket: ModuleType, backend: Backend) -> None:
    seen: list[Any] = []
    store = open_store(backend.url, listeners=[seen.append])
    store.create(ticket.Ticket(run_id="t1"))
    [created] = seen
    assert isinstance(created, RunCreated)
    assert (created.run_id, created.spec, created.version, created.status,
            created.configuration) == ("t1", "ticket", 1, "open", ("open",))
    seen.clear()
    fired = store.fire(ticket.Ticket, "t1", "approve", note="ok")
    [step] = seen
    assert isinstance(step, StepTaken)
    assert (step.run_id, step.spec, step.version, step.event, step.source, step.target,
            step.configuration, step.status, dict(step.values), step.via, step.revision,
            step.timer) == ("t1", "ticket", 1, "approve", "open", "approved", ("approved",),
                            "approved", {"note": "ok"}, "fire", fired.revision, None)
    assert [(s.event, s.source, s.target) for s in step.steps] == [
        ("approve", "open", "approved")]
    assert step.started <= step.ended
    # What the listener saw is what the store holds.
    assert store.history("t1")[-1].values == {"note": "ok"}
    # A repeated idempotency key fires nothing: nothing told.
    seen.clear()
    store.fire(ticket.Ticket, "t1", "reopen", idempotency_key="k", note="again")
    store.fire(ticket.Ticket, "t1", "reopen", idempotency_key="k", note="again")
    assert [s.event for s in seen] == ["reopen"]


def test_a_refusal_is_told_with_its_reason(ticket: ModuleType, backend: Backend) -> None:
    seen: list[Any] = []
    store = open_store(backend.url)
    store.create(ticket.Ticket(run_id="t1"))
    store.listen(seen.append)
    with pytest.raises(EventNotAccepted):
        store.fire(ticket.Ticket, "t1", "close")
    with pytest.raises(ConcurrentUpdate):
        store.fire(ticket.Ticket, "t1", "approve", if_revision=7, note="stale")
    assert [(type(s), s.event, s.reason, s.via) for s in seen] == [
        (EventRefused, "close", "EventNotAccepted", "fire"),
        (EventRefused, "approve", "ConcurrentUpdate", "fire")]
    assert isinstance(seen[0].error, EventNotAccepted)
    store.unlisten(seen.append)
    store.fire(ticket.Ticket, "t1", "approve", note="ok")
    assert len(seen) == 2


def test_a_step_rolled_back_is_never_told(ticket: ModuleType, backend: Backend) -> None:
    seen: list[Any] = []
    store = open_store(backend.url, listeners=[seen.append])
    store.create(ticket.Ticket(run_id="t1"))
    seen.clear()
    # The history's INSERT fails inside the fire's transaction: it is rolled back.
    if backend.name == "sqlite":
        backend.execute("CREATE TRIGGER refuse BEFORE INSERT ON history "
                        "BEGIN SELECT RAISE(ABORT, 'refused by a test'); END")
    else:
        backend.execute("CREATE FUNCTION refuse() RETURNS trigger AS $$ BEGIN "
                        "RAISE EXCEPTION 'refused by a test'; END $$ LANGUAGE plpgsql")
        backend.execute("CREATE TRIGGER refuse BEFORE INSERT ON history "
                        "FOR EACH ROW EXECUTE FUNCTION refuse()")
    with pytest.raises(StoreError):
        store.fire(ticket.Ticket, "t1", "approve", note="lost")
    assert seen == []
    assert store.history("t1") == []
    backend.execute("DROP TRIGGER refuse" + ("" if backend.name == "sqlite" else " ON history"))
    store.fire(ticket.Ticket, "t1", "approve", note="kept")
    assert [s.event for s in seen] == ["approve"]


def test_a_listener_that_raises_is_logged_and_changes_nothing(
        ticket: ModuleType, backend: Backend, caplog: pytest.LogCaptureFixture) -> None:
    seen: list[Any] = []

    def broken(observation: Any) -> None:
        raise RuntimeError("the collector is down")

    store = open_store(backend.url, listeners=[broken, seen.append])
    with caplog.at_level(logging.ERROR, logger="statechart_runtime.listeners"):
        store.create(ticket.Ticket(run_id="t1"))
        fired = store.fire(ticket.Ticket, "t1", "approve", note="ok")
    assert fired.applied and fired.run.status.value == "approved"
    assert [type(s) for s in seen] == [RunCreated, StepTaken]
    assert "the collector is down" in caplog.text and "StepTaken of run 't1'" in caplog.text
    with pytest.raises(TypeError, match="a listener is a callable"):
        store.listen("not callable")  # type: ignore[arg-type]


def test_timers_fired_are_told(gate: type[Any], backend: Backend) -> None:
    seen: list[Any] = []
    clock = Clock(T0)
    store = open_store(backend.url, clock=clock, listeners=[seen.append])
    for run_id in ("g1", "g2", "g3"):
        store.create(gate(run_id=run_id, clock=clock))
    seen.clear()
    clock.advance(31 * SECOND)
    store.fire_due(gate, "g1")
    store.fire_next_due(gate)
    # A fire finds the timer due first: the timer's step, then the refusal of the answer.
    with pytest.raises(EventNotAccepted):
        store.fire(gate, "g3", "answer")
    assert [(type(s).__name__, s.run_id, s.event, getattr(s, "timer", None), s.via)
            for s in seen] == [
        ("StepTaken", "g1", "after.delay1.waiting", "waiting", "fire_due"),
        ("StepTaken", "g2", "after.delay1.waiting", "waiting", "fire_due"),
        ("StepTaken", "g3", "after.delay1.waiting", "waiting", "fire"),
        ("EventRefused", "g3", "answer", None, "fire")]
    assert seen[0].at == T0 + 30 * SECOND  # a timer's step is at its due time
    assert (seen[0].target, seen[0].configuration, seen[0].status) == (
        "expired", ("expired",), "expired")


def test_work_items_are_told(job3: type[Any], backend: Backend) -> None:
    job = job3
    seen: list[Any] = []
    clock = Clock(T0)
    store = open_store(backend.url, clock=clock, listeners=[seen.append])
    store.create(job(run_id="r1", clock=clock))
    store.fire(job, "r1", "start")
    seen.clear()
    first = store.claim_work(job, owner="paused")
    clock.advance(11 * SECOND)  # past the lease
    second = store.claim_work(job, owner="alive")
    with pytest.raises(LeaseLost):
        store.complete_work(job, first, "done", output="late")
    store.fail_work(job, second, "the service said 503")
    clock.advance(SECOND)
    third = store.claim_work(job, owner="alive")
    assert third is not None
    store.complete_work(job, third, "done", output={"rows": 2})
    kinds = [type(s) for s in seen]
    assert kinds == [WorkClaimed, WorkClaimed, LeaseLostSeen, WorkFailed, WorkClaimed,
                     StepTaken, WorkCompleted]
    claimed = seen[1]
    assert (claimed.key, claimed.attempt, claimed.owner, claimed.expired, claimed.state,
            claimed.handler) == ("r1/working/0", 2, "alive", "paused", "working", "do_it")
    assert seen[0].expired is None
    lost = seen[2]
    assert (lost.owner, lost.call, lost.reason, lost.attempt) == (
        "paused", "complete_work", "LeaseLost", 1)
    failed = seen[3]
    assert (failed.error, failed.retry_at, failed.error_event) == (
        "the service said 503", T0 + 11 * SECOND + dt.timedelta(milliseconds=200), None)
    step, done = seen[5], seen[6]
    assert (step.event, step.via, step.work, step.attempt, step.target) == (
        "done", "work", "r1/working/0", 3, "finished")
    assert (done.event, done.applied, done.attempt) == ("done", True, 3)


def test_a_failure_that_ends_the_item_tells_its_error_event(
        job: type[Any], backend: Backend) -> None:
    seen: list[Any] = []
    clock = Clock(T0)
    store = open_store(backend.url, clock=clock, listeners=[seen.append])
    store.create(job(run_id="r1", clock=clock))
    store.fire(job, "r1", "start")
    for _ in range(2):  # max 1 retry: the second failure ends it
        claim = store.claim_work(job, owner="w", now=store.now() + 10 * SECOND)
        store.fail_work(job, claim, "down", why="down")
    steps = [s for s in seen if isinstance(s, StepTaken)]
    assert [(s.event, s.via, s.target) for s in steps][-1] == ("broke", "work", "failed")
    assert [s.error_event for s in seen if isinstance(s, WorkFailed)] == [None, "broke"]
    # The run refuses the error event (it needs `why`): the refusal is told too.
    store.create(job(run_id="r2", clock=clock))
    store.fire(job, "r2", "start")
    seen.clear()
    for _ in range(2):
        claim = store.claim_work(job, owner="w", now=store.now() + 10 * SECOND)
        store.fail_work(job, claim, "down")
    assert [(type(s).__name__, getattr(s, "reason", None)) for s in seen][-3:] == [
        ("WorkClaimed", None), ("EventRefused", "MissingField"), ("WorkFailed", None)]
    assert (seen[-2].event, seen[-2].via, seen[-2].work) == ("broke", "work", "r2/working/0")


def test_steps_taken_in_memory_are_told_when_saved(ticket: ModuleType,
                                                   backend: Backend) -> None:
    seen: list[Any] = []
    store = open_store(backend.url, listeners=[seen.append])
    store.create(run := ticket.Ticket(run_id="t1"))
    run.send("approve", note="in memory")  # taken, not stored yet: not told
    own: list[Any] = []
    run.listen(own.append)  # the run's own listener is told at once
    run.send("reopen", note="again")
    assert [type(s) for s in seen] == [RunCreated]
    assert [(s.event, s.via) for s in own] == [("reopen", "run")]
    revision = store.save(run)
    assert [(s.event, s.via, s.revision) for s in seen[1:]] == [
        ("approve", "save", revision), ("reopen", "save", revision)]
    seen.clear()
    loaded = store.load(ticket.Ticket, "t1")
    loaded.send("approve", note="loaded")
    store.save(loaded)
    fired = store.fire(ticket.Ticket, "t1", "reopen", note="fired")
    fired.run.send("approve", note="after the fire")
    store.save(fired.run)
    assert [(s.event, s.via, dict(s.values)["note"]) for s in seen] == [
        ("approve", "save", "loaded"), ("reopen", "fire", "fired"),
        ("approve", "save", "after the fire")]
