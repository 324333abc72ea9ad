"""The SCXML departures of python-statemachine 3.2.2 that the runtime routes around, and the
checker/machine disagreement on parallel entry, each as the smallest spec that shows it.

Expected results are SCXML's (and XState 5's with `reenter: true`); tests/test_conformance.py
checks the same semantics on random specs against recorded XState traces.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from codegen_support import checked_text, generate, import_source
from test_soundness import PAR_NEVER

from statechart import semantics
from statechart.linter import check_source
from statechart.render.highlight import active_configuration

A1 = """\
statechart: par_conflict
version: 1
initial: par
states:
  par:
    parallel: true
    states:
      r1: {initial: a1, states: {a1: {on: {step: a2}}, a2: {on: {go: left}}}}
      r2: {initial: b1, states: {b1: {on: {go: right}}}}
  left: {final: true}
  right: {final: true}
"""

A2 = """\
statechart: par_order
version: 1
initial: par
states:
  par:
    parallel: true
    states:
      r1:
        initial: a3
        states:
          a1: {on: {go: left, next: a2}, entry: [enter_a1]}
          a2: {on: {go: left}}
          a3: {on: {go: left, next: a1}, entry: [enter_a3]}
      r2: {initial: b1, states: {b1: {on: {go: right}, entry: [enter_b1]}}}
  left: {final: true}
  right: {final: true}
"""

A4 = """\
statechart: final_exit
version: 1
initial: a
states:
  a: {on: {go: done}}
  done: {final: true, exit: [leave_done]}
"""

A5 = """\
statechart: par_done
version: 1
initial: par
states:
  par:
    parallel: true
    states:
      r1: {initial: a1, states: {a1: {on: {x: a2}}, a2: {final: true}}}
      r2: {initial: b1, states: {b1: {on: {y: b2}}, b2: {final: true}}}
"""



def _module(text: str, tmp_path: Path) -> Any:
    spec = checked_text(text)
    assert spec is not None
    produced = generate(spec)
    return import_source(produced[f"generated/{spec.name}.py"], tmp_path, spec.name)


def _facade(module: Any) -> Any:
    return getattr(module, "".join(p.title() for p in module.SPEC_NAME.split("_")))


def _names(run: Any) -> list[str]:
    return [s.value for s in run.configuration]


def test_a1_conflicting_regions_resolve_in_document_order(tmp_path: Path) -> None:
    run = _facade(_module(A1, tmp_path))()
    run.send("step")
    run.send("go")
    assert _names(run) == ["left"]


def test_a2_misnumbered_region_enters_and_resolves_in_document_order(tmp_path: Path) -> None:
    module = _module(A2, tmp_path)
    entered: list[str] = []

    class Logged(_facade(module)):  # type: ignore[misc]
        def enter_a1(self) -> None:
            entered.append("a1")

        def enter_a3(self) -> None:
            entered.append("a3")

        def enter_b1(self) -> None:
            entered.append("b1")

    run = Logged()
    assert entered == ["a3", "b1"]
    run.send("go")
    assert _names(run) == ["left"]


def test_a3_a_restored_run_continues_as_the_original(tmp_path: Path) -> None:
    module = _module(A1, tmp_path)
    facade = _facade(module)
    original = facade()
    original.send("step")
    record_class = type(original.record)
    restored = facade.restore(record_class.from_json(original.record.to_json()))
    original.send("go")
    restored.send("go")
    assert _names(restored) == _names(original) == ["left"]


def test_a4_exit_action_of_a_top_level_final_runs_when_the_run_ends(tmp_path: Path) -> None:
    module = _module(A4, tmp_path)
    exits: list[str] = []

    class Logged(_facade(module)):  # type: ignore[misc]
        def leave_done(self) -> None:
            exits.append("done")

    run = Logged()
    run.send("go")
    assert exits == ["done"]
    assert run.is_terminated
    # A restored ended run does not run them again, and takes no more events.
    again = Logged.restore(type(run.record).from_json(run.record.to_json()))
    assert again.is_terminated and exits == ["done"]
    with pytest.raises(module._api.EventNotAccepted, match="has ended"):
        again.send("go")


def test_a5_top_level_parallel_whose_regions_finish_ends_the_run(tmp_path: Path) -> None:
    run = _facade(_module(A5, tmp_path))()
    run.send("x")
    assert not run.is_terminated
    run.send("y")
    assert run.is_terminated
    with pytest.raises(Exception, match="has ended"):
        run.send("x")


def test_check_sees_the_regions_a_transition_enters_by_default(tmp_path: Path) -> None:
    result = check_source("par_never.yaml", PAR_NEVER.encode())
    assert [d.rule for d in result.errors] == ["rule-violation"]
    assert "broken by `x` -go-> `a1`" in result.errors[0].message


def test_highlighting_a_state_in_a_region_marks_the_other_regions_defaults() -> None:
    result = check_source("par_never.yaml", PAR_NEVER.encode())
    assert result.spec is not None
    assert active_configuration(result.spec, ["a1"]) == {"p", "ra", "a1", "rb", "b1"}
    # A record's full configuration is taken as it is (with ancestors).
    assert active_configuration(result.spec, ["a1", "b1"]) == {"p", "ra", "a1", "rb", "b1"}
    assert active_configuration(result.spec, ["x"]) == {"x"}


CROSS = """\
statechart: par_cross
version: 1
initial: p
states:
  p:
    parallel: true
    states:
      ra: {initial: a1, states: {a1: {on: {cross: b2, finish: end}}}}
      rb: {initial: b1, states: {b1: {on: {finish: end}}, b2: {on: {finish: end}}}}
      rc: {initial: c1, states: {c1: {on: {next: c2}, entry: [enter_c1]},
                                 c2: {on: {finish: end}}}}
  end: {final: true}
