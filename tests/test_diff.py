"""`statechart diff`: every change kind classified from small before/after specs, and the CLI."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from statechart.cli import diff as cli_diff
from statechart.cli import main
from statechart.diff import KINDS, diff_specs
from statechart.linter import check_source
from statechart.model import Spec
from statechart.report import inert

ROOT = Path(__file__).parent.parent

BASE = """\
statechart: job
version: 1
initial: idle
record:
  reason: {enum: [user, timeout]}
  note: {type: string}
  count: {type: integer}
states:
  idle:
    on:
      start: running
      cancel: {target: cancelled, set: [reason]}
  running:
    initial: working
    states:
      working: {on: {pause: paused}}
      paused:
        requires: [note]
        on: {resume: working}
    on:
      finish: done
      fail:
        - {target: retrying, guard: can_retry, set: [note]}
        - {target: failed}
      cancel: {target: cancelled, set: [reason]}
  retrying:
    limit: 3
    on: {retry: running, abort: failed}
  done: {final: true}
  failed: {final: true}
  cancelled: {final: true}
rules:
  - id: done-stays
    never: {from: done, to: running}
"""

B, S = True, False  # breaking, safe
Edits = list[tuple[str, str]]


def edit(text: str, edits: Edits) -> str:
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    return text


def spec(text: str, path: str) -> Spec:
    result = check_source(path, text.encode())
    assert not result.errors, result.errors
    assert result.spec is not None
    return result.spec


def kinds(old_text: str, new_text: str, **kw: object) -> list[tuple[str, bool]]:
    changes = diff_specs(spec(old_text, "old.yaml"), spec(new_text, "new.yaml"), **kw)  # type: ignore[arg-type]
    return sorted((c.kind, c.breaking) for c in changes)


FINISH_GUARDED = ("finish: done", "finish: {target: done, guard: can_finish}")

# (case id, edits making OLD from BASE, edits making NEW from BASE, expected (kind, breaking)).
# NEW always raises `version`, so `version-not-raised` shows only in its own cases.
# Retrying waits 30s before it runs again (a timer).
RETRY_TIMER = ("    limit: 3\n", "    limit: 3\n    after: {30s: running}\n")
TWO_TIMERS = ("    limit: 3\n", "    limit: 3\n    after: {30s: running, 1h: failed}\n")
NAMED_TIMERS = ("    limit: 3\n", "    limit: 3\n    after: {30s: {target: running, name: backoff}, "
                "1h: {target: failed, name: deadline}}\n")
UNTIL = ("  count: {type: integer}\n", "  count: {type: integer}\n  until: {type: datetime}\n")
DEADLINE = ("    limit: 3\n", "    limit: 3\n    after: {until: running}\n")

# `running` sends a tool timeout to `retrying`.
ERROR_TIMEOUT = ("      finish: done\n", "      finish: done\n      error.tool.timeout: retrying\n")

# `working` calls a tool; its outcome is `pause` (and `fail` when it fails).
WORK = ("      working: {on: {pause: paused}}\n",
        "      working:\n        work: {handler: run_tool, timeout: 5m, outcomes: [pause]}\n"
        "        on: {pause: paused}\n")

CASES: list[tuple[str, Edits, Edits, list[tuple[str, bool]]]] = [
    ("nothing", [], [], []),
    ("work-added", [], [WORK], [("work-added", S)]),
    ("work-removed", [WORK], [], [("work-removed", B)]),
    ("work-handler-changed", [WORK], [WORK, ("handler: run_tool", "handler: call_tool")],
     [("work-handler-changed", B)]),
    ("work-timeout-changed", [WORK], [WORK, ("timeout: 5m", "timeout: 2m, heartbeat: 30s")],
     [("work-timeout-changed", S)]),
    ("work-outcomes-narrowed", [WORK, ("outcomes: [pause]", "outcomes: [pause, finish]")],
     [WORK], [("work-outcomes-changed", B)]),
    ("work-error-added", [WORK], [WORK, ("outcomes: [pause]", "outcomes: [pause], error: fail")],
     [("work-outcomes-changed", S)]),
    ("work-retry-changed", [WORK], [WORK, ("outcomes: [pause]",
                                           "outcomes: [pause], retry: {max: 0}")],
     [("work-retry-changed", S)]),
    ("state-added", [], [("finish: done", "finish: done\n      archive: archived"),
                         ("  done: {final: true}", "  done: {final: true}\n  archived: {final: true}")],
     [("event-added", S), ("state-added", S)]),
    ("state-removed", [], [("cancel: {target: cancelled", "cancel: {target: failed"),
                           ("cancel: {target: cancelled", "cancel: {target: failed"),
                           ("  cancelled: {final: true}\n", "")],
     [("state-removed", B), ("transition-retargeted", B), ("transition-retargeted", B)]),
    ("state-renamed", [], [("finish: done", "finish: finished"),
                           ("  done: {final: true}", "  finished: {final: true}"),
                           ("from: done", "from: finished")],
     [("state-renamed", B)]),
    ("initial-changed", [], [("initial: working", "initial: paused")],
     [("initial-changed", S)]),
    ("final-added", [], [("    on: {retry: running, abort: failed}\n", "    final: true\n"),
                         ("    limit: 3\n", "")],
     [("event-removed", B), ("event-removed", B), ("final-added", B), ("limit-raised", S)]),
    ("final-removed", [("    on: {retry: running, abort: failed}\n", "    final: true\n"),
                       ("    limit: 3\n", "")], [],
     [("event-added", S), ("event-added", S), ("final-removed", B), ("limit-lowered", B)]),
    ("requires-added", [], [("working: {on:", "working: {requires: [count], on:")],
     [("requires-added", B)]),
    ("requires-removed", [], [("        requires: [note]\n", "")], [("requires-removed", S)]),
    ("limit-lowered", [], [("limit: 3", "limit: 2")], [("limit-lowered", B)]),
    ("limit-raised", [], [("limit: 3", "limit: 5")], [("limit-raised", S)]),
    ("event-added", [], [("start: running", "start: running\n      skip: done")],
     [("event-added", S)]),
    ("event-removed", [], [("on: {retry: running, abort: failed}", "on: {retry: running}")],
     [("event-removed", B)]),
    ("event-renamed", [], [("retry: running", "again: running")], [("event-renamed", B)]),
    ("transition-added", [], [("start: running", "start: running\n      finish: done")],
     [("transition-added", S)]),
    ("transition-removed", [], [("      cancel: {target: cancelled, set: [reason]}\n  running",
                                 "  running")],
     [("transition-removed", B)]),
    ("transition-hoisted", [("working: {on: {pause: paused}}",
                             "working: {on: {pause: paused, abort: failed}}"),
                            ("on: {resume: working}", "on: {resume: working, abort: failed}")],
     [("      finish: done", "      finish: done\n      abort: failed")],
     # Callers see no change; a stored step `working -abort-> failed` no longer replays.
     [("transition-added", S), ("transition-removed", B), ("transition-removed", B)]),
    # A stored step `retrying -retry-> running` no longer replays ...
    ("transition-retargeted", [], [("retry: running", "retry: idle")],
     [("transition-retargeted", B)]),
    # ... unless another alternative still takes it.
    ("transition-retargeted-kept", [], [("retry: running", "retry: [{target: running, guard: "
                                         "fresh}, idle]")],
     [("transition-added", S), ("transition-retargeted", S)]),
    ("guard-added", [], [FINISH_GUARDED], [("guard-added", B)]),
    ("guard-removed", [FINISH_GUARDED], [], [("guard-removed", S)]),
    ("guard-changed", [], [("guard: can_retry", "guard: may_retry")], [("guard-changed", B)]),
    ("set-added", [], [("start: running", "start: {target: running, set: [count]}")],
     [("set-added", B)]),
    ("set-removed", [], [("guard: can_retry, set: [note]}", "guard: can_retry}")],
     [("set-removed", B)]),
    ("field-added", [], [("  count: {type: integer}", ("  count: {type: integer}\n"
                                                      "  extra: {type: boolean}"))],
     [("field-added", S)]),
    ("field-removed", [], [("  count: {type: integer}\n", "")], [("field-removed", B)]),
    ("field-type-changed", [], [("count: {type: integer}", "count: {type: string}")],
     [("field-type-changed", B)]),
    ("field-type-widened", [], [("count: {type: integer}", "count: {type: number}")],
     [("field-type-changed", S)]),
    ("enum-to-string", [], [("reason: {enum: [user, timeout]}", "reason: {type: string}")],
     [("field-type-changed", S)]),
    ("enum-narrowed", [], [("[user, timeout]", "[user]")], [("enum-narrowed", B)]),
    ("enum-widened", [], [("[user, timeout]", "[user, timeout, admin]")], [("enum-widened", S)]),
    ("enum-value-renamed", [], [("[user, timeout]", "[user, deadline]")],
     [("enum-narrowed", B), ("enum-widened", S)]),
    ("rule-added", [], [("rules:\n", "rules:\n  - never: {from: failed, to: running}\n")],
     [("rule-added", S)]),
    ("rule-removed", [("rules:\n", "rules:\n  - never: {from: failed, to: running}\n")], [],
     [("rule-removed", S)]),
    ("rule-changed", [], [("never: {from: done, to: running}", "never: {from: done, to: idle}")],
     [("rule-changed", S)]),
    ("spec-renamed", [], [("statechart: job", "statechart: work")], [("spec-renamed", B)]),
    # Run context and status vocabulary.
    ("context-added", [], [("count: {type: integer}", "count: {type: integer, context: true}")],
     [("context-added", S)]),
    ("context-removed", [("count: {type: integer}", "count: {type: integer, context: true}")],
     [], [("context-removed", B)]),
    ("default-added", [], [("count: {type: integer}", "count: {type: integer, default: 0}")],
     [("default-changed", B)]),
    ("default-filled", [], [("count: {type: integer}", "count: {type: integer, default: 0}"),
                            ("rules:\n", "migrations: [{from_version: 1, fill: [count]}]\n"
                                         "rules:\n")],
     [("default-changed", S)]),
    ("default-of-context", [("count: {type: integer}", "count: {type: integer, context: true}")],
     [("count: {type: integer}", "count: {type: integer, context: true, default: 1}")],
     [("default-changed", S)]),
    ("field-added-with-default", [], [("  count: {type: integer}", (
        "  count: {type: integer}\n  level: {type: integer, default: 1}"))],
     [("field-added", B)]),
    ("requires-added-filled", [], [("count: {type: integer}", "count: {type: integer, default: 0}"),
                                   ("working: {on:", "working: {requires: [count], on:"),
                                   ("rules:\n", "migrations: [{from_version: 1, fill: [count]}]\n"
                                                "rules:\n")],
     [("default-changed", S), ("requires-added", S)]),
    ("clear-added", [], [("finish: done", "finish: {target: done, clear: [note]}")],
     [("clear-changed", B)]),
    ("state-clear-added", [], [("requires: [note]\n", "requires: [note]\n        clear: [count]\n")],
     [("clear-changed", B)]),
    ("status-added", [], [("paused:\n", "paused:\n        status: waiting\n")],
     [("status-changed", B)]),
    ("counter-added", [], [("limit: 3", "limit: 3\n    counter: retryCount")],
     [("counter-changed", B)]),
    ("timer-added", [], [RETRY_TIMER], [("timer-added", S)]),
    # Stored runs that fired it name its event, which is gone.
    ("timer-removed", [RETRY_TIMER], [], [("timer-removed", B)]),
    # The event is the timer's id (`after.delay1.retrying`), not its delay: it is kept.
    ("timer-delay-changed", [RETRY_TIMER], [(RETRY_TIMER[0], RETRY_TIMER[1].replace("30s", "PT1M"))],
     [("timer-changed", S)]),
    # A stored step `retrying -after.delay1.retrying-> running` no longer exists.
    ("timer-retargeted", [RETRY_TIMER], [(RETRY_TIMER[0], RETRY_TIMER[1].replace("running", "failed"))],
     [("timer-changed", B)]),
    ("timer-target-added", [RETRY_TIMER],
     [(RETRY_TIMER[0], RETRY_TIMER[1].replace(
         "running", "[{target: failed, guard: too_late}, {target: running}]"))],
     [("timer-changed", S)]),
    # Writing order numbers unnamed delay timers: swapping two changes both events' meaning.
    ("timers-reordered", [TWO_TIMERS], [(TWO_TIMERS[0], TWO_TIMERS[1].replace(
        "{30s: running, 1h: failed}", "{1h: failed, 30s: running}"))],
     [("timer-changed", S), ("timer-changed", S), ("timer-changed", B), ("timer-changed", B)]),
    # Named, they keep their events in any order; a new delay is a new due time only.
    ("named-timers-reordered", [NAMED_TIMERS], [(NAMED_TIMERS[0], NAMED_TIMERS[1].replace(
        "{30s: {target: running, name: backoff}, 1h: {target: failed, name: deadline}}",
        "{2h: {target: failed, name: deadline}, 30s: {target: running, name: backoff}}"))],
     [("timer-changed", S)]),
    # Naming a timer changes its event (`delay1` -> `backoff`) ...
    ("timer-named", [RETRY_TIMER], [(RETRY_TIMER[0], RETRY_TIMER[1].replace(
        "30s: running", "30s: {target: running, name: backoff}"))],
     [("timer-changed", B)]),
    # ... unless it is named after its event.
    ("timer-named-as-before", [RETRY_TIMER], [(RETRY_TIMER[0], RETRY_TIMER[1].replace(
        "30s: running", "30s: {target: running, name: delay1}"))], []),
    # A deadline timer's event was its field: records name it so, and still load.
    ("deadline-named", [UNTIL, DEADLINE], [UNTIL, (DEADLINE[0], DEADLINE[1].replace(
        "until: running", "until: {target: running, name: backoff}"))],
     [("timer-changed", S)]),
    # A stored step holds the constants its alternative gave; the check refuses others.
    ("assign-added", [], [("        - {target: failed}", "        - {target: failed, assign: {note: "
                                                       "gave up}}")],
     [("assign-changed", B)]),
    ("assign-value-changed", [("        - {target: failed}", "        - {target: failed, assign: "
                               "{count: 3}}")],
     [("        - {target: failed}", "        - {target: failed, assign: {count: 4}}")],
     [("assign-changed", B)]),
    # `working` now takes `finish` itself (a descendant's transition beats an ancestor's):
    # callers that send it there get another target; stored steps still replay.
    ("transition-shadowed", [], [("working: {on: {pause: paused}}",
                                  "working: {on: {pause: paused, finish: failed}}")],
     [("transition-shadowed", S)]),
    # ... by a descriptor: `error` takes `error.tool.timeout`, which `running` took.
    ("transition-shadowed-by-descriptor", [ERROR_TIMEOUT],
     [ERROR_TIMEOUT, ("working: {on: {pause: paused}}",
                      "working: {on: {pause: paused, error: failed}}")],
     [("event-added", S), ("transition-shadowed", S)]),
    # ... with a field the ancestor's transition did not need: callers are refused without it.
    ("transition-shadowed-with-set", [], [("working: {on: {pause: paused}}",
                                           "working: {on: {pause: paused, finish: {target: "
                                           "failed, set: [note]}}}")],
     [("transition-shadowed", B)]),
    # The same transition copied down changes nothing for callers.
    ("transition-copied-down", [], [("working: {on: {pause: paused}}",
                                     "working: {on: {pause: paused, finish: done}}")],
     [("transition-added", S)]),
    ("timer-removed-of-two", [TWO_TIMERS], [(TWO_TIMERS[0], TWO_TIMERS[1].replace(
        "{30s: running, 1h: failed}", "{1h: failed}"))],
     [("timer-removed", B), ("timer-changed", S), ("timer-changed", B)]),
]


@pytest.mark.parametrize("old_edits,new_edits,expected",
                         [pytest.param(*c[1:], id=c[0]) for c in CASES])
def test_change_kinds(old_edits: Edits, new_edits: Edits,
                      expected: list[tuple[str, bool]]) -> None:
    old = edit(BASE, old_edits)
    new = edit(BASE, [("version: 1", "version: 2"), *new_edits])
    assert kinds(old, new) == sorted(expected)


def test_the_table_covers_at_least_15_kinds() -> None:
    covered = {kind for case in CASES for kind, _ in case[3]}
    assert len(covered) >= 15
    assert covered <= set(KINDS)


def test_a_timer_change_needs_a_new_version_and_no_caller_sees_it() -> None:
    """Stored runs hold armed timers with due times that follow from the delay: the upgrade of
    an older version's record recomputes them, so `version` must be raised; callers never send
    a timer's event, so no event is added or removed."""
    timed = edit(BASE, [RETRY_TIMER])
    slower = edit(timed, [(RETRY_TIMER[1], RETRY_TIMER[1].replace("30s", "2m"))])
    assert kinds(timed, slower) == [("timer-changed", S), ("version-not-raised", B)]
    assert kinds(BASE, timed) == [("timer-added", S), ("version-not-raised", B)]


