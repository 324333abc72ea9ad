"""Transition actions (`actions:` on a transition, a `done:` or a timer alternative): run after
the exit actions and before the entry actions (SCXML's order), once per step, declared by the
generated class like entry and exit actions."""

from __future__ import annotations

import datetime as dt
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

T0 = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)

SPEC = """\
statechart: review
version: 1
initial: drafting
record:
  note: {type: string}
states:
  drafting:
    entry: [en_drafting]
    exit: [ex_drafting]
    on:
      submit: {target: review, actions: [notify_approver, log_submit]}
      annotate: {set: [note], actions: [log_note]}
    after:
      1d: {target: review, actions: [remind]}
  review:
    initial: reading
    entry: [en_review]
    exit: [ex_review]
    on:
      comment: {target: commenting, internal: true, actions: [log_comment]}
      back: {target: review, history: deep, actions: [log_back]}
      leave: drafting
    done: {target: closed, actions: [archive]}
    states:
      reading: {exit: [ex_reading], on: {finish: read}}
      commenting: {entry: [en_commenting], on: {finish: read}}
      read: {final: true}
  closed: {final: true, entry: [en_closed]}
"""


@pytest.fixture(scope="module")
def module(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    spec = checked_text(SPEC)
    assert spec is not None
    return import_source(generate(spec)["generated/review.py"],
                         tmp_path_factory.mktemp("actions"), "review")


def run_of(module: ModuleType) -> Any:
    class Review(module.Review):  # type: ignore[misc, name-defined]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self.log: list[str] = []
            super().__init__(*args, **kwargs)

    spec = checked_text(SPEC)
    assert spec is not None
    for action in spec.actions():
        setattr(Review, action, lambda self, name=action: self.log.append(name))
    return Review(run_id="r", clock=lambda: T0)


def test_actions_run_between_the_exits_and_the_entries(module: ModuleType) -> None:
    run = run_of(module)
    run.log.clear()
    run.submit()
    assert run.log == ["ex_drafting", "notify_approver", "log_submit", "en_review"]
    run.log.clear()
    run.comment()  # internal: `review` is neither exited nor entered
    assert run.log == ["ex_reading", "log_comment", "en_commenting"]
    run.log.clear()
    run.finish()  # completes `review`: its `done:` runs its action in the same send
    assert run.log == ["ex_review", "archive", "en_closed"]


def test_a_targetless_transition_and_a_timer_run_theirs(module: ModuleType) -> None:
    run = run_of(module)
    run.log.clear()
    run.annotate(note="typo")
    assert run.log == ["log_note"] and run.record.note == "typo"
    run.log.clear()
    assert run.fire_due(T0 + dt.timedelta(days=1)) == ["after.delay1.drafting"]
    assert run.log == ["ex_drafting", "remind", "en_review"]


def test_a_history_transition_runs_its_actions_once(module: ModuleType) -> None:
    run = run_of(module)
    run.submit()
    run.log.clear()
    run.back()  # `review` was never left: its history enters it by its default
    assert run.log == ["ex_reading", "ex_review", "log_back", "en_review"]


def test_the_generated_class_declares_them(module: ModuleType) -> None:
    facade = module.Review
    for name in ("notify_approver", "log_submit", "log_note", "remind", "archive"):
        assert callable(getattr(facade, name))
        assert "transition action" in (getattr(facade, name).__doc__ or "")
    assert facade(run_id="x").notify_approver() is None  # the default does nothing


def test_an_action_name_is_checked_like_a_state_action() -> None:
    bad = SPEC.replace("actions: [remind]", "actions: [review]")
    assert [d.rule for d in check_source("review.yaml", bad.encode()).errors] == [
        "invalid-name"]


def test_diff_and_pictures() -> None:
    old, new = checked_text(SPEC), checked_text(SPEC.replace(", log_submit", ""))
    assert old is not None and new is not None
    (change,) = [c for c in diff_specs(old, new) if c.kind == "transition-actions-changed"]
    assert change.message == ("`drafting` on `submit` now runs `notify_approver` (was "
                              "`notify_approver`, `log_submit`)")
    assert not change.for_runs and not change.for_callers
    assert "do: notify_approver, log_submit" in dot_source(old)
    assert "/ do#58; notify_approver, log_submit" in mermaid_source(old)
    page = docs.outputs(old)["docs/specs/review.md"].decode()
    assert "Runs `notify_approver`, `log_submit`." in page


def test_the_schema_takes_them(tmp_path: Path) -> None:
    from statechart.spec_format import json_schema

    props = json_schema()["$defs"]["transition"]["properties"]
    assert "actions" in props
