"""Migrations (`migrations:`): per `from_version`, the states and fields it renames (a field
to null: dropped) and the fields it fills with their default."""

from __future__ import annotations

import yaml

from statechart import spec_format as fmt
from statechart.build_model.reader import Reader
from statechart.diagnostics import Span
from statechart.model import Migration
from statechart.yaml_source import scalar_value


class MigrationBuilder(Reader):
    """The migrations, each keyed by the version it upgrades from."""

    def migrations(self, node: yaml.Node) -> tuple[Migration, ...]:
        if not isinstance(node, yaml.SequenceNode):
            self.schema(node, "`migrations` must be a list",
                        "write `- {from_version: 1, states: {old: new}}`")
            return ()
        out = []
        for item in node.value:
            items = self.mapping(item, "a migration", fmt.MIGRATION_KEYS)
            if items is None:
                continue
            got = {key: (k, v) for key, k, v in items}
            if "from_version" not in got:
                self.schema(item, "a migration needs `from_version`")
                continue
            version = self.integer(got["from_version"][1], "`from_version`", 1)
            if version is None:
                continue
            states = tuple((old, new, span) for old, new, span in self._renames(
                got.get("states"), "states", allow_null=False) if new is not None)
            fields = tuple(self._renames(got.get("fields"), "fields", allow_null=True))
            fill = tuple((n, self.span(v)) for n, v in self.names(
                got["fill"][1], "`fill` of a migration")) if "fill" in got else ()
            out.append(Migration(version, states, fields, self.span(got["from_version"][0]),
                                 fill))
        return tuple(out)

    def _renames(self, entry: tuple[yaml.Node, yaml.Node] | None, what: str,
                 allow_null: bool) -> list[tuple[str, str | None, Span]]:
        if entry is None:
            return []
        out: list[tuple[str, str | None, Span]] = []
        for old, _, value in self.mapping(entry[1], f"`{what}` of a migration", {}) or ():
            if isinstance(value, yaml.ScalarNode) and scalar_value(value) is None and allow_null:
                out.append((old, None, self.span(value)))
                continue
            if isinstance(value, (yaml.SequenceNode, yaml.MappingNode)):
                self.error("invalid-migration", value,
                           f"migration maps `{old}` to several {what}; a migration is a function: "
                           "each old name maps to one new name",
                           "pick the one name old records should get")
                continue
            new = self.string(value, f"the new name of `{old}`")
            if new is not None:
                out.append((old, new, self.span(value)))
        return out
