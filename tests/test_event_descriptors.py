"""Event descriptors (SCXML): a dotted `on:` key also takes the events it is a token prefix
of (`error` takes `error.tool.timeout`, not `errors`), `"*"` takes every event; a state's keys
are tried in document order. Dotted events get Python names with `_` for the dots."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest
from codegen_support import checked_text, generate, import_source

from statechart.linter import check_source
from statechart.render.dot import dot_source
from statechart_runtime.api import EventNotAccepted

SPEC = """\
statechart: agent
version: 1
initial: running
record:
  reason: {type: string}
states:
  running:
    initial: thinking
    on:
      error.tool.timeout: {target: retrying, actions: [note]}
      error.tool: retrying
      error: {target: failed, set: [reason]}
      cancel: failed
    states:
      thinking:
        on:
          error.model: {target: thinking}
          call: calling
          "*": paused
      calling: {}
  paused: {on: {resume: running, errors: failed}}
  retrying: {on: {resume: running}}
  failed: {final: true}
"""


@pytest.fixture(scope="module")
def module(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    spec = checked_text(SPEC)
    assert spec is not None
    return import_source(generate(spec)["generated/agent.py"], tmp_path_factory.mktemp("ev"),
                         "agent")


def active(run: Any) -> list[str]:
    return [s.value for s in run.record.configuration] if hasattr(
        run.record, "configuration") else [run.record.status.value]


def test_a_prefix_takes_the_family(module: ModuleType) -> None:
    run = module.Agent(run_id="r")
    run.send("error.tool")  # thinking: `*` first (a descendant's transition beats an ancestor's)
    assert active(run) == ["paused"]
    run.resume()
    # the Python method of `error.tool.timeout`: `error_tool_timeout`, which starts like a
    # python-statemachine convention (`error_<x>`), so it is mapped as any such name
    run.event_error_tool_timeout()
    assert active(run) == ["paused"]  # `*` on thinking again


def test_document_order_and_the_family_from_an_ancestor(module: ModuleType) -> None:
    run = module.Agent(run_id="r")
    run.event_error_model()  # thinking's own `error.model` (before `*`)
    assert active(run) == ["running", "thinking"]
    # From `calling` (no own handler): running's keys in document order
    run2 = module.Agent(run_id="r2")
    run2.call()
    run2.send("error.tool.timeout")
    assert active(run2) == ["retrying"]
    step = run2.record.history[-1]
    # the step is recorded under the event sent
    assert (step.event.value, step.source.value, step.target.value) == (
        "error.tool.timeout", "running", "retrying")


def test_a_family_member_sets_what_the_family_sets(module: ModuleType) -> None:
    run = module.Agent(run_id="r")
    run.call()
    with pytest.raises(module.AgentMissingField):
        run.send("error.model")  # taken by `error`, which sets `reason`
    run.send("error.model", reason="model down")
    assert active(run) == ["failed"] and run.record.reason == "model down"
    assert module.AgentRecord.from_json(run.record.to_json()).reason == "model down"


def test_not_a_token_prefix_and_unknown_events(module: ModuleType) -> None:
    run = module.Agent(run_id="r")
    run.send("cancel")  # `*` takes it on thinking
    assert active(run) == ["paused"]
    with pytest.raises(EventNotAccepted) as caught:
        run.send("error")  # `errors` on paused does not take `error`
    assert caught.value.cause == "unhandled"
    with pytest.raises(EventNotAccepted) as caught:
        run.send("error.other")  # a member of `error`'s family, which paused does not handle
    assert caught.value.cause == "unhandled"
    with pytest.raises(EventNotAccepted) as caught:
        run.send("other.error")  # no event of the spec is a prefix of it
    assert caught.value.cause == "unknown"


def rules(text: str) -> list[tuple[str, str]]:
    return [(d.rule, d.message) for d in check_source("a.yaml", text.encode()).errors]


def test_checks() -> None:
    assert rules(SPEC) == []
    swapped = SPEC.replace("      error.tool.timeout: {target: retrying, actions: [note]}\n", "")\
        .replace("      error: {target: failed, set: [reason]}\n",
                 "      error: {target: failed, set: [reason]}\n"
                 "      error.tool.timeout: {target: retrying, actions: [note]}\n")
    assert rules(swapped) == [
        ("descriptor-order", "`running` on `error.tool.timeout`: written after `error.tool`, "
         "which also takes `error.tool.timeout` and is tried first (document order; XState "
         "would try the specific one first)")]
    assert [r for r, _ in rules(SPEC.replace('"*": paused', '"*": paused\n          x: paused'))
            ] == ["descriptor-order"]
    assert rules(SPEC.replace("call: calling", "call: {target: calling, guard: error_tool}")
                 ) == [("invalid-name", "guard `error_tool` has the name of an event")]
    assert rules(SPEC.replace("  retrying:", "  tool_x: {final: true}\n  retrying:").replace(
        "errors: failed", "errors: failed, tool.x: tool_x")) == [
        ("invalid-name", "event `tool.x` becomes the Python name `tool_x`, the name of a "
         "state")]
    assert [r for r, _ in rules(SPEC.replace("error.model", "done.model"))] == ["invalid-name"]
    assert [r for r, _ in rules(SPEC.replace("error.model", "error..model"))] == [
        "invalid-name"]


def test_generated_names_and_diagrams() -> None:
    spec = checked_text(SPEC)
    assert spec is not None
    text = generate(spec)["generated/agent.py"].decode()
    assert "def event_error_tool_timeout(self" in text
    assert "event_error_tool_timeout = 'error.tool.timeout'" in text  # the event enum member
    spec = checked_text(SPEC.replace("errors: failed", "errors: failed, tool.lost: failed"))
    assert spec is not None
    text = generate(spec)["generated/agent.py"].decode()
    assert "def tool_lost(self" in text and "tool_lost = 'tool.lost'" in text
    assert 'label="error.tool' in dot_source(spec)  # the spec's key, not the events it takes
    assert "label=\"* " in dot_source(spec) or 'label="*"' in dot_source(spec)
