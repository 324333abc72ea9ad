"""The run-record JSON Schema: its shape, taken from the spec."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
from codegen_support import checked_spec, checked_text

from statechart.codegen import record_schema

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = Path(__file__).parent / "golden"


def test_agent_run_schema_is_draft_2020_12_with_id_title_and_header() -> None:
    schema = json.loads((ROOT / "generated" / "agent_run.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"].endswith("/agent_run-v2.json") and schema["title"]
    assert "DO NOT EDIT" in schema["$comment"] and "specs/agent_run.yaml" in schema["$comment"]
    assert "date-time" in jsonschema.Draft202012Validator.FORMAT_CHECKER.checkers


def test_status_enum_conditions_counts_and_history_come_from_the_spec() -> None:
    schema = record_schema.schema(checked_spec(ROOT / "specs" / "agent_run.yaml"))
    props = schema["properties"]
    # The design's status vocabulary (`status: waiting` on the waits, `failed` on timed_out)
    assert props["status"]["enum"] == ["created", "triaging", "running", "interrupted",
                                       "waiting", "resumed", "retrying", "completed", "failed",
                                       "cancelled"]
    assert props["counts"]["properties"]["retrying"] == {"type": "integer", "minimum": 0,
                                                         "maximum": 3}
    assert props["interruptReason"]["enum"] == ["approval", "human_review", "external_input",
                                                "risky_tool"]
    # With a status vocabulary, a state's requirements follow `configuration`.
    conditions = {c["if"]["properties"]["configuration"]["contains"]["const"]:
                  c["then"]["required"] for c in schema["allOf"]}
    assert conditions == {"tool_call": ["toolCallId"], "interrupted": ["interruptReason"],
                          "waiting_for_approval": ["approvalId", "approvalDeadline"],
                          "retrying": ["retryReason", "retryAt"], "failed": ["failureType"],
                          "cancelled": ["cancelReason"]}
    step = schema["$defs"]["step"]["properties"]
    assert "provide_input" in step["event"]["anyOf"][0]["enum"] and "tool_call" in step["source"]["enum"]


def test_field_types_formats_and_required_fields_are_enforced() -> None:
    spec = checked_spec(GOLDEN / "enums" / "spec.yaml")
    schema = record_schema.schema(spec)
    assert schema["properties"]["dueAt"] == {"type": "string", "format": "date-time",
                                             "description": "When it must be solved."}
    assert schema["properties"]["estimate"] == {"type": "number"}
    assert "configuration" not in schema["properties"]  # a flat spec has none
    validator = jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    record = {"runId": "r", "specVersion": 3, "status": "open", "history": [],
              "lastTransitionAt": "2025-01-01T00:00:00Z", "counts": {"working": 0}}
    assert any("priority" in e.message for e in validator.iter_errors(record))
    record["priority"] = "high"
    assert not list(validator.iter_errors(record))
    record["dueAt"] = "tomorrow"
    assert list(validator.iter_errors(record))


def test_schema_output_is_deterministic_json() -> None:
    spec = checked_spec(ROOT / "specs" / "agent_run.yaml")
    first = record_schema.outputs(spec)
    assert first == record_schema.outputs(spec)
    (text,) = first.values()
    assert text.endswith(b"}\n") and json.loads(text)


def test_a_nested_state_requires_its_fields_through_the_configuration() -> None:
    spec = checked_text("""\
statechart: nest
version: 1
initial: outer
record:
  why: {type: string}
states:
  outer:
    initial: inner
    on: {stop: {target: end, set: [why]}}
    states:
      inner:
        on: {deeper: {target: deep, set: [why]}}
      deep:
        requires: [why]
  end:
    final: true
""")
    assert spec is not None
    (condition,) = record_schema.schema(spec)["allOf"]
    assert condition == {
        "if": {"properties": {"configuration": {"contains": {"const": "deep"}}},
               "required": ["configuration"]},
        "then": {"required": ["why"]}}
