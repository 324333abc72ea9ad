"""Eventless transitions (`always:`, SCXML eventless transitions, XState `always`): taken as
soon as they are enabled, after every microstep and before the pending completion events,
within the same `send` (one atomic macrostep); recorded as steps of the event `always`; a
loop the guards do not stop is refused by `check` (completion-loop) and, at run time,
stopped at `kernel.MAX_MICROSTEPS` with MacrostepLoop, the whole send undone."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from codegen_support import checked_text, generate, import_source

from statechart.diff import diff_specs
from statechart.linter import check_file, check_source
from statechart.render.dot import dot_source
from statechart.render.mermaid import mermaid_source
from statechart_runtime import kernel
from statechart_runtime.api import EventNotAccepted
from statechart_runtime.errors import MacrostepLoop
from statechart_runtime.explore import Space

SPEC = """\
statechart: triage
version: 1
initial: created
states:
  created:
    on: {triage: triaged, spin: looping}
  triaged:
    entry: [en_triaged]
    exit: [ex_triaged]
    always:
      - {target: urgent, guard: is_urgent, actions: [notify]}
      - target: normal
  urgent:
    entry: [en_urgent]
    on: {close: closed}
  normal:
    on: {close: closed}
  looping:
    always: {target: looping2, guard: keep_going}
    on: {close: closed}
  looping2:
    always: {target: looping, guard: keep_going}
  closed: {final: true}
"""


def build(text: str, tmp: Path, name: str) -> ModuleType:
    spec = checked_text(text, f"{name}.yaml")
    assert spec is not None, f"{name}: `statechart check` refuses it"
    return import_source(generate(spec)[f"generated/{name}.py"], tmp, name)


@pytest.fixture(scope="module")
def module(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return build(SPEC, tmp_path_factory.mktemp("eventless"), "triage")


ACTIONS = ("en_triaged", "ex_triaged", "notify", "en_urgent", "en_booting", "notify_r",
           "ex_a1", "ex_b1", "notify_a", "notify_b", "en_a2", "en_b2")


def scripted(facade: type, **guards: bool) -> Any:
    """The facade with guards answering as given, and actions that append their name to
    `run.log`."""
    def logger(name: str) -> Any:
        def action(self: Any) -> None:
            self.log.append(name)
        return action

    def answer(value: bool) -> Any:
        def guard(self: Any) -> bool:
            return value
        return guard

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        self.log = []
        facade.__init__(self, *args, **kwargs)

    body: dict[str, Any] = {"__init__": __init__}
    body.update({a: logger(a) for a in ACTIONS if hasattr(facade, a)})
    body.update({g: answer(v) for g, v in guards.items()})
    return type("Scripted", (facade,), body)


def history(run: Any) -> list[tuple[str, str, str]]:
    return [(s.event.value, s.source.value, s.target.value) for s in run.record.history]


def test_the_first_enabled_alternative_is_taken_in_the_same_send(module: ModuleType) -> None:
    run = scripted(module.Triage, is_urgent=True, keep_going=False)(run_id="r")
    run.triage()
    assert run.status.value == "urgent"
    assert history(run) == [("triage", "created", "triaged"), ("always", "triaged", "urgent")]
    # SCXML order: the microstep into `triaged`, then the eventless one (exit, its
    # actions, entry)
    assert run.log == ["en_triaged", "ex_triaged", "notify", "en_urgent"]
    other = scripted(module.Triage, is_urgent=False, keep_going=False)(run_id="s")
    other.triage()
    assert other.status.value == "normal"
    assert history(other)[-1] == ("always", "triaged", "normal")


def test_the_record_keeps_the_step_and_replays_it(module: ModuleType) -> None:
    run = scripted(module.Triage, is_urgent=True, keep_going=False)(run_id="r")
    run.triage()
    saved = json.loads(run.record.to_json())
    assert saved["history"][1] == {"event": "always", "source": "triaged", "target": "urgent",
                                   "at": saved["history"][1]["at"], "values": {}}
    restored = module.Triage.restore(module.TriageRecord.from_json(run.record.to_json()))
    assert restored.status.value == "urgent"
    # A step from a state without eventless transitions is refused by the integrity check.
    saved["history"][1]["source"] = "created"
    with pytest.raises(module.TriageInvalidRecord, match=r"history\[1\]"):
        module.TriageRecord.from_json(json.dumps(saved))


def test_nobody_sends_it(module: ModuleType) -> None:
    run = scripted(module.Triage, is_urgent=True, keep_going=False)(run_id="r")
    with pytest.raises(EventNotAccepted) as caught:
        run.send("always")
    assert caught.value.cause == "internal"
    assert "always" not in module.Triage.__dict__


def test_a_guarded_loop_stops_at_the_bound_and_the_send_is_undone(module: ModuleType) -> None:
    run = scripted(module.Triage, is_urgent=True, keep_going=True)(run_id="r")
    before = run.record.to_json()
    with pytest.raises(MacrostepLoop) as caught:
        run.spin()
    error = caught.value
    assert error.event == "spin" and error.steps == kernel.MAX_MICROSTEPS + 1
    assert "nothing was applied" in str(error)
    assert run.record.to_json() == before
    assert [s.value for s in run.configuration] == ["created"]
    # The run stays usable.
    run.triage()
    assert run.status.value == "urgent"


def test_a_guarded_loop_that_stops_is_taken_whole(module: ModuleType) -> None:
    answers = iter([True, True, True, False])

    class Counting(scripted(module.Triage, is_urgent=True)):  # type: ignore[misc]
        # one answer per call: the loop goes round until it says no
        def keep_going(self) -> bool:
            return next(answers)

    run = Counting(run_id="r")
    run.spin()
    assert history(run) == [("spin", "created", "looping"), ("always", "looping", "looping2"),
                            ("always", "looping2", "looping"), ("always", "looping",
                                                                "looping2")]
    assert run.status.value == "looping2"


START = """\
statechart: boot
version: 1
initial: booting
states:
  booting:
    entry: [en_booting]
    always: [{target: ready, guard: configured}, {target: setup}]
  setup: {on: {configure: ready}}
  ready: {on: {finish: finished}}
  finished: {final: true}
