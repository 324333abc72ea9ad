"""Listeners beyond the store's calls (docs/observability.md): a run in memory tells its
own macrosteps and refusals; the console tells answers (and, from a URL, its store's
steps); the worker's timers reach the store's listeners; `statechart runs work --listener`
loads one."""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from console_support import agent_run, client, console_app, seed
from store_support import import_path

from statechart.cli import main
from statechart_runtime.listeners import (
    Answered,
    EventRefused,
    Listeners,
    StepTaken,
    load_listener,
)
from statechart_runtime.run import EventNotAccepted
from statechart_runtime.store import open_store
from statechart_runtime.worker import Worker

ROOT = Path(__file__).resolve().parents[1]
PAST = dt.datetime(2020, 1, 1, tzinfo=dt.UTC)


@pytest.fixture(scope="module")
def ar() -> ModuleType:
    return import_path(ROOT / "generated" / "agent_run.py", "agent_run")


def test_a_run_in_memory_tells_its_macrosteps(ar: ModuleType) -> None:
    seen: list[Any] = []
    run = ar.AgentRun(run_id="m1")
    run.triage()  # before listening: not told
    run.listen(seen.append)
    run.start()  # a generated event method
    with pytest.raises(EventNotAccepted):
        run.approve(approvedBy="nobody")
    run.send("interrupt", interruptReason="approval")
    run.send("await_approval", approvalId="a1", approvalDeadline=PAST)
    assert run.fire_due() == ["after.approvalDeadline.waiting_for_approval"]
    with pytest.raises(EventNotAccepted):
        run.send("no_such_event")
    assert [(type(s).__name__, s.event) for s in seen] == [
        ("StepTaken", "start"), ("EventRefused", "approve"), ("StepTaken", "interrupt"),
        ("StepTaken", "await_approval"),
        ("StepTaken", "after.approvalDeadline.waiting_for_approval"),
        ("EventRefused", "no_such_event")]
    start, refused, _, waiting, timer, _ = seen
    assert (start.source, start.target, start.configuration, start.status, start.via,
            start.revision, start.run_id, start.spec) == (
        "triaging", "running", ("running", "reasoning"), "running", "run", None, "m1",
        "agent_run")
    assert (refused.reason, refused.via) == ("EventNotAccepted", "run")
    # The values as the history keeps them (JSON).
    assert waiting.values == {"approvalId": "a1", "approvalDeadline": "2020-01-01T00:00:00+00:00"}
    assert (timer.timer, timer.target, timer.status) == (
        "waiting_for_approval", "timed_out", "failed")
    # How long the run stayed in the state the step left: from the step before.
    assert timer.since == waiting.at and waiting.since == seen[2].at


def test_a_macrostep_tells_each_of_its_transitions(ar: ModuleType) -> None:
    """`proceed` re-enters `running` by deep history: one macrostep, its steps listed."""
    seen: list[Any] = []
    run = ar.AgentRun(run_id="m2")
    run.triage()
    run.start()
    run.send("call_tool", toolCallId="t1")
    run.send("interrupt", interruptReason="approval")
    run.send("resume")
    run.listen(seen.append)
    run.send("proceed")
    [step] = seen
    assert [(s.source, s.target, s.kind) for s in step.steps] == [
        ("resumed", "running", "deep")]
    assert step.configuration == ("running", "tool_call")


def test_the_console_tells_answers(ar: ModuleType, tmp_path: Path) -> None:
    seen: list[Any] = []
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    with open_store(url) as store:
        seed(store)
    # From a URL: the console opens the store, with the listeners.
    with client(console_app(url, listeners=[seen.append])) as api:
        done = api.post("/api/runs/approve-soon/events/approve", json={"approvedBy": "ops"})
        assert done.status_code == 200, done.text
        refused = api.post("/api/runs/busy-1/events/approve", json={"approvedBy": "ops"})
        assert refused.status_code == 409
    kinds = [(type(s).__name__, s.event) for s in seen]
    assert kinds == [("StepTaken", "approve"), ("Answered", "approve"),
                     ("EventRefused", "approve")]
    answered = seen[1]
    assert isinstance(answered, Answered)
    assert (answered.run_id, answered.spec, answered.who, answered.applied,
            answered.status) == ("approve-soon", "agent_run", "alice", True, "resumed")
    assert seen[0].values["@by"] == "alice"


def test_the_worker_tells_the_timers_it_fires(ar: ModuleType, tmp_path: Path) -> None:
    seen: list[Any] = []
    store = open_store(tmp_path / "runs.db", listeners=[seen.append])
    run = ar.AgentRun(run_id="w1", clock=lambda: PAST)
    run.triage()
    run.start()
    run.send("interrupt", interruptReason="approval")
    run.await_approval(approvalId="a", approvalDeadline=PAST + dt.timedelta(seconds=1))
    store.create(run)
    seen.clear()
    with Worker(store, ar.AgentRun) as worker:
        assert worker.run_once() == 1
    [step] = seen
    assert isinstance(step, StepTaken)
    assert (step.run_id, step.timer, step.via, step.target) == (
        "w1", "waiting_for_approval", "fire_due", "timed_out")


LISTENER = """\
import json, os

class Lines:
    def __init__(self):
        self.out = open(os.environ["SEEN_PATH"], "a")

    def __call__(self, seen):
        self.out.write(json.dumps([type(seen).__name__, seen.run_id,
                                   getattr(seen, "event", None)]) + "\\n")
        self.out.flush()

BROKEN = 42
"""


def test_runs_work_loads_a_listener(ar: ModuleType, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "seen_listener.py").write_text(LISTENER)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("SEEN_PATH", str(tmp_path / "seen.jsonl"))
    db = tmp_path / "runs.db"
    run = ar.AgentRun(run_id="w1", clock=lambda: PAST)
    run.triage()
    run.start()
    run.send("interrupt", interruptReason="approval")
    run.await_approval(approvalId="a", approvalDeadline=PAST + dt.timedelta(seconds=1))
    with open_store(db) as store:
        store.create(run)
    spec = str(ROOT / "specs" / "agent_run.yaml")
    code = main(["runs", "work", "--store", str(db), "--spec", spec, "--once",
                 "--listener", "seen_listener:Lines"])
    assert code == 0, capsys.readouterr().err
    lines = [json.loads(line) for line in (tmp_path / "seen.jsonl").read_text().splitlines()]
    assert lines == [["StepTaken", "w1", "after.approvalDeadline.waiting_for_approval"]]
    code = main(["runs", "work", "--store", str(db), "--spec", spec, "--once",
                 "--listener", "seen_listener:BROKEN"])
    assert code != 0
    assert "'BROKEN' is int, not a callable" in capsys.readouterr().err
    sys.modules.pop("seen_listener", None)


def test_load_listener_says_what_is_wrong() -> None:
    with pytest.raises(ValueError, match="expected MODULE:OBJECT"):
        load_listener("nothing")
    with pytest.raises(ValueError, match="cannot import 'no_such_module_here'"):
        load_listener("no_such_module_here:X")
    assert load_listener("builtins:print") is print


def test_listeners_tell_the_others_when_one_raises() -> None:
    told: list[Any] = []

    def broken(seen: Any) -> None:
        raise ValueError("no")

    listeners = Listeners([broken, told.append])
    seen = EventRefused("r", "s", 1, "e", "X", ValueError(), "fire", 0.0, 0.0)
    listeners.notify(seen)
    assert told == [seen]
    listeners.remove(broken)
    with pytest.raises(ValueError, match="not a listener here"):
        listeners.remove(broken)
    assert agent_run() is not None