"""


def test_a_transition_between_regions_reenters_the_parallel_state(tmp_path: Path) -> None:
    """SCXML: the domain of a1 -> b2 is above p (p is parallel, not compound), so p and every
    region are exited and entered again: rc restarts in c1 (XState 5 differs here)."""
    module = _module(CROSS, tmp_path)
    entered: list[str] = []

    class Logged(_facade(module)):  # type: ignore[misc]
        def enter_c1(self) -> None:
            entered.append("c1")

    run = Logged()
    run.send("next")
    assert _names(run) == ["p", "ra", "a1", "rb", "b1", "rc", "c2"]
    run.send("cross")
    assert _names(run) == ["p", "ra", "a1", "rb", "b2", "rc", "c1"]
    assert entered == ["c1", "c1"]


HISTORY_INSIDE = """\
statechart: history_inside
version: 1
initial: p
states:
  p:
    parallel: true
    on: {stop: out}
    states:
      r1:
        initial: a
        states:
          a: {on: {go: b}}
          b: {}
      r2:
        initial: c
        states:
          c:
            initial: c1
            states:
              c1: {on: {back: {target: c, history: shallow}, next: c2}}
              c2: {}
  out: {final: true}
"""


def test_a_history_transition_from_inside_its_target_leaves_the_other_regions(
        tmp_path: Path) -> None:
    """Found by the XState conformance traces: a history transition from a child of its
    target (domain: the target) entered every ancestor of the target too, so a parallel
    ancestor got its other regions' default states on top of their active ones."""
    run = _facade(_module(HISTORY_INSIDE, tmp_path))()
    run.send("go")
    run.send("back")
    assert _names(run) == ["p", "r1", "b", "r2", "c", "c1"]
    restored = type(run).restore(type(run.record).from_json(run.record.to_json()))
    assert _names(restored) == _names(run)


HISTORY_SELF = """\
statechart: history_self
version: 1
initial: p
states:
  p:
    initial: a
    on:
      again: {target: p, history: shallow}
      stop: out
    states:
      a: {on: {go: b}}
      b: {}
  out: {final: true}
"""


def test_a_history_transition_that_leaves_its_target_returns_where_it_just_was(
        tmp_path: Path) -> None:
    """Found by the XState conformance traces: SCXML's microstep exits (recording history)
    before it enters (reading it), so `p` -> history of `p` re-enters `b`, the child it just
    left, although `p` had never been exited before (XState 5 agrees)."""
    run = _facade(_module(HISTORY_SELF, tmp_path))()
    run.send("go")
    run.send("again")
    assert _names(run) == ["p", "b"]
    assert run.record.remembered == {"p": ("b",)}
    restored = type(run).restore(type(run.record).from_json(run.record.to_json()))
    assert _names(restored) == ["p", "b"]


