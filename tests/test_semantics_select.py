"""The semantics module on its own (`statechart_runtime.semantics.Chart`: selection, conflicts,
entry and exit, completion, history, when a run ends) replays the XState traces of
tests/conformance/ exactly.

tests/test_conformance.py checks the generated modules (python-statemachine driven by the
runtime); this checks the one definition they are documented by, with no machine at all.
Each event is one macrostep: the event's microstep, then the completion cascade (each
`done.state.X` that `Chart.raised` gives, in order, as its own microstep selected like any
event), compared with the configuration and the internal events XState recorded.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from codegen_support import checked_text
from test_conformance import SPECS

from statechart import semantics
from statechart_runtime.semantics import Chart, Remembered


def _enabled(spec: Any, event: str, guards: dict[str, bool],
             configuration: tuple[str, ...]) -> Any:
    def enabled(state: str) -> Iterator[str | tuple[str, str]]:
        for t in spec.states[state].transitions:
            # `in:` is asked against the configuration before the step (SCXML `In()`)
            # an `on:` key takes the events it is a descriptor of (SCXML; not the run's own)
            takes = t.event == event or (t.trigger == "event" and not event.startswith(
                "done.state.") and semantics.matches(t.event, event))
            if takes and (t.guard is None or guards[t.guard]) and all(
                    s in configuration for s in t.in_states):
                yield (t.move_target, t.move_kind) if t.move_kind else t.target
    return enabled


class _Macrostep:
    """One spec's macrosteps through `Chart` alone."""

    def __init__(self, spec: Any, guards: dict[str, bool]) -> None:
        self.spec, self.guards = spec, guards
        self.chart: Chart = semantics.chart(spec)

    def microstep(self, configuration: tuple[str, ...], remembered: Remembered,
                  event: str) -> tuple[tuple[str, ...], tuple[str, ...], Remembered] | None:
        """(configuration, entered, remembered) after the event's microstep; None: no
        transition of it is enabled."""
        chart = self.chart
        moves = chart.select(configuration,
                             _enabled(self.spec, event, self.guards, configuration))
        if not moves:
            return None
        if not chart.remembers and all(len(m) == 2 for m in moves):
            plain = [(m[0], m[1]) for m in moves]
            entered = chart.sort(s for m in plain for s in chart.entry_set(*m))
            return chart.next_configuration(configuration, plain), entered, remembered
        return chart.step(configuration, moves, remembered)

    def send(self, configuration: tuple[str, ...], remembered: Remembered, event: str
             ) -> tuple[tuple[str, ...], Remembered, list[str]] | None:
        """(configuration, remembered, internal events taken) after the event's macrostep;
        None when the event is refused."""
        done = self.microstep(configuration, remembered, event)
        if done is None:
            return None
        configuration, entered, remembered = done
        queue = self.chart.raised(entered, configuration)
        internal: list[str] = []
        while queue:
            name = f"done.state.{queue.pop(0)}"
            done = self.microstep(configuration, remembered, name)
            if done is None:  # its state was left, or its guards refuse: dropped
                continue
            internal.append(name)
            configuration, entered, remembered = done
            queue += self.chart.raised(entered, configuration)
        return configuration, remembered, internal


# Chart has no clock, and a timer's step is a run's (`Run.fire_due`), not an event sent to
# the chart: the timed families (timers, lang) are replayed up to their first clock advance
# (before it no timer is due), test_conformance replays them whole.
@pytest.mark.parametrize("trace", SPECS, ids=[t["name"] for t in SPECS])
def test_the_chart_replays_the_xstate_trace(trace: dict[str, Any]) -> None:
    spec = checked_text(trace["yaml"], f"{trace['name']}.yaml")
    assert spec is not None
    runner = _Macrostep(spec, trace["guards"])
    chart = runner.chart
    problems: list[str] = []
    assert list(chart.initial_configuration()) == trace["initial"][1]
    for index, sequence in enumerate(trace["sequences"]):
        configuration = chart.initial_configuration()
        remembered: Remembered = {}
        for j, (event, step) in enumerate(zip(sequence["events"], sequence["steps"],
                                              strict=False)):
            if isinstance(event, int):
                break  # a clock advance: see above
            after = runner.send(configuration, remembered, event)
            if (after is not None) != bool(step[0]):
                problems.append(f"seq {index} step {j} `{event}`: accepted {after is not None}")
                break
            internal: list[str] = []
            if after is not None:
                configuration, remembered, internal = after
            ended = chart.ended(configuration)
            if list(configuration) != step[1] or ended != bool(step[3]) \
                    or (trace["internal"] and internal != step[4]):
                problems.append(f"seq {index} step {j} `{event}`: {list(configuration)} "
                                f"ended={ended} internal={internal}, expected {step[1]} "
                                f"ended={bool(step[3])} internal={step[4:]}")
                break
    assert not problems, f"{trace['name']}: " + "\n".join(problems[:10])
