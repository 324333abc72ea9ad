"""The generated record reads and writes exactly what its JSON Schema allows: strict RFC 3339
times, strict types in records built in code, no crash on out-of-range numbers."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import re
from types import ModuleType
from typing import Any

import pytest
from codegen_support import checked_text, generate, import_source, validator

SPEC = """\
statechart: rec
version: 1
initial: open
record:
  name: {type: string}
  size: {type: integer}
  weight: {type: number}
  ok: {type: boolean}
  due: {type: datetime}
  color: {enum: [red, blue]}
states:
  open:
    on:
      fill: {target: done, set: [name, size, weight, ok, due, color]}
  done: {final: true}
"""

UTC = dt.UTC
ODD_ZONE = dt.timezone(dt.timedelta(seconds=30))  # not a whole number of minutes


@pytest.fixture(scope="module")
def gen(tmp_path_factory: pytest.TempPathFactory) -> tuple[ModuleType, Any]:
    spec = checked_text(SPEC, "rec.yaml")
    assert spec is not None
    files = generate(spec)
    module = import_source(files["generated/rec.py"], tmp_path_factory.mktemp("rec"), "rec")
    return module, validator(files["generated/rec.schema.json"])


def filled(module: ModuleType, clock: Any = None) -> Any:
    run = module.Rec(run_id="r", clock=clock or (lambda: dt.datetime(2025, 1, 1, tzinfo=UTC)))
    run.fill(name="n", size=1, weight=2.5, ok=True,
             due=dt.datetime(2025, 2, 1, tzinfo=UTC), color=module.RecColor.red)
    return run


BAD_TIMES = ["2024-01-01T10:00:00+0100", "20240101T100000+01:00",
             "2024-W01-1T10:00:00+00:00", "2024-01-01T10:00:00,5+00:00",
             "2024-01-01 10:00:00+00:00", "2024-01-01T10:00+00:00", "2024-01-01T10:00:00",
             "2024-01-01T10:00:00+00:00:30", "2024-02-30T10:00:00Z"]
GOOD_TIMES = ["2024-01-01T10:00:00Z", "2024-01-01t10:00:00.123456789z",
              "2024-02-29T23:59:59.5-07:30"]


@pytest.mark.parametrize("text", BAD_TIMES)
def test_times_the_schema_refuses_are_refused(gen: tuple[ModuleType, Any], text: str) -> None:
    module, schema = gen
    data = filled(module).record.to_dict()
    for key in ("lastTransitionAt", "due"):
        bad = {**data, key: text}
        assert list(schema.iter_errors(bad)), f"the schema accepts {text!r}"
        with pytest.raises(module.RecInvalidRecord) as info:
            module.RecRecord.from_dict(bad)
        assert info.value.field == key
    bad = json.loads(json.dumps(data))
    bad["history"][0]["at"] = text
    with pytest.raises(module.RecInvalidRecord) as info:
        module.RecRecord.from_dict(bad)
    assert info.value.field == "history[0].at"


def test_a_time_with_a_trailing_newline_is_refused(gen: tuple[ModuleType, Any]) -> None:
    """rfc3339-validator's `$` lets one through; the class is stricter."""
    module, _ = gen
    data = {**filled(module).record.to_dict(), "due": "2024-01-01T10:00:00Z\n"}
    with pytest.raises(module.RecInvalidRecord):
        module.RecRecord.from_dict(data)


@pytest.mark.parametrize("text", GOOD_TIMES)
def test_times_the_schema_accepts_are_read(gen: tuple[ModuleType, Any], text: str) -> None:
    module, schema = gen
    data = {**filled(module).record.to_dict(), "lastTransitionAt": text, "due": text}
    # The integrity check: the field is the history's value, the time the last step's.
    data["history"][0]["values"]["due"] = data["history"][0]["at"] = text
    assert not list(schema.iter_errors(data))
    record = module.RecRecord.from_dict(data)
    assert record.due == record.lastTransitionAt and record.due.utcoffset() is not None
    assert not list(schema.iter_errors(record.to_dict()))


def test_a_clock_with_a_seconds_offset_writes_valid_times(gen: tuple[ModuleType, Any]) -> None:
    module, schema = gen
    run = module.Rec(run_id="r", clock=lambda: dt.datetime(2025, 1, 1, 12, tzinfo=ODD_ZONE))
    run.fill(name="n", size=1, weight=2.5, ok=True,
             due=dt.datetime(2025, 2, 1, tzinfo=ODD_ZONE), color=module.RecColor.red)
    data = run.record.to_dict()
    assert not [e.message for e in schema.iter_errors(data)]
    assert data["lastTransitionAt"] == "2025-01-01T11:59:30+00:00"
    assert data["due"] == data["history"][0]["values"]["due"] == "2025-01-31T23:59:30+00:00"
    assert module.RecRecord.from_json(run.record.to_json()).due == run.record.due
    kept = dt.datetime(2025, 1, 1, 12, tzinfo=dt.timezone(dt.timedelta(hours=-7, minutes=-30)))
    run = module.Rec(run_id="r", clock=lambda: kept)
    assert run.record.to_dict()["lastTransitionAt"] == "2025-01-01T12:00:00-07:30"


