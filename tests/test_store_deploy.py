"""A rolling deploy over one run store, on both backends: version 1 and version 2 of a spec
(version 2 renames a state and a field, with a migration) used at the same time. `find`
answers in the caller's version for runs stored at older ones; an old worker passes over the
runs a newer version stored and fires its own; an unknown name is a documented error."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from codegen_support import checked_text, generate
from store_support import Backend, Clock, import_path, intercept, job_class, settled

from statechart.cli import main
from statechart_runtime.errors import InvalidRecord, UnknownName
from statechart_runtime.store import open_store
from statechart_runtime.worker import Worker

V1 = """\
statechart: desk
version: 1
initial: open
record:
  why: {type: string}
states:
  open:
    on:
      hold: {target: waiting, set: [why]}
      close: closed
  waiting:
    tags: [idle]
    requires: [why]
    after: {1h: open}
    on:
      wake: open
      close: closed
  closed: {final: true}
"""

V2 = """\
statechart: desk
version: 2
initial: open
record:
  reason: {type: string}
states:
  open:
    on:
      hold: {target: paused, set: [reason]}
      close: closed
  paused:
    tags: [idle]
    requires: [reason]
    after: {1h: open}
    on:
      wake: open
      close: closed
  closed: {final: true}
migrations:
  - from_version: 1
    states: {waiting: paused}
    fields: {why: reason}
    description: Version 1 called the paused state `waiting` and its reason `why`.
"""
T0 = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)
HOUR = dt.timedelta(hours=1)


def desk_versions(folder: Path) -> tuple[type[Any], type[Any]]:
    """The run classes of V1 and V2, generated into `folder`."""
    classes = []
    for version, text in (("v1", V1), ("v2", V2)):
        spec = checked_text(text)
        assert spec is not None
        path = folder / f"desk_{version}_deploy_test.py"
        path.write_bytes(generate(spec)["generated/desk.py"])
        classes.append(import_path(path, f"desk_{version}_deploy_test").Desk)
    return classes[0], classes[1]


@pytest.fixture(scope="module")
def versions(tmp_path_factory: pytest.TempPathFactory) -> tuple[type[Any], type[Any]]:
    return desk_versions(tmp_path_factory.mktemp("desk"))


def test_v1_and_v2_workers_share_one_store(versions: tuple[type[Any], type[Any]],
                                           backend: Backend) -> None:
    v1, v2 = versions
    clock = Clock(T0)
    old, new = open_store(backend.url, clock=clock), open_store(backend.url, clock=clock)
    # The v2 run is due first: an old worker meets it before its own runs.
    new.create(v2(run_id="c-v2", clock=clock))
    new.fire(v2, "c-v2", "hold", reason="lunch")
    for run_id in ("a-v1", "b-v1"):
        clock.advance(dt.timedelta(minutes=1))
        old.create(v1(run_id=run_id, clock=clock))
        old.fire(v1, run_id, "hold", why="lunch")
    old.create(v1(run_id="d-v1", clock=clock))

    # `find` answers in the caller's names, for runs stored at its version or older.
    for name in ("paused",):
        assert new.find(v2, state=name) == ["a-v1", "b-v1", "c-v2"]
        assert new.find(v2, status=name) == ["a-v1", "b-v1", "c-v2"]
    assert new.find(v2, tag="idle") == ["a-v1", "b-v1", "c-v2"]
    assert new.find(v2, status="open") == ["d-v1"]
    assert old.find(v1, state="waiting") == ["a-v1", "b-v1"]  # c-v2 is newer than v1
    with pytest.raises(UnknownName, match=r"version 1 called it `waiting`.*`paused`"):
        new.find(v2, status="waiting")
    with pytest.raises(UnknownName, match="no state `nowhere`"):
        new.find(v2, state="nowhere")
    with pytest.raises(ValueError):  # still a ValueError, for callers that caught that
        old.find(v1, state="paused")

    # Both workers at once (an hour later): the old one fires its own runs, passing over
    # the newer one (never stalling on it); the new one fires the rest; each timer once.
    clock.advance(2 * HOUR)
    assert old.due(v1) == ["a-v1", "b-v1"] and new.due(v2) == ["c-v2", "a-v1", "b-v1"]
    old_worker, new_worker = Worker(old, v1, listen=False), Worker(new, v2, listen=False)
    assert old_worker.run_once() == 2 and old_worker.failed == 0
    assert new_worker.run_once() == 1
    for run_id in ("a-v1", "b-v1", "c-v2"):
        assert [r.event for r in new.history(run_id)][1:] == [
            "after.delay1.paused" if run_id == "c-v2" else "after.delay1.waiting"]
    assert new.find(v2, status="open") == ["a-v1", "b-v1", "c-v2", "d-v1"]
    # A v2 worker upgrades a v1 run when it fires it; the old worker leaves it alone then.
    new.fire(v2, "a-v1", "hold", reason="again")
    clock.advance(2 * HOUR)
    assert old.fire_next_due(v1) is None
    assert old.next_due(v1) is None
    with pytest.raises(InvalidRecord, match="stored by version 2"):
        old.fire(v1, "a-v1", "wake")
    assert new.fire_next_due(v2).run.record.runId == "a-v1"
    old_worker.close()
    new_worker.close()


def _to_version_6(backend: Backend) -> None:
    """Take back schema version 7's step (the trace contexts of states and work items)."""
    backend.execute("ALTER TABLE run_states DROP COLUMN trace_context")
    backend.execute("ALTER TABLE work_items DROP COLUMN trace_context")
    backend.execute("UPDATE store_meta SET value = '6' WHERE key = 'schema_version'")


