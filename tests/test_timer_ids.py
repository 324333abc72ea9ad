"""A timer's event is its id, not its delay (docs/spec-format.md, "Timers"), so what `diff`
calls safe for stored runs loads: ids as the compiler gives them; records written before timers
had ids (agent_run version 2, `after.24h.waiting_for_input`) load under the module of today; a
changed delay (with a new version and a migration) keeps stored runs loading, `runs verify
--spec-new` over a real SQLite store agrees; a removed timer is breaking in `diff` and its
runs are indeed refused; and a property over random spec pairs with random timer and
transition edits (a transition retargeted, removed, given another alternative or guard): when
`diff` reports nothing that breaks stored runs, every stored run of the old version loads
under the new module. The default run takes a few pairs; `pytest -m slow` the full run."""

from __future__ import annotations

import collections
import copy
import datetime as dt
import json
import random
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from codegen_support import checked_text, generate, import_source, parts
from conformance import make_traces as mt
from hypothesis import HealthCheck, Phase, given, reject, settings
from hypothesis import strategies as st
from statemachine.exceptions import TransitionNotAllowed

from statechart.cli import main
from statechart.diff import diff_specs
from statechart.model import Spec
from statechart_runtime.store import open_store

ROOT = Path(__file__).resolve().parents[1]
LEGACY = Path(__file__).parent / "stored" / "agent_run_v2_before_timer_ids.json"
T0 = dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.UTC)


def model(text: str) -> Spec:
    found = checked_text(text)
    assert found is not None, text
    return found


def module(text: str, folder: Path, stem: str) -> ModuleType:
    return import_source(next(v for k, v in generate(model(text)).items() if k.endswith(".py")),
                         folder, stem)


def events_of(text: str) -> list[str]:
    return [t.event for t in model(text).timers()]


def test_a_timers_id_is_its_name_its_field_or_its_place() -> None:
    text = """\
statechart: ids
version: 1
initial: waiting
record:
  until: {type: datetime}
states:
  waiting:
    on: {wait: {target: waiting, set: [until]}, stop: done}
    after:
      15m: nudged
      until: {target: done, name: expiry}
      PT1H: [{target: done, guard: urgent, name: escalation}, {target: nudged}]
      2h: done
  nudged:
    after: {until: done, 30s: waiting}
    on: {stop: done}
  done: {final: true}
"""
    # Named timers keep their place in the numbering: naming one renumbers no other.
    assert events_of(text) == [
        "after.delay1.waiting", "after.expiry.waiting", "after.escalation.waiting",
        "after.escalation.waiting", "after.delay3.waiting", "after.until.nudged",
        "after.delay1.nudged"]
    spec = model(text)
    # Pictures, docs and overlays still name a timer by its key as written.
    assert [(t.shown, t.key) for t in spec.states["nudged"].transitions if t.trigger == "after"] \
        == [("after until", "after.until"), ("after 30s", "after.30s")]
    rows = {row[1]: row[4] for row in spec.timer_rows()}
    assert rows["after.delay3.waiting"] == "2h" and rows["after.expiry.waiting"] == "until"


# -- records written before timers had ids ---------------------------------------------------

