"""Test a generated Run class against its spec: paths that cover it, and property tests.

- `paths(AgentRun, cover="transitions")`: a small set of event sequences from a new run that
  together take every reachable transition (`"states"`: enter every state; `"guards"`: get
  each answer of every guard asked), with the values each event needs (typed placeholders),
  the clock advances that fire timers, the guard answers each step assumes, and what the run
  is in after each step. What no path reaches is listed as unreachable. `to="STATE"`: the
  shortest path that enters STATE instead (the empty path when a new run is in it or its
  constructor passed through it).
- `follow(AgentRun, path)`: drive a new run along a path and check every step did what the
  path says (configuration, status, the transitions taken, the timers fired); raises
  `PathMismatch` otherwise.
- `event_sequences(AgentRun)`: a hypothesis strategy of valid paths (hypothesis is needed by
  this function only).

Runs are explored by `statechart_runtime.explore` with the step kernel a live run uses;
`statechart paths` prints the same paths as text, JSON or a pytest module.
"""

from __future__ import annotations

import datetime as dt
import gc
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from statechart_runtime.errors import PathMismatch
from statechart_runtime.testing.explore import START, Micro, Move, Snapshot, Space

Cover = Literal["transitions", "states", "guards"]
COVERS: tuple[Cover, ...] = ("transitions", "states", "guards")
MAX_CONFIGURATIONS = 20_000


@dataclass(frozen=True, slots=True)
class Item:
    """Something to cover: a transition (an alternative of `event` on `state`, the
    `alternative`th from 0, to `target`), a `state` entered, or a `guard`'s `answer` when the
    alternative asks it."""

    kind: Literal["transition", "state", "guard"]
    state: str
    event: str | None = None
    alternative: int | None = None
    target: str | None = None
    guard: str | None = None
    answer: bool | None = None

    def __str__(self) -> str:
        if self.kind == "state":
            return self.state
        move = f"{self.state} -{self.event}-> {self.target}"
        if self.alternative:  # the event's first alternative on the state is the usual one
            move += f" (alternative {self.alternative + 1})"
        if self.kind == "guard":
            return f"{self.guard}={'yes' if self.answer else 'no'} at {move}"
        return move


@dataclass(frozen=True, slots=True)
class Transition:
    """One transition a step takes (`alternative`: its place among the event's alternatives
    on `source`; `kind`: as the history step's, `shallow`/`deep` when it re-entered by
    history, `internal` when it kept its source, `targetless` when it moved nothing)."""

    source: str
    event: str
    target: str
    alternative: int
    kind: str | None = None


@dataclass(frozen=True, slots=True)
class Step:
    """One thing done to the run: `kind` "event" sends `event` with `values` (`run.send`);
    "clock" sets the clock to `at` and fires the timers due (`run.fire_due()` returns
    `fired`). `guards`: what each guard asked answers. After it, the run is in
    `configuration` with `status`. `refused`: the event is refused (its guards said no) and
    the run stays where it was."""

    kind: Literal["event", "clock"]
    event: str | None
    values: Mapping[str, Any]
    guards: Mapping[str, bool]
    at: dt.datetime
    transitions: tuple[Transition, ...]
    configuration: tuple[str, ...]
    status: str
    fired: tuple[str, ...] = ()
    refused: bool = False


@dataclass(frozen=True, slots=True)
class Path:
    """Steps from a new run (made at `START` with `context`, in `configuration`)."""

    context: Mapping[str, Any]
    configuration: tuple[str, ...]
    status: str
    steps: tuple[Step, ...]
    covers: tuple[Item, ...] = ()  # the items this path was the first to cover

    @property
    def events(self) -> int:
        return len(self.steps)


