"""`Machine`: the python-statemachine base class of every generated machine, made to follow
`statechart_runtime.semantics` where python-statemachine 3.2.2 departs from SCXML.

Three departures are routed around here (the tests under tests/conformance pin them against
XState):

- Selection order. The library walks the active atomic states in the order they were
  *entered* (its code carries a "TODO: sorted by document order"), so when two parallel regions
  take conflicting transitions on one event the region entered last wins, and a restored run
  (whose configuration is stored in document order) can choose differently from the run it was
  saved from. `_Engine` walks them in document order, as SCXML does.
- Ending. The library stops when every region of a top-level parallel state is final, before
  the run's own completion events (`done:` of a region) are taken; the run decides instead.
- Document order numbers. The library numbers a compound state's children without carrying
  the counter back up, so a region listing states before its initial one gets numbers that
  reorder entries and exits across regions. `number_states` renumbers every state from the
  spec's own document order (`Chart.order`).

The run facade (`statechart_runtime.run.Run`) keeps the record; it is called once per
microstep from `_Engine.microstep`, before any action runs, so it may refuse the step. It is
not registered as a listener: the library would build a per-instance callback registry for it
(most of a run's memory), and a listener's hook costs more per event than this call.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from statemachine import StateMachine
from statemachine.callbacks import CallbackGroup, SpecReference
from statemachine.engines.sync import SyncEngine
from statemachine.graph import iterate_states_and_transitions
from statemachine.orderedset import OrderedSet
from statemachine.transition import Transition

from statechart_runtime.chart.alternatives import Declared
from statechart_runtime.chart.chart import INTERNAL, MULTI, TARGETLESS, Chart


class RunHooks(NamedTuple):
    """What the engine asks of the run facade (statechart_runtime.run.Run), which the run
    gives its machine (`machine._sc_run`): its selection (`kernel.select`), the commit of
    each microstep before its actions run, and its own `send`."""

    select: Callable[[Any, Any, Any], Any]  # (engine, trigger data, predicate) -> transitions
    microstep: Callable[[list[Any], str], None]  # (transitions, trigger)
    send: Callable[..., None]  # (event id, *args, **kwargs)


# Its name before the run gave its machine these three callables instead of methods.
RunHook = RunHooks


class _Engine(SyncEngine):
    def select_eventless_transitions(self, trigger_data: Any) -> Any:
        # The run takes a spec's eventless transitions (`always:`) itself, in SCXML's order,
        # as microsteps of the machine event `always` (statechart_runtime.kernel.settle); the
        # library would look for its own twice per event, a good part of its time per event.
        return OrderedSet()

    def _select_transitions(self, trigger_data: Any, predicate: Any) -> Any:
        run: RunHooks | None = getattr(self.sm, "_sc_run", None)
        if run is not None:  # the run selects (statechart_runtime.kernel.select)
            return run.select(self, trigger_data, predicate)
        # A machine used without its run facade: the library's selection, in document order.
        enabled: Any = OrderedSet()
        atomic = [s for s in self.sm.configuration if s.is_atomic]
        if len(atomic) > 1:
            atomic.sort(key=_document_order)
        for state in atomic:
            transition = self._first_transition_that_matches(state, trigger_data, predicate)
            if transition is not None:
                enabled.add(transition)
        return self._filter_conflicting_transitions(enabled)

    def _check_root_final_state(self) -> None:
        # The library stops the machine at the end of a macrostep that leaves every region of
        # a top-level parallel state final. The run's own `done.state` events (a region's
        # `done:`) come after that macrostep and may leave the parallel state, so the run
        # decides when it has ended (`Chart.ended`, once its completion cascade is over) and
        # refuses events from then on.
        return

    def microstep(self, transitions: list[Any], trigger_data: Any) -> Any:
        hook: RunHooks | None = getattr(self.sm, "_sc_run", None)
        if hook is not None:
            # Raising here cancels the step: nothing ran yet.
            hook.microstep(transitions, str(trigger_data.event))
        self._sc_content_ran: set[str] = set()
        return super().microstep(transitions, trigger_data)

    def _execute_transition_content(self, enabled_transitions: list[Any], trigger_data: Any,
                                    get_key: Any, *args: Any, **kwargs: Any) -> Any:
        # A transition's content (`actions:`, before/after hooks) runs once per microstep.
        # The library runs a history transition's again when the history is entered by its
        # default (it passes the transition that targets the history state, not the
        # history's own default transition); SCXML runs it once, between exits and entries.
        ran = getattr(self, "_sc_content_ran", None)
        if ran is not None:
            enabled_transitions = [t for t in enabled_transitions if get_key(t) not in ran]
            ran.update(get_key(t) for t in enabled_transitions)
        return super()._execute_transition_content(enabled_transitions, trigger_data, get_key,
                                                   *args, **kwargs)


def _document_order(state: Any) -> int:
    return state.document_order  # type: ignore[no-any-return]


class Machine(StateMachine):
    """Base of generated machine classes: SCXML selection order, and the class checks off
    (`statechart check` already proved what they check, and one of them is quadratic)."""

    # SCXML: an internal transition to a descendant of its source enters it (the library's
    # default skips the target's entry; it matters only for internal transitions).
    enable_self_transition_entries = True
    validate_disconnected_states = False
    validate_trap_states = False
    validate_final_reachability = False

    def __setattr__(self, name: str, value: Any) -> None:
        # python-statemachine refuses an instance attribute named like a state's *value* (it
        # means to protect the state attributes, whose names are ids). A generated machine's
        # values are the spec's names (`model`, `configuration`) and any state id that would
        # clash with the library's own attributes is mapped (`state_model`), so nothing is lost
        # by skipping the check, and a state may be named like an attribute the library sets.
        object.__setattr__(self, name, value)

    def _get_engine(self) -> Any:
        return _Engine(self)

    def send(self, event: str, *args: Any, **kwargs: Any) -> Any:
        """python-statemachine's `send`; on a run's machine (`run.machine.send("approve")`),
        the run's own `send`, so the record is kept and a refusal is EventNotAccepted."""
        run: RunHooks | None = self.__dict__.get("_sc_run")
        if run is not None:
            return run.send(event, *args, **kwargs)
        return super().send(event, *args, **kwargs)

    def run_exit_actions(self, names: list[str], event: str) -> None:
        """Run the exit actions of the named states, in this order, as the library would on
        exit (inline names, then conventions; on the model and every listener), with the
        arguments it injects by name (`event`, `state`/`source`, `machine`, `model`)."""
        states = self.states_map
        callbacks = self._callbacks
        for name in names:
            state = states[name]
            key = state.exit.key
            if key in callbacks:  # `call` would add an empty entry for every state
                callbacks.call(key, event=event, state=state, source=state, target=None,
                               machine=self, model=self.model)

    def reset_to(self, names: tuple[str, ...]) -> None:
        """Put the configuration back to `names` (after a failed event) and drop anything the
        failure left queued; nothing runs."""
        self._engine.clear()
        if [s.value for s in self.configuration] != list(names):
            states = self.states_map
            self.configuration = OrderedSet(states[name] for name in names)


