"""The run store at the edges of what callers and operators do, on every backend: values at
the limits of what the store's JSON columns can hold, a retry that lands on a worker
of the next spec version, rows edited by hand, and workers racing for the same due run."""

from __future__ import annotations

import datetime as dt
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from codegen_support import checked_text, generate
from store_support import Backend, assert_usable, import_path, timed

from statechart.cli import main
from statechart_runtime.errors import DamagedRow, StoreError, UnstorableValue
from statechart_runtime.store import open_store

ROOT = Path(__file__).resolve().parents[1]

# A counter whose value is any integer.
COUNTER = """\
statechart: counter
version: 1
initial: counting
record:
  total: {type: integer}
states:
  counting:
    on:
      add: {target: counting, set: [total]}
      stop: stopped
  stopped: {final: true}
"""


@pytest.fixture(scope="module")
def counter(tmp_path_factory: pytest.TempPathFactory) -> type[Any]:
    spec = checked_text(COUNTER)
    assert spec is not None
    path = tmp_path_factory.mktemp("counter") / "counter_edges_test.py"
    path.write_bytes(generate(spec)["generated/counter.py"])
    return import_path(path, "counter_edges_test").Counter  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def ar() -> ModuleType:
    return import_path(ROOT / "generated" / "agent_run.py", "agent_run")


def test_an_integer_too_long_for_json_text_is_unstorable(counter: type[Any], ticket: ModuleType,
                                                         backend: Backend) -> None:
    """A run takes an integer of 5,000 digits; the store cannot write it (Python writes no
    JSON text of an int over 4,300 digits): UnstorableValue, from `fire` (with a key or
    not) and `create`, nothing written, the store usable, the run goes on without it."""
    store = open_store(backend.url)
    store.create(counter(run_id="c"))
    huge = 10 ** 5000
    born_big = counter(run_id="born-big")
    born_big.add(total=huge)
    calls = [lambda: store.fire(counter, "c", "add", total=huge),
             lambda: store.fire(counter, "c", "add", total=huge, idempotency_key="k"),
             lambda: store.create(born_big)]
    for call in calls:
        with pytest.raises(UnstorableValue, match="change the value"):
            call()
        assert store.history("c") == []
        assert_usable(store, ticket)
    assert [r.run_id for r in store.stored_runs(spec="counter")] == ["c"]
    assert store.fire(counter, "c", "add", total=10 ** 40).revision == 2
    assert store.load(counter, "c").record.total == 10 ** 40


@pytest.fixture(scope="module")
def desks(tmp_path_factory: pytest.TempPathFactory) -> tuple[type[Any], type[Any]]:
    """Version 1 and 2 of tests/test_store_deploy.py's spec (v2 renames `why` to `reason`)."""
    from test_store_deploy import desk_versions

    return desk_versions(tmp_path_factory.mktemp("desk"))


def test_a_key_applied_by_v1_and_retried_by_v2_is_the_same_request(
        desks: tuple[type[Any], type[Any]], backend: Backend) -> None:
    """During a rolling deploy a request applied by a v1 worker is retried (its reply was
    lost) on a v2 worker, in v2's field names: the key is the same request (`applied`
    False, nothing fired twice), not a key reused for another event. Other values are still
    a reused key."""
    v1, v2 = desks
    store = open_store(backend.url)
    store.create(v1(run_id="r"))
    assert store.fire(v1, "r", "hold", idempotency_key="k", why="lunch").applied
    retried = store.fire(v2, "r", "hold", idempotency_key="k", reason="lunch")
    assert (retried.applied, retried.revision) == (False, 2)
    assert [row.event for row in store.history("r")] == ["hold"]
    with pytest.raises(StoreError, match="idempotency key 'k'"):
        store.fire(v2, "r", "hold", idempotency_key="k", reason="tea")
    with pytest.raises(StoreError, match="idempotency key 'k'"):
        store.fire(v2, "r", "close", idempotency_key="k")
    assert store.fire(v2, "r", "wake", idempotency_key="k2").revision == 3


def test_a_store_opened_in_one_thread_works_in_another(ticket: ModuleType,
                                                       backend: Backend) -> None:
    """One store per thread, but not necessarily the thread that opened it: a worker built
    in the main thread and run in a thread of its own, a store handed to a thread pool's
    task. SQLite's module refuses that by default (an error that said the database refused
    the call and rolled back); PostgreSQL always allowed it."""
    store = open_store(backend.url)
    done: list[Any] = []

    def elsewhere() -> None:
        try:
            assert_usable(store, ticket)
            done.append(store.find(ticket.Ticket, status="approved"))
        except Exception as exc:  # reported below, in the test's thread
            done.append(exc)

    thread = threading.Thread(target=elsewhere)
    thread.start()
    thread.join()
    assert len(done) == 1 and not isinstance(done[0], Exception), done
    assert len(done[0]) == 1
    assert_usable(store, ticket)  # and back in the thread that opened it
    store.close()


