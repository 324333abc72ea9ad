"""What a state looks like, and which edges a transition is drawn as, decided once for DOT,
Mermaid and the docs legend.

Terminal = a state that ends the run (`statechart.spec_chart.ends_run`). Tags get a fill
colour: `paused` and `terminal` have fixed ones (the spec format's rules talk about them),
other tags take colours from a palette in first-use order, so the same spec always gets the
same colours.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

from statechart.model import Spec, State, Transition
from statechart.spec_chart import ends_run

TERMINAL_FILL = "#d9d9d9"
FIXED_TAG_FILLS = {"paused": "#ffd8a8", "terminal": TERMINAL_FILL}
PALETTE = ("#cfe2ff", "#d3f9d8", "#e5dbff", "#fff3bf", "#c5f6fa", "#ffdeeb", "#e9ecef")
HIGHLIGHT = "#d6336c"  # border of the states in the highlighted (current) configuration
OVERLAY = "#2b8a3e"  # what an overlay (`extends:`) added or replaced, drawn over its base
DRAFT = "#c92a2a"  # the "work in progress" line of a spec drawn with errors (`render`)


@dataclass(frozen=True)
class OverlayMarks:
    """What a spec that extends another changed, by name, for the pictures and the page."""

    added_states: frozenset[str]
    changed_states: frozenset[str]  # base states the overlay patched (their `on:` too)
    added_edges: frozenset[tuple[str, str]]  # (state, event) the base did not handle
    replaced_edges: frozenset[tuple[str, str]]  # (state, event) whose base transition changed
    # What the overlay removed from its base, in words (`state parked`, `cancel on paid`):
    # not in the model, so the pictures can only say it (the legend).
    removed: tuple[str, ...] = ()

    @property
    def new_edges(self) -> frozenset[tuple[str, str]]:
        return self.added_edges | self.replaced_edges

    def edge_mark(self, source: str, event: str) -> str | None:
        """"added", "changed" or None: how an edge is labelled in the pictures. Every
        transition of an added state is added with it."""
        key = (source, event)
        return "added" if key in self.added_edges or source in self.added_states else \
            "changed" if key in self.replaced_edges else None

    def __bool__(self) -> bool:
        return bool(self.added_states or self.changed_states or self.new_edges or self.removed)


def overlay_marks(spec: Spec) -> OverlayMarks:
    changes = spec.overlay.changes if spec.overlay else ()

    def names(kind: str) -> frozenset[str]:
        return frozenset(name for k, name in changes if k == kind)

    def edges(kind: str) -> frozenset[tuple[str, str]]:
        return frozenset(_edge_key(name) for k, name in changes if k == kind and "." in name)

    added, new_edges = names("state-added"), edges("transition-added") | \
        edges("transition-replaced")
    # A base state whose transitions the overlay added or replaced is patched too.
    patched = (names("state-changed") | {source for source, _ in new_edges}) - added
    removed = tuple(f"state {name}" for name in sorted(names("state-removed"))) + tuple(
        f"{event} on {source}" for source, event in sorted(edges("transition-removed")))
    return OverlayMarks(added, frozenset(patched), edges("transition-added"),
                        edges("transition-replaced"), removed)


def _edge_key(name: str) -> tuple[str, str]:
    """`source.event` (a transition change's name) -> (source, event)."""
    source, event = name.split(".", 1)
    return source, event


@dataclass(frozen=True)
class Look:
    fill: str | None  # None: no fill
    terminal: bool


def tag_fills(spec: Spec) -> dict[str, str]:
    """Every tag used in the spec with its fill colour, in first-use order."""
    fills: dict[str, str] = {}
    free = iter(PALETTE * (1 + len(spec.states) // len(PALETTE)))
    for state in spec.states.values():
        for tag in state.tags:
            if tag not in fills:
                fills[tag] = FIXED_TAG_FILLS.get(tag) or next(free)
    return fills


def look(state: State, fills: dict[str, str]) -> Look:
    """A state with several tags takes the colour of the first; `paused` wins, it matters most
    to an operator."""
    tags = sorted(state.tags, key=lambda t: (t != "paused", t != "terminal"))
    fill = fills[tags[0]] if tags else (TERMINAL_FILL if ends_run(state) else None)
    return Look(fill, ends_run(state))


def event_label(t: Transition) -> str:
    """How a transition's trigger reads in pictures and pages: its event, `done` for a
    completion (`done.state.X` is the run's internal name), `after 15m` for a timer, and
    `(H)` / `(H*)` after a shallow / deep history transition's (the notation of Harel's
    statecharts and UML), and `(targetless)` / `(internal)` after a transition that exits
    nothing / not its source (its edge is drawn back to the source / to its target); a
    multi-target transition's (one edge per target) names them all: `go (a2 + b2)`."""
    text = t.shown
    if t.targets:
        return text + " (" + " + ".join(t.targets) + ")"
    if t.history:
        text += " (H*)" if t.history == "deep" else " (H)"
    elif t.kind != "external":
        text += f" ({t.kind})"
    return text


def drawn_edges(spec: Spec) -> Iterator[tuple[Transition, Transition]]:
    """Every transition as the pictures draw it: (the transition, one edge of it). A
    multi-target transition is one edge per target, each labelled with all of them."""
    for declared in spec.transitions():
        for one in [replace(declared, target=x) for x in declared.targets] or [declared]:
            yield declared, one