def number_states(machine_class: type[Machine], chart: Chart) -> None:
    """Give every state of the class its document-order number from the spec (see above)."""
    for state in machine_class.states_map.values():
        state.document_order = chart.order[state.value] + 1


def declared_alternatives(machine_class: type[Machine], history_targets: dict[str, tuple[str, str]],
                          names: dict[str, str]) -> list[tuple[Declared, Transition]]:
    """The machine class's transitions as the spec's table of alternatives binds them
    (`AlternativeTable.bind`: the order and guards its rows lack), each with the library's
    transition object (which the machine path hands back to the engine), in declaration
    order: per state, per event (`names`: machine event id -> spec event). A targetless
    transition's target is its source; a multi-target one's, its targets joined by spaces;
    a history pseudo-state's (`history_targets`), the state it stands for."""
    out: list[tuple[Declared, Transition]] = []
    for state in machine_class.states_map.values():
        for transition in state.transitions:
            if transition.initial:
                continue
            kind: str | None
            if transition.target is None:
                target, kind = state.value, TARGETLESS
            elif len(transition.targets) > 1:
                target, kind = " ".join(t.value for t in transition.targets), MULTI
            else:
                target, kind = transition.target.value, INTERNAL if transition.internal else None
            if target in history_targets:
                target, kind = history_targets[target]
            guards = tuple((str(getattr(spec, "attr_name", None) or spec),
                            spec.expected_value is not False) for spec in transition.cond)
            guarded = bool(guards) or any(True for _ in transition.validators)
            for event in transition.events:
                name = names.get(str(event), str(event))
                out.append(((state.value, name, target, kind, guards, guarded), transition))
    return out


