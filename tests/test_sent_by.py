"""Who sent an event: the reserved step value `@by` (statechart_runtime.values.SENT_BY).
`run.send(event, **{"@by": who})` keeps the identity with the steps of that event's
macrostep (not with timer steps that fired before it); the record's JSON, its schema, the
replay, the store's history and `load` carry it; a bad one is refused before anything
changes; a record edited to hold a bad one is refused naming it."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import jsonschema
import pytest
from store_support import Backend, import_path

from statechart_runtime.store import open_store
from statechart_runtime.values import SENT_BY

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def ar() -> ModuleType:
    return import_path(ROOT / "generated" / "agent_run.py", "agent_run")


def waiting(ar: ModuleType, deadline: dt.datetime) -> Any:
    run = ar.AgentRun(run_id="r-1")
    run.triage()
    run.start()
    run.send("interrupt", interruptReason="approval")
    run.await_approval(approvalId="a-1", approvalDeadline=deadline)
    return run


def test_the_sender_is_kept_with_the_step_and_survives_json(ar: ModuleType) -> None:
    run = waiting(ar, dt.datetime(2030, 1, 1, tzinfo=dt.UTC))
    run.send("approve", approvedBy="ops", **{SENT_BY: "alice@example.com"})
    last = run.record.history[-1]
    assert last.event.value == "approve"
    assert last.values == {"approvedBy": "ops", "@by": "alice@example.com"}
    assert run.record.approvedBy == "ops"  # a field is set; `@by` sets none
    data = json.loads(run.record.to_json())
    schema = json.loads((ROOT / "generated" / "agent_run.schema.json").read_text())
    jsonschema.validate(data, schema)
    again = ar.AgentRunRecord.from_json(run.record.to_json())  # replayed and checked
    assert again.history[-1].values["@by"] == "alice@example.com"
    assert [s.values.get("@by") for s in again.history[:-1]] == [None] * 4


@pytest.mark.parametrize("bad", ["", 7, "x" * 257])
def test_a_bad_sender_is_refused_and_changes_nothing(ar: ModuleType, bad: Any) -> None:
    run = waiting(ar, dt.datetime(2030, 1, 1, tzinfo=dt.UTC))
    before = run.record.to_json()
    with pytest.raises(TypeError, match="@by"):
        run.send("approve", approvedBy="ops", **{SENT_BY: bad})
    assert run.record.to_json() == before


def test_a_record_edited_to_hold_a_bad_sender_is_refused(ar: ModuleType) -> None:
    run = waiting(ar, dt.datetime(2030, 1, 1, tzinfo=dt.UTC))
    run.send("approve", approvedBy="ops", **{SENT_BY: "alice"})
    data = json.loads(run.record.to_json())
    data["history"][-1]["values"]["@by"] = 42
    with pytest.raises(ar.AgentRunInvalidRecord, match=r"history\[4\]\.values\.@by"):
        ar.AgentRunRecord.from_dict(data)


def test_timer_steps_before_the_event_carry_no_sender(ar: ModuleType) -> None:
    start = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)
    run = ar.AgentRun(run_id="r-2", clock=lambda: start)
    run.triage()
    run.start()
    run.send("interrupt", interruptReason="approval")
    run.await_input()
    # A day later the wait timed out; the cancel is refused (the run ended), the timer kept.
    with pytest.raises(Exception, match="ended"):
        run.send_at(start + dt.timedelta(days=2), "cancel", cancelReason="x",
                    **{SENT_BY: "bob"})
    assert all(SENT_BY not in s.values for s in run.record.history)


def test_the_store_keeps_the_sender(ar: ModuleType, backend: Backend) -> None:
    with open_store(backend.url) as store:
        run = waiting(ar, dt.datetime(2030, 1, 1, tzinfo=dt.UTC))
        store.create(run)
        fired = store.fire(ar.AgentRun, "r-1", "approve", idempotency_key="k-1",
                           approvedBy="ops", **{SENT_BY: "carol"})
        assert fired.applied
        assert store.history("r-1")[-1].values == {"approvedBy": "ops", "@by": "carol"}
        loaded = store.load(ar.AgentRun, "r-1")
        assert loaded.record.history[-1].values["@by"] == "carol"
        # The same key from the same person: a repeat, applied once.
        again = store.fire(ar.AgentRun, "r-1", "approve", idempotency_key="k-1",
                           approvedBy="ops", **{SENT_BY: "carol"})
        assert not again.applied
