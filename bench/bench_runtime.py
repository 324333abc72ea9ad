"""Benchmark the generated agent run against the same machine written by hand.

    python bench/bench_runtime.py [--quick] [--markdown FILE] [--sizes 10 1000 5000]
                                  [--codegen-sizes 1000 5000] [--rounds 41] [--runs 3]
                                  [--live 2000] [--restore-calls 50] [--sections 1 ... 6]
                                  [--module generated/agent_run.py]

Side by side in one run (the machine is noisy: every speed is a ratio against a baseline
measured in the same run, in interleaved rounds, and the medians are reported):

1. events/s of the agent run: the generated facade (`getattr(run, event)(**kwargs)`, record
   kept) against bench/handwritten_agent_run.py (`sm.send(event)`), (a) created and driven:
   a new run per path, along a realistic path (triage, start, tool calls, an interruption
   approved, a retry, complete), and (b) steady: one run looping call_tool/tool_result;
2. memory per live run: tracemalloc over `--live` instances kept alive (after gc), just
   created and after a few events;
3. import time of a generated module (flat bench/genspec.py specs of `--sizes` states, and
   agent_run itself): cold (no .pyc) and warm, each in a fresh process with
   python-statemachine already imported, median of `--runs`;
4. code generation (`python_module.render` + the record schema) against `check_source` on
   the same spec text, flat and nested, at `--codegen-sizes`;
5. line counts of every module in generated/ and of the module generated at 10 states;
6. restoring a run from its head and firing one event: the CPU time of `RunStore.fire` per
   call without its SQL (the head's JSON parsed, `from_dict(check=False)`,
   `Run.restore(check=False)`, `run.send`, the new head and step encoded), split into
   building the run, the send and the codec out, against the hand-written class constructed
   on the same configuration and sent the same event (`--restore-calls` calls a round); and
   the Python function calls per in-memory event and per part, generated and hand-written.

`--sections 6` runs section 6 alone (with `--quick`: in seconds).

The generated classes are found by the naming convention (CamelCase spec name for the
facade, + `Machine`, + `Record`), and events go through the facade's methods, so the script
keeps working while the generated API moves; the hand-written class imports nothing from
this project, and its graph is checked against the generated machine's before timing.
"""

from __future__ import annotations

import argparse
import contextlib
import enum
import gc
import importlib.util
import inspect
import json
import os
import platform
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
import tracemalloc
import typing
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "compiler"))

from benchlib import agent_run_v1_module, module_source, time_cold_warm  # noqa: E402
from genspec import generate  # noqa: E402
from handwritten_agent_run import HandwrittenAgentRun  # noqa: E402
from statemachine.orderedset import OrderedSet  # noqa: E402

from statechart.codegen import python_module, record_schema  # noqa: E402
from statechart.linter import check_source  # noqa: E402
from statechart_runtime.chart.values import utcnow  # noqa: E402
from statechart_runtime.run import active_states, record_class_of, spec_of  # noqa: E402
from statechart_runtime.store import open_store  # noqa: E402
from statechart_runtime.store.core import restore as store_restore  # noqa: E402
from statechart_runtime.store.core import writes as store_writes  # noqa: E402
from statechart_runtime.store.core.checks import utc_text as _utc_text  # noqa: E402
from statechart_runtime.store.core.writes import MARK_ATTR, Mark, mark_of, saved  # noqa: E402
from statechart_runtime.store.sqlite import SQL  # noqa: E402

ALL_SECTIONS = [1, 2, 3, 4, 5, 6]
Step = tuple[str, dict[str, str]]  # (event, {record field: value as JSON writes it})


def agent_path(tool_calls: int) -> list[Step]:
    """A realistic run: triaged, started, a few tool calls, interrupted for approval,
    approved and resumed, an error retried, then completed."""
    tools: list[Step] = [("call_tool", {}), ("tool_result", {})]
    return [
        ("triage", {}),
        ("start", {}),
        *tools * tool_calls,
        ("interrupt", {"interruptReason": "approval"}),
        ("await_approval", {}),
        ("approve", {}),
        ("proceed", {}),
        *tools,
        ("error", {"retryReason": "rate limited"}),
        ("retry", {}),
        *tools,
        ("complete", {}),
    ]


FEW_EVENTS: list[Step] = [("triage", {}), ("start", {}), ("call_tool", {}),
                          ("tool_result", {}), ("interrupt", {"interruptReason": "approval"})]


# ---------------------------------------------------------------------------------------
# The generated module, found by convention


class Generated:
    """The generated module's facade, machine and record classes, by their names."""

    def __init__(self, path: Path) -> None:
        name = f"_bench_{path.stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None, path
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up while decorating
        spec.loader.exec_module(module)
        self.module = module
        self.spec_name = str(getattr(module, "SPEC_NAME", path.stem))
        self.base = python_module.camel(self.spec_name)
        self.facade: type = getattr(module, self.base)
        self.machine: type = getattr(module, self.base + "Machine")
        self.record: type | None = getattr(module, self.base + "Record", None)
        self.takes_run_id = "run_id" in inspect.signature(self.facade).parameters

    def prepare(self, steps: list[Step]) -> list[tuple[str, dict[str, Any]]]:
        """The steps with each value typed as the event method takes it (enum fields get
        their enum member), resolved once, before any timing."""
        return [(event, {f: self._typed(event, f, v) for f, v in values.items()})
                for event, values in steps]

    def _typed(self, event: str, field: str, value: str) -> Any:
        candidates: list[Any] = []
        try:
            hints = typing.get_type_hints(getattr(self.facade, event), vars(self.module))
            hint = hints.get(field)
            candidates += [hint, *typing.get_args(hint)]
        except Exception:  # unresolvable annotations: fall back on the naming convention
            pass
        candidates.append(getattr(self.module, self.base + field[:1].upper() + field[1:], None))
        for c in candidates:
            if isinstance(c, type) and issubclass(c, enum.Enum):
                return c(value)
        return value

    def new_run(self, i: int) -> Any:
        return self.facade(run_id=f"bench-{i}") if self.takes_run_id else self.facade()