def test_version_not_raised_with_a_breaking_change() -> None:
    new = edit(BASE, [("limit: 3", "limit: 2")])
    assert kinds(BASE, new) == [("limit-lowered", B), ("version-not-raised", B)]


def test_version_unchanged_is_fine_for_safe_changes() -> None:
    assert kinds(BASE, edit(BASE, [("limit: 3", "limit: 5")])) == [("limit-raised", S)]


def test_version_lowered() -> None:
    assert kinds(edit(BASE, [("version: 1", "version: 3")]), BASE) == [("version-lowered", B)]


RENAMED = [("version: 1", "version: 2"), ("finish: done", "finish: finished"),
           ("  done: {final: true}", "  finished: {final: true}"),
           ("from: done", "from: finished")]


def test_a_migrated_state_rename_is_safe() -> None:
    new = edit(BASE, RENAMED)
    changes = diff_specs(spec(BASE, "old.yaml"), spec(new, "new.yaml"),
                         state_renames={"done": "finished"})
    assert [(c.kind, c.breaking, c.migrated) for c in changes] == [("state-renamed", S, True)]


def test_a_migration_merging_a_state_into_another_is_safe() -> None:
    new = edit(BASE, [("version: 1", "version: 2"), ("finish: done", "finish: failed"),
                      ("  done: {final: true}\n", ""), ("from: done", "from: failed")])
    # `finish` now enters `failed`: exactly where the migration sends stored `done` runs.
    assert kinds(BASE, new, state_renames={"done": "failed"}) == [("state-removed", S)]


