"""`statechart runs verify` on every store backend: each run is read in one snapshot (a `fire`
that commits between the reads of its head and of its history does not make a healthy run
look unreplayable), and a row whose columns disagree with the record that replays (the step
count, the status, the run_states rows, next_due: what `find`, `runs list` and the workers
answer from) is reported."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from store_support import GATE, TICKET, Backend, Clock, Intercepted, gate_class

from statechart.cli import main
from statechart_runtime.store import RunStore, open_store

T0 = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)


@pytest.fixture(scope="module")
def gate(tmp_path_factory: pytest.TempPathFactory) -> type[Any]:
    return gate_class(tmp_path_factory.mktemp("gate"))


def verify(capsys: pytest.CaptureFixture[str], backend: Backend, spec: Path
           ) -> tuple[int, list[dict[str, Any]]]:
    code = main(["runs", "verify", "--store", backend.url, "--spec", str(spec),
                 "--format", "json"])
    out, err = capsys.readouterr()
    assert err == ""
    return code, json.loads(out)


def test_a_fire_between_the_reads_of_a_run_is_not_a_finding(
        ticket: ModuleType, backend: Backend, tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    store = open_store(backend.url)
    store.create(ticket.Ticket(run_id="busy"))
    store.fire(ticket.Ticket, "busy", "approve", note="first")
    (spec := tmp_path / "ticket.yaml").write_text(TICKET)
    # After verify read the run's head (its record), just before it reads the history
    # table, another store fires the run and commits.
    head_read: list[str] = []
    fired: list[int] = []
    lease = RunStore._lease

    def interleaved(sql: str, args: Any, execute: Any) -> Any:
        if "record FROM runs" in sql:
            head_read.append(sql)
        elif head_read and not fired and "FROM history" in sql:
            fired.append(store.fire(ticket.Ticket, "busy", "close").revision)
        return execute(sql, args)

    def leased(self: RunStore) -> Any:  # verify's store: its statements watched
        db = lease(self)
        return db if self is store else Intercepted(db, interleaved)

    monkeypatch.setattr(RunStore, "_lease", leased)
    assert verify(capsys, backend, spec) == (0, [])
    assert fired == [3]  # it did commit inside the window
    monkeypatch.undo()
    assert verify(capsys, backend, spec) == (0, [])  # and the run is whole after it
    assert store.load(ticket.Ticket, "busy").status.value == "closed"
    store.close()


# Hand edits of a row whose record still replays: (SQL, what the finding says).
EDITS = {
    "step count": ("UPDATE runs SET steps = 7 WHERE run_id = ?",
                   "its row says 7 steps, the history table holds 0"),
    "status column": ("UPDATE runs SET status = 'done' WHERE run_id = ?",
                      "its status column says 'done', its record 'waiting'"),
    "run_states row": ("UPDATE run_states SET state = 'done' WHERE run_id = ?",
                       "its run_states rows say ['done'], its record ['waiting']"),
    "next_due moved": ("UPDATE runs SET next_due = '2031-01-01T00:00:00.000000Z' "
                       "WHERE run_id = ?", "its next_due column says "
                       "2031-01-01T00:00:00.000000Z, its armed timers 2030-01-01T00:00:30"),
    "next_due cleared": ("UPDATE runs SET next_due = NULL WHERE run_id = ?",
                         "its next_due column says none, its armed timers 2030-01-01T00:00:30"),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_a_row_that_disagrees_with_its_record_is_reported(
        gate: type[Any], backend: Backend, tmp_path: Path,
        capsys: pytest.CaptureFixture[str], edit: str) -> None:
    clock = Clock(T0)
    with open_store(backend.url, clock=clock) as store:
        for run_id in ("edited", "fine"):
            store.create(gate(run_id=run_id, clock=clock))
    sql, says = EDITS[edit]
    backend.execute(sql, ("edited",))
    (spec := tmp_path / "gate.yaml").write_text(GATE)
    code, found = verify(capsys, backend, spec)
    assert code == 1
    assert [(d["rule"], d["run_id"]) for d in found] == [("run-row-disagrees", "edited")]
    assert says in found[0]["message"], found[0]["message"]
    assert found[0]["message"].startswith("run `edited`: its record replays, but its row ")


def test_the_runs_are_read_in_batches_each_whole(ticket: ModuleType, backend: Backend) -> None:
    with open_store(backend.url) as store:
        for n in range(5):
            store.create(ticket.Ticket(run_id=f"r{n}"))
            for _ in range(n):
                store.fire(ticket.Ticket, f"r{n}", "approve", note=str(n))
                store.fire(ticket.Ticket, f"r{n}", "reopen", note=str(n))
        backend.execute("UPDATE runs SET record = 'not json' WHERE run_id = ?", ("r3",))
        read = list(store.stored_records("ticket", batch=2))
    assert [run_id for run_id, _ in read] == ["r0", "r1", "r2", "r3", "r4"]
    assert "r3" in str(read[3][1]) and "not JSON" in str(read[3][1])
    for n in (0, 1, 2, 4):
        stored, record = read[n][1]  # type: ignore[misc]
        assert stored.steps == len(record["history"]) == 2 * n
        assert [s["values"]["note"] for s in record["history"]] == [str(n)] * (2 * n)
