"""The worker that fires a store's due timers (`statechart_runtime.worker.Worker`, `statechart
runs work`), on both backends: a real agent-run approval timeout under an injected clock,
failing and refusing timers that never hold up the others, two workers sharing one store,
a PostgreSQL worker woken early by a new deadline, and SIGTERM ending a worker process."""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from codegen_support import checked_text, generate
from pg_server import Server
from store_support import GATE, TICKET, Backend, Clock, gate_class, import_path

from statechart.cli import main
from statechart_runtime.errors import ReadOnlyStore
from statechart_runtime.store import open_store
from statechart_runtime.worker import Worker

ROOT = Path(__file__).resolve().parents[1]
T0 = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)
SECOND = dt.timedelta(seconds=1)


@pytest.fixture(scope="module")
def ar() -> ModuleType:
    return import_path(ROOT / "generated" / "agent_run.py", "agent_run")


@pytest.fixture(scope="module")
def gate(tmp_path_factory: pytest.TempPathFactory) -> type[Any]:
    return gate_class(tmp_path_factory.mktemp("gate"))


def awaiting_approval(ar: ModuleType, clock: Any, deadline: dt.datetime,
                      run_id: str | None = None) -> Any:
    run = ar.AgentRun(clock=clock, run_id=run_id)
    run.triage()
    run.start()
    run.interrupt(interruptReason=ar.AgentRunInterruptReason.approval)
    run.await_approval(approvalId="approval-1", approvalDeadline=deadline)
    return run


