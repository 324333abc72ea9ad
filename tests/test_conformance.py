"""Conformance: generated modules replay golden traces recorded with XState 5.

`tests/conformance/traces/` holds random specs (and three fixed repro specs), each with event
sequences and what XState did at every step: whether it accepted the event, the active states
after it, the entry/exit actions it ran in order, and whether the run ended; for the
completion and history family (`done-history-*`), also the `done.state` events the step took
after the event's own microstep (one macrostep per event). For the timers family
(`timers-*`), a sequence's actions are events or clock advances (ms): the run's clock is
advanced as the runner's logical clock was and `run.fire_due` called, and the fifth field also
lists the timers' events taken, as `after.KEY.STATE` with KEY the `after:` key as written (the
run's own events name a timer by its id, `after.delay1.STATE`: `_traced`). The lang family
(`lang-*`, format 3) adds targetless and internal transitions to the timers family's specs;
the in family `in:` conditions, the always family (`always-*`) eventless transitions, whose
steps the fifth field lists as `always`.
For every spec
this test generates the module and replays each sequence through the facade, with guards
answering as recorded and actions appending to a log; then replays it again through a
save/restore at a seeded step. Both ways a run steps are replayed: without a machine (the run
calls the guards and actions, which take only `self`), and through python-statemachine's
machine (a `model=` object is given), on a smaller sample. No node is needed here: `tests/conformance/make_traces.py`
records the traces (see tests/conformance/README.md).
"""

from __future__ import annotations

import datetime as dt
import functools
import random
from types import ModuleType
from typing import Any

import pytest
from codegen_support import (
    event_kwargs,
    generate,
    import_source,
    method_name,
    parts,
    traced_spec,
)
from conformance_traces import FAMILIES, family_of, trace_files
from statemachine.exceptions import TransitionNotAllowed

from statechart_runtime import events
from statechart_runtime.api import EventNotAccepted

# The timers family's clock starts here (the runner's LogicalClock at 0).
EPOCH = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)

# Where our runs intentionally differ from XState, and how the comparison treats it. These
# are the only ones: anything else the traces show is a divergence to fix.
INTENTIONAL_DIFFERENCES = {
    "refused event": (
        "An event the active states do not accept raises (EventNotAccepted) instead of "
        "being ignored: the trace's `can()` false must be an exception and an unchanged run "
        "(`_send`)."),
    "ended run": (
        "Events after the run ended raise instead of being ignored. Traces stop at the step "
        "that ends the run, so no such event is replayed."),
    "top-level parallel completion": (
        "A run also ends when a top-level parallel state's regions have all reached final "
        "states and it has no `done:` (XState ends a machine only in a top-level final "
        "state). The traces already say so: the runner turns XState's done event of that "
        "state into `done` and runs the exit actions XState runs when a machine ends."),
    "history domain": (
        "A history transition from deeper inside its target than a child has the target's "
        "domain in our runs; SCXML's (and XState's) depends on the remembered states and may "
        "enter active states again. make_traces.py generates no such transition."),
    "targetless transition and a parallel state": (
        "A targetless transition does not conflict with a transition on the same event that "
        "another region selects, one inside a parallel state and the other on it or above it: "
        "SCXML and our runs take both; XState looks at a parallel state's own transitions (and "
        "those above it) only when no region has one. make_traces.py generates no such pair "
        "(`shadowed_events`)."),
    "transition domain": (
        "When a transition's source and target have a parallel state as nearest common "
        "ancestor (one region to another, a region to its own descendant), SCXML and our "
        "runs exit and re-enter that parallel state; XState 5 does not (statelyai/xstate#4360)."
        " make_traces.py generates no such transition."),
}

# What a facade raises for a refused event: the runtime's EventNotAccepted, which code written
# against python-statemachine also catches as TransitionNotAllowed.
REFUSED = (EventNotAccepted,)
assert issubclass(EventNotAccepted, TransitionNotAllowed)

STEP_FIELDS = ("accepted", "configuration", "actions", "ended", "internal")


