"""What resolving an overlay gives: the merged tree (`Merged`) and what each overlay of the
chain did to its base (`Change`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import yaml

from statechart.diagnostics import Span
from statechart.yaml_source import Source


@dataclass(frozen=True)
class Change:
    """One thing an overlay did to its base, for docs and diagrams."""

    kind: str  # state-added, state-changed, state-removed, transition-added, ...
    name: str  # the state, `STATE.EVENT`, field or rule id
    # Where the overlay asked for it; set for removals, to which the linter attributes the
    # base's problems that the removal causes (`statechart.linter`).
    span: Span | None = None


@dataclass
class Merged:
    source: Source  # the merged tree (path: the overlay's file)
    files: dict[int, str] = field(default_factory=dict)  # id(node) -> file, for base nodes
    chain: list[str] = field(default_factory=list)  # overlay first, root base last
    changes: list[Change] = field(default_factory=list)
    # Every copied node, kept alive: `files` is keyed by id(), and a freed node's id could be
    # reused by a node made later, which would then be reported in the wrong file.
    alive: list[yaml.Node] = field(default_factory=list)
    sources: list[Source] = field(default_factory=list)  # each file as read (suppressions)
