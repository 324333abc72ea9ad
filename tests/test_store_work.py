"""Work items through the run store (part of the conformance suite: every backend, both
APIs): a step that enters a state with `work:` enqueues its item in the step's transaction,
any step that leaves the state ends it; a claim leases the item with a fencing token; an
outcome, a failure or a heartbeat of a claim that lost its lease is refused with nothing
applied; retries wait their backoff; the attempts are kept."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from codegen_support import checked_text, generate
from store_support import Backend, Clock, import_path, job_class, job_text

from statechart_runtime.errors import (
    LeaseLost,
    MissingField,
    OutcomeNotAllowed,
    WorkEnded,
)
from statechart_runtime.store import open_store

T0 = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)
SECOND = dt.timedelta(seconds=1)

BACKOFF = dt.timedelta(milliseconds=100)


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> type[Any]:
    return job_class(tmp_path_factory.mktemp("job"))


def started(job: type[Any], backend: Backend, run_id: str = "r1") -> tuple[Any, Clock]:
    clock = Clock(T0)
    store = open_store(backend.url, clock=clock)
    store.create(job(run_id=run_id, clock=clock))
    store.fire(job, run_id, "start")
    return store, clock


def test_entering_the_state_enqueues_one_item_and_an_outcome_ends_it(
        job: type[Any], backend: Backend) -> None:
    store, clock = started(job, backend)
    [item] = store.work_items("r1")
    assert (item.key, item.state, item.handler, item.status, item.attempts) == (
        "r1/working/0", "working", "do_it", "pending", 0)
    assert item.ready_at == T0
    claim = store.claim_work(job, owner="w1")
    assert (claim.key, claim.run_id, claim.attempt, claim.token, claim.exhausted) == (
        "r1/working/0", "r1", 1, 1, False)
    assert claim.lease_until == T0 + 10 * SECOND  # the timeout: no heartbeat declared
    assert store.claim_work(job, owner="w2") is None  # held
    clock.advance(3 * SECOND)
    fired = store.complete_work(job, claim, "done", output={"rows": [1, 2]})
    assert fired.applied and fired.events == ["done"]
    assert fired.run.status.value == "finished"
    assert store.load(job, "r1").record.output == {"rows": [1, 2]}
    [item] = store.work_items("r1")
    assert (item.status, item.ended_by, item.ended_at) == ("ended", "done", T0 + 3 * SECOND)
    assert [(a.attempt, a.owner, a.result) for a in item.history] == [(1, "w1", "applied")]
    # The same outcome again (a retry of a call whose answer was lost): not applied twice.
    again = store.complete_work(job, claim, "done", output={"rows": [1, 2]})
    assert not again.applied and again.revision == fired.revision
    assert [h.event for h in store.history("r1")] == ["start", "done"]
    assert store.claim_work(job, owner="w2", now=T0 + 3600 * SECOND) is None


def test_a_lost_lease_refuses_the_late_outcome(job: type[Any], backend: Backend) -> None:
    store, clock = started(job, backend)
    first = store.claim_work(job, owner="paused")
    clock.advance(11 * SECOND)  # past the lease: the item is claimable again
    second = store.claim_work(job, owner="alive")
    assert (second.attempt, second.token) == (2, 2)
    with pytest.raises(LeaseLost, match="superseded by token 2"):
        store.complete_work(job, first, "done", output="late")
    with pytest.raises(LeaseLost):
        store.heartbeat_work(job, first)
    with pytest.raises(LeaseLost):
        store.fail_work(job, first, "late failure")
    assert store.load(job, "r1").status.value == "working"  # nothing applied
    store.complete_work(job, second, "done", output="on time")
    [item] = store.work_items("r1")
    assert [(a.owner, a.result) for a in item.history] == [
        ("paused", "lease lost"), ("alive", "applied")]
    assert item.failures == 1  # the lost lease counts as a failed attempt
    assert store.load(job, "r1").record.output == "on time"


def test_an_expired_lease_is_refused_even_before_another_claim(
        job: type[Any], backend: Backend) -> None:
    store, clock = started(job, backend)
    claim = store.claim_work(job, owner="slow")
    clock.advance(10 * SECOND + dt.timedelta(microseconds=1))
    with pytest.raises(LeaseLost, match="expired"):
        store.complete_work(job, claim, "done", output=1)
    assert store.load(job, "r1").status.value == "working"


def test_a_heartbeat_extends_the_lease(job: type[Any], backend: Backend) -> None:
    store, clock = started(job, backend)
    claim = store.claim_work(job, owner="w")
    clock.advance(8 * SECOND)
    assert store.heartbeat_work(job, claim) == T0 + 18 * SECOND
    clock.advance(8 * SECOND)  # past the first lease, within the extended one
    assert store.claim_work(job, owner="other") is None
    assert store.complete_work(job, claim, "done", output=0).applied


def test_leaving_the_state_ends_the_item(job: type[Any], backend: Backend) -> None:
    store, _clock = started(job, backend)
    claim = store.claim_work(job, owner="w")
    store.fire(job, "r1", "cancel")
    [item] = store.work_items("r1")
    assert (item.status, item.ended_by) == ("ended", "left by cancel")
    assert [a.result for a in item.history] == ["state left"]
    with pytest.raises(WorkEnded, match="left by cancel"):
        store.complete_work(job, claim, "done", output=1)
    assert store.load(job, "r1").status.value == "cancelled"


def test_a_transition_to_itself_ends_the_item_and_enqueues_a_new_one(
        job: type[Any], backend: Backend) -> None:
    store, clock = started(job, backend)
    store.fire(job, "r1", "note")  # targetless: the state is not left
    assert [i.key for i in store.work_items("r1")] == ["r1/working/0"]
    clock.advance(SECOND)
    store.fire(job, "r1", "redo")
    items = store.work_items("r1")
    assert [(i.key, i.status) for i in items] == [
        ("r1/working/0", "ended"), ("r1/working/2", "pending")]
    assert store.claim_work(job, owner="w").key == "r1/working/2"


def test_a_failure_waits_its_backoff_then_the_error_event_fires(
        job: type[Any], backend: Backend) -> None:
    store, clock = started(job, backend)
    claim = store.claim_work(job, owner="w")
    failed = store.fail_work(job, claim, "TimeoutError: the API did not answer")
    assert failed.retry_at == T0 + BACKOFF and failed.fired is None
    assert store.claim_work(job, owner="w") is None  # the backoff
    clock.advance(2 * SECOND)
    retry = store.claim_work(job, owner="w")
    assert (retry.attempt, retry.key) == (2, claim.key)  # the same key across attempts
    done = store.fail_work(job, retry, "TimeoutError: again", why="the API is down")
    assert done.retry_at is None and done.fired.events == ["broke"]
    run = store.load(job, "r1")
    assert (run.status.value, run.record.why) == ("failed", "the API is down")
    [item] = store.work_items("r1")
    assert (item.ended_by, item.failures, item.last_error) == ("broke", 2,
                                                               "TimeoutError: again")
    assert [a.error for a in item.history] == ["TimeoutError: the API did not answer",
                                                "TimeoutError: again"]


def test_a_refused_error_event_ends_the_item_and_keeps_the_run(
        job: type[Any], backend: Backend) -> None:
    store, clock = started(job, backend)
    claim = store.claim_work(job, owner="w")
    clock.advance(2 * SECOND)
    store.fail_work(job, claim, "first")
    clock.advance(2 * SECOND)
    claim = store.claim_work(job, owner="w")
    done = store.fail_work(job, claim, "second")  # no `why`: the error event is refused
    assert done.fired is None and isinstance(done.refused, MissingField)
    [item] = store.work_items("r1")
    assert item.status == "ended" and item.ended_by == "failed"
    assert "`broke` was refused" in item.last_error
    assert store.load(job, "r1").status.value == "working"


def test_lost_leases_use_the_attempts_up(job: type[Any], backend: Backend) -> None:
    store, clock = started(job, backend)
    store.claim_work(job, owner="dies")
    clock.advance(11 * SECOND)
    second = store.claim_work(job, owner="dies too")
    assert not second.exhausted  # one retry: the second attempt is its own
    clock.advance(11 * SECOND)
    third = store.claim_work(job, owner="finds it")
    assert third.exhausted and third.attempt == 3
    done = store.fail_work(job, third, "its lease was lost twice", why="workers died")
    assert done.fired.events == ["broke"]
    [item] = store.work_items("r1")
    assert item.failures == 2
    assert [a.result for a in item.history] == ["lease lost", "lease lost", "failed"]


def test_a_released_item_is_claimable_at_once_without_a_failure(
        job: type[Any], backend: Backend) -> None:
    store, _clock = started(job, backend)
    claim = store.claim_work(job, owner="stopping")
    store.release_work(job, claim)
    with pytest.raises(LeaseLost, match="released"):
        store.complete_work(job, claim, "done", output=1)
    again = store.claim_work(job, owner="next")
    assert (again.attempt, again.token) == (2, 2)
    [item] = store.work_items("r1")
    assert item.failures == 0
    assert [a.result for a in item.history] == ["released", None]


def test_bad_outcomes_leave_the_claim_holding(job: type[Any], backend: Backend) -> None:
    store, _clock = started(job, backend)
    claim = store.claim_work(job, owner="w")
    with pytest.raises(OutcomeNotAllowed, match="allowed: `done`, `broke`"):
        store.complete_work(job, claim, "cancel")
    with pytest.raises(MissingField):
        store.complete_work(job, claim, "done")  # `done` sets output: it must be given
    assert store.complete_work(job, claim, "done", output=[]).applied


def test_a_handler_filter_and_other_specs(job: type[Any], backend: Backend) -> None:
    store, _clock = started(job, backend)
    assert store.claim_work(job, owner="w", handlers=["something_else"]) is None
    assert store.claim_work(job, owner="w", handlers=["do_it"]) is not None


def test_the_oldest_ready_item_is_claimed_first(job: type[Any], backend: Backend) -> None:
    clock = Clock(T0)
    store = open_store(backend.url, clock=clock)
    for run_id in ("b", "a", "c"):
        store.create(job(run_id=run_id, clock=clock))
        store.fire(job, run_id, "start")
        clock.advance(SECOND)
    assert [store.claim_work(job, owner="w").run_id for _ in range(3)] == ["b", "a", "c"]
    assert store.claim_work(job, owner="w") is None


def test_a_worker_leaves_the_items_of_a_newer_spec_version_alone(
        job: type[Any], backend: Backend, tmp_path: Path) -> None:
    # A rolling deploy: the old version's workers must not run the items of runs the new
    # version stored (their outcome could not be applied); the new version's run both.
    text = job_text().replace("version: 1", "version: 2") + (
        "migrations:\n  - from_version: 1\n    description: The same job.\n")
    spec = checked_text(text)
    assert spec is not None
    path = tmp_path / "job_v2_store_test.py"
    path.write_bytes(generate(spec)["generated/job.py"])
    job2 = import_path(path, "job_v2_store_test").Job
    clock = Clock(T0)
    store = open_store(backend.url, clock=clock)
    store.create(job2(run_id="new", clock=clock))
    store.fire(job2, "new", "start")  # ready first
    assert store.claim_work(job, owner="v1-worker") is None
    clock.advance(SECOND)
    store.create(job(run_id="old", clock=clock))
    store.fire(job, "old", "start")
    claim = store.claim_work(job, owner="v1-worker")
    assert claim.run_id == "old"
    store.release_work(job, claim)
    taken = [store.claim_work(job2, owner="v2-worker") for _ in range(2)]
    assert [c.run_id for c in taken] == ["new", "old"]
    for claim in taken:
        store.complete_work(job2, claim, "done", output=claim.run_id)
    assert store.load(job2, "old").record.output == "old"


def test_a_claim_brings_the_run_s_record_with_it(job: type[Any], backend: Backend) -> None:
    # The handler's record is read with the item (no read of its own): the run as it is
    # when claimed, the fields set by steps that kept it in its state too.
    store, _ = started(job, backend)
    store.fire(job, "r1", "note")
    claim = store.claim_work(job, owner="w1")
    assert claim.record.runId == "r1" and claim.record.status.value == "working"
    assert claim.record.history == []  # the head: what a handler reads, not the steps
