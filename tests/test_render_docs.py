"""Docs pages: what a reader of docs/specs/NAME.md and index.md sees."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import unquote

import pytest

from statechart.linter import check_file
from statechart.model import Spec
from statechart.render import docs

ROOT = Path(__file__).resolve().parent.parent


def load(path: str) -> Spec:
    spec = check_file(ROOT / path).spec
    assert spec is not None
    return spec


def table(page: str, heading: str) -> list[list[str]]:
    """The rows (cells split on unescaped `|`) of the first table after `## heading`."""
    lines = page.split(f"## {heading}\n", 1)[1].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    out = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        out.append([c.strip() for c in line.strip("|").split("|")])
    return out


def test_agent_run_page() -> None:
    spec = load("specs/agent_run.yaml")
    out = docs.outputs(spec)
    assert set(out) == {"docs/specs/agent_run.md", "docs/specs/agent_run.svg"}
    page = out["docs/specs/agent_run.md"].decode()
    assert page.startswith("<!-- Generated from ")
    assert "```mermaid\nstateDiagram-v2\n" in page
    assert "[agent_run.svg](agent_run.svg)" in page
    states = table(page, "States")
    assert len(states) == len(spec.states) and all(len(r) == 5 for r in states)
    failed = next(r for r in states if r[0].startswith("`failed`"))
    assert failed[2] == "`terminal`" and failed[3] == "`failureType`" and failed[4] == "yes"
    transitions = table(page, "Transitions")
    assert len(transitions) == len(spec.transitions())
    assert ["`error`", "`running`", "`retrying`", "`can_retry`",
            "`retryReason`, `retryChange`, `retryAt`", ""] in transitions
    assert ("- interrupted-exits: A transition leaving `interrupted` (or any state inside it) "
            "goes only to `resumed`, `cancelled`, `failed` or `timed_out`.") in page
    assert "No path, however long, leads from `cancelled` to `resumed`." in page
    assert "No transition goes directly from any state tagged `terminal` to any state tagged " \
           "`paused`." in page
    record = table(page, "Run record fields")
    assert record[0][:2] == ["`threadId`", "string, run context (set by the application)"]
    assert ["`interruptReason`", "one of `approval` / `human_review` / `external_input` / "
            "`risky_tool`"] in [row[:2] for row in record]
    svg = out["docs/specs/agent_run.svg"]
    assert ET.fromstring(svg).tag.endswith("svg") and b"DO NOT EDIT" in svg


def test_hostile_text_stays_in_its_cell() -> None:
    spec = load("tests/render_cases/hostile_labels.yaml")
    page = docs.spec_page(spec)
    assert "<script" not in page and "<b>" not in page and "<i>" not in page
    for heading, width in (("States", 5), ("Transitions", 6), ("Run record fields", 3)):
        rows = table(page, heading)
        assert rows and all(len(r) == width for r in rows), heading
    # the description paragraph cannot become a heading or list, and is one line
    paragraph = page.split("\n# ", 1)[1].split("\n\n")[1]
    assert "\n" not in paragraph and not re.match(r"[#>\-+*]", paragraph)


def test_a_file_name_cannot_inject_markup_into_the_source_link(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The spec's file name went raw into the link target: a line break in it started a
    heading and raw HTML on the page."""
    name = "a)\n# Injected\n<img src=x onerror=alert(1)> b.yaml"
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / name).write_bytes((ROOT / "specs" / "agent_run.yaml").read_bytes())
    monkeypatch.chdir(tmp_path)
    page = docs.spec_page(load(str(tmp_path / "specs" / name)))
    body = [line for line in page.splitlines() if not line.startswith("<!-- ")]  # the header
    assert not any(line.startswith("# Injected") for line in body)
    assert not any("<img" in line for line in body)
    line = next(line for line in page.splitlines() if line.startswith("Version "))
    target = re.fullmatch(r"Version \d+\. Source: \[[^\]]*\]\(([^()\s<>]+)\)\.", line)
    assert target is not None, line
    assert unquote(target.group(1)) == f"../../specs/{name}"


def test_text_at_the_start_of_a_block_is_escaped_once(tmp_path: Path) -> None:
    """A description starting with a backtick was escaped twice (`&#38;#96;`, shown as
    `&#96;code`); a rule id starting with `#` or `>` made its list item a heading or a quote."""
    spec = tmp_path / "marks.yaml"
    spec.write_text("""statechart: marks
version: 1
description: "`code` first"
initial: a
states:
  a: {on: {go: b}}
  b: {final: true}
rules:
  - {id: "# heading", never: {from: b, to: a}}
  - {id: "> quote", never: {from: b, to: a}}
  - {id: "1. item", never: {from: b, to: a}}
""")
    page = docs.spec_page(load(str(spec)))
    assert "\n&#96;code&#96; first\n" in page
    rules = [line for line in page.splitlines() if line.startswith("- ")]
    assert rules == ["- &#35; heading: No transition goes directly from `b` to `a`.",
                     "- &#62; quote: No transition goes directly from `b` to `a`.",
                     "- &#49;. item: No transition goes directly from `b` to `a`."]


