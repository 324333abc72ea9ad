"""Every part of python-statemachine the runtime relies on beyond its documented use, as data.

The runtime overrides, calls and reads python-statemachine internals (engine methods, private
attributes, the shape of its objects); a 3.x release may move any of them, and every
generated module would break. `INTERNALS` is the one list of them: keep it in step with the
runtime (a new use of the library's internals gets an entry here). `SUPPORTED` is the range
of releases the tests passed on; both `pyproject.toml` files require exactly it, and
`tests/test_library_internals.py` checks that, that the installed release is in it, and that
`missing()` is empty. CI runs the conformance traces and the runtime's tests on the oldest
release of the range as well as the newest (`.ci/run`).

Not listed: the library's documented API as generated modules use it (`State(...)`,
`.to(..., event=, cond=)`, `send`, `model=`, `listeners=`, `State.value`, `State.is_atomic`,
`Transition.source`/`target`).

This module imports only the standard library and python-statemachine, and does nothing at
import: `missing()` builds a tiny machine when it is called.
"""

from __future__ import annotations

import functools
import importlib
import inspect
from dataclasses import dataclass
from typing import Any, Literal

SUPPORTED = ">=3.2.2,<3.3"
"""The python-statemachine releases the runtime was tested on (the requirement's specifier)."""

Use = Literal["subclassed", "overridden", "called", "read", "set"]


@dataclass(frozen=True)
class Internal:
    """One thing of python-statemachine's the runtime relies on."""

    path: str
    """Dotted path: a module, then attributes (`statemachine.engines.sync.SyncEngine.microstep`).
    An attribute the library sets on its instances is looked up on a small instance."""
    use: Use
    """overridden: the runtime's subclass replaces it (a rename leaves the override unused);
    subclassed, called, read; set: the runtime assigns or mutates it."""
    where: str
    """Where in the runtime (`package.module:function`, from the runtime's root, as
    `psm.machine:Machine`; `generated` for the generated modules)."""
    why: str
    params: tuple[str, ...] = ()
    """Parameter names of a method the runtime overrides or calls, which it must still take."""


_SYNC = "statemachine.engines.sync.SyncEngine"
_SM = "statemachine.StateMachine"