"""


def test_a_new_run_takes_them_before_its_first_event(tmp_path: Path) -> None:
    module = build(START, tmp_path, "boot")
    run = scripted(module.Boot, configured=True)(run_id="r")
    assert run.status.value == "ready"
    assert run.log == ["en_booting"]
    assert history(run) == [("always", "booting", "ready")]
    assert module.Boot.restore(module.BootRecord.from_json(run.record.to_json())) \
        .status.value == "ready"
    assert scripted(module.Boot, configured=False)(run_id="s").status.value == "setup"


ORDER = """\
statechart: order
version: 1
initial: par
states:
  par:
    parallel: true
    done: closed
    states:
      left:
        initial: l1
        done: {target: l3, guard: take_done}
        states:
          l1: {on: {go: l2}}
          l2: {final: true}
          l3: {final: true}
      right:
        initial: r1
        states:
          r1:
            always: {target: r2, in: l2, actions: [notify_r]}
          r2: {final: true}
  closed: {final: true}
"""


def test_eventless_transitions_come_before_pending_completion_events(tmp_path: Path) -> None:
    # `go` enters l2 (final): done.state.left is queued. Before it is taken, r1's eventless
    # transition (enabled now that l2 is active) is: SCXML's mainEventLoop, and XState's.
    module = build(ORDER, tmp_path, "order")
    run = scripted(module.Order, take_done=False)(run_id="r")
    run.go()
    assert history(run) == [("go", "l1", "l2"), ("always", "r1", "r2"),
                            ("done.state.par", "par", "closed")]
    assert run.is_terminated


PARALLEL = """\
statechart: both
version: 1
initial: idle
states:
  idle: {on: {start: par}}
  par:
    parallel: true
    on: {stop: stopped}
    states:
      a:
        initial: a1
        states:
          a1: {exit: [ex_a1], always: {target: a2, actions: [notify_a]}}
          a2: {entry: [en_a2]}
      b:
        initial: b1
        states:
          b1: {exit: [ex_b1], always: {target: b2, actions: [notify_b]}}
          b2: {entry: [en_b2]}
  stopped: {final: true}
"""


def test_the_regions_take_theirs_in_one_microstep(tmp_path: Path) -> None:
    module = build(PARALLEL, tmp_path, "both")
    run = scripted(module.Both)(run_id="r")
    run.log.clear()
    run.start()
    # One microstep: every exit, then the transitions' actions, then every entry.
    assert run.log == ["ex_b1", "ex_a1", "notify_a", "notify_b", "en_a2", "en_b2"]
    assert history(run)[1:] == [("always", "a1", "a2"), ("always", "b1", "b2")]
    module.BothRecord.from_json(run.record.to_json())  # the history replays


def rules(text: str) -> list[tuple[str, str]]:
    return [(d.rule, d.message) for d in check_source("spec.yaml", text.encode()).errors]


LOOPS = """\
statechart: loops
version: 1
initial: a
states:
  a: {on: {go: ping, stay: t, nest: j}}
  ping: {always: pong}
  pong: {always: ping}
  t: {always: {actions: [x]}, on: {out: z}}
  j:
    initial: w
    always: w
    states: {w: {on: {out: z}}}
  z: {final: true}
