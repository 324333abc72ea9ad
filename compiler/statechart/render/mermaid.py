"""Mermaid `stateDiagram-v2` text that GitHub renders.

Ids are synthetic (`s0`, `s1`, ... in document order): Mermaid's grammar rejects some words
as ids (`state`, `note`, `class`, `default`, anything with `-`), so no name is ever an id.
The real text goes into quoted labels, escaped by `labels.mermaid_text`.

Known Mermaid limits this works around:
- mermaid-js #4052: a transition to a compound state inside a parallel region crashes the
  renderer; such transitions (and initial arrows) go to the state's initial leaf instead.
- classDef styles are not applied to or inside composite states in some Mermaid versions,
  so the highlighted (current) states also say so in their label, not only in colour.
Not worked around (no way found in the syntax): mermaid-js #5096 reports a syntax error for
a transition from a state in a parallel state's second or later region to a state outside
it. Mermaid itself is not installed here, so this output is checked by the tests' parser,
not by Mermaid.
"""

from __future__ import annotations

import json

from statechart.model import Spec, State, Transition
from statechart.outputs import header_lines
from statechart.render import labels
from statechart.render.style import (
    HIGHLIGHT,
    OVERLAY,
    OverlayMarks,
    drawn_edges,
    event_label,
    overlay_marks,
    tag_fills,
)
from statechart.spec_chart import ends_run, in_parallel, initial_leaf

INDENT = "    "


def mermaid_source(spec: Spec, active: frozenset[str] = frozenset(),
                   header: bool = True, draft: str | None = None) -> str:
    """`draft`: the spec has errors (`render` of a work in progress): said in the title."""
    ids = {name: f"s{i}" for i, name in enumerate(spec.states)}
    lines = ["stateDiagram-v2"]
    if draft is not None:  # front matter; a JSON string is a YAML double-quoted scalar
        title = json.dumps(f"{spec.name}: work in progress ({draft})", ensure_ascii=True)
        lines = ["---", f"title: {title}", "---", *lines]
    if header:
        lines += [INDENT + line for line in
                  labels.header(header_lines(spec), "mermaid").splitlines()]
    # Where an arrow into each state is drawn (`_entry`), once per state, not per arrow.
    entries = {name: _entry(spec, name) for name in spec.states}
    drawn = {name: ids[entry] for name, entry in entries.items()}
    placed = _place_transitions(spec, entries)
    marks = overlay_marks(spec)
    # An explicit stack instead of recursion. A ("}", block) entry closes a block: its initial
    # arrow and edges are written after its children are declared, so no edge declares a
    # state implicitly before its label is known.
    stack: list[tuple[str, str, int, bool]] = [
        ("state", s.name, 1, False) for s in reversed(spec.top_level)]
    while stack:
        what, name, depth, separator = stack.pop()
        pad = INDENT * depth
        if what == "}":
            state = spec.states[name]
            if state.kind == "compound" and state.initial in spec.states:
                lines.append(f"{pad}[*] --> {ids[_entry(spec, state.initial)]}")
            lines += [pad + _edge(t, ids, drawn, marks) for t in placed.get(name, [])]
            lines.append(INDENT * (depth - 1) + "}")
            continue
        if separator:  # between the regions of a parallel state
            lines.append(pad + "--")
        state = spec.states[name]
        mark = "added" if name in marks.added_states else \
            "changed" if name in marks.changed_states else None
        label = labels.mermaid_text(_label(state, active, mark))
        if state.kind not in ("compound", "parallel"):
            lines.append(f'{pad}state "{label}" as {ids[name]}')
            if state.is_final:
                lines.append(f"{pad}{ids[name]} --> [*]")
            continue
        lines.append(f'{pad}state "{label}" as {ids[name]} {{')
        children = [c for c in state.children if c in spec.states]
        stack.append(("}", name, depth + 1, False))
        for i, child in reversed(list(enumerate(children))):
            stack.append(("state", child, depth + 1, state.kind == "parallel" and i > 0))
    if spec.initial in spec.states:
        lines.append(f"{INDENT}[*] --> {ids[_entry(spec, spec.initial)]}")
    lines += [INDENT + _edge(t, ids, drawn, marks) for t in placed.get("", [])]
    lines += _classes(spec, ids, active, marks)
    return "\n".join(lines) + "\n"