REGION_DONE = """\
statechart: region_done
version: 1
initial: p
states:
  p:
    parallel: true
    states:
      r1:
        initial: a
        done: out
        states:
          a: {on: {go: f1}}
          f1: {final: true}
      r2:
        initial: b
        states:
          b: {on: {go: f2}}
          f2: {final: true}
  out:
    on: {stop: end}
  end: {final: true}
"""


def test_a_region_completion_is_taken_before_its_top_level_parallel_ends_the_run(
        tmp_path: Path) -> None:
    """Found by the XState conformance traces: when one microstep makes every region of a
    top-level parallel state final, the run first takes the raised `done.state` events in
    order (SCXML's internal queue: r1's, then p's); r1's `done:` leaves `p`, so the run has
    not ended. python-statemachine had stopped the machine, and the run ended in `p`."""
    run = _facade(_module(REGION_DONE, tmp_path))()
    run.send("go")
    assert _names(run) == ["out"]
    assert not run.is_terminated
    assert [s.event.value for s in run.record.history] == ["go", "go", "done.state.r1"]
    run.send("stop")
    assert run.is_terminated


HISTORY_SELECT = """\
statechart: history_select
version: 1
initial: p
states:
  p:
    parallel: true
    on: {stop: out}
    states:
      r1:
        initial: c
        states:
          c:
            initial: c1
            states:
              c1: {on: {go: {target: c, history: deep}}}
      r2:
        initial: x
        states:
          x: {on: {go: y}}
          y: {}
  out: {final: true}
"""


def test_selection_knows_a_history_transition_exits_only_under_its_target() -> None:
    """Found by the XState conformance traces: `Chart.select` took c1 -> history of c for a
    transition to c, whose domain is above the parallel state, so it preempted r2's x -> y.
    Its domain is c: both are taken."""
    spec = checked_text(HISTORY_SELECT)
    assert spec is not None
    chart = semantics.chart(spec)

    def enabled(state: str) -> list[str | tuple[str, str]]:
        return [(t.target, t.history) if t.history else t.target
                for t in spec.states[state].transitions if t.event == "go"]

    configuration = chart.initial_configuration()
    moves = chart.select(configuration, enabled)
    assert moves == [("c1", "c", "deep"), ("x", "y")]
    assert chart.step(configuration, moves, {})[0] == ("p", "r1", "c", "c1", "r2", "y")


HISTORY_OR_NOT = """\
statechart: history_or_not
version: 1
initial: w
states:
  w:
    initial: a1
    on: {pause: p}
    states:
      a1: {on: {next: a2}}
      a2: {on: {finish: out}}
  p:
    on:
      back:
        - {target: w, guard: resumable, history: deep}
        - {target: w}
  out: {final: true}
"""


def test_alternatives_to_one_target_with_and_without_history(tmp_path: Path) -> None:
    """Found while making the XState traces: the run and the record's replay looked a
    history transition's kind up by (source, event, target), so when the guarded history
    alternative failed and the plain one was taken, the record said the run resumed where it
    was (a2) while the machine entered the default (a1). A step now says how it entered."""
    module = _module(HISTORY_OR_NOT, tmp_path)

    class Run(_facade(module)):  # type: ignore[misc]
        def resumable(self) -> bool:
            return False

    run = Run()
    run.send("next")
    run.send("pause")
    run.send("back")
    assert _names(run) == ["w", "a1"]
    assert [s.value for s in run.machine.configuration] == ["w", "a1"]
    record = type(run.record).from_json(run.record.to_json())
    assert [s.value for s in record.configuration] == ["w", "a1"]
    assert "history" not in run.record.history[-1].to_dict()

    class Resuming(_facade(module)):  # type: ignore[misc]
        def resumable(self) -> bool:
            return True

    other = Resuming()
    other.send("next")
    other.send("pause")
    other.send("back")
    assert _names(other) == ["w", "a2"]
    assert other.record.history[-1].to_dict()["history"] == "deep"
    again = type(other.record).from_json(other.record.to_json())
    assert [s.value for s in again.configuration] == ["w", "a2"]
