"""The semantics module on its own (`statechart_runtime.semantics.Chart`: selection, conflicts,
entry and exit, when a run ends) replays the XState traces of tests/conformance/ exactly.

tests/test_conformance.py checks the generated modules (python-statemachine driven by the
runtime); this checks the one definition they are documented by, with no machine at all.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from codegen_support import checked_text
from test_conformance import SPECS

from statechart import semantics


def _enabled(spec: Any, event: str, guards: dict[str, bool]) -> Any:
    def enabled(state: str) -> Iterator[str]:
        for t in spec.states[state].transitions:
            if t.event == event and (t.guard is None or guards[t.guard]):
                yield t.target
    return enabled


@pytest.mark.parametrize("trace", SPECS, ids=[t["name"] for t in SPECS])
def test_the_chart_replays_the_xstate_trace(trace: dict[str, Any]) -> None:
    spec = checked_text(trace["yaml"], f"{trace['name']}.yaml")
    assert spec is not None
    chart = semantics.chart(spec)
    problems: list[str] = []
    assert list(chart.initial_configuration()) == trace["initial"][1]
    for index, sequence in enumerate(trace["sequences"]):
        configuration = chart.initial_configuration()
        for j, (event, step) in enumerate(zip(sequence["events"], sequence["steps"],
                                              strict=False)):
            moves = chart.select(configuration, _enabled(spec, event, trace["guards"]))
            if bool(moves) != bool(step[0]):
                problems.append(f"seq {index} step {j} `{event}`: accepted {bool(moves)}")
                break
            if moves:
                configuration = chart.next_configuration(configuration, moves)
            if list(configuration) != step[1] or chart.ended(configuration) != bool(step[3]):
                problems.append(f"seq {index} step {j} `{event}`: {list(configuration)} "
                                f"ended={chart.ended(configuration)}, expected {step[1]} "
                                f"ended={bool(step[3])}")
                break
    assert not problems, f"{trace['name']}: " + "\n".join(problems[:10])
