"""Writers racing on one run. On SQLite `fire` computes the step before it takes the write
lock, and writes it only if the run's revision is still the one it was computed from
(optimistic); overtaken, it computes the step again from the new head. A guard that fires the
same run from a second store while the first one is computing makes the race happen every
time: neither step is lost nor written twice, and a step the new head refuses is refused.
Then several processes firing at one run, on every backend."""

from __future__ import annotations

import datetime as dt
import multiprocessing
import random
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from store_support import TICKET_MODULE, Backend, gate_class, import_path, intercept

from statechart_runtime.run import EventNotAccepted
from statechart_runtime.store import open_store

ROOT = Path(__file__).resolve().parents[1]
LATER = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)


@pytest.fixture(scope="module")
def ar() -> ModuleType:
    return import_path(ROOT / "generated" / "agent_run.py", "agent_run")


def overtaking(ar: ModuleType, url: str, event: str, **values: Any) -> tuple[type[Any], list[int]]:
    """A run class whose guard (asked while `fire` computes an `error`) fires `event` at the
    same run from another store, the first time it is asked; and the list of its calls."""
    asked: list[int] = []

    class Overtaken(ar.AgentRun):  # type: ignore[misc, name-defined]
        def can_retry(self) -> bool:
            asked.append(1)
            if len(asked) == 1:
                with open_store(url) as other:
                    other.fire(ar.AgentRun, self.record.runId, event, **values)
            return True

    return Overtaken, asked


def stored_running(ar: ModuleType, store: Any) -> str:
    run = ar.AgentRun()
    run.triage()
    run.start()
    store.create(run)
    return str(run.record.runId)