def test_a_migrated_rename_still_needs_a_version() -> None:
    new = edit(BASE, RENAMED[1:])
    assert kinds(BASE, new, state_renames={"done": "finished"}) == [
        ("state-renamed", S), ("version-not-raised", B)]


def test_a_field_rename_without_migration_is_a_removal() -> None:
    new = edit(BASE, [("version: 1", "version: 2"), ("count: {type", "total: {type")])
    assert kinds(BASE, new) == [("field-added", S), ("field-removed", B)]
    assert kinds(BASE, new, field_renames={"count": "total"}) == [("field-renamed", S)]


def test_migrations_declared_in_the_new_spec_are_used() -> None:
    migration = "initial: idle\nmigrations:\n  - {from_version: 1, states: {done: finished}}"
    new = edit(BASE, [*RENAMED, ("initial: idle", migration)])
    assert kinds(BASE, new) == [("state-renamed", S)]


def test_the_migration_of_the_old_version_applies_directly() -> None:
    # Migrations map each old version straight onto the new one (docs/spec-format.md):
    # version 1 called the final state `done`, version 2 `finished`; version 3 calls it `closed`
    # and dropped `count`.
    v3_text = edit(BASE, [("version: 1", "version: 3"), ("finish: done", "finish: closed"),
                          ("  done: {final: true}", "  closed: {final: true}"),
                          ("from: done", "from: closed"), ("  count: {type: integer}\n", "")])
    v3 = spec(v3_text + """\
migrations:
  - from_version: 1
    states: {done: closed}
    fields: {count: null}
  - from_version: 2
    states: {finished: closed}
    fields: {count: null}
""", "new.yaml")
    v1 = spec(BASE, "old.yaml")
    assert sorted((c.kind, c.breaking) for c in diff_specs(v1, v3)) == [
        ("field-removed", S), ("state-renamed", S)]
    v2 = replace(spec(edit(BASE, RENAMED), "old.yaml"), version=2)
    assert sorted((c.kind, c.breaking) for c in diff_specs(v2, v3)) == [
        ("field-removed", S), ("state-renamed", S)]
    # Records of version 2 get only version 2's map: a `done` there is not migrated.
    v2_with_done = replace(v1, version=2)
    assert sorted((c.kind, c.breaking) for c in diff_specs(v2_with_done, v3)) == [
        ("field-removed", S), ("state-renamed", B)]


