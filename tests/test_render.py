"""DOT, SVG and Mermaid output: structure parsed back, hostile labels, determinism."""

from __future__ import annotations

import html
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from statechart.linter import check_file
from statechart.model import Spec
from statechart.render import labels
from statechart.render.dot import dot_source
from statechart.render.layout import LayoutError, find_engine, layout
from statechart.render.mermaid import mermaid_source

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "tests" / "render_cases"
SVG_NS = "{http://www.w3.org/2000/svg}"
XLINK_TITLE = "{http://www.w3.org/1999/xlink}title"


def load(path: Path) -> Spec:
    spec = check_file(path).spec
    assert spec is not None
    return spec


@pytest.fixture(scope="module")
def agent_run() -> Spec:
    return load(ROOT / "specs" / "agent_run.yaml")


@pytest.fixture(scope="module")
def nested() -> Spec:
    return load(CASES / "nested_parallel.yaml")


@pytest.fixture(scope="module")
def hostile() -> Spec:
    """Invalid names (the checker reports them) but a model all the same."""
    return load(CASES / "hostile_labels.yaml")


def graph_json(dot: str) -> dict:
    """The DOT as Graphviz parsed it (-Tjson), without the invisible layout helpers (anchor
    nodes and edges): what a reader of the picture sees."""
    g = json.loads(layout_json(dot))
    g["edges"] = [e for e in g["edges"] if e.get("style") != "invis"]
    g["objects"] = [o for o in g["objects"] if o.get("style") != "invis"]
    return g


def layout_json(dot: str) -> str:
    import subprocess

    done = subprocess.run([find_engine(), "-Tjson"], input=dot.encode(), capture_output=True,
                          timeout=60, check=True)
    return done.stdout.decode()


def svg_texts(svg: bytes) -> tuple[list[str], list[str]]:
    """(text of every <text> element, every tooltip) of an SVG, parsed as XML."""
    root = ET.fromstring(svg)
    texts = [t.text or "" for t in root.iter(f"{SVG_NS}text")]
    titles = [a.get(XLINK_TITLE) for a in root.iter(f"{SVG_NS}a")]
    return texts, [t for t in titles if t is not None]


# -- DOT structure ---------------------------------------------------------------------------

def test_dot_has_every_state_and_transition(agent_run: Spec) -> None:
    g = graph_json(dot_source(agent_run))
    nodes = {o["name"]: o for o in g["objects"] if "nodes" not in o}
    clusters = {o["name"]: o for o in g["objects"] if "nodes" in o}
    leaves = {n for n, s in agent_run.states.items() if s.kind in ("atomic", "final")}
    assert leaves <= set(nodes)
    assert {"cluster_running", "cluster_interrupted"} == set(clusters)
    markers = {n for n in nodes if n.startswith("_init")}
    assert markers == {"_init", "_init_running", "_init_interrupted"}
    # one edge per transition plus one per initial marker
    assert len(g["edges"]) == len(agent_run.transitions()) + len(markers)
    assert nodes["completed"]["shape"] == "doublecircle"
    assert nodes["created"]["shape"] == "box"


def test_dot_edge_labels_show_guard_and_set_fields(agent_run: Spec) -> None:
    g = graph_json(dot_source(agent_run))
    edge_labels = {e.get("label") for e in g["edges"]}
    assert "error [can_retry]\\nset: retryReason, retryChange, retryAt" in edge_labels
    assert "after approvalDeadline" in edge_labels and "proceed (H*)" in edge_labels
    assert "cancel\\nset: cancelReason" in edge_labels


def test_a_state_with_work_shows_its_handler_and_timeouts(agent_run: Spec) -> None:
    g = graph_json(dot_source(agent_run))
    nodes = {o["name"]: o for o in g["objects"] if "nodes" not in o}
    assert nodes["tool_call"]["label"] == "tool_call\\nwork call_tool (5m, heartbeat 30s)"
    assert nodes["reasoning"]["label"] == "reasoning\\nwork reason (2m, heartbeat 30s)"
    assert nodes["created"]["label"] == "created"
    texts, _ = svg_texts(layout(dot_source(agent_run), "svg"))
    assert "work call_tool (5m, heartbeat 30s)" in texts


