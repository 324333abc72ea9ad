"""`in:` conditions on a transition (SCXML `In()`): the alternative is enabled only while the
named states are all active, asked against the configuration before the step; the checker
reports an `in:` state that can never be active alongside the source; diagrams show it like a
guard; diff calls a change `in-changed`."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from codegen_support import checked_text, generate, import_source

from statechart.diff import diff_specs
from statechart.linter import check_source
from statechart.render import docs
from statechart.render.dot import dot_source
from statechart.render.mermaid import mermaid_source
from statechart_runtime.api import EventNotAccepted
from statechart_runtime.explore import Space

SPEC = """\
statechart: purchase
version: 1
initial: review
states:
  review:
    parallel: true
    states:
      approval:
        initial: pending
        states:
          pending:
            on:
              approve:
                - {target: approved, in: within_budget}
                - {target: escalated, in: [over_budget, flagged], guard: may_escalate}
                - {target: held}
          approved: {final: true}
          escalated: {final: true}
          held: {final: true}
      budget:
        initial: within_budget
        states:
          within_budget: {on: {spend: over_budget}}
          over_budget: {on: {flag: flagged}}
          flagged: {}
    on:
      cancel: cancelled
  cancelled: {final: true}
"""


@pytest.fixture(scope="module")
def module(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    spec = checked_text(SPEC)
    assert spec is not None
    return import_source(generate(spec)["generated/purchase.py"],
                         tmp_path_factory.mktemp("in"), "purchase")


def run_of(module: ModuleType, escalate: bool = True) -> Any:
    class Purchase(module.Purchase):  # type: ignore[misc, name-defined]
        def may_escalate(self) -> bool:
            return escalate

    return Purchase(run_id="r")


def active(run: Any) -> set[str]:
    return {s.value for s in run.record.configuration}


def test_enabled_while_the_state_is_active(module: ModuleType) -> None:
    run = run_of(module)
    run.approve()
    assert {"approved", "within_budget"} <= active(run)
    steps = run.record.history
    assert (steps[-1].source.value, steps[-1].target.value) == ("pending", "approved")


def test_not_enabled_otherwise_the_next_alternative_is_tried(module: ModuleType) -> None:
    run = run_of(module)
    run.spend()  # budget: over_budget; `flagged` not active: the second alternative is off
    run.approve()
    assert "held" in active(run) and "approved" not in active(run)


def test_a_list_needs_every_state_and_the_guard_too(module: ModuleType) -> None:
    run = run_of(module)
    run.spend()
    run.flag()  # over_budget left for flagged: still not both active
    run.approve()
    assert "held" in active(run)
    # `in:` is asked before the guard, and only an enabled one reaches it
    spec = checked_text(SPEC.replace("in: [over_budget, flagged]", "in: [budget, flagged]"))
    assert spec is not None
    mod = import_source(generate(spec)["generated/purchase.py"], Path(module.__file__).parent,
                        "purchase2")
    for escalate, reached in ((True, "escalated"), (False, "held")):
        run = run_of(mod, escalate)
        run.spend()
        run.flag()
        run.approve()
        assert reached in active(run)


def test_refused_by_in_alone_names_the_states(module: ModuleType) -> None:
    spec = checked_text(SPEC.replace("                - {target: held}\n", "")
                        .replace("          held: {final: true}\n", ""))
    assert spec is not None
    mod = import_source(generate(spec)["generated/purchase.py"], Path(module.__file__).parent,
                        "purchase3")
    run = run_of(mod)
    run.spend()
    with pytest.raises(EventNotAccepted) as caught:
        run.approve()
    # The guard of the second alternative is not asked: its `in:` already says no.
    assert caught.value.cause == "in"
    assert caught.value.inactive == ("within_budget", "flagged")
    assert str(caught.value) == ("event `approve`: it needs `within_budget`, `flagged` active "
                                 "(`in:`) (in review, approval, pending, budget, over_budget)")
    assert "pending" in active(run)  # nothing changed


def test_the_explorer_asks_it(module: ModuleType) -> None:
    # `statechart paths` and the generated tests step through the same kernel.select.
    space = Space(run_of(module).__class__)
    start = space.start()
    found = space.send(start, "approve", {})
    assert found is not None and "approved" in found[1].configuration
    spent = space.send(start, "spend", {})
    assert spent is not None
    found = space.send(spent[1], "approve", {})
    assert found is not None and "held" in found[1].configuration


def test_the_generated_module_holds_the_table() -> None:
    spec = checked_text(SPEC)
    assert spec is not None
    text = generate(spec)["generated/purchase.py"].decode()
    assert "('pending', 'approve', 0): ('within_budget',)," in text
    assert "('pending', 'approve', 1): ('over_budget', 'flagged')," in text


def rules(text: str) -> list[tuple[str, str]]:
    return [(d.rule, d.message) for d in check_source("purchase.yaml", text.encode()).errors]


def test_an_in_state_never_active_alongside_the_source() -> None:
    found = rules(SPEC.replace("in: within_budget", "in: held"))
    assert found == [("in-never-active", "`pending` on `approve` needs `held` active (`in:`), "
                      "which is never active while `pending` is: the transition is never "
                      "taken")]
    assert rules(SPEC.replace("in: within_budget", "in: cancelled"))[0][0] == "in-never-active"
    # another region: fine
    assert rules(SPEC.replace("in: within_budget", "in: budget")) == []
    # an ancestor: always active, so the alternative is unguarded after all, and the states
    # only the alternatives after it enter are never entered
    for name in ("review", "approval"):
        found = rules(SPEC.replace("in: within_budget", f"in: {name}"))
        assert [r for r, _ in found] == ["ambiguous-transition", "unreachable-state",
                                         "unreachable-state"]
        assert found[1:] == [
            ("unreachable-state", "state `escalated` is unreachable from `review`"),
            ("unreachable-state", "state `held` is unreachable from `review`")]


def test_an_unknown_in_state() -> None:
    ((rule, message),) = rules(SPEC.replace("in: within_budget", "in: within_budgte"))
    assert (rule, message) == ("unknown-state",
                               "`in:` state `within_budgte` is not a state of this spec")


def test_ambiguity_counts_in_as_part_of_the_condition() -> None:
    # Unguarded but with `in:`: the next alternative is still tried.
    assert rules(SPEC) == []
    twice = SPEC.replace("- {target: held}", "- {target: held, in: within_budget}")
    assert [r for r, _ in rules(twice)] == ["ambiguous-transition"]


def test_diagrams_and_docs_show_it_like_a_guard() -> None:
    spec = checked_text(SPEC)
    assert spec is not None
    assert "approve [in within_budget]" in dot_source(spec)
    assert "approve [may_escalate, in over_budget, in flagged]" in dot_source(spec)
    assert "approve #91;in within_budget#93;" in mermaid_source(spec)
    page = docs.outputs(spec)["docs/specs/purchase.md"].decode()
    assert "in `within_budget`" in page


def test_diff_in_changed() -> None:
    old = checked_text(SPEC)
    new = checked_text(SPEC.replace("in: within_budget", "in: over_budget"))
    assert old is not None and new is not None
    (change,) = [c for c in diff_specs(old, new) if c.kind == "in-changed"]
    assert change.message == ("`pending` on `approve` is now enabled only in `over_budget` "
                              "(was only in `within_budget`)")
    assert change.for_callers and not change.for_runs


def test_the_schema_takes_it() -> None:
    from statechart.spec_format import json_schema

    schema = json_schema()["$defs"]
    assert "in" in schema["transition"]["properties"]


LOOP = """\
statechart: loop
version: 1
initial: par
states:
  par:
    parallel: true
    states:
      job:
        initial: working
        done: {target: finished, in: CONDITION}
        states:
          working: {on: {finish: finished}}
          finished: {final: true}
      side:
        initial: idle
        states:
          idle: {on: {go: busy}}
          busy: {on: {stop: ended}}
          ended: {final: true}
    done: closed
  closed: {final: true}
"""


def test_completion_loop_sees_through_in() -> None:
    # `in:` a state of another region can stop the loop; `in:` its own ancestor cannot.
    assert "completion-loop" not in [r for r, _ in rules(LOOP.replace("CONDITION", "idle"))]
    assert "completion-loop" in [r for r, _ in rules(LOOP.replace("CONDITION", "par"))]