@dataclass(frozen=True, slots=True)
class Paths:
    """What `paths` found: the `paths`, every item of the cover (`items`), those no path
    reaches (`unreachable`), and how many configurations were explored. `complete` is False
    when the exploration stopped at `max_configurations`: then an item not reached may still
    be reachable. `opening`: the eventless transitions a new run's constructor takes, before
    the first step of every path (what they take and enter is covered by every path)."""

    spec: str
    cover: Cover | None
    paths: tuple[Path, ...]
    items: tuple[Item, ...]
    unreachable: tuple[Item, ...]
    configurations: int
    complete: bool
    opening: tuple[Transition, ...] = ()

    @property
    def events(self) -> int:
        return sum(p.events for p in self.paths)


def items(space: Space, cover: Cover) -> list[Item]:
    """Every item of `cover` in the spec, in document order."""
    spec = space.spec
    if cover == "states":
        return [Item("state", name) for name in spec.chart.order]
    out: list[Item] = []
    for (state, event), found in spec.alternatives.on.items():
        for alternative in found:
            # an item names a target as the record's steps do (a multi-target one's first)
            target, position = alternative.step_target, alternative.position
            if cover == "transitions":
                out.append(Item("transition", state, event, position, target))
            else:
                out.extend(Item("guard", state, event, position, target, g, a)
                           for g in alternative.guard_names for a in (True, False))
    order = spec.chart.order
    return sorted(out, key=lambda i: (order[i.state], i.alternative or 0))


def covered_by(space: Space, move: Move, cover: Cover) -> Iterator[Item]:
    if cover == "states":
        yield from (Item("state", s) for s in move.entered)
    elif cover == "transitions":
        for source, event, target, _, position in move.micro:
            yield Item("transition", source, event, position, target)
    else:
        alternatives = space.spec.alternatives.on
        for state, event, position, guard, answer in move.asked:
            yield Item("guard", state, event, position,
                       alternatives[(state, event)][position].step_target, guard, answer)


