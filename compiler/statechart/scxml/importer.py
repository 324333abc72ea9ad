"""`statechart import FILE.scxml`: an SCXML document as a spec, YAML text with comments.

Every SCXML element is looked up in a table (`STATE_CHILDREN`, `EXECUTABLE`, the refusals in
`REFUSED`): what maps is mapped, with a comment where a name or a construct changed on the
way; what has no equivalent is refused with a diagnostic (rule `scxml-import`) at its line,
and then nothing is written. Adding a construct the spec format gains is one entry of a
table and its handler; several targets, history defaults and event descriptors (`*`,
`error.*`) map onto the spec's own. An eventless `<transition>` (no
`event`) is an alternative of the state's `always:`.

What our export writes in its own namespace (`statechart.scxml.extras`) is read back, so an
exported spec comes back as the same model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

from statechart import durations
from statechart.diagnostics import Diagnostic, Span
from statechart.names import SPEC_NAME
from statechart.scxml import NS, SCXML_NS, extras
from statechart.scxml.export import ELEMENT
from statechart.scxml.names import Names
from statechart.scxml.order import Written, keys_in_order, taken
from statechart.scxml.xml_tree import Element, XMLError, parse
from statechart.scxml.yaml_text import Block, dump
from statechart_runtime.chart import events

RULE = "scxml-import"
STATES = frozenset(ELEMENT.values())  # state, parallel, final

# SCXML elements with no equivalent in a spec, and why (the diagnostic's message and hint).
REFUSED: dict[str, tuple[str, str]] = {
    "datamodel": ("a data model: its values and expressions have no equivalent",
                  "declare the values as `record:` fields of the spec, set by events"),
    "data": ("a data model item has no equivalent",
             "declare it as a `record:` field of the spec"),
    "script": ("a script has no equivalent: a spec runs no code of its own",
               "move the code into an action method of the application"),
    "invoke": ("an invoked service or child machine has no equivalent",
               "start it from an entry action and send its result as an event"),
    "donedata": ("done data has no equivalent: a completion event carries no values",
                 "set the values as record fields on the way into the final state"),
    "raise": ("an action raising an event has no equivalent: only the run raises events",
              "send the event from the application after the step"),
    "send": ("a <send> other than a timer of its own state has no equivalent",
             "a timer is `<send event=E delay=D>` in the state's <onentry>, handled by that "
             "state's transitions on E"),
    "cancel": ("a <cancel> other than the one of a timer of its own state has no equivalent",
               "cancel only the state's own timers, in its <onexit>"),
    "several-targets": ("an initial state of several states has no equivalent",
                        "name one child as the initial state (a parallel child starts all of "
                        "its regions)"),
    "history-target": ("a transition into a history and other states at once has no "
                       "equivalent", "enter the history alone, or the states without it"),
    "history-default": ("a history whose default enters several states other than its "
                        "parent's default entry has no equivalent",
                        "make the history's default transition target one state inside its "
                        "parent, or the parent's default entry"),
    "history-content": ("executable content on a history's default transition has no "
                        "equivalent", "move the actions to an entry action of the target"),
    "initial-content": ("executable content on an <initial> transition has no equivalent",
                        "move the actions to an entry action of the initial state"),
    "initial-history": ("an initial <history> of a state entered by default as part of its "
                        "parent's default entry has no equivalent",
                        "target the state's <history> in the transitions that enter its "
                        "parent, or make the history's parent the target"),
    "deep-initial": ("an initial state deeper than a child that a state on the way does not "
                     "enter by its own default has no equivalent",
                     "name a child of the state as its initial state, and give that child its "
                     "own initial"),
    "done-elsewhere": ("a completion event handled on another state than the one that "
                       "completes has no equivalent",
                       "move the transition onto the state whose `done.state` event it is"),
    "timer-elsewhere": ("a timer's event handled on another state has no equivalent",
                        "handle the timer's event on the state whose <onentry> sends it"),
    "same-delay": ("a second timer of a state with the same delay has no equivalent (a "
                   "state's `after:` keys are its delays)",
                   "send one event for both, or make one delay differ by a millisecond"),
    "delay-unit": ("a delay in a unit SCXML does not have (its delays are CSS times: a "
                   "number of `s` or `ms`)",
                   "write it in seconds or milliseconds: `delay=\"7200s\"` for two hours"),
    "delayexpr": ("a timer whose delay is an expression has no equivalent",
                  "write the delay as `delay=\"30s\"`, or set a datetime field and use it as "
                  "a deadline"),
}

# Executable content that becomes a named action: the application's method does the work.
EXECUTABLE = frozenset({"log", "assign", "if", "foreach"})

_CSS_TIME = re.compile(r"(\d+(?:\.\d+)?|\.\d+)(ms|s)\Z")
_TERM = re.compile(r"In\(\s*(['\"])(?P<state>[^'\"]+)\1\s*\)|(?P<name>[A-Za-z][A-Za-z0-9_]*)\Z")
_AND = re.compile(r"\s+and\s+|\s*&&\s*")


@dataclass
class Imported:
    """The spec's text (None when something was refused) and the diagnostics."""

    text: str | None
    diagnostics: list[Diagnostic]


