"""A failing event changes nothing: the record and python-statemachine's configuration stay
together whatever raised (a guard, an action, an `after_` hook, a BaseException, an event sent
to the machine behind the facade's back), and the record still saves and restores."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest
from codegen_support import checked_text, generate, import_source

SPEC = """\
statechart: flow
version: 1
initial: a
record:
  why: {type: string}
  amount: {type: number}
states:
  a: {on: {go: {target: b, set: [why]}}}
  b: {entry: [arrive], on: {stop: d, next: c}}
  c: {on: {stop: d}}
  d: {final: true, exit: [leave]}
"""


@pytest.fixture(scope="module")
def module(tmp_path_factory: pytest.TempPathFactory) -> Any:
    spec = checked_text(SPEC)
    assert spec is not None
    return import_source(generate(spec)["generated/flow.py"], tmp_path_factory.mktemp("f"),
                         "flow")


def machine_names(run: Any) -> list[str]:
    return [s.id for s in run.machine.configuration]


def assert_consistent(module: Any, run: Any, expected: list[str]) -> None:
    assert [s.value for s in run.configuration] == expected == machine_names(run)
    again = module.Flow.restore(module.FlowRecord.from_json(run.record.to_json()))
    assert [s.value for s in again.configuration] == expected


class Boom(Exception):
    pass


def test_an_after_hook_that_raises_undoes_the_event(module: Any) -> None:
    class Listener:
        fail = True

        def after_transition(self) -> None:
            if Listener.fail:
                Listener.fail = False
                raise Boom

    run = module.Flow(model=Listener())
    with pytest.raises(Boom):
        run.go(why="x")
    assert_consistent(module, run, ["a"])
    assert run.record.why is None and run.record.history == []
    run.go(why="y")
    run.stop()
    assert_consistent(module, run, ["d"])


def test_a_base_exception_from_an_entry_action_undoes_the_event(module: Any) -> None:
    class Interrupted(module.Flow):  # type: ignore[misc, name-defined]
        def arrive(self) -> None:
            raise KeyboardInterrupt

    run = Interrupted()
    with pytest.raises(KeyboardInterrupt):
        run.go(why="x")
    assert_consistent(module, run, ["a"])


def test_an_event_sent_to_the_machine_from_an_action_is_refused(module: Any) -> None:
    class Sneaky(module.Flow):  # type: ignore[misc, name-defined]
        def arrive(self) -> None:
            self.machine.send("next")

    run = Sneaky()  # stepped without a machine: its action may not build one mid-event
    assert run._machine is None
    with pytest.raises(RuntimeError, match="not while `go` is being handled: an action"):
        run.go(why="x")
    assert_consistent(module, run, ["a"])
    with_machine = Sneaky()
    assert with_machine.machine is not None  # built between events: the machine steps it
    with pytest.raises(RuntimeError, match="sent to the machine directly while `go`"):
        with_machine.go(why="x")
    assert_consistent(module, with_machine, ["a"])


def test_exit_actions_at_the_end_get_the_library_arguments(module: Any) -> None:
    seen: list[tuple[str, str]] = []

    class Watching(module.Flow):  # type: ignore[misc, name-defined]
        def leave(self, event: str, state: Any) -> None:
            seen.append((event, state.id))

    run = Watching()
    run.go(why="x")
    run.stop()
    assert seen == [("stop", "d")] and run.is_terminated


def test_a_record_of_another_class_is_refused(module: Any, tmp_path: Path) -> None:
    other_spec = checked_text(SPEC.replace("statechart: flow", "statechart: other"))
    assert other_spec is not None
    other = import_source(generate(other_spec)["generated/other.py"], tmp_path, "other")
    record = other.OtherRecord(runId="r")
    with pytest.raises(module.FlowInvalidRecord, match="expected a FlowRecord, got OtherRecord"):
        module.check_record(record)
    with pytest.raises(module.FlowInvalidRecord, match="expected a FlowRecord"):
        module.Flow.restore(record)


def test_numbers_keep_their_value_and_the_record_checks(module: Any) -> None:
    run = module.Flow()
    run.go(why="x")
    module.check_record(run.record)
    module.Flow.restore(run.record)


def test_send_names_an_unknown_value_and_takes_enum_members(module: Any) -> None:
    run = module.Flow()
    with pytest.raises(TypeError, match="`go` takes no value `bogus`"):
        run.send("go", why="x", bogus=1)
    run.send(module.FlowEvent.go, why="x")
    assert run.status.value == "b"


def test_errors_cross_process_boundaries(module: Any) -> None:
    run = module.Flow()
    errors: list[Exception] = []
    for call in (lambda: run.stop(), lambda: run.go(),
                 lambda: module.FlowRecord.from_json("{}")):
        with pytest.raises(Exception) as info:
            call()
        errors.append(info.value)
    for error in errors:
        again = pickle.loads(pickle.dumps(error))
        assert type(again) is type(error) and str(again) == str(error)