@pytest.fixture(scope="module")
def agent_run(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return module((ROOT / "specs" / "agent_run.yaml").read_text(),
                  tmp_path_factory.mktemp("agent_run"), "agent_run")


def test_an_agent_run_record_written_before_timer_ids_loads_and_replays(
        agent_run: ModuleType, tmp_path: Path) -> None:
    """tests/stored/agent_run_v2_before_timer_ids.json was written by the version 2 module of
    commit dda04f3: its history names the 24h timer `after.24h.waiting_for_input` and the
    backoff `after.retryAt.retrying` (a deadline's id is its field, as before)."""
    stored = json.loads(LEGACY.read_text())
    finished = stored["timed_out"]
    assert [s["event"] for s in finished["history"]][-4:] == [
        "after.retryAt.retrying", "interrupt", "await_input", "after.24h.waiting_for_input"]
    record = agent_run.AgentRunRecord.from_json(json.dumps(finished))  # checked: replayed
    assert [s.event.value for s in record.history][-1] == "after.delay1.waiting_for_input"
    assert record.status.value == "failed" and record.specVersion == 2
    agent_run.check_record(record)
    again = agent_run.AgentRunRecord.from_json(record.to_json())
    assert again == record

    # A run still waiting: its armed timer is named the old way too, and fires as the new one.
    waiting = stored["waiting"]
    assert [t["event"] for t in waiting["timers"]] == ["after.24h.waiting_for_input"]
    record = agent_run.AgentRunRecord.from_json(json.dumps(waiting))
    due = record.timers[0].due
    assert [t.event.value for t in record.timers] == ["after.delay1.waiting_for_input"]
    with open_store(tmp_path / "runs.db") as store:  # and through a real store
        run = agent_run.AgentRun.restore(record, clock=lambda: due)
        store.create(run)
        assert store.fire_due(agent_run.AgentRun, run.record.runId, due).applied
        loaded = store.load(agent_run.AgentRun, run.record.runId)
        assert loaded.record.history[-1].event.value == "after.delay1.waiting_for_input"
        assert loaded.status.value == "failed"


# -- a changed delay, a removed timer ------------------------------------------------------

ORDER = """\
statechart: order
version: 1
initial: placed
states:
  placed:
    on: {pay: paid, cancel: cancelled}
    after:
      30m: {target: reminded, guard: should_remind, description: Unpaid after half an hour.}
      2h: cancelled
  reminded:
    on: {pay: paid, cancel: cancelled}
  paid: {final: true}
  cancelled: {final: true}
"""
# Version 2 reminds after 15 minutes, and calls `reminded` `nudged` (a migration).
FASTER = ORDER.replace("version: 1", "version: 2").replace("30m:", "15m:").replace(
    "reminded", "nudged") + "migrations:\n  - {from_version: 1, states: {reminded: nudged}}\n"
# Version 2 without the 2h timer.
NO_2H = ORDER.replace("version: 1", "version: 2").replace("      2h: cancelled\n", "")


def stored_orders(order: ModuleType, path: Path) -> None:
    """Runs of version 1 in a SQLite store: one reminded after 30m, one not reminded (its
    guard said no) and cancelled by the 2h timer, one paid, one still waiting (both timers
    armed)."""
    def clock() -> dt.datetime:
        return at[0]

    at = [T0]
    run_class: Any = type("Order", (order.Order,), {
        "should_remind": lambda self: self.record.runId != "expired"})
    with open_store(path) as store:
        for run_id, minutes, then in (("reminded", 31, None), ("expired", 200, None),
                                      ("paid", 5, "pay"), ("waiting", 0, None)):
            at[0] = T0
            store.create(run_class(run_id=run_id, clock=clock))
            at[0] = T0 + dt.timedelta(minutes=minutes)
            if then:
                store.fire(run_class, run_id, then)
            store.fire_due(run_class, run_id, at[0])
        assert [h.event for h in store.history("reminded")] == ["after.delay1.placed"]
        assert [h.event for h in store.history("expired")] == ["after.delay2.placed"]


def diff_kinds(old: str, new: str) -> list[tuple[str, bool, bool]]:
    return sorted((c.kind, c.for_runs, c.migrated) for c in diff_specs(model(old), model(new)))


def verify(capsys: pytest.CaptureFixture[str], store: Path, old: Path, new: Path
           ) -> tuple[int, list[tuple[str, str, str]]]:
    code = main(["runs", "verify", "--store", str(store), "--spec", str(old), "--spec-new",
                 str(new), "--format", "json"])
    out, _ = capsys.readouterr()
    return code, sorted((d["run_id"], d["rule"], d["message"]) for d in json.loads(out))


def test_a_changed_delay_keeps_stored_runs_loading(capsys: pytest.CaptureFixture[str],
                                                   tmp_path: Path) -> None:
    order = module(ORDER, tmp_path, "order1")
    faster = module(FASTER, tmp_path, "order2")
    store = tmp_path / "runs.db"
    stored_orders(order, store)
    # What `diff` says: migrated (a new due time), nothing that breaks stored runs.
    assert diff_kinds(ORDER, FASTER) == [("state-renamed", False, True),
                                         ("timer-changed", False, True)]
    (tmp_path / "order.yaml").write_text(ORDER)
    (tmp_path / "faster.yaml").write_text(FASTER)
    code, found = verify(capsys, store, tmp_path / "order.yaml", tmp_path / "faster.yaml")
    assert (code, found) == (0, [])
    with open_store(store) as s:
        for run_id in ("reminded", "expired", "paid", "waiting"):
            record = faster.OrderRecord.from_dict(s.stored_record(run_id)[1])
            assert record.specVersion == 2
        waiting = faster.OrderRecord.from_dict(s.stored_record("waiting")[1])
        # The upgrade recomputes the armed timer from the history: the new delay counts.
        assert [(t.event.value, t.due) for t in waiting.timers] == [
            ("after.delay1.placed", T0 + dt.timedelta(minutes=15)),
            ("after.delay2.placed", T0 + dt.timedelta(hours=2))]
        reminded = faster.OrderRecord.from_dict(s.stored_record("reminded")[1])
        assert [(h.event.value, h.target.value) for h in reminded.history] == [
            ("after.delay1.placed", "nudged")]
    # A record written before timer ids names the timer `after.30m.placed`: with two timers
    # on `placed`, nothing says which it became (test_a_legacy_timer_event_...); diff says so.
    help_text = next(c.help for c in diff_specs(model(ORDER), model(FASTER))
                     if c.kind == "timer-changed")
    assert "`after.30m.placed`, which fits none of the state's timers now" in help_text


def test_a_removed_timer_breaks_the_stored_runs_that_fired_it(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    order = module(ORDER, tmp_path, "order1")
    no_2h = module(NO_2H, tmp_path, "order2")
    store = tmp_path / "runs.db"
    stored_orders(order, store)
    assert ("timer-removed", True, False) in diff_kinds(ORDER, NO_2H)
    (tmp_path / "order.yaml").write_text(ORDER)
    (tmp_path / "no_2h.yaml").write_text(NO_2H)
    code, found = verify(capsys, store, tmp_path / "order.yaml", tmp_path / "no_2h.yaml")
    assert code == 1
    assert [(run_id, rule) for run_id, rule, _ in found] == [("expired", "run-migration-fails")]
    assert "`placed` has no timer `delay2` now" in found[0][2]
    with open_store(store) as s:
        raw = s.stored_record("expired")[1]
        with pytest.raises(no_2h.OrderInvalidRecord) as info:
            no_2h.OrderRecord.from_dict(raw)
        assert info.value.field == f"history[{len(raw['history']) - 1}].event"
        assert "cannot be migrated to version 2" in str(info.value)
        for run_id in ("reminded", "paid", "waiting"):  # they never fired it
            no_2h.OrderRecord.from_dict(s.stored_record(run_id)[1])


def test_a_legacy_timer_event_that_fits_no_timer_is_refused(tmp_path: Path) -> None:
    """A record written before timer ids whose timer's delay changed in a state with two
    timers: which one it was is ambiguous, and the record is refused with the step."""
    order = module(ORDER, tmp_path, "order1")
    both = module(ORDER.replace("30m:", "20m:").replace("2h:", "3h:").replace(
        "version: 1", "version: 2"), tmp_path, "order2")
    clock = [T0]
    run = order.Order(run_id="r", clock=lambda: clock[0])
    clock[0] += dt.timedelta(hours=3)
    run.fire_due()
    data = json.loads(run.record.to_json().replace("after.delay1.placed", "after.30m.placed"))
    with pytest.raises(both.OrderInvalidRecord) as info:
        both.OrderRecord.from_dict(data)
    assert info.value.field == "history[0].event"
    assert "which one it became is ambiguous" in str(info.value)
    assert "keep a timer written `30m`" in str(info.value)
    # Named by its id, it loads: the id did not change.
    assert [s.event.value for s in both.OrderRecord.from_json(run.record.to_json()).history] \
        == ["after.delay1.placed"]
    # With one timer left on `placed`, a legacy delay is that timer's (its delay changed).
    one = module(NO_2H.replace("30m:", "15m:"), tmp_path, "order3")
    assert [s.event.value for s in one.OrderRecord.from_dict(data).history] == [
        "after.delay1.placed"]


DOOR = """\
statechart: door
version: 1
initial: shut
record:
  who: {type: string}
states:
  shut: {on: {open: {target: opened, set: [who]}, lock: locked, remove: gone}}
  opened: {on: {close: shut}}
  locked: {on: {unlock: shut}}
  gone: {final: true}
"""


@pytest.mark.parametrize(("edit", "for_runs"), [
    (("close: shut", "close: locked"), True),  # `opened -close-> shut` is gone
    (("close: shut", "close: [{target: shut, guard: free}, locked]"), False),  # kept
    # a step's values are checked: one that a transition no longer sets, or now sets
    (("set: [who]", "set: []"), True),
    (("close: shut", "close: {target: shut, set: [who]}"), True),
])
def test_a_changed_transition_breaks_the_stored_runs_that_took_it(
        tmp_path: Path, edit: tuple[str, str], for_runs: bool) -> None:
    new_text = DOOR.replace(*edit).replace("version: 1", "version: 2")
    changes = [(c.kind, c.for_runs) for c in diff_specs(model(DOOR), model(new_text))]
    assert any(c[1] for c in changes) is for_runs, changes
    facade = parts(module(DOOR, tmp_path, "door1"))[0]
    took, other = facade(run_id="took"), facade(run_id="other")
    took.open(who="ann")
    took.close()
    other.lock()
    new = module(new_text, tmp_path, "door2")
    record = parts(new)[1]
    record.from_json(other.record.to_json())  # it never took it
    if for_runs:
        with pytest.raises(new.DoorInvalidRecord, match="history"):
            record.from_json(took.record.to_json())
    else:
        record.from_json(took.record.to_json())


# -- property: what `diff` calls safe for stored runs loads -----------------------------------

TIMER_EDITS = ("delay", "rename", "add", "remove", "retarget", "reorder", "name")
# Edits of `on:` transitions: retarget an alternative, remove one, add a guarded alternative
# before the others, guard an alternative or drop its guard.
TRANSITION_EDITS = ("on-retarget", "on-remove", "on-add", "on-guard")
EDITS = TIMER_EDITS + TRANSITION_EDITS
STATS: collections.Counter[str] = collections.Counter()


def _delay(rng: random.Random, taken: set[str]) -> str:
    while True:
        key = f"{rng.randint(1, 30) * 100}ms" if rng.random() < 0.8 else f"{rng.randint(1, 3)}s"
        if key not in taken:
            return key


def _edit_transition(spec: mt.Spec, rng: random.Random, op: str) -> None:
    """One random edit of an `on:` transition of `spec` (edited in place)."""
    states = spec.states()
    handling = [s for s in states if s.on]
    if not handling:
        return
    s = rng.choice(handling)
    event = rng.choice(list(s.on))
    alts = s.on[event]
    i = rng.randrange(len(alts))
    target, guard, history = alts[i]
    if op == "on-retarget":
        alts[i] = (rng.choice(states).name, guard, history if rng.random() < 0.5 else None)
    elif op == "on-remove":
        del alts[i]
        if not alts:
            del s.on[event]
    elif op == "on-add":
        alts.insert(0, (rng.choice(states).name, f"gx{rng.randint(1, 9)}", None))
    elif op == "on-guard":
        alts[i] = (target, None if guard else f"gx{rng.randint(1, 9)}", history)


def _edit(spec: mt.Spec, rng: random.Random, op: str, renames: dict[str, str]) -> None:
    """One random timer or transition edit of `spec` (a make_traces spec, edited in
    place)."""
    if op in TRANSITION_EDITS:
        _edit_transition(spec, rng, op)
        return
    states = spec.states()
    timed = [s for s in states if s.after]
    holders = [s for s in states if s.kind in ("atomic", "compound")]
    names = [s.name for s in states]
    if op == "rename":
        s = rng.choice(states)
        new = f"{s.name}_v2"
        old = next((o for o, n in renames.items() if n == s.name), s.name)
        renames[old] = new
        mt.rename_states(spec, {s.name: new})
    elif op == "add" and holders:
        s = rng.choice(holders)
        s.after[_delay(rng, set(s.after))] = [(rng.choice(names), None, None)]
    elif not timed:
        return
    elif op == "delay":
        s = rng.choice(timed)
        key, new = rng.choice(list(s.after)), _delay(rng, set(s.after))
        s.after = {new if k == key else k: v for k, v in s.after.items()}
        if key in s.names:
            s.names[new] = s.names.pop(key)
    elif op == "remove":
        s = rng.choice(timed)
        key = rng.choice(list(s.after))
        del s.after[key]
        s.names.pop(key, None)
    elif op == "retarget":
        s = rng.choice(timed)
        alts = s.after[rng.choice(list(s.after))]
        i = rng.randrange(len(alts))
        alts[i] = (rng.choice(names), *alts[i][1:])
    elif op == "reorder":
        s = rng.choice(timed)
        s.after = dict(reversed(s.after.items()))
    elif op == "name":
        s = rng.choice(timed)
        keys = list(s.after)
        key = rng.choice(keys)
        # Its id so far (the timer keeps its event), or a new name.
        s.names[key] = f"delay{keys.index(key) + 1}" if rng.random() < 0.5 \
            else f"t{rng.randint(1, 3)}"


@st.composite
def spec_pairs(draw: st.DrawFn) -> tuple[str, str, int, bool]:
    """(OLD, NEW, seed, whether an `on:` transition was edited): OLD a random spec of the conformance timers family, NEW it after
    random timer edits, usually as version 2 with a migration for the renamed states."""
    seed = draw(st.integers(0, 2**32 - 1))
    old = next(mt.random_specs(1, seed, "timers"))
    if not any(s.after for s in old.states()):
        reject()
    new = copy.deepcopy(old)
    rng = random.Random(seed)
    renames: dict[str, str] = {}
    ops = draw(st.lists(st.sampled_from(EDITS), min_size=1, max_size=3))
    for op in ops:
        _edit(new, rng, op, renames)
    text = mt.to_yaml(new)
    if draw(st.integers(0, 9)) < 8:
        text = text.replace("version: 1", "version: 2")
        if renames:
            text += ("migrations:\n  - from_version: 1\n    states: {"
                     + ", ".join(f"{o}: {n}" for o, n in renames.items()) + "}\n")
    if checked_text(text) is None:
        reject()  # an edit `check` refuses (a timer into a final's sibling region, ...)
    return mt.to_yaml(old), text, seed, any(op in TRANSITION_EDITS for op in ops)


def stored_runs(text: str, folder: Path, seed: int, walks: int = 5, steps: int = 25
                ) -> list[dict[str, Any]]:
    """Records of OLD's module: random walks (guards answer at random) on a clock that moves
    in the conformance family's advances and fires the due timers; a record is kept at
    random steps and at the end."""
    rng = random.Random(seed)
    mod = module(text, folder, "old")
    facade, _, events = parts(mod)
    guards = {t.guard for t in model(text).transitions() if t.guard}
    coin = type(facade.__name__, (facade,), {g: lambda self: rng.random() < 0.5 for g in guards})
    sendable = [e.value for e in events if e.value not in mod._SPEC.internal]
    out = []
    now = [T0]
    for walk in range(walks):
        now[0] = T0
        run = coin(run_id=f"walk-{walk}", clock=lambda: now[0])
        for _ in range(steps):
            if run.is_terminated:
                break
            if rng.random() < 0.45:
                now[0] += dt.timedelta(milliseconds=rng.choice(mt.ADVANCES))
                run.fire_due()
            else:
                try:
                    run.send(rng.choice(sendable))
                except TransitionNotAllowed:
                    pass
            if rng.random() < 0.15:
                out.append(json.loads(run.record.to_json()))
        out.append(json.loads(run.record.to_json()))
    return out


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pairs")


def _settings(examples: int) -> Any:
    return settings(max_examples=examples, deadline=None, derandomize=True, database=None,
                    phases=[Phase.explicit, Phase.generate],  # no shrinking: each builds modules
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                           HealthCheck.function_scoped_fixture])


@_settings(6)
@given(pair=spec_pairs())
def test_what_diff_calls_safe_for_stored_runs_loads(pair: tuple[str, str, int, bool],
                                                    folder: Path) -> None:
    """The smoke run (a few seconds); the full one is `slow`."""
    _what_diff_calls_safe_loads(pair, folder)


@pytest.mark.slow
def test_what_diff_calls_safe_for_stored_runs_loads_full(folder: Path) -> None:
    """The full run, then: not vacuous (one test, so that it holds under pytest-xdist too),
    it saw safe pairs whose stored runs fired timers, and breaking pairs some of whose runs
    were refused, among them pairs with transition edits."""
    STATS.clear()

    @_settings(150)
    @given(pair=spec_pairs())
    def every_pair(pair: tuple[str, str, int, bool]) -> None:
        _what_diff_calls_safe_loads(pair, folder)

    every_pair()
    assert STATS["safe pairs"] >= 5 and STATS["breaking pairs"] >= 5, STATS
    assert STATS["timer steps"] >= 100, STATS
    assert STATS["refused runs of breaking pairs"] >= 1, STATS
    assert STATS["safe pairs with transition edits"] >= 3, STATS
    assert STATS["refused runs of breaking pairs with transition edits"] >= 1, STATS


def _what_diff_calls_safe_loads(pair: tuple[str, str, int, bool], folder: Path) -> None:
    old_text, new_text, seed, edited = pair
    changes = diff_specs(model(old_text), model(new_text))
    breaking = [c for c in changes if c.for_runs]
    records = stored_runs(old_text, folder, seed)
    new_module = module(new_text, folder, "new")
    record_class = parts(new_module)[1]
    STATS["pairs"] += 1
    STATS["stored runs"] += len(records)
    STATS["timer steps"] += sum(s["event"].startswith("after.") for r in records
                                for s in r["history"])
    STATS["pairs with transition edits"] += edited
    refused = []
    for data in records:
        try:
            record_class.from_dict(data)
        except new_module._SPEC.invalid as exc:
            refused.append((data["runId"], exc))
    STATS["breaking pairs" if breaking else "safe pairs"] += 1
    STATS["refused runs of breaking pairs" if breaking else "refused runs of safe pairs"] += \
        len(refused)
    STATS["breaking pairs whose runs all load"] += bool(breaking and not refused)
    STATS["safe pairs with transition edits"] += edited and not breaking
    STATS["refused runs of breaking pairs with transition edits"] += len(refused) * (
        edited and bool(breaking))
    if not breaking:
        assert not refused, (
            f"diff calls every change safe for stored runs, yet {refused[0][0]} is refused: "
            f"{refused[0][1]}\nchanges: {[c.diagnostic().message for c in changes]}\n"
            f"OLD:\n{old_text}\nNEW:\n{new_text}")