"""


def test_check_reports_a_loop_nothing_stops() -> None:
    assert [(r, m) for r, m in rules(LOOPS) if r == "completion-loop"] == [
        ("completion-loop", "eventless transitions loop forever: `ping` always -> `pong`, "
                            "then `pong` always -> `ping`, and so on"),
        ("completion-loop", "eventless transitions loop forever: `t` always -> `(no target)`, "
                            "and so on"),
        ("completion-loop", "eventless transitions loop forever: `j` always -> `w`, and so on"),
    ]


@pytest.mark.parametrize(("change", "loop"), [
    (("pong: {always: ping}", "pong: {always: {target: ping, guard: again}}"), "`ping`"),
    (("pong: {always: ping}", "pong: {always: ping, limit: 3}"), "`ping`"),  # a limit
    # something inside `j` may be taken first
    (("states: {w: {on: {out: z}}}",
      "states: {w: {on: {out: z}, always: {target: z, guard: leave}}}"), "`j`"),
])
def test_a_loop_something_can_stop_is_not_reported(change: tuple[str, str], loop: str) -> None:
    found = rules(LOOPS.replace(*change))
    loops = [m for r, m in found if r == "completion-loop"]
    assert len(loops) == 2 and not any(loop in m for m in loops), loops


def test_always_is_no_event_name() -> None:
    found = rules(SPEC.replace("on: {close: closed}\n  normal", "on: {always: closed}\n  normal"))
    assert ("schema", "`always` under `on` of `urgent`: no event may be called so") in found


def test_diagrams_and_paths_show_them() -> None:
    spec = checked_text(SPEC)
    assert spec is not None
    assert "always [is_urgent]" in dot_source(spec)
    assert "always #91;is_urgent#93;" in mermaid_source(spec)


def test_paths_take_them(module: ModuleType) -> None:
    space = Space(module.Triage)
    moves = [(move.event, [m[:3] for m in move.micro], after.configuration)
             for move, after in space.moves(space.start()) if move.event == "triage"]
    assert moves == [
        ("triage", [("created", "triage", "triaged"), ("triaged", "always", "urgent")],
         ("urgent",)),
        ("triage", [("created", "triage", "triaged"), ("triaged", "always", "normal")],
         ("normal",)),
    ]
    # The endless branch (keep_going always yes) is dropped, as the run refuses it.
    spins = [after.configuration for move, after in space.moves(space.start())
             if move.event == "spin"]
    assert spins == [("looping",)]


def test_diff_names_a_new_eventless_transition() -> None:
    old = checked_text(SPEC)
    new = checked_text(SPEC.replace("  normal:\n    on: {close: closed}",
                                    "  normal:\n    on: {close: closed}\n    always: closed"))
    assert old is not None and new is not None
    (change,) = [c for c in diff_specs(old, new) if c.kind == "eventless-added"]
    assert change.message == "`normal` now goes to `closed` by itself (`always:`)"
    assert change.for_callers and not change.for_runs
    (removed,) = [c for c in diff_specs(new, old) if c.kind == "transition-removed"]
    assert removed.for_runs and not removed.for_callers


def test_an_overlay_replaces_and_removes_them(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "triage.yaml").write_text(SPEC)
    (specs / "fast.yaml").write_text(
        "extends: triage\nstatechart: fast\nstates:\n  triaged: {always: urgent}\n")
    (specs / "slow.yaml").write_text(
        "extends: triage\nstatechart: slow\nremove: {transitions: [triaged.always]}\n"
        "states:\n  triaged: {on: {route: normal}}\n")
    fast = check_file(specs / "fast.yaml").spec
    assert fast is not None
    assert [(t.target, t.guard) for t in fast.states["triaged"].transitions] == [
        ("urgent", None)]
    slow = check_file(specs / "slow.yaml").spec
    assert slow is not None
    assert [t.event for t in slow.states["triaged"].transitions] == ["route"]


EVERY_WAY = """\
statechart: every_way
version: 1
initial: p
states:
  p:
    parallel: true
    on: {go: finished}
    states:
      r1:
        initial: a
        states:
          a: {always: [{target: x, guard: g}, {target: p}]}
      r2:
        initial: x
        states:
          x: {always: {target: y, guard: h}}
          y: {}
  finished: {final: true}
