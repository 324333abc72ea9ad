"""The DOT text of a spec, built with the `graphviz` package (its quoting, never pasting).

Layout of the picture:
- a compound state is a cluster (rounded box) holding its children; a parallel state is a
  cluster whose regions are dashed clusters;
- a small dot with an arrow marks each initial state (the spec's, and each compound's);
- final states are double circles; terminal ones (top-level final) are filled grey;
- tags fill states with colour (`statechart.render.style`), named in a second label line too,
  so the picture does not rely on colour alone;
- an edge reads `event [guard]` and, below, `set: field, ...`;
- the graph label at the bottom is the title plus a legend of what appears in this picture.
Edges to or from a compound state attach to its cluster's border (`lhead`/`ltail`). They
are drawn from an invisible anchor below the cluster's children, and to the cluster's initial
marker (for a parallel state, an invisible anchor above its regions). That way Graphviz
places their labels outside the cluster, not over its children.
"""

from __future__ import annotations

import graphviz  # no stubs published: see [[tool.mypy.overrides]] in pyproject.toml

from statechart.model import Spec, State, Transition
from statechart.names import IDENTIFIER
from statechart.outputs import header_lines
from statechart.render import labels
from statechart.render.style import (
    DRAFT,
    HIGHLIGHT,
    OVERLAY,
    drawn_edges,
    event_label,
    look,
    overlay_marks,
    tag_fills,
)
from statechart.spec_chart import ends_run, initial_leaf

FONT = "Helvetica"
GRAPH_ATTR = {
    "compound": "true", "newrank": "true", "rankdir": "TB", "fontname": FONT,
    "fontsize": "11", "nodesep": "0.35", "ranksep": "0.45", "labelloc": "b",
    "labeljust": "l", "pad": "0.2", "outputorder": "edgesfirst",
}
NODE_ATTR = {"fontname": FONT, "fontsize": "11", "shape": "box", "style": "rounded,filled",
             "fillcolor": "white", "margin": "0.12,0.05", "height": "0.4"}
# For a bigger spec (`statechart.render.bounds`): fewer network-simplex and crossing passes,
# straight edges. Measured in docs/performance.md (render section).
FAST_GRAPH_ATTR = {"nslimit": "1", "nslimit1": "1", "mclimit": "0.1", "splines": "line"}
EDGE_ATTR = {"fontname": FONT, "fontsize": "9", "arrowsize": "0.7", "color": "#444444"}


class _Ids:
    """DOT ids: the state's name when it is a validated identifier, else `_s<index>`.
    Marker ids start with `_`, which no validated name does, so nothing collides."""

    def __init__(self, spec: Spec) -> None:
        self.ids = {name: name if IDENTIFIER.match(name) else f"_s{i}"
                    for i, name in enumerate(spec.states)}

    def __getitem__(self, name: str) -> str:
        return self.ids.get(name, "_unknown")


def dot_source(spec: Spec, active: frozenset[str] = frozenset(), header: bool = True,
               fast: bool = False, draft: str | None = None) -> str:
    """The DOT text; `active` states get a highlighted border (the run's configuration).
    `fast`: the settings for a bigger spec (FAST_GRAPH_ATTR, edge labels as `xlabel`).
    `draft`: the spec has errors (`render` of a work in progress): said in the legend."""
    ids = _Ids(spec)
    fills = tag_fills(spec)
    graph_attr = {**GRAPH_ATTR, **FAST_GRAPH_ATTR} if fast else GRAPH_ATTR
    graph = graphviz.Digraph(name=labels.dot_text(spec.name or "statechart"),
                             graph_attr=graph_attr, node_attr=NODE_ATTR, edge_attr=EDGE_ATTR)
    if spec.initial in spec.states:  # an unknown one (a draft) has nothing to point at
        _initial_marker(graph, "_init", spec, spec.initial, ids)
    marks = overlay_marks(spec)
    for state in spec.top_level:
        _add_state(graph, spec, state, ids, fills, active, added=marks.added_states,
                   changed=marks.changed_states)
    for t, one in drawn_edges(spec):
        _add_edge(graph, spec, one, ids, marks.edge_mark(t.source, t.key), fast)
    graph.attr(label=_legend(spec, fills, active, draft))
    text = str(graph.source)  # already a str; graphviz is untyped
    return (labels.header(header_lines(spec), "dot") if header else "") + text


