"""`json` record fields (docs/spec-format.md, "Structured values"): any JSON value, kept as a
copy, typed and described in the record schema, refused past 1 MiB of JSON text or when it
is not JSON, with nothing changed; on both store backends a refused fire writes nothing and
the store stays usable."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import jsonschema
import pytest
from codegen_support import validator
from store_support import Backend, assert_usable, import_with_schema

from statechart_runtime.chart.json_values import MAX_DEPTH, MAX_JSON_BYTES, shortened
from statechart_runtime.errors import UnstorableValue
from statechart_runtime.store import open_store

ROOT = Path(__file__).parent.parent

TOOL = """\
statechart: tool
version: 1
initial: idle
record:
  output: {type: json, description: What the tool returned.}
  meta: {type: json, context: true}
  label: {type: json, default: none, context: true}
states:
  idle:
    on: {call: calling, stop: stopped}
  calling:
    work: {handler: run_tool, timeout: 1m, outcomes: [result]}
    on: {result: {target: idle, set: [output]}}
  stopped: {final: true}
"""


@pytest.fixture(scope="module")
def tool(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return import_with_schema(TOOL, tmp_path_factory.mktemp("tool"), "tool_json_test")


def _schema(tool: ModuleType) -> jsonschema.Draft202012Validator:
    return validator((Path(tool.__file__).parent / "tool.schema.json").read_bytes())


def _value_of_size(size: int) -> dict[str, str]:
    """A JSON object whose compact text is exactly `size` bytes."""
    overhead = len(json.dumps({"x": ""}, separators=(",", ":")))
    return {"x": "a" * (size - overhead)}


def test_a_value_travels_with_its_step_as_a_copy(tool: ModuleType) -> None:
    run = tool.Tool(meta={"trace": [1, 2]})
    run.call()
    given: dict[str, Any] = {"rows": [{"id": 1, "ok": True, "note": None}], "n": 1.5}
    run.result(output=given)
    given["rows"].append("changed later")  # the caller's object is not the record's
    assert run.record.output == {"rows": [{"id": 1, "ok": True, "note": None}], "n": 1.5}
    assert run.record.history[-1].values == {"output": run.record.output}
    data = json.loads(run.record.to_json())
    assert data["output"] == run.record.output and data["meta"] == {"trace": [1, 2]}
    assert data["label"] == "none"
    assert list(_schema(tool).iter_errors(data)) == []
    again = tool.ToolRecord.from_json(run.record.to_json())
    assert again.output == run.record.output


def test_the_record_schema_describes_json_fields(tool: ModuleType) -> None:
    schema = json.loads((Path(tool.__file__).parent / "tool.schema.json").read_text())
    output = schema["properties"]["output"]
    assert output["description"] == "What the tool returned."
    assert "null" not in output["type"] and "1,048,576 bytes" in output["$comment"]
    check = _schema(tool)
    run = tool.Tool()
    data = json.loads(run.record.to_json())
    for value, ok in (([1, "a"], True), ("text", True), (3, True), (None, False)):
        assert (not list(check.iter_errors({**data, "meta": value}))) is ok, value


@pytest.mark.parametrize("size, ok", [(MAX_JSON_BYTES, True), (MAX_JSON_BYTES + 1, False)])
def test_the_limit_is_1_mib_of_json_text(tool: ModuleType, size: int, ok: bool) -> None:
    run = tool.Tool()
    run.call()
    if ok:
        run.result(output=_value_of_size(size))
        assert len(run.record.output["x"]) > 1_000_000
        return
    with pytest.raises(UnstorableValue, match=r"1,048,577 bytes of JSON, over the limit of "
                                              r"1,048,576 \(1 MiB\)"):
        run.result(output=_value_of_size(size))
    assert run.record.output is None and [s.event.value for s in run.record.history] == ["call"]
    assert run.status.value == "calling"  # nothing changed: the run takes the next event
    run.result(output={"small": True})


def test_not_json_is_a_type_error_and_too_deep_is_unstorable(tool: ModuleType) -> None:
    run = tool.Tool()
    run.call()
    for bad, error, words in (({1, 2}, TypeError, "expected a JSON value"),
                              ({1: "a"}, TypeError, "keys are strings"),
                              ([float("nan")], TypeError, "no NaN"),
                              ("\ud800", UnstorableValue, "cannot be stored as JSON")):
        with pytest.raises(error, match=words):
            run.result(output=bad)
    deep: Any = "leaf"
    for _ in range(MAX_DEPTH + 1):
        deep = [deep]
    with pytest.raises(UnstorableValue, match="nests deeper than 100 levels"):
        run.result(output=deep)
    deep = "leaf"
    for _ in range(5000):  # past the interpreter's recursion limit too
        deep = [deep]
    with pytest.raises(UnstorableValue, match="nests deeper than 100 levels"):
        run.result(output=deep)
    deep = "leaf"
    for _ in range(MAX_DEPTH):  # as deep as it may be, brackets in strings not counted
        deep = ["[{" * 200, deep]
    run.result(output={"tuple": (1, 2), "deep": deep[1]})
    assert run.record.output["tuple"] == [1, 2]  # as JSON reads it back
    run.call()
    with pytest.raises(UnstorableValue, match="over the limit"):
        run.update(meta=_value_of_size(MAX_JSON_BYTES + 1))
    assert run.record.meta is None and len(run.record.history) == 3  # call, result, call


def test_send_takes_a_json_payload_as_it_is(tool: ModuleType) -> None:
    run = tool.Tool()
    run.call()
    run.send("result", output=json.loads('{"a": [1, 2, {"b": null}]}'))
    assert run.record.output == {"a": [1, 2, {"b": None}]}


def test_text_output_shortens_a_long_value() -> None:
    assert shortened({"a": [1, "b"]}) == '{"a": [1, "b"]}'
    long = shortened({"rows": list(range(1000))})
    assert long.startswith('{"rows": [0, 1, 2, ') and long.endswith("... (3,900 bytes)")
    assert len(long) == 80 + len("... (3,900 bytes)")


def test_a_too_large_value_writes_nothing_on_either_backend(
        tool: ModuleType, backend: Backend) -> None:
    store = open_store(backend.url)
    try:
        run = tool.Tool(run_id="big")
        store.create(run)
        store.fire(tool.Tool, "big", "call")
        with pytest.raises(UnstorableValue, match="over the limit"):
            store.fire(tool.Tool, "big", "result", output=_value_of_size(MAX_JSON_BYTES + 1))
        loaded = store.load(tool.Tool, "big")
        assert loaded.record.output is None and len(loaded.record.history) == 1
        assert loaded.status.value == "calling"
        fired = store.fire(tool.Tool, "big", "result", output={"rows": [1, 2]})
        assert fired.applied
        again = store.load(tool.Tool, "big")
        assert again.record.output == {"rows": [1, 2]}
        assert again.record.history[-1].values == {"output": {"rows": [1, 2]}}
        near = _value_of_size(MAX_JSON_BYTES)  # the largest value is stored whole
        store.fire(tool.Tool, "big", "call")
        store.fire(tool.Tool, "big", "result", output=near)
        assert store.load(tool.Tool, "big").record.output == near
    finally:
        store.close()


def test_the_store_stays_usable_after_a_refused_value(
        tool: ModuleType, ticket: ModuleType, backend: Backend) -> None:
    store = open_store(backend.url)
    try:
        store.create(tool.Tool(run_id="r"))
        store.fire(tool.Tool, "r", "call")
        with pytest.raises(UnstorableValue):
            store.fire(tool.Tool, "r", "result", output=_value_of_size(MAX_JSON_BYTES + 10))
        assert_usable(store, ticket)
    finally:
        store.close()
