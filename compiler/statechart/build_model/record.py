"""Record fields (`record:`): type or enum, description, `context` and `default`; and the
check, once the states are known, that an `assign:` value has its field's type."""

from __future__ import annotations

import math
from dataclasses import replace

import yaml

from statechart import spec_format as fmt
from statechart.build_model.reader import Reader, node_kind
from statechart.build_model.spelling import did_you_mean
from statechart.diagnostics import Diagnostic
from statechart.model import RecordField, State
from statechart.yaml_source import scalar_value
from statechart_runtime.chart.values import parse_time
from statechart_runtime.errors import InvalidRecord


class RecordBuilder(Reader):
    """The record fields, and the `assign:` values checked against them."""

    def assigned_types(self, states: dict[str, State], record: tuple[RecordField, ...]) -> None:
        """An `assign:` value has its field's type (an undeclared field is `unknown-field`)."""
        fields = {f.name: f for f in record}
        for t in self.typed_in_order(states):
            for (name, value), span in zip(t.assigns, t.assign_spans, strict=True):
                field = fields.get(name)
                problem = _default_problem(field, value) if field is not None else ""
                if field is not None and problem:
                    self.problems.append(Diagnostic(
                        "schema", "error", f"`assign` of `{t.source}` on `{t.shown}`: "
                        f"`{name}` must be {problem}, not {_value_text(value)}", span,
                        f"write a value of the field's type: {_default_example(field)}"))

    # -- record fields ---------------------------------------------------------------------
    def record(self, node: yaml.Node) -> tuple[RecordField, ...]:
        out = []
        for name, key_node, value in self.mapping(node, "`record`", {}) or ():
            where = f"record field `{name}`"
            items = self.mapping(value, where, fmt.FIELD_KEYS)
            if items is None:
                continue
            got = {key: (k, v) for key, k, v in items}
            enum: tuple[str, ...] = ()
            ftype = None
            if "enum" in got:
                enum_node = got["enum"][1]
                if not isinstance(enum_node, yaml.SequenceNode) or not enum_node.value:
                    self.schema(enum_node, f"`enum` of {where} must be a non-empty list")
                else:
                    enum = tuple(n for n, _ in self.names(enum_node, f"`enum` of {where}"))
                    if len(set(enum)) != len(enum):
                        self.schema(enum_node, f"`enum` of {where} lists a value twice")
                ftype = "enum"
                if "type" in got:
                    self.schema(got["type"][0], f"{where} has both `type` and `enum`",
                                "an enum field's values are strings; drop `type`")
            elif "type" in got:
                ftype = self.string(got["type"][1], f"`type` of {where}")
                if ftype is not None and ftype not in fmt.FIELD_TYPES:
                    self.schema(got["type"][1], f"unknown type `{ftype}` for {where}",
                                did_you_mean(ftype, fmt.FIELD_TYPES)
                                or "types: " + ", ".join(fmt.FIELD_TYPES))
                    ftype = None
            else:
                self.schema(value, f"{where} needs `type` or `enum`")
            description = self.text(got["description"][1], f"`description` of {where}") \
                if "description" in got else None
            field = RecordField(name, ftype or "string", enum,  # type: ignore[arg-type]
                                description, self.span(key_node))
            if "context" in got or "default" in got:
                field = self._field_context(field, got, where)
            out.append(field)
        return tuple(out)

    def _field_context(self, field: RecordField, got: dict[str, tuple[yaml.Node, yaml.Node]],
                       where: str) -> RecordField:
        """A field's `context` and `default` (a default must have the field's type)."""
        context = "context" in got and self.boolean(got["context"][1], f"`context` of {where}")
        if "default" not in got:
            return replace(field, context=context)
        node = got["default"][1]
        value = scalar_value(node) if isinstance(node, yaml.ScalarNode) else None
        problem = _default_problem(field, value)
        if problem:
            self.schema(node, f"`default` of {where} must be {problem}, not {node_kind(node)}",
                        f"write a value of the field's type: {_default_example(field)}")
            value = None
        return replace(field, context=context, default=value,  # type: ignore[arg-type]
                       default_span=self.span(node))


def _default_problem(field: RecordField, value: object) -> str:
    """What a `default` of `field` must be, or "" when `value` is one."""
    if field.type == "enum":
        ok = isinstance(value, str) and value in field.enum
        return "" if ok else "one of " + ", ".join(f"`{v}`" for v in field.enum)
    if field.type == "datetime":
        try:
            ok = isinstance(value, str) and parse_time("default", value) is not None
        except InvalidRecord:
            ok = False
        return "" if ok else "an RFC 3339 time with an offset (`2024-01-01T00:00:00Z`)"
    wanted: dict[str, tuple[type, ...]] = {"string": (str,), "integer": (int,),
                                           "number": (int, float), "boolean": (bool,),
                                           "json": (str, int, float, bool)}
    ok = isinstance(value, wanted[field.type]) and (
        field.type in ("boolean", "json") or not isinstance(value, bool))
    if ok and isinstance(value, float) and not math.isfinite(value):
        ok = False
    if field.type == "json":  # a constant the YAML writes: any scalar
        return "" if ok else "a string, a number or a boolean"
    article = "an" if field.type == "integer" else "a"
    return "" if ok else f"{article} {field.type}"


def _value_text(value: object) -> str:
    """A constant as `node_kind` shows a node (what YAML made of it)."""
    if isinstance(value, bool):
        return f"the boolean `{str(value).lower()}`"
    if isinstance(value, int | float):
        return f"the number `{value}`"
    return f"the string {value!r}"


def _default_example(field: RecordField) -> str:
    examples = {"string": '`""`', "integer": "`0`", "number": "`0.5`", "boolean": "`false`",
                "datetime": "`2024-01-01T00:00:00Z`", "json": '`""`'}
    return f"`{field.enum[0]}`" if field.type == "enum" and field.enum \
        else examples.get(field.type, "")
