"""The spec format's keys, in one place: the model builder checks against these tables and
`json_schema()` publishes them for editors (`statechart schema`, docs/spec.schema.json).

The checker does not validate through jsonschema: walking the YAML nodes directly is several
times faster on large specs and keeps every position. A test asserts that both agree.
"""

from __future__ import annotations

from typing import Any

SCHEMA_ID = "https://statechart-compiler.dev/schema/spec-v1.json"

SPEC_KEYS = {
    "statechart": "the spec's name, an identifier: `statechart: agent_run`",
    "version": "the spec's version, an integer >= 1: `version: 1`",
    "description": "what the statechart is for",
    "initial": "the top-level state a run starts in: `initial: created`",
    "record": "run-record fields beyond the built-ins: `record: {reason: {type: string}}`",
    "states": "the states, by name: `states: {created: {...}}`",
    "rules": "the spec's own rules: `rules: [{never: {from: a, to: b}}]`",
    "extends": "a base spec this one customizes: `extends: agent_run` (same folder) or a path",
    "migrations": "how records of earlier versions map onto this one: `[{from_version: 1, "
                  "states: {old: new}, fields: {old: new}}]`",
    "remove": "what an overlay removes from its base: `{states: [...], transitions: "
              "[STATE.EVENT, STATE.after.15m], fields: [...], rules: [ID], work: [STATE]}`",
    "add": "the new states of an overlay: `{states: {NAME: {...}}}`; `states:` only changes "
           "states the base has",
}
SPEC_REQUIRED = ("statechart", "version", "initial", "states")

STATE_KEYS = {
    "description": "what being in this state means",
    "initial": "the nested state entered by default (states with `states` only)",
    "states": "nested states, by name",
    "parallel": "`true`: every nested state is a region, all active at once",
    "final": "`true`: the run (or region) ends here",
    "on": "transitions by event: `on: {start: running}`; a dotted event also takes the events "
          "it is a prefix of (`error` takes `error.tool`), `\"*\"` every event",
    "after": "timers: `after: {15m: expired}`; a key is a delay (`30s`, `15m`, `2h`, `1d`, "
             "`PT15M`) counted from entering the state, or a `datetime` record field (a "
             "deadline); leaving the state disarms them; `name:` (on an alternative) names a "
             "timer, whose id is else its field or `delayN`",
    "done": "where a compound or parallel state goes once it completes (a final child "
            "reached; every region final): `done: next` or `{target: next, guard: ok}`",
    "always": "eventless transitions, taken as soon as enabled, before the next event (SCXML "
              "eventless transitions, XState `always`): `always: next` or guarded "
              "alternatives `[{target: a, guard: ok}, {target: b}]`",
    "tags": "labels that rules and diagrams select states by",
    "entry": "action methods run on entering the state",
    "exit": "action methods run on leaving the state",
    "requires": "record fields that must be set while in this state",
    "limit": "how many times the state may be entered in one run (retry limits)",
    # Run context and status vocabulary (docs/spec-format.md, "Run context", "Status").
    "clear": "record fields unset when the state is exited: `clear: [approvalId]`",
    "status": "the status the record reports while this state is the innermost active state "
              "that names one: `status: waiting`",
    "counter": "a record key that reports how many times the state was entered: "
               "`counter: retryCount`",
    "history_default": "where a history transition into this state goes while nothing is "
                       "remembered yet (SCXML's history default), instead of its default "
                       "entry: a state inside it (a child for shallow history), or "
                       "`{shallow: CHILD, deep: STATE}`",
    "work": "the work a run does while in this state: `work: {handler: call_tool, timeout: "
            "5m, outcomes: [tool_result]}`; entering the state enqueues one item, leaving it "
            "ends the item",
}

# `work:` of a state (docs/spec-format.md, "Work").
WORK_KEYS = {
    "handler": "the name a worker runs the item by (an identifier): `handler: call_tool`",
    "timeout": "how long one attempt may take (a duration: `30s`, `5m`, `PT5M`); past it, "
               "without a heartbeat, the attempt has failed and another worker may claim it",
    "heartbeat": "how often a running handler reports that it is alive (a duration shorter "
                 "than `timeout`); a missed heartbeat ends the attempt's lease early",
    "outcomes": "the events a handler may return (an event or a list): the outcome is "
                "fired as an event of the run, with its values",
    "error": "the event fired when the item's attempts are used up (the handler's failure "
             "gives its values); without one the item fails and the run stays in the state",
    "retry": "`{max: N, backoff: DURATION}`: N more attempts after a failed one (default 3), "
             "the first after `backoff` (default 1s), each later one after twice the last",
}
WORK_REQUIRED = ("handler", "timeout", "outcomes")
RETRY_KEYS = {
    "max": "how many more attempts follow a failed one (an integer >= 0; default 3)",
    "backoff": "the wait before the first retry, doubled for each later one (a duration; "
               "default 1s)",
}

