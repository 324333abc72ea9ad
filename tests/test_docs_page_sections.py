"""A spec's docs page shows its diagram, writes timers and history as code and words, and has
a section for the status vocabulary and for what changed since earlier versions."""

from __future__ import annotations

from pathlib import Path

from statechart.linter import check_file
from statechart.model import Spec
from statechart.render import docs

ROOT = Path(__file__).resolve().parent.parent


def _page(path: str) -> str:
    spec: Spec | None = check_file(ROOT / path).spec
    assert spec is not None
    return docs.spec_page(spec)


def _section(page: str, heading: str) -> list[str]:
    return page.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0].strip().splitlines()


def test_the_page_shows_the_svg_and_writes_triggers_as_code() -> None:
    page = _page("specs/agent_run.yaml")
    assert "\n![The agent_run diagram](agent_run.svg)\n" in page
    assert "| `after 24h` | `waiting_for_input` | `timed_out` |" in page
    assert "| `proceed` (deep history) | `resumed` | `running` |" in page
    assert "&#" not in page.split("## States", 1)[1]


def test_the_status_vocabulary_has_its_section() -> None:
    status = _section(_page("specs/agent_run.yaml"), "Status")
    assert status[0] == ("The status a run's record reports (`status`): the `status:` of the "
                         "innermost active state")
    assert "| `waiting` | `waiting_for_approval`, `waiting_for_input` |" in status
    assert "| `failed` | `failed`, `timed_out` |" in status
    assert "| `running` | `running`, `reasoning`, `tool_call` |" in status
    flat = _section(_page("tests/golden/flat/spec.yaml"), "Status")
    assert flat[0] == "The status a run's record reports (`status`) is its active top-level state."


def test_migrations_are_said_in_words() -> None:
    changes = _section(_page("tests/cases/ok/agent_like.yaml"), "Changes from earlier versions")
    assert changes == ["- From version 1: state `waiting` becomes `paused`; field `why` becomes "
                       "`reason`; field `note` is dropped."]
    none = _section(_page("specs/agent_run.yaml"), "Changes from earlier versions")
    assert none[0] == "This version declares no migrations: a record stored by an earlier " \
                      "version is read as it"
    assert "## Changes from earlier versions" not in _page("tests/golden/flat/spec.yaml")


BASE = """\
statechart: shop
version: 1
initial: open
states:
  open:
    on:
      pay: paid
      park: parked
  parked:
    on:
      resume: open
  paid:
    final: true
"""

OVERLAY = """\
extends: shop
statechart: shop_b2b
version: 1
remove:
  states: [parked]
  transitions: [open.park]
states:
  open:
    on:
      hold: held
add:
  states:
    held:
      on:
        release: open
"""


def test_an_overlays_diagram_marks_added_patched_and_removed(tmp_path: Path) -> None:
    from statechart.render.dot import dot_source

    (tmp_path / "shop.yaml").write_text(BASE)
    (tmp_path / "shop_b2b.yaml").write_text(OVERLAY)
    result = check_file(tmp_path / "shop_b2b.yaml")
    assert result.spec is not None and not result.errors, result.diagnostics
    dot = dot_source(result.spec)
    # the added state's own transition is green, as the state is
    release = next(line for line in dot.splitlines() if "release" in line)
    assert 'color="#2b8a3e"' in release
    # the base state the overlay patched (a transition added to it) is dashed green
    opened = next(line for line in dot.splitlines() if line.strip().startswith("open ["))
    assert "dashed" in opened and 'color="#2b8a3e"' in opened
    assert "removed by this overlay: state parked, park on open<" in dot
    page = docs.spec_page(result.spec)
    assert "| `release` **added** | `held` | `open` |" in page
    assert "| `open` **changed** |" in page


def test_work_has_its_section_and_a_spec_without_work_none() -> None:
    work = _section(_page("specs/agent_run.yaml"), "Work")
    assert "| `tool_call` | `call_tool` | `5m` | `30s` | `tool_output` | `error` | 2, first " \
           "after `1s`, doubling |" in work
    assert "| `reasoning` | `reason` | `2m` | `30s` | `call_tool`, `complete`, `interrupt` | `error` | 2, " \
           "first after `2s`, doubling |" in work
    regions = _section(_page("tests/cases/ok/work_in_regions.yaml"), "Work")
    assert "| `asking_a` | `ask_a` | `5s` | `1s` | `answer_a` | `error` | none |" in regions
    assert "| `asking_b` | `ask_b` | `PT1M` |  | `answer_b` |  | 5, first after `2s`, " \
           "doubling |" in regions
    assert "## Work" not in _page("tests/golden/flat/spec.yaml")
    record = _section(_page("specs/agent_run.yaml"), "Run record fields")
    assert any(line.startswith("| `toolOutput` | json | What the last tool call returned")
               for line in record)
