"""Open event families: an event no `on:` key names, but whose name has a listed event as a
token prefix (`error.tool.ratelimit` under `error.tool`), is taken by the transitions that
take that event (the most specific key, as SCXML's descriptors select), sets their fields and
is recorded by its full name: in memory, in the JSON record and its schema, in a replay, and
on both store backends. A name no listed event is a prefix of stays `unknown`."""

from __future__ import annotations

import pickle
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from codegen_support import validator
from store_support import Backend, import_with_schema

from statechart_runtime.api import EventNotAccepted
from statechart_runtime.store import open_store

SPEC = """\
statechart: agent_family
version: 1
initial: running
record:
  reason: {type: string}
states:
  running:
    initial: thinking
    on:
      error.tool.timeout: {target: retrying}
      error.tool: {target: retrying, guard: can_retry}
      error: {target: failed, set: [reason]}
      cancel: failed
    states:
      thinking:
        on:
          call: calling
          "*": paused
      calling: {}
  paused: {on: {resume: running}}
  retrying: {on: {resume: running}}
  failed: {final: true}
"""


@pytest.fixture(scope="module")
def family(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return import_with_schema(SPEC, tmp_path_factory.mktemp("family"), "agent_family_test")


def make(module: ModuleType, retry: bool = True) -> Any:
    class Agent(module.AgentFamily):  # type: ignore[name-defined,misc]
        def can_retry(self) -> bool:
            return retry
    return Agent(run_id="r")


def active(run: Any) -> list[str]:
    return [s.value for s in run.record.configuration]


# (events sent, with values; whether can_retry says yes) -> the configuration after, and
# the events the history records, in order.
CASES = [
    # from calling (no own key): running's most specific key that takes it
    ([("call", {}), ("error.tool.ratelimit", {})], True, ["retrying"],
     ["call", "error.tool.ratelimit"]),
    ([("call", {}), ("error.tool.timeout.connect", {})], True, ["retrying"],
     ["call", "error.tool.timeout.connect"]),
    # `error.tool`'s guard says no: the family's `error` (written after it) takes it
    ([("call", {}), ("error.tool.ratelimit", {"reason": "429"})], False, ["failed"],
     ["call", "error.tool.ratelimit"]),
    ([("call", {}), ("error.model.overloaded", {"reason": "busy"})], True, ["failed"],
     ["call", "error.model.overloaded"]),
    # from thinking: its `*` takes a family's member before running's keys
    ([("error.tool.ratelimit", {})], True, ["paused"], ["error.tool.ratelimit"]),
    ([("cancel.by_user", {})], True, ["paused"], ["cancel.by_user"]),
    ([("call", {}), ("cancel.by_user", {})], True, ["failed"], ["call", "cancel.by_user"]),
    # two members in a row, then back by a listed event
    ([("error.x", {}), ("resume.now", {}), ("call", {}), ("error.tool.a.b.c", {})], True,
     ["retrying"], ["error.x", "resume.now", "call", "error.tool.a.b.c"]),
]


@pytest.mark.parametrize(("sent", "retry", "after", "recorded"), CASES)
def test_a_member_is_taken_by_its_family_and_recorded_by_name(
        family: ModuleType, sent: list[tuple[str, dict[str, str]]], retry: bool,
        after: list[str], recorded: list[str]) -> None:
    run = make(family, retry)
    for event, values in sent:
        run.send(event, **values)
    assert active(run) == after
    history = run.record.history
    assert [step.event.value for step in history] == recorded
    data = run.record.to_dict()
    assert [step["event"] for step in data["history"]] == recorded
    validator(family_schema(family)).validate(data)
    # the record replays (check_record) and round-trips; a copy keeps the names
    again = family.AgentFamilyRecord.from_dict(data)
    assert again.to_dict() == data
    restored = make(family, retry).__class__(again)
    assert active(restored) == after
    assert [s.event.value for s in pickle.loads(pickle.dumps(again)).history] == recorded


def family_schema(module: ModuleType) -> bytes:
    return (Path(module.__file__).parent / "agent_family.schema.json").read_bytes()


@pytest.mark.parametrize("name", [
    "errors.tool",          # `error` is not a token prefix of `errors`
    "tool.error",           # no listed event is its prefix (`*` does not open the set)
    "error.",               # not well formed
    "error..x",
    "error.1x",
    "error.tool-x",
    "done.state.running.x",  # the run's own events have no family
    "after.delay1.x",
    "always.x",
    "error." + "x" * 200,   # longer than a name may be
])
def test_a_name_no_listed_event_is_a_prefix_of_is_unknown(family: ModuleType,
                                                          name: str) -> None:
    run = make(family)
    with pytest.raises(EventNotAccepted, match=r"the spec has no such event") as caught:
        run.send(name)
    assert caught.value.cause == "unknown" and not run.record.history


def test_a_member_sets_only_what_its_transitions_set(family: ModuleType) -> None:
    run = make(family, retry=True)
    run.call()
    with pytest.raises(TypeError, match="takes no value `nope`"):
        run.send("error.tool.ratelimit", nope="x")
    other = make(family)
    other.call()
    with pytest.raises(family.AgentFamilyMissingField):
        other.send("error.model.x")  # taken by `error`, which sets `reason`
    assert active(run) == active(other) == ["running", "calling"]
    assert not run.record.history[1:] and not other.record.history[1:]


def test_a_stored_history_with_an_unknown_member_is_refused(family: ModuleType) -> None:
    run = make(family)
    run.call()
    run.send("error.tool.ratelimit")
    data = run.record.to_dict()
    data["history"][1]["event"] = "oops.tool.ratelimit"
    with pytest.raises(family.AgentFamilyInvalidRecord, match="unknown event"):
        family.AgentFamilyRecord.from_dict(data)
    # recorded under a member whose family has no such transition: refused by the replay
    data["history"][1]["event"] = "cancel.x"
    with pytest.raises(family.AgentFamilyInvalidRecord, match="no transition"):
        family.AgentFamilyRecord.from_dict(data)


def test_a_member_fired_on_either_store_backend(family: ModuleType, backend: Backend) -> None:
    store = open_store(backend.url)
    try:
        cls = make(family).__class__
        store.create(cls(run_id="s"))
        store.fire(cls, "s", "call")
        with pytest.raises(EventNotAccepted, match="no such event"):
            store.fire(cls, "s", "tool.error")
        fired = store.fire(cls, "s", "error.model.overloaded", reason="busy",
                           idempotency_key="k1")
        assert fired.applied
        assert not store.fire(cls, "s", "error.model.overloaded", reason="busy",
                              idempotency_key="k1").applied
        loaded = store.load(cls, "s")
        assert [s.event.value for s in loaded.record.history] == [
            "call", "error.model.overloaded"]
        assert loaded.record.reason == "busy" and active(loaded) == ["failed"]
        assert [row.event for row in store.history("s")] == ["call", "error.model.overloaded"]
    finally:
        store.close()