"""


def test_check_reports_a_loop_every_alternative_comes_back_to() -> None:
    # Found by tests/test_soundness.py: whatever `g` says, `a` is entered again (to `x`
    # leaves and re-enters `p`, which enters `a` by default). `x`'s guarded eventless
    # transition, in a region after `a`'s, cannot be taken before it.
    assert [(r, m) for r, m in rules(EVERY_WAY) if r == "completion-loop"] == [
        ("completion-loop", "eventless transitions loop forever: `a` always -> `x` or `p`, "
                            "and so on")]
    found = rules(EVERY_WAY.replace("{target: p}", "{target: finished}"))
    assert not [m for r, m in found if r == "completion-loop"], found


PLAIN = "\n".join(line for line in SPEC.splitlines()
                  if "entry:" not in line and "exit:" not in line).replace(
    ", actions: [notify]", "") + "\n"


def test_a_run_without_a_machine_takes_them_the_same(tmp_path: Path) -> None:
    # No actions: the kernel alone steps the run (no python-statemachine machine).
    module = build(PLAIN.replace("statechart: triage", "statechart: plain"), tmp_path, "plain")
    run = scripted(module.Plain, is_urgent=False, keep_going=False)(run_id="r")
    run.triage()
    assert run._machine is None
    assert history(run) == [("triage", "created", "triaged"), ("always", "triaged", "normal")]
    looping = scripted(module.Plain, is_urgent=True, keep_going=True)(run_id="s")
    before = looping.record.to_json()
    with pytest.raises(MacrostepLoop):
        looping.spin()
    assert looping.record.to_json() == before and looping._machine is None
    start = build(START.replace("    entry: [en_booting]\n", "").replace(
        "statechart: boot", "statechart: plain_boot"), tmp_path, "plain_boot")
    booted = scripted(start.PlainBoot, configured=True)(run_id="t")
    assert booted._machine is None and booted.status.value == "ready"


def test_a_stored_run_takes_them_when_fired(module: ModuleType, tmp_path: Path) -> None:
    # Through a run store (SQLite): `fire` restores the run from its head, takes the event
    # and its eventless steps, saves them; `load` replays the history (`always` steps too).
    from statechart_runtime.store import open_store

    store = open_store(tmp_path / "runs.db")
    facade = scripted(module.Triage, is_urgent=True, keep_going=False)
    store.create(facade(run_id="r"))
    fired = store.fire(facade, "r", "triage")
    assert history(fired.run) == [("triage", "created", "triaged"),
                                  ("always", "triaged", "urgent")]
    loaded = store.load(facade, "r")
    assert loaded.status.value == "urgent"
    assert history(loaded) == [("triage", "created", "triaged"), ("always", "triaged", "urgent")]
    looping = scripted(module.Triage, is_urgent=True, keep_going=True)
    store.create(looping(run_id="s"))
    with pytest.raises(MacrostepLoop):
        store.fire(looping, "s", "spin")
    kept = store.load(looping, "s")  # nothing of the refused event was saved
    assert kept.status.value == "created" and history(kept) == []
    assert store.fire(looping, "s", "triage").run.status.value == "urgent"  # still usable


def test_a_rule_broken_by_one_has_it_in_its_counter_example() -> None:
    text = SPEC + "rules:\n  - never: {from: triaged, to: urgent}\n"
    (message,) = [m for r, m in rules(text) if r == "rule-violation"]
    assert message == ('rule "never from triaged to urgent" is broken by `triaged` -always-> '
                       "`urgent`: created -triage-> triaged -always-> urgent")


def test_the_record_schema_takes_an_always_step(module: ModuleType) -> None:
    from codegen_support import validator

    spec = checked_text(SPEC)
    assert spec is not None
    schema = validator(generate(spec)["generated/triage.schema.json"])
    run = scripted(module.Triage, is_urgent=True, keep_going=False)(run_id="r")
    run.triage()
    assert not list(schema.iter_errors(json.loads(run.record.to_json())))


def test_paths_count_what_a_new_run_takes(tmp_path: Path) -> None:
    # A new run's eventless steps are covered by every path (its guards answer yes then, as
    # `follow`'s model does before the first step); the fallback it never takes is not.
    from statechart_runtime import testing

    module = build(START.replace("statechart: boot", "statechart: paths_boot"), tmp_path,
                   "paths_boot")
    found = testing.paths(module.PathsBoot, "transitions")
    unreachable = {(i.state, i.event, i.target) for i in found.unreachable}
    assert ("booting", "always", "ready") not in unreachable
    assert ("booting", "always", "setup") in unreachable
    states = testing.paths(module.PathsBoot, "states")
    assert "booting" not in {i.state for i in states.unreachable}
    for path in found.paths:
        testing.follow(module.PathsBoot, path)


def test_paths_says_when_no_run_can_start(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    from statechart.cli import main

    path = tmp_path / "loopstart.yaml"
    path.write_text("statechart: loopstart\nversion: 1\ninitial: a\nstates:\n"
                    "  a: {always: {target: b, guard: g}, on: {go: z}}\n"
                    "  b: {always: {target: a, guard: g}, on: {go: z}}\n"
                    "  z: {final: true}\n")
    assert main(["paths", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("statechart paths: a new run of `loopstart` cannot start with every "
                          "guard saying yes")
    assert "Traceback" not in err



LOOP_AT_START = """\
statechart: loop_at_start
version: 1
initial: a
states:
  a: {always: {target: b, guard: g}, on: {go: z}}
  b: {always: {target: a, guard: g}, on: {go: z}}
  z: {final: true}