TRANSITION_KEYS = {
    "target": "the state this transition enters, or a list of states in different regions of "
              "one parallel state, entered at once (`target: [a2, b2]`); without one, a "
              "targetless transition: no "
              "state is exited or entered, its `set`/`assign`/`clear` and guard still apply",
    "internal": "`true`: the target is inside the source, which is not exited (its exit and "
                "entry actions do not run, its timers keep running)",
    "guard": "a method name; the transition is taken only when it returns true",
    "in": "a state, or a list of states that must all be active: the transition is enabled "
          "only while they are (SCXML `In()`), `in: within_budget`",
    "set": "record fields the event must provide (keyword arguments of the event)",
    "clear": "record fields unset when the transition is taken (before its `set`)",
    "assign": "record fields this alternative sets to a value the spec gives (not the "
              "caller): `assign: {failureType: retries_exhausted}`",
    "description": "why this transition exists",
    "actions": "action methods run when the transition is taken, after the exit actions and "
               "before the entry actions (SCXML order)",
    "history": "`shallow` or `deep`: enter the (compound or parallel) target where it was "
               "when last left, or by default the first time",
}
HISTORY_KINDS = ("shallow", "deep")
# Completion, eventless transitions and timers: transitions without values (nothing sends
# the event).
DONE_KEYS = {k: v for k, v in TRANSITION_KEYS.items() if k != "set"}
# A timer's alternatives may also name it (the id in its event `after.ID.STATE`).
TIMER_KEYS = {**DONE_KEYS,
              "name": "the timer's id, in its event `after.NAME.STATE` (default: its deadline "
                      "field, or `delayN` for the state's Nth delay timer); a new delay keeps "
                      "it. One name per timer: alternatives that give one give the same"}


FIELD_KEYS = {
    "type": "string, integer, number, boolean, datetime or json (any JSON value, at most "
            "1 MiB of JSON text)",
    "enum": "the allowed values (strings)",
    "description": "what the field holds",
    "context": "`true`: the application sets it at creation and at any time "
               "(`run.update(...)`), not only events",
    "default": "the value a new run starts with (and a migration's `fill` gives old records)",
}
FIELD_TYPES = ("string", "integer", "number", "boolean", "datetime", "json")

RULE_KINDS = ("never", "only", "unreachable")
RULE_KEYS = {
    "never": "no transition from `from` enters `to`",
    "only": "every transition leaving `from` enters one of `to`",
    "unreachable": "no path at all leads from `from` to `to`",
    "id": "a stable name for the rule",
    "description": "why the rule exists",
    "overridable": "`true`: an overlay may replace this rule by its id",
}
MIGRATION_KEYS = {
    "from_version": "the version of the stored records this migration upgrades",
    "states": "old state name -> state of this version",
    "fields": "old record field -> field of this version (`null`: the value is dropped)",
    "fill": "fields an old record lacks that get their `default`: `fill: [priority]`",
    "description": "why the change was made",
}

RULE_BODY_KEYS = {"from": "states the rule starts from", "to": "states the rule is about"}

# Where a key is allowed, for the "`initial` belongs in ..." hint on a misplaced key.
WHERE_KEY_BELONGS = {
    **{k: "a state" for k in STATE_KEYS},
    **{k: "a transition (`on: {event: {target: ...}}`)"
       for k in ("target", "guard", "set", "assign", "internal")},
    **{k: "a record field (`record: {NAME: {type: ...}}`)" for k in ("context", "default")},
    **{k: "a state's `work:`" for k in ("handler", "timeout", "heartbeat", "outcomes", "retry")},
    **{k: "the top level of the spec" for k in ("statechart", "version", "record", "rules")},
    **{k: "a rule (`- never: {from: a, to: b}`)" for k in RULE_KINDS},
}

_NAME = {"type": "string", "pattern": "^[A-Za-z][A-Za-z0-9_]*$"}
# An `on:` key: an event (dotted: an event descriptor, SCXML's, `error.tool`), or `*`; not
# `always` (the event of eventless transitions).
_EVENT = {"type": "string",
          "pattern": r"^(\*|[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)*)$",
          "not": {"const": "always"}}