@dataclass
class _Node:
    """A state of the document: its element, its name in the spec, its parent's."""

    element: Element
    name: str
    parent: str | None
    children: list[str] = field(default_factory=list)
    histories: dict[str, tuple[Element, str]] = field(default_factory=dict)  # id -> (el, type)


def _scxml(element: Element) -> bool:
    """SCXML's namespace, or none (a document that forgot `xmlns` is read as SCXML too)."""
    return element.namespace in (SCXML_NS, "")


class _Importer:
    def __init__(self, path: str) -> None:
        self.path = path
        self.problems: list[Diagnostic] = []
        self.names = Names()
        self.nodes: dict[str, _Node] = {}  # SCXML id -> node
        self.history_of: dict[str, tuple[str, str]] = {}  # history id -> (state id, type)
        self.found_timers: dict[str, dict[str, tuple[Element, str]]] = {}
        self.timer_like: set[int] = set()  # ids of the <send> elements read as timers
        self.initial_histories: dict[str, str] = {}  # state id -> kind of its initial history
        self.initial_child: dict[str, str] = {}  # state id -> its `initial:` (such a state's)

    def refuse(self, element: Element, reason: str, detail: str = "") -> None:
        message, hint = REFUSED[reason]
        where = f"<{element.name}>" + (f" {detail}" if detail else "")
        self.problems.append(Diagnostic(RULE, "error", f"{where}: {message}",
                                        Span.point(self.path, element.line, element.column),
                                        hint))

    # -- the states ------------------------------------------------------------------------
    def index(self, parent: Element, parent_id: str | None) -> None:
        """Every state of the document, with its name in the spec (states first: they keep
        their SCXML ids when those are names)."""
        for child in parent.children:
            if not _scxml(child):
                continue
            if child.name in STATES:
                scxml_id = child.get("id") or f"state_line{child.line}"
                name, _ = self.names.name("state", scxml_id)
                self.nodes[scxml_id] = _Node(child, name, parent_id)
                if parent_id is not None:
                    self.nodes[parent_id].children.append(scxml_id)
                self.index(child, scxml_id)
            elif child.name == "history" and parent_id is not None:
                history_id = child.get("id") or f"history_line{child.line}"
                kind = child.get("type") or "shallow"
                self.nodes[parent_id].histories[history_id] = (child, kind)
                self.history_of[history_id] = (parent_id, kind)

    def initial(self, element: Element, children: list[str], owner: str) -> str | None:
        """The spec name of the initial child: `initial=`, `<initial>`, else the first child."""
        written = element.get("initial")
        initial_element = next((c for c in element.children
                                if _scxml(c) and c.name == "initial"), None)
        if initial_element is not None:
            transition = next((c for c in initial_element.children
                               if _scxml(c) and c.name == "transition"), None)
            written = transition.get("target") if transition is not None else None
            if transition is not None and any(_scxml(c) for c in transition.children):
                self.refuse(transition, "initial-content", f"of `{owner}`")
        if written is None:
            return self.nodes[children[0]].name if children else None
        if len(written.split()) > 1:
            self.refuse(initial_element or element, "several-targets",
                        f"initial `{written}` of `{owner}`")
            return None
        owner_id = element.get("id")
        if owner_id in self.nodes and written in self.nodes[owner_id].histories:
            return self.initial_child.get(owner_id)  # found first: `find_initial_histories`
        if written not in children:
            child = self.deep_initial(written, children)
            if child is None:
                self.refuse(initial_element or element, "deep-initial",
                            f"initial `{written}` of `{owner}`")
            return child
        return self.nodes[written].name

    def deep_initial(self, written: str, children: list[str]) -> str | None:
        """An initial deeper than a child (SCXML allows any descendant): the child on the way
        to it, when each state on the way enters the next by its own default (so the spec's
        `initial:`s say the same); else None."""
        if written not in self.nodes:
            return None
        path = [written]
        while path[-1] not in children:
            parent = self.nodes[path[-1]].parent
            if parent is None:
                return None
            path.append(parent)
        for inner, outer in pairwise(path):  # inner is outer's child
            node = self.nodes[outer]
            if node.element.name == "parallel":
                continue  # every region is entered
            own, _ = _written_initial(node.element)
            if (own or (node.children[0] if node.children else None)) != inner:
                return None
        return self.nodes[path[-1]].name

    def find_initial_histories(self) -> None:
        """The states whose initial is a <history> child, before any transition is read (the
        transitions into them become history transitions)."""
        for owner_id, node in self.nodes.items():
            written, where = _written_initial(node.element)
            if written in node.histories:
                child = self.initial_history(where, owner_id, written)
                if child is not None:
                    self.initial_child[owner_id] = child

    def initial_history(self, element: Element, owner_id: str, history_id: str) -> str | None:
        """`initial="h"`, `h` a `<history>` child: the state is entered by its history
        whenever it is entered by default. In the spec: the transitions that target it are
        history transitions, its `initial` is the child on the way to the history's default
        (`histories` makes the default its `history_default:`). Refused when the state can be
        entered by default otherwise (as its parent's default entry, after the start)."""
        node = self.nodes[owner_id]
        history, kind = node.histories[history_id]
        transition = next((c for c in history.children
                           if _scxml(c) and c.name == "transition"), None)
        targets = (transition.get("target") or "").split() if transition is not None else []
        if len(targets) != 1 or targets[0] not in self.nodes or \
                not self.inside(targets[0], node):
            self.refuse(element, "history-default", f"of history `{history_id}`, the initial "
                                                    f"of `{node.name}`")
            return None
        entering = self.entered_by_default_with(owner_id)
        if entering is not None:
            self.refuse(element, "initial-history", f"`{history_id}` of `{node.name}` "
                        f"(entered by default with `{self.nodes[entering].name}`)")
            return None
        self.initial_histories[owner_id] = kind
        child = targets[0]
        while self.nodes[child].parent != owner_id:
            child = self.nodes[child].parent or ""
        return self.nodes[child].name

    def entered_by_default_with(self, scxml_id: str) -> str | None:
        """An ancestor whose default entry enters `scxml_id` and that a transition targets
        (so the state is entered by default after the start), else None."""
        targeted = {t for n in self.nodes.values() for c in n.element.children
                    if _scxml(c) and c.name == "transition"
                    for t in (c.get("target") or "").split()}
        targeted |= {t for t, (parent, _) in self.history_of.items()}  # conservatively
        current = scxml_id
        while True:
            parent_id = self.nodes[current].parent
            if parent_id is None:
                return None
            parent = self.nodes[parent_id]
            first = parent.children[0] if parent.children else None
            on_default = parent.element.name == "parallel" or \
                (_written_initial(parent.element)[0] or first) == current
            if not on_default:
                return None
            histories = set(parent.histories)
            if parent_id in targeted or histories & targeted:
                return parent_id
            current = parent_id

    def state(self, scxml_id: str) -> Block:
        node = self.nodes[scxml_id]
        element = node.element
        body = Block()
        for key, value in extras.read(extras.STATE, element.ours(NS)).items():
            body[key] = value
        if element.name == "parallel":
            body["parallel"] = True
        elif element.name == "final":
            body["final"] = True
        elif node.children:
            initial = self.initial(element, node.children, node.name)
            if initial is not None:
                body["initial"] = initial
        timers = self.timers(node)
        self.content_of(node, "onentry", "entry", body, timers)
        self.content_of(node, "onexit", "exit", body, timers)
        self.transitions(node, body, timers)
        for child in element.children:
            if not _scxml(child):
                continue
            if child.name in REFUSED:
                self.refuse(child, child.name, f"in `{node.name}`")
            elif child.name not in (*STATES, "history", "initial", "onentry", "onexit",
                                    "transition"):
                self.problems.append(Diagnostic(
                    RULE, "error", f"<{child.name}> is not an SCXML element of a state",
                    Span.point(self.path, child.line, child.column),
                    "remove it, or give it a namespace of its own"))
        defaults = self.histories(node, body.get("initial"))
        if defaults:
            body["history_default"] = defaults
        if node.children:
            states = Block()
            for child_id in node.children:
                child_node = self.nodes[child_id]
                states[child_node.name] = self.state(child_id)
                if child_node.name != child_id:
                    states.note(child_node.name, f"SCXML id `{child_id}`")
            body["states"] = states
        return body

    def histories(self, node: _Node, initial: str | None) -> dict[str, str]:
        """A history maps onto `history:` of the transitions into its parent; its default
        transition onto the parent's `history_default:` (by kind) when it enters one state
        other than the parent's default entry, or is marked as written by our export."""
        element = node.element
        defaults: dict[str, str] = {}
        for history_id, (history, kind) in node.histories.items():
            transition = next((c for c in history.children
                               if _scxml(c) and c.name == "transition"), None)
            if transition is None:
                continue
            if any(_scxml(c) for c in transition.children):
                self.refuse(transition, "history-content", f"of history `{history_id}`")
            targets = sorted((transition.get("target") or "").split())
            if element.name == "parallel":
                default = sorted(node.children)
            else:
                default = sorted(i for i, n in self.nodes.items() if n.name == initial)
            written = history.ours(NS).get("default") == "written"
            if targets == default and not written:
                continue
            if len(targets) != 1 or targets[0] not in self.nodes:
                self.refuse(transition, "history-default",
                            f"of history `{history_id}` (targets `{' '.join(targets)}`)")
                continue
            defaults[kind] = self.nodes[targets[0]].name
        return defaults

    # -- timers ----------------------------------------------------------------------------
    def timers(self, node: _Node) -> dict[str, tuple[Element, str]]:
        """The state's timers: <send> elements of its <onentry> that send it an event later,
        by event: (the element, its `after:` key). Found once per state (`found_timers`)."""
        if node.name in self.found_timers:
            return self.found_timers[node.name]
        out: dict[str, tuple[Element, str]] = self.found_timers.setdefault(node.name, {})
        keys: set[str] = set()
        for block in node.element.children:
            if not (_scxml(block) and block.name == "onentry"):
                continue
            for send in block.children:
                if not (_scxml(send) and send.name == "send"):
                    continue
                event = send.get("event")
                other = {k for (ns, k) in send.attributes if ns == ""} - {
                    "event", "id", "delay", "delayexpr"}
                if event is None or other or any(_scxml(c) for c in send.children) or (
                        send.get("delay") is None and send.get("delayexpr") is None):
                    continue  # not a timer: refused as content
                self.timer_like.add(id(send))  # refused here if at all, not as content
                key = self.timer_key(send)
                if key is not None and key in keys:
                    self.refuse(send, "same-delay", f"`{send.get('delay')}` in `{node.name}`")
                elif key is not None:
                    keys.add(key)
                    out[event] = (send, key)
        return out

    def timer_key(self, send: Element) -> str | None:
        written = send.ours(NS).get("after")
        delay = send.get("delay")
        if delay is None:  # `delayexpr`: only ours, a deadline timer naming its field
            if written is None or written != send.get("delayexpr"):
                self.refuse(send, "delayexpr", f"`{send.get('delayexpr')}`")
                return None
            return written
        found = _CSS_TIME.match(delay.strip())
        ms = None
        if found:
            value = float(found.group(1)) * (1 if found.group(2) == "ms" else 1000)
            ms = int(value) if value == int(value) and value > 0 else None
        if ms is None and re.fullmatch(r"\s*\d+(\.\d+)?\s*[a-zA-Z]+\s*", delay):
            self.refuse(send, "delay-unit", f"delay `{delay}`")
            return None
        if ms is None:
            self.refuse(send, "delayexpr", f"delay `{delay}`")
            return None
        if written is not None and durations.parse(written) == ms:
            return written
        return durations.text(ms)

    # -- executable content ------------------------------------------------------------------
    def actions(self, content: Element, stem: str, where: Block, key: str,
                timers: dict[str, tuple[Element, str]]) -> list[str]:
        """The named actions of a block of executable content (timers' sends and cancels
        excluded: they are the state's `after:`)."""
        out: list[str] = []
        timer_ids = {send.get("id") or event for event, (send, _) in timers.items()}
        for item in content.children:
            if not _scxml(item):
                continue
            if item.name == "send" and id(item) in self.timer_like:
                continue
            if item.name == "cancel" and content.name == "onexit" and \
                    item.get("sendid") in timer_ids:
                continue
            label = item.get("label")
            if item.name == "log" and label is not None and item.get("expr") is None:
                name, changed = self.names.name("action", label)
                if changed:
                    where.note(key, f"action `{name}`: <log label=\"{label}\"> (line "
                               f"{item.line})")
                out.append(name)
            elif item.name in EXECUTABLE:
                name, _ = self.names.name("action", f"{stem}_{item.line}_{item.column}")
                shown = " ".join(f'{k}="{v}"' for (ns, k), v in item.attributes.items())
                where.note(key, f"action `{name}` stands for <{item.name}{' ' * bool(shown)}"
                                f"{shown[:80]}> (line {item.line}): write it as a method")
                out.append(name)
            elif item.name in REFUSED:
                self.refuse(item, item.name)
            else:
                self.problems.append(Diagnostic(
                    RULE, "error", f"<{item.name}> is not SCXML executable content",
                    Span.point(self.path, item.line, item.column),
                    "remove it, or give it a namespace of its own"))
        return out

    def content_of(self, node: _Node, tag: str, key: str, body: Block,
                   timers: dict[str, tuple[Element, str]]) -> None:
        names: list[str] = []
        for block in node.element.children:
            if _scxml(block) and block.name == tag:
                names += self.actions(block, f"{node.name}_{key}", body, key, timers)
        if names:
            body[key] = names

    # -- transitions -----------------------------------------------------------------------
    def condition(self, cond: str, alternative: dict[str, Any], where: Block, key: str) -> None:
        """`cond` as a guard name and `in:` states when it is a conjunction of a name and
        `In('x')` terms (what our export writes), else one named guard standing for it."""
        terms = [_TERM.match(part.strip()) for part in _AND.split(cond.strip())]
        names = [t.group("name") for t in terms if t is not None and t.group("name")]
        if all(terms) and len(names) <= 1 and not {"and", "or", "not"} & set(names):
            states = [t.group("state") for t in terms if t is not None and t.group("state")]
            if names:
                guard, changed = self.names.name("guard", names[0])
                if changed:
                    where.note(key, f"guard `{guard}`: cond `{names[0]}`")
                alternative["guard"] = guard
            if states:
                alternative["in"] = [self.nodes[s].name if s in self.nodes else s
                                     for s in states]
            return
        guard, _ = self.names.name("guard", cond)
        where.note(key, f"guard `{guard}` stands for cond `{cond}`: write it as a method")
        alternative["guard"] = guard

    def target(self, element: Element, node: _Node, alternative: dict[str, Any],
               where: Block, key: str) -> None:
        written = (element.get("target") or "").split()
        if not written:
            return
        if len(written) > 1:  # several targets: `target: [a2, b2]`
            if any(t in self.history_of for t in written):
                self.refuse(element, "history-target", f"target `{' '.join(written)}`")
                return
            alternative["target"] = [self.nodes[t].name if t in self.nodes else t
                                     for t in written]
            return
        target = written[0]
        if target in self.history_of:
            target, kind = self.history_of[target]
            alternative["history"] = kind
        elif target in self.initial_histories:  # entered by default: by its initial history
            alternative["history"] = self.initial_histories[target]
            where.note(key, f"`history: {alternative['history']}`: the initial of "
                            f"`{self.nodes[target].name}` is its <history>")
        alternative["target"] = self.nodes[target].name if target in self.nodes else target
        if element.get("type") == "internal":
            inside = target != node.element.get("id") and self.inside(target, node)
            if inside and node.element.name == "state" and node.children:
                alternative["internal"] = True
            else:
                where.note(key, "type=\"internal\" dropped: SCXML takes this transition as "
                                "external (its target is not inside its compound source)")

    def inside(self, scxml_id: str, ancestor: _Node) -> bool:
        current = self.nodes.get(scxml_id)
        while current is not None and current.parent is not None:
            if self.nodes[current.parent] is ancestor:
                return True
            current = self.nodes[current.parent]
        return False

    def transitions(self, node: _Node, body: Block,
                    timers: dict[str, tuple[Element, str]]) -> None:
        """The state's transitions as `on:`, `after:`, `done:` and `always:`, in SCXML's
        document order (`statechart.scxml.order`); a transition on several descriptors
        (`event="go stop"`) is one alternative under each."""
        on, after = Block(), Block()
        written: dict[str, list[Written]] = {"on": [], "after": [], "done": [], "always": []}
        scxml_id = node.element.get("id") or ""
        for element in node.element.children:
            if not (_scxml(element) and element.name == "transition"):
                continue
            event = element.get("event")
            entries: list[tuple[str, Block, str]] = []  # (group, where its notes go, key)
            descriptors: list[str | None] = [*(event or "").split()] or [None]
            for descriptor in descriptors:
                entry = self.place(element, node, descriptor, scxml_id, timers,
                                   (body, on, after))
                if entry is not None:
                    entries.append(entry)
            if not entries:
                continue
            group, where, key = entries[0]
            alternative: dict[str, Any] = {}
            self.target(element, node, alternative, where, key)
            if element.get("cond"):
                self.condition(element.get("cond") or "", alternative, where, key)
            alternative.update(extras.read(extras.TRANSITION, element.ours(NS)))
            actions = self.actions(element, f"{node.name}_{key}", where, key, {})
            if actions:
                alternative["actions"] = actions
            limited = self.limited(alternative)
            for group, _, key in entries:
                written[group].append(Written(key, element.line, dict(alternative), limited))
        for group, where in (("on", on), ("after", after), ("done", body), ("always", body)):
            keys = list(dict.fromkeys(w.key for w in written[group]))
            for key in keys_in_order(keys) if group == "on" else keys:
                kept, dropped = taken(key, written[group], descriptors=group == "on")
                for w, winner in dropped:
                    where.note(winner.key, f"the transition of line {w.line} is dropped: SCXML "
                                           f"never takes it (line {winner.line} is taken "
                                           "whenever it would be)")
                if kept:
                    alternatives = [dict(w.alternative) for w in kept]
                    if group == "after":
                        self.name_timer(key, kept, alternatives, node, timers)
                    where[key] = shorthand(alternatives)
        for block, key in ((on, "on"), (after, "after")):
            if block:
                body[key] = block

    def place(self, element: Element, node: _Node, descriptor: str | None, scxml_id: str,
              timers: dict[str, tuple[Element, str]],
              blocks: tuple[Block, Block, Block]) -> tuple[str, Block, str] | None:
        """Where a transition on `descriptor` goes: (`on`, `after`, `done` or `always`, the
        block its comments go in, its key); None when refused. `blocks`: the state's, its
        `on:`'s and its `after:`'s."""
        body, on, after = blocks
        if descriptor is None:  # eventless (no `event`, or an empty one): `always:`
            return ("always", body, "always")
        if descriptor == events.done_event(scxml_id):
            return ("done", body, "done")
        if descriptor in timers:
            return ("after", after, timers[descriptor][1])
        if events.is_done(descriptor):
            self.refuse(element, "done-elsewhere", f"`{descriptor}` on `{node.name}`")
            return None
        # SCXML's descriptors are ours: `error` (or `error.*`) takes `error.tool`, and a run
        # takes `error.tool.x` too (an open family); `*` every event the spec lists or is a
        # member of a family of, not a name of its own: say so at the line.
        # A part that is not a name is renamed part by part.
        plain = "*" if descriptor in ("*", ".*") else descriptor.removesuffix(".*")
        if plain == "*":
            on.note(plain, f"SCXML `{descriptor}` (line {element.line}) also takes events "
                           "the document does not name; a run takes those its spec lists "
                           "and their families' (`a.b` under `a`): add a key for another "
                           "one the application sends")
            return ("on", on, plain)
        parts = [self.names.name("event", part) for part in plain.split(".")]
        event_name = ".".join(name for name, _ in parts)
        if any(c for _, c in parts):
            on.note(event_name, f"SCXML event `{descriptor}`")
        return ("on", on, event_name)

    def limited(self, alternative: dict[str, Any]) -> bool:
        """Whether the alternative enters a state with a `limit:` (ours, from our export):
        then a run may refuse it even unguarded, and the ones after it are tried."""
        targets = alternative.get("target", [])
        names = [targets] if isinstance(targets, str) else targets
        return any(n.name in names and n.element.ours(NS).get("limit") is not None
                   for n in self.nodes.values())

    def name_timer(self, key: str, kept: list[Written], alternatives: list[dict[str, Any]],
                   node: _Node, timers: dict[str, tuple[Element, str]]) -> None:
        """The `name:` of the timer whose `after:` key is `key`, on its first alternative."""
        event, (send, _) = next((e, t) for e, t in timers.items() if t[1] == key)
        name = self.timer_name(event, node, send, key, timers)
        if name is not None:
            alternatives[0] = {"name": name, **alternatives[0]}

    def timer_name(self, event: str, node: _Node, send: Element, key: str,
                   timers: dict[str, tuple[Element, str]]) -> str | None:
        """The timer's `name:`: none when its event is the one the spec would give it."""
        found = events.parse(event)
        if found is not None and found.kind == "after" and found.state == node.name:
            delays = [k for _, k in timers.values() if durations.looks_like_delay(k)]
            position = delays.index(key) + 1 if key in delays else 0
            default = key if not durations.looks_like_delay(key) else \
                events.delay_key(position)
            return None if found.key == default else found.key
        name, _ = self.names.name("timer", event)
        if durations.looks_like_delay(name):
            name = f"timer_{name}"
        return name

    def refuse_timer_events(self) -> None:
        """A timer's event is its state's: handled anywhere else, it would need an event the
        application sends."""
        for node in self.nodes.values():
            for event, (send, _) in self.timers(node).items():
                for other in self.nodes.values():
                    if other is node:
                        continue
                    for t in other.element.children:
                        if _scxml(t) and t.name == "transition" and \
                                event in (t.get("event") or "").split():
                            self.refuse(t, "timer-elsewhere",
                                        f"`{event}` on `{other.name}`, sent by `{node.name}` "
                                        f"(line {send.line})")

    # -- the document ----------------------------------------------------------------------
    def document(self, root: Element) -> Block:
        tree = Block()
        ours = root.ours(NS)
        tree["statechart"] = spec_name(root.get("name"), self.path)
        if tree["statechart"] != root.get("name"):
            tree.note("statechart", f"SCXML name `{root.get('name')}`" if root.get("name")
                      else "the file's name: the document has no `name`")
        tree["version"] = int(ours.get("spec-version", "1"))
        if "description" in ours:
            tree["description"] = extras.text_in(ours["description"])
        self.index(root, None)
        self.find_initial_histories()
        top = [i for i, n in self.nodes.items() if n.parent is None]
        initial = self.initial(root, top, "the document")
        if initial is not None:
            tree["initial"] = initial
        record = Block()
        for element in root.children:
            if element.namespace == NS and element.name == "field":
                record[element.get("name") or ""] = extras.read(extras.FIELD, element.ours(""))
        if record:
            tree["record"] = record
        self.refuse_timer_events()
        states = Block()
        for scxml_id in top:
            states[self.nodes[scxml_id].name] = self.state(scxml_id)
            if self.nodes[scxml_id].name != scxml_id:
                states.note(self.nodes[scxml_id].name, f"SCXML id `{scxml_id}`")
        tree["states"] = states
        for element in root.children:
            if _scxml(element) and element.name in REFUSED:
                self.refuse(element, element.name)
        rules = [_rule(e) for e in root.children if e.namespace == NS and e.name == "rule"]
        if rules:
            tree["rules"] = rules
        migrations = [_migration(e) for e in root.children
                      if e.namespace == NS and e.name == "migration"]
        if migrations:
            tree["migrations"] = migrations
        return tree


