"""Docs pages written by `build`: `docs/specs/NAME.md` (+ its SVG) and `docs/specs/index.md`
(the `docs` and `diagrams` folders of the project configuration, `outputs.project()`).

Every table cell is prepared here and escaped (`labels.markdown_cell`, `_code`); the Jinja2
templates (`templates/docs_*.j2`) only lay the prepared text out.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import jinja2

from statechart.linter import FileResult
from statechart.model import RecordField, Selector, Spec, SpecRule, State, Transition, Work
from statechart.names import IDENTIFIER
from statechart.outputs import OutputUnavailable, folder, header_lines, project, spec_display_path
from statechart.render import bounds, labels
from statechart.render.bounds import LayoutBounds
from statechart.render.dot import dot_source
from statechart.render.layout import LayoutError, layout, with_svg_header
from statechart.render.mermaid import mermaid_source
from statechart.render.style import OverlayMarks, overlay_marks
from statechart.report import uri_reference
from statechart.spec_chart import ends_run

_ENV = jinja2.Environment(
    loader=jinja2.FileSystemLoader(str(Path(__file__).resolve().parent.parent / "templates")),
    autoescape=False,  # Markdown, escaped cell by cell in Python
    keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True,
    undefined=jinja2.StrictUndefined,
)


# Memoized: a page names each state in several rows (a 10,000-state page: 200,000 cells).
@functools.lru_cache(maxsize=1 << 16)
def _code(name: str) -> str:
    """A name as inline code; a name that is not an identifier (a spec with errors) could
    hold a backtick, so it is escaped as text instead."""
    return f"`{name}`" if IDENTIFIER.match(name) else labels.markdown_cell(name)


def _constant(value: object) -> str:
    """An `assign:` constant as inline code (escaped as text when it cannot be one)."""
    text = str(value).lower() if isinstance(value, bool) else str(value)
    return f"`{text}`" if not set(text) & set("`|\n\r") else labels.markdown_cell(text)


def _names(names: tuple[str, ...] | list[str], joiner: str = ", ") -> str:
    return joiner.join(_code(n) for n in names)


_CHANGE_WORDS = {
    "state-added": "added state", "state-changed": "changed state",
    "state-removed": "removed state", "transition-added": "added transition",
    "transition-replaced": "replaced transition", "transition-removed": "removed transition",
    "field-added": "added record field", "field-removed": "removed record field",
    "rule-added": "added rule", "rule-replaced": "replaced rule", "rule-removed": "removed rule",
}


def _overlay(spec: Spec) -> dict[str, object] | None:
    """What the page says about the base a spec extends and what it changed there."""
    if spec.overlay is None:
        return None
    base = os.path.splitext(os.path.basename(spec.overlay.base))[0]
    changes = []
    for kind, name in spec.overlay.changes:
        shown = " on ".join(_code(part) for part in reversed(name.split(".", 1))) \
            if kind.startswith("transition-") else _code(name)
        changes.append(f"{_CHANGE_WORDS.get(kind, kind)} {shown}")
    from statechart.outputs import package_ref

    shipped = package_ref(spec.overlay.base)
    if shipped is not None:  # a base an installed package ships: no page of this project
        quoted = f"`{shipped}`" if "`" not in shipped else labels.markdown_cell(shipped)
        return {"base": quoted, "link": "", "changes": changes}
    return {"base": _code(base) if IDENTIFIER.match(base) else labels.markdown_cell(base),
            "link": f"{base}.md" if IDENTIFIER.match(base) else "", "changes": changes}


def _state_row(spec: Spec, state: State, marks: OverlayMarks) -> dict[str, str]:
    parent = spec.states.get(state.parent) if state.parent else None
    where = ""
    if parent is not None:
        relation = "region of" if parent.kind == "parallel" else "in"
        where = f" ({relation} {_code(parent.name)})"
    kind = {"parallel": " (parallel)", "final": " (final)"}.get(state.kind, "")
    sentences = [labels.markdown_cell(state.description)] if state.description else []
    if state.limit is not None:
        sentences.append(f"Entered at most {state.limit} times per run.")
    if state.entry:
        sentences.append("On entry: " + _names(state.entry) + ".")
    if state.exit:
        sentences.append("On exit: " + _names(state.exit) + ".")
    sentences.extend(_status_sentences(state))
    if state.history_defaults:
        kinds: dict[str, list[str]] = {}
        for history, default, _ in state.history_defaults:
            kinds.setdefault(default, []).append(history)
        sentences.append("History default (entered by history when nothing is remembered): "
                         + ", ".join(f"{_code(d)} ({' and '.join(k)})" for d, k in kinds.items())
                         + ".")
    description = " ".join(sentences)
    change = " **added**" if state.name in marks.added_states else \
        " **changed**" if state.name in marks.changed_states else ""
    return {
        "name": _code(state.name) + where + kind + change,
        "description": description,
        "tags": _names(state.tags),
        "requires": _names(state.requires),
        "terminal": "yes" if ends_run(state) else "",
    }


def _transition_line(t: Transition, marks: OverlayMarks) -> str:
    """The transition's row of the page's table (a line)."""
    mark = marks.edge_mark(t.source, t.key)
    change = f" **{mark}**" if mark else ""
    if t.in_states:
        guard = ", ".join(([_code(t.guard)] if t.guard else [])
                          + [f"in {_code(s)}" for s in t.in_states])
    else:
        guard = _code(t.guard) if t.guard else ""
    # an `assign:` field with its constant: `failureType` = `retries_exhausted`
    sets = ", ".join(f"{_code(n)} = {_constant(assigns[n])}" if n in assigns else _code(n)
                     for n in t.sets) if (assigns := dict(t.assigns)) else _names(t.sets)
    description = " ".join(filter(None, [
        labels.markdown_cell(t.description),
        f"Clears {_names(t.clears)} (before it sets)." if t.clears else "",
        f"Runs {_names(t.actions)}." if t.actions else ""])) \
        if t.description or t.clears or t.actions else ""
    return (f"| {_event_cell(t, change)} | {_code(t.source)} | {_names(t.all_targets)} | "
            f"{guard} | {sets} | {description} |\n")


def _event_cell(t: Transition, change: str) -> str:
    """A transition's trigger as code (`after 30m` too), its history or kind in words: a
    Markdown table cell shows an entity (`H&#42;`) as it is in some renderers."""
    shown = _code(t.shown) if IDENTIFIER.match(t.shown) else _constant(t.shown)
    if t.history:
        shown += f" ({t.history} history)"
    elif t.kind != "external":
        shown += f" ({t.kind})"
    return shown + change


def _statuses(spec: Spec) -> list[dict[str, str]]:
    """The status vocabulary: each status a record reports, and the states it is reported
    in (the innermost state naming one, else the top-level state's name)."""
    vocabulary = spec.statuses() or [n for n, s in spec.states.items() if s.parent is None]
    reported: dict[str, list[str]] = {status: [] for status in vocabulary}
    for state in spec.states.values():
        current: State | None = state
        while current is not None and not current.status and current.parent is not None:
            current = spec.states.get(current.parent)
        if current is not None:
            reported.setdefault(current.status or current.name, []).append(state.name)
    return [{"status": _code(status), "states": _names(states)}
            for status, states in reported.items()]


def _migrations(spec: Spec) -> list[str]:
    """What each migration does to a record stored by an earlier version, in words."""
    out = []
    for m in sorted(spec.migrations, key=lambda m: m.from_version):
        parts = [f"state {_code(old)} becomes {_code(new)}" for old, new, _ in m.states]
        parts += [f"field {_code(old)} becomes {_code(new)}" if new else
                  f"field {_code(old)} is dropped" for old, new, _ in m.fields]
        parts += [f"field {_code(name)} gets its default" for name, _ in m.fill]
        out.append(f"From version {m.from_version}: " + ("; ".join(parts) or "read as it is")
                   + ".")
    return out


def _status_sentences(state: State) -> list[str]:
    """What a state's `status:`, `counter:` and `clear:` mean, for its row."""
    out = []
    if state.status:
        out.append(f"The record reports status {_code(state.status)}.")
    if state.counter:
        out.append(f"Its entries are counted in {_code(state.counter)}.")
    if state.clear:
        out.append(f"Leaving it clears {_names(state.clear)}.")
    return out


def _selectors(spec: Spec, selectors: tuple[Selector, ...]) -> str:
    parts = []
    for kind, name, _ in selectors:
        if kind == "tag":
            parts.append(f"any state tagged {_code(name)}")
        elif kind == "subtree" or (name in spec.states and spec.states[name].children):
            parts.append(f"{_code(name)} (or any state inside it)")
        else:
            parts.append(_code(name))
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " or " + parts[-1]


def rule_in_words(spec: Spec, rule: SpecRule) -> str:
    """A spec rule as one plain sentence."""
    sources, targets = _selectors(spec, rule.sources), _selectors(spec, rule.targets)
    if rule.kind == "never":
        text = f"No transition goes directly from {sources} to {targets}."
    elif rule.kind == "only":
        text = f"A transition leaving {sources} goes only to {targets}."
    else:
        text = f"No path, however long, leads from {sources} to {targets}."
    if rule.overridable:
        text += " (Overridable.)"
    return text


def _record_row(f: RecordField) -> dict[str, str]:
    ftype = "one of " + _names(f.enum, " / ") if f.enum else f.type
    if f.default is not None:
        default = str(f.default).lower() if isinstance(f.default, bool) else str(f.default)
        ftype += f", default {_code(default)}"
    if f.context:
        ftype += ", run context (set by the application)"
    return {"name": _code(f.name), "type": ftype,
            "description": labels.markdown_cell(f.description)}


def _work_row(work: Work) -> dict[str, str]:
    return {"state": _code(work.state), "handler": _code(work.handler),
            "timeout": _constant(work.timeout),
            "heartbeat": _constant(work.heartbeat) if work.heartbeat else "",
            "outcomes": _names(work.outcomes), "error": _code(work.error) if work.error else "",
            "retry": f"{work.retries}, first after {_constant(work.backoff)}, doubling"
            if work.retries else "none"}


def spec_page(spec: Spec, limits: LayoutBounds | None = None) -> str:
    """The page; what it says about the Graphviz picture depends on the spec's size and
    `limits` (default: `bounds.current()`), never on how a layout went."""
    limits = limits or bounds.current()
    settings = limits.settings(spec)
    source = spec_display_path(spec)
    marks = overlay_marks(spec)
    docs = folder("docs")
    svg = ""
    omitted = limits.omitted(spec) if settings is None else ""
    if "diagrams" not in project().build:
        omitted = "this project does not build diagrams (`build` in its configuration)"
    elif settings:
        svg = uri_reference(os.path.relpath(f"{folder('diagrams')}/{spec.name}.svg", docs))
    return _ENV.get_template("docs_spec.md.j2").render(
        header=labels.header(header_lines(spec), "markdown"),
        title=spec.name if IDENTIFIER.match(spec.name) else labels.markdown_cell(spec.name),
        version=spec.version,
        description=labels.markdown_paragraph(spec.description),
        source=labels.markdown_cell(source),
        source_link=uri_reference(os.path.relpath(source, docs)),
        mermaid=mermaid_source(spec, header=False).rstrip("\n"),
        svg=svg, fast=settings == "fast", full_max=f"{bounds.FULL_MAX_TRANSITIONS:,}",
        omitted=omitted,
        # The two long tables as text (a Jinja2 loop over 50,000 rows was a fifth of the
        # page's time at 10,000 states), a line per row.
        state_lines="".join([
            f"| {r['name']} | {r['description']} | {r['tags']} | {r['requires']} | "
            f"{r['terminal']} |\n" for r in (_state_row(spec, s, marks)
                                              for s in spec.states.values())]),
        transition_lines="".join([_transition_line(t, marks) for t in spec.transitions()]),
        overlay=_overlay(spec),
        # A rule id starts its list item: one that is not an identifier is escaped as a
        # paragraph (`# x` would be a heading, `> x` a quote).
        rules=[{"id": (_code(r.id) if IDENTIFIER.match(r.id) else
                       labels.markdown_paragraph(r.id)) if r.id else "",
                "words": rule_in_words(spec, r),
                "description": labels.markdown_cell(r.description)} for r in spec.rules],
        record=[_record_row(f) for f in spec.record],
        work=[_work_row(w) for w in spec.work()],
        named_statuses=bool(spec.statuses()), statuses=_statuses(spec),
        version_changes=_migrations(spec) if spec.version > 1 or spec.migrations else None,
    )


def spec_svg(spec: Spec, limits: LayoutBounds | None = None) -> bytes | None:
    """The picture, laid out with the settings `limits` choose for the spec's size; None when
    it is too big to lay out (the page says so)."""
    limits = limits or bounds.current()
    settings = limits.settings(spec)
    if settings is None:
        return None
    svg = layout(dot_source(spec, header=False, fast=settings == "fast"), "svg",
                 engine=limits.engine, timeout=limits.timeout, max_memory=limits.max_memory)
    return with_svg_header(svg, labels.header(header_lines(spec), "svg"))


def outputs(spec: Spec) -> dict[str, bytes]:
    """`build`'s per-spec docs: the page and the SVG it links to (none for a spec over the
    layout bound: `statechart.render.bounds`). A layout that fails anyway (time, memory, no
    program) costs only the SVG: the page is still returned, in the exception."""
    limits = bounds.current()
    built = project().build
    page = {f"{folder('docs')}/{spec.name}.md": spec_page(spec, limits).encode("utf-8")} \
        if "docs" in built else {}
    svg_path = f"{folder('diagrams')}/{spec.name}.svg"
    if "diagrams" not in built:
        return page
    try:
        svg = spec_svg(spec, limits)
        if svg is None:
            return page
    except LayoutError as exc:
        raise OutputUnavailable(svg_path, str(exc), page) from None
    return {**page, svg_path: svg}


def index_page(specs: list[Spec], warnings: dict[str, list[str]]) -> str:
    """The overview page; `warnings` maps a spec's path to its warning lines."""
    rows = []
    for spec in sorted(specs, key=lambda s: s.name):
        rows.append({
            "name": labels.markdown_cell(spec.name),
            "link": f"{spec.name}.md" if IDENTIFIER.match(spec.name) else "",
            "description": labels.markdown_cell((spec.description or "").split(". ")[0]),
            "states": len(spec.states),
            "transitions": len(spec.transitions()),
            "warnings": "<br>".join(labels.markdown_cell(w)
                                    for w in warnings.get(spec.path, [])) or "none",
        })
    return _ENV.get_template("docs_index.md.j2").render(
        header=labels.header(["Generated from the specs by statechart-compiler. DO NOT EDIT.",
                              "Regenerate with: statechart build"], "markdown"),
        rows=rows)


def index_outputs(results: list[FileResult]) -> dict[str, bytes]:
    """`build`'s overview page, from the check results it already has (no spec is read or
    checked again here)."""
    specs = [r.spec for r in results if r.spec is not None]
    warnings = {r.spec.path: [f"line {d.span.line}: {d.message} [{d.rule}]"
                              for d in r.diagnostics if d.severity == "warning"]
                for r in results if r.spec is not None}
    return {f"{folder('docs')}/index.md": index_page(specs, warnings).encode("utf-8")}