"""


def test_the_explorer_reports_a_loop_as_the_run_does(tmp_path: Path) -> None:
    """The explorer stops a looping macrostep as soon as a place of it comes again, long
    before the bound; what it raises is what the run raises at the bound."""
    module = build(LOOP_AT_START, tmp_path, "loop_at_start")
    with pytest.raises(MacrostepLoop) as by_run:
        scripted(module.LoopAtStart, g=True)(run_id="r")
    with pytest.raises(MacrostepLoop) as by_explorer:
        Space(module.LoopAtStart).start()  # every guard says yes
    ran, explored = by_run.value, by_explorer.value
    assert (explored.event, explored.steps) == (ran.event, ran.steps) \
        == ("always", kernel.MAX_MICROSTEPS + 1)
    assert set(explored.configuration) <= {"a", "b"}


TIMER_THEN_ALWAYS = """\
statechart: timer_then_always
version: 1
initial: idle
record:
  deadline: {type: datetime}
states:
  idle:
    on:
      arm: {target: a, set: [deadline]}
  a:
    after:
      deadline: b
    on:
      stop: z
  b:
    always: a
  z:
    final: true
"""


def test_each_timer_of_a_clock_step_is_a_macrostep_of_its_own(tmp_path: Path) -> None:
    """A clock step fires its due timers one macrostep each: a place the one before went
    through is no loop of the next (the timer comes back each time `a` is entered, and the
    run fires it until the driver's timer bound, then rests in `a`)."""
    from statechart_runtime import testing

    module = build(TIMER_THEN_ALWAYS, tmp_path, "timer_then_always")
    found = testing.paths(module.TimerThenAlways, "transitions")
    assert [(i.state, i.event, i.target) for i in found.unreachable] == []
    assert {("a", "b"), ("b", "a")} <= {(i.state, i.target) for i in found.items}

PASS_THROUGH = """\
statechart: pass_through
version: 1
initial: a
states:
  a: {always: b}
  b: {on: {go: c}}
  c: {always: d}
  d: {on: {stop: e}}
  e: {final: true}
"""


def test_paths_to_a_state_a_run_only_passes_through(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--to` reaches a state as `--cover states` counts it: `a`, which a new run's
    constructor enters and leaves, by the empty path; `c`, which `go` enters and its
    eventless transition leaves in the same step, by that step."""
    from statechart.cli import main
    from statechart_runtime import testing

    module = build(PASS_THROUGH, tmp_path, "pass_through")
    for state, events in (("a", []), ("b", []), ("c", ["go"]), ("e", ["go", "stop"])):
        found = testing.paths(module.PassThrough, to=state)
        assert found.unreachable == (), state
        (path,) = found.paths
        assert [s.event for s in path.steps] == events
        testing.follow(module.PassThrough, path)
    assert testing.paths(module.PassThrough, "states").unreachable == ()
    spec = tmp_path / "pass_through.yaml"
    spec.write_text(PASS_THROUGH)
    assert main(["paths", str(spec), "--to", "a", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert ([p["steps"] for p in data["paths"]], data["unreachable"]) == ([[]], [])
    assert [(t["source"], t["target"], t["line"]) for t in data["opening"]] == [("a", "b", 5)]
    assert main(["paths", str(spec), "--to", "a"]) == 0
    out = capsys.readouterr().out
    assert "\na new run's constructor takes (every path starts after it):\n  a -always-> b  " \
        in out
    assert out.endswith("pass_through.yaml:5\n\npath 1 (0 steps), from [b] (status b)\n")