def test_index_counts_and_warnings() -> None:
    specs = [load("specs/agent_run.yaml"), load("tests/render_cases/nested_parallel.yaml")]
    page = docs.index_page(specs, {specs[1].path: ["line 3: something | odd [rule-x]"]})
    rows = table("## Specs\n" + page.split("# Specs\n", 1)[1], "Specs")
    assert rows[0][0] == "[agent_run](agent_run.md)" and rows[0][2:4] == ["15", "30"]
    assert rows[1][0] == "[deployment](deployment.md)"
    assert rows[1][4] == "line 3: something &#124; odd &#91;rule-x&#93;"
    assert rows[0][4] == "none"


def test_an_overlay_shows_what_it_changed() -> None:
    """support_run extends agent_run: its page, DOT and Mermaid mark the added parts."""
    from statechart.render.docs import spec_page
    from statechart.render.dot import dot_source
    from statechart.render.mermaid import mermaid_source

    spec = check_file(Path(__file__).parent.parent / "specs" / "support_run.yaml").spec
    assert spec is not None
    page = spec_page(spec)
    assert "This spec extends [`agent_run`](agent_run.md)" in page
    assert "- added state `escalated`" in page
    assert "- added transition `escalate` on `running`" in page
    assert "| `escalated` **added** |" in page
    assert "| `escalate` **added** | `running` | `escalated` |" in page
    assert "| `created` |" in page  # base states carry no mark
    dot = dot_source(spec)
    assert 'escalated [label="escalated\\n<<paused>>" color="#2b8a3e"' in dot
    assert "added by this overlay of agent_run<" in dot
    # `running` gained a transition: patched, dashed (test_docs_page_sections.py)
    assert "changed by this overlay of agent_run (dashed)" in dot
    mermaid = mermaid_source(spec)
    assert 'state "escalated #60;#60;paused#62;#62; (added)" as s15' in mermaid
    assert "escalate / set#58; escalationTicket (added)" in mermaid
    assert "(added)" not in mermaid_source(check_file(
        Path(__file__).parent.parent / "specs" / "agent_run.yaml").spec)  # type: ignore[arg-type]


def test_the_index_takes_warnings_from_the_check_results_it_is_given() -> None:
    """`build` hands the index its check results; the index shows their warnings."""
    root = Path(__file__).parent
    results = [check_file(root / "cases" / "unused-field" / "never_set.yaml"),
               check_file(root.parent / "specs" / "agent_run.yaml")]
    page = docs.index_outputs(results)["docs/specs/index.md"].decode()
    # table cells escape backticks and brackets as entities
    assert "line 5: record field &#96;failureType&#96; is never set" in page
    assert "&#91;unused-field&#93;" in page
    assert "| 15 | 30 | none |" in page  # agent_run: no warnings


def test_a_medium_spec_gets_the_fast_layout_and_the_page_says_so(tmp_path: Path) -> None:
    lines = ["statechart: medium", "version: 1", "initial: s0", "states:"]
    for i in range(30):  # 120 transitions: over the full settings' 100
        target = f"s{i + 1}" if i < 29 else "done"
        lines.append(f"  s{i}: {{on: {{{', '.join(f'e{j}: {target}' for j in range(4))}}}}}")
    spec = tmp_path / "medium.yaml"
    spec.write_text("\n".join([*lines, "  done: {final: true}"]) + "\n")
    out = docs.outputs(load(str(spec)))
    page = out["docs/specs/medium.md"].decode()
    assert "[medium.svg](medium.svg)" in page
    assert "With more than 100 transitions, the drawing below is laid out with the fast" in page
    ET.fromstring(out["docs/specs/medium.svg"])
    agent_run = docs.spec_page(load("specs/agent_run.yaml"))
    assert "fast settings" not in agent_run and "No Graphviz drawing" not in agent_run


def test_an_overlay_marks_changed_base_states_and_replaced_transitions(tmp_path: Path) -> None:
    """A patched base state and a replaced transition are drawn as changed (dashed green,
    `(changed)`), not as added."""
    from statechart.render.dot import dot_source
    from statechart.render.mermaid import mermaid_source

    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "base.yaml").write_text(
        "statechart: base\nversion: 1\ninitial: a\nstates:\n"
        "  a: {on: {go: b, stop: done}}\n  b: {on: {stop: done}}\n  done: {final: true}\n")
    overlay = tmp_path / "specs" / "over.yaml"
    overlay.write_text("statechart: over\nversion: 1\nextends: base.yaml\nstates:\n"
                       "  a: {description: Patched., on: {go: done}}\n")
    spec = check_file(overlay).spec
    assert spec is not None
    dot = dot_source(spec)
    assert "changed by this overlay of base (dashed)" in dot
    assert "added by this overlay" not in dot
    assert 'style="rounded,filled,dashed"' in dot
    assert "style=dashed" in dot  # the replaced edge
    mermaid = mermaid_source(spec)
    assert "go (changed)" in mermaid and "(added)" not in mermaid
    assert "classDef changed" in mermaid and "class s0 changed" in mermaid
    page = docs.spec_page(spec)
    assert "| `go` **changed** |" in page
