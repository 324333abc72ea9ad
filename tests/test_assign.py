"""`assign:` (docs/spec-format.md "Constants"): an alternative sets record fields to values the
spec gives. Taken live, the constants are in the record and its history; the integrity check
tells a stored step's alternative by them and refuses a step that claims another value."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from codegen_support import checked_text, generate, import_source, validator

from statechart.linter import check_file
from statechart.render import docs
from statechart.render.dot import dot_source
from statechart.render.mermaid import mermaid_source

T0 = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)

DISPATCH = """\
statechart: dispatch
version: 1
initial: open
record:
  outcome: {type: string}
  attempts: {type: integer}
  severity: {enum: [low, high]}
  closedAt: {type: datetime}
  reason: {type: string}
states:
  open:
    on:
      close:
        - {target: closed, guard: is_urgent, assign: {outcome: escalated, severity: high}}
        - {target: closed, set: [outcome]}
      drop: {target: closed, set: [reason], assign: {outcome: dropped, attempts: 0}}
    after:
      1h: {target: closed, assign: {outcome: expired, closedAt: "2030-01-01T01:00:00Z"}}
  closed: {final: true, requires: [outcome]}
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[ModuleType, Any]:
    spec = checked_text(DISPATCH)
    assert spec is not None
    out = generate(spec)
    module = import_source(out["generated/dispatch.py"], tmp_path_factory.mktemp("assign"),
                           "dispatch")
    return module, validator(out["generated/dispatch.schema.json"])


def run_of(module: ModuleType, urgent: bool) -> Any:
    class Dispatch(module.Dispatch):  # type: ignore[misc, name-defined]
        def is_urgent(self) -> bool:
            return urgent

    return Dispatch(run_id="r", clock=lambda: T0)


def stored(built: tuple[ModuleType, Any], run: Any) -> dict[str, Any]:
    data: dict[str, Any] = run.record.to_dict()
    built[1].validate(data)
    return data


@pytest.mark.parametrize(("urgent", "outcome", "values"), [
    (True, "escalated", {"outcome": "escalated", "severity": "high"}),  # the spec's
    (False, "sent back", {"outcome": "sent back"}),  # the caller's
])
def test_the_alternative_taken_decides_whose_value_it_is(
        built: tuple[ModuleType, Any], urgent: bool, outcome: str,
        values: dict[str, Any]) -> None:
    module, _ = built
    run = run_of(module, urgent)
    run.close(outcome="sent back")
    assert run.record.outcome == outcome
    data = stored(built, run)
    assert data["history"][-1]["values"] == values
    assert module.DispatchRecord.from_dict(data).outcome == outcome  # the check accepts it


def test_constants_of_every_type_and_on_a_timer(built: tuple[ModuleType, Any]) -> None:
    module, _ = built
    run = run_of(module, False)
    run.drop(reason="duplicate")
    assert (run.record.reason, run.record.outcome, run.record.attempts) == (
        "duplicate", "dropped", 0)
    assert stored(built, run)["history"][-1]["values"] == {
        "reason": "duplicate", "outcome": "dropped", "attempts": 0}
    timed = run_of(module, False)
    assert timed.fire_due(T0 + dt.timedelta(hours=1)) == ["after.delay1.open"]
    assert timed.record.outcome == "expired"
    assert timed.record.closedAt == dt.datetime(2030, 1, 1, 1, tzinfo=dt.UTC)
    data = stored(built, timed)  # the step's time is written as a caller's time would be
    assert data["history"][-1]["values"]["closedAt"] == data["closedAt"]
    module.DispatchRecord.from_dict(data)


@pytest.mark.parametrize(("event", "forged", "field", "message"), [
    ("drop", {"outcome": "kept"}, "outcome", "assigns 'dropped' .*not 'kept'"),
    ("drop", {"attempts": 5}, "attempts", "assigns 0 .*not 5"),
    # neither alternative of `close`: the spec's gives another outcome, the caller's no severity
    ("close", {"outcome": "closed"}, "severity", "does not set it"),
])
def test_the_check_refuses_a_step_that_claims_another_value(
        built: tuple[ModuleType, Any], event: str, forged: dict[str, Any], field: str,
        message: str) -> None:
    module, _ = built
    run = run_of(module, True)
    getattr(run, event)(**({"reason": "r"} if event == "drop" else {"outcome": "o"}))
    data = stored(built, run)
    data["history"][-1]["values"].update(forged)
    data.update(forged)
    with pytest.raises(module.DispatchInvalidRecord, match=message) as refused:
        module.DispatchRecord.from_dict(data)
    assert refused.value.field == f"history[0].values.{field}"
    # The record's JSON Schema says the same of `drop`, whose only alternative assigns.
    assert built[1].is_valid(data) is (event == "close")


def test_an_overlay_replaces_an_assign_and_its_fields_are_checked(tmp_path: Path) -> None:
    (tmp_path / "dispatch.yaml").write_text(DISPATCH)
    overlay = tmp_path / "team.yaml"
    overlay.write_text("statechart: team\nextends: dispatch\n"
                       "remove: {fields: [attempts]}\n"
                       "states:\n  open:\n    on:\n"
                       "      drop: {target: closed, set: [reason], assign: {outcome: binned}}\n")
    result = check_file(overlay)
    assert not result.errors and result.spec is not None
    (drop,) = [t for t in result.spec.transitions() if t.event == "drop"]
    assert drop.assigns == (("outcome", "binned"),) and drop.given == ("reason",)
    overlay.write_text(overlay.read_text().replace("outcome: binned", "attempts: 1"))
    assert [(d.rule, d.span.line) for d in check_file(overlay).errors] == [("unknown-field", 7)]


def test_diagrams_and_docs_show_the_constants() -> None:
    spec = checked_text(DISPATCH)
    assert spec is not None
    assert "set: reason, outcome=dropped, attempts=0" in dot_source(spec)
    assert "set#58; outcome#61;escalated, severity#61;high" in mermaid_source(spec)
    page = docs.outputs(spec)["docs/specs/dispatch.md"].decode()
    assert "| `reason`, `outcome` = `dropped`, `attempts` = `0` |" in page