def test_positions_point_at_new_or_old_file() -> None:
    new = edit(BASE, [("version: 1", "version: 2"), ("[user, timeout]", "[user]"),
                      ("  count: {type: integer}\n", "")])
    changes = diff_specs(spec(BASE, "old.yaml"), spec(new, "new.yaml"))
    where = {c.kind: (c.span.file, c.span.line, c.span.column) for c in changes}
    assert where == {"enum-narrowed": ("new.yaml", 5, 3), "field-removed": ("old.yaml", 7, 3)}


def test_agent_run_against_itself_has_no_changes() -> None:
    text = (ROOT / "specs" / "agent_run.yaml").read_text()
    assert kinds(text, text) == []


def test_a_key_that_takes_over_events_names_them_and_where_they_went() -> None:
    """`"*"` on `working` takes every event `running` (or the top) took there: each is named,
    with the step it made before; events `working` took itself already, and events nobody
    took there, are not."""
    old = edit(BASE, [ERROR_TIMEOUT])
    new = edit(old, [("version: 1", "version: 2"),
                     ("working: {on: {pause: paused}}",
                      'working: {on: {pause: paused, "*": {target: failed, set: [note]}}}')])
    shadowed = [c for c in diff_specs(spec(old, "old.yaml"), spec(new, "new.yaml"))
                if c.kind == "transition-shadowed"]
    assert [c.diagnostic().message for c in shadowed] == [
        "`working` on `*` now takes `cancel`, `finish`, `error.tool.timeout`, `fail` to "
        "`failed` (before: `cancel` went from `running` to `cancelled`, `finish` went from "
        "`running` to `done`, `error.tool.timeout` went from `running` to `retrying`, `fail` "
        "went from `running` to `retrying` [can_retry] or `failed`) (breaks callers)"]
    assert shadowed[0].help.endswith("while `working` is active without `note` are refused")
    assert (shadowed[0].span.file, shadowed[0].span.line) == ("new.yaml", 16)