def test_an_overtaken_fire_is_computed_again_and_both_steps_are_kept(
        ar: ModuleType, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/runs.db"
    store = open_store(url)
    run_id = stored_running(ar, store)
    cls, asked = overtaking(ar, url, "call_tool", toolCallId="t1")
    fired = store.fire(cls, run_id, "error", retryReason="flaky",
                       retryChange=ar.AgentRunRetryChange.nothing, retryAt=LATER)
    assert len(asked) == 2  # computed, overtaken, computed again from the new head
    assert fired.revision == 3
    assert [r.event for r in store.history(run_id)] == ["triage", "start", "call_tool", "error"]
    loaded = store.load(ar.AgentRun, run_id)  # replays the whole history
    assert loaded.status.value == "retrying"
    assert loaded.record.toolCallId == "t1"
    assert store.find(ar.AgentRun, state="retrying") == [run_id]
    assert store.find(ar.AgentRun, state="running") == []


def test_an_overtaken_fire_the_new_head_refuses_is_refused(ar: ModuleType,
                                                          tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/runs.db"
    store = open_store(url)
    run_id = stored_running(ar, store)
    cls, asked = overtaking(ar, url, "complete")
    with pytest.raises(EventNotAccepted, match="the run has ended"):
        store.fire(cls, run_id, "error", retryReason="flaky",
                   retryChange=ar.AgentRunRetryChange.nothing, retryAt=LATER)
    assert len(asked) == 1  # the second computation found the run completed
    assert [r.event for r in store.history(run_id)] == ["triage", "start", "complete"]
    assert store.load(ar.AgentRun, run_id).status.value == "completed"


def test_the_run_states_rows_follow_the_fires(ar: ModuleType, backend: Backend) -> None:
    """`fire` rewrites only the rows of the states left and entered: what `find` answers
    from stays the run's configuration through steps at every depth."""
    store = open_store(backend.url)
    run_id = stored_running(ar, store)
    steps = [("call_tool", {"toolCallId": "t1"}),
             ("interrupt", {"interruptReason": ar.AgentRunInterruptReason.human_review}),
             ("resume", {}), ("proceed", {}), ("tool_result", {}), ("complete", {})]
    for event, values in steps:
        fired = store.fire(ar.AgentRun, run_id, event, **values)
        rows = sorted(name for name in (state.value for state in fired.run.configuration))
        assert sorted(store.stored_runs()[0].states) == rows, event
        assert store.find(ar.AgentRun, state=fired.run.configuration[-1]) == [run_id]
    store.close()


# Processes take seconds to start: `slow` (CI runs it); the two overtaking tests above are
# the default run's.
@pytest.mark.slow
@pytest.mark.sync_only("its processes fire through the synchronous store (a spawned "
                       "process does not see the asynchronous variant's patch)")
def test_processes_racing_on_one_run_lose_and_repeat_no_step(
        ticket_path: Path, backend: Backend) -> None:
    module = import_path(ticket_path, TICKET_MODULE)
    store = open_store(backend.url)
    store.create(run := module.Ticket())
    run_id = run.record.runId
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        results = pool.starmap(_race, [(str(ticket_path), backend.url, run_id, w, 30)
                                       for w in range(4)])
    accepted = [note for notes, _ in results for note in notes]
    assert sum(refused for _, refused in results) > 0  # the processes did conflict
    # Every accepted event is in exactly one history row, in an order the spec allows.
    assert sorted(r.values["note"] for r in store.history(run_id)) == sorted(accepted)
    loaded = store.load(module.Ticket, run_id)  # replays the whole history, or refuses
    assert len(loaded.record.history) == len(accepted)
    store.close()


def _race(module_path: str, url: str, run_id: str, worker: int, count: int
          ) -> tuple[list[str], int]:
    module = import_path(Path(module_path), TICKET_MODULE)
    rng = random.Random(worker)
    accepted, refused = [], 0
    with open_store(url, timeout=60) as store:
        for n in range(count):
            note = f"w{worker}-{n}"
            try:
                store.fire(module.Ticket, run_id, rng.choice(["approve", "deny", "reopen"]),
                           note=note)
            except EventNotAccepted:
                refused += 1
                continue
            accepted.append(note)
    return accepted, refused


# -- timers: fire_due and fire_next_due compute before the lock too ----------------------

def overtaking_gate(gate: type[Any], url: str, target: str) -> tuple[type[Any], list[str]]:
    """The gate class whose timer guard, the first time it is asked, answers the run
    `target` from another store (which must not wait for a write lock: `timeout` 1 s), and
    the runs it was asked for."""
    asked: list[str] = []

    class Overtaken(gate):  # type: ignore[misc, valid-type]
        def may_expire(self) -> bool:
            asked.append(self.record.runId)
            if len(asked) == 1:
                with open_store(url, timeout=1) as other:
                    other.fire(gate, target, "answer")
            return True

    return Overtaken, asked


@pytest.fixture(scope="module")
def gate(tmp_path_factory: pytest.TempPathFactory) -> type[Any]:
    return gate_class(tmp_path_factory.mktemp("gate"))


def stored_gate(gate: type[Any], store: Any, run_id: str, at: dt.datetime) -> str:
    store.create(gate(run_id=run_id, clock=lambda: at))
    return run_id


def test_an_overtaken_fire_due_is_computed_again_from_the_new_head(
        gate: type[Any], tmp_path: Path) -> None:
    """The timer's guard runs with no write lock held (another store answers the run
    meanwhile); the write finds the run changed, and the timer is computed again from the
    new head: the run has ended, so nothing fires."""
    url = f"sqlite:///{tmp_path}/runs.db"
    store = open_store(url)
    start = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)
    stored_gate(gate, store, "r1", start)
    cls, asked = overtaking_gate(gate, url, "r1")
    fired = store.fire_due(cls, "r1", start + dt.timedelta(minutes=1))
    assert asked == ["r1"]  # asked once; the new head has no timer to ask about
    assert not fired.applied and fired.run.status.value == "done"
    assert [r.event for r in store.history("r1")] == ["answer"]
    assert store.next_due(gate) is None


def test_fire_next_due_overtaken_claims_again(gate: type[Any], tmp_path: Path) -> None:
    """The run due first is answered by another store while its timer is computed: the
    worker's call claims again, and fires the next run due instead of returning nothing."""
    url = f"sqlite:///{tmp_path}/runs.db"
    store = open_store(url)
    start = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)
    stored_gate(gate, store, "first", start)
    stored_gate(gate, store, "second", start + dt.timedelta(seconds=1))
    cls, asked = overtaking_gate(gate, url, "first")
    fired = store.fire_next_due(cls, start + dt.timedelta(minutes=1))
    assert fired is not None and fired.applied
    assert fired.run.record.runId == "second" and fired.run.status.value == "expired"
    assert asked == ["first", "second"]
    assert [r.event for r in store.history("first")] == ["answer"]
    assert store.fire_next_due(cls, start + dt.timedelta(minutes=1)) is None