def _load() -> list[dict[str, Any]]:
    """Every family's specs; each gets `internal`: whether its steps list internal events."""
    specs: list[dict[str, Any]] = []
    files = trace_files()
    for prefix, trace_format in FAMILIES.items():
        for path, found, part in files:
            if family_of(path) != prefix:
                continue
            assert found == trace_format, path
            for spec in part:
                spec["internal"] = trace_format >= 2
                spec["timers"] = trace_format == 3
            specs.extend(part)
    return specs


SPECS = _load()


def test_traces_are_there() -> None:
    # An empty folder would make the parametrized test below silently pass.
    assert sum(not t["internal"] for t in SPECS) >= 200
    assert sum(t["internal"] for t in SPECS) >= 100
    assert {"fixed_par_conflict", "fixed_par_doc_order", "fixed_top_parallel_done"} \
        <= {t["name"] for t in SPECS}
    # The family exercises what it is for: completion cascades of more than one `done.state`
    # event in one macrostep, and history transitions of both kinds.
    family = [t for t in SPECS if t["internal"]]
    assert sum(len(step[4]) > 1 for t in family for seq in t["sequences"]
               for step in seq["steps"]) >= 50
    assert all(any(f"history: {kind}" in t["yaml"] for t in family)
               for kind in ("shallow", "deep"))
    # The timers family fires timers, sometimes several in one clock advance.
    timed = [step[4] for t in SPECS if t["timers"] for seq in t["sequences"]
             for step in seq["steps"]]
    assert len(timed) >= 5000
    assert sum(e.startswith("after.") for events in timed for e in events) >= 1000
    assert sum(sum(e.startswith("after.") for e in events) > 1 for events in timed) >= 20
    # The lang family has targetless transitions (on events, timers and `done:`) and internal
    # ones in most specs.
    lang = [t["yaml"] for t in SPECS if t["name"].startswith("lg_")]
    assert len(lang) >= 60
    assert sum("internal: true" in y for y in lang) >= 40
    assert sum(" - {guard:" in y or ": {}\n" in y for y in lang) >= 40
    assert sum("actions: [" in y for y in lang) >= 50  # transition actions
    # The in family has `in:` conditions (XState's stateIn) in most specs.
    conditioned = [t["yaml"] for t in SPECS if t["name"].startswith("in_")]
    assert len(conditioned) >= 25
    assert sum(", in: [" in y or "{in: [" in y for y in conditioned) >= 15
    # The always family takes eventless transitions: at a run's start, in macrosteps of
    # several, and before pending completion events.
    eventless = [t for t in SPECS if t["name"].startswith("al_")]
    assert len(eventless) >= 50
    assert sum("always:" in t["yaml"] for t in eventless) >= 40
    steps = [step[4] for t in eventless for seq in t["sequences"] for step in seq["steps"]]
    assert sum(e == "always" for taken in steps for e in taken) >= 1000
    assert sum(taken.count("always") > 1 for taken in steps) >= 100
    assert sum("always" in taken and any(e.startswith("done.state.") for e in taken)
               for taken in steps) >= 20
    assert sum("always" in t["initial"][4] for t in eventless) >= 5
    # The defaults family has history defaults (XState's history `target`) in most specs.
    defaulted = [t["yaml"] for t in SPECS if t["name"].startswith("hd_")]
    assert len(defaulted) >= 25
    assert sum("history_default: {" in y for y in defaulted) >= 15
    # The multi family has multi-target transitions (XState's target arrays) in most specs.
    forked = [t["yaml"] for t in SPECS if t["name"].startswith("mt_")]
    assert len(forked) >= 25
    assert sum("target: [" in y for y in forked) >= 15
    # The descriptors family has event families and keys that take several events.
    described = [t["yaml"] for t in SPECS if t["name"].startswith("ed_")]
    assert len(described) >= 25
    assert sum("f.a" in y for y in described) >= 5
    assert sum('"*"' in y for y in described) >= 3


class Clock:
    """The run's clock for the timers family: `EPOCH` plus the advances so far."""

    def __init__(self) -> None:
        self.ms = 0

    def __call__(self) -> dt.datetime:
        return EPOCH + dt.timedelta(milliseconds=self.ms)


@pytest.fixture(scope="session")
def module_of(tmp_path_factory: pytest.TempPathFactory) -> Any:
    folder = tmp_path_factory.mktemp("conformance")

    @functools.cache
    def build(name: str, yaml: str) -> ModuleType:
        spec = traced_spec(yaml, f"{name}.yaml")
        assert spec is not None, f"{name}: `statechart check` refuses the traced spec"
        return import_source(generate(spec)[f"generated/{name}.py"], folder, name)

    return build