def test_dot_nested_parallel_clusters(nested: Spec) -> None:
    g = graph_json(dot_source(nested))
    clusters = {o["name"]: o for o in g["objects"] if "nodes" in o}
    regions = {"cluster_build", "cluster_infra", "cluster_approval"}
    assert regions | {"cluster_deploying", "cluster_configuring", "cluster_live"} \
        == set(clusters)
    for region in regions:
        assert "dashed" in clusters[region]["style"]
    assert "dashed" not in clusters["cluster_deploying"]["style"]
    assert "dashed" not in clusters["cluster_configuring"]["style"]  # nested compound
    # `configuring` sits inside `infra`, which sits inside `deploying`
    by_id = {o["_gvid"]: o["name"] for o in g["objects"]}
    assert by_id[clusters["cluster_infra"]["subgraphs"][0]] == "cluster_configuring"


def test_tags_and_terminal_states_look_different(agent_run: Spec) -> None:
    g = graph_json(dot_source(agent_run))
    objects = {o["name"]: o for o in g["objects"]}
    paused = objects["cluster_interrupted"]["fillcolor"]
    terminal = objects["failed"]["fillcolor"]
    plain = objects["created"]["fillcolor"]
    assert len({paused, terminal, plain}) == 3
    assert "<<paused>>" in objects["cluster_interrupted"]["label"]


def test_highlight_marks_state_and_ancestors(agent_run: Spec) -> None:
    active = frozenset({"waiting_for_input", "interrupted"})
    g = graph_json(dot_source(agent_run, active))
    objects = {o["name"]: o for o in g["objects"]}
    assert objects["waiting_for_input"].get("penwidth") == "3"
    assert objects["cluster_interrupted"].get("penwidth") == "3"
    assert objects["suspended"].get("penwidth") is None
    assert "current configuration" in layout(dot_source(agent_run, active), "svg").decode()


# -- hostile labels ---------------------------------------------------------------------------

def test_hostile_dot_adds_no_nodes_or_links(hostile: Spec) -> None:
    dot = dot_source(hostile)
    g = graph_json(dot)
    names = {o["name"] for o in g["objects"]}
    assert "EVIL" not in names and "x" not in names and "z" not in names
    leaves = [s for s in hostile.states.values() if s.kind in ("atomic", "final")]
    assert len([n for n in names if not n.startswith(("_init", "cluster_"))]) == len(leaves)
    assert all(o.get("style") != "invis" or o["name"].startswith(("_exit_", "_entry_"))
               for o in json.loads(layout_json(dot))["objects"])
    markers = 1 + sum(s.kind == "compound" for s in hostile.states.values())
    assert len(g["edges"]) == len(hostile.transitions()) + markers


def test_hostile_labels_render_literally_in_svg(hostile: Spec) -> None:
    svg = layout(dot_source(hostile), "svg")
    assert b"javascript:" not in svg.replace(b"URL=&quot;javascript:", b"")  # only as text
    texts, tooltips = svg_texts(svg)
    for name in hostile.states:  # every name shows exactly, as one line
        assert labels.one_line(name) in texts, name
    assert 'say "hi" {x} <b>bold</b> | a\\b' in texts
    assert "trailing\\" in texts            # a trailing backslash did not eat the quote
    assert "line1 line2 \\N" in texts       # \N is not expanded to the node name
    assert "set: f|<i>" in texts
    state = hostile.states['say "hi" {x} <b>bold</b> | a\\b']
    assert labels.one_line(state.description or "") in tooltips
    assert "NUL here: end" in tooltips      # NUL removed, not passed to Graphviz


def test_svg_has_no_href(hostile: Spec) -> None:
    root = ET.fromstring(layout(dot_source(hostile), "svg"))
    for element in root.iter():
        for key, value in element.attrib.items():
            assert not (key.endswith("href") and value.strip()), (key, value)


MERMAID_LINE = re.compile(
    r'^\s*(stateDiagram-v2|%% .*|state "([^"]*)" as (s\d+)( \{)?|\}|--'
    r'|(\[\*\]|s\d+) --> (\[\*\]|s\d+)( : ([^\n]*))?'
    r"|classDef \w+ [\w:#,-]+|class s\d+(,s\d+)* \w+)$")
ENTITY = re.compile(r"#(\d+);")


def mermaid_parse(text: str) -> tuple[dict[str, str], list[tuple[str, str, str]]]:
    """States {id: label} and edges (source, target, label), decoding `#N;` entities; every
    line must be one of the forms the renderer writes."""
    states, edges = {}, []
    for line in text.splitlines():
        m = MERMAID_LINE.match(line)
        assert m, f"unexpected Mermaid line: {line!r}"
        if m.group(3):
            assert re.fullmatch(r"[A-Za-z0-9 _\-.,()/!?'#;]*", m.group(2)), line
            states[m.group(3)] = ENTITY.sub(lambda e: chr(int(e.group(1))), m.group(2))
        elif m.group(5):
            label = m.group(8) or ""
            assert re.fullmatch(r"[A-Za-z0-9 _\-.,()/!?'#;]*", label), line
            edges.append((m.group(5), m.group(6),
                          ENTITY.sub(lambda e: chr(int(e.group(1))), label)))
    return states, edges


