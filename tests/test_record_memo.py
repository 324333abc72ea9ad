"""`RecordMemo` (`statechart runs verify`): a record of a structure the memo has seen, checked
by its own parts alone, is judged exactly as `from_dict` judges it, the same error at the same
key; and `runs verify` over a store where two runs share a structure and one is damaged
reports that one alone, with the message it gets when it is verified alone."""

from __future__ import annotations

import copy
import datetime as dt
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from codegen_support import checked_text, generate, import_source

from statechart.cli import main
from statechart_runtime.errors import InvalidRecord
from statechart_runtime.run import record_class_of
from statechart_runtime.run.record_memo import RecordMemo
from statechart_runtime.store import open_store

T0 = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)

# Every kind of value a structure leaves to the record: a string, an enum, a number, a time,
# JSON, run context; a state that requires a field, a field cleared on exit, an `assign:`
# alternative (its constants are structure), a limit with a counter, compound states.
CASE = """\
statechart: case
version: 1
initial: open
record:
  note: {type: string}
  priority: {enum: [low, high]}
  score: {type: number}
  due: {type: datetime}
  payload: {type: json}
  outcome: {type: string}
  owner: {type: string, context: true}
states:
  open:
    on:
      triage: {target: working, set: [priority, score]}
      drop: {target: closed, assign: {outcome: dropped}}
  working:
    initial: drafting
    clear: [note]
    states:
      drafting: {on: {draft: {target: reviewing, set: [note, payload]}}}
      reviewing: {on: {revise: {target: drafting, set: [note]}}}
    on:
      plan: {target: planned, set: [due]}
      finish:
        - {target: closed, guard: is_urgent, assign: {outcome: rushed}}
        - {target: closed, set: [outcome]}
  planned:
    requires: [due]
    limit: 3
    counter: plans
    on: {resume: working}
  closed: {final: true, requires: [outcome]}
"""


