"""Multi-target transitions (`target: [a2, b2]`, SCXML `target="a2 b2"`): one transition
enters given states of several regions of one parallel state at once; its domain contains
every target; a step of the record names the first target (`"kind": "multi"`) and the replay
takes the others from the spec. The checker refuses targets that cannot be active together."""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import pytest
from codegen_support import checked_text, generate, import_source

from statechart.diff import diff_specs
from statechart.linter import check_source
from statechart.render import docs
from statechart.render.dot import dot_source
from statechart.render.mermaid import mermaid_source
from statechart_runtime.explore import Space

SPEC = """\
statechart: fork
version: 1
initial: idle
states:
  idle:
    on:
      start: {target: [a2, b3], actions: [note]}
      plain: work
  work:
    parallel: true
    entry: [en_work]
    states:
      ra:
        initial: a1
        entry: [en_ra]
        states:
          a1: {entry: [en_a1]}
          a2: {entry: [en_a2], on: {jump: {target: [a1, b1]}}}
      rb:
        initial: b1
        entry: [en_rb]
        states:
          b1: {entry: [en_b1], on: {next: b2}}
          b2: {entry: [en_b2]}
          b3: {entry: [en_b3]}
      rc:
        initial: c1
        entry: [en_rc]
        states:
          c1: {entry: [en_c1]}
    on: {stop: idle, finish: finished}
  finished: {final: true}
"""
ENTRIES = ("en_work", "en_ra", "en_rb", "en_rc", "en_a1", "en_a2", "en_b1", "en_b2", "en_b3",
           "en_c1", "note")


@pytest.fixture(scope="module")
def module(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    spec = checked_text(SPEC)
    assert spec is not None
    return import_source(generate(spec)["generated/fork.py"], tmp_path_factory.mktemp("mt"),
                         "fork")


def run_of(module: ModuleType) -> Any:
    log: list[str] = []
    logged = type("Logged", (module.Fork,), {
        n: (lambda name: lambda self: log.append(name))(n) for n in ENTRIES})
    run = logged(run_id="r")
    run.log = log
    return run


def active(run: Any) -> list[str]:
    return [s.value for s in run.record.configuration]


def test_enters_every_target_and_the_other_regions_by_default(module: ModuleType) -> None:
    run = run_of(module)
    run.start()
    assert active(run) == ["work", "ra", "a2", "rb", "b3", "rc", "c1"]
    # SCXML order: the transition's actions, then every entry in document order
    assert run.log == ["note", "en_work", "en_ra", "en_a2", "en_rb", "en_b3", "en_rc", "en_c1"]
    assert sorted(s.value for s in run.machine.configuration) == sorted(active(run))
    (step,) = run.record.history
    assert (step.source.value, step.target.value, step.kind) == ("idle", "a2", "multi")
    assert json.loads(run.record.to_json())["history"][0]["kind"] == "multi"


def test_its_domain_holds_every_target(module: ModuleType) -> None:
    run = run_of(module)
    run.start()
    run.log.clear()
    run.jump()  # from a2 (region ra) to a1 and b1: the domain is above `work`: all re-entered
    assert active(run) == ["work", "ra", "a1", "rb", "b1", "rc", "c1"]
    assert run.log == ["en_work", "en_ra", "en_a1", "en_rb", "en_b1", "en_rc", "en_c1"]


def test_a_stored_run_replays_and_restores(module: ModuleType) -> None:
    run = run_of(module)
    run.start()
    text = run.record.to_json()
    record = module.ForkRecord.from_json(text)  # the integrity check replays the history
    assert [s.value for s in record.configuration] == active(run)
    restored = module.Fork.restore(record)
    restored.jump()
    assert "b1" in active(restored)
    forged = json.loads(text)
    del forged["history"][0]["kind"]  # a plain `idle -start-> a2`: no such transition
    with pytest.raises(module.ForkInvalidRecord, match="no transition idle -start-> a2"):
        module.ForkRecord.from_json(json.dumps(forged))


def test_the_explorer_takes_it(module: ModuleType) -> None:
    space = Space(run_of(module).__class__)
    found = space.send(space.start(), "start", {})
    assert found is not None and {"a2", "b3", "c1"} <= set(found[1].configuration)


def rules(text: str) -> list[tuple[str, str]]:
    # what a refused target leaves unreachable (b3) is not the point here
    return [(d.rule, d.message) for d in check_source("f.yaml", text.encode()).errors
            if d.rule != "unreachable-state"]


def test_checks() -> None:
    assert rules(SPEC) == []
    assert rules(SPEC.replace("[a2, b3]", "[a2, a1]")) == [
        ("invalid-multi-target", "`idle` on `start`: targets `a2` and `a1` cannot be active "
         "together (both are in `ra`, which has one active child)")]
    assert rules(SPEC.replace("[a2, b3]", "[ra, a1]")) == [
        ("invalid-multi-target", "`idle` on `start`: targets `ra` and `a1` cannot be active "
         "together (one is inside the other)")]
    assert rules(SPEC.replace("[a2, b3]", "[a2, idle]"))[0][0] == "invalid-multi-target"
    assert rules(SPEC.replace("[a2, b3]", "[a2, b33]")) == [
        ("unknown-state", "target `b33` is not a state of this spec")]
    assert rules(SPEC.replace("{target: [a2, b3], actions: [note]}",
                              "[{target: [a2, b3], guard: g}, {target: [a2, b1]}]")) == [
        ("invalid-multi-target", "`idle` on `start`: two alternatives have targets that start "
         "with `a2`; a step of the run record names only the first")]
    assert rules(SPEC.replace("{target: [a2, b3], actions: [note]}",
                              "[{target: [a2, b3], guard: g}, {target: [b1, a2]}]")) == []
    assert [r for r, _ in rules(SPEC.replace("[a2, b3]", "[a2]"))] == ["schema"]
    assert [r for r, _ in rules(SPEC.replace("[a2, b3]", "[a2, b3], history: deep"))] == [
        "invalid-multi-target"]


def test_reachability_and_rules_see_every_target() -> None:
    # b3 is entered only by the multi-target transition
    assert rules(SPEC) == []
    broken = SPEC.replace("  idle:\n", "  idle:\n").replace(
        "initial: idle\n", "initial: idle\nrules:\n  - never: {from: idle, to: b3}\n")
    assert [r for r, _ in rules(broken)] == ["rule-violation"]
    assert "`idle` -start-> `[a2, b3]`" in rules(broken)[0][1]


def test_diagrams_docs_and_diff() -> None:
    spec = checked_text(SPEC)
    assert spec is not None
    dot = dot_source(spec)
    assert dot.count('label="start (a2 + b3)') == 2  # one edge per target
    assert mermaid_source(spec).count(": start (a2 #43; b3)") == 2  # `+` escaped
    page = docs.outputs(spec)["docs/specs/fork.md"].decode()
    assert "| `start` | `idle` | `a2`, `b3` |" in page
    new = checked_text(SPEC.replace("[a2, b3]", "[a2, b3, c1]"))
    assert new is not None
    (change,) = [c for c in diff_specs(spec, new) if c.kind == "targets-changed"]
    assert change.message == "`idle` on `start` now enters [a2, b3, c1] (was [a2, b3])"
    assert change.for_runs