class _Listener:
    """A `model=` object with nothing of its own: the run then steps through its
    python-statemachine machine, which calls the guards and actions."""


def _scripted(facade: type, guards: dict[str, bool], actions: list[str], *,
              machine: bool = False) -> type:
    """The facade with the trace's guard answers, and actions that append their name to
    `run.log` (set before the base __init__, which runs the initial entry actions). Its runs
    step without a machine, the run calling the guards and actions itself; with `machine`,
    through python-statemachine's machine (a `model=` is given), which calls them."""

    def constant(value: bool) -> Any:
        def guard(self: Any) -> bool:
            return value
        return guard

    def logger(name: str) -> Any:
        def action(self: Any) -> None:
            self.log.append(name)
        return action

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        self.log = []
        if machine:
            kwargs.setdefault("model", _Listener())
        facade.__init__(self, *args, **kwargs)

    body: dict[str, Any] = {"__init__": __init__}
    body.update({g: constant(v) for g, v in guards.items()})
    body.update({a: logger(a) for a in actions})
    return type("Scripted" + facade.__name__, (facade,), body)


def _send(module: ModuleType, run: Any, event: str) -> bool | str:
    """True if the run took the event, False if it refused it, else the unexpected error."""
    try:
        getattr(run, method_name(module, event))(**event_kwargs(module, run, event))
    except REFUSED:
        return False
    except Exception as exc:  # reported as a mismatch, so the other sequences still run
        return f"{type(exc).__name__}: {exc}"
    return True


def _observe(run: Any, accepted: bool | str, since: int | None = None) -> list[Any]:
    """The step as the trace records it. `since`: the history's length before the event, for
    a trace that lists internal events (the `done.state` steps the event's send added)."""
    # The configuration is compared as a list, not a set: `run.configuration` promises
    # document order, which is the order the trace records.
    out = [accepted if isinstance(accepted, str) else int(accepted),
           [s.value for s in run.configuration], list(run.log), int(run.is_terminated)]
    if since is not None:
        out.append([_traced(run, step.event.value) for step in run.record.history[since:]
                    if events.parse(step.event.value) is not None
                    or step.event.value == events.ALWAYS])
    return out


def _traced(run: Any, event: str) -> str:
    """An internal event as the traces name it: a timer by its `after:` key as written
    (`after.1500ms.a`), as XState's delays are converted (make_traces.after_event), not by
    its id (`after.delay1.a`)."""
    found = events.parse(event)
    if found is None or found.kind != "after":
        return event
    return events.timer_event(run._sc_spec.timers.written[event], found.state)


def _step(module: ModuleType, run: Any, event: str | int, internal: bool) -> list[Any]:
    """Send `event`, or advance the run's clock by `event` ms and fire the due timers, and
    observe the step (with its internal events when `internal`)."""
    since = len(run.record.history) if internal else None
    if isinstance(event, int):
        run.clock.ms += event
        try:
            run.fire_due(run.clock())
            accepted: bool | str = True
        except Exception as exc:  # reported as a mismatch, as in `_send`
            accepted = f"{type(exc).__name__}: {exc}"
        return _observe(run, accepted, since)
    return _observe(run, _send(module, run, event), since)


def _diff(expected: list[Any], got: list[Any]) -> tuple[str, bool]:
    """What differs, and whether the run and XState now disagree on where they are (the rest
    of the sequence would only repeat it). An action-order difference alone does not."""
    parts_ = [f"{field} expected {e!r} got {g!r}"
              for field, e, g in zip(STEP_FIELDS[:len(expected)], expected, got, strict=True)
              if e != g]
    apart = expected[0] != got[0] or expected[1] != got[1] or expected[3] != got[3] \
        or expected[4:] != got[4:]
    return "; ".join(parts_), apart