class _Graph:
    """The explored configurations (by `Space.key`) and the steps between them. Items are
    numbered as they are first reached, and each step carries the items it covers as a bit
    mask: the walk asks "does this step cover anything left?" very often."""

    def __init__(self, space: Space, cover: Cover, wanted: set[Item], limit: int) -> None:
        """Breadth first from a new run, until every item of `wanted` is reached (the rest
        of the graph is not needed), every configuration is explored, or `limit`
        configurations are known (then `complete` is False)."""
        self.space = space
        self.cover = cover
        start = space.start()
        self.ids: dict[tuple[object, ...], int] = {space.key(start): 0}
        self.snaps: list[Snapshot] = [start]
        # per configuration: (move, configuration it leads to, item mask, the snapshot
        # the move gives from this configuration's snapshot)
        self.edges: list[list[tuple[Move, int, int, Snapshot]]] = []
        self.complete = True
        self.index: dict[Item, int] = {}
        self.items: list[Item] = []
        # A move's mask by the move (`id`, the move kept alive with it): the space hands
        # out one move for each step it computed, and a step it looked up is a move again.
        self.masks: dict[int, tuple[Move, int]] = {}
        # What every new run covers: its configuration, and what its constructor's
        # eventless steps took (`Space.opening`).
        opening, entered = space.opening
        if cover == "states":
            self.mask(Item("state", s) for s in (*start.configuration, *entered))
        elif cover == "transitions":
            self.mask(Item("transition", source, event, position, target)
                      for source, event, target, _, position in opening)
        missing = len(wanted - self.index.keys())
        head = 0
        while head < len(self.snaps) and missing:
            out: list[tuple[Move, int, int, Snapshot]] = []
            for move, after in space.moves(self.snaps[head], cover == "guards"):
                key = space.key(after)
                target = self.ids.get(key)
                if target is None:
                    if len(self.snaps) >= limit:
                        self.complete = False
                        continue
                    target = self.ids[key] = len(self.snaps)
                    self.snaps.append(after)
                known = len(self.items)
                mask = self.mask_of(move)
                if len(self.items) > known:  # items reached for the first time
                    missing -= sum(i in wanted for i in self.items[known:])
                out.append((move, target, mask, after))
            self.edges.append(out)
            head += 1
        self.edges.extend([] for _ in range(len(self.snaps) - len(self.edges)))

    def mask_of(self, move: Move) -> int:
        """The bit mask of what `move` covers."""
        known = self.masks.get(id(move))
        if known is None:
            known = self.masks[id(move)] = (move, self.mask(covered_by(self.space, move,
                                                                       self.cover)))
        return known[1]

    def mask(self, found: Iterable[Item]) -> int:
        """The bit mask of `found` (items not seen before are numbered now)."""
        mask = 0
        for item in found:
            number = self.index.get(item)
            if number is None:
                number = self.index[item] = len(self.items)
                self.items.append(item)
            mask |= 1 << number
        return mask

    def route(self, start: int, wanted: int
              ) -> list[tuple[Move, int, int, Snapshot]] | None:
        """The shortest sequence of steps (move, configuration, mask) from configuration
        `start` whose last step covers an item of `wanted` (a mask), or None."""
        previous: dict[int, tuple[int, tuple[Move, int, int, Snapshot]] | None] = {start: None}
        queue = [start]
        edges = self.edges
        for node in queue:  # the queue grows as the search goes
            for edge in edges[node]:
                if edge[2] & wanted:
                    steps = [edge]
                    back = previous[node]
                    while back is not None:
                        steps.append(back[1])
                        back = previous[back[0]]
                    return steps[::-1]
                if edge[1] not in previous:
                    previous[edge[1]] = (node, edge)
                    queue.append(edge[1])
        return None

    def follow(self, snap: Snapshot, node: int,
               route: list[tuple[Move, int, int, Snapshot]]
               ) -> tuple[list[Step], Snapshot, int]:
        """The explored steps `route` from configuration `node`, taken again from `snap`,
        as steps, the snapshot they lead to and the mask of what they cover. While `snap` is
        the explored snapshot itself the explored step is taken as it is; once the run got
        there another way (other times and values) each step is computed again."""
        space = self.space
        steps: list[Step] = []
        covers = 0
        for move, target, mask, after in route:
            if snap == self.snaps[node]:
                snap = after
            else:
                found = space.advance(snap, move.guards) if move.kind == "clock" else \
                    space.send(snap, str(move.event), move.guards)
                if found is None or found[0].refused != move.refused:
                    break
                move, snap = found
                mask = self.mask_of(move)
            node = target
            steps.append(_step(space, move, snap))
            covers |= mask
        return steps, snap, covers

    def walk(self, left: int) -> tuple[list[Step], int]:
        """One path from a new run: again and again the nearest step that covers something
        of `left` (a mask), until nothing of it is within reach."""
        snap = self.snaps[0]
        steps: list[Step] = []
        taken = 0
        while True:
            node = self.ids.get(self.space.key(snap))
            if node is None:
                break
            wanted = left & ~taken
            route = self.route(node, wanted)
            if route is None:
                break
            replayed, snap, new = self.follow(snap, node, route)
            steps.extend(replayed)
            if not new & wanted:
                break  # the route did not go as explored: end this path here
            taken |= new
        return steps, taken & left

    def unmask(self, mask: int) -> list[Item]:
        """The items of `mask`, in number order (a bit at a time: shifting a mask of
        thousands of bits for each item took longer than the walk)."""
        found = []
        while mask:
            low = mask & -mask
            found.append(self.items[low.bit_length() - 1])
            mask ^= low
        return found


def paths(run_class: Any, cover: Cover = "transitions", *, to: str | None = None,
          max_configurations: int = MAX_CONFIGURATIONS) -> Paths:
    """Paths through `run_class` (a generated Run class, or its spec's bound `SpecTables`:
    the same paths) that cover its spec (see the module docstring); with `to`, the shortest
    path that enters state `to`, as `cover="states"` counts a state entered (the empty path
    when a new run is in it or its constructor passed through it)."""
    # The exploration allocates about a hundred thousand small objects at 500 states, none
    # in a cycle: the collector only costs here (as in `statechart.linter.check_source`).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _paths(run_class, cover, to, max_configurations)
    finally:
        if collecting:
            gc.enable()


