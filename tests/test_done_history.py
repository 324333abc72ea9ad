"""Completion (`done:`) and history (`history: shallow|deep`) as a user of a generated module
sees them: the run takes `done` transitions by itself, in SCXML order, as part of the event
that completed the state; a history transition resumes where the state was left, also after
the record went through JSON in another process; the record's `remembered` and its `done`
steps are checked like the rest of the history."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from codegen_support import checked_text, generate, import_source

from statechart.linter import check_source

SPEC = """\
statechart: jobs
version: 1
initial: work
states:
  work:
    initial: plan
    on:
      pause: paused
    done: review
    states:
      plan:
        on: {go: tools}
      tools:
        parallel: true
        done: {target: summarize, guard: all_good}
        states:
          search:
            initial: searching
            states:
              searching: {on: {found: searched}}
              searched: {final: true}
          fetch:
            initial: fetching
            states:
              fetching: {on: {fetched: got}}
              got: {final: true}
      summarize:
        entry: [summarizing]
        on: {summarized: finished}
      finished:
        final: true
  paused:
    on:
      resume: {target: work, history: deep}
      restart: {target: work, history: shallow}
      cancel: cancelled
  review:
    on: {accept: accepted}
  accepted:
    final: true
  cancelled:
    final: true
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, dict[str, Any], Path]:
    spec = checked_text(SPEC)
    assert spec is not None
    folder = tmp_path_factory.mktemp("jobs")
    outputs = generate(spec)
    (folder / "jobs.py").write_bytes(outputs["generated/jobs.py"])
    module = import_source(outputs["generated/jobs.py"], folder, "jobs")
    return module, json.loads(outputs["generated/jobs.schema.json"]), folder


def names(run: Any) -> list[str]:
    return [s.value for s in run.configuration]


def steps(run: Any) -> list[tuple[str, str, str]]:
    return [(s.event.value, s.source.value, s.target.value) for s in run.record.history]


def test_a_parallel_state_completes_when_every_region_is_final(built: Any) -> None:
    module = built[0]
    run = module.Jobs()
    run.go()
    run.found()
    assert names(run) == ["work", "tools", "search", "searched", "fetch", "fetching"]
    run.fetched()  # the last region finishes: `done` of `tools` is taken in the same send
    assert names(run) == ["work", "summarize"]
    assert steps(run)[-2:] == [("fetched", "fetching", "got"),
                               ("done.state.tools", "tools", "summarize")]
    run.summarized()  # `finished` completes `work`, whose `done` goes to review
    assert names(run) == ["review"]
    assert steps(run)[-1] == ("done.state.work", "work", "review")
    assert not run.is_terminated
    module.JobsRecord.from_json(run.record.to_json())  # the record checks


def test_a_guard_that_refuses_leaves_the_completed_state_where_it_is(built: Any) -> None:
    module = built[0]

    class Careful(module.Jobs):  # type: ignore[misc, name-defined]
        def all_good(self) -> bool:
            return False

    run = Careful()
    run.go()
    run.found()
    run.fetched()
    assert names(run) == ["work", "tools", "search", "searched", "fetch", "got"]
    assert steps(run)[-1][0] == "fetched"
    run.pause()  # the ancestor's transitions still apply to completed regions
    assert names(run) == ["paused"]


def test_the_run_raises_done_events_itself(built: Any) -> None:
    module = built[0]
    run = module.Jobs()
    with pytest.raises(module._api.EventNotAccepted, match="raises it itself"):
        run.send("done.state.work")
    assert "done.state.work" not in [e.value for e in run.allowed_events]
    assert not hasattr(run, "done_state_work")  # no method for it


def test_a_failing_done_action_undoes_the_whole_event(built: Any) -> None:
    module = built[0]

    class Failing(module.Jobs):  # type: ignore[misc, name-defined]
        def summarizing(self) -> None:
            raise RuntimeError("boom")

    run = Failing()
    run.go()
    run.found()
    before = run.record.to_json()
    with pytest.raises(RuntimeError, match="boom"):
        run.fetched()
    assert run.record.to_json() == before
    assert names(run) == ["work", "tools", "search", "searched", "fetch", "fetching"]
    assert [s.id for s in run.machine.configuration] == names(run)


def test_deep_history_resumes_the_nested_states_it_left(built: Any) -> None:
    module = built[0]
    run = module.Jobs()
    run.go()
    run.found()
    run.pause()
    assert run.record.remembered == {
        "work": ("tools", "search", "searched", "fetch", "fetching")}
    run.resume()
    assert names(run) == ["work", "tools", "search", "searched", "fetch", "fetching"]
    run.fetched()  # and the pending region still finishes the join
    assert names(run) == ["work", "summarize"]


