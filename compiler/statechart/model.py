"""The neutral model: frozen dataclasses that every rule, renderer and generator reads.

One place builds it (`statechart.build_model`); nothing else turns YAML into a `Spec`.
Every element carries the `Span` where it was written, so any later stage can report a
position without going back to the YAML.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from statechart.diagnostics import Span
from statechart.frozen import fast_init
from statechart_runtime.chart import events

StateKind = Literal["atomic", "compound", "parallel", "final"]
# What raises a transition's event: a caller (`on:`), the completion of its source (`done:`,
# event `done.state.SOURCE`), a timer of its source (`after:`, event `after.ID.SOURCE`, ID
# the timer's id: docs/spec-format.md "Timers"), or nothing (`always:`, eventless: event
# `always`, taken whenever enabled).
Trigger = Literal["event", "done", "after", "always"]
HistoryKind = Literal["shallow", "deep"]
# `external` (SCXML's default: the source is exited, and entered again when the target is it or
# inside it), `internal` (`internal: true`: a target inside the source, which stays active) or
# `targetless` (no `target`: nothing is exited or entered; `target` is then the source).
TransitionKind = Literal["external", "internal", "targetless"]
FieldType = Literal["string", "integer", "number", "boolean", "datetime", "enum", "json"]


@fast_init  # built once per state and alternative: statechart.frozen
@dataclass(frozen=True)
class Transition:
    """One way out of `source` on `event`.

    `order` is the position among the alternatives of the same event on the same state
    (guarded alternatives are tried in order, first match wins).
    """

    source: str
    event: str
    target: str
    guard: str | None
    sets: tuple[str, ...]
    description: str | None
    order: int
    span: Span
    target_span: Span
    guard_span: Span | None = None
    set_spans: tuple[Span, ...] = ()
    trigger: Trigger = "event"
    # `history: shallow|deep`: enter the target where it was when last left (its default
    # entry the first time).
    history: HistoryKind | None = None
    # A timer (`after:`): its fixed delay in milliseconds, or the datetime field it reads, and
    # its `after:` key as written (`15m`, `PT1H`, the field); its id is in `event`.
    delay_ms: int | None = None
    deadline: str | None = None
    after_key: str | None = None
    # Run context (docs/spec-format.md "Run context"): fields unset when taken, before `sets`.
    clears: tuple[str, ...] = ()
    clear_spans: tuple[Span, ...] = ()
    # `assign: {field: constant}`: the values the spec itself gives when this alternative is
    # taken, and the span of each value. Their fields are in `sets` too (what the transition
    # writes); `given` is what the caller passes.
    assigns: tuple[tuple[str, str | int | float | bool], ...] = ()
    assign_spans: tuple[Span, ...] = ()
    kind: TransitionKind = "external"
    internal_span: Span | None = None  # where `internal: true` is written
    # `actions:` method names run when taken, between the exit and the entry actions.
    actions: tuple[str, ...] = ()
    action_spans: tuple[Span, ...] = ()
    # `in:` states that must all be active for the transition to be enabled (SCXML `In()`),
    # asked against the configuration before the step, before the guard.
    in_states: tuple[str, ...] = ()
    in_spans: tuple[Span, ...] = ()
    # `target: [a2, b2]` (SCXML `target="a2 b2"`): every target, `target` being the first;
    # empty for a transition with one target.
    targets: tuple[str, ...] = ()
    target_spans: tuple[Span, ...] = ()

    @property
    def targetless(self) -> bool:
        return self.kind == "targetless"

    @property
    def all_targets(self) -> tuple[str, ...]:
        """Every state it targets: `targets`, or its one `target`."""
        return self.targets or (self.target,)

    @property
    def move_target(self) -> str:
        """Its target as the runtime's tables and moves hold it: a multi-target transition's
        targets separated by spaces (SCXML's spelling)."""
        return " ".join(self.targets) if self.targets else self.target

    @property
    def move_kind(self) -> str | None:
        """How the runtime takes it (statechart_runtime.chart.chart.Move): its history kind,
        `internal`, `targetless` or `multi`; None for a plain external transition."""
        if self.targets:
            return "multi"
        return self.history or (None if self.kind == "external" else self.kind)

    @property
    def shown_target(self) -> str:
        """The target as messages name it: `targetless` has none; `[a2, b2]`."""
        if self.targets:
            return "[" + ", ".join(self.targets) + "]"
        return "(no target)" if self.kind == "targetless" else self.target

    @property
    def given(self) -> tuple[str, ...]:
        """The fields the caller passes (keyword arguments of the event): `set:`, not the
        constants of `assign:`."""
        if not self.assigns:
            return self.sets
        assigned = {name for name, _ in self.assigns}
        return tuple(name for name in self.sets if name not in assigned)

    @property
    def set_text(self) -> str:
        """What the transition writes, as diagrams label it: `set: a, b=CONSTANT`."""
        constants = {n: str(v).lower() if isinstance(v, bool) else str(v)
                     for n, v in self.assigns}  # as YAML writes them: `true`, not `True`
        return "set: " + ", ".join(f"{n}={constants[n]}" if n in constants else n
                                   for n in self.sets)

    @property
    def condition_text(self) -> str:
        """Its guard and `in:` states as diagrams label them, like a guard: ` [ok, in a, in
        b]`; empty without either."""
        parts = ([self.guard] if self.guard else []) + [f"in {s}" for s in self.in_states]
        return f" [{', '.join(parts)}]" if parts else ""

    @property
    def action_text(self) -> str:
        """The transition's actions as diagrams label them: `do: notify, log`."""
        return "do: " + ", ".join(self.actions)

    @property
    def internal(self) -> bool:
        """Whether the run raises this transition's event itself (completion, timers)."""
        return self.trigger != "event"

    @property
    def shown(self) -> str:
        """The event as messages and pictures name it: `after 15m` for a timer, `done` for a
        completion, else the event's name (`always` for an eventless transition)."""
        if self.trigger == "after":
            return f"after {self.after_key}"
        return "done" if self.trigger == "done" else self.event

    @property
    def key(self) -> str:
        """The transition's key under its state in `remove: {transitions: [STATE.KEY]}`:
        the event (`always` for the eventless ones), or `after.15m` for a timer (its `after:`
        key as written)."""
        return f"{events.TIMER_PREFIX}{self.after_key}" if self.trigger == "after" else self.event

    @property
    def timer_id(self) -> str | None:
        """A timer's id (`delay1`, a `name:`, a deadline field): the KEY of its event
        `after.KEY.STATE`; None for any other transition."""
        found = events.parse(self.event) if self.trigger == "after" else None
        return found.key if found is not None else None


# `work.retry` when a spec gives none (docs/spec-format.md, "Work").
WORK_RETRIES = 3
WORK_BACKOFF = "1s"


@dataclass(frozen=True)
class Work:
    """The work a run does while `state` is active (`work:`, docs/spec-format.md "Work"):
    entering the state enqueues one item for `handler`, leaving it ends the item.

    Durations are kept as written and in milliseconds; a `*_ms` of None means the text is
    not a duration (`invalid-work` reports it). `outcomes` are the events a handler may
    return; `error` the event fired once its attempts are used up (None: the item fails and
    the run stays). `retries` more attempts follow a failed one, the Nth after
    `backoff_ms * 2**(N-1)`.
    """

    state: str
    handler: str
    timeout: str
    timeout_ms: int | None
    outcomes: tuple[str, ...]
    span: Span  # the `work` key
    handler_span: Span
    timeout_span: Span
    outcome_spans: tuple[Span, ...]
    heartbeat: str | None = None
    heartbeat_ms: int | None = None
    heartbeat_span: Span | None = None
    error: str | None = None
    error_span: Span | None = None
    retries: int = WORK_RETRIES
    backoff: str = WORK_BACKOFF
    backoff_ms: int | None = 1000  # WORK_BACKOFF's
    backoff_span: Span | None = None

    @property
    def events(self) -> tuple[tuple[str, Span], ...]:
        """Every event its outcome may fire, with where it is written: the outcomes, then
        the error event."""
        found = tuple(zip(self.outcomes, self.outcome_spans, strict=True))
        if self.error is not None and self.error_span is not None:
            found += ((self.error, self.error_span),)
        return found

    @property
    def row(self) -> tuple[str, str, int, int | None, tuple[str, ...], str | None, int, int]:
        """The row of the generated module's work table
        (statechart_runtime.chart.work.WorkRow)."""
        return (self.state, self.handler, self.timeout_ms or 0, self.heartbeat_ms,
                self.outcomes, self.error, self.retries, self.backoff_ms or 0)

    @property
    def text(self) -> str:
        """How diagrams label it: `work call_tool (5m, heartbeat 30s)` (no colon: Mermaid
        would escape it)."""
        extra = ", ".join(filter(None, (self.timeout, self.heartbeat and
                                        f"heartbeat {self.heartbeat}")))
        return f"work {self.handler} ({extra})"


@fast_init  # built once per state and alternative: statechart.frozen
@dataclass(frozen=True)
class State:
    name: str
    parent: str | None
    kind: StateKind
    description: str | None
    initial: str | None  # child entered by default (compound states only)
    children: tuple[str, ...]
    transitions: tuple[Transition, ...]
    tags: tuple[str, ...]
    entry: tuple[str, ...]  # action method names, run on entry
    exit: tuple[str, ...]  # action method names, run on exit
    requires: tuple[str, ...]  # record fields that must be set while in this state
    limit: int | None  # how many times the state may be entered in one run
    span: Span  # the state's key
    initial_span: Span | None = None
    depth: int = 0
    # (key, name, span) for every name listed under tags/entry/exit/requires/clear
    name_spans: tuple[tuple[str, str, Span], ...] = ()
    # Run context and status vocabulary (docs/spec-format.md "Run context", "Status").
    clear: tuple[str, ...] = ()  # record fields unset when the state is exited
    status: str | None = None  # the status the record reports while this state is active
    counter: str | None = None  # record key: how many times the state was entered
    status_span: Span | None = None
    counter_span: Span | None = None
    # `history_default:` (SCXML's history default transition): (kind, state, span) per
    # history kind, the state a history transition of that kind enters while nothing is
    # remembered (else the state's default entry).
    history_defaults: tuple[tuple[HistoryKind, str, Span], ...] = ()
    work: Work | None = None  # `work:`: what a run does while in this state

    @property
    def is_final(self) -> bool:
        return self.kind == "final"

    def history_default(self, kind: str) -> str | None:
        """The state a `kind` history transition into this one enters when nothing is
        remembered yet; None: the default entry."""
        return next((name for k, name, _ in self.history_defaults if k == kind), None)


@dataclass(frozen=True)
class RecordField:
    name: str
    type: FieldType
    enum: tuple[str, ...]
    description: str | None
    span: Span
    # Run context (docs/spec-format.md "Run context").
    context: bool = False  # the application sets it (at creation, `run.update`), not only events
    default: str | int | float | bool | None = None  # as written (an enum value, RFC 3339 text)
    default_span: Span | None = None


Selector = tuple[Literal["state", "subtree", "tag"], str, Span]


@dataclass(frozen=True)
class SpecRule:
    """A rule the spec states about its own graph (the `rules:` list)."""

    kind: Literal["never", "only", "unreachable"]
    id: str | None
    description: str | None
    sources: tuple[Selector, ...]
    targets: tuple[Selector, ...]
    overridable: bool
    span: Span


@dataclass(frozen=True)
class Migration:
    """How a record stored under `from_version` maps onto this version of the spec."""

    from_version: int
    states: tuple[tuple[str, str, Span], ...]  # (old state, new state, where the new is written)
    fields: tuple[tuple[str, str | None, Span], ...]  # (old field, new field or None: dropped)
    span: Span
    fill: tuple[tuple[str, Span], ...] = ()  # fields an old record lacks: given their default


@dataclass(frozen=True)
class OverlayInfo:
    """How a spec that `extends` another was made: its files, and what it changed."""

    chain: tuple[str, ...]  # the overlay's file first, the root base's last
    changes: tuple[tuple[str, str], ...]  # (kind, name): ("state-added", "escalated"), ...

    @property
    def base(self) -> str:
        return self.chain[1]


@dataclass(frozen=True)
class Repair:
    """Something the builder dropped or misread because of a schema error, and its likely
    intent: the linter checks the model with it put back, and findings that then vanish are
    consequences of the schema error, not problems of their own (see `statechart.linter`).

    `kind` is "transition" (a transition of `state` was dropped; `target` is the state it most
    likely meant, or None when any state could be meant) or "final" (the `final` value of
    `state` was not a boolean; the repair reads it as `true`). `cause` is the span of the
    schema problem that explains it.
    """

    kind: Literal["transition", "final"]
    state: str
    cause: Span
    event: str = ""
    target: str | None = None


@dataclass(frozen=True)
class Spec:
    name: str
    version: int
    description: str | None
    initial: str
    states: dict[str, State] = field(hash=False)  # document order, whole tree
    record: tuple[RecordField, ...]
    rules: tuple[SpecRule, ...]
    path: str
    source_sha256: str
    span: Span  # where `initial` is written (the spec's own position for graph problems)
    name_span: Span | None = None
    version_span: Span | None = None
    overlay: OverlayInfo | None = None
    duplicates: frozenset[str] = frozenset()  # state names defined twice (duplicate-state)
    migrations: tuple[Migration, ...] = ()
    repairs: tuple[Repair, ...] = ()  # what schema errors dropped or misread (linter only)

    @property
    def top_level(self) -> tuple[State, ...]:
        return tuple(s for s in self.states.values() if s.parent is None)

    def always_enabled(self, t: Transition) -> bool:
        """Whether nothing can stop `t` when its event comes: no guard, and every `in:` state
        is its source or an ancestor (active whenever the source is)."""
        return t.guard is None and all(
            s == t.source or s in self.ancestors(t.source) for s in t.in_states)

    def ancestors(self, name: str) -> list[str]:
        """Parent first, root last."""
        out: list[str] = []
        parent = self.states[name].parent
        while parent is not None:
            out.append(parent)
            parent = self.states[parent].parent
        return out

    def subtree(self, name: str) -> list[str]:
        """The state and all its descendants, in document order."""
        out, stack = [], [name]
        while stack:
            current = stack.pop()
            out.append(current)
            stack.extend(reversed(self.states[current].children))
        return out

    def transitions(self) -> list[Transition]:
        """Every alternative, in document order of their states (a new list each call)."""
        # Kept on the instance on first use (a model is not changed once built: `replace`
        # makes a new one): the rules and generators ask dozens of times, and each walk of a
        # 10,000-state spec's 50,000 alternatives took about 10 ms.
        found = self.__dict__.get("_transitions")
        if found is None:
            found = self.__dict__["_transitions"] = tuple(
                t for s in self.states.values() for t in s.transitions)
        return list(found)

    def timers(self) -> list[Transition]:
        """The `after:` transitions, in document order of their states."""
        return [t for t in self.transitions() if t.trigger == "after"]

    def timer_rows(self) -> list[tuple[str, str, int | None, str | None, str]]:
        """One row per timer (not per alternative), as the generated module gives them to the
        runtime (`statechart_runtime.timers.TimerTable`): (state, event, delay in ms or None,
        deadline field or None, `after:` key as written)."""
        rows = {t.event: (t.source, t.event, t.delay_ms, t.deadline, t.after_key or "")
                for t in self.timers()}
        return list(rows.values())

    def work(self) -> list[Work]:
        """The states' `work:`, in document order."""
        return [s.work for s in self.states.values() if s.work is not None]

    def actions(self) -> list[str]:
        """Every action method name (states' `entry`/`exit`, transitions' `actions`), in
        document order, each once."""
        seen: dict[str, None] = {}
        for s in self.states.values():
            seen.update(dict.fromkeys((*s.entry, *s.exit)))
            for t in s.transitions:
                seen.update(dict.fromkeys(t.actions))
        return list(seen)

    def events(self) -> list[str]:
        """Every event name, in first-use order (internal ones, `done.state.X`, included);
        not `*`, which is a descriptor only (docs/spec-format.md, "Event descriptors")."""
        found = self.__dict__.get("_events")  # kept as `transitions` is
        if found is None:
            seen = dict.fromkeys(t.event for t in self.transitions())
            seen.pop("*", None)
            found = self.__dict__["_events"] = tuple(seen)
        return list(found)

    def statuses(self) -> list[str]:
        """The status vocabulary when a state names one (`status:`), in document order: every
        named status, and the name of each top-level state that names none; else []."""
        if not any(s.status for s in self.states.values()):
            return []
        seen: dict[str, None] = {}
        for s in self.states.values():
            if s.status:
                seen.setdefault(s.status, None)
            elif s.parent is None:
                seen.setdefault(s.name, None)
        return list(seen)

    def counters(self) -> dict[str, str]:
        """Counter record key -> the state whose entries it counts (`counter:`)."""
        return {s.counter: s.name for s in self.states.values() if s.counter}

    def record_field(self, name: str) -> RecordField | None:
        for f in self.record:
            if f.name == name:
                return f
        return None
