"""Names that clash in Python or python-statemachine are mapped, not refused (statechart.names,
docs/generated-code.md "Names"): a spec using them builds, type-checks, runs, saves and
restores, and its names stay its names everywhere the user sees them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from codegen_support import checked_text, generate, import_source

from statechart import names
from statechart.rules import invalid_name

SPEC = """\
statechart: clashing_names
version: 1
initial: state
record:
  record: {type: string}
  class: {enum: [mro, class, on_hold]}
  to_dict: {type: integer}
  self: {type: boolean}
states:
  state:
    entry: [before_launch]
    on:
      send: {target: on_hold, set: [record, class]}
      status: history
  on_hold:
    exit: [on_enter_state]
    on:
      record: {target: error_handling, guard: after_review, set: [to_dict]}
      error_state: history
  error_handling:
    initial: mro
    states:
      mro:
        on: {on_exit_mro: class}
      class:
        on: {done_state_x: history}
  history:
    on:
      restore: {target: done, set: [self]}
      has_tag: state
  done: {final: true}
"""
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def module(tmp_path_factory: pytest.TempPathFactory) -> Any:
    spec = checked_text(SPEC)
    assert spec is not None, "check refuses names it should map"
    source = generate(spec)["generated/clashing_names.py"]
    folder = tmp_path_factory.mktemp("names")
    (folder / "clashing_names.py").write_bytes(source)
    mypy = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental",
                           str(folder / "clashing_names.py")],
                          capture_output=True, text=True, cwd=ROOT, check=False)
    assert mypy.returncode == 0, mypy.stdout
    return import_source(source, folder, "clashing_names")


def test_mapped_names_keep_the_spec_names_as_values(module: Any) -> None:
    state, event, kind = (module.ClashingNamesState, module.ClashingNamesEvent,
                          module.ClashingNamesClass)
    assert [m.value for m in state] == ["state", "on_hold", "error_handling", "mro", "class",
                                        "history", "done"]
    assert state.state_mro.value == "mro" and state.state_class.value == "class"
    assert state.on_hold.value == "on_hold"  # a valid member name stays the member's name
    assert event.send.value == "send"
    assert [m.value for m in kind] == ["mro", "class", "on_hold"]
    assert kind.value_mro.value == "mro" and kind.value_class.value == "class"
    facade = module.ClashingNames
    for method in ("event_send", "event_status", "event_record", "event_error_state",
                   "event_on_exit_mro", "event_done_state_x", "event_restore",
                   "event_has_tag", "guard_after_review", "action_before_launch",
                   "action_on_enter_state"):
        assert callable(getattr(facade, method)), method
    machine = module.ClashingNamesMachine
    assert set(machine.states_map) == {m.value for m in state}


def test_a_run_with_clashing_names_runs_saves_and_restores(module: Any) -> None:
    log: list[str] = []

    class Run(module.ClashingNames):  # type: ignore[misc, name-defined]
        def action_before_launch(self) -> None:
            log.append("before_launch")

        def action_on_enter_state(self) -> None:
            log.append("on_enter_state")

        def guard_after_review(self) -> bool:
            log.append("after_review")
            return True

    state, kind = module.ClashingNamesState, module.ClashingNamesClass
    run = Run(run_id="r1")
    assert log == ["before_launch"]  # no convention callback ran
    assert run.status is state.state
    assert [e.value for e in run.allowed_events] == ["send", "status"]
    run.event_send(record="r", field_class=kind.value_mro)
    assert run.status is state.on_hold and run.record.record == "r"
    assert run.record.field_class is kind.value_mro
    run.send("record", to_dict=3)  # by the spec's name
    assert log == ["before_launch", "after_review", "on_enter_state"]
    assert run.configuration == (state.error_handling, state.state_mro)
    assert run.record.field_to_dict == 3
    data = json.loads(run.record.to_json())
    assert {k: data[k] for k in ("record", "class", "to_dict")} == {
        "record": "r", "class": "mro", "to_dict": 3}
    assert data["configuration"] == ["error_handling", "mro"]
    assert [step["event"] for step in data["history"]] == ["send", "record"]

    restored = Run.restore(module.ClashingNamesRecord.from_json(run.record.to_json()))
    assert restored.record == run.record
    restored.send("on_exit_mro")
    restored.event_done_state_x()
    assert restored.status is state.history
    restored.event_restore(field_self=True)
    assert restored.is_terminated and restored.record.field_self is True
    assert module.ClashingNamesRecord.from_dict(restored.record.to_dict()) == restored.record
    with pytest.raises(module._api.EventNotAccepted, match="event `send`"):
        restored.send("send")


def test_invalid_name_refuses_only_what_cannot_be_represented() -> None:
    assert checked_text(SPEC.replace("  history:\n", "  ﬁnal:\n")
                        .replace("target: history", "target: ﬁnal")
                        .replace("x: history", "x: ﬁnal")
                        .replace("status: history", "status: ﬁnal")
                        .replace("error_state: history", "error_state: ﬁnal")) is None
    assert names.suggestion("ﬁnal") == "final"
    assert names.suggestion("in review") == "in_review"
    assert names.suggestion("2fa") == "n_2fa"
    assert "cannot be represented" in (invalid_name.__doc__ or "")


def test_python_names_are_unique_and_never_clash() -> None:
    taken = {"send", "state_send", "on_hold"}
    mapped = names.python_names(["send", "on_hold"], "state", names.member_needs_mapping, taken)
    assert mapped == {"send": "state_send_", "on_hold": "state_on_hold"}


@pytest.mark.parametrize("case", ["api_names", "python_keywords"])
def test_hostile_names_once_refused_now_build_and_run(case: str, tmp_path: Path) -> None:
    text = (ROOT / "tests" / "hostile" / f"{case}.yaml").read_text("utf-8")
    spec = checked_text(text)
    assert spec is not None
    module = import_source(generate(spec)["generated/hostile.py"], tmp_path, case)
    run = module.Hostile(run_id="h")
    for event in (["start", "states", "x"] if case == "api_names" else ["start", "None"]):
        run.send(event)
    assert run.is_terminated and run.status.value == "done"
    assert [s.event.value for s in run.record.history][-1] in ("x", "None")


def test_the_frozen_keyword_list_covers_this_python() -> None:
    import keyword

    assert set(keyword.kwlist) <= names.PYTHON_KEYWORDS


def test_nested_states_named_like_a_state_attribute_build_and_run(tmp_path: Path) -> None:
    """A nested state becomes an attribute of its parent's python-statemachine `State`:
    `to`, `parent`, `value`, ... are mapped (found by the soundness property: `to` made the
    module fail at import)."""
    spec = checked_text("""\
statechart: attrs
version: 1
initial: w
states:
  w:
    initial: to
    states:
      to: {on: {go: parent}}
      parent: {on: {go2: value}}
      value: {on: {go3: states}}
      states: {on: {stop: end}}
  end: {final: true}
""")
    assert spec is not None
    module = import_source(generate(spec)["generated/attrs.py"], tmp_path, "attrs")
    run = module.Attrs()
    for event in ("go", "go2", "go3"):
        run.send(event)
    assert [s.value for s in run.configuration] == ["w", "states"]
    restored = module.Attrs.restore(module.AttrsRecord.from_json(run.record.to_json()))
    restored.send("stop")
    assert restored.is_terminated
    for name in ("to", "parent", "value", "states"):
        assert names.member_needs_mapping(name)
