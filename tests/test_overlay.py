"""Overlays (`extends:`): merging, positions in the right file, and every refusal."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from statechart.linter import check_file

ROOT = Path(__file__).parent.parent
BASE = """\
statechart: base
version: 1
initial: idle
record:
  reason: {type: string}
states:
  idle:
    on:
      start: working
      stop: {target: stopped, set: [reason]}
  working:
    on:
      finish: done
      stop: {target: stopped, set: [reason]}
  done: {final: true}
  stopped: {final: true}
rules:
  - id: done-stays-done
    never: {from: done, to: working}
  - id: soft
    overridable: true
    never: {from: stopped, to: idle}
"""


def write(folder: Path, files: dict[str, str]) -> Path:
    specs = folder / "specs"
    specs.mkdir(exist_ok=True)
    for name, text in files.items():
        (specs / name).write_text(text)
    return specs


def found(path: Path) -> list[tuple[str, str, int, str]]:
    return [(Path(d.span.file).name, d.rule, d.span.line, d.message)
            for d in check_file(path).diagnostics]


def test_support_run_example_resolves_with_changes() -> None:
    result = check_file(ROOT / "specs" / "support_run.yaml")
    assert result.diagnostics == []
    spec = result.spec
    assert spec is not None and spec.overlay is not None
    assert spec.overlay.changes == (
        ("field-added", "escalationTicket"), ("transition-added", "running.escalate"),
        ("state-added", "escalated"), ("rule-added", "escalation-ends-with-a-human-decision"))
    assert spec.states["created"].span.file.endswith("agent_run.yaml")
    assert spec.states["escalated"].span.file.endswith("support_run.yaml")
    assert len(spec.rules) == 7  # the base's six stay in force


def test_overlay_adds_replaces_and_removes(tmp_path: Path) -> None:
    specs = write(tmp_path, {"base.yaml": BASE, "team.yaml": """\
extends: base
statechart: team
remove:
  transitions: [idle.stop]
  rules: [soft]
states:
  working:
    tags: [busy]
    on:
      finish: {target: review}
add:
  states:
    review:
      on: {approve: done, reject: working}
"""})
    result = check_file(specs / "team.yaml")
    assert result.diagnostics == []
    spec = result.spec
    assert spec is not None
    assert [t.event for t in spec.states["idle"].transitions] == ["start"]
    assert [(t.event, t.target) for t in spec.states["working"].transitions] == [
        ("finish", "review"), ("stop", "stopped")]
    assert spec.states["working"].tags == ("busy",)
    assert [r.id for r in spec.rules] == ["done-stays-done"]
    assert spec.overlay is not None and ("transition-replaced", "working.finish") in \
        spec.overlay.changes


def test_base_rules_stay_in_force_at_the_overlay_line(tmp_path: Path) -> None:
    specs = write(tmp_path, {"base.yaml": BASE, "team.yaml": """\
extends: base
statechart: team
states:
  done:
    on: {reopen: working}
"""})
    problems = found(specs / "team.yaml")
    assert ("team.yaml", "terminal-exit", 5) in [p[:3] for p in problems]
    # `done` is a top-level final state: the run ends there, and the transition is never
    # taken (terminal-exit), so it breaks no rule
    assert [p for p in problems if p[1] == "rule-violation"] == []
    (specs / "team.yaml").write_text(REOPENED)
    problems = found(specs / "team.yaml")
    violation = [p for p in problems if p[1] == "rule-violation"]
    assert violation and violation[0][:3] == ("team.yaml", "rule-violation", 6)
    assert 'rule "done-stays-done"' in violation[0][3]


# An overlay that makes `done` go on: a transition of the overlay breaks a rule of the base.
REOPENED = """\
extends: base
statechart: team
states:
  done:
    final: false
    on: {reopen: working}
"""


def test_a_rule_that_is_not_overridable_cannot_be_replaced_or_removed(tmp_path: Path) -> None:
    specs = write(tmp_path, {"base.yaml": BASE, "team.yaml": """\
extends: base
statechart: team
remove: {rules: [done-stays-done, missing]}
rules:
  - id: done-stays-done
    never: {from: done, to: idle}
  - id: soft
    never: {from: stopped, to: working}
"""})
    problems = found(specs / "team.yaml")
    assert [(p[1], p[2]) for p in problems] == [("overlay", 3), ("overlay", 3), ("overlay", 5)]
    assert "not overridable" in problems[0][3]
    assert "no rule with that id" in problems[1][3]


def test_what_a_removal_breaks_in_the_base_is_one_error_at_the_remove_entry(
        tmp_path: Path) -> None:
    specs = write(tmp_path, {"base.yaml": BASE, "team.yaml": """\
