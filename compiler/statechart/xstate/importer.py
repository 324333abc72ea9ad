"""`statechart import machine.json`: an XState v5 machine config (JSON) as a spec, YAML text
with comments where a name or a construct changed on the way.

What maps (docs/scxml.md, "XState"): states (`type` parallel, final, history; `initial`;
`states`), `on` (a key `k.*` is our descriptor `k`, `*` is `"*"`), `after` (a delay in ms, or
a named delay standing for a deadline field written by our export), `always`, `onDone`,
targets (`#id`, a sibling's key, `.child`, a path `a.b`, arrays), `reenter`, guards and actions
by name, `tags`, `description`; our own keys come back from `meta["statechart-compiler"]`
(what `statechart.xstate.export` writes), so an exported spec comes back as the same model.
What has no equivalent (`invoke`, `context`, a guard or action that is not a name, a delay that
is not a number of ms) is refused, each with its JSON path, and nothing is written.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from statechart import durations
from statechart.diagnostics import Diagnostic, Span
from statechart.scxml import extras
from statechart.scxml.importer import Imported, shorthand, spec_name
from statechart.scxml.names import Names
from statechart.scxml.order import keys_in_order
from statechart.scxml.yaml_text import Block, dump
from statechart.xstate import META
from statechart.xstate.export import IN_GUARD

RULE = "scxml-import"  # the import rule: one for both formats
# State node keys XState has that a spec has no equivalent for, and what to do instead.
REFUSED_KEYS = {
    "invoke": "start the service from an entry action and send its result as an event",
    "context": "declare the values as `record:` fields of the spec, set by events",
    "output": "set the values as record fields on the way into the final state",
    "onError": "send an error event from the application",
}
KNOWN_KEYS = {"id", "key", "type", "initial", "states", "on", "after", "always", "onDone",
              "entry", "exit", "tags", "description", "meta", "history", "target", "version",
              "types"}
STATE_EXTRAS = {key for _, key, _, _ in extras.STATE}
TRANSITION_EXTRAS = {key for _, key, _, _ in extras.TRANSITION}


@dataclass
class _Node:
    path: tuple[str, ...]  # keys from the root
    config: dict[str, Any]
    name: str  # in the spec
    parent: _Node | None
    children: list[_Node] = field(default_factory=list)
    histories: dict[str, dict[str, Any]] = field(default_factory=dict)  # key -> its config


class _Importer:
    def __init__(self, path: str) -> None:
        self.path = path
        self.problems: list[Diagnostic] = []
        self.names = Names()
        self.by_path: dict[tuple[str, ...], _Node] = {}
        self.by_id: dict[str, _Node] = {}
        self.history_of: dict[tuple[str, ...], tuple[_Node, str]] = {}  # path -> (parent, kind)
        self.root_id = "(machine)"  # the machine's `id`: `#ID.a.b` is a path from the root

    def refuse(self, where: tuple[str, ...], message: str, hint: str) -> None:
        shown = ".".join(where) or "the machine"
        self.problems.append(Diagnostic(RULE, "error", f"{shown}: {message}",
                                        Span.point(self.path, 1, 1), hint))

    # -- the states ------------------------------------------------------------------------
    def index(self, config: dict[str, Any], parent: _Node | None,
              path: tuple[str, ...]) -> None:
        states = config.get("states")
        if states is None:
            return
        if not isinstance(states, dict):
            self.refuse((*path, "states"), "`states` is not an object", "write the states "
                        "as an object of state configs")
            return
        for key, child in states.items():
            where = (*path, "states", key)
            if not isinstance(child, dict):
                self.refuse(where, "a state config is not an object", "write it as {...}")
                continue
            if child.get("type") == "history":
                if parent is None:
                    self.refuse(where, "a history state at the top level has no equivalent",
                                "put it inside the state whose history it is")
                    continue
                parent.histories[key] = child
                self.history_of[(*parent.path, key)] = (parent, child.get("history") or
                                                        "shallow")
                if isinstance(child.get("id"), str):
                    self.history_of[("#", child["id"])] = self.history_of[(*parent.path, key)]
                continue
            name, _ = self.names.name("state", key)
            node = _Node((*(parent.path if parent else ()), key), child, name, parent)
            self.by_path[node.path] = node
            if isinstance(child.get("id"), str):
                self.by_id[child["id"]] = node
            if parent is not None:
                parent.children.append(node)
            self.index(child, node, node.path)

    def resolve(self, written: str, source: _Node | None) -> tuple[_Node | None, str | None]:
        """A target as XState resolves it: `#id` (and `#id.path`), `.child`, else a sibling's
        key (or `sibling.child`); a history state gives its parent and its kind."""
        if written.startswith("#"):
            head, _, rest = written[1:].partition(".")
            base = self.by_id.get(head)
            if base is None and ("#", head) in self.history_of:
                return self.history_of[("#", head)]
            start = base.path if base is not None else () if head == self.root_id else None
            parts = rest.split(".") if rest else []
        elif written.startswith("."):
            start = source.path if source is not None else ()
            parts = written[1:].split(".")
        else:
            start = source.parent.path if source is not None and source.parent else ()
            parts = written.split(".")
        if start is None:
            return None, None
        path = start
        for i, part in enumerate(parts):
            path = (*path, part)
            if path in self.history_of and i == len(parts) - 1:
                return self.history_of[path]
            if path not in self.by_path:
                return None, None
        return self.by_path.get(path), None

    def state(self, node: _Node) -> Block:
        config = node.config
        where = node.path
        body = Block()
        for key in config:
            if key in REFUSED_KEYS:
                self.refuse((*where, key), f"`{key}` has no equivalent in a spec",
                            REFUSED_KEYS[key])
            elif key not in KNOWN_KEYS:
                body.note("description" if "description" in config else "states",
                          f"`{key}` dropped: a spec has no such key")
        ours = _ours(config)
        kind = config.get("type")
        if config.get("description") is not None:
            body["description"] = str(config["description"])
        tags = config.get("tags")
        if tags:
            body["tags"] = [tags] if isinstance(tags, str) else list(tags)
        for key, value in extras.read(extras.STATE, {k: v for k, v in _texts(ours).items()
                                                     if k in STATE_EXTRAS}).items():
            if key not in ("description", "tags"):
                body[key] = value
        if kind == "parallel":
            body["parallel"] = True
        elif kind == "final":
            body["final"] = True
        elif node.children:
            initial = config.get("initial")
            child = self.resolve(f".{initial}", node)[0] if isinstance(initial, str) else \
                node.children[0]
            if child is None or child.parent is not node:
                self.refuse((*where, "initial"), f"initial `{initial}` is not a child",
                            "name one of the state's children")
            else:
                body["initial"] = child.name
        for key in ("entry", "exit"):
            names = self.actions(config.get(key), (*where, key))
            if names:
                body[key] = names
        self.transitions(node, body)
        defaults = self.history_defaults(node, body.get("initial"))
        if defaults:
            body["history_default"] = defaults
        if node.children:
            states = Block()
            for child in node.children:
                states[child.name] = self.state(child)
                if child.name != child.path[-1]:
                    states.note(child.name, f"XState key `{child.path[-1]}`")
            body["states"] = states
        return body

    def history_defaults(self, node: _Node, initial: str | None) -> dict[str, str]:
        """A history state's `target` (its default) as the parent's `history_default:` for
        its kind, when it is not the parent's default entry (or our export wrote it)."""
        out: dict[str, str] = {}
        for key, history in node.histories.items():
            kind = history.get("history") or "shallow"
            target = history.get("target")
            written = target[0] if isinstance(target, list) and len(target) == 1 else target
            if written is None or (isinstance(written, list) and node.config.get("type") ==
                                   "parallel" and len(written) == len(node.children)):
                continue  # the default entry
            pseudo = _Node((*node.path, key), history, key, node)
            default = self.resolve(written, pseudo)[0] if isinstance(written, str) else None
            if default is None or not self.inside(default, node):
                self.refuse((*node.path, "states", key, "target"),
                            f"history default `{target}` is not one state inside "
                            f"`{node.name}`", "target one state inside the history's parent")
                continue
            if default.name != initial or _ours(history).get("default") == "written":
                out[kind] = default.name
        return out

    # -- transitions -----------------------------------------------------------------------
    def actions(self, value: Any, where: tuple[str, ...]) -> list[str]:
        out: list[str] = []
        for item in value if isinstance(value, list) else [] if value is None else [value]:
            written = item.get("type") if isinstance(item, dict) else item
            if not isinstance(written, str):
                self.refuse(where, "an action that is not a name has no equivalent",
                            "name the action (`\"notify\"` or `{type: \"notify\"}`): the "
                            "application's method does the work")
                continue
            name, _ = self.names.name("action", written)
            out.append(name)
        return out

    def transition(self, value: Any, node: _Node, where: tuple[str, ...],
                   notes: Block, key: str) -> dict[str, Any] | None:
        if isinstance(value, str):
            value = {"target": value, "reenter": None}
        if not isinstance(value, dict):
            self.refuse(where, "a transition is not a target or an object", "write "
                        "`\"#target\"` or `{target: ..., guard: ..., actions: [...]}`")
            return None
        alternative: dict[str, Any] = {}
        target = value.get("target")
        written = [target] if isinstance(target, str) else list(target or [])
        resolved = [self.resolve(t, node) if isinstance(t, str) else (None, None)
                    for t in written]
        for t, (found, _) in zip(written, resolved, strict=True):
            if found is None:
                self.refuse(where, f"target `{t}` is no state of the machine",
                            "write `#id`, a sibling's key or `.child`")
                return None
        histories = [kind for _, kind in resolved if kind is not None]
        if len(resolved) > 1:
            if histories:
                self.refuse(where, "a transition into a history and other states at once "
                            "has no equivalent", "enter the history alone")
                return None
            alternative["target"] = [found.name for found, _ in resolved if found]
        elif resolved:
            found, kind = resolved[0]
            assert found is not None
            alternative["target"] = found.name
            if kind is not None:
                alternative["history"] = kind
            elif value.get("reenter") is not True and (found is node or self.inside(found,
                                                                                      node)):
                if found is node:  # XState re-enters nothing: our targetless transition
                    del alternative["target"]
                    notes.note(key, "a self-transition without `reenter: true` re-enters "
                                    "nothing in XState: targetless here")
                elif node.children and node.config.get("type") != "parallel":
                    alternative["internal"] = True
        guard = value.get("guard", value.get("cond"))
        if guard is not None:
            self.guard(guard, alternative, where)
        actions = self.actions(value.get("actions"), (*where, "actions"))
        if actions:
            alternative["actions"] = actions
        if value.get("description") is not None:
            alternative["description"] = str(value["description"])
        ours = _ours(value)
        alternative.update(extras.read(extras.TRANSITION, {
            k: v for k, v in _texts(ours).items() if k in TRANSITION_EXTRAS - {"description"}}))
        return alternative

    def guard(self, guard: Any, alternative: dict[str, Any], where: tuple[str, ...]) -> None:
        if isinstance(guard, dict) and guard.get("type") == IN_GUARD:
            params = guard.get("params") or {}
            if params.get("guard"):
                alternative["guard"] = self.names.name("guard", str(params["guard"]))[0]
            states = []
            for written in params.get("in") or []:
                found, _ = self.resolve(str(written), None)
                if found is None:
                    self.refuse(where, f"`in` state `{written}` is no state of the machine",
                                "write `#id`")
                    return
                states.append(found.name)
            alternative["in"] = states
            return
        name = guard.get("type") if isinstance(guard, dict) else guard
        if not isinstance(name, str):
            self.refuse((*where, "guard"), "a guard that is not a name has no equivalent",
                        "name the guard (`\"canRetry\"` or `{type: \"canRetry\"}`); write "
                        "`and`/`or`/`not` as one named guard the application supplies")
            return
        alternative["guard"] = self.names.name("guard", name)[0]

    def inside(self, node: _Node, ancestor: _Node) -> bool:
        current = node.parent
        while current is not None:
            if current is ancestor:
                return True
            current = current.parent
        return False

    def transitions(self, node: _Node, body: Block) -> None:
        config = node.config
        on = config.get("on") or {}
        groups: dict[str, list[dict[str, Any]]] = {}
        notes = Block()
        star_from: str | None = None  # our `*` is written under each `t.*`: read it once
        for xkey, value in on.items() if isinstance(on, dict) else []:
            for i, written in enumerate(value if isinstance(value, list) else [value]):
                where = (*node.path, "on", xkey, str(i))
                meta_key = _ours(written).get("key") if isinstance(written, dict) else None
                if meta_key == "*":
                    star_from = star_from or xkey
                    if xkey != star_from:
                        continue
                key = self.event_key(meta_key or xkey, notes)
                alternative = self.transition(written, node, where, notes, key)
                if alternative is not None:
                    groups.setdefault(key, []).append(alternative)
        if groups:
            block = Block()
            block.notes = notes.notes
            for key in keys_in_order(list(groups)):
                block[key] = shorthand(groups[key])
            body["on"] = block
        after = config.get("after") or {}
        timers = Block()
        for delay, value in after.items() if isinstance(after, dict) else []:
            alternatives = []
            written_key: str | None = None
            for i, written in enumerate(value if isinstance(value, list) else [value]):
                where = (*node.path, "after", str(delay), str(i))
                ours = _ours(written) if isinstance(written, dict) else {}
                written_key = written_key or ours.get("after")
                alternative = self.transition(written, node, where, timers, str(delay))
                if alternative is None:
                    continue
                if i == 0 and ours.get("timer") and not re.fullmatch(
                        r"delay\d+", str(ours["timer"])) and ours["timer"] != ours.get("after"):
                    alternative = {"name": ours["timer"], **alternative}
                alternatives.append(alternative)
            after_key = written_key or (
                durations.text(int(delay)) if str(delay).isdigit() and int(delay) > 0 else None)
            if after_key is None:
                self.refuse((*node.path, "after", str(delay)), f"delay `{delay}` is not a "
                            "number of milliseconds", "write the delay in ms (`\"900000\"` "
                            "for 15 minutes), or use a datetime field as a deadline")
                continue
            if alternatives:
                timers[after_key] = shorthand(alternatives)
        if timers:
            body["after"] = timers
        for xkey, key in (("onDone", "done"), ("always", "always")):
            value = config.get(xkey)
            if value is None:
                continue
            alternatives = [a for i, w in enumerate(value if isinstance(value, list)
                                                    else [value])
                            if (a := self.transition(w, node, (*node.path, xkey, str(i)), body,
                                                     key)) is not None]
            if alternatives:
                body[key] = shorthand(alternatives)

    def event_key(self, written: str, notes: Block) -> str:
        """Our key for an XState `on` key: `k.*` is `k` (which takes `k` and `k.x`), `*` is
        `"*"`; a part that is not a name is renamed."""
        plain = "*" if written in ("*", ".*") else written.removesuffix(".*")
        if plain == "*":
            return plain
        parts = [self.names.name("event", part) for part in plain.split(".")]
        name = ".".join(n for n, _ in parts)
        if any(c for _, c in parts):
            notes.note(name, f"XState event `{written}`")
        return name

    # -- the machine -----------------------------------------------------------------------
    def machine(self, config: dict[str, Any]) -> Block:
        tree = Block()
        ours = _ours(config)
        written_name = config.get("id") if isinstance(config.get("id"), str) else None
        tree["statechart"] = spec_name(written_name, self.path)
        if tree["statechart"] != written_name:
            tree.note("statechart", f"XState id `{written_name}`" if written_name
                      else "the file's name: the machine has no `id`")
        tree["version"] = int(ours.get("version", 1))
        self.root_id = written_name or self.root_id
        if config.get("description") is not None:
            tree["description"] = str(config["description"])
        for key in config:
            if key in REFUSED_KEYS:
                self.refuse((key,), f"`{key}` has no equivalent in a spec", REFUSED_KEYS[key])
        self.index(config, None, ())
        top = [n for n in self.by_path.values() if n.parent is None]
        if not top:
            self.refuse(("states",), "the machine has no states", "give it `states`")
            return tree
        initial = config.get("initial")
        first = self.by_path.get((initial,)) if isinstance(initial, str) else top[0]
        if first is None:
            self.refuse(("initial",), f"initial `{initial}` is not a top-level state",
                        "name one of the machine's states")
        else:
            tree["initial"] = first.name
        if isinstance(ours.get("record"), dict) and ours["record"]:
            record = Block()  # a field per line
            for name, written in ours["record"].items():
                record[name] = written
            tree["record"] = record
        states = Block()
        for node in top:
            states[node.name] = self.state(node)
            if node.name != node.path[-1]:
                states.note(node.name, f"XState key `{node.path[-1]}`")
        tree["states"] = states
        for key in ("rules", "migrations"):
            if ours.get(key):
                tree[key] = ours[key]
        return tree