# An `after:` key: a delay (checked further by the builder: > 0, no ISO years or months) or
# the name of a datetime record field.
_AFTER_KEY = {"type": "string", "anyOf": [
    {"pattern": "^[0-9]+(ms|s|m|h|d)$"},
    {"pattern": "^P(?:[0-9]+W|(?:[0-9]+D)?"
                "(?:T(?:[0-9]+H)?(?:[0-9]+M)?(?:[0-9]+(?:[.][0-9]+)?S)?)?)$"},
    _NAME,
]}
# A duration (`work:`'s timeout, heartbeat and backoff): a delay as `after:` writes one.
_DURATION = {"type": "string", "anyOf": _AFTER_KEY["anyOf"][:2]}
# An event a transition is on: a name, dotted or not (not a descriptor's `*`).
_EVENT_NAME = {"type": "string", "pattern": r"^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)*$"}
# A timer's `name:` is a name that does not start like a delay (`P1`, `PT2`: see
# statechart_runtime.events.looks_like_delay).
_TIMER_NAME = {"type": "string", "pattern": "^(?!P[0-9T])[A-Za-z][A-Za-z0-9_]*$"}


# `assign:`: field -> a constant of the field's type (checked further by the builder).
_ASSIGN = {"type": "object", "propertyNames": _NAME, "minProperties": 1,
           "additionalProperties": {"type": ["string", "number", "boolean"]}}


_NEEDS_TARGET = {"history": ["target"], "internal": ["target"]}
# A transition's target: a state, or states of different regions of one parallel state.
_TARGETS = {"oneOf": [_NAME, {"type": "array", "items": _NAME, "minItems": 2,
                              "uniqueItems": True}]}


def _names() -> dict[str, Any]:
    return {"oneOf": [_NAME, {"type": "array", "items": _NAME}]}


def _described(props: dict[str, Any], docs: dict[str, str]) -> dict[str, Any]:
    return {k: {**v, "description": docs[k]} for k, v in props.items()}