def _paths(run_class: Any, cover: Cover, to: str | None, max_configurations: int) -> Paths:
    space = Space(run_class)
    spec = space.spec
    if cover not in COVERS:
        raise ValueError(f"cover must be one of {', '.join(COVERS)}, not {cover!r}")
    if to is not None and to not in spec.chart.order:
        raise ValueError(f"`{to}` is not a state of `{spec.name}` (its states: "
                         f"{', '.join(spec.chart.order)})")
    start = space.start()
    if to is not None:
        goal = Item("state", to)
        graph = _Graph(space, "states", {goal}, max_configurations)
        # Reached as `cover="states"` counts a state: by the empty path when a new run is in
        # it or its constructor's eventless steps passed through it (the path's test asserts
        # the start), else by the shortest route whose last step enters it, even if the same
        # step's eventless transitions leave it again.
        at_start = to in (*start.configuration, *space.opening[1])
        bit = graph.index.get(goal)
        route = None if at_start or bit is None else \
            graph.route(0, 1 << bit)
        found = (_path(space, start, [], [goal]),) if at_start else () \
            if route is None else (_path(space, start, graph.follow(start, 0, route)[0], []),)
        return Paths(spec.name, None, found, (goal,), () if found else (goal,),
                     len(graph.snaps), graph.complete, _opening(space))
    wanted = items(space, cover)
    graph = _Graph(space, cover, set(wanted), max_configurations)
    reachable = set(graph.items)
    left = (1 << len(graph.items)) - 1
    # A new run is in its initial configuration, after its constructor's eventless steps:
    # nothing to do for them.
    opening, entered = space.opening
    if cover == "states":
        left &= ~graph.mask(Item("state", s) for s in (*start.configuration, *entered))
    elif cover == "transitions":
        left &= ~graph.mask(Item("transition", source, event, position, target)
                            for source, event, target, _, position in opening)
    found_paths: list[Path] = []
    while left:
        steps, taken = graph.walk(left)
        if not taken:
            break  # cannot happen for an item the exploration reached; never loop on it
        found_paths.append(_path(space, start, steps, graph.unmask(taken)))
        left &= ~taken
    missed = set(graph.unmask(left))
    unreachable = tuple(i for i in wanted if i not in reachable or i in missed)
    return Paths(spec.name, cover, tuple(found_paths), tuple(wanted), unreachable,
                 len(graph.snaps), graph.complete, _opening(space))


def _transitions(micro: Iterable[Micro]) -> tuple[Transition, ...]:
    return tuple(Transition(s, e, t, p, h) for s, e, t, h, p in micro)


def _opening(space: Space) -> tuple[Transition, ...]:
    """What a new run's constructor takes (`Space.opening`; `start` has run)."""
    return _transitions(space.opening[0])


def _step(space: Space, move: Move, after: Snapshot) -> Step:
    return Step(move.kind, move.event, dict(move.values), dict(move.guards), move.at,
                _transitions(move.micro),
                after.configuration, space.spec.reported(after.configuration).value,
                move.fired, move.refused)


def _path(space: Space, start: Snapshot, steps: list[Step], covers: Iterable[Item]) -> Path:
    """A path from `start`; `covers` in the order the exploration first reached them."""
    return Path(space.context(), start.configuration,
                space.spec.reported(start.configuration).value, tuple(steps), tuple(covers))


# -- following a path ------------------------------------------------------------------------

class _Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> dt.datetime:
        return self.now


def answers_model(guards: Any) -> Any:
    """An object for `model=` whose method for each guard name in `guards` returns
    `model.answers.get(name, True)`: set `model.answers` before each step."""
    def answer(name: str) -> Any:
        def method(self: Any) -> bool:
            return bool(self.answers.get(name, True))
        method.__name__ = name
        return method

    cls = type("GuardAnswers", (), {name: answer(name) for name in sorted(set(guards))})
    model = cls()
    model.answers = {}
    return model


def guard_names(run_class: Any) -> list[str]:
    """Every guard the spec's transitions ask, in the order first declared."""
    found: dict[str, None] = {}
    for alternatives in Space(run_class).spec.alternatives.on.values():
        for alternative in alternatives:
            found.update(dict.fromkeys(alternative.guard_names))
    return list(found)


