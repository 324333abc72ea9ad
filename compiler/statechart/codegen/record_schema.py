"""`generated/NAME.schema.json` (the `schema` folder of the project configuration): the JSON
Schema (draft 2020-12) of a spec's run record.

It describes exactly what the generated module's `to_json()` writes: `status` is one of the
top-level states (or, with a status vocabulary, one of its statuses), fields a state requires
are required while that state is active (`if`/`then` on `status` for top-level states, on
`configuration` for nested ones and with a status vocabulary), enum fields list their values,
datetimes carry `format: date-time` (assert it with a format checker; the `rfc3339-validator`
package makes jsonschema check it), and each count is bounded by its state's limit, as is each
counter (`counter:`). Field defaults are given as `default`. History entries allow only the
spec's events (the run's own `done.state.X` and timers' `after.KEY.X` included), the members
of the families of those the application sends (`error.tool.ratelimit`), and its states;
`remembered` (specs with history transitions) lists what each history target remembers. A
spec with timers (`after:`) adds `createdAt` and `timers`, the armed timers in due order. A
step of a transition whose alternatives all `assign:` a field holds that constant.
"""

from __future__ import annotations

import json
import re
from typing import Any

from statechart import spec_chart
from statechart.model import RecordField, Spec
from statechart.outputs import folder, header_lines
from statechart_runtime.chart import events
from statechart_runtime.chart.values import SENT_BY, SENT_BY_MAX, parse_time, time_text

# A step's reserved value: who sent its event (statechart_runtime.chart.values.SENT_BY).
_SENT_BY_SCHEMA = {"type": "string", "minLength": 1, "maxLength": SENT_BY_MAX,
                   "description": "who sent the event (the identity an authenticated "
                                  "caller gave), kept with the step; no transition sets it"}

DRAFT = "https://json-schema.org/draft/2020-12/schema"
ID_BASE = "https://statechart-compiler.dev/schema/run-record"


def field_schema(f: RecordField) -> dict[str, Any]:
    out: dict[str, Any]
    if f.type == "enum":
        out = {"enum": list(f.enum)}
    elif f.type == "datetime":
        out = {"type": "string", "format": "date-time"}
    elif f.type == "json":  # any JSON value but null (None unsets a field)
        out = {"type": ["object", "array", "string", "number", "boolean"],
               "$comment": "json: at most 1,048,576 bytes of compact JSON text "
                           "(statechart_runtime.chart.json_values.MAX_JSON_BYTES)"}
    else:
        out = {"type": f.type}
    if f.description:
        out["description"] = f.description
    if f.default is not None:
        out["default"] = f.default
    return out