def drive(run: Any, calls: list[tuple[str, dict[str, Any]]]) -> Any:
    for event, kwargs in calls:
        getattr(run, event)(**kwargs)
    return run


def send_all(sm: Any, events: list[str]) -> Any:
    send = sm.send
    for event in events:
        send(event)
    return sm


def graph(machine: type) -> dict[str, Any]:
    """A machine class's graph as python-statemachine holds it: per state its parent,
    initial and final flags, and per event the targets (with guards) in order."""
    out: dict[str, Any] = {}
    for s in machine.states_map.values():  # type: ignore[attr-defined]
        by_event: dict[str, list[tuple[str, list[str]]]] = {}
        for t in s.transitions:
            for e in t.events:
                by_event.setdefault(str(e), []).append((t.target.id, [str(c) for c in t.cond]))
        out[s.id] = (s.parent.id if s.parent else None, s.initial, s.final, by_event)
    return out


def check_same_machine(gen: Generated, path: list[Step]) -> None:
    """The hand-written class must have the generated graph, and both must walk `path`
    through the same configurations; otherwise the comparison means nothing."""
    ours, theirs = graph(gen.machine), graph(HandwrittenAgentRun)
    if ours != theirs:
        diff = {k: (ours.get(k), theirs.get(k)) for k in ours.keys() | theirs.keys()
                if ours.get(k) != theirs.get(k)}
        raise SystemExit(f"bench/handwritten_agent_run.py no longer matches {gen.base}Machine: "
                         f"{diff}")
    run, sm = gen.new_run(0), HandwrittenAgentRun()
    for event, kwargs in gen.prepare(path):
        getattr(run, event)(**kwargs)
        sm.send(event)
        if hasattr(run, "configuration"):
            active = {getattr(s, "value", s) for s in run.configuration}
            assert active == set(sm.configuration_values), (event, active,
                                                             sm.configuration_values)
    if gen.record is not None:
        assert isinstance(getattr(run, "record", None), gen.record)


# ---------------------------------------------------------------------------------------
# 1. events per second


def paired_rounds(a: Callable[[], float], b: Callable[[], float],
                  rounds: int) -> tuple[list[float], list[float]]:
    """Seconds per event of `a` and `b`, round by round, in ABBA order (noise on this
    machine comes in bursts, and the second of two runs is often the luckier)."""
    ta, tb = [], []
    for i in range(rounds):
        if i % 2 == 0:
            ta.append(a())
            tb.append(b())
        else:
            tb.append(b())
            ta.append(a())
    return ta, tb


def summary(gen_times: list[float], hand_times: list[float]) -> dict[str, Any]:
    ratios = sorted(h / g for g, h in zip(gen_times, hand_times, strict=True))
    quartiles = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else ratios * 3
    return {"generated": 1 / statistics.median(gen_times),
            "hand": 1 / statistics.median(hand_times),
            "ratio": statistics.median(ratios), "q1": quartiles[0], "q3": quartiles[2],
            "rounds": len(ratios)}