INTERNALS: tuple[Internal, ...] = (
    # The machine and its engine (machine.py).
    Internal(_SM, "subclassed", "psm.machine:Machine",
             "the base class of every generated machine"),
    Internal(f"{_SM}.__init__", "called", "run.run:Run.__init__",
             "restores a run through the model's `state_field`: one value or an OrderedSet "
             "of values", params=("model", "state_field", "listeners")),
    Internal(f"{_SM}._get_engine", "overridden", "psm.machine:Machine._get_engine",
             "gives every machine the runtime's engine (_Engine)"),
    Internal(f"{_SM}.__setattr__", "overridden", "psm.machine:Machine.__setattr__",
             "skips the library's check of attributes named like a state's value"),
    Internal("statemachine.engines.base.BaseEngine._execute_transition_content", "overridden",
             "psm.machine:_Engine._execute_transition_content",
             "runs a transition's content (`actions:`) once per microstep: the library runs a "
             "history transition's again when it enters the history's default",
             params=("enabled_transitions", "trigger_data", "get_key")),
    Internal(f"{_SM}.enable_self_transition_entries", "set", "psm.machine:Machine",
             "an internal transition enters its target (SCXML); StateMachine's default skips it"),
    Internal(f"{_SM}.validate_disconnected_states", "set", "psm.machine:Machine",
             "turns a class check off: `statechart check` proved it"),
    Internal(f"{_SM}.validate_trap_states", "set", "psm.machine:Machine",
             "turns a class check off: `statechart check` proved it"),
    Internal(f"{_SM}.validate_final_reachability", "set", "psm.machine:Machine",
             "turns a quadratic class check off: `statechart check` proved it"),
    Internal(_SYNC, "subclassed", "psm.machine:_Engine",
             "the engine whose selection, ending and microstep the runtime changes"),
    Internal(f"{_SYNC}._select_transitions", "overridden",
             "psm.machine:_Engine._select_transitions",
             "hands selection to the run (`Run._sc_select`: kernel.select over Chart.select); "
             "a machine without a run selects in document order",
             params=("trigger_data", "predicate")),
    Internal(f"{_SYNC}._first_transition_that_matches", "called",
             "psm.machine:_Engine._select_transitions",
             "a state's first enabled transition, looking up through its ancestors",
             params=("state", "trigger_data", "predicate")),
    Internal(f"{_SYNC}._conditions_match", "called", "run.run:Run._sc_select",
             "evaluates a transition's guards (the library's) for the runtime's selection",
             params=("transition", "trigger_data")),
    Internal("statemachine.State.transitions", "read", "psm.machine:declared_alternatives",
             "a state's transitions, in declaration order: the order of the spec's "
             "alternatives, which its tables' rows do not carry"),
    Internal("statemachine.transition.Transition.initial", "read",
             "psm.machine:declared_alternatives",
             "skips a compound state's initial transition"),
    Internal("statemachine.transition.Transition.cond", "read",
             "psm.machine:declared_alternatives",
             "a transition's guards: whether selection asks it, and their names"),
    Internal("statemachine.transition.Transition.validators", "read",
             "psm.machine:declared_alternatives", "validators count as guards"),
    Internal("statemachine.transition.Transition.internal", "read",
             "psm.machine:declared_alternatives",
             "an internal transition's kind (a targetless one has no `target`)"),
    Internal("statemachine.transition.Transition.targets", "read",
             "psm.machine:declared_alternatives",
             "a multi-target transition's targets (`target: [a2, b2]`), its target as the "
             "tables key it"),
    Internal("statemachine.callbacks.CallbackSpec.attr_name", "read",
             "psm.machine:declared_alternatives, direct_calls",
             "a guard's method name (EventNotAccepted.guards; the direct path calls it)"),
    Internal(f"{_SM}.send", "overridden", "psm.machine:Machine.send",
             "`run.machine.send(...)` is the run's own send (the run calls the library's)",
             params=("event",)),
    Internal(f"{_SYNC}._filter_conflicting_transitions", "called",
             "psm.machine:_Engine._select_transitions",
             "drops selected transitions that exit a common state",
             params=("transitions",)),
    Internal(f"{_SYNC}.select_eventless_transitions", "overridden",
             "psm.machine:_Engine.select_eventless_transitions",
             "returns nothing: the run takes eventless transitions itself (kernel.settle), "
             "as the machine events `always`",
             params=("trigger_data",)),
    Internal(f"{_SYNC}._check_root_final_state", "overridden",
             "psm.machine:_Engine._check_root_final_state",
             "keeps the machine running after a top-level parallel state completes"),
    Internal(f"{_SYNC}.microstep", "overridden", "psm.machine:_Engine.microstep",
             "calls the run (`Run._sc_microstep`) before each microstep, then the library's",
             params=("transitions", "trigger_data")),
    Internal(f"{_SYNC}.sm", "read", "psm.machine:_Engine._select_transitions, _Engine.microstep",
             "the engine's psm.machine: its configuration, and the run it belongs to"),
    Internal("statemachine.event_data.TriggerData.event", "read", "psm.machine:_Engine.microstep",
             "the event a microstep is for, checked against the run's pending event"),
    # The machine's state (machine.py, run.py).
    Internal(f"{_SM}.configuration", "read", "psm.machine:_Engine._select_transitions",
             "the active states, whose atomic ones selection walks"),
    Internal(f"{_SM}.configuration", "set", "psm.machine:Machine.reset_to",
             "puts the configuration back after a failed event (the property's setter)"),
    Internal(f"{_SM}.states_map", "read",
             "psm.machine:Machine.run_exit_actions, reset_to, number_states; "
             "run.run:_restore_history",
             "a state by its value"),
    Internal(f"{_SM}.history_values", "set", "run.run:Run._restore_history, Run._take",
             "the remembered states per history pseudo-state, restored and rolled back"),
    Internal(f"{_SM}._engine.clear", "called", "psm.machine:Machine.reset_to",
             "drops what a failed event left queued"),
    Internal(f"{_SM}._callbacks.__contains__", "called", "psm.machine:Machine.run_exit_actions",
             "whether a state has exit actions (`call` would add an empty entry)"),
    Internal(f"{_SM}._callbacks.call", "called", "psm.machine:Machine.run_exit_actions",
             "runs a state's exit actions when the run ends (the library does not)",
             params=("key",)),
    Internal("statemachine.State.exit.key", "read", "psm.machine:Machine.run_exit_actions",
             "the registry key of a state's exit actions"),
    Internal("statemachine.State.document_order", "set", "psm.machine:number_states",
             "renumbered from the spec (the library misnumbers some regions); the library "
             "orders entries and exits by it, and selection sorts by it"),
    Internal("statemachine.orderedset.OrderedSet", "called",
             "psm.machine:_Engine, Machine.reset_to; run.run:Run.__init__",
             "the set type the engine and the configuration setter take"),
    # What generated modules and callers use (api.py, run.py).
    Internal("statemachine.exceptions.TransitionNotAllowed", "subclassed",
             "run.run:EventNotAccepted, Run._take, Run._machine_step",
             "the library's refusal, caught and re-raised as EventNotAccepted (a subclass)"),
    Internal("statemachine.State", "called", "api; generated",
             "the states of a generated machine (with State.Compound, State.Parallel)"),
    Internal("statemachine.HistoryState", "called", "api; generated",
             "a history pseudo-state; history_values is keyed by its id"),
    # The direct path (machine.direct_calls) and the run's table of alternatives: found
    # by tests/test_library_uses.py, which scans the runtime for uses missing from this list.
    Internal(f"{_SM}._class_listeners", "read", "psm.machine:direct_calls",
             "class-level listeners need the machine: no direct guards"),
    Internal(f"{_SM}._specs", "read", "psm.machine:_spec_lists",
             "the machine class's callback specs, to know what the library would call"),
    Internal("statemachine.State._specs", "read", "psm.machine:_spec_lists",
             "a state's callback specs"),
    Internal("statemachine.transition.Transition._specs", "read", "psm.machine:_spec_lists",
             "a transition's callback specs"),
    Internal("statemachine.graph.iterate_states_and_transitions", "called",
             "psm.machine:_spec_lists", "walks the states and transitions of a machine class"),
    Internal("statemachine.callbacks.CallbackGroup.COND", "read", "psm.machine:direct_calls",
             "which specs are guards"),
    Internal("statemachine.callbacks.CallbackGroup.ENTER", "read", "psm.machine:direct_calls",
             "which specs are a state's entry actions"),
    Internal("statemachine.callbacks.CallbackGroup.EXIT", "read", "psm.machine:direct_calls",
             "which specs are a state's exit actions"),
    Internal("statemachine.callbacks.CallbackGroup.ON", "read", "psm.machine:direct_calls",
             "which specs are a transition's actions"),
    Internal("statemachine.callbacks.SpecReference.NAME", "read", "psm.machine:direct_calls",
             "a guard given by a method's name (not a callable, not an expression)"),
    Internal("statemachine.callbacks.CallbackSpec.is_convention", "read",
             "psm.machine:direct_calls",
             "a method the library finds by its naming conventions (`on_enter_x`)"),
    Internal("statemachine.callbacks.CallbackSpec.group", "read", "psm.machine:direct_calls",
             "the spec's kind (guard, action, validator)"),
    Internal("statemachine.callbacks.CallbackSpec.reference", "read",
             "psm.machine:direct_calls", "how the spec names its callable"),
    Internal("statemachine.callbacks.CallbackSpec.expected_value", "read",
             "psm.machine:direct_calls, declared_alternatives",
             "`cond` (True) or `unless` (False)"),
    Internal("statemachine.transition.Transition.events", "read",
             "psm.machine:declared_alternatives",
             "a transition's events: the alternatives it is, one per event"),
    Internal("statemachine.transition.Transition.target", "read",
             "psm.machine:declared_alternatives",
             "a transition's (first) target; None for a targetless one"),
)


