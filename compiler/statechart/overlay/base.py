"""What the steps of a merge share: the files of the nodes, the problems and changes found so
far, how a problem is reported (rule `overlay`), and where each state of the tree is."""

from __future__ import annotations

import yaml

from statechart.diagnostics import Diagnostic, Span
from statechart.overlay.merged import Change
from statechart.overlay.nodes import entry, key_name
from statechart.yaml_source import span_of

ID = "overlay"


class ResolverBase:
    """The merge so far: node files, problems, changes, and the overlay being applied."""

    def __init__(self, files: dict[int, str], problems: list[Diagnostic]) -> None:
        self.files = files
        self.problems = problems
        self.changes: list[Change] = []
        self.overlay_path = ""  # the file being applied; its nodes are not in `files`
        self.removals = True  # False: leave `remove:` out (what the removals cause, by diff)
        self.added: list[str] = []  # the states the overlay being applied adds (`add:`)

    def span(self, node: yaml.Node) -> Span:
        return span_of(self.files.get(id(node), self.overlay_path), node)

    def error(self, node: yaml.Node, message: str, hint: str = "") -> None:
        self.problems.append(Diagnostic(ID, "error", message, self.span(node), hint))

    # -- states ----------------------------------------------------------------------------
    def index(self, root: yaml.MappingNode) -> dict[str, tuple[yaml.MappingNode, int]]:
        """state name -> (the `states` mapping holding it, its position there)."""
        out: dict[str, tuple[yaml.MappingNode, int]] = {}
        top = entry(root, "states")
        stack = [top[1]] if top and isinstance(top[1], yaml.MappingNode) else []
        while stack:
            states = stack.pop()
            for i, (k, v) in enumerate(states.value):
                name = key_name(k)
                if name is not None:
                    out.setdefault(name, (states, i))
                nested = entry(v, "states")
                if nested and isinstance(nested[1], yaml.MappingNode):
                    stack.append(nested[1])
        return out