extends: base
statechart: team
remove: {states: [stopped], fields: [reason]}
"""})
    result = check_file(specs / "team.yaml")
    problems = [(Path(d.span.file).name, d.rule, d.span.line, d.span.column, d.message)
                for d in result.diagnostics]
    assert problems == [
        ("team.yaml", "overlay", 3, 19, "removing state `stopped` causes 3 problems in the "
         "base, which still uses it"),
        ("team.yaml", "overlay", 3, 38, "removing record field `reason` causes 2 problems in "
         "the base, which still uses it")]
    state, field = (d.help for d in result.diagnostics)
    # the two transitions to `stopped`, and the base rule that names it
    assert state.startswith("in the base: [unknown-state] target `stopped` is not a state of "
                            f"this spec at {specs / 'base.yaml'}:10, 14; [unknown-state] rule "
                            f"state `stopped` is not a state of this spec at "
                            f"{specs / 'base.yaml'}:22. Change those")
    assert state.endswith("or keep the state")
    assert field.count("[unknown-field]") == 2 and "base.yaml:10;" in field and "base.yaml:14." in field


def test_a_removed_transition_that_strands_a_state_is_reported_at_the_removal(
        tmp_path: Path) -> None:
    specs = write(tmp_path, {"base.yaml": BASE, "team.yaml": """\
extends: base
statechart: team
remove:
  transitions:
    - idle.start
"""})
    problems = found(specs / "team.yaml")
    assert [(p[0], p[1], p[2]) for p in problems] == [("team.yaml", "overlay", 5)]
    assert problems[0][3].startswith("removing transition `idle.start` causes ")


def test_problems_of_the_overlay_itself_are_not_folded_into_a_removal(tmp_path: Path) -> None:
    specs = write(tmp_path, {"base.yaml": BASE, "team.yaml": """\
extends: base
statechart: team
remove: {transitions: [idle.stop, working.stop]}
add:
  states:
    paused:
      on: {resume: stopped}
"""})
    problems = found(specs / "team.yaml")
    # `paused` is unreachable because nothing in the overlay enters it: its own line, and
    # the removals break nothing in the base (`stopped` is still entered from `paused`).
    assert ("team.yaml", "unreachable-state", 6) in [p[:3] for p in problems]
    assert all(p[0] == "team.yaml" for p in problems)


def test_chains_report_each_file(tmp_path: Path) -> None:
    specs = write(tmp_path, {
        "base.yaml": BASE,
        "middle.yaml": "extends: base\nstatechart: middle\nadd:\n  states:\n"
                       "    extra: {on: {go: nowhere}}\n",
        "top.yaml": "extends: middle.yaml\nstatechart: top\nstates:\n  idle: {on: {x: extra}}\n",
    })
    result = check_file(specs / "top.yaml")
    # The state that leads nowhere is no trap of its own: fixing its target clears that too.
    assert [(Path(d.span.file).name, d.rule, d.span.line) for d in result.diagnostics] == [
        ("middle.yaml", "unknown-state", 5)]
    assert "nowhere" in result.diagnostics[0].message
    assert "[no-path-to-final] no path leads from `extra`" in result.diagnostics[0].help


@pytest.mark.parametrize(("files", "message"), [
    ({"a.yaml": "extends: b\nstatechart: a\n", "b.yaml": "extends: a\nstatechart: b\n"},
     "cycle: a.yaml -> b.yaml -> a.yaml"),
    ({"a.yaml": "extends: nothing\nstatechart: a\n"}, "no spec at"),
    ({"a.yaml": "extends: ../outside.yaml\nstatechart: a\n"}, "points outside"),
    ({"a.yaml": "extends: [x]\nstatechart: a\n"}, "must name a spec"),
    ({"a.yaml": "extends: base\nadd: {states: {x: {on: {go: done}}}}\n", "base.yaml": BASE},
     "needs its own `statechart` name"),
    ({"a.yaml": "extends: base\nstatechart: a\nrecord: {reason: {type: integer}}\n",
      "base.yaml": BASE}, "already defined by the base"),
    ({"a.yaml": "extends: base\nstatechart: a\nremove: {transitions: [idle.nope]}\n",
      "base.yaml": BASE}, "the base has no event `nope`"),
])
def test_refusals(tmp_path: Path, files: dict[str, str], message: str) -> None:
    (tmp_path / "outside.yaml").write_text(BASE)
    specs = write(tmp_path, files)
    problems = found(specs / "a.yaml")
    assert any(p[1] == "overlay" and message in p[3] for p in problems), problems
    assert all(p[2] >= 1 for p in problems)


def test_remove_without_extends_is_a_schema_error(tmp_path: Path) -> None:
    specs = write(tmp_path, {"a.yaml": BASE + "remove: {states: [done]}\n"})
    assert ("a.yaml", "schema", 23) in [p[:3] for p in found(specs / "a.yaml")]


def test_resolve_prints_yaml_that_checks_the_same(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "statechart", "resolve",
                           str(ROOT / "specs" / "support_run.yaml")],
                          capture_output=True, text=True, check=True)
    text = done.stdout
    assert "\nextends:" not in text and "\nremove:" not in text
    flat = tmp_path / "flat.yaml"
    flat.write_text(text.replace("statechart: support_run", "statechart: flat_copy", 1))
    result = check_file(flat)
    assert result.diagnostics == []
    assert result.spec is not None
    resolved = check_file(ROOT / "specs" / "support_run.yaml").spec
    assert resolved is not None
    assert list(result.spec.states) == list(resolved.states)
    assert result.spec.transitions() != [] and [
        (t.source, t.event, t.target, t.guard, t.sets) for t in result.spec.transitions()] == [
        (t.source, t.event, t.target, t.guard, t.sets) for t in resolved.transitions()]


def test_resolve_keeps_scalars_as_written(tmp_path: Path) -> None:
    spec = tmp_path / "specs" / "res.yaml"
    spec.parent.mkdir()
    spec.write_text('''statechart: res
version: 1
description: 0x1F
initial: a
states:
  a: {on: {go: done}, description: 1.50}
  done: {final: true}
rules:
  - {id: "1e3", never: {from: done, to: a}}
''')
    done = subprocess.run([sys.executable, "-m", "statechart", "resolve", str(spec)],
                          capture_output=True, text=True, check=True)
    assert "description: 0x1F" in done.stdout
    assert "description: 1.50" in done.stdout
    assert 'id: "1e3"' in done.stdout
    again = tmp_path / "specs" / "again.yaml"
    again.write_text(done.stdout)
    assert check_file(again).diagnostics == []


def test_remove_then_add_replaces_an_overridable_rule(tmp_path: Path) -> None:
    specs = write(tmp_path, {"base.yaml": BASE, "team.yaml": """\