def missing() -> list[str]:
    """The entries of `INTERNALS` the installed python-statemachine lacks, each as
    `path (what is wrong)`; empty when every use the runtime makes of it resolves."""
    return [f"{internal.path} ({problem})" for internal, problem in problems()]


def problems() -> list[tuple[Internal, str]]:
    """`missing()` with its entries: each internal the installed library lacks, and what is
    wrong (`` `SyncEngine` has no `microstep` ``, `no parameter `trigger_data``)."""
    out: list[tuple[Internal, str]] = []
    for internal in INTERNALS:
        problem = _problem(internal)
        if problem is not None:
            out.append((internal, problem))
    return out


def _problem(internal: Internal) -> str | None:
    try:
        found = _resolve(internal.path)
    except LookupError as exc:
        return str(exc)
    if internal.use == "set" and isinstance(found, property) and found.fset is None:
        return "no longer settable"
    if internal.use in ("overridden", "called") and not callable(found):
        return "no longer callable"
    if internal.params:
        try:
            params = inspect.signature(found).parameters
        except (TypeError, ValueError):
            return "its signature cannot be read"
        lost = [p for p in internal.params if p not in params]
        if lost:
            return "no parameter " + ", ".join(f"`{p}`" for p in lost)
    if internal.use == "subclassed" and not isinstance(found, type):
        return "no longer a class"
    return None