def test_mermaid_structure(agent_run: Spec) -> None:
    states, edges = mermaid_parse(mermaid_source(agent_run))
    assert sorted(states.values()) == sorted(
        n + "".join(f" <<{t}>>" for t in s.tags) + (f" / {s.work.text}" if s.work else "")
        for n, s in agent_run.states.items())
    assert "tool_call / work call_tool (5m, heartbeat 30s)" in states.values()
    finals = sum(s.is_final for s in agent_run.states.values())
    assert len(edges) == len(agent_run.transitions()) + 3 + finals  # + [*] starts and ends
    ids = {label.split(" ")[0]: i for i, label in states.items()}
    assert (ids["running"], ids["retrying"],
            "error [can_retry] / set: retryReason, retryChange, retryAt") in edges


def test_mermaid_hostile_labels_parse_to_exact_text(hostile: Spec) -> None:
    text = mermaid_source(hostile)
    states, edges = mermaid_parse(text)
    assert len(states) == len(hostile.states)
    expected = {labels.one_line(n + "".join(f" <<{t}>>" for t in s.tags))
                for n, s in hostile.states.items()}
    assert set(states.values()) == expected
    assert "ev;\"1\" --> EVIL [g\"|{}] / set: f|<i>" in {e[2] for e in edges}
    assert "%%{" not in text.split("\n", 4)[4]  # no directive outside the header comment


def test_mermaid_parallel_regions_and_issue_4052(nested: Spec) -> None:
    text = mermaid_source(nested)
    states, edges = mermaid_parse(text)
    ids = {label.split(" ")[0]: i for i, label in states.items()}
    assert text.count("\n        --\n") == 2  # three regions of `deploying`
    # nothing targets a compound state inside a parallel region (mermaid-js #4052):
    # `configuring` is entered through its initial leaf `network`
    assert (ids["provisioning"], ids["network"], "provisioned") in edges
    for comp in ("build", "infra", "approval", "configuring"):
        assert all(target != ids[comp] for _, target, _ in edges)


def test_mermaid_highlight(agent_run: Spec) -> None:
    text = mermaid_source(agent_run, frozenset({"running", "reasoning"}))
    states, _ = mermaid_parse(text)
    assert "reasoning / work reason (2m, heartbeat 30s) (current)" in states.values()
    ids = {label.split(" ")[0]: i for i, label in states.items()}
    assert f"class {ids['running']},{ids['reasoning']} current" in text


# -- determinism and engines ------------------------------------------------------------------

def test_outputs_are_deterministic(nested: Spec) -> None:
    assert dot_source(nested) == dot_source(load(CASES / "nested_parallel.yaml"))
    assert mermaid_source(nested) == mermaid_source(load(CASES / "nested_parallel.yaml"))
    dot = dot_source(nested)
    assert layout(dot, "svg") == layout(dot, "svg")
    png = layout(dot, "png")
    assert png.startswith(b"\x89PNG") and png == layout(dot, "png")


def test_missing_engine_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from statechart.render import layout as layout_module

    monkeypatch.setitem(layout_module.ENGINES, "dot", "no-such-dot-program-xyz")
    with pytest.raises(LayoutError) as info:
        layout("digraph { a }", "svg", engine="dot")
    assert "\n" not in str(info.value) and "install Graphviz" in str(info.value)


@settings(max_examples=40, deadline=None)
@given(st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1,
               max_size=30))
def test_any_text_is_one_literal_dot_label(text: str) -> None:
    shown = labels.one_line(text)
    dot = f"digraph {{ a [label={_quoted(labels.dot_text(text))}] }}"
    if not shown:
        return
    texts, _ = svg_texts(layout(dot, "svg"))
    assert texts == [shown]


def _quoted(text: str) -> str:
    import graphviz

    return graphviz.quoting.quote(text)


def test_mermaid_text_keeps_only_safe_characters() -> None:
    text = 'a;b"c\n%%{init}%% <x> é'
    escaped = labels.mermaid_text(text)
    assert re.fullmatch(r"[A-Za-z0-9 _\-.,()/!?'#;]*", escaped)
    assert ENTITY.sub(lambda e: chr(int(e.group(1))), escaped) == labels.one_line(text)
    assert html.unescape("&#59;") == ";"  # the entity form is the standard one