def schema(spec: Spec) -> dict[str, Any]:
    flat = spec_chart.is_flat(spec)
    states = list(spec.states)
    limits = {s.name: s.limit for s in spec.states.values() if s.limit or s.counter}
    required = ["runId", "specVersion", "status", "lastTransitionAt", "history", "counts"]
    properties: dict[str, Any] = {
        "runId": {"type": "string", "minLength": 1},
        "specVersion": {"const": spec.version},
        "status": {"enum": [s.name for s in spec.top_level],
                   "description": "the active top-level state"},
    }
    statuses = spec.statuses()
    if statuses:
        flat = False  # the configuration says where the run is; `status` does not
        properties["status"] = {
            "enum": statuses, "description": "the `status:` of the innermost active state "
            "that names one, else the active top-level state"}
    if not flat:
        required.insert(3, "configuration")
        properties["configuration"] = {
            "type": "array", "items": {"enum": states}, "minItems": 1, "uniqueItems": True,
            "description": "every active state, ancestors included, in document order",
        }
    timers = spec.timers()
    if timers:
        required.insert(2, "createdAt")
        properties["createdAt"] = {"type": "string", "format": "date-time",
                                   "description": "when the run was created"}
    properties["lastTransitionAt"] = {"type": "string", "format": "date-time"}
    properties["history"] = {"type": "array", "items": {"$ref": "#/$defs/step"}}
    properties["counts"] = {
        "type": "object",
        "description": "how often each state with a `limit` was entered in this run"
                       if not spec.counters() else "how often each state with a `limit` or "
                       "a `counter` was entered in this run",
        "properties": {name: {"type": "integer", "minimum": 0, **(
            {"maximum": limit} if limit else {})} for name, limit in limits.items()},
        "required": list(limits),
        "additionalProperties": False,
    }
    for counter, state in spec.counters().items():
        required.append(counter)
        properties[counter] = {"type": "integer", "minimum": 0,
                               "description": f"how many times `{state}` was entered in this "
                                              "run (its count)"}
        if spec.states[state].limit:
            properties[counter]["maximum"] = spec.states[state].limit
    if timers:
        required.append("timers")
        properties["timers"] = {
            "type": "array", "description": "the armed timers, in due order",
            "items": {
                "type": "object", "required": ["state", "event", "due"],
                "additionalProperties": False,
                "properties": {
                    "state": {"enum": list(dict.fromkeys(t.source for t in timers))},
                    "event": {"enum": list(dict.fromkeys(t.event for t in timers))},
                    "due": {"type": "string", "format": "date-time"},
                },
            },
        }
    remembers = sorted(spec_chart.chart(spec).remembers)
    if remembers:
        required.append("remembered")
        properties["remembered"] = {
            "type": "object",
            "description": "for each target of a history transition, the states active "
                           "under it when it was last left (absent: never left)",
            "properties": {name: {"type": "array", "items": {"enum": spec.subtree(name)[1:]},
                                  "uniqueItems": True} for name in remembers},
            "additionalProperties": False,
        }
    for f in spec.record:
        properties[f.name] = field_schema(f)
    conditions = []
    for s in spec.states.values():
        if not s.requires:
            continue
        if s.parent is None and not statuses:
            when = {"properties": {"status": {"const": s.name}}, "required": ["status"]}
        else:
            when = {"properties": {"configuration": {"contains": {"const": s.name}}},
                    "required": ["configuration"]}
        conditions.append({"if": when, "then": {"required": list(s.requires)}})
    out: dict[str, Any] = {
        "$schema": DRAFT,
        "$id": f"{ID_BASE}/{spec.name}-v{spec.version}.json",
        "$comment": " ".join(header_lines(spec)),
        "title": f"Run record of the {spec.name} statechart, version {spec.version}",
    }
    if spec.description:
        out["description"] = spec.description
    out.update({
        "type": "object",
        "required": required,
        "properties": properties,
        "additionalProperties": False,
    })
    if conditions:
        out["allOf"] = conditions
    out["$defs"] = {"step": {
        "type": "object",
        "description": "one transition: its own source and target, and the fields it set",
        "required": ["event", "source", "target", "at", "values"],
        "additionalProperties": False,
        "properties": {
            "event": _step_event(spec),
            "source": {"enum": states},
            "target": {"enum": states},
            "at": {"type": "string", "format": "date-time"},
            "values": {"type": "object", "additionalProperties": False,
                       "properties": {**{f.name: field_schema(f) for f in spec.record},
                                      SENT_BY: _SENT_BY_SCHEMA}},
        },
    }}
    constants = _step_constants(spec)
    if constants:
        out["$defs"]["step"]["allOf"] = constants
    if remembers:
        out["$defs"]["step"]["properties"]["history"] = {
            "enum": ["shallow", "deep"],
            "description": "present when the step entered its target by history"}
    taken = {t.move_kind for t in spec.transitions()}  # one walk, not one per kind
    kinds = [k for k in ("internal", "targetless", "multi") if k in taken]
    if kinds:
        out["$defs"]["step"]["properties"]["kind"] = {
            "enum": kinds,
            "description": "`internal`: the step did not exit its source; `targetless`: it "
                           "exited and entered nothing (its target is its source); `multi`: "
                           "it entered several targets (`target: [a2, b2]`), its `target` "
                           "being the first"}
    return out


def _step_constants(spec: Spec) -> list[dict[str, Any]]:
    """A step of (source, event, target) holds the `assign:` constants that every alternative
    of that key gives (where one alternative takes the caller's value instead, any value of
    the field's type is one the spec allows)."""
    times = {f.name for f in spec.record if f.type == "datetime"}
    by_key: dict[tuple[str, str, str], list[dict[str, object]]] = {}
    for t in spec.transitions():
        by_key.setdefault((t.source, t.event, t.target), []).append({
            f: time_text(parse_time(f, v)) if f in times and isinstance(v, str) else v
            for f, v in t.assigns} if t.assigns else {})
    out: list[dict[str, Any]] = []
    for (source, event, target), alternatives in by_key.items():
        if not alternatives[0]:  # the first assigns nothing: no constant every one gives
            continue
        fixed = {f: v for f, v in alternatives[0].items()
                 if all(f in a and a[f] == v for a in alternatives)}
        if fixed:
            out.append({
                "if": {"properties": {"source": {"const": source}, "event": {"const": event},
                                      "target": {"const": target}}},
                "then": {"properties": {"values": {
                    "properties": {f: {"const": v} for f, v in fixed.items()},
                    "required": list(fixed)}}}})
    return out


def _step_event(spec: Spec) -> dict[str, Any]:
    """A step's event: one the spec lists, or a member of the family of one the application
    sends (`error.tool.ratelimit` under `error.tool`: docs/spec-format.md, "Event
    descriptors"), recorded by its full name."""
    listed: dict[str, Any] = {"enum": spec.events()}
    sent = [e for e in spec.events() if events.parse(e) is None and e != events.ALWAYS]
    if not sent:
        return listed
    keys = "|".join(re.escape(e) for e in sent)
    return {"anyOf": [listed, {"type": "string", "maxLength": events.MEMBER_MAX,
                               "pattern": rf"^(?:{keys})(?:\.{events.TOKEN})+$"}]}


def outputs(spec: Spec) -> dict[str, bytes]:
    # steps are recorded under the event sent, not the `on:` key that took it
    text = json.dumps(schema(spec_chart.per_event(spec)), indent=2, ensure_ascii=False,
                      allow_nan=False) + "\n"
    return {f"{folder('schema')}/{spec.name}.schema.json": text.encode("utf-8")}