def _ours(config: Any) -> dict[str, Any]:
    meta = config.get("meta") if isinstance(config, dict) else None
    found = meta.get(META) if isinstance(meta, dict) else None
    return found if isinstance(found, dict) else {}


def _texts(ours: dict[str, Any]) -> dict[str, str]:
    """Our meta values as the text `extras` reads (the tables are SCXML attributes)."""
    out: dict[str, str] = {}
    for key, value in ours.items():
        if isinstance(value, list):
            out[key] = " ".join(str(v) for v in value)
        elif isinstance(value, dict):  # `assign`, `work`: the tables read JSON
            out[key] = json.dumps(value)
        elif isinstance(value, str):
            out[key] = json.dumps(value) if value.startswith('"') else value
        else:
            out[key] = str(value)
    return out


def import_xstate(path: str, data: bytes) -> Imported:
    """The spec an XState machine config (JSON) maps onto, or the diagnostics of what does
    not map."""
    try:
        config = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        return Imported(None, [Diagnostic(RULE, "error", f"the file is not UTF-8: {exc.reason}",
                                          Span.point(path, 1, 1), "save it as UTF-8")])
    except json.JSONDecodeError as exc:
        return Imported(None, [Diagnostic(RULE, "error", f"not JSON: {exc.msg}",
                                          Span.point(path, exc.lineno, exc.colno),
                                          "write the machine config as JSON (what "
                                          "`JSON.stringify(config)` gives)")])
    if not isinstance(config, dict):
        return Imported(None, [Diagnostic(RULE, "error", "the machine config is not an object",
                                          Span.point(path, 1, 1), "write it as {...}")])
    importer = _Importer(path)
    tree = importer.machine(config)
    if importer.problems:
        return Imported(None, importer.problems)
    header = [f"Imported from {Path(path).name} by statechart import. Comments say what an "
              "XState name or construct became."]
    return Imported(dump(tree, header), [])
