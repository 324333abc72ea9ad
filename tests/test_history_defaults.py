"""History defaults (`history_default:`, SCXML's `<history><transition target=.../>`): a
history transition into a state that remembers nothing yet enters the named state, not the
state's default entry; once the state was left, the history is what counts. The checker
refuses a default outside the state; a shallow one may be deeper than a child, as in SCXML."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from codegen_support import checked_text, generate, import_source

from statechart.diff import diff_specs
from statechart.linter import check_source
from statechart.render import docs

SPEC = """\
statechart: resumable
version: 1
initial: idle
states:
  idle:
    on:
      start: {target: work, history: deep}
      peek: {target: work, history: shallow}
      go: work
  work:
    initial: plan
    history_default: {deep: checking, shallow: review}
    entry: [en_work]
    states:
      plan: {entry: [en_plan], on: {next: review}}
      review:
        initial: reading
        entry: [en_review]
        states:
          reading: {entry: [en_reading], on: {next: checking}}
          checking: {entry: [en_checking]}
    on: {pause: idle, stop: stopped}
  stopped: {final: true}
"""


@pytest.fixture(scope="module")
def module(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    spec = checked_text(SPEC)
    assert spec is not None
    return import_source(generate(spec)["generated/resumable.py"],
                         tmp_path_factory.mktemp("hd"), "resumable")


def run_of(module: ModuleType) -> Any:
    log: list[str] = []

    def logger(name: str) -> Any:
        return lambda self: log.append(name)

    names = ("en_work", "en_plan", "en_review", "en_reading", "en_checking")
    logged = type("Logged", (module.Resumable,), {n: logger(n) for n in names})
    run = logged(run_id="r")
    run.log = log
    return run


def active(run: Any) -> list[str]:
    return [s.value for s in run.record.configuration]


def test_deep_history_enters_its_default_the_first_time(module: ModuleType) -> None:
    run = run_of(module)
    run.start()
    assert active(run) == ["work", "review", "checking"]
    # entered as SCXML enters the default transition's target: ancestors first
    assert run.log == ["en_work", "en_review", "en_checking"]
    assert [(s.source.value, s.target.value, s.history) for s in run.record.history] == [
        ("idle", "work", "deep")]


def test_shallow_history_enters_its_own_default(module: ModuleType) -> None:
    run = run_of(module)
    run.peek()
    assert active(run) == ["work", "review", "reading"]  # `review` by its default entry


def test_a_shallow_default_deeper_than_a_child_enters_the_path_down(
        tmp_path: Path) -> None:
    """SCXML's `<history type="shallow"><transition target="checking"/>` with `checking` a
    grandchild: the first time, `review` and `checking`; once left, the remembered child by
    its default entry."""
    spec = checked_text(SPEC.replace("{deep: checking, shallow: review}", "checking"))
    assert spec is not None
    deeper = import_source(generate(spec)["generated/resumable.py"], tmp_path, "resumable")
    run = run_of(deeper)
    run.peek()
    assert active(run) == ["work", "review", "checking"]
    assert run.log == ["en_work", "en_review", "en_checking"]
    run.pause()
    run.peek()  # remembers `review`: entered by its default entry
    assert active(run) == ["work", "review", "reading"]


def test_once_left_the_history_counts_not_the_default(module: ModuleType) -> None:
    run = run_of(module)
    run.send("start")
    run.pause()  # work remembers review, checking
    run.start()
    assert active(run) == ["work", "review", "checking"]
    run2 = run_of(module)
    run2.send("peek")
    run2.send("pause")  # work remembers review, reading (the default did not change it)
    run2.send("start")
    assert active(run2) == ["work", "review", "reading"]


def test_a_stored_run_replays_and_restores(module: ModuleType) -> None:
    run = run_of(module)
    run.start()
    run.pause()
    restored = module.Resumable.restore(module.ResumableRecord.from_json(run.record.to_json()))
    restored.start()
    assert active(restored) == ["work", "review", "checking"]
    # from_json replays the history (the integrity check): the default is recomputed
    again = module.ResumableRecord.from_json(restored.record.to_json())
    assert [s.value for s in again.configuration] == ["work", "review", "checking"]


def test_the_machine_agrees(module: ModuleType) -> None:
    # python-statemachine's own configuration follows the default (the HistoryState's
    # default transition is generated from `history_default:`).
    run = run_of(module)
    run.start()
    assert sorted(s.value for s in run.machine.configuration) == [
        "checking", "review", "work"]


def rules(text: str) -> list[tuple[str, str]]:
    return [(d.rule, d.message) for d in check_source("r.yaml", text.encode()).errors]


def test_checks() -> None:
    assert rules(SPEC) == []
    # A shallow default deeper than a child: SCXML allows it (its targets are descendants)
    assert rules(SPEC.replace("{deep: checking, shallow: review}", "checking")) == []
    assert rules(SPEC.replace("{deep: checking, shallow: review}", "review")) == []
    assert rules(SPEC.replace("deep: checking", "deep: stopped")) == [
        ("invalid-history-default", "history default `stopped` of `work` is not inside `work`")]
    assert rules(SPEC.replace("deep: checking", "deep: chekcing")) == [
        ("unknown-state", "history default `chekcing` is not a state of this spec")]
    found = check_source("r.yaml", SPEC.replace("  stopped: {final: true}",
                                                "  stopped: {final: true, history_default: x}")
                         .encode()).errors
    assert [d.rule for d in found] == ["schema"]


def test_reachability_counts_the_default() -> None:
    # `checking` is reached only through the deep history's default.
    text = SPEC.replace("{entry: [en_reading], on: {next: checking}}", "{}")
    assert rules(text) == []
    # and the default replaces the target's default entry: without `go`, `plan` (work's
    # initial child) is never entered
    assert rules(text.replace("      go: work\n", "")) == [
        ("unreachable-state", "state `plan` is unreachable from `idle`")]


def test_docs_page_and_diff() -> None:
    spec = checked_text(SPEC)
    assert spec is not None
    page = docs.outputs(spec)["docs/specs/resumable.md"].decode()
    assert ("| `work` | On entry: `en_work`. History default (entered by history when nothing "
            "is remembered): `checking` (deep), `review` (shallow). |") in page
    new = checked_text(SPEC.replace("deep: checking", "deep: reading"))
    assert new is not None
    (change,) = [c for c in diff_specs(spec, new) if c.kind == "history-default-changed"]
    assert change.message == ("`work` deep history now enters `reading` when nothing is "
                              "remembered (was `checking`)")
    assert change.for_runs