def _add_state(graph: graphviz.Digraph, spec: Spec, state: State, ids: _Ids,
               fills: dict[str, str], active: frozenset[str], region: bool = False,
               added: frozenset[str] = frozenset(),
               changed: frozenset[str] = frozenset()) -> None:
    """Add a state (a node, or a cluster with its subtree) to `graph`. Recursion depth is
    bounded by the model's nesting limit. An overlay's added states get a thick green border,
    the base states it changed a dashed one."""
    seen = look(state, fills)
    lines = [state.name] + ([" ".join(f"<<{t}>>" for t in state.tags)] if state.tags else []) \
        + ([state.work.text] if state.work else [])
    label = labels.dot_lines(lines)
    tooltip = labels.dot_text(state.description or state.name)
    mark = {"color": HIGHLIGHT, "penwidth": "3"} if state.name in active else \
        {"color": OVERLAY, "penwidth": "2.5"} if state.name in added else \
        {"color": OVERLAY, "penwidth": "2"} if state.name in changed else {}
    if state.kind in ("compound", "parallel"):
        style = ["rounded"] + (["dashed"] if region or state.name in changed else []) \
            + (["filled"] if seen.fill else [])
        with graph.subgraph(name=f"cluster_{ids[state.name]}") as sub:
            attrs = {"label": label, "tooltip": tooltip, "style": ",".join(style),
                     "fillcolor": seen.fill or "white", "color": "#555555", "fontsize": "11",
                     "labeljust": "l", "labelloc": "t"}
            sub.attr(**{**attrs, **mark})
            if state.kind == "compound" and state.initial in spec.states:
                _initial_marker(sub, f"_init_{ids[state.name]}", spec, state.initial, ids)
            for child in state.children:
                if child in spec.states:
                    _add_state(sub, spec, spec.states[child], ids, fills, active,
                               region=state.kind == "parallel", added=added, changed=changed)
            if state.kind == "parallel":
                _entry_anchor(sub, spec, state, ids)
            if state.transitions:
                _exit_anchor(sub, spec, state, ids)
        return
    attrs = {"label": label, "tooltip": tooltip, **mark}
    if state.name in changed and state.name not in active:
        attrs["style"] = "rounded,filled,dashed"
    if seen.fill:
        attrs["fillcolor"] = seen.fill
    if state.is_final:
        attrs.update(shape="doublecircle", width="0.3", margin="0.02")
        if ends_run(state):
            attrs["penwidth"] = mark.get("penwidth", "1.5")
    if region:  # an atomic region still reads as a region: wrap it in its dashed box
        with graph.subgraph(name=f"cluster_{ids[state.name]}") as sub:
            sub.attr(label="", style="dashed,rounded", color="#555555")
            sub.node(ids[state.name], **attrs)
        return
    graph.node(ids[state.name], **attrs)


def _entry_point(spec: Spec, name: str, ids: _Ids) -> str:
    """The topmost node of a state's drawing: where an edge entering it should aim."""
    state = spec.states[name]
    if state.kind == "compound" and state.initial in spec.states:
        return f"_init_{ids[name]}"
    if state.kind == "parallel":
        return f"_entry_{ids[name]}"
    return ids[initial_leaf(spec, name)]


def _entry_anchor(graph: graphviz.Digraph, spec: Spec, state: State, ids: _Ids) -> None:
    """A parallel state has no initial marker; this invisible node above its regions plays
    that part for edges entering it (otherwise their labels land inside the cluster)."""
    anchor = f"_entry_{ids[state.name]}"
    graph.node(anchor, label="", shape="point", width="0", style="invis")
    for child in state.children:
        if child in spec.states:
            graph.edge(anchor, _entry_point(spec, child, ids), style="invis")


def _exit_anchor(graph: graphviz.Digraph, spec: Spec, state: State, ids: _Ids) -> None:
    """An invisible node below every leaf of the cluster: edges leaving the compound state
    start there, so their labels sit below the cluster instead of on top of its children
    (seen in the nested_parallel picture)."""
    anchor = f"_exit_{ids[state.name]}"
    graph.node(anchor, label="", shape="point", width="0", style="invis")
    for name in spec.subtree(state.name):
        if spec.states[name].kind in ("atomic", "final"):
            graph.edge(ids[name], anchor, style="invis")


def _initial_marker(graph: graphviz.Digraph, marker: str, spec: Spec, target: str,
                    ids: _Ids) -> None:
    graph.node(marker, label="", shape="point", width="0.12", style="filled",
               fillcolor="black", tooltip=labels.dot_text(f"initial: {target}"))
    head = spec.states.get(target)
    attrs = {"arrowsize": "0.6"}
    if head is not None and head.kind in ("compound", "parallel"):
        attrs["lhead"] = f"cluster_{ids[target]}"
    graph.edge(marker, ids[initial_leaf(spec, target)], **attrs)