def _to_version_5(backend: Backend) -> None:
    """Take back schema version 7's and 6's steps (runs.trace_context, for tracing
    listeners)."""
    _to_version_6(backend)
    backend.execute("ALTER TABLE runs DROP COLUMN trace_context")
    backend.execute("UPDATE store_meta SET value = '5' WHERE key = 'schema_version'")


def _to_version_4(backend: Backend) -> None:
    """Take back schema version 7's to 5's steps (5: the steps' commit order, `watch`)."""
    _to_version_5(backend)
    if backend.name == "sqlite":
        backend.execute("DROP INDEX history_by_seq")
        backend.execute("ALTER TABLE history DROP COLUMN seq")
    else:
        backend.execute("ALTER TABLE history DROP COLUMN tx")  # its index with it
    backend.execute("UPDATE store_meta SET value = '4' WHERE key = 'schema_version'")


def test_a_store_of_schema_version_2_gains_the_version_index(backend: Backend) -> None:
    """Schema version 3 adds runs_by_version; a version 2 store is upgraded when opened."""
    open_store(backend.url).close()
    _to_version_4(backend)
    backend.execute("DROP INDEX runs_by_version")
    backend.execute("DROP TABLE work_attempts")
    backend.execute("DROP TABLE work_items")
    backend.execute("UPDATE store_meta SET value = '2' WHERE key = 'schema_version'")
    open_store(backend.url).close()
    backend.execute("DROP INDEX runs_by_version")  # there again: dropping it works


def test_a_store_of_schema_version_3_gains_the_work_tables(
        versions: tuple[type[Any], type[Any]], backend: Backend) -> None:
    """Schema version 4 adds work_items and work_attempts; a version 3 store that holds runs
    is upgraded when opened, its runs kept."""
    with open_store(backend.url) as store:
        store.create(versions[0](run_id="kept"))
    _to_version_4(backend)
    backend.execute("DROP TABLE work_attempts")
    backend.execute("DROP TABLE work_items")
    backend.execute("UPDATE store_meta SET value = '3' WHERE key = 'schema_version'")
    with open_store(backend.url) as store:
        assert [r.run_id for r in store.stored_runs()] == ["kept"]
        assert store.work_items("kept") == []
    backend.execute("DROP TABLE work_attempts")  # there again


