"""Reading a YAML node tree with reports: `Reader` holds the problems and repairs found so far
and reads typed values (mappings with their allowed keys, strings, text, integers, booleans,
lists of names), reporting a schema problem for anything else."""

from __future__ import annotations

import yaml

from statechart import spec_format as fmt
from statechart.build_model.spelling import did_you_mean
from statechart.diagnostics import Diagnostic, Span
from statechart.model import Repair, State, Transition
from statechart.yaml_source import STR_TAG, Source, plain_name, scalar_value, span_of

Items = list[tuple[str, yaml.Node, yaml.Node]]
Keyed = dict[str, tuple[yaml.Node, yaml.Node]]  # key -> (key node, value node), in order


class Reader:
    """The file being read, the problems and repairs found so far, and the typed readers."""

    def __init__(self, source: Source, files: dict[int, str] | None = None) -> None:
        self.path = source.path
        self.files = files or {}  # node id -> file, for nodes merged in from a base spec
        self.problems: list[Diagnostic] = []
        self.duplicates: set[str] = set()
        self.repairs: list[Repair] = []  # what a schema error dropped or misread
        # The transitions with an `assign:` or a deadline timer, in the order built: their
        # values and fields are checked once the record is known, without a walk of all.
        self.typed: list[Transition] = []

    def dropped(self, kind: str, state: str, event: str = "", target: str | None = None) -> None:
        """Record that the schema problem just reported made the builder drop or misread a
        part of the model (see `statechart.model.Repair`)."""
        self.repairs.append(Repair(kind, state, self.problems[-1].span,  # type: ignore[arg-type]
                                   event, target))

    def typed_in_order(self, states: dict[str, State]) -> list[Transition]:
        """`typed`, in the document order of `states` (they are built a level at a time), each
        one still in its state."""
        if not self.typed:
            return []
        order = {name: i for i, name in enumerate(states)}
        kept = [t for t in self.typed if t.source in order
                and any(t is u for u in states[t.source].transitions)]
        return sorted(kept, key=lambda t: order[t.source])

    # -- reporting -------------------------------------------------------------------------
    def span(self, node: yaml.Node) -> Span:
        return span_of(self.files.get(id(node), self.path) if self.files else self.path, node)

    def error(self, rule: str, node: yaml.Node, message: str, hint: str = "") -> None:
        self.problems.append(Diagnostic(rule, "error", message, self.span(node), hint))

    def schema(self, node: yaml.Node, message: str, hint: str = "") -> None:
        self.error("schema", node, message, hint)

    # -- typed readers ---------------------------------------------------------------------
    def mapping(self, node: yaml.Node, where: str, allowed: dict[str, str]) -> Items | None:
        """The items of a mapping, after reporting duplicate, unknown and non-string keys."""
        keyed = self.keyed(node, where, allowed)
        if keyed is None:
            return None
        return [(key, key_node, value_node) for key, (key_node, value_node) in keyed.items()]

    def keyed(self, node: yaml.Node, where: str, allowed: dict[str, str]) -> Keyed | None:
        """`mapping`'s items by key (what the builders of states and transitions look up)."""
        if not isinstance(node, yaml.MappingNode):
            self.schema(node, f"{where} must be a mapping, not {node_kind(node)}",
                        f"write {where} as `key: value` lines")
            return None
        out: Keyed = {}
        first: dict[str, yaml.Node] = {}  # every key met, allowed or not
        for key_node, value_node in node.value:
            key = plain_name(key_node) or self._key(key_node, where)
            if key is None:
                continue
            if key in first:
                mark = first[key].start_mark
                self.error("duplicate-key", key_node,
                           f"duplicate key `{key}` in {where} (first defined at line "
                           f"{mark.line + 1}, column {mark.column + 1})",
                           "YAML keeps only the last value; remove or rename one of them")
                continue
            first[key] = key_node
            if allowed and key not in allowed:
                self._unknown_key(key, key_node, where, allowed)
                continue
            out[key] = (key_node, value_node)
        return out

    def _key(self, node: yaml.Node, where: str) -> str | None:
        if isinstance(node, yaml.ScalarNode):
            value = scalar_value(node)
            if isinstance(value, str) and value:
                return value
            if value is None or value == "":
                self.schema(node, f"empty key in {where}", "give the key a name")
                return None
            self.schema(node, f"key `{node.value}` in {where} is {node_kind(node)}, not a name",
                        f"quote it if it is meant as a name: \"{node.value}\"")
            return None
        self.schema(node, f"a key in {where} must be a plain name, not {node_kind(node)}")
        return None

    def _unknown_key(self, key: str, node: yaml.Node, where: str, allowed: dict[str, str]) -> None:
        hint = did_you_mean(key, allowed)
        if key == "set" and where.startswith("timer"):
            hint = "a timer is raised by the run itself and carries no values"
        elsewhere = fmt.WHERE_KEY_BELONGS.get(key)
        if not hint and elsewhere and elsewhere != where:
            hint = f"`{key}` belongs in {elsewhere}"
        if not hint:
            hint = "allowed keys: " + ", ".join(f"`{k}`" for k in allowed)
        self.schema(node, f"unknown key `{key}` in {where}", hint)

    def string(self, node: yaml.Node, where: str) -> str | None:
        name = plain_name(node)
        if name is not None:
            return name
        if isinstance(node, yaml.ScalarNode) and node.tag == STR_TAG:
            value = scalar_value(node)
            if isinstance(value, str) and value:
                return value
            if node.style and node.value:
                return str(node.value)  # a scalar node's value is its text
        self.schema(node, f"{where} must be a non-empty string, not {node_kind(node)}")
        return None

    def text(self, node: yaml.Node, where: str) -> str | None:
        """Free text (descriptions): any scalar, kept exactly as written."""
        if isinstance(node, yaml.ScalarNode):
            return str(node.value)  # a scalar node's value is its text
        self.schema(node, f"{where} must be text, not {node_kind(node)}")
        return None

    def integer(self, node: yaml.Node, where: str, minimum: int) -> int | None:
        value = scalar_value(node) if isinstance(node, yaml.ScalarNode) else None
        if isinstance(value, int) and not isinstance(value, bool) and value >= minimum:
            return value
        self.schema(node, f"{where} must be an integer >= {minimum}, not {node_kind(node)}")
        return None

    def boolean(self, node: yaml.Node, where: str) -> bool:
        value = scalar_value(node) if isinstance(node, yaml.ScalarNode) else None
        if isinstance(value, bool):
            return value
        self.schema(node, f"{where} must be `true` or `false`, not {node_kind(node)}")
        return False

    def names(self, node: yaml.Node, where: str) -> list[tuple[str, yaml.Node]]:
        """A name or a list of names."""
        nodes = node.value if isinstance(node, yaml.SequenceNode) else [node]
        out = []
        for item in nodes:
            name = self.string(item, f"each entry of {where}")
            if name is not None:
                out.append((name, item))
        return out


def node_kind(node: yaml.Node) -> str:
    if isinstance(node, yaml.MappingNode):
        return "a mapping"
    if isinstance(node, yaml.SequenceNode):
        return "a list"
    value = scalar_value(node)  # type: ignore[arg-type]
    if value is None:
        return "empty"
    if isinstance(value, bool):
        return f"the boolean `{node.value}`"
    if isinstance(value, (int, float)):
        return f"the number `{node.value}`"
    return f"the string {node.value!r}"