def test_a_naive_clock_is_refused_clearly(gen: tuple[ModuleType, Any]) -> None:
    module, _ = gen
    with pytest.raises(TypeError, match=r"clock must return a datetime with a time zone"):
        module.Rec(run_id="r", clock=lambda: dt.datetime(2025, 1, 1))
    times = iter([dt.datetime(2025, 1, 1, tzinfo=UTC), dt.datetime(2025, 1, 2)])
    run = module.Rec(run_id="r", clock=lambda: next(times))
    with pytest.raises(TypeError, match=r"clock must return a datetime with a time zone"):
        run.fill(
            name="n", size=1, weight=2.5, ok=True,
            due=dt.datetime(2025, 2, 1, tzinfo=UTC), color=module.RecColor.red)
    assert run.record.history == [] and run.status.value == "open"  # nothing changed


def test_spec_version_true_is_not_version_1(gen: tuple[ModuleType, Any]) -> None:
    module, schema = gen
    record = filled(module).record
    data = {**record.to_dict(), "specVersion": True}
    assert list(schema.iter_errors(data))
    with pytest.raises(module.RecInvalidRecord) as info:
        module.RecRecord.from_dict(data)
    assert info.value.field == "specVersion"
    record.specVersion = True
    with pytest.raises(module.RecInvalidRecord) as info:
        module.check_record(record)
    assert info.value.field == "specVersion"


WRONG_TYPES = {
    "runId": 5, "status": "done", "lastTransitionAt": dt.datetime(2025, 1, 1),
    "counts": {"open": "1"}, "history": "none", "name": 5, "size": True, "weight": "2",
    "ok": 1, "due": dt.datetime(2025, 1, 1), "color": "red",
}


@pytest.mark.parametrize("field", list(WRONG_TYPES))
def test_records_built_in_code_are_type_checked(gen: tuple[ModuleType, Any], field: str) -> None:
    module, _ = gen
    record = dataclasses.replace(filled(module).record, **{field: WRONG_TYPES[field]})
    for check in (module.check_record, module.Rec.restore):
        with pytest.raises(module.RecInvalidRecord) as info:
            check(record)
        assert info.value.field == field


def test_history_entries_built_in_code_are_type_checked(gen: tuple[ModuleType, Any]) -> None:
    module, _ = gen
    record = filled(module).record
    step = record.history[0]
    for name, value in [("event", "fill"), ("source", "open"), ("at", "2025"),
                        ("values", {"size": "1"})]:
        record.history[0] = dataclasses.replace(step, **{name: value})
        with pytest.raises(module.RecInvalidRecord) as info:
            module.check_record(record)
        assert info.value.field.startswith("history[0]")
    record.history[0] = "step"
    with pytest.raises(module.RecInvalidRecord) as info:
        module.check_record(record)
    assert info.value.field == "history[0]"


def test_a_huge_integer_in_a_number_field_is_refused_by_name(
        gen: tuple[ModuleType, Any]) -> None:
    module, _ = gen
    data = filled(module).record.to_dict()
    with pytest.raises(module.RecInvalidRecord) as info:
        module.RecRecord.from_dict({**data, "weight": 10**400})
    assert info.value.field == "weight"
    data["history"][0]["values"]["weight"] = 10**400
    with pytest.raises(module.RecInvalidRecord) as info:
        module.RecRecord.from_dict(data)
    assert info.value.field == "history[0].values.weight"
    run = module.Rec(run_id="r")
    with pytest.raises(TypeError, match="weight"):
        run.fill(name="n", size=1, weight=10**400, ok=True,
                 due=dt.datetime(2025, 2, 1, tzinfo=UTC), color=module.RecColor.red)



@pytest.mark.parametrize(("change", "field", "message"), [
    ({"name": "other"}, "name", "the history's last value is 'n' (history[0])"),
    ({"color": "blue"}, "color", "the history's last value is 'red'"),
    ({"lastTransitionAt": "2024-01-01T00:00:00Z"}, "lastTransitionAt",
     "expected the last step's time 2025-01-01T00:00:00+00:00"),
])
def test_a_record_whose_values_contradict_its_history_is_refused(
        gen: tuple[ModuleType, Any], change: dict[str, Any], field: str, message: str) -> None:
    module, schema = gen
    data = {**filled(module).record.to_dict(), **change}
    assert not list(schema.iter_errors(data))  # the schema cannot see it; the replay does
    with pytest.raises(module.RecInvalidRecord, match=re.escape(message)) as info:
        module.RecRecord.from_dict(data)
    assert info.value.field == field


def test_a_value_no_step_set_is_refused(gen: tuple[ModuleType, Any]) -> None:
    module, _ = gen
    data = {**module.Rec(run_id="r").record.to_dict(), "name": "never set"}
    with pytest.raises(module.RecInvalidRecord, match="no step of the history sets it") as info:
        module.RecRecord.from_dict(data)
    assert info.value.field == "name"