def test_a_store_of_schema_version_4_gains_the_steps_commit_order(
        versions: tuple[type[Any], type[Any]], backend: Backend) -> None:
    """Schema version 5 numbers the steps in commit order (`watch`); a version 4 store's
    steps are numbered by their time when it is opened, before every later step."""
    v1 = versions[0]
    with open_store(backend.url) as store:
        for run_id in ("b", "a"):
            store.create(v1(run_id=run_id))
        store.fire(v1, "b", "hold", why="first")
        store.fire(v1, "a", "hold", why="second")
    _to_version_4(backend)
    with open_store(backend.url) as store:
        old = settled(store, v1, 2)
        assert [(c.run_id, c.values) for c in old] == [
            ("b", {"why": "first"}), ("a", {"why": "second"})]
        store.fire(v1, "b", "wake")
        [new] = settled(store, v1, 1, after=old[-1].position)
        assert (new.run_id, new.event) == ("b", "wake")


def test_a_store_of_schema_version_5_gains_the_trace_context_column(
        versions: tuple[type[Any], type[Any]], backend: Backend) -> None:
    """Schema version 6 adds runs.trace_context (what a tracing listener keeps with a run);
    a version 5 store that holds runs is upgraded when opened, its runs kept (with none)."""
    with open_store(backend.url) as store:
        store.create(versions[0](run_id="kept"))
    _to_version_5(backend)
    with open_store(backend.url) as store:
        assert [r.run_id for r in store.stored_runs()] == ["kept"]
        assert store.fire(versions[0], "kept", "hold", why="later").applied
    backend.execute("UPDATE runs SET trace_context = 'x'")  # there again


def test_a_store_of_schema_version_6_gains_the_trace_contexts_of_states_and_work(
        backend: Backend, tmp_path: Path) -> None:
    """Schema version 7 adds run_states.trace_context and work_items.trace_context (the
    step that entered a state, that enqueued a work item: what a tracing listener links a
    timer or a claim to); a version 6 store that holds runs and work is upgraded when
    opened, its runs and items kept (with none), and worked on."""
    job = job_class(tmp_path)
    with open_store(backend.url) as store:
        store.create(job(run_id="kept"))
        store.fire(job, "kept", "start")
    _to_version_6(backend)
    with open_store(backend.url) as store:
        claim = store.claim_work(job, owner="w")
        assert claim is not None and claim.run_id == "kept" and claim.origin_context is None
        assert store.complete_work(job, claim, "done", output=1).applied
        assert store.stored_runs()[0].states == ("finished",)
    backend.execute("UPDATE work_items SET trace_context = 'x'")  # there again
    backend.execute("UPDATE run_states SET trace_context = 'x'")


def test_a_v1_run_saved_by_v2_without_a_step_is_found_and_fired_in_v2_names(
        versions: tuple[type[Any], type[Any]], backend: Backend) -> None:
    # Upgrading rewrites the run's steps and its run_states rows, even when the save changes
    # no state: else find(state="paused") misses it, and fire finds its head (paused) and
    # its run_states rows (waiting) disagree.
    v1, v2 = versions
    store = open_store(backend.url)
    store.create(v1(run_id="r"))
    store.fire(v1, "r", "hold", why="lunch")
    store.save(store.load(v2, "r"))
    assert store.find(v2, state="paused") == ["r"]
    assert store.stored_runs()[0].states == ("paused",)
    assert store.fire(v2, "r", "wake").run.status.value == "open"
    store.close()