@pytest.mark.parametrize("column", ["spec_version", "revision", "steps"])
def test_text_in_an_integer_column_is_a_damaged_row(
        ar: ModuleType, ticket: ModuleType, tmp_path: Path, column: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    """SQLite keeps the text an UPDATE by hand puts in an INTEGER column (PostgreSQL refuses
    the UPDATE): every call that reads the column says which run and column (DamagedRow),
    never a TypeError, and `statechart runs` says so in one line, with no traceback."""
    url = f"sqlite:///{tmp_path}/runs.db"
    store = open_store(url)
    store.create(ar.AgentRun(run_id="w"))
    store.fire(ar.AgentRun, "w", "triage")
    Backend("sqlite", url).execute(f"UPDATE runs SET {column} = 'abc' WHERE run_id = 'w'")
    later = dt.datetime(2100, 1, 1, tzinfo=dt.UTC)
    calls = [lambda: store.load(ar.AgentRun, "w"),
             lambda: store.fire(ar.AgentRun, "w", "start"),
             lambda: store.fire(ar.AgentRun, "w", "start", idempotency_key="k"),
             lambda: store.fire_due(ar.AgentRun, "w", later),
             lambda: store.stored_runs(),
             lambda: store.stored_record("w")]
    if column == "spec_version":
        calls.append(lambda: store.find(ar.AgentRun, state="triaging"))
    for call in calls:
        with pytest.raises(DamagedRow, match=f"runs.{column}"):
            call()
        assert_usable(store, ticket)
    spec = str(ROOT / "specs" / "agent_run.yaml")
    for action in (["list"], ["list", "--spec", spec, "--tag", "active"],
                   ["show", "w", "--spec", spec], ["verify", "--spec", spec]):
        assert main(["runs", *action, "--store", url]) in (1, 2)
        said = capsys.readouterr()  # verify reports the run as a finding, on stdout
        assert "Traceback" not in said.err and f"runs.{column}" in said.err + said.out, (
            action, said)


def test_a_skip_list_longer_than_a_statement_s_parameters(ticket: ModuleType,
                                                          backend: Backend) -> None:
    """A worker skips each run whose timers failed; a dependency down for every run can
    make that list longer than the 65,535 parameters a PostgreSQL statement takes (the
    driver then dropped the connection: the store reconnected and retried until its timeout,
    and said the database could not be reached). Any number of ids is one parameter."""
    timed_ticket = timed(ticket)
    store = open_store(backend.url, timeout=2)
    start = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)
    for run_id in ("a", "b"):
        store.create(timed_ticket(run_id=run_id, clock=lambda: start))
    skip = [f"failed-{i}" for i in range(70_000)] + ["a"]
    later = start + dt.timedelta(hours=2)
    assert store.next_due(timed_ticket, skip=skip) == start + dt.timedelta(hours=1)
    fired = store.fire_next_due(timed_ticket, later, skip=skip)
    assert fired is not None and fired.run.record.runId == "b"
    assert store.fire_next_due(timed_ticket, later, skip=skip) is None
    assert store.next_due(timed_ticket, skip=skip) is None
    assert store.next_due(timed_ticket) == start + dt.timedelta(hours=1)


def test_a_time_outside_utc_s_years_is_a_type_error_not_an_overflow(
        ticket: ModuleType, backend: Backend) -> None:
    """9999-12-31T23:00-05:00 is year 10000 in UTC: as a step's time (`at=`), and as a
    datetime field's value, it is refused as a bad value (TypeError) before anything is
    written, not an OverflowError from inside the step; the store stays usable."""
    store = open_store(backend.url)
    store.create(run := ticket.Ticket())
    far = dt.datetime.fromisoformat("9999-12-31T23:00-05:00")
    with pytest.raises(TypeError, match="outside the years 1-9999 in UTC"):
        store.fire(ticket.Ticket, run.record.runId, "approve", at=far, note="late")
    assert store.history(run.record.runId) == []
    assert_usable(store, ticket)
    store.close()


def test_fire_next_due_with_a_naive_now_blames_the_caller(
        ticket: ModuleType, backend: Backend) -> None:
    """A `now` without a time zone is the caller's mistake: a TypeError, not a TimerFailed
    naming the run that happened to be claimed."""
    store = open_store(backend.url)
    timed_ticket = timed(ticket)
    store.create(due := timed_ticket())
    naive = (due.record.lastTransitionAt + dt.timedelta(hours=2)).replace(tzinfo=None)
    with pytest.raises(TypeError, match="`now` must be a datetime with a time zone"):
        store.fire_next_due(timed_ticket, naive)
    assert store.due(timed_ticket, due.record.lastTransitionAt + dt.timedelta(hours=2)) == [
        due.record.runId]
    store.close()
