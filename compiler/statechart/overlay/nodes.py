"""YAML node helpers the merge works with: a key's name, a mapping's entry by key, setting
an entry, an empty mapping, copying a tree with each node's file, and keys written twice."""

from __future__ import annotations

import yaml

from statechart.diagnostics import Diagnostic
from statechart.yaml_source import MAP_TAG, Source, scalar_value, span_of


def key_name(node: yaml.Node) -> str | None:
    if isinstance(node, yaml.ScalarNode):
        value = scalar_value(node)
        return value if isinstance(value, str) else None
    return None


def entry(mapping: yaml.Node, key: str) -> tuple[yaml.Node, yaml.Node] | None:
    if isinstance(mapping, yaml.MappingNode):
        for k, v in mapping.value:
            if key_name(k) == key:
                return k, v
    return None


def set_entry(mapping: yaml.MappingNode, key_node: yaml.Node, value: yaml.Node) -> None:
    key = key_name(key_node)
    for i, (k, _) in enumerate(mapping.value):
        if key_name(k) == key:
            mapping.value[i] = (mapping.value[i][0], value)
            return
    mapping.value.append((key_node, value))


def empty_map(like: yaml.Node) -> yaml.MappingNode:
    return yaml.MappingNode(MAP_TAG, [], like.start_mark, like.end_mark, flow_style=False)


def copy_tree(root: yaml.Node, path: str, files: dict[int, str],
               alive: list[yaml.Node]) -> yaml.Node:
    """Copy the containers of a tree (scalars are shared), recording each node's file."""
    copies: dict[int, yaml.Node] = {}
    order: list[yaml.Node] = []
    stack = [root]
    while stack:
        node = stack.pop()
        order.append(node)
        if isinstance(node, yaml.MappingNode):
            stack.extend(v for pair in node.value for v in pair)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    for node in reversed(order):  # children before parents
        if isinstance(node, yaml.MappingNode):
            new: yaml.Node = yaml.MappingNode(
                node.tag, [(copies[id(k)], copies[id(v)]) for k, v in node.value],
                node.start_mark, node.end_mark, flow_style=node.flow_style)
        elif isinstance(node, yaml.SequenceNode):
            new = yaml.SequenceNode(node.tag, [copies[id(v)] for v in node.value],
                                    node.start_mark, node.end_mark, flow_style=node.flow_style)
        else:
            new = node
        copies[id(node)] = new
        alive.append(new)
        files.setdefault(id(new), path)
    return copies[id(root)]


def duplicate_keys(source: Source) -> list[Diagnostic]:
    """Keys written twice in one mapping of `source` (iteratively, every mapping)."""
    problems: list[Diagnostic] = []
    stack = [source.root] if source.root is not None else []
    while stack:
        node = stack.pop()
        if isinstance(node, yaml.MappingNode):
            first: dict[str, yaml.Node] = {}
            for k, v in node.value:
                key = key_name(k)
                if key is not None and key in first:
                    mark = first[key].start_mark
                    problems.append(Diagnostic(
                        "duplicate-key", "error",
                        f"duplicate key `{key}` (first defined at line {mark.line + 1}, column "
                        f"{mark.column + 1})",
                        span_of(source.path, k),
                        "YAML keeps only the last value; remove or rename one of them"))
                elif key is not None:
                    first[key] = k
                stack.append(v)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    return problems