def test_runs_list_filters_in_the_spec_s_version(
        versions: tuple[type[Any], type[Any]], backend: Backend, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    # `runs list --spec v2.yaml --state paused` answers as find(v2, state="paused") does: the
    # v1 run in `waiting` is listed (shown in its stored names, with its version).
    v1, v2 = versions
    store = open_store(backend.url)
    store.create(v1(run_id="a-v1"))
    store.fire(v1, "a-v1", "hold", why="lunch")
    store.create(v1(run_id="b-v1"))
    store.create(v2(run_id="c-v2"))
    store.fire(v2, "c-v2", "hold", reason="tea")
    store.close()
    (spec := tmp_path / "desk.yaml").write_text(V2)

    def listed(*flags: str) -> list[tuple[str, int, str]]:
        assert main(["runs", "list", "--store", backend.url, "--spec", str(spec),
                     "--format", "json", *flags]) == 0
        return [(r["run_id"], r["spec_version"], r["status"])
                for r in json.loads(capsys.readouterr().out)]

    paused = [("a-v1", 1, "waiting"), ("c-v2", 2, "paused")]
    assert listed("--state", "paused") == paused
    assert listed("--status", "paused") == paused
    assert listed("--tag", "idle") == paused
    assert listed("--status", "open") == [("b-v1", 1, "open")]
    assert listed("--state", "paused", "--status", "open") == []
    assert main(["runs", "list", "--store", backend.url, "--spec", str(spec),
                 "--state", "waiting"]) == 2  # a v1 name: the spec's names are v2's
    assert "no state `waiting`" in capsys.readouterr().err


def test_a_v1_head_read_before_the_lock_is_upgraded_holding_the_run(
        versions: tuple[type[Any], type[Any]], tmp_path: Path) -> None:
    """SQLite reads a head before it takes the write lock; an older version's head must be
    read whole (its steps too) to be upgraded. Another writer fires the run right after the
    head was read: the v2 `fire` still sees one moment of the run (it reads an older head
    and its steps holding the run), and applies its event after the other one."""
    v1, v2 = versions
    url = f"sqlite:///{tmp_path}/runs.db"
    store = open_store(url)
    store.create(v1(run_id="r"))
    store.fire(v1, "r", "hold", why="lunch")
    others: list[str] = []

    class Row:
        def __init__(self, row: Any) -> None:
            self.row = row

        def fetchone(self) -> Any:
            return self.row

        def fetchall(self) -> Any:
            return [self.row]

    def read_then_overtake(sql: str, args: Any, read: Any) -> Any:
        if sql != store.sql.head_checked or others:
            return read(sql, args)
        row = read(sql, args).fetchone()
        with open_store(url, timeout=1) as other:  # a v1 worker, between the two reads
            other.fire(v1, "r", "wake")
        others.append("wake")
        return Row(row)

    intercept(store, read_then_overtake)
    fired = store.fire(v2, "r", "close")
    assert others == ["wake"]
    assert fired.run.status.value == "closed"
    assert [r.event for r in store.history("r")] == ["hold", "wake", "close"]
    assert store.load(v2, "r").record.reason == "lunch"
    store.close()


def test_a_column_a_later_schema_adds_breaks_no_write_of_this_runtime(
        backend: Backend, tmp_path: Path) -> None:
    """A newer runtime that adds a column to every table (as schema version 7 added
    run_states.trace_context) leaves this runtime's writes working while it still runs: each
    row of a run is written with its columns named (on SQLite, an INSERT without them
    fails once the table has one column more)."""
    job = job_class(tmp_path)
    with open_store(backend.url) as store:
        store.create(job(run_id="before"))
    for table in ("runs", "run_states", "history", "idempotency", "work_items",
                  "work_attempts"):
        backend.execute(f"ALTER TABLE {table} ADD COLUMN added_later TEXT")
    with open_store(backend.url) as store:
        store.create(job(run_id="after"))
        assert store.fire(job, "after", "start", idempotency_key="k1").applied
        assert not store.fire(job, "after", "start", idempotency_key="k1").applied
        claim = store.claim_work(job, owner="w")
        assert claim is not None
        assert store.complete_work(job, claim, "done", output=1).applied
        assert store.fire(job, "before", "start").applied
        assert {r.run_id: r.states for r in store.stored_runs()}["after"] == ("finished",)
