"""Timers through the run store on both backends (tests/conftest.py): a timer whose guard
refuses does not starve the others, and one time source per store call (the store's clock,
or the `now`/`at` given), with steps that never go back in time within a run."""

from __future__ import annotations

import datetime as dt
from types import ModuleType
from typing import Any

import pytest
from codegen_support import checked_text, generate
from store_support import Backend, import_path

from statechart_runtime.store import open_store

# `waiting` expires after 30 s, unless its guard says no.
GATE = """\
statechart: gate
version: 1
initial: waiting
states:
  waiting:
    on: {answer: done}
    after: {30s: {target: expired, guard: may_expire}}
  expired: {final: true}
  done: {final: true}
"""
T0 = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)
SECOND = dt.timedelta(seconds=1)


@pytest.fixture(scope="module")
def gate(tmp_path_factory: pytest.TempPathFactory) -> type[Any]:
    """The gate run class whose guard refuses for the run called `stubborn`."""
    spec = checked_text(GATE)
    assert spec is not None
    path = tmp_path_factory.mktemp("gate") / "gate_store_test.py"
    path.write_bytes(generate(spec)["generated/gate.py"])
    module: ModuleType = import_path(path, "gate_store_test")

    class Gate(module.Gate):  # type: ignore[misc, name-defined]
        def may_expire(self) -> bool:
            return bool(self.record.runId != "stubborn")

    return Gate


def test_a_refused_timer_does_not_starve_later_ones(gate: type[Any], backend: Backend) -> None:
    """The run due first has a timer whose guard says no; the documented loop still ends,
    and the run due later fires."""
    store = open_store(backend.url)
    store.create(gate(run_id="stubborn", clock=lambda: T0))
    store.create(gate(run_id="later", clock=lambda: T0 + 5 * SECOND))
    now = T0 + 60 * SECOND
    assert store.due(gate, now) == ["stubborn", "later"]
    calls = []
    while (fired := store.fire_next_due(gate, now)) is not None:
        calls.append((fired.run.record.runId, fired.applied, fired.events))
        assert len(calls) < 5, f"the loop does not end: {calls}"
    assert calls == [("stubborn", False, ()), ("later", True, ("after.delay1.waiting",))]
    assert store.due(gate, now + 3600 * SECOND) == []
    assert store.find(gate, status="expired") == ["later"]
    stubborn = store.load(gate, "stubborn")  # the declined timer is in the stored record
    assert [t.declined for t in stubborn.timers] == [True]
    assert store.fire(gate, "stubborn", "answer").run.status.value == "done"