def answered_after_the_claim(store: Any, url: str, gate: type[Any]) -> list[str]:
    """Make `store`'s next head read (after fire_next_due's claim, a read) find the claimed
    run answered by another worker in between; the runs so answered."""
    done: list[str] = []

    def overtaken_after_the_claim(sql: str, args: Any, read: Any) -> Any:
        if sql == store.sql.head_checked and not done:
            with open_store(url, timeout=1) as other:  # worker B, between A's two reads
                other.fire(gate, args[0], "answer")
            done.append(args[0])
        return read(sql, args)

    intercept(store, overtaken_after_the_claim)
    return done


def test_fire_next_due_claims_again_a_run_fired_between_its_claim_and_its_read(
        gate: type[Any], tmp_path: Path) -> None:
    """The claim is a read: the run it found may be fired by another writer before its head
    is read, and have nothing due then. The call claims again and fires the next run due,
    rather than returning a run it did nothing to (applied False), which a worker would
    count as a timer its guards declined."""
    from statechart_runtime.worker import Worker

    url = f"sqlite:///{tmp_path}/runs.db"
    start = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)
    later = start + dt.timedelta(minutes=1)
    store = open_store(url, clock=lambda: later)
    stored_gate(gate, store, "first", start)
    stored_gate(gate, store, "second", start + dt.timedelta(seconds=1))
    done = answered_after_the_claim(store, url, gate)
    fired = store.fire_next_due(gate, later)
    assert done == ["first"]
    assert fired is not None
    assert (fired.run.record.runId, fired.applied) == ("second", True)
    # The same race seen by the worker: nothing fired, nothing declined.
    stored_gate(gate, store, "third", start)
    done = answered_after_the_claim(store, url, gate)
    with Worker(store, gate, listen=False) as worker:
        assert worker.run_once() == 0
        assert done == ["third"]
        assert (worker.fired, worker.declined) == (0, 0)


PARALLEL = """\
statechart: par
version: 1
initial: work
states:
  work:
    parallel: true
    on:
      pause: paused
      tick: {}
    states:
      left:
        initial: a1
        states:
          a1: {on: {both: {target: [a2, b2]}, step: a2}}
          a2: {on: {step: a3}}
          a3: {on: {back: a1}}
      right:
        initial: b1
        states:
          b1: {on: {step: b2, deeper: b3}}
          b2: {on: {step: b1}}
          b3:
            initial: c1
            states:
              c1: {on: {step: c2}}
              c2: {on: {back: b1}}
  paused:
    on:
      resume: {target: work, history: deep}
      restart: work
      stop: stopped
  stopped: {final: true}
"""


@pytest.fixture(scope="module")
def par(tmp_path_factory: pytest.TempPathFactory) -> type[Any]:
    from codegen_support import checked_text, generate

    spec = checked_text(PARALLEL, "par.yaml")
    assert spec is not None
    path = tmp_path_factory.mktemp("par") / "par_store_race_test.py"
    path.write_bytes(generate(spec)["generated/par.py"])
    return import_path(path, "par_store_race_test").Par  # type: ignore[no-any-return]


@pytest.mark.parametrize("events", [
    ["step", "step", "pause", "resume", "back", "deeper", "step", "pause", "resume", "back"],
    ["both", "tick", "step", "deeper", "pause", "restart", "deeper", "step", "pause",
     "resume", "step", "back"],
    ["deeper", "step", "tick", "pause", "resume", "tick", "back", "step", "step"],
])
def test_run_states_rows_follow_every_kind_of_step(par: type[Any], backend: Backend,
                                                    events: list[str]) -> None:
    """Leaf changes in one region or both, a region entered deeper, the parallel state left
    and entered again by deep history or by default, targetless steps: after each fire the
    run_states rows are the active states (what `find` answers from), and the next fire's
    head check accepts them."""
    store = open_store(backend.url)
    store.create(par(run_id="r"))
    for event in events:
        try:
            fired = store.fire(par, "r", event)
        except EventNotAccepted:  # an event the run does not take there
            continue
        (stored,) = store.stored_runs("par")
        assert sorted(stored.states) == sorted(fired.run._active), event
        assert sorted(store.load(par, "r")._active) == sorted(stored.states)
    store.close()