def _written_initial(element: Element) -> tuple[str | None, Element]:
    """A state's initial as written (`initial=`, or its `<initial>`'s transition target),
    and the element that says it."""
    for child in element.children:
        if _scxml(child) and child.name == "initial":
            transition = next((c for c in child.children
                               if _scxml(c) and c.name == "transition"), None)
            return (transition.get("target") if transition is not None else None), child
    return element.get("initial"), element


def shorthand(group: list[dict[str, Any]]) -> Any:
    """An event's alternatives as the spec writes them: `event: target` for one plain target."""
    if len(group) == 1:
        only = group[0]
        # (not a list of targets: `event: [a, b]` is two alternatives)
        return only["target"] if set(only) == {"target"} and isinstance(only["target"], str) \
            else only
    return group


def _selectors(text: str) -> list[Any]:
    return [{"tag": word[4:]} if word.startswith("tag:") else word for word in text.split()]


def _rule(element: Element) -> dict[str, Any]:
    rule: dict[str, Any] = {}
    if element.get("rule-id") is not None:
        rule["id"] = element.get("rule-id")
    rule[element.get("kind") or "never"] = {"from": _selectors(element.get("from") or ""),
                                            "to": _selectors(element.get("to") or "")}
    if element.get("description") is not None:
        rule["description"] = extras.text_in(element.get("description") or "")
    if element.get("overridable") == "true":
        rule["overridable"] = True
    return rule


