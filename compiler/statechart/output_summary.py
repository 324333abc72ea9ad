"""What changed between two versions of a generated file, in the spec's terms: the states,
transitions and record fields each version describes, added or removed. `build --check` says
this before a stale file's diff (whose first lines are mostly the header's new sha256), and
instead of it for a diagram, whose text diff is coordinates.

Each output type is read for what it shows of the spec, never executed: the module's `_SPEC`
tables (`ast.literal_eval` of the literals), the record schema's `configuration` states and
`properties`, the docs page's States and Transitions tables, the diagram's nodes, clusters and
edge tooltips (`SRC -> TGT on EVENT`). The same reading of both versions, so that what both
share (the fixed record keys, say) cancels out. A file that cannot be read so has no summary.
"""

from __future__ import annotations

import ast
import html
import json
import re
from dataclasses import dataclass, field

LISTED = 6  # names per line before "and N more"


@dataclass
class Facts:
    states: set[str] = field(default_factory=set)
    transitions: set[str] = field(default_factory=set)  # "source -event-> target"
    fields: set[str] = field(default_factory=set)
    kinds: tuple[str, ...] = ("states", "transitions", "fields")  # what this type shows


def _arrow(source: str, event: str, target: str) -> str:
    return f"{source} -{event}-> {target}"


def _python(text: str) -> Facts | None:
    tree = ast.parse(text)
    for node in tree.body:
        value = node.value if isinstance(node, ast.AnnAssign | ast.Assign) else None
        targets = [node.target] if isinstance(node, ast.AnnAssign) else \
            node.targets if isinstance(node, ast.Assign) else []
        if not isinstance(value, ast.Call) or not any(
                isinstance(t, ast.Name) and t.id == "_SPEC" for t in targets):
            continue
        tables = {k.arg: k.value for k in value.keywords if k.arg}
        facts = Facts()
        if "states" in tables:
            facts.states = {row[0] for row in ast.literal_eval(tables["states"])}
        # `alternatives=` (runtime API 1.7: a row per alternative), `transitions=` before
        rows = tables.get("alternatives", tables.get("transitions"))
        if rows is not None:
            facts.transitions = {_arrow(row[0], row[1], row[2])
                                 for row in ast.literal_eval(rows)}
        fields = tables.get("fields")
        if isinstance(fields, ast.Dict):
            facts.fields = {k.value for k in fields.keys
                            if isinstance(k, ast.Constant) and isinstance(k.value, str)}
        return facts
    return None


def _schema(text: str) -> Facts | None:
    data = json.loads(text)
    properties = data.get("properties", {})
    # Every state is in `configuration` when a spec nests states; a flat one has only
    # `status`, its states (and the statuses it names).
    states = properties.get("configuration", {}).get("items", {}).get("enum") \
        or properties.get("status", {}).get("enum", [])
    return Facts(states=set(states), fields=set(properties), kinds=("states", "fields"))


_ROW = re.compile(r"^\| `([^`]+)`[^|]*\|(.*)$")


def _page(text: str) -> Facts | None:
    facts = Facts(kinds=("states", "transitions"))
    section = ""
    for line in text.splitlines():
        if line.startswith("## "):
            section = line[3:].strip()
            continue
        row = _ROW.match(line)
        if row is None:
            continue
        if section == "States":
            facts.states.add(row.group(1))
        elif section == "Transitions":
            cells = [c.strip().strip("`") for c in row.group(2).split("|")]
            if len(cells) >= 2:
                facts.transitions.add(_arrow(cells[0], row.group(1), cells[1]))
    return facts if facts.states else None  # the index page is no spec's page


_NODE = re.compile(r'<g id="node\d+" class="node">\s*<title>([^<]*)</title>')
_CLUSTER = re.compile(r'<g id="clust\d+" class="cluster">\s*<title>cluster_([^<]*)</title>')
_EDGE = re.compile(r'xlink:title="([^"]*)"')
_EDGE_TEXT = re.compile(r"^(\S+) -> (\S+) on (\S+)$")


def _diagram(text: str) -> Facts | None:
    facts = Facts(kinds=("states", "transitions"))
    for name in (*_NODE.findall(text), *_CLUSTER.findall(text)):
        name = html.unescape(name)
        if not name.startswith("_"):
            facts.states.add(name)
    for tip in _EDGE.findall(text):
        edge = _EDGE_TEXT.match(html.unescape(tip))
        if edge:
            facts.transitions.add(_arrow(edge.group(1), edge.group(3), edge.group(2)))
    return facts


_READERS = {".py": _python, ".json": _schema, ".md": _page, ".svg": _diagram}


def _facts(suffix: str, data: bytes) -> Facts | None:
    reader = _READERS.get(suffix)
    if reader is None:
        return None
    try:
        return reader(data.decode("utf-8"))
    except (ValueError, SyntaxError, TypeError, IndexError, AttributeError):
        return None  # not a version this reader understands: the diff says the rest


def _names(items: set[str]) -> str:
    ordered = sorted(items)
    shown = ", ".join(ordered[:LISTED])
    return shown + (f" and {len(ordered) - LISTED} more" if len(ordered) > LISTED else "")


def summary(rel: str, old: bytes, new: bytes) -> list[str] | None:
    """What changed from `old` to `new` (both versions of the output `rel`), one line per
    kind that changed (`states: + escalated; - parked`), or one line saying none did; None
    when this type of file is not read or a version cannot be."""
    suffix = "." + rel.rsplit(".", 1)[-1] if "." in rel else ""
    before, after = _facts(suffix, old), _facts(suffix, new)
    if before is None or after is None:
        return None
    lines = []
    for kind in after.kinds:
        was, now = getattr(before, kind), getattr(after, kind)
        parts = [f"{sign} {_names(names)}" for sign, names in (("+", now - was),
                                                              ("-", was - now)) if names]
        if parts:
            lines.append(f"{kind}: {'; '.join(parts)}")
    if not lines:
        shown = ", ".join(after.kinds[:-1]) + f" and {after.kinds[-1]}"
        lines.append(f"same {shown}: only other text changed (descriptions, header, layout)")
    return lines