# Guards, as a run asks them without a machine: transition -> (method name, the answer that
# lets it through), for each guarded transition (python-statemachine's `cond` / `unless`).
DirectGuards = dict[Any, tuple[tuple[str, bool], ...]]
# The callback groups a run calls itself when it steps without a machine: a state's entry and
# exit actions, a transition's actions (its content, `on`).
_ACTIONS = {CallbackGroup.ENTER: "entry", CallbackGroup.EXIT: "exit", CallbackGroup.ON: "on"}


@dataclass(frozen=True)
class DirectCalls:
    """What a run of a class calls when it steps without a python-statemachine machine
    (`direct_calls`): the guards, and the actions, each a method of the run taking only
    `self`, by name, in the order the library would call them."""

    guards: DirectGuards
    entry: dict[str, tuple[str, ...]]  # state -> its entry actions
    exit: dict[str, tuple[str, ...]]  # state -> its exit actions
    # transition -> its actions (between exits and entries); a run keys them by alternative
    on: dict[Any, tuple[str, ...]]

    @property
    def acts(self) -> bool:
        """Whether anything but guards is called: a step then has effects beyond the run's
        record, so it is computed once and not again (`steps_without_machine`)."""
        return bool(self.entry or self.exit or self.on)


def direct_guards(run_class: type, machine_class: type[Machine]) -> DirectGuards | None:
    """The guards of `run_class`'s transitions, if a run of it can step without a
    python-statemachine machine and calls nothing but its guards; None otherwise (see
    `direct_calls`)."""
    calls = direct_calls(run_class, machine_class)
    return calls.guards if calls is not None and not calls.acts else None


def direct_calls(run_class: type, machine_class: type[Machine]) -> DirectCalls | None:
    """The guards and actions of `run_class`, if a run of it can step without a
    python-statemachine machine (statechart_runtime.run.Run.machine); None if it cannot.

    A machine is needed only for what the run cannot call as the library would: a method
    named by the library's conventions (such as `on_enter_running` or `before_approve`, on
    the run class or the machine class), a validator, class-level listeners, a callback
    given as a callable or an expression, or a guard or an action that takes arguments (the
    library injects `event`, `source`, `machine`... by name; a method must take only `self`
    to be called directly). What remains is the kernel's selection and step, with each
    guard and action called as the method it names: the same answers and the same calls in
    the same order, without building the machine's callback registry for every run (most
    of the cost of restoring a run, and of each event)."""
    if getattr(machine_class, "_class_listeners", None):
        return None
    guards: DirectGuards = {}
    actions: dict[str, dict[Any, tuple[str, ...]]] = {"entry": {}, "exit": {}, "on": {}}
    for specs, owner in _spec_lists(machine_class):
        for spec in specs:
            if spec.is_convention:
                name = spec.attr_name
                if hasattr(run_class, name) or hasattr(machine_class, name):
                    return None  # the library would find and call it
                continue
            group = spec.group
            if spec.reference is not SpecReference.NAME or \
                    (group is not CallbackGroup.COND and group not in _ACTIONS):
                return None  # a validator, a callback given as a callable or an expression
            name = spec.attr_name
            function = inspect.getattr_static(run_class, name, None)
            if not name.isidentifier() or hasattr(machine_class, name) or \
                    not inspect.isfunction(function) or \
                    inspect.iscoroutinefunction(function) or \
                    len(inspect.signature(function).parameters) != 1:
                return None  # an expression, a property, a method taking arguments
            if group is CallbackGroup.COND:
                guards[owner] = (*guards.get(owner, ()),
                                 (name, spec.expected_value is not False))
                continue
            if owner is None:
                return None  # an action of the class itself, which the library calls
            # A state's entry and exit actions are keyed by its name (its value), a
            # transition's by the transition.
            key = owner if isinstance(owner, Transition) else owner.value
            found = actions[_ACTIONS[group]]
            found[key] = (*found.get(key, ()), name)
    return DirectCalls(guards, actions["entry"], actions["exit"], actions["on"])


def _spec_lists(machine_class: type[Machine]) -> Any:
    """Every callback spec list of the machine class, with what it belongs to: a state, a
    transition, or None for the class's own."""
    yield machine_class._specs, None
    for visited in iterate_states_and_transitions(machine_class.states):
        yield visited._specs, visited