def _replay(module: ModuleType, scripted: type, trace: dict[str, Any], index: int,
            rng: random.Random) -> list[str]:
    """Mismatches of one sequence: straight through, then through a save/restore."""
    where = f"{trace['name']} seq {index}"
    sequence = trace["sequences"][index]
    events, steps = sequence["events"], sequence["steps"]
    internal = trace["internal"]
    out: list[str] = []
    clock = {"clock": Clock()} if trace["timers"] else {}
    run = scripted(run_id="conformance", **clock)
    diff, apart = _diff(trace["initial"], _observe(run, True, 0 if internal else None))
    if diff:
        out.append(f"{where} initial: {diff}")
        if apart:
            return out
    save_at = rng.randrange(len(steps)) if steps else -1
    saved = None
    # A sequence's steps stop where the run ended; the events after it are not replayed.
    for j, (event, expected) in enumerate(zip(events[:len(steps)], steps, strict=True)):
        run.log.clear()
        diff, apart = _diff(expected, _step(module, run, event, internal))
        if diff:
            out.append(f"{where} step {j} `{event}`: {diff}")
            if apart:
                return out  # the restore pass would start from a state XState never had
        if j == save_at:
            saved = run.record.to_json()
            saved_ms = clock["clock"].ms if clock else 0
    if saved is None:
        return out
    record_class = parts(module)[1]
    # The restored run goes on with the same clock: its timers come back with the record
    # (XState cannot restore a snapshot's delayed events; this part is ours only).
    if clock:
        clock["clock"].ms = saved_ms  # back to the time of the save
    run = scripted.restore(record_class.from_json(saved), **clock)
    expected = steps[save_at]
    # Restoring runs no action and takes no step; `remembered` must come back with the
    # record, or a later history transition goes elsewhere than XState's.
    got = [expected[0], [s.value for s in run.configuration], list(run.log),
           int(run.is_terminated), *([[]] if internal else [])]
    diff, apart = _diff([expected[0], expected[1], [], expected[3], *([[]] if internal else [])],
                        got)
    if diff:
        out.append(f"{where} restored after step {save_at}: {diff}")
        if apart:
            return out
    for j in range(save_at + 1, len(steps)):
        run.log.clear()
        diff, apart = _diff(steps[j], _step(module, run, events[j], internal))
        if diff:
            out.append(f"{where} step {j} `{events[j]}` (restored after step {save_at}): "
                       f"{diff}")
            if apart:
                break
    return out


# Every fourth spec of the traces runs in the default run (a sample of every family, for the
# README's test command's time budget); the others are `slow` (`pytest -m slow`, a CI step).
SAMPLED = [trace if index % 4 == 0 else pytest.param(trace, marks=pytest.mark.slow)
           for index, trace in enumerate(SPECS)]


# Through the machine (python-statemachine calling the guards and actions): every eighth spec,
# others than the sample above, in the default run; the rest `slow`.
SAMPLED_MACHINE = [trace if index % 8 == 2 else pytest.param(trace, marks=pytest.mark.slow)
                   for index, trace in enumerate(SPECS)]


@pytest.mark.parametrize("trace", SAMPLED, ids=[t["name"] for t in SPECS])
def test_generated_module_replays_the_xstate_trace(trace: dict[str, Any], module_of: Any) -> None:
    _replays(trace, module_of, machine=False)


@pytest.mark.parametrize("trace", SAMPLED_MACHINE, ids=[t["name"] for t in SPECS])
def test_the_machine_replays_the_xstate_trace(trace: dict[str, Any], module_of: Any) -> None:
    _replays(trace, module_of, machine=True)


def _replays(trace: dict[str, Any], module_of: Any, *, machine: bool) -> None:
    module = module_of(trace["name"], trace["yaml"])
    scripted = _scripted(parts(module)[0], trace["guards"], trace["actions"], machine=machine)
    run = scripted(run_id="probe", **({"clock": Clock()} if trace["timers"] else {}))
    assert (run._machine is not None) is machine  # the path this test is about
    rng = random.Random(trace["name"])  # a str seed is hashed with SHA-512: stable across runs
    problems: list[str] = []
    for index in range(len(trace["sequences"])):
        problems += _replay(module, scripted, trace, index, rng)
    if problems:  # every mismatch of the spec, not only the first; no repr of the list
        pytest.fail(f"{trace['name']}: {len(problems)} mismatches with XState\n"
                    + "\n".join(problems) + "\n--- spec:\n" + trace["yaml"], pytrace=False)
