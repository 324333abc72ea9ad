"""The one place that turns a YAML node tree into the model (`statechart.model.Spec`).

It reports what only the YAML shows: duplicate keys and schema problems (unknown or misplaced
keys, wrong types). Everything it can still make sense of goes into the model, so the graph
rules run and report too: a user sees all problems of a file at once. The allowed keys live in
`statechart.spec_format`, which also produces the published JSON Schema.

This module holds the entry, `build`, and the spec's top level; its modules build the parts:
`reader` (typed readers that report), `states`, `transitions`, `timers`, `record`,
`migrations`, `rules`, and `spelling` (the suggestions every "unknown name" message makes).
"""

from __future__ import annotations

import hashlib

import yaml

from statechart import spec_format as fmt
from statechart.build_model.migrations import MigrationBuilder
from statechart.build_model.record import RecordBuilder
from statechart.build_model.rules import RuleBuilder
from statechart.build_model.spelling import closest, did_you_mean, listing
from statechart.build_model.states import StateBuilder
from statechart.diagnostics import Diagnostic, Span
from statechart.model import Spec, State
from statechart.yaml_source import Source


class _Builder(StateBuilder, RecordBuilder, MigrationBuilder, RuleBuilder):
    """A whole spec: its top-level keys, then each part by its builder."""

    def spec(self, source: Source) -> Spec | None:
        root = source.root
        if root is None or (isinstance(root, yaml.ScalarNode) and root.value == ""
                            and not root.style):
            self.problems.append(Diagnostic(
                "schema", "error", "the file is empty", Span.point(self.path, 1, 1),
                "a spec needs at least `statechart`, `version`, `initial` and `states`"))
            return None
        items = self.mapping(root, "the spec", fmt.SPEC_KEYS)
        if items is None:
            return None
        got = {key: (key_node, value) for key, key_node, value in items}
        for only_overlay in ("remove", "add"):
            if only_overlay in got:
                self.schema(got[only_overlay][0],
                            f"`{only_overlay}` is only allowed in a spec with `extends`",
                            f"add `extends: BASE`, or delete `{only_overlay}`")
        for key in fmt.SPEC_REQUIRED:
            if key not in got:
                self.schema(root, f"missing required key `{key}`", fmt.SPEC_KEYS[key])
        name = self._spec_name(got.get("statechart"))
        version = 1
        if "version" in got:
            version = self.integer(got["version"][1], "`version`", 1) or 1
        description = self.text(got["description"][1], "`description`") if "description" in got \
            else None
        initial = self.string(got["initial"][1], "`initial`") if "initial" in got else None
        states: dict[str, State] = {}
        if "states" in got:
            self.states(got["states"][1], None, states)
        record = self.record(got["record"][1]) if "record" in got else ()
        self.deadlines(states, record)
        self.assigned_types(states, record)
        rules = self.rules(got["rules"][1]) if "rules" in got else ()
        migrations = self.migrations(got["migrations"][1]) if "migrations" in got else ()
        return Spec(
            name=name or "",
            version=version,
            description=description,
            initial=initial or "",
            states=states,
            record=record,
            rules=rules,
            path=self.path,
            source_sha256=hashlib.sha256(source.text.encode("utf-8")).hexdigest(),
            span=self.span(got["initial"][1]) if "initial" in got else self.span(root),
            name_span=self.span(got["statechart"][1]) if "statechart" in got else None,
            version_span=self.span(got["version"][1]) if "version" in got else None,
            duplicates=frozenset(self.duplicates),
            migrations=migrations,
            repairs=tuple(self.repairs),
        )

    def _spec_name(self, entry: tuple[yaml.Node, yaml.Node] | None) -> str | None:
        if entry is None:
            return None
        return self.string(entry[1], "`statechart` (the spec's name)")


def build(source: Source, files: dict[int, str] | None = None) -> tuple[Spec | None,
                                                                         list[Diagnostic]]:
    """The model of a spec; `files` maps nodes merged in from base specs to their files."""
    builder = _Builder(source, files)
    spec = builder.spec(source)
    return spec, builder.problems


__all__ = ["build", "closest", "did_you_mean", "listing"]