def json_schema() -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of a spec, for editors and other tools."""
    selector = {"oneOf": [
        _NAME,
        {"type": "object", "properties": {"tag": _NAME}, "required": ["tag"],
         "additionalProperties": False},
    ]}
    selectors = {"oneOf": [selector, {"type": "array", "items": selector, "minItems": 1}]}
    transition = {
        "type": "object",
        "properties": _described({
            "target": _TARGETS, "guard": _NAME, "set": _names(), "clear": _names(),
            "description": {"type": "string"}, "history": {"enum": list(HISTORY_KINDS)},
            "assign": _ASSIGN, "internal": {"type": "boolean"}, "actions": _names(),
            "in": _names(),
        }, TRANSITION_KEYS),
        # No `target`: a targetless transition, which neither enters by history nor is internal.
        "dependentRequired": _NEEDS_TARGET,
        "additionalProperties": False,
    }
    one_transition = {"oneOf": [_NAME, {"$ref": "#/$defs/transition"}]}
    done_keys = {"target": _TARGETS, "guard": _NAME, "description": {"type": "string"},
                 "history": {"enum": list(HISTORY_KINDS)}, "assign": _ASSIGN,
                 "internal": {"type": "boolean"}, "actions": _names(), "in": _names()}
    done_transition = {"type": "object", "properties": _described(done_keys, DONE_KEYS),
                       "dependentRequired": _NEEDS_TARGET, "additionalProperties": False}
    one_done = {"oneOf": [_NAME, done_transition]}
    timer_transition = {
        "type": "object", "properties": _described({**done_keys, "name": _TIMER_NAME},
                                                   TIMER_KEYS),
        "dependentRequired": _NEEDS_TARGET, "additionalProperties": False}
    one_timer = {"oneOf": [_NAME, timer_transition]}
    state = {
        "type": ["object", "null"],
        "properties": _described({
            "description": {"type": "string"},
            "initial": _NAME,
            "states": {"$ref": "#/$defs/states"},
            "parallel": {"type": "boolean"},
            "final": {"type": "boolean"},
            "on": {"type": "object", "propertyNames": _EVENT, "additionalProperties": {
                "oneOf": [one_transition, {"type": "array", "items": one_transition,
                                           "minItems": 1}]}},
            "after": {"type": "object", "propertyNames": _AFTER_KEY, "additionalProperties": {
                "oneOf": [one_timer, {"type": "array", "items": one_timer, "minItems": 1}]}},
            "done": {"oneOf": [one_done, {"type": "array", "items": one_done, "minItems": 1}]},
            "always": {"oneOf": [one_done, {"type": "array", "items": one_done,
                                            "minItems": 1}]},
            "tags": _names(), "entry": _names(), "exit": _names(), "requires": _names(),
            "limit": {"type": "integer", "minimum": 1},
            "clear": _names(), "status": _NAME, "counter": _NAME,
            "history_default": {"oneOf": [_NAME, {
                "type": "object", "properties": {kind: _NAME for kind in HISTORY_KINDS},
                "minProperties": 1, "additionalProperties": False}]},
            "work": {"$ref": "#/$defs/work"},
        }, STATE_KEYS),
        "additionalProperties": False,
    }
    field = {
        "type": "object",
        "properties": _described({
            "type": {"enum": list(FIELD_TYPES)},
            "enum": {"type": "array", "items": {"type": "string"}, "minItems": 1,
                     "uniqueItems": True},
            "description": {"type": "string"},
            "context": {"type": "boolean"},
            "default": {"type": ["string", "number", "boolean"]},
        }, FIELD_KEYS),
        "oneOf": [{"required": ["type"]}, {"required": ["enum"]}],
        "additionalProperties": False,
    }
    body = {"type": "object", "properties": {"from": selectors, "to": selectors},
            "required": ["from", "to"], "additionalProperties": False}
    rule = {
        "type": "object",
        "properties": _described({
            "never": body, "only": body, "unreachable": body, "id": {"type": "string"},
            "description": {"type": "string"}, "overridable": {"type": "boolean"},
        }, RULE_KEYS),
        "oneOf": [{"required": [k]} for k in RULE_KINDS],
        "additionalProperties": False,
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "statechart-compiler spec",
        "description": "A statechart spec: states, transitions, run-record fields and rules.",
        "type": "object",
        "properties": _described({
            "statechart": _NAME,
            "version": {"type": "integer", "minimum": 1},
            "description": {"type": "string"},
            "initial": _NAME,
            "record": {"type": "object", "propertyNames": _NAME,
                       "additionalProperties": {"$ref": "#/$defs/field"}},
            "states": {"$ref": "#/$defs/states"},
            "rules": {"type": "array", "items": {"$ref": "#/$defs/rule"}},
            "extends": {"type": "string", "minLength": 1},
            "migrations": {"type": "array", "items": {"$ref": "#/$defs/migration"}},
            "remove": {"type": "object", "additionalProperties": False, "properties": {
                k: {"type": "array", "items": {"type": "string"}}
                for k in ("states", "transitions", "fields", "rules", "work")}},
            "add": {"type": "object", "additionalProperties": False, "properties": {
                "states": {"type": "object", "propertyNames": _NAME,
                           "additionalProperties": {"$ref": "#/$defs/state"}}}},
        }, SPEC_KEYS),
        "required": ["statechart"],
        # An overlay takes the rest from its base.
        "if": {"not": {"required": ["extends"]}},
        "then": {"required": list(SPEC_REQUIRED)},
        "additionalProperties": False,
        "$defs": {
            "states": {"type": "object", "minProperties": 1, "propertyNames": _NAME,
                       "additionalProperties": {"$ref": "#/$defs/state"}},
            "state": state,
            "transition": transition,
            "field": field,
            "rule": rule,
            "work": {
                "type": "object",
                "properties": _described({
                    "handler": _NAME, "timeout": _DURATION, "heartbeat": _DURATION,
                    "outcomes": {"oneOf": [_EVENT_NAME, {"type": "array", "items": _EVENT_NAME,
                                                         "minItems": 1}]},
                    "error": _EVENT_NAME,
                    "retry": {"type": "object", "additionalProperties": False,
                              "properties": _described({
                                  "max": {"type": "integer", "minimum": 0},
                                  "backoff": _DURATION}, RETRY_KEYS)},
                }, WORK_KEYS),
                "required": list(WORK_REQUIRED),
                "additionalProperties": False,
            },
            "migration": {
                "type": "object",
                "properties": _described({
                    "from_version": {"type": "integer", "minimum": 1},
                    "states": {"type": "object", "propertyNames": _NAME,
                               "additionalProperties": _NAME},
                    "fields": {"type": "object", "propertyNames": _NAME,
                               "additionalProperties": {"oneOf": [_NAME, {"type": "null"}]}},
                    "fill": _names(),
                    "description": {"type": "string"},
                }, MIGRATION_KEYS),
                "required": ["from_version"],
                "additionalProperties": False,
            },
        },
    }


def editor_schema_text() -> str:
    """`json_schema()` as the file editors read (`statechart schema`, the configuration's
    `editor-schema`): with the generated header as its `$comment`, where `generated_header`
    looks for it in a JSON file, so that a stale copy is recognised and named."""
    import json

    from statechart import __version__

    schema = json_schema()
    head = {key: schema.pop(key) for key in ("$schema", "$id")}
    comment = (f"Generated by statechart-compiler {__version__}. DO NOT EDIT. Regenerate with: "
               "statechart schema --write (or statechart build)")
    return json.dumps({**head, "$comment": comment, **schema}, indent=2,
                      ensure_ascii=False) + "\n"