def test_shallow_history_resumes_the_child_by_its_default_entry(built: Any) -> None:
    module = built[0]
    run = module.Jobs()
    run.go()
    run.found()
    run.pause()
    run.restart()
    assert names(run) == ["work", "tools", "search", "searching", "fetch", "fetching"]


def test_the_remembered_states_come_from_the_history(built: Any) -> None:
    module = built[0]
    record = module.JobsRecord.from_dict({
        "runId": "r", "specVersion": 1, "status": "paused", "configuration": ["paused"],
        "lastTransitionAt": "2026-01-01T00:00:00Z", "counts": {},
        "remembered": {"work": ["plan"]},
        "history": [{"event": "pause", "source": "work", "target": "paused",
                     "at": "2026-01-01T00:00:00Z", "values": {}}]})
    run = module.Jobs.restore(record)
    run.resume()
    assert names(run) == ["work", "plan"]


def test_history_never_left_enters_the_default(tmp_path: Path) -> None:
    spec = checked_text("""\
statechart: first
version: 1
initial: idle
states:
  idle: {on: {start: {target: work, history: deep}}}
  work:
    initial: a
    states:
      a: {on: {next: b}}
      b: {on: {stop: over}}
  over: {final: true}
""")
    assert spec is not None
    module = import_source(generate(spec)["generated/first.py"], tmp_path, "first")
    run = module.First()
    run.start()
    assert names(run) == ["work", "a"]
    assert run.record.remembered == {}


RESUME_ELSEWHERE = """\
import sys
sys.path.insert(0, sys.argv[1])
import jobs
run = jobs.Jobs.restore(jobs.JobsRecord.from_json(sys.stdin.read()))
run.resume()
print(run.record.to_json())
"""


def test_history_survives_json_and_another_process(built: Any) -> None:
    module, _, folder = built
    run = module.Jobs()
    run.go()
    run.fetched()
    run.pause()
    done = subprocess.run([sys.executable, "-c", RESUME_ELSEWHERE, str(folder)],
                          input=run.record.to_json(), capture_output=True, text=True,
                          check=True)
    resumed = module.Jobs.restore(module.JobsRecord.from_json(done.stdout))
    assert names(resumed) == ["work", "tools", "search", "searching", "fetch", "got"]
    resumed.found()
    assert names(resumed) == ["work", "summarize"]


def test_remembered_states_that_disagree_with_the_history_are_refused(built: Any) -> None:
    module = built[0]
    run = module.Jobs()
    run.go()
    run.pause()
    data = json.loads(run.record.to_json())
    data["remembered"] = {"work": ["plan"]}
    with pytest.raises(module.JobsInvalidRecord, match="remembered"):
        module.JobsRecord.from_dict(data)
    data["remembered"] = {"paused": []}
    with pytest.raises(module.JobsInvalidRecord, match="no history transition"):
        module.JobsRecord.from_dict(data)


def test_a_done_step_before_the_state_completed_is_refused(built: Any) -> None:
    module = built[0]
    run = module.Jobs()
    run.go()
    data = json.loads(run.record.to_json())
    data["history"].append({"event": "done.state.tools", "source": "tools",
                            "target": "summarize", "at": data["lastTransitionAt"],
                            "values": {}})
    data["configuration"] = ["work", "summarize"]
    with pytest.raises(module.JobsInvalidRecord, match="had not completed"):
        module.JobsRecord.from_dict(data)


def test_records_with_done_steps_and_remembered_states_match_the_json_schema(
        built: Any) -> None:
    module, schema, _ = built
    run = module.Jobs()
    run.go()
    run.found()
    run.pause()
    run.resume()
    run.fetched()
    jsonschema.validate(json.loads(run.record.to_json()), schema)
    assert "done.state.tools" in schema["$defs"]["step"]["properties"]["event"]["anyOf"][0]["enum"]


def test_a_rule_sees_what_a_deep_resume_may_enter() -> None:
    """`never` from `paused` to `fetching`: only the history transitions enter it."""
    text = SPEC + "rules:\n  - never: {from: paused, to: fetching}\n"
    result = check_source("jobs.yaml", text.encode())
    # resume (deep) may enter it; restart (shallow) re-enters `tools` by default: fetching
    assert [(d.rule, d.span.line) for d in result.errors] == [
        ("rule-violation", 34), ("rule-violation", 35)]
    plain = text.replace("resume: {target: work, history: deep}", "resume: work").replace(
        "restart: {target: work, history: shallow}", "restart: work")
    assert not check_source("jobs.yaml", plain.encode()).errors