extends: base
statechart: team
remove: {rules: [soft]}
rules:
  - {id: soft, never: {from: stopped, to: working}}
"""})
    result = check_file(specs / "team.yaml")
    assert result.diagnostics == []
    assert result.spec is not None
    soft = [r for r in result.spec.rules if r.id == "soft"]
    assert [r.targets[0][1] for r in soft] == ["working"]
    assert result.spec.overlay is not None
    assert ("rule-replaced", "soft") in result.spec.overlay.changes


def test_an_overlays_duplicate_keys_are_reported(tmp_path: Path) -> None:
    specs = write(tmp_path, {"base.yaml": BASE, "team.yaml": """\
extends: base
statechart: team
version: 1
version: 2
states:
  working:
    on:
      finish: done
      finish: stopped
"""})
    assert [(p[0], p[1], p[2]) for p in found(specs / "team.yaml")
            if p[1] == "duplicate-key"] == [
        ("team.yaml", "duplicate-key", 4), ("team.yaml", "duplicate-key", 9)]


def test_positions_stay_in_the_right_file_when_base_nodes_are_dropped(tmp_path: Path) -> None:
    # Removing a state drops copied base nodes; nodes the merge makes later must not inherit
    # their ids (and so their file) in the position map.
    specs = write(tmp_path, {"base.yaml": BASE, "team.yaml": """\
extends: base
statechart: team
remove: {states: [stopped]}
states:
  idle:
    states: {}
  working:
    states: {}
"""})
    problems = [(p[0], p[1], p[2]) for p in found(specs / "team.yaml") if p[1] == "schema"]
    assert problems == [("team.yaml", "schema", 6), ("team.yaml", "schema", 8)]


def test_patching_a_state_the_base_does_not_have_is_an_error(tmp_path: Path) -> None:
    specs = write(tmp_path, {"base.yaml": BASE.replace("working", "waiting_for_approval"),
                             "team.yaml": """\
extends: base
statechart: team
states:
  waiting_for_aproval:
    on: {finish: stopped}