@pytest.fixture(scope="module")
def case(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    spec = checked_text(CASE, "case.yaml")
    assert spec is not None
    return import_source(generate(spec)["generated/case.py"],
                         tmp_path_factory.mktemp("memo"), "case")


def driven(case: ModuleType, run_id: str, start: dt.datetime) -> dict[str, Any]:
    """A run that took every kind of step, its clock starting at `start`: its record as
    JSON data."""
    now = [start]

    def clock() -> dt.datetime:
        now[0] += dt.timedelta(seconds=1)
        return now[0]

    class Case(case.Case):  # type: ignore[misc, name-defined]
        def is_urgent(self) -> bool:
            return False

    run = Case(run_id=run_id, clock=clock, owner="ops")
    run.send("triage", priority="high", score=2, **{"@by": "alice"})
    run.send("draft", note="first", payload={"steps": [1, 2]})
    run.send("revise", note="second")
    run.send("draft", note=f"third of {run_id}", payload={"steps": [run_id]})
    run.send("plan", due=start + dt.timedelta(days=1))
    run.send("resume")
    run.send("finish", outcome=f"done by {run_id}")
    data: dict[str, Any] = run.record.to_dict()
    return data


def step_of(data: dict[str, Any], event: str, nth: int = 0) -> dict[str, Any]:
    found: dict[str, Any] = [s for s in data["history"] if s["event"] == event][nth]
    return found


def nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


# Damage that keeps the structure (the memo takes the record, and must refuse it by its own
# parts), and some that changes it (the memo passes it to `from_dict`).
DAMAGE: dict[str, Callable[[dict[str, Any]], None]] = {
    "a step's time before the one before it": lambda d: step_of(d, "revise").update(
        at="2029-01-01T00:00:00+00:00"),
    "a step's time that is not a time": lambda d: step_of(d, "plan").update(at="soon"),
    "lastTransitionAt not the last step's": lambda d: d.update(
        lastTransitionAt="2031-01-01T00:00:00+00:00"),
    "a step value of the wrong type": lambda d: step_of(d, "triage")["values"].update(
        score="two"),
    "an enum value the enum does not have": lambda d: step_of(d, "triage")["values"].update(
        priority="urgent"),
    "a step value the record does not hold": lambda d: step_of(d, "draft", 1)["values"]
    .update(payload={"steps": ["forged"]}),
    "a field the history does not end with": lambda d: d.update(outcome="forged"),
    "a number field changed": lambda d: d.update(score=3),
    "a time field moved": lambda d: d.update(due="2040-01-01T00:00:00+00:00"),
    "a cleared field set again": lambda d: d.update(note="stale"),
    "a field value of the wrong type": lambda d: d.update(priority=1),
    "an @by that is empty": lambda d: step_of(d, "triage")["values"].update({"@by": ""}),
    "an empty run id": lambda d: d.update(runId=""),
    "JSON nested too deeply": lambda d: (
        step_of(d, "draft", 1)["values"].update(payload=nested(70)),
        d.update(payload=nested(70))),
    "a configuration nested too deeply": lambda d: d.update(configuration=nested(70)),
    "a constant the record does not hold": lambda d: step_of(d, "finish")["values"].update(
        outcome="rushed"),
    "a required field removed": lambda d: d.pop("outcome"),
    "a count changed": lambda d: d.update(plans=2, counts={"planned": 2}),
    "a step's target changed": lambda d: step_of(d, "resume").update(target="closed"),
    "a step value removed": lambda d: step_of(d, "plan")["values"].clear(),
    "the specVersion true": lambda d: d.update(specVersion=True),
}


def outcome(check: Callable[[], Any]) -> str:
    try:
        check()
    except InvalidRecord as exc:
        return f"{type(exc).__name__}: {exc}"
    return "accepted"


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_record_of_a_seen_structure_is_judged_as_from_dict_judges_it(
        case: ModuleType, damage: str) -> None:
    record_class = record_class_of(case.Case)
    memo = RecordMemo(record_class)
    first, second = driven(case, "first", T0), driven(case, "second", T0 + dt.timedelta(hours=1))
    assert memo.check(first) is not None  # the structure's first record: `from_dict`'s
    assert memo.check(second) is None and memo.hits == 1  # the same structure: its own parts
    damaged = copy.deepcopy(second)
    DAMAGE[damage](damaged)
    alone = outcome(lambda: record_class.from_dict(copy.deepcopy(damaged)))
    assert alone != "accepted", "the damage is one `from_dict` refuses"
    assert outcome(lambda: memo.check(damaged)) == alone
    assert memo.check(copy.deepcopy(second)) is None  # the structure is still good


def test_a_record_the_memo_took_is_one_from_dict_accepts(case: ModuleType) -> None:
    """Same structure, other values (the fields a later step replaced, run context, a
    field the history set once): accepted by its own parts, and `from_dict` agrees."""
    record_class = record_class_of(case.Case)
    memo = RecordMemo(record_class)
    memo.check(driven(case, "first", T0))
    other = driven(case, "other", T0 + dt.timedelta(days=3))
    other["owner"] = "someone else"  # run context is the application's
    record_class.from_dict(copy.deepcopy(other))
    assert memo.check(other) is None and memo.hits == 1


def test_a_constant_is_the_structure_s(case: ModuleType) -> None:
    """A run dropped (`assign: {outcome: dropped}`): its outcome is the structure's, the same
    for every run of it; a record that says otherwise is refused as `from_dict` refuses it."""
    record_class = record_class_of(case.Case)
    memo = RecordMemo(record_class)

    def dropped(run_id: str) -> dict[str, Any]:
        run = case.Case(run_id=run_id, clock=lambda: T0)
        run.send("drop")
        data: dict[str, Any] = run.record.to_dict()
        return data

    assert memo.check(dropped("first")) is not None
    assert memo.check(dropped("second")) is None and memo.hits == 1
    forged = dropped("forged")
    forged["outcome"] = "kept"
    alone = outcome(lambda: record_class.from_dict(copy.deepcopy(forged)))
    assert "outcome: the history's last value is 'dropped'" in alone
    assert outcome(lambda: memo.check(forged)) == alone


def test_the_memo_is_bounded(case: ModuleType) -> None:
    record_class = record_class_of(case.Case)
    memo = RecordMemo(record_class, max_steps=20, max_record_steps=12)
    for n in range(4):  # four structures: 7, 9, 11, 13 steps (+ 1 each in the bound)
        data = driven(case, f"r{n}", T0)
        for _ in range(n):  # one more draft and revision
            data["history"][3:3] = copy.deepcopy(data["history"][1:3])
        for i, step in enumerate(data["history"]):
            step["at"] = data["lastTransitionAt"] = (T0 + dt.timedelta(seconds=i)).isoformat()
        assert outcome(lambda d=data: memo.check(d)) == \
            outcome(lambda d=data: record_class.from_dict(copy.deepcopy(d)))
        assert memo.steps <= 20
    assert [len(k[1]) for k in memo.structures] == [11]  # 7 and 9 dropped, 13 not taken


def store_runs(case: ModuleType, path: Path) -> None:
    """Two runs of one structure ("a-good", read first, then "b-damaged") and one of another."""
    with open_store(path) as store:
        for n, run_id in enumerate(("a-good", "b-damaged")):
            data = driven(case, run_id, T0 + dt.timedelta(hours=n))
            store.create(case.Case(record_class_of(case.Case).from_dict(data)))


# Hand edits of the second run: one in a value, one in a step the memo saw valid in the
# first run (its time, then its values).
EDITS = {
    "a value": ("UPDATE runs SET record = json_set(record, '$.score', 5) WHERE run_id = ?",
                "score: the history's last value is 2"),
    "a step's time": ("UPDATE history SET at = '2029-06-01T00:00:00.000000Z' "
                      "WHERE run_id = ? AND idx = 2",
                      "history[2].at: 2029-06-01T00:00:00+00:00 is before history[1]'s"),
    "a step's values": ("UPDATE history SET \"values\" = '{\"due\": \"2031-01-01T00:00:00Z\"}' "
                        "WHERE run_id = ? AND idx = 4", "due: the history's last value is "
                        "'2031-01-01T00:00:00Z'"),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_verify_judges_two_runs_of_one_structure_each_by_its_own_values(
        case: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        edit: str) -> None:
    path = tmp_path / "runs.db"
    (spec := tmp_path / "case.yaml").write_text(CASE)
    store_runs(case, path)
    assert main(["runs", "verify", "--store", str(path), "--spec", str(spec)]) == 0
    capsys.readouterr()
    sql, says = EDITS[edit]
    with sqlite3.connect(path) as db:
        db.execute(sql, ("b-damaged",))
    db.close()

    def findings() -> list[tuple[str, str, str]]:
        code = main(["runs", "verify", "--store", str(path), "--spec", str(spec),
                     "--format", "json"])
        out, err = capsys.readouterr()
        assert (code, err) == (1, "")
        return [(d["run_id"], d["rule"], d["message"]) for d in json.loads(out)]

    both = findings()
    assert [(run_id, rule) for run_id, rule, _ in both] == [("b-damaged", "run-unreplayable")]
    assert says in both[0][2], both[0][2]
    with sqlite3.connect(path) as db:  # the damaged run alone: the memo has not seen it
        db.execute("DELETE FROM history WHERE run_id = 'a-good'")
        db.execute("DELETE FROM run_states WHERE run_id = 'a-good'")
        db.execute("DELETE FROM runs WHERE run_id = 'a-good'")
    db.close()
    assert findings() == both