def test_done_on_an_atomic_state_and_a_bad_history_kind_are_schema_errors() -> None:
    text = SPEC.replace("  review:\n", "  review:\n    done: accepted\n").replace(
        "history: shallow", "history: shalow")
    result = check_source("jobs.yaml", text.encode())
    messages = [(d.rule, d.message) for d in result.errors]
    assert ("schema", "`done` on atomic state `review`") in messages
    assert any(rule == "schema" and "`shalow`" in message for rule, message in messages)


def _kinds(old_text: str, new_text: str) -> list[tuple[str, bool]]:
    from statechart.diff import diff_specs
    old = check_source("old.yaml", old_text.encode()).spec
    new = check_source("new.yaml", new_text.encode()).spec
    assert old is not None and new is not None
    return [(c.kind, c.breaking) for c in diff_specs(old, new)]


def test_diff_follows_done_transitions_and_reports_history_changes() -> None:
    v2 = SPEC.replace("version: 1", "version: 2")
    assert _kinds(SPEC, v2.replace("history: deep", "history: shallow")) == [
        ("history-changed", True)]
    # Nobody sends `done`, but stored runs that took it have the step in their history.
    assert _kinds(SPEC, v2.replace("    done: review\n", "")) == [
        ("transition-removed", True)]
    guarded = v2.replace("done: review", "done: {target: review, guard: reviewed}")
    assert _kinds(SPEC, guarded) == [("guard-added", False)]  # nobody sends `done`
    renamed = v2.replace("  work:", "  job:").replace("initial: work", "initial: job").replace(
        "target: work", "target: job")
    assert ("event-removed", True) not in _kinds(SPEC, renamed)


def test_an_overlay_patches_and_removes_a_done_transition(tmp_path: Path) -> None:
    from statechart.linter import check_file
    (tmp_path / "jobs.yaml").write_text(SPEC)
    (tmp_path / "patched.yaml").write_text(
        "statechart: patched\nextends: jobs\nstates:\n  work:\n"
        "    done: {target: review, guard: reviewed}\n")
    result = check_file(tmp_path / "patched.yaml")
    assert result.spec is not None and not result.errors
    done = [t for t in result.spec.transitions() if t.trigger == "done" and t.source == "work"]
    assert [(t.target, t.guard) for t in done] == [("review", "reviewed")]
    assert result.spec.overlay is not None
    assert ("transition-replaced", "work.done.state.work") in result.spec.overlay.changes
    (tmp_path / "removed.yaml").write_text(
        "statechart: removed\nextends: jobs\nremove:\n  transitions: [tools.done.state.tools]\n")
    result = check_file(tmp_path / "removed.yaml")
    assert result.spec is not None
    assert not [t for t in result.spec.transitions() if t.source == "tools" and t.internal]


TOP_PARALLEL = """\
statechart: both
version: 1
initial: both
states:
  both:
    parallel: true
    done: {target: after_all, guard: may_go_on}
    on: {abort: over}
    states:
      r1:
        initial: a
        states:
          a: {on: {x: a_end}}
          a_end: {final: true}
      r2:
        initial: b
        states:
          b: {on: {y: b_end}}
          b_end: {final: true}
  after_all:
    on: {fin: over}
  over: {final: true}
"""


def test_a_top_level_parallel_state_with_done_goes_on_instead_of_ending(
        tmp_path: Path) -> None:
    spec = checked_text(TOP_PARALLEL)
    assert spec is not None
    module = import_source(generate(spec)["generated/both.py"], tmp_path, "both")
    run = module.Both()
    run.x()
    run.y()
    assert names(run) == ["after_all"]
    assert not run.is_terminated
    run.fin()
    assert run.is_terminated

    class Held(module.Both):  # type: ignore[misc, name-defined]
        def may_go_on(self) -> bool:
            return False

    held = Held()
    held.x()
    held.y()  # every region is done, the guard refuses: the run waits, and is not over
    assert names(held) == ["both", "r1", "a_end", "r2", "b_end"]
    assert not held.is_terminated
    restored = Held.restore(module.BothRecord.from_json(held.record.to_json()))
    restored.abort()  # the parallel state's own transitions still apply
    assert names(restored) == ["over"]
    held.abort()
    assert names(held) == ["over"] and held.is_terminated


def test_a_step_that_claims_another_way_of_entering_is_refused(built: Any) -> None:
    module = built[0]
    run = module.Jobs()
    run.go()
    run.pause()
    run.resume()
    data = json.loads(run.record.to_json())
    assert data["history"][-1]["history"] == "deep"
    data["history"][-1]["history"] = "shallow"
    with pytest.raises(module.JobsInvalidRecord, match="to `work` is taken by deep history, not by "
                       "shallow history"):
        module.JobsRecord.from_dict(data)
    del data["history"][-1]["history"]
    with pytest.raises(module.JobsInvalidRecord, match="not as an external one"):
        module.JobsRecord.from_dict(data)
