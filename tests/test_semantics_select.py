"""The semantics module on its own (`statechart_runtime.semantics.Chart`: selection, conflicts,
entry and exit, completion, history, when a run ends) replays the XState traces of
tests/conformance/ exactly.

tests/test_conformance.py checks the generated modules (python-statemachine driven by the
runtime); this checks the one definition they are documented by, with no machine at all.
Each event is one macrostep: the event's microstep, then the eventless transitions and the
completion cascade in the order `kernel.settle` takes them (eventless ones while any is
enabled, selected like any event's; then each `done.state.X` that `Chart.raised` gives, in
order, as its own microstep), compared with the configuration and the internal events XState
recorded.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from codegen_support import traced_spec
from test_conformance import SPECS

from statechart import semantics
from statechart_runtime import kernel
from statechart_runtime.events import ALWAYS
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
                  event: str) -> tuple[tuple[str, ...], tuple[str, ...], Remembered, int] | None:
        """(configuration, entered, remembered, transitions taken) after the event's
        microstep; None: no transition of it is enabled."""
        chart = self.chart
        moves = chart.select(configuration,
                             _enabled(self.spec, event, self.guards, configuration))
        if not moves:
            return None
        if not chart.remembers and all(len(m) == 2 for m in moves):
            plain = [(m[0], m[1]) for m in moves]
            entered = chart.sort(s for m in plain for s in chart.entry_set(*m))
            return chart.next_configuration(configuration, plain), entered, remembered, \
                len(moves)
        return *chart.step(configuration, moves, remembered), len(moves)

    def send(self, configuration: tuple[str, ...], remembered: Remembered, event: str | None
             ) -> tuple[tuple[str, ...], Remembered, list[str]] | None:
        """(configuration, remembered, internal events taken) after the event's macrostep
        (None: a new run's, the eventless transitions of the initial states); None when the
        event is refused."""
        queue: list[str] = []
        if event is not None:
            done = self.microstep(configuration, remembered, event)
            if done is None:
                return None
            configuration, entered, remembered, _ = done
            queue = self.chart.raised(entered, configuration)
        internal: list[str] = []
        now = [configuration, remembered]

        def take(name: str) -> bool:
            done = self.microstep(now[0], now[1], name)
            if done is None:  # its state was left, or its guards refuse: dropped
                return False
            internal.extend([name] * done[3] if name == ALWAYS else [name])
            now[0], entered, now[1], _ = done
            queue.extend(self.chart.raised(entered, now[0]))
            return True

        eventless = {t.source for t in self.spec.transitions() if t.trigger == "always"}
        # What settle reads of the spec tables: the states with eventless transitions.
        tables = SimpleNamespace(alternatives=SimpleNamespace(eventless=frozenset(eventless)))
        kernel.settle(tables, event or ALWAYS, lambda: now[0], queue, take)
        return now[0], now[1], internal


# Chart has no clock, and a timer's step is a run's (`Run.fire_due`), not an event sent to
# the chart: the timed families (timers, lang) are replayed up to their first clock advance
# (before it no timer is due), test_conformance replays them whole.
@pytest.mark.parametrize("trace", SPECS, ids=[t["name"] for t in SPECS])
def test_the_chart_replays_the_xstate_trace(trace: dict[str, Any]) -> None:
    spec = traced_spec(trace["yaml"], f"{trace['name']}.yaml")
    assert spec is not None
    runner = _Macrostep(spec, trace["guards"])
    chart = runner.chart
    problems: list[str] = []
    start = runner.send(chart.initial_configuration(), {}, None)
    assert start is not None
    assert list(start[0]) == trace["initial"][1]
    for index, sequence in enumerate(trace["sequences"]):
        configuration, remembered, _ = start
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