def test_the_worker_times_out_an_approval(ar: ModuleType, backend: Backend,
                                          caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock(T0)
    store = open_store(backend.url, clock=clock)
    store.create(run := awaiting_approval(ar, clock, T0 + 3600 * SECOND))
    run_id = run.record.runId
    worker = Worker(store, ar.AgentRun, listen=False)
    assert worker.run_once() == 0  # not due yet
    assert worker._sleep_time() == 60.0  # due in an hour: sleeps max_sleep
    clock.advance(3599 * SECOND)
    assert worker._sleep_time() == 1.0  # the next deadline, by the store's clock
    clock.advance(2 * SECOND)
    with caplog.at_level(logging.INFO, logger="statechart_runtime.worker"):
        assert worker.run_once() == 1
    assert [r.getMessage() for r in caplog.records] == [
        f"run {run_id}: fired after.approvalDeadline.waiting_for_approval, now in "
        "timed_out (revision 2)"]
    loaded = store.load(ar.AgentRun, run_id)  # replays: the timeout is a checked step
    assert ar.AgentRunState.timed_out in loaded.configuration
    assert loaded.record.history[-1].at == T0 + 3600 * SECOND  # at its deadline
    assert worker.run_once() == 0 and worker.fired == 1
    worker.close()


def test_failing_and_refusing_timers_do_not_hold_up_the_others(
        gate: type[Any], backend: Backend, caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock(T0)
    store = open_store(backend.url, clock=clock)
    for run_id in ("broken", "stubborn", "fine"):  # due in this order
        store.create(gate(run_id=run_id, clock=clock))
        clock.advance(SECOND)
    clock.advance(60 * SECOND)
    worker = Worker(store, gate, listen=False, retry_after=3600)
    with caplog.at_level(logging.INFO, logger="statechart_runtime.worker"):
        assert worker.run_once() == 1
    assert (worker.fired, worker.declined, worker.failed) == (1, 1, 1)
    assert store.find(gate, status="expired") == ["fine"]
    assert store.due(gate) == ["broken"]  # still due: nothing of it was saved
    assert store.history("broken") == []
    failed = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(failed) == 1 and "run broken: timer failed" in failed[0].getMessage()
    assert "RuntimeError: the guard's service is down" in failed[0].getMessage()
    assert worker.run_once() == 0 and worker.failed == 1  # skipped, not retried at once
    # The sleep ignores the skipped run (due in the past): it waits for the retry.
    assert worker._sleep_time() == 60.0
    worker.close()


def started_worker(url: str, run_class: type[Any], *, timeout: float = 30.0,
                   go: threading.Event | None = None, **options: Any
                   ) -> tuple[Worker, threading.Thread]:
    """A worker running in a thread of its own, on a store that thread opened (a store is
    one connection: one per thread); with `go`, it starts working when `go` is set."""
    made: list[Worker] = []
    ready = threading.Event()

    def work() -> None:
        made.append(Worker(open_store(url, timeout=timeout), run_class, **options))
        ready.set()
        if go is None or go.wait(30):
            made[0].run()

    thread = threading.Thread(target=work)
    thread.start()
    assert ready.wait(30)
    return made[0], thread


def _work_in_thread(url: str, gate: type[Any], clock: Any, fired: list[int]) -> None:
    with open_store(url, clock=clock) as store:
        worker = Worker(store, gate, listen=False)
        worker.run_once()
        fired.append(worker.fired)
        worker.close()


def test_two_workers_fire_each_timer_exactly_once(gate: type[Any], backend: Backend) -> None:
    clock = Clock(T0)
    store = open_store(backend.url, clock=clock)
    ids = [f"run-{i:02}" for i in range(30)]
    for run_id in ids:
        store.create(gate(run_id=run_id, clock=clock))
    clock.advance(60 * SECOND)
    counts: list[int] = []
    threads = [threading.Thread(target=_work_in_thread, args=(backend.url, gate, clock, counts))
               for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sum(counts) == len(ids) and len(counts) == 2
    for run_id in ids:
        assert [r.event for r in store.history(run_id)] == ["after.delay1.waiting"]
    assert store.due(gate) == []


def test_a_new_earlier_deadline_wakes_a_postgresql_worker(ar: ModuleType,
                                                          pg_backend: Backend) -> None:
    worker, thread = started_worker(pg_backend.url, ar.AgentRun, max_sleep=30)
    try:
        time.sleep(0.5)  # asleep: nothing is due, for up to 30 s
        other = open_store(pg_backend.url)
        started = time.monotonic()
        deadline = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=0.5)
        other.create(run := awaiting_approval(ar, None, deadline))
        while worker.fired == 0 and time.monotonic() - started < 20:
            time.sleep(0.05)
        assert worker.fired == 1, "the worker slept through the new deadline"
        assert time.monotonic() - started < 10  # woken by the notice, not max_sleep
        loaded = other.load(ar.AgentRun, run.record.runId)
        assert ar.AgentRunState.timed_out in loaded.configuration
        other.close()
    finally:
        worker.stop()
        thread.join(10)
    assert not thread.is_alive()


def test_a_worker_outlives_a_store_that_stays_busy(ar: ModuleType, tmp_path: Path,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    """Another connection holds the SQLite write lock for longer than the store waits: the
    worker logs the failure and keeps trying; once the lock is free it fires the due run."""
    db = tmp_path / "runs.db"
    with open_store(db) as store:
        past = dt.datetime(2020, 1, 1, tzinfo=dt.UTC)
        store.create(run := awaiting_approval(ar, lambda: past, past + SECOND))
    go = threading.Event()
    with caplog.at_level(logging.ERROR, logger="statechart_runtime.worker"):
        worker, thread = started_worker(str(db), ar.AgentRun, timeout=0.1, max_sleep=0.1,
                                        go=go)
        holder = sqlite3.connect(db, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")  # the write lock, kept
        go.set()
        try:
            started = time.monotonic()
            while worker.errors < 2 and time.monotonic() - started < 20:
                time.sleep(0.02)
            assert worker.errors >= 2 and thread.is_alive() and worker.fired == 0
            holder.execute("ROLLBACK")
            while worker.fired == 0 and time.monotonic() - started < 20:
                time.sleep(0.02)
        finally:
            worker.stop()
            thread.join(20)
            holder.close()
    assert not thread.is_alive() and worker.fired == 1
    assert "the store failed, trying again in 0.1 s" in caplog.records[0].getMessage()
    with open_store(db) as reader:
        loaded = reader.load(ar.AgentRun, run.record.runId)
    assert ar.AgentRunState.timed_out in loaded.configuration


@pytest.mark.slow
def test_a_worker_outlives_a_database_outage(ar: ModuleType, own_postgres: Server,
                                             caplog: pytest.LogCaptureFixture) -> None:
    """The server stops for longer than the store's reconnect budget: the worker logs the
    failure and keeps trying; once the server is back it fires what became due."""
    with caplog.at_level(logging.ERROR, logger="statechart_runtime.worker"):
        worker, thread = started_worker(own_postgres.url, ar.AgentRun, timeout=0.5,
                                        max_sleep=0.2)
        try:
            own_postgres.pg_ctl("stop", "-m", "fast", "-w")
            started = time.monotonic()
            while worker.errors < 2 and time.monotonic() - started < 20:
                time.sleep(0.05)
            assert worker.errors >= 2 and thread.is_alive()
            own_postgres.restart()  # starts the stopped server
            with open_store(own_postgres.url) as other:
                past = dt.datetime(2020, 1, 1, tzinfo=dt.UTC)
                other.create(run := awaiting_approval(ar, lambda: past, past + SECOND))
                started = time.monotonic()
                while worker.fired == 0 and time.monotonic() - started < 20:
                    time.sleep(0.05)
                loaded = other.load(ar.AgentRun, run.record.runId)
            assert ar.AgentRunState.timed_out in loaded.configuration
        finally:
            worker.stop()
            thread.join(20)
    assert not thread.is_alive()
    assert "the store failed, trying again in 0.2 s" in caplog.records[0].getMessage()


def test_runs_work_once_list_due_and_show(ar: ModuleType, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """`statechart runs work --once` fires what is due and exits 0; `runs list --due` and
    `runs show` tell when the other run's timer is due; a spec without timers is refused."""
    db = tmp_path / "runs.db"
    store = open_store(db)
    past = dt.datetime(2020, 1, 1, tzinfo=dt.UTC)
    store.create(done := awaiting_approval(ar, lambda: past, past + SECOND))
    store.create(later := awaiting_approval(ar, None, dt.datetime(2100, 1, 1, tzinfo=dt.UTC),
                                            "a-later"))
    store.create(awaiting_approval(ar, None, dt.datetime(2099, 1, 1, tzinfo=dt.UTC), "z-sooner"))
    spec = str(ROOT / "specs" / "agent_run.yaml")
    code = main(["runs", "work", "--store", str(db), "--spec", spec, "--once"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert f"run {done.record.runId}: fired after.approvalDeadline" in err
    assert "fired 1 timer, 0 declined, 0 failed" in err
    code = main(["runs", "list", "--store", str(db), "--due", "--format", "json"])
    rows = json.loads(capsys.readouterr().out)
    assert code == 0
    assert [(r["run_id"], r["next_due"]) for r in rows] == [  # by due time, not by id
        ("z-sooner", "2099-01-01T00:00:00Z"), ("a-later", "2100-01-01T00:00:00Z")]
    code = main(["runs", "list", "--store", str(db), "--due", "2099-12-31T23:59:59Z"])
    out = capsys.readouterr().out
    assert code == 0 and "z-sooner" in out and "a-later" not in out
    assert out.splitlines()[0].split()[-2:] == ["NEXT", "DUE"]
    code = main(["runs", "list", "--store", str(db), "--due", "2098-01-01T00:00:00Z"])
    assert code == 0 and capsys.readouterr().out == "no stored runs match\n"
    code = main(["runs", "show", later.record.runId, "--store", str(db), "--spec", spec])
    out = capsys.readouterr().out
    assert "armed timers (1):\n  2100-01-01T00:00:00Z  after.approvalDeadline" in out

    ticket = tmp_path / "ticket.yaml"
    ticket.write_text(TICKET)
    code = main(["runs", "work", "--store", str(db), "--spec", str(ticket), "--once"])
    assert code == 2
    assert "has no timers (`after:`)" in capsys.readouterr().err



@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_sleeping_runs_work_process_exits_0_on_a_signal(ar: ModuleType, tmp_path: Path,
                                                           sig: int) -> None:
    db = tmp_path / "runs.db"
    with open_store(db) as store:
        store.create(awaiting_approval(ar, None, dt.datetime(2100, 1, 1, tzinfo=dt.UTC)))
    worker = subprocess.Popen(
        [sys.executable, "-c", "from statechart.cli import main; raise SystemExit(main())",
         "runs", "work", "--store", str(db), "--spec", str(ROOT / "specs" / "agent_run.yaml"),
         "--max-sleep", "60"],
        stderr=subprocess.PIPE, text=True, cwd=tmp_path, env={**os.environ})
    assert worker.stderr is not None
    assert "sleeping at most 60 s" in worker.stderr.readline()  # working: signals set
    time.sleep(0.3)  # asleep: the run is due in 2100 (60 s at most)
    started = time.monotonic()
    worker.send_signal(sig)
    _, err = worker.communicate(timeout=30)
    assert worker.returncode == 0, err
    assert time.monotonic() - started < 5
    assert "fired 0 timers" in err


SLOW_WORKER = """
import pathlib, sys, time
sys.path.insert(0, {tests!r})
from store_support import import_path
from statechart_runtime.errors import ReadOnlyStore
from statechart_runtime.store import open_store
from statechart_runtime.worker import Worker

gate = import_path(pathlib.Path({module!r}), "gate_signal_test")
marker = pathlib.Path({marker!r})


class Slow(gate.Gate):
    def may_expire(self):
        if self.record.runId == "slow":  # inside the transaction that fires it
            marker.touch()
            time.sleep(1.5)
        return True


with open_store({db!r}) as store:
    worker = Worker(store, Slow, max_sleep=60)
    with worker.stopped_by_signals():
        worker.run()
print("fired", worker.fired)
"""


def test_sigterm_during_a_transaction_lets_it_commit(tmp_path: Path) -> None:
    """SIGTERM arrives while a timer's guard runs, inside the transaction that fires it: the
    transaction commits, the worker fires nothing more and the process exits 0."""
    spec = checked_text(GATE)
    assert spec is not None
    module = tmp_path / "gate_signal_test.py"
    module.write_bytes(generate(spec)["generated/gate.py"])
    gate = import_path(module, "gate_signal_test")
    db, marker = tmp_path / "runs.db", tmp_path / "in-transaction"
    with open_store(db) as store:
        for run_id, day in (("slow", 1), ("next", 2)):
            created = dt.datetime(2020, 1, day, tzinfo=dt.UTC)
            store.create(gate.Gate(run_id=run_id, clock=lambda at=created: at))
    script = SLOW_WORKER.format(tests=str(ROOT / "tests"), module=str(module),
                                marker=str(marker), db=str(db))
    worker = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    started = time.monotonic()
    while not marker.exists() and time.monotonic() - started < 30 and worker.poll() is None:
        time.sleep(0.02)
    worker.send_signal(signal.SIGTERM)
    out, err = worker.communicate(timeout=30)
    assert worker.returncode == 0, err
    assert out.strip() == "fired 1"
    with open_store(db) as store:
        assert [r.event for r in store.history("slow")] == ["after.delay1.waiting"]
        assert store.history("next") == []  # stopped after the transaction under way


def test_a_worker_refuses_what_no_retry_can_cure(gate: type[Any], backend: Backend) -> None:
    """A read-only store is refused when the worker is made, and a store that turns out
    read-only (or with a schema it cannot use) while it runs ends `run` with that error,
    instead of a retry every `max_sleep` for ever."""
    open_store(backend.url).close()  # the tables
    with open_store(backend.url, read_only=True) as reader, \
            pytest.raises(ReadOnlyStore, match="a worker saves the runs"):
        Worker(reader, gate, listen=False)
    store = open_store(backend.url)
    store.create(gate(run_id="due", clock=lambda: T0))
    worker = Worker(store, gate, listen=False, max_sleep=0.05)
    store.read_only = True  # as if: every change is now refused with ReadOnlyStore
    raised: list[BaseException] = []

    def work() -> None:
        try:
            worker.run()
        except BaseException as exc:
            raised.append(exc)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join(5)
    if thread.is_alive():
        worker.stop()
        thread.join()
    assert [type(e) for e in raised] == [ReadOnlyStore] and worker.errors == 0
