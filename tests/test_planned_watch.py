"""A run a store watches (loaded through a store with a listener, stepped in memory, then
saved) is told the same macrosteps whether it takes an event by its plan or through the
kernel: also when the run ends and an exit action of its final configuration raises (the
event is applied then, and the caller may save the run)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from codegen_support import checked_text, generate, import_source

from statechart_runtime.store import open_store

# `done` is final with an exit action: when the run ends, every active state is exited.
FINISH = """\
statechart: finish
version: 1
initial: working
states:
  working: {on: {finish: done}}
  done:
    final: true
    exit: [say_goodbye]
"""


class Goodbye(RuntimeError):
    pass


def _classes(folder: Path) -> tuple[type[Any], type[Any]]:
    spec = checked_text(FINISH)
    assert spec is not None
    module = import_source(generate(spec)["generated/finish.py"], folder, "finish_watch_test")

    def say_goodbye(self: Any) -> None:
        raise Goodbye("the goodbye failed")

    planned = type("Planned", (module.Finish,), {"say_goodbye": say_goodbye})

    class Kernel(planned):  # type: ignore[misc, valid-type]
        def _take_planned(self, event: str, checked: Any, at: dt.datetime) -> bool:
            return False

    return planned, Kernel


def _told_on_save(run_class: type[Any], folder: Path) -> list[tuple[str, str, str]]:
    seen: list[Any] = []
    store = open_store(folder / f"{run_class.__name__}.db", listeners=[seen.append])
    try:
        store.create(run := run_class())
        loaded = store.load(run_class, run.record.runId)
        with pytest.raises(Goodbye):
            loaded.finish()
        assert loaded.is_terminated  # applied: the exit action ran after the step
        seen.clear()
        store.save(loaded)
        return [(type(one).__name__, getattr(one, "event", ""), getattr(one, "status", ""))
                for one in seen]
    finally:
        store.close()


def test_a_watched_run_ending_in_a_raising_exit_action_is_told_on_both_paths(
        tmp_path: Path) -> None:
    planned, kernel = _classes(tmp_path)
    by_kernel = _told_on_save(kernel, tmp_path)
    assert [told[:2] for told in by_kernel] == [("StepTaken", "finish")]
    assert _told_on_save(planned, tmp_path) == by_kernel


def test_a_run_listened_to_in_memory_keeps_its_applied_step_for_the_store(
        tmp_path: Path) -> None:
    # The same run with a listener of its own as well (`run.listen`): the step its ending
    # applied before the exit action raised is still the store's to tell when it is saved.
    planned, kernel = _classes(tmp_path)
    for run_class in (kernel, planned):
        seen: list[Any] = []
        store = open_store(tmp_path / f"listened_{run_class.__name__}.db",
                           listeners=[seen.append])
        try:
            store.create(run := run_class())
            loaded = store.load(run_class, run.record.runId)
            loaded.listen(lambda _seen: None)
            with pytest.raises(Goodbye):
                loaded.finish()
            assert loaded.is_terminated
            seen.clear()
            store.save(loaded)
            assert [(type(one).__name__, one.event) for one in seen] == [
                ("StepTaken", "finish")], run_class.__name__
        finally:
            store.close()