"""})
    result = check_file(specs / "team.yaml")
    problems = [(Path(d.span.file).name, d.rule, d.span.line, d.message, d.help)
                for d in result.diagnostics]
    assert [p[:3] for p in problems] == [("team.yaml", "overlay", 4)]
    assert "no state `waiting_for_aproval`" in problems[0][3]
    assert "did you mean `waiting_for_approval`?" in problems[0][4]
    assert "add:" in problems[0][4]


def test_add_declares_new_states_at_the_top_and_nested(tmp_path: Path) -> None:
    specs = write(tmp_path, {"base.yaml": BASE, "team.yaml": """\
extends: base
statechart: team
states:
  working:
    on: {pause: paused}
add:
  states:
    paused:
      on: {resume: working}
    working:
      initial: inner
      states:
        inner: {on: {next: other}}
        other: {}
"""})
    problems = [(d.rule, d.span.line, d.message) for d in check_file(specs / "team.yaml").diagnostics]
    # `working` exists: under `add:` it may only hold new nested states
    assert problems == [("overlay", 10, "state `working` is already in the base; `add:` "
                                        "declares new states only")]
    specs = write(tmp_path, {"team.yaml": """\
extends: base
statechart: team
states:
  working:
    initial: inner
    on: {pause: paused}
add:
  states:
    paused:
      on: {resume: working}
    working:
      states:
        inner: {on: {next: other}}
        other: {}
"""})
    result = check_file(specs / "team.yaml")
    assert result.diagnostics == []
    assert result.spec is not None
    assert result.spec.states["inner"].parent == "working"
    assert result.spec.overlay is not None
    assert ("state-added", "paused") in result.spec.overlay.changes
    assert ("state-added", "inner") in result.spec.overlay.changes


def test_add_is_only_allowed_in_an_overlay(tmp_path: Path) -> None:
    specs = write(tmp_path, {"a.yaml": BASE + "add: {states: {x: {}}}\n"})
    assert ("a.yaml", "schema", 23) in [p[:3] for p in found(specs / "a.yaml")]


def test_an_overlay_rule_broken_by_the_base_is_reported_at_the_overlay_rule(
        tmp_path: Path) -> None:
    specs = write(tmp_path, {"base.yaml": BASE, "team.yaml": """\
extends: base
statechart: team
version: 1
rules:
  - id: idle-never-stops
    never: {from: idle, to: stopped}
"""})
    problems = [d for d in check_file(specs / "team.yaml").diagnostics]
    assert [(Path(d.span.file).name, d.rule, d.span.line) for d in problems] == [
        ("team.yaml", "rule-violation", 6)]
    assert "(the transition is at base.yaml:10)" in problems[0].message
    assert "remove: {transitions: [idle.stop]}" in problems[0].help
    assert "overlay" in problems[0].help


def test_a_base_rule_names_its_file_when_broken_in_the_overlay(tmp_path: Path) -> None:
    specs = write(tmp_path, {"base.yaml": BASE, "team.yaml": REOPENED})
    violation = [d for d in check_file(specs / "team.yaml").diagnostics
                 if d.rule == "rule-violation"]
    assert violation and violation[0].help.endswith("(rule at base.yaml:19)")


def test_an_overlay_extends_clear_and_replaces_status(tmp_path: Path) -> None:
    specs = write(tmp_path, {"base.yaml": """\
statechart: base
version: 1
initial: waiting
record:
  approvalId: {type: string, context: true}
  note: {type: string, context: true}
states:
  waiting: {status: paused, clear: [approvalId], on: {go: done}}
  done: {final: true}
""", "team.yaml": """\
extends: base
statechart: team
states:
  waiting: {status: waiting, clear: [note], counter: waits}