def _label(state: State, active: frozenset[str], mark: str | None = None) -> str:
    text = state.name + "".join(f" <<{t}>>" for t in state.tags) \
        + (f" / {state.work.text}" if state.work else "")
    # Said in words too: classDef colours do not reach inside composite states everywhere.
    return text + (f" ({mark})" if mark else "") + (" (current)" if state.name in active else "")


def _entry(spec: Spec, name: str) -> str:
    """Where an arrow into `name` is drawn: the state itself, except a compound state inside a
    parallel region, which Mermaid cannot take as a target (#4052): its initial leaf."""
    state = spec.states[name]
    if state.kind in ("compound", "parallel") and in_parallel(spec, name):
        return initial_leaf(spec, name)
    return name


def _place_transitions(spec: Spec, entries: dict[str, str]) -> dict[str, list[Transition]]:
    """Each transition goes into the innermost compound block that holds both ends (Mermaid
    lays out edges inside a composite better when declared there); "" is the top level.
    Parallel states hold only regions, so their edges go one level further out."""
    placed: dict[str, list[Transition]] = {}
    for _, t in drawn_edges(spec):
        if t.target not in spec.states:
            continue
        target = entries[t.target]
        above = spec.ancestors(t.source)
        if not above:  # a top-level source: its edges are the top level's
            placed.setdefault("", []).append(t)
            continue
        common = [a for a in above if a in spec.ancestors(target)]
        block = next((a for a in common if spec.states[a].kind == "compound"), "")
        if block and any(spec.states[a].kind == "parallel" for a in spec.ancestors(block)):
            block = ""  # inside a region, a block's statements could split the region
        placed.setdefault(block, []).append(t)
    return placed


def _edge(t: Transition, ids: dict[str, str], drawn: dict[str, str],
          marks: OverlayMarks) -> str:
    """`drawn`: the id an arrow into each state goes to."""
    text = event_label(t) + t.condition_text
    if t.sets:
        text += f" / {t.set_text}"
    if t.actions:
        text += f" / {t.action_text}"
    mark = marks.edge_mark(t.source, t.key)  # an overlay's: "added" or "changed"
    if mark:
        text += f" ({mark})"
    return f"{ids[t.source]} --> {drawn[t.target]} : {labels.mermaid_text(text)}"


def _classes(spec: Spec, ids: dict[str, str], active: frozenset[str],
             marks: OverlayMarks) -> list[str]:
    fills = tag_fills(spec)
    tag_class = {tag: f"tag{i}" for i, tag in enumerate(fills)}
    out = [f"{INDENT}classDef {tag_class[tag]} fill:{fill}" for tag, fill in fills.items()]
    out.append(f"{INDENT}classDef terminal fill:#d9d9d9,stroke-width:3px")
    out.append(f"{INDENT}classDef current stroke:{HIGHLIGHT},stroke-width:4px")
    if marks.added_states:
        out.append(f"{INDENT}classDef added stroke:{OVERLAY},stroke-width:3px")
    if marks.changed_states:
        out.append(f"{INDENT}classDef changed stroke:{OVERLAY},stroke-width:2px,"
                   "stroke-dasharray:4 3")
    members: dict[str, list[str]] = {}
    for name, state in spec.states.items():
        if state.tags:
            members.setdefault(tag_class[state.tags[0]], []).append(ids[name])
        if ends_run(state):
            members.setdefault("terminal", []).append(ids[name])
        if name in marks.added_states:
            members.setdefault("added", []).append(ids[name])
        elif name in marks.changed_states:
            members.setdefault("changed", []).append(ids[name])
        if name in active:
            members.setdefault("current", []).append(ids[name])
    out += [f"{INDENT}class {','.join(names)} {cls}" for cls, names in members.items()]
    return out