def bench_events(gen: Generated, path: list[Step], rounds: int, runs_per_round: int,
                 steady_events: int) -> dict[str, dict[str, Any]]:
    calls = gen.prepare(path)
    events = [e for e, _ in path]
    per_round = runs_per_round * len(path)

    def created_generated() -> float:
        start = time.perf_counter()
        for i in range(runs_per_round):
            drive(gen.new_run(i), calls)
        return (time.perf_counter() - start) / per_round

    def created_hand() -> float:
        start = time.perf_counter()
        for _ in range(runs_per_round):
            send_all(HandwrittenAgentRun(), events)
        return (time.perf_counter() - start) / per_round

    loop = gen.prepare([("call_tool", {}), ("tool_result", {})] * (steady_events // 2))
    loop_events = [e for e, _ in loop]
    to_loop = gen.prepare(path[:2])  # triage, start: in `running.reasoning`

    def steady_generated() -> float:
        run = drive(gen.new_run(0), to_loop)  # a fresh run each round: the history is
        start = time.perf_counter()           # not carried from one round to the next
        drive(run, loop)
        return (time.perf_counter() - start) / len(loop)

    def steady_hand() -> float:
        sm = send_all(HandwrittenAgentRun(), events[:2])
        start = time.perf_counter()
        send_all(sm, loop_events)
        return (time.perf_counter() - start) / len(loop_events)

    for fn in (created_generated, created_hand, steady_generated, steady_hand):
        fn()  # warm-up: first-call caches on both sides
    out = {}
    for name, a, b in (("created", created_generated, created_hand),
                       ("steady", steady_generated, steady_hand)):
        gc.collect()
        out[name] = summary(*paired_rounds(a, b, rounds))
        out[name]["events"] = len(path) if name == "created" else len(loop)
        print(f"events/s {name}: {out[name]}", flush=True)
    return out


# ---------------------------------------------------------------------------------------
# 2. memory per live run


def live_bytes(make: Callable[[int], Any], n: int) -> float:
    """Bytes still allocated per object after making `n` of them and keeping them alive."""
    for i in range(3):
        make(i)  # warm-up: class-level caches are not per run
    holder: list[Any] = [None] * n
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for i in range(n):
            holder[i] = make(i)
        gc.collect()
        used = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    del holder
    gc.collect()
    return used / n


def bench_memory(gen: Generated, n: int, runs: int) -> dict[str, dict[str, float]]:
    few = gen.prepare(FEW_EVENTS)
    few_events = [e for e, _ in FEW_EVENTS]
    cases: dict[str, tuple[Callable[[int], Any], Callable[[int], Any]]] = {
        "created": (gen.new_run, lambda i: HandwrittenAgentRun()),
        f"after {len(FEW_EVENTS)} events": (
            lambda i: drive(gen.new_run(i), few),
            lambda i: send_all(HandwrittenAgentRun(), few_events)),
    }
    out = {}
    for name, (make_gen, make_hand) in cases.items():
        g, h = [], []
        for _ in range(runs):
            g.append(live_bytes(make_gen, n))
            h.append(live_bytes(make_hand, n))
        out[name] = {"generated": statistics.median(g), "hand": statistics.median(h)}
        out[name]["ratio"] = out[name]["generated"] / out[name]["hand"]
        print(f"memory {name}: {out[name]}", flush=True)
    return out


# ---------------------------------------------------------------------------------------
# 3. import time


def bench_imports(sizes: list[int], module_path: Path, runs: int,
                  tmp: Path) -> list[dict[str, Any]]:
    rows = []
    subjects: list[tuple[str, str]] = [
        (f"generated flat, {n:,} states", module_source(n)) for n in sizes]
    subjects += [
        (f"{module_path.name} ({module_path.parent.name}/)", module_path.read_text()),
        ("handwritten_agent_run.py (bench/)",
         (HERE / "handwritten_agent_run.py").read_text()),
    ]
    for i, (label, source) in enumerate(subjects):
        folder = tmp / f"import{i}"
        folder.mkdir()
        (folder / "subject.py").write_text(source)
        row = {"label": label, "lines": len(source.splitlines()),
               **time_cold_warm(folder, "subject", runs)}
        rows.append(row)
        print(f"import {row}", flush=True)
    return rows


# ---------------------------------------------------------------------------------------
# 4. code generation against check


def timed(times: list[float], fn: Callable[..., Any], *args: Any) -> Any:
    """Call `fn(*args)` (after a gc), append its seconds to `times`, return its result."""
    gc.collect()
    start = time.perf_counter()
    result = fn(*args)
    times.append(time.perf_counter() - start)
    return result


def bench_codegen_time(sizes: list[int], runs: int) -> list[dict[str, Any]]:
    rows = []
    for n in sizes:
        for nested in (False, True):
            raw = generate(n, nested).encode("utf-8")
            path = f"bench_{'nested' if nested else 'flat'}_{n}.yaml"
            check_t: list[float] = []
            render_t: list[float] = []
            schema_t: list[float] = []
            total_t: list[float] = []
            states = 0
            for _ in range(runs):
                # Interleaved: check, generate from its result, check again (the check is
                # short next to the generation; two samples a run keep one noisy moment
                # from deciding its median).
                result = timed(check_t, check_source, path, raw)
                spec = result.spec
                assert spec is not None and not result.errors, result.errors[:3]
                states = len(spec.states)
                timed(render_t, python_module.render, spec)
                timed(schema_t, record_schema.outputs, spec)
                total_t.append(render_t[-1] + schema_t[-1])
                timed(check_t, check_source, path, raw)
            row = {"n": n, "nested": nested, "states": states,
                   "check": statistics.median(check_t), "render": statistics.median(render_t),
                   "schema": statistics.median(schema_t), "codegen": statistics.median(total_t)}
            row["ratio"] = row["codegen"] / row["check"]
            rows.append(row)
            print(f"codegen {row}", flush=True)
    return rows


# ---------------------------------------------------------------------------------------
# 5. line counts


def line_counts(text: str) -> tuple[int, int]:
    lines = text.splitlines()
    return sum(1 for line in lines if line.strip()), len(lines)


def bench_lines(generated_dir: Path) -> list[tuple[str, int, int]]:
    rows = [(f"{generated_dir.name}/{p.name}", *line_counts(p.read_text()))
            for p in sorted(generated_dir.glob("*.py"))]
    rows.append(("generated flat spec, 10 states", *line_counts(module_source(10))))
    rows.append(("bench/handwritten_agent_run.py (for scale)",
                 *line_counts((HERE / "handwritten_agent_run.py").read_text())))
    return rows


# ---------------------------------------------------------------------------------------
# 6. restoring a run from its head and firing one event (RunStore.fire without the SQL)


class NoDatabase:
    """A connection that drops every statement: what `codec` writes the run's statements
    to, as the store's `_write` does inside `fire`'s transaction."""

    def execute(self, sql: str, args: Any = ()) -> None:
        return None


class StoredConfiguration:
    """The hand-written class's model: the active states, as python-statemachine keeps a
    machine's state on its model (the baseline's whole "record")."""

    def __init__(self, state: Any) -> None:
        self.state = state


# Generated, per call: (a) build = parse + restore, (b) send, (c) codec. `machine` is not in
# the total: python-statemachine's constructor alone, timed in rounds of its own (its garbage
# would otherwise be collected during the parts). Hand-written: build, send.
GENERATED_PARTS = ("parse", "restore", "build", "send", "codec", "total")
HAND_PARTS = ("build", "send", "total")


class HeadFire:
    """`RunStore.fire` of one event on a stored run, minus the SQL, and its baseline.

    The head row is read from a real SQLite store (in a temporary folder) holding the run:
    its record as `to_dict(history=False)` JSON. Per call, the generated side does what
    `fire` does between its SELECT and its COMMIT, in the same lines as RunStore.fire and
    store.core.restore.head_run: fire's preamble (event name, call id), restore.head_data
    (the JSON parse) and `from_dict(check=False)` (`parse`); `Run.restore(check=False)` and
    the store's mark (`restore`); `run.send` (`send`); the run's statements
    (store.core.writes) given to a connection that drops them, and `saved` (`codec`: the
    head's to_dict(history=False) and json.dumps, the new step's row). The result is
    checked once against a real `store.fire`. The hand-written side: HandwrittenAgentRun
    constructed on a model holding the same configuration (`build`), sent the same event
    (`send`)."""

    def __init__(self, gen: Generated, path: list[Step], event: str, folder: Path) -> None:
        self.gen, self.event = gen, event
        self.facade: Any = typing.cast(Any, gen.facade)  # a Run subclass
        self.spec = spec_of(self.facade)
        self.record_class = record_class_of(self.facade)
        run = drive(gen.new_run(0), gen.prepare(path))
        self.run_id = run.record.runId
        self.active: tuple[str, ...] = active_states(run)
        self.steps = len(run.record.history)
        self.parts: dict[str, list[float]] = {p: [] for p in GENERATED_PARTS}
        self.hand_parts: dict[str, list[float]] = {p: [] for p in HAND_PARTS}
        store = open_store(folder / "runs.db")
        try:
            store.create(run)
            # The stored row, read as `fire` reads it (its SQL, on the same file).
            with contextlib.closing(sqlite3.connect(folder / "runs.db")) as db:
                self.row = tuple(db.execute(
                    "SELECT spec, spec_version, revision, steps, record FROM runs "
                    "WHERE run_id = ?", [self.run_id]).fetchone())
            head = json.dumps(run.record.to_dict(history=False), ensure_ascii=False,
                              allow_nan=False)
            assert self.row[4] == head, (self.row[4], head)
            mine, mark = self.restore(self.parse())
            self.send(mine)
            self.codec(mine, mark)
            fired = store.fire(gen.facade, self.run_id, event)
            with contextlib.closing(sqlite3.connect(folder / "runs.db")) as db:
                after = json.loads(db.execute("SELECT record FROM runs WHERE run_id = ?",
                                              [self.run_id]).fetchone()[0])
        finally:
            store.close()
        ours = mine.record.to_dict(history=False)
        for data in (ours, after):
            data.pop("lastTransitionAt")
        assert ours == after, (ours, after)
        mine_states = active_states(mine)
        assert mine_states == active_states(fired.run), (mine_states, fired.run)
        sm = self.hand_build()
        self.hand_send(sm)
        assert set(sm.configuration_values) == set(mine_states), (sm.configuration_values,
                                                                  mine_states)

    def _state_value(self) -> Any:
        """The configuration as python-statemachine's state field holds it (Run.__init__)."""
        return OrderedSet(self.active) if len(self.active) > 1 else self.active[0]

    # -- the generated run: RunStore.fire's steps ----------------------------------------

    def parse(self) -> Any:
        event, spec, facade, run_id, row = (self.event, self.spec, self.facade, self.run_id,
                                            self.row)
        # RunStore.fire, before its transaction
        name = event.value if isinstance(event, spec.event_enum) else event
        self.name, self.call = name, uuid.uuid4().hex
        # store_restore.head_run
        data = store_restore.head_data(facade, run_id, row)
        data["history"] = []
        record = self.record_class.from_dict(data, check=False)
        if record.runId != run_id:
            raise AssertionError(f"{record.runId!r} != {run_id!r}")
        return record

    def restore(self, record: Any) -> tuple[Any, Any]:
        row = self.row
        run = self.facade.restore(record, check=False)
        setattr(run, MARK_ATTR, Mark(row[2], row[3], 0, active_states(run)))
        return run, mark_of(run)

    def send(self, run: Any) -> None:
        run.send(self.name)

    def codec(self, run: Any, mark: Any) -> None:
        writes = store_writes.writes(SQL, run, mark, _utc_text(utcnow()))
        db = NoDatabase()
        db.execute(SQL.update_head, writes.head)
        for sql, rows in writes.statements:
            for args in rows:
                db.execute(sql, args)
        saved(run, mark, mark.revision + 1)

    def machine_alone(self, model: Any) -> Any:
        """python-statemachine's part of `restore`: the machine as Run.__init__ makes it."""
        return self.gen.machine(model=model, state_field="_sc_state", listeners=None)

    def bare_model(self) -> Any:
        model = self.facade.__new__(self.facade)
        model._sc_state = self._state_value()
        return model

    # -- the hand-written class ------------------------------------------------------------

    def hand_build(self) -> Any:
        return HandwrittenAgentRun(model=StoredConfiguration(self._state_value()))

    def hand_send(self, sm: Any) -> None:
        sm.send(self.event)

    # -- timed rounds ----------------------------------------------------------------------

    def time_generated(self, calls: int) -> float:
        """Seconds per call (the total); every part's mean is appended to `parts`."""
        parse, restore, send, codec = self.parse, self.restore, self.send, self.codec
        clock = time.perf_counter
        sums = [0.0] * len(GENERATED_PARTS)
        for _ in range(calls):
            t0 = clock()
            record = parse()
            t1 = clock()
            run, mark = restore(record)
            t2 = clock()
            send(run)
            t3 = clock()
            codec(run, mark)
            t4 = clock()
            for i, seconds in enumerate((t1 - t0, t2 - t1, t2 - t0, t3 - t2, t4 - t3,
                                         t4 - t0)):
                sums[i] += seconds
        for part, total in zip(GENERATED_PARTS, sums, strict=True):
            self.parts[part].append(total / calls)
        return sums[GENERATED_PARTS.index("total")] / calls

    def time_machine(self, calls: int) -> float:
        """Seconds per python-statemachine constructor alone, as `restore` calls it."""
        machine_alone, bare_model = self.machine_alone, self.bare_model
        clock = time.perf_counter
        seconds = 0.0
        for _ in range(calls):
            model = bare_model()
            t0 = clock()
            machine_alone(model)
            seconds += clock() - t0
        return seconds / calls

    def time_hand(self, calls: int) -> float:
        build, send = self.hand_build, self.hand_send
        clock = time.perf_counter
        built = sent = 0.0
        for _ in range(calls):
            t0 = clock()
            sm = build()
            t1 = clock()
            send(sm)
            t2 = clock()
            built += t1 - t0
            sent += t2 - t1
        for part, seconds in zip(HAND_PARTS, (built, sent, built + sent), strict=True):
            self.hand_parts[part].append(seconds / calls)
        return (built + sent) / calls

    # -- function calls ----------------------------------------------------------------------

    def calls_per_part(self, repeats: int) -> dict[str, dict[str, dict[str, float]]]:
        """Function calls per call of each part (the first repeat outside the count)."""
        gen = {p: [0, 0] for p in (*GENERATED_PARTS, "machine")}
        hand = {p: [0, 0] for p in HAND_PARTS}

        def add(into: list[int], counted: tuple[Any, int, int]) -> Any:
            into[0] += counted[1]
            into[1] += counted[2]
            return counted[0]

        for i in range(repeats + 1):
            g = {p: [0, 0] for p in gen} if i == 0 else gen
            h = {p: [0, 0] for p in HAND_PARTS} if i == 0 else hand
            record = add(g["parse"], profiled(self.parse))
            run, mark = add(g["restore"], profiled(self.restore, record))
            add(g["send"], profiled(run.send, self.name))
            add(g["codec"], profiled(self.codec, run, mark))
            add(g["machine"], profiled(self.machine_alone, self.bare_model()))
            sm = add(h["build"], profiled(self.hand_build))
            add(h["send"], profiled(sm.send, self.event))
        for k in (0, 1):
            gen["build"][k] = gen["parse"][k] + gen["restore"][k]
            gen["total"][k] = gen["build"][k] + gen["send"][k] + gen["codec"][k]
            hand["total"][k] = hand["build"][k] + hand["send"][k]
        return {"generated": per_call(gen, repeats), "hand": per_call(hand, repeats)}


def per_call(counts: dict[str, list[int]], n: int) -> dict[str, dict[str, float]]:
    return {p: {"python": c[0] / n, "c": c[1] / n} for p, c in counts.items()}


def profiled(fn: Callable[..., Any], *args: Any) -> tuple[Any, int, int]:
    """fn(*args)'s result, and the Python and C function calls made while it ran, `fn`
    itself included (sys.setprofile: each call made, and each generator resumed, counts
    once)."""
    counts = [0, 0]

    def count(frame: Any, what: str, arg: Any) -> None:
        if what == "call":
            counts[0] += 1
        elif what == "c_call":
            counts[1] += 1

    sys.setprofile(count)
    try:
        result = fn(*args)
    finally:
        sys.setprofile(None)
    return result, counts[0], counts[1] - 1  # the call that turns the profile off


def bench_restore_fire(gen: Generated, path: list[Step], tool_calls: int, rounds: int,
                       calls: int) -> dict[str, Any]:
    # triage, start and `tool_calls` tool calls: in `running.reasoning`, call_tool is next
    to_reasoning = path[:2] + [("call_tool", {}), ("tool_result", {})] * tool_calls
    tmp = Path(tempfile.mkdtemp(prefix="bench_restore_"))
    try:
        hf = HeadFire(gen, to_reasoning, "call_tool", tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for _ in range(3):  # warm-up: first-call caches on both sides
        hf.time_generated(calls)
        hf.time_hand(calls)
    for parts in (*hf.parts.values(), *hf.hand_parts.values()):
        parts.clear()
    gc.collect()
    gen_total, hand_total = paired_rounds(lambda: hf.time_generated(calls),
                                          lambda: hf.time_hand(calls), rounds)
    hand_parts = {p: list(v) for p, v in hf.hand_parts.items()}  # of these rounds only
    gc.collect()
    machine, machine_hand = paired_rounds(lambda: hf.time_machine(calls),
                                          lambda: hf.time_hand(calls), rounds)
    ratios = sorted(g / h for g, h in zip(gen_total, hand_total, strict=True))
    quartiles = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else ratios * 3
    out: dict[str, Any] = {
        "rounds": rounds, "calls": calls, "event": hf.event, "steps": hf.steps,
        "tool_calls": tool_calls,
        "head_bytes": len(hf.row[4].encode()), "active": hf.active,
        "generated": {**{p: statistics.median(v) for p, v in hf.parts.items()},
                      "machine": statistics.median(machine)},
        "hand": {p: statistics.median(v) for p, v in hand_parts.items()},
        # generated time / hand-written time: how many times the baseline's cost
        "ratio": statistics.median(ratios), "q1": quartiles[0], "q3": quartiles[2],
        # each part of either side against the hand-written total of the same round
        "of_hand": {
            **{f"generated {p}": statistics.median(
                g / h for g, h in zip(v, hand_total, strict=True))
               for p, v in hf.parts.items()},
            # against the hand-written totals of its own rounds
            "generated machine": statistics.median(
                g / h for g, h in zip(machine, machine_hand, strict=True)),
            **{f"hand {p}": statistics.median(
                g / h for g, h in zip(v, hand_total, strict=True))
               for p, v in hand_parts.items()}},
    }
    print(f"restore+fire: {out}", flush=True)

    # Function calls per in-memory event (a live run, call_tool / tool_result), and per
    # part of one restore + fire.
    loop = gen.prepare([("call_tool", {}), ("tool_result", {})] * 50)
    loop_events = [e for e, _ in loop]
    live = drive(gen.new_run(0), gen.prepare(path[:2]))
    sm = send_all(HandwrittenAgentRun(), [e for e, _ in path[:2]])
    drive(live, loop)  # first-use caches: not per event
    send_all(sm, loop_events)
    _, gen_py, gen_c = profiled(drive, live, loop)
    _, hand_py, hand_c = profiled(send_all, sm, loop_events)
    out["event_calls"] = {"generated": {"python": gen_py / len(loop), "c": gen_c / len(loop)},
                          "hand": {"python": hand_py / len(loop), "c": hand_c / len(loop)}}
    out["part_calls"] = hf.calls_per_part(10)
    print(f"function calls per event: {out['event_calls']}; per restore+fire: "
          f"{out['part_calls']}", flush=True)
    return out


# ---------------------------------------------------------------------------------------
# Report


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.1f} ms" if seconds < 10 else f"{seconds:,.1f} s"


def verdict(ok: bool) -> str:
    return "met" if ok else "**not met**"


def markdown(res: dict[str, Any], args: argparse.Namespace) -> str:
    import statemachine

    ev, mem, imp, cg, lines, rf = (res.get(k) for k in ("events", "memory", "imports",
                                                        "codegen", "lines", "restore"))
    gen = res["generated"]
    only = "" if args.sections == ALL_SECTIONS else " --sections " + " ".join(
        str(n) for n in args.sections)
    out = [
        "## Runtime: generated code against hand-written python-statemachine",
        "",
        f"Measured by `python bench/bench_runtime.py{' --quick' if args.quick else ''}{only}` "
        f"on {time.strftime('%Y-%m-%d')}: {platform.python_implementation()} "
        f"{platform.python_version()}, python-statemachine {statemachine.__version__}, "
        f"{os.cpu_count()} CPUs (shared, noisy). Generated module: `{args.module}` "
        f"(`{gen.base}`, `{gen.base}Machine`, `{gen.base}Record`); baseline: "
        "`bench/handwritten_agent_run.py`, the same states and transitions as a plain "
        "`StateMachine` subclass, no record.",
        "",
    ]
    targets = []
    events_rows = [(name, ev[name]) for name in ("created", "steady")] if ev else []
    for name, r in events_rows:
        targets.append(f"| events/s, {name}: generated ≥ 0.9× hand-written | "
                       f"{r['ratio']:.2f}× | {verdict(r['ratio'] >= 0.9)} |")
    for name, r in (mem or {}).items():
        targets.append(f"| memory per live run, {name}: ≤ 2× hand-written | {r['ratio']:.2f}× "
                       f"| {verdict(r['ratio'] <= 2)} |")
    biggest = max(r["n"] for r in cg) if cg else None
    for r in cg or ():
        if r["n"] == biggest:
            targets.append(f"| codegen within 3× of check at {r['n']:,} states "
                           f"({'nested' if r['nested'] else 'flat'}) | {r['ratio']:.1f}× "
                           f"| {verdict(r['ratio'] <= 3)} |")
    if targets:
        out += ["### Targets", "", "| target | measured | |", "| --- | --- | --- |", *targets]
    if ev:
        out += events_markdown(ev, args)
    if mem:
        out += memory_markdown(mem, args)
    if imp:
        out += imports_markdown(imp, args)
    if cg:
        out += codegen_markdown(cg, args)
    if lines:
        out += lines_markdown(lines)
    if rf:
        out += restore_markdown(rf)
    out.append("")
    return "\n".join(out)


def usec(seconds: float) -> str:
    """A time per call in ms, to the microsecond."""
    return f"{seconds * 1000:,.3f} ms"


def restore_markdown(rf: dict[str, Any]) -> list[str]:
    g, h, of = rf["generated"], rf["hand"], rf["of_hand"]
    active = ", ".join(rf["active"])
    out = [
        "",
        "### 6. Restoring a run from its head and firing one event (`RunStore.fire`, no SQL)",
        "",
        f"Per call, what `store.fire` computes between its SELECT and its COMMIT, on the "
        f"agent run stored after {rf['steps']} steps (triage, start, {rf['tool_calls']} tool "
        f"calls; active: {active}), firing `{rf['event']}`: its head as the store keeps it "
        f"(`to_dict(history=False)` JSON, {rf['head_bytes']} bytes, read from a SQLite store) "
        "parsed and restored, the event sent, the new head and step encoded (the run "
        "store's own `_head_data` and `_write` with the statements dropped; checked once "
        "against a real `store.fire`). Baseline: the hand-written class constructed on a "
        "model that holds the same configuration (how python-statemachine keeps a "
        "machine's state on a model), sent the same event: no record, no JSON. Medians of "
        f"{rf['rounds']} interleaved rounds (ABBA) of {rf['calls']} calls each; each part's "
        "median is its own, so the parts need not add up to the total exactly. "
        "**× hand-written total**: the part's time over the baseline's whole call, per "
        "round, median (the total's interquartile range in brackets). python-statemachine's "
        "constructor alone (the generated machine class, the facade as its model, as "
        "`Run.__init__` makes it) is timed in another "
        f"{rf['rounds']} rounds against the baseline, and is not in the total.",
        "",
        "| per call | generated | % of generated total | hand-written | "
        "× hand-written total |",
        "| --- | ---: | ---: | ---: | ---: |",
        f"| **total** | {usec(g['total'])} | 100% | {usec(h['total'])} | "
        f"**{rf['ratio']:.2f}×** ({rf['q1']:.2f}–{rf['q3']:.2f}) |",
    ]
    rows = [
        ("(a) build the run: record parse + restore", "build", "build"),
        ("&nbsp;&nbsp;record parse: json.loads + `from_dict(check=False)`", "parse", None),
        ("&nbsp;&nbsp;`Run.restore(check=False)` (with the machine's constructor)", "restore",
         None),
        ("&nbsp;&nbsp;&nbsp;&nbsp;of which python-statemachine's constructor (timed apart)",
         "machine", None),
        (f"(b) `send('{rf['event']}')`", "send", "send"),
        ("(c) codec out: head `to_dict(history=False)` + json.dumps, the step's row",
         "codec", None),
    ]
    for label, part, hand_part in rows:
        hand = "" if hand_part is None else (
            f"{usec(h[hand_part])} ({of['hand ' + hand_part]:.2f}×)")
        out.append(f"| {label} | {usec(g[part])} | {100 * g[part] / g['total']:.0f}% | "
                   f"{hand or '–'} | {of['generated ' + part]:.2f}× |")
    ec, pc = rf["event_calls"], rf["part_calls"]
    gc_, hc = pc["generated"], pc["hand"]
    out += [
        "",
        "Function calls (sys.setprofile; a Python call is a frame entered, a generator "
        "resumed counts too; C calls are built-ins and methods of C types). **In-memory "
        "event**: per event of 100 call_tool / tool_result on a live run (the generated "
        "facade's event methods against `sm.send`); then per restore + fire and its parts, "
        "over 10 calls.",
        "",
        "| per | generated: Python calls | C calls | hand-written: Python calls | C calls | "
        "Python calls, generated / hand-written |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
        f"| in-memory event | {ec['generated']['python']:,.0f} | {ec['generated']['c']:,.0f} | "
        f"{ec['hand']['python']:,.0f} | {ec['hand']['c']:,.0f} | "
        f"**{ec['generated']['python'] / ec['hand']['python']:.2f}×** |",
    ]
    rows_c = [("restore + fire, total", "total", "total"),
              ("(a) build the run", "build", "build"),
              ("&nbsp;&nbsp;record parse", "parse", None),
              ("&nbsp;&nbsp;`Run.restore`", "restore", None),
              ("&nbsp;&nbsp;&nbsp;&nbsp;of which python-statemachine's constructor", "machine",
               None),
              ("(b) send", "send", "send"),
              ("(c) codec out", "codec", None)]
    for label, part, hand_part in rows_c:
        if hand_part is None:
            hand, ratio = "– | –", "–"
        else:
            hand = f"{hc[hand_part]['python']:,.0f} | {hc[hand_part]['c']:,.0f}"
            ratio = f"{gc_[part]['python'] / hc[hand_part]['python']:.2f}×"
        out.append(f"| {label} | {gc_[part]['python']:,.0f} | {gc_[part]['c']:,.0f} | "
                   f"{hand} | {ratio} |")
    return out


def events_markdown(ev: dict[str, Any], args: argparse.Namespace) -> list[str]:
    out = [
        "",
        "### 1. Events per second (agent run)",
        "",
        f"Medians of {ev['created']['rounds']} interleaved rounds (ABBA order). **created**: "
        f"{args.runs_per_round} runs per round, each created and driven along a "
        f"{ev['created']['events']}-event path (triage, start, {args.tool_calls} tool calls, "
        "interrupt, await_approval, approve, proceed, a tool call, error → retrying, retry, "
        "a tool call, complete), creation included; the generated facade through its event "
        "methods with the record fields the events set, the hand-written class through "
        f"`sm.send(event)`. **steady**: {ev['steady']['events']:,} call_tool/tool_result "
        "events on one run in `running` (a fresh run each round, created outside the "
        "timing). Ratio: the median of the per-round ratios (generated / hand-written "
        "events/s), with the interquartile range.",
        "",
        "| scenario | generated (facade, record kept) | hand-written | ratio | IQR |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for name in ("created", "steady"):
        r = ev[name]
        out.append(f"| {name} | {r['generated']:,.0f} | {r['hand']:,.0f} | "
                   f"**{r['ratio']:.2f}×** | {r['q1']:.2f}–{r['q3']:.2f} |")
    return out


def memory_markdown(mem: dict[str, Any], args: argparse.Namespace) -> list[str]:
    out = [
        "",
        "### 2. Memory per live run",
        "",
        f"tracemalloc: bytes still allocated after creating {args.live:,} instances and "
        f"keeping them alive (gc collected), divided by {args.live:,}; median of "
        f"{args.runs} measurements. After events: {', '.join(e for e, _ in FEW_EVENTS)} "
        "(the generated record then holds that many history entries).",
        "",
        "| when | generated (facade + machine + record) | hand-written | ratio |",
        "| --- | ---: | ---: | ---: |",
    ]
    for name, r in mem.items():
        out.append(f"| {name} | {r['generated'] / 1024:,.1f} KiB | {r['hand'] / 1024:,.1f} KiB "
                   f"| **{r['ratio']:.2f}×** |")
    return out


def imports_markdown(imp: list[dict[str, Any]], args: argparse.Namespace) -> list[str]:
    out = [
        "",
        "### 3. Import time of a generated module",
        "",
        f"A fresh process per import, python-statemachine imported before the clock starts; "
        f"median of {args.runs}. Cold: no `.pyc` (compiles and writes it); warm: from the "
        "`.pyc` (PYTHONDONTWRITEBYTECODE is dropped from the child's environment). Flat "
        "specs from bench/genspec.py.",
        "",
        "| module | lines | cold | warm |",
        "| --- | ---: | ---: | ---: |",
    ]
    for r in imp:
        out.append(f"| {r['label']} | {r['lines']:,} | {ms(r['cold'])} | {ms(r['warm'])} |")
    return out


def codegen_markdown(cg: list[dict[str, Any]], args: argparse.Namespace) -> list[str]:
    out = [
        "",
        "### 4. Code generation against check",
        "",
        f"Median of {args.runs} interleaved runs on the same spec text: `check_source` "
        "(decode, model, every rule; timed before and after each generation) against "
        "generation from its result: `python_module.render(spec)` + "
        "`record_schema.outputs(spec)`.",
        "",
        "| spec | states | check | codegen | of which render | of which schema | "
        "codegen / check |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in cg:
        out.append(f"| {'nested' if r['nested'] else 'flat'} {r['n']:,} | {r['states']:,} | "
                   f"{ms(r['check'])} | {ms(r['codegen'])} | {ms(r['render'])} | "
                   f"{ms(r['schema'])} | **{r['ratio']:.1f}×** |")
    if len(cg) >= 4:
        by = {(r["n"], r["nested"]): r for r in cg}
        small, big = min(r["n"] for r in cg), max(r["n"] for r in cg)
        growth = [f"{'nested' if nested else 'flat'}: codegen "
                  f"{by[big, nested]['codegen'] / by[small, nested]['codegen']:.1f}×, check "
                  f"{by[big, nested]['check'] / by[small, nested]['check']:.1f}×"
                  for nested in (False, True)]
        out += ["", f"From {small:,} to {big:,} states ({big / small:g}× the states): "
                + "; ".join(growth) + "."]
    return out


def lines_markdown(lines: list[tuple[str, int, int]]) -> list[str]:
    out = [
        "",
        "### 5. Line counts",
        "",
        "| module | non-blank lines | lines |",
        "| --- | ---: | ---: |",
    ]
    for label, nonblank, total in lines:
        out.append(f"| {label} | {nonblank:,} | {total:,} |")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="a fast smoke run: small sizes, few rounds")
    parser.add_argument("--markdown", type=Path, help="write the results section to this file")
    parser.add_argument("--module", type=Path, default=None,
                        help="the generated module of the agent run")
    parser.add_argument("--sizes", type=int, nargs="+", help="import: states (10 1000 5000)")
    parser.add_argument("--codegen-sizes", type=int, nargs="+",
                        help="code generation: states (1000 5000)")
    parser.add_argument("--runs", type=int, help="imports, codegen and memory: repeats (3)")
    parser.add_argument("--rounds", type=int, help="events: interleaved rounds (41)")
    parser.add_argument("--runs-per-round", type=int, help="events, created: runs (20)")
    parser.add_argument("--steady-events", type=int, help="events, steady: per round (400)")
    parser.add_argument("--tool-calls", type=int, default=3, help="tool calls in the path")
    parser.add_argument("--live", type=int, help="memory: live instances (2000)")
    parser.add_argument("--restore-calls", type=int,
                        help="restore + fire: calls per round (50)")
    parser.add_argument("--sections", type=int, nargs="+", choices=ALL_SECTIONS,
                        default=ALL_SECTIONS, help="the sections to run (all: 1 2 3 4 5 6)")
    args = parser.parse_args(argv)
    defaults = ({"sizes": [10, 200], "codegen_sizes": [200], "runs": 1, "rounds": 5,
                 "runs_per_round": 5, "steady_events": 100, "live": 200, "restore_calls": 10}
                if args.quick else
                {"sizes": [10, 1000, 5000], "codegen_sizes": [1000, 5000], "runs": 3,
                 "rounds": 41, "runs_per_round": 20, "steady_events": 400, "live": 2000,
                 "restore_calls": 50})
    for key, value in defaults.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if args.module is None:  # bench/agent_run_v1.yaml, the graph the handwritten one matches
        args.module = agent_run_v1_module(Path(tempfile.mkdtemp()))
    args.module = args.module.resolve()
    try:
        args.module_label = args.module.relative_to(ROOT).as_posix()
    except ValueError:
        args.module_label = str(args.module)

    gen = Generated(args.module)
    path = agent_path(args.tool_calls)
    check_same_machine(gen, path)
    res: dict[str, Any] = {"generated": gen}
    sections = set(args.sections)
    if 1 in sections:
        res["events"] = bench_events(gen, path, args.rounds, args.runs_per_round,
                                     args.steady_events)
    if 2 in sections:
        res["memory"] = bench_memory(gen, args.live, args.runs)
    if 3 in sections:
        tmp = Path(tempfile.mkdtemp(prefix="bench_runtime_"))
        try:
            res["imports"] = bench_imports(args.sizes, args.module, args.runs, tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    if 4 in sections:
        res["codegen"] = bench_codegen_time(args.codegen_sizes, args.runs)
    if 5 in sections:
        res["lines"] = bench_lines(args.module.parent)
    if 6 in sections:
        res["restore"] = bench_restore_fire(gen, path, args.tool_calls, args.rounds,
                                            args.restore_calls)
    args.module = args.module_label
    text = markdown(res, args)
    print()
    print(text)
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(text, encoding="utf-8")
        print(f"wrote {args.markdown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