def test_every_kind_is_documented() -> None:
    docs = (ROOT / "docs" / "diff.md").read_text()
    missing = [k for k in KINDS if f"`{k}`" not in docs]
    assert not missing


# -- the command line ---------------------------------------------------------------------

def args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    cli_diff.add_arguments(parser)
    return parser.parse_args(list(argv))


def write(path: Path, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


def test_cli_safe_changes_exit_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = write(tmp_path / "old.yaml", BASE)
    new = write(tmp_path / "new.yaml", edit(BASE, [("limit: 3", "limit: 5")]))
    assert cli_diff.run(args(old, new, "--format", "concise")) == 0
    out = capsys.readouterr().out
    assert out == (f"{new}:26:3: warning[limit-raised]: state `retrying` may now be entered 5 "
                   "times (was 3) (safe)\nFound 0 errors and 1 warning.\n")


def test_cli_breaking_exit_1_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = write(tmp_path / "old.yaml", BASE)
    new = write(tmp_path / "new.yaml", edit(BASE, [("[user, timeout]", "[user]")]))
    assert cli_diff.run(args(old, new, "--format", "json")) == 1
    items = json.loads(capsys.readouterr().out)
    assert [(i["rule"], i["severity"], i["line"]) for i in items] == [
        ("version-not-raised", "error", 2), ("enum-narrowed", "error", 5)]
    assert items[0]["column"] == 10  # the version's value, found in the text


def test_cli_full_format_shows_both_files(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    old = write(tmp_path / "old.yaml", BASE)
    new = write(tmp_path / "new.yaml", edit(BASE, [("version: 1", "version: 2"),
                                                   ("  count: {type: integer}\n", "")]))
    assert cli_diff.run(args(old, new)) == 1
    out = capsys.readouterr().out
    assert f"--> {old}:7:3" in out and "7 |   count: {type: integer}" in out
    assert "Found 1 error and 0 warnings." in out


def test_cli_sarif_lists_change_kinds(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    old = write(tmp_path / "old.yaml", BASE)
    new = write(tmp_path / "new.yaml", edit(BASE, [("limit: 3", "limit: 2")]))
    assert cli_diff.run(args(old, new, "--format", "sarif")) == 1
    run = json.loads(capsys.readouterr().out)["runs"][0]
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert rules[-len(KINDS):] == list(KINDS)  # after the lint rules, for specs that fail
    for result in run["results"]:
        assert rules[result["ruleIndex"]] == result["ruleId"]


def test_cli_invalid_spec_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = write(tmp_path / "old.yaml", BASE)
    new = write(tmp_path / "new.yaml", edit(BASE, [("start: running", "start: runing")]))
    assert cli_diff.run(args(old, new, "--format", "concise")) == 1
    assert "error[unknown-state]" in capsys.readouterr().out


def test_cli_usage_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = write(tmp_path / "old.yaml", BASE)
    assert cli_diff.run(args(old)) == 2
    assert cli_diff.run(args(old, str(tmp_path / "missing.yaml"))) == 2
    assert "usage" in capsys.readouterr().err


def git(repo: Path, *argv: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *argv], check=True, capture_output=True,
                          text=True).stdout


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    git(tmp_path, "init", "-q")
    git(tmp_path, "config", "user.email", "t@example.com")
    git(tmp_path, "config", "user.name", "t")
    write(tmp_path / "specs" / "job.yaml", BASE)
    write(tmp_path / "specs" / "gone.yaml", BASE.replace("statechart: job", "statechart: gone"))
    write(tmp_path / "specs" / "same.yaml", BASE.replace("statechart: job", "statechart: same"))
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "one")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_against_git_ref(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(repo / "specs" / "job.yaml", edit(BASE, [("limit: 3", "limit: 2")]))
    (repo / "specs" / "gone.yaml").unlink()
    write(repo / "specs" / "new.yaml", BASE.replace("statechart: job", "statechart: fresh"))
    assert cli_diff.run(args("--against", "HEAD", "--format", "concise")) == 1
    *lines, summary = capsys.readouterr().out.splitlines()
    assert summary == "Found 3 errors and 1 warning."
    assert [re.sub(r": .*", "", line.split(": ", 1)[1]) for line in lines] == [
        "error[spec-removed]", "error[version-not-raised]", "error[limit-lowered]",
        "warning[spec-added]"]
    assert lines[0].startswith("HEAD:specs/gone.yaml:1:1: ")
    assert lines[2].startswith("specs/job.yaml:26:3: ")


def test_against_git_ref_nothing_breaking(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(repo / "specs" / "job.yaml", edit(BASE, [("limit: 3", "limit: 5")]))
    git(repo, "commit", "-qam", "two")
    assert cli_diff.run(args("--against", "HEAD~1", "specs/job.yaml", "--format", "json")) == 0
    assert [i["rule"] for i in json.loads(capsys.readouterr().out)] == ["limit-raised"]


def test_against_git_ref_reads_an_overlays_base_as_it_was(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    overlay = "extends: job\nstatechart: team\nstates:\n  running:\n    tags: [busy]\n"
    write(repo / "specs" / "team.yaml", overlay)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "overlay")
    write(repo / "specs" / "team.yaml", overlay.replace("[busy]", "[busy, hot]"))
    write(repo / "specs" / "job.yaml", edit(BASE, [("limit: 3", "limit: 5")]))
    assert cli_diff.run(args("--against", "HEAD", "--format", "concise")) == 0
    *lines, summary = capsys.readouterr().out.splitlines()
    assert summary == "Found 0 errors and 1 warning."
    # The base's change is seen in job.yaml and again through team.yaml: reported once; the
    # old overlay was checked against the old base (no "no spec at" error).
    assert [line.split(": ", 1)[1].split(":")[0] for line in lines] == ["warning[limit-raised]"]
    assert lines[0].startswith("specs/job.yaml:")


def test_against_a_bad_ref_is_a_usage_error(repo: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_diff.run(args("--against", "no-such-ref")) == 2
    assert "no-such-ref" in capsys.readouterr().err


def test_caller_only_breaks_need_no_new_version() -> None:
    new = edit(BASE, [("guard: can_retry", "guard: may_retry")])
    assert kinds(BASE, new) == [("guard-changed", B)]


def test_two_renames_that_refer_to_each_other() -> None:
    # `active` (was `running`) finishes in `finished` (was `done`): each matches only once
    # the other is known renamed.
    new = edit(BASE, [("version: 1", "version: 2"), ("start: running", "start: active"),
                      ("  running:", "  active:"), ("retry: running", "retry: active"),
                      ("to: running", "to: active"), ("finish: done", "finish: finished"),
                      ("  done: {final: true}", "  finished: {final: true}"),
                      ("from: done", "from: finished")])
    assert kinds(BASE, new) == [("state-renamed", B), ("state-renamed", B)]


def _clean_specs() -> list[tuple[str, Spec]]:
    out = []
    for path in sorted([*ROOT.glob("specs/*.yaml"), *ROOT.glob("tests/cases/**/*.yaml")]):
        result = check_source(str(path), path.read_bytes())
        if result.spec is not None and not result.errors:
            out.append((path.name, result.spec))
    return out


def test_any_two_specs_diff_without_crashing() -> None:
    specs = _clean_specs()
    assert len(specs) >= 2
    for _, old in specs:
        for _, new in specs:
            changes = diff_specs(old, new)
            assert all(c.kind in KINDS for c in changes)
            assert (old is new) == (changes == [])


# Names git quotes in its plain output ("caf\303\251.yaml"): read with -z, they must still be
# found, changed, added, deleted and materialized.
QUOTED_NAMES = ["café.yaml", 'we"ird.yaml', "back\\slash.yaml", "tab\there.yaml"]


@pytest.mark.parametrize("name", QUOTED_NAMES)
def test_against_a_ref_finds_specs_whose_names_git_quotes(
        repo: Path, name: str, capsys: pytest.CaptureFixture[str]) -> None:
    write(repo / "specs" / name, BASE.replace("statechart: job", "statechart: quoted"))
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "quoted")
    write(repo / "specs" / name, BASE.replace("statechart: job", "statechart: quoted")
          .replace("retry: running, abort: failed", "retry: running"))
    assert main(["diff", "--against", "HEAD", "--format", "concise"]) == 1
    out = capsys.readouterr().out
    assert inert(f"HEAD:specs/{name}:") in out and "error[event-removed]" in out


def test_against_a_ref_finds_added_deleted_and_overlay_specs_whose_names_git_quotes(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A base with a quoted name, read as it was at the ref through an overlay.
    write(repo / "specs" / "bäse.yaml", BASE.replace("statechart: job", "statechart: base"))
    write(repo / "specs" / "team.yaml",
          "extends: bäse\nstatechart: team\nstates:\n  running:\n    tags: [busy]\n")
    write(repo / "specs" / "gone é.yaml", BASE.replace("statechart: job", "statechart: gone2"))
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "quoted")
    (repo / "specs" / "gone é.yaml").unlink()
    write(repo / "specs" / "new é.yaml", BASE.replace("statechart: job", "statechart: fresh"))
    write(repo / "specs" / "team.yaml",
          "extends: bäse\nstatechart: team\nstates:\n  running:\n    tags: [busy, hot]\n")
    assert main(["diff", "--against", "HEAD", "--format", "concise"]) == 1
    out = capsys.readouterr().out
    assert "HEAD:specs/gone é.yaml:1:1: error[spec-removed]" in out
    assert "specs/new é.yaml:1:1: warning[spec-added]" in out
    assert "no spec at" not in out  # the overlay's old base was materialized from the ref


OVERLAY_BASE = """\
statechart: base
version: 3
initial: idle
states:
  idle: {on: {start: working, stop: stopped}}
  working: {on: {finish: done, stop: stopped}}
  done: {final: true}
  stopped: {final: true}
"""


def test_an_overlay_is_compared_with_its_base(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    # NEW extends OLD: its own name and version are not changes; what it changes is listed,
    # and nothing breaks: the overlay is a new spec, no stored run of the base is its run.
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "base.yaml").write_text(OVERLAY_BASE)
    (specs / "team.yaml").write_text("""\
extends: base
statechart: team
version: 1
remove: {transitions: [working.stop]}
add:
  states:
    review: {on: {approve: done}}
states:
  working: {on: {finish: review}}
""")
    for argv in (["diff", str(specs / "base.yaml"), str(specs / "team.yaml")],
                 ["diff", "--base", str(specs / "team.yaml")]):
        assert main([*argv, "--format", "concise"]) == 0
        out = capsys.readouterr().out
        assert "breaks" not in out and "error[" not in out
        assert "warning[transition-removed]: `working` on `stop` no longer goes to `stopped` " \
               "(callers written for the base must change)\n" in out
        assert "warning[transition-retargeted]: `working` on `finish` now goes to `review` " \
               "(was `done`) (safe: the overlay is a new spec, with no stored runs of the " \
               "base)\n" in out
        kinds = re.findall(r"\[([a-z-]+)\]", out)
        assert "spec-renamed" not in kinds and "version-not-raised" not in kinds
        assert "version-lowered" not in kinds
        assert "state-added" in kinds and "transition-removed" in kinds, out
    # The real example: only safe additions.
    assert main(["diff", "--base", str(ROOT / "specs" / "support_run.yaml")]) == 0
    assert "spec-renamed" not in capsys.readouterr().out


def test_diff_base_needs_an_overlay(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", "--base", str(ROOT / "specs" / "agent_run.yaml")]) == 2
    assert "has no `extends`" in capsys.readouterr().err


def test_diff_base_and_against_do_not_combine(repo: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Before, `--against` silently won and `--base` was ignored."""
    assert main(["diff", "--against", "HEAD", "--base", "specs/job.yaml"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "statechart diff: --base and --against do not combine" in err


def test_work_changes_of_pending_items_need_no_new_version() -> None:
    """A work change hits the pending items, not the records: a new handler breaks stored
    runs whose item names the old one, and `version` does not help them."""
    old = edit(BASE, [WORK])
    new = edit(BASE, [WORK, ("handler: run_tool", "handler: call_tool")])
    assert kinds(old, new) == [("work-handler-changed", True)]
    [change] = diff_specs(spec(old, "old.yaml"), spec(new, "new.yaml"))
    assert "pending items of stored runs in `working` name `run_tool`" in change.help


def test_a_guarded_alternative_moved_before_the_ancestors_fallback_changes_nothing() -> None:
    """`working`'s guarded `fail` moved to `running`, before the fallback `running` had:
    while `working` is active, `fail` is taken as before (`can_retry`: `retrying`, else
    `failed`), as the run selects: no caller breaks, only stored steps name the old source."""
    old = edit(BASE, [("working: {on: {pause: paused}}",
                       "working: {on: {pause: paused, fail: {target: retrying, "
                       "guard: can_retry, set: [note]}}}"),
                      ("        - {target: retrying, guard: can_retry, set: [note]}\n", "")])
    new = edit(BASE, [("version: 1", "version: 2")])
    changes = diff_specs(spec(old, "old.yaml"), spec(new, "new.yaml"))
    removed = [c for c in changes if c.kind == "transition-removed"]
    assert [c.diagnostic().message for c in removed] == [
        "`working` on `fail` now goes to `retrying` from an ancestor of `working` (breaks "
        "stored runs)"]