def follow(run_class: Any, path: Path) -> Any:
    """A new run of `run_class` driven along `path` (the clock and the guards' answers as the
    path says); after each step its configuration, status, the transitions it took and the
    timers it fired must be the path's, else PathMismatch. Returns the run."""
    from statechart_runtime.run.run import EventNotAccepted

    clock = _Clock()
    model = answers_model(guard_names(run_class))
    run = run_class(clock=clock, model=model, **dict(path.context))
    _check(run, 0, path.configuration, path.status)
    for number, step in enumerate(path.steps, 1):
        clock.now = step.at
        model.answers = dict(step.guards)
        length = len(run.record.history)
        if step.kind == "clock":
            fired = tuple(run.fire_due())
            if fired != step.fired:
                raise PathMismatch(number, f"the timers fired were {list(fired)}, not "
                                   f"{list(step.fired)}")
        elif step.refused:
            try:
                run.send(step.event, **step.values)
            except EventNotAccepted:
                pass
            else:
                raise PathMismatch(number, f"`{step.event}` was accepted; the path says its "
                                   "guards refuse it")
        else:
            run.send(step.event, **step.values)
        taken = tuple((s.source.value, s.event.value, s.target.value, s.kind)
                      for s in run.record.history[length:])
        expected = tuple((t.source, t.event, t.target, t.kind) for t in step.transitions)
        if taken != expected:
            raise PathMismatch(number, f"the transitions taken were {list(taken)}, not "
                               f"{list(expected)}")
        _check(run, number, step.configuration, step.status)
    return run


def _check(run: Any, number: int, configuration: tuple[str, ...], status: str) -> None:
    actual = tuple(s.value for s in run.configuration)
    if actual != configuration:
        raise PathMismatch(number, f"the run is in {list(actual)}, not {list(configuration)}")
    if run.status.value != status:
        raise PathMismatch(number, f"the status is `{run.status.value}`, not `{status}`")


# -- property tests --------------------------------------------------------------------------

def event_sequences(run_class: Any, *, max_steps: int = 20) -> Any:
    """A hypothesis strategy of `Path`s through `run_class` of up to `max_steps` steps, each
    one the run accepts (events, clock advances, guard answers; string, number, boolean and
    enum values drawn by hypothesis). Drive a run along one with `follow`, or by hand.
    Needs hypothesis (`pip install hypothesis`); nothing else here does."""
    try:
        from hypothesis import strategies as st
    except ImportError as exc:  # the only function of the runtime that needs it
        raise ImportError("event_sequences needs hypothesis: pip install hypothesis") from exc
    space = Space(run_class)
    codec = space.spec.codec
    drawn = {"string": st.text(max_size=20), "integer": st.integers(-10**6, 10**6),
             "number": st.floats(-1e6, 1e6, allow_nan=False), "boolean": st.booleans(),
             # small JSON values, nulls inside (at the top None unsets a field)
             "json": st.recursive(
                 st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=10),
                 lambda inner: st.lists(inner | st.none(), max_size=3)
                 | st.dictionaries(st.text(max_size=5), inner | st.none(), max_size=3),
                 max_leaves=6)}

    @st.composite
    def sequences(draw: Any) -> Path:
        start = snap = space.start()
        steps: list[Step] = []
        for _ in range(draw(st.integers(0, max_steps))):
            moves = list(space.moves(snap))
            if not moves:
                break
            move, after = draw(st.sampled_from(moves))
            if move.values:
                values = {name: draw(drawn[codec.types[name]]) if codec.types[name] in drawn
                          else draw(st.sampled_from(list(codec.enums[name])))
                          if codec.types[name] == "enum" else value
                          for name, value in move.values.items()}
                again = space.send(snap, str(move.event), move.guards, values)
                if again is not None:
                    move, after = again
            steps.append(_step(space, move, after))
            snap = after
        return _path(space, start, steps, ())

    return sequences()