def _migration(element: Element) -> dict[str, Any]:
    migration: dict[str, Any] = {"from_version": int(element.get("from-version") or "0")}
    states = {e.get("old"): e.get("new") for e in element.children if e.name == "rename-state"}
    fields = {e.get("old"): e.get("new") for e in element.children if e.name == "rename-field"}
    fill = [e.get("field") for e in element.children if e.name == "fill"]
    for key, value in (("states", states), ("fields", fields), ("fill", fill)):
        if value:
            migration[key] = value
    return migration


def spec_name(written: str | None, path: str) -> str:
    """The spec's name: the document's `name`, else the file's, as lower snake_case."""
    for text in (written, Path(path).stem):
        if not text:
            continue
        name = re.sub(r"[^a-z0-9_]+", "_", text.lower()).strip("_")
        name = re.sub(r"^[^a-z]+", "", name)[:64]
        if SPEC_NAME.match(name) and name != "index":
            return name
    return "imported"


def import_scxml(path: str, data: bytes) -> Imported:
    """The spec an SCXML document maps onto, or the diagnostics of what does not map."""
    try:
        root = parse(data)
    except XMLError as exc:
        return Imported(None, [Diagnostic(RULE, "error", str(exc),
                                          Span.point(path, exc.line, exc.column),
                                          "fix the file so that it is well-formed XML")])
    if not (_scxml(root) and root.name == "scxml"):
        return Imported(None, [Diagnostic(
            RULE, "error", f"the document's root is <{root.name}>, not <scxml>",
            Span.point(path, root.line, root.column), "import an SCXML document")])
    importer = _Importer(path)
    tree = importer.document(root)
    if importer.problems:
        return Imported(None, sorted(importer.problems, key=Diagnostic.sort_key))
    header = [f"Imported from {Path(path).name} by statechart import. Comments say what an "
              "SCXML name or element became."]
    return Imported(dump(tree, header), [])