def _add_edge(graph: graphviz.Digraph, spec: Spec, t: Transition, ids: _Ids,
              overlay: str | None = None, fast: bool = False) -> None:
    """One transition; `overlay` is "added" (green) or "changed" (dashed green) when an
    overlay added it or replaced the base's."""
    if t.target not in spec.states:
        return  # reported by the checker; nothing to draw to
    source, target = spec.states[t.source], spec.states[t.target]
    # Leave a compound state from the invisible node below its children, and enter one at
    # its initial marker (or, parallel, the invisible node above its regions): the edge's
    # label then sits outside the cluster instead of over its children (seen in the
    # agent_run and nested_parallel pictures).
    tail = f"_exit_{ids[t.source]}" if source.kind in ("compound", "parallel") \
        else ids[t.source]
    head = _entry_point(spec, t.target, ids)
    attrs: dict[str, str] = {}
    # lhead/ltail clip the edge at a cluster border; Graphviz refuses it (with a warning) when
    # the other end is inside that cluster, so only clip when the ends are outside each other.
    source_line = {t.source, *spec.ancestors(t.source)}
    target_line = {t.target, *spec.ancestors(t.target)}
    if source.kind != "atomic" and source.kind != "final" and t.source not in target_line:
        attrs["ltail"] = f"cluster_{ids[t.source]}"
    if target.kind != "atomic" and target.kind != "final" and t.target not in source_line:
        attrs["lhead"] = f"cluster_{ids[t.target]}"
    first = event_label(t) + t.condition_text
    lines = [first] + ([t.set_text] if t.sets else []) + ([t.action_text] if t.actions else [])
    # Tried `xlabel` for clipped edges (their label can sit inside the cluster they were
    # clipped at): Graphviz then placed labels far from their edges. Plain labels read better,
    # but each one is a node of the layout's helper graph: the fast settings use `xlabel`.
    attrs["xlabel" if fast else "label"] = labels.dot_lines(lines)
    attrs["tooltip"] = labels.dot_text(t.description or f"{t.source} -> {t.target} on "
                                                          f"{event_label(t)}")
    if overlay is not None:
        attrs.update(color=OVERLAY, fontcolor=OVERLAY, penwidth="1.8")
        if overlay == "changed":
            attrs["style"] = "dashed"
    graph.edge(tail, head, **attrs)


def _legend(spec: Spec, fills: dict[str, str], active: frozenset[str],
            draft: str | None = None) -> str:
    """The graph label: an HTML-like table (text escaped by `labels.html_text`)."""
    h = labels.html_text
    kinds = {s.kind for s in spec.states.values()}
    rows = [f'<TR><TD COLSPAN="2" ALIGN="LEFT"><B>{h(spec.name)}</B> '
            f'(version {spec.version})</TD></TR>']
    if draft is not None:
        rows.append(f'<TR><TD COLSPAN="2" ALIGN="LEFT"><FONT COLOR="{DRAFT}"><B>work in '
                    f'progress</B>: {h(draft)}</FONT></TD></TR>')

    def row(swatch: str, text: str, fill: str = "white", style: str = "") -> None:
        rows.append(f'<TR><TD BGCOLOR="{fill}" BORDER="1"{style}>{swatch}</TD>'
                    f'<TD ALIGN="LEFT">{text}</TD></TR>')

    row("&#9679;&#8594;", "initial state")
    if "final" in kinds:
        row("(( ))", "final state (double circle)")
    if any(ends_run(s) for s in spec.states.values()):
        row("(( ))", "terminal: the run ends here", fill=fills.get("terminal", "#d9d9d9"))
        fills = {t: f for t, f in fills.items() if t != "terminal"}  # same grey, said once
    if "compound" in kinds:
        row("[ ]", "compound state (box around its children)")
    if "parallel" in kinds:
        row("[ ]", "parallel region (dashed box)", style=' STYLE="DASHED"')
    for tag, fill in fills.items():
        row("", f"tag &lt;&lt;{h(tag)}&gt;&gt;", fill=fill)
    if active:
        rows.append(f'<TR><TD BORDER="3" COLOR="{HIGHLIGHT}"> </TD>'
                    f'<TD ALIGN="LEFT">current configuration</TD></TR>')
    marks = overlay_marks(spec)
    if spec.overlay is not None and marks:
        base = h(spec.overlay.base.replace("\\", "/").rsplit("/", 1)[-1].rsplit(".", 1)[0])
        if marks.added_states or marks.added_edges:
            rows.append(f'<TR><TD BORDER="3" COLOR="{OVERLAY}"> </TD>'
                        f'<TD ALIGN="LEFT"><FONT COLOR="{OVERLAY}">added by this overlay of '
                        f'{base}</FONT></TD></TR>')
        if marks.changed_states or marks.replaced_edges:
            rows.append(f'<TR><TD BORDER="2" COLOR="{OVERLAY}" STYLE="DASHED"> </TD>'
                        f'<TD ALIGN="LEFT"><FONT COLOR="{OVERLAY}">changed by this overlay '
                        f'of {base} (dashed)</FONT></TD></TR>')
        if marks.removed:
            rows.append(f'<TR><TD> </TD><TD ALIGN="LEFT"><FONT COLOR="{OVERLAY}">removed by '
                        f'this overlay: {h(_listed(marks.removed))}</FONT></TD></TR>')
    rows.append('<TR><TD COLSPAN="2" ALIGN="LEFT">edge: event [guard] / set: fields</TD></TR>')
    return ('<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="2" CELLPADDING="2">'
            + "".join(rows) + "</TABLE>>")


def _listed(items: tuple[str, ...], shown: int = 6) -> str:
    """The first `shown` items, then how many more: a legend line stays one line."""
    more = f" and {len(items) - shown} more" if len(items) > shown else ""
    return ", ".join(items[:shown]) + more
