"""The work table a generated module carries (`statechart_runtime.chart.work`): one row per state
with `work:`, read by `work_of`, and what a step does to a run's items."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from types import ModuleType

import pytest
from codegen_support import checked_spec, generate, import_source

from statechart_runtime.chart.work import EMPTY, Work, WorkTable, item_key, work_of

ROOT = Path(__file__).parent.parent


@pytest.fixture(scope="module")
def review(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    spec = checked_spec(ROOT / "tests" / "golden" / "work" / "spec.yaml")
    folder = tmp_path_factory.mktemp("review")
    return import_source(generate(spec)["generated/review.py"], folder, "review_work_test")


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return import_source((ROOT / "generated" / "agent_run.py").read_bytes(),
                         tmp_path_factory.mktemp("agent"), "agent_run_work_test")


def test_the_generated_table_has_the_specs_work(review: ModuleType) -> None:
    table = work_of(review.Review)
    assert table is work_of(review.Review())  # a run's class has it too
    assert [w.state for w in table] == ["linting", "testing"]
    lint = table.get("linting")
    assert lint == Work("linting", "run_linter", dt.timedelta(minutes=2),
                        dt.timedelta(seconds=20), ("lint_done",), "check_failed", 1,
                        dt.timedelta(milliseconds=500))
    tests = table.get("testing")
    assert tests is not None and tests.heartbeat is None and tests.error is None
    assert (tests.retries, tests.backoff) == (3, dt.timedelta(seconds=1))  # the defaults
    assert table.handlers == {"run_linter", "run_tests"}
    assert table.get("drafting") is None


def test_lease_attempts_and_backoff() -> None:
    [work] = WorkTable([("s", "h", 300_000, 30_000, ("done",), "error", 2, 5_000)])
    assert work.lease == dt.timedelta(seconds=30)  # heartbeats renew it
    assert work.attempts == 3
    assert [work.retry_delay(n) for n in (1, 2, 3)] == [
        dt.timedelta(seconds=5), dt.timedelta(seconds=10), None]
    with pytest.raises(ValueError, match="count from 1"):
        work.retry_delay(0)
    [plain] = WorkTable([("s", "h", 60_000, None, ("done",), None, 0, 1_000)])
    assert plain.lease == dt.timedelta(minutes=1) and plain.retry_delay(1) is None
    assert work.accepts("done") and work.accepts("error") and not plain.accepts("error")


def test_a_step_starts_and_ends_items_as_the_run_moves(review: ModuleType) -> None:
    table = work_of(review.Review)
    run = review.Review(run_id="r-1")
    before = [s.value for s in run.configuration]
    assert table.active(before) == ()
    run.submit()
    during = [s.value for s in run.configuration]
    started = table.between(before, during)
    assert [w.handler for w in started.started] == ["run_linter", "run_tests"]
    assert started.ended == () and bool(started)
    run.lint_done(lintReport={"warnings": 2})
    after_lint = [s.value for s in run.configuration]
    change = table.between(during, after_lint)
    assert ([w.state for w in change.ended], change.started) == (["linting"], ())
    assert [w.state for w in table.active(after_lint)] == ["testing"]
    run.check_failed(failure="tests crashed")  # leaving the parallel state ends the rest
    change = table.between(after_lint, [s.value for s in run.configuration])
    assert [w.state for w in change.ended] == ["testing"]
    # A transition to itself ends the item and starts a new one: only the step's exit and
    # entry sets show it.
    again = table.change(exited=["linting"], entered=["linting"])
    assert [w.state for w in again.ended] == [w.state for w in again.started] == ["linting"]
    assert not table.between(during, during)
    # From the step's entry set: a state entered that was active before was left first
    loop = table.step(during, during, entered=["linting"])
    assert [w.state for w in loop.ended] == [w.state for w in loop.started] == ["linting"]
    assert not table.step(during, during, entered=[])


def test_item_keys_are_stable_across_attempts_and_new_per_entry() -> None:
    assert item_key("run-1", "tool_call", 7) == "run-1/tool_call/7"
    assert item_key("run-1", "triaging", None) == "run-1/triaging/start"
    assert item_key("run-1", "tool_call", 7) != item_key("run-1", "tool_call", 9)
    with pytest.raises(ValueError):
        item_key("run-1", "tool_call", -1)


def test_the_agent_run_declares_its_model_step_and_tool_call(agent: ModuleType) -> None:
    table = work_of(agent.AgentRun)
    assert {w.state: (w.handler, w.outcomes, w.error) for w in table} == {
        "reasoning": ("reason", ("call_tool", "complete", "interrupt"), "error"),
        "tool_call": ("call_tool", ("tool_output",), "error")}
    run = agent.AgentRun()
    run.triage()
    run.start()
    assert [w.handler for w in table.active([s.value for s in run.configuration])] == \
        ["reason"]
    # every outcome is an event the state accepts
    for work in table:
        assert all(event in {e.value for e in agent.AgentRunEvent} for event in work.outcomes)


def test_a_spec_without_work_has_the_empty_table(tmp_path: Path) -> None:
    spec = checked_spec(ROOT / "tests" / "golden" / "flat" / "spec.yaml")
    source = generate(spec)[f"generated/{spec.name}.py"]
    module = import_source(source, tmp_path, "flat_wt")
    classes = [v for v in vars(module).values() if isinstance(v, type)
               and hasattr(v, "_sc_record")]
    assert classes and all(work_of(c) is EMPTY for c in classes)
    assert not EMPTY and list(EMPTY) == []
    assert b"WorkTable" not in source