def _resolve(path: str) -> Any:
    """The object at a dotted path: the longest importable module, then attributes; an
    attribute missing on a class is looked up again on a small instance of it (the library
    sets many in `__init__`). A property is returned as the property, not its value."""
    parts = path.split(".")
    module: object = None
    index = len(parts)
    while index > 0:
        try:
            module = importlib.import_module(".".join(parts[:index]))
            break
        except ImportError:
            index -= 1
    if module is None:
        raise LookupError(f"no module `{parts[0]}`")
    found: Any = module
    where = ".".join(parts[:index])
    for name in parts[index:]:
        found = _attribute(found, name, where)
        where += "." + name
    return found


def _attribute(owner: object, name: str, where: str) -> Any:
    if isinstance(owner, type):
        for klass in owner.__mro__:
            declared = vars(klass).get(name)
            if isinstance(declared, property):  # the property itself, not its value
                return declared
        if hasattr(owner, name):  # methods, class attributes, the metaclass's (validate_*)
            return getattr(owner, name)
        for sample in _samples():
            if isinstance(sample, owner) and hasattr(sample, name):
                return getattr(sample, name)
    elif hasattr(owner, name):
        return getattr(owner, name)
    raise LookupError(f"`{where}` has no `{name}`")


@functools.cache
def _samples() -> tuple[object, ...]:
    """A two-state machine, one of its states, its engine and a trigger: built once, on the
    first lookup that needs an instance."""
    from statemachine import State, StateMachine

    class Tiny(StateMachine):
        idle = State(initial=True)
        done = State(final=True)
        finish = idle.to(done, cond="ok")
        ok = True

    samples: list[object] = []
    try:
        machine = Tiny()
    except Exception:  # a library that cannot build it: every instance lookup fails
        return ()
    samples += [machine, *machine.states_map.values()]
    for state in machine.states_map.values():
        for transition in state.transitions:
            samples += [transition, *transition.cond]
    samples.extend(getattr(machine, name) for name in ("_engine",) if hasattr(machine, name))
    try:
        from statemachine.event_data import TriggerData

        samples.append(TriggerData(machine=machine, event=None))
    except Exception:  # moved, or built another way: its attributes are reported missing
        pass
    return tuple(samples)