"""})
    result = check_file(specs / "team.yaml")
    assert result.diagnostics == []
    assert result.spec is not None
    waiting = result.spec.states["waiting"]
    assert (waiting.clear, waiting.status, waiting.counter) == (
        ("approvalId", "note"), "waiting", "waits")


def test_an_overlay_removes_a_timer_by_its_name(tmp_path: Path) -> None:
    """`STATE.after.NAME` removes the timer with `name: NAME`; the change names it by its key
    as written, as a patch of it would."""
    timed = BASE.replace("  done: {final: true}\n",
                         "    after:\n      15m: {target: stopped, name: nudge}\n"
                         "      PT1H: done\n  done: {final: true}\n")
    specs = write(tmp_path, {"base.yaml": timed, "over.yaml": (
        "statechart: over\nextends: base\nremove: {transitions: [working.after.nudge]}\n")})
    base = check_file(specs / "base.yaml").spec
    assert base is not None
    assert [t.event for t in base.timers()] == ["after.nudge.working", "after.delay2.working"]
    result = check_file(specs / "over.yaml")
    assert result.diagnostics == []
    spec = result.spec
    assert spec is not None and spec.overlay is not None
    # The overlay is a spec of its own: its one delay timer is its first.
    assert [(t.key, t.event) for t in spec.timers()] == [("after.PT1H", "after.delay1.working")]
    assert ("transition-removed", "working.after.15m") in spec.overlay.changes


def test_an_overlay_patches_and_removes_timers_by_key(tmp_path: Path) -> None:
    """`after:` entries are patched one by one like `on:` events; `STATE.after.KEY` removes
    one; a timer the base does not have cannot be removed."""
    timed = BASE.replace("  done: {final: true}\n",
                         "    after:\n      15m: stopped\n      PT1H: done\n"
                         "  done: {final: true}\n")
    specs = write(tmp_path, {"base.yaml": timed, "over.yaml": (
        "statechart: over\nextends: base\n"
        "remove: {transitions: [working.after.15m]}\n"
        "states:\n  working:\n    after:\n      PT1H: stopped\n      30s: done\n")})
    result = check_file(specs / "over.yaml")
    assert result.diagnostics == []
    spec = result.spec
    assert spec is not None and spec.overlay is not None
    timers = [(t.key, t.target, t.delay_ms) for t in spec.timers()]
    assert timers == [("after.PT1H", "stopped", 3_600_000), ("after.30s", "done", 30_000)]
    assert ("transition-removed", "working.after.15m") in spec.overlay.changes
    assert ("transition-replaced", "working.after.PT1H") in spec.overlay.changes
    assert ("transition-added", "working.after.30s") in spec.overlay.changes
    write(tmp_path, {"bad.yaml": "statechart: bad\nextends: base\n"
                                 "remove: {transitions: [working.after.2h]}\n"})
    assert found(specs / "bad.yaml") == [(
        "bad.yaml", "overlay", 3,
        "cannot remove transition `working.after.2h`: the base has no timer `2h` on state "
        "`working`")]


WORKING = BASE.replace("  working:\n    on:\n", "  working:\n    work: {handler: build, "
                       "timeout: 5m, outcomes: [finish], error: stop}\n    on:\n")


@pytest.mark.parametrize(("overlay", "handler", "timeout", "error"), [
    # `work:` of a state the base gives work is patched key by key
    ("states:\n  working:\n    work: {timeout: 10m, heartbeat: 1m}\n", "build", "10m", "stop"),
    # work added to a state that had none
    ("states:\n  idle:\n    work: {handler: prepare, timeout: 1m, outcomes: [start]}\n",
     "build", "5m", "stop"),
])
def test_an_overlay_adds_and_changes_work(tmp_path: Path, overlay: str, handler: str,
                                          timeout: str, error: str) -> None:
    specs = write(tmp_path, {"base.yaml": WORKING,
                             "over.yaml": "statechart: over\nextends: base\n" + overlay})
    result = check_file(specs / "over.yaml")
    assert result.diagnostics == []
    spec = result.spec
    assert spec is not None and spec.overlay is not None
    work = spec.states["working"].work
    assert work is not None and (work.handler, work.timeout, work.error) == \
        (handler, timeout, error)
    assert work.outcomes == ("finish",)
    changed = overlay.split("\n")[1].strip().rstrip(":")
    assert ("state-changed", changed) in spec.overlay.changes
    if changed == "idle":
        assert spec.states["idle"].work is not None
        assert spec.states["idle"].work.handler == "prepare"
    else:
        assert work.heartbeat == "1m" and work.span.file.endswith("base.yaml")


def test_an_overlay_removes_work_and_refuses_work_that_is_not_there(tmp_path: Path) -> None:
    specs = write(tmp_path, {"base.yaml": WORKING, "over.yaml": (
        "statechart: over\nextends: base\nremove: {work: [working]}\n")})
    result = check_file(specs / "over.yaml")
    assert result.diagnostics == []
    spec = result.spec
    assert spec is not None and spec.overlay is not None
    assert spec.work() == [] and "working" in spec.states
    assert ("state-changed", "working") in spec.overlay.changes
    write(tmp_path, {"bad.yaml": "statechart: bad\nextends: base\n"
                                 "remove: {work: [idle, nowhere]}\n"})
    assert found(specs / "bad.yaml") == [
        ("bad.yaml", "overlay", 3, "cannot remove the work of `idle`: the base has no work "
                                   "on it"),
        ("bad.yaml", "overlay", 3, "cannot remove the work of `nowhere`: the base has no "
                                   "such state")]
