"""Overlays: a spec that says `extends: BASE` is merged onto its base before it is built.

The merge works on YAML nodes, not on the model, so the merged tree goes through the same
builder and rules as any spec; every node remembers the file it came from (`Merged.files`), so
a problem is reported where it was written, in the base or in the overlay.

What an overlay can do, and nothing else (nothing disappears by omission):
- add states, explicitly, under `add: {states: ...}` (at the top level, or inside an existing
  state by naming it there with only `states:`);
- change an existing state, wherever it is nested, by naming it under `states:`: its `on:`
  events and `after:` timers are added or replaced one by one; `tags`, `requires`, `entry`,
  `exit`, `clear` are extended; other keys (`status`, `counter`, ...) replaced. A name the
  base does not have is an error (a typo must not silently become a new state);
- add record fields and rules; replace a base rule by its `id` only where the base marks it
  `overridable: true` (the base's other rules stay in force: an overlay cannot weaken them);
- remove states, transitions (`STATE.EVENT`; a timer: `STATE.after.15m`, or
  `STATE.after.NAME` for a timer with a `name:`), record fields and
  overridable rules, explicitly, under `remove:`. Removals apply before additions, so
  remove-then-add replaces.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from statechart.build_model import did_you_mean
from statechart.diagnostics import Diagnostic, Span
from statechart.spec_file import SpecFileError, read_spec, specs_root
from statechart.yaml_source import MAP_TAG, SEQ_TAG, Source, load_bytes, scalar_value, span_of
from statechart_runtime import events

MAX_CHAIN = 16
ID = "overlay"


@dataclass(frozen=True)
class Change:
    """One thing an overlay did to its base, for docs and diagrams."""

    kind: str  # state-added, state-changed, state-removed, transition-added, ...
    name: str  # the state, `STATE.EVENT`, field or rule id
    # Where the overlay asked for it; set for removals, to which the linter attributes the
    # base's problems that the removal causes (`statechart.linter`).
    span: Span | None = None


@dataclass
class Merged:
    source: Source  # the merged tree (path: the overlay's file)
    files: dict[int, str] = field(default_factory=dict)  # id(node) -> file, for base nodes
    chain: list[str] = field(default_factory=list)  # overlay first, root base last
    changes: list[Change] = field(default_factory=list)
    # Every copied node, kept alive: `files` is keyed by id(), and a freed node's id could be
    # reused by a node made later, which would then be reported in the wrong file.
    alive: list[yaml.Node] = field(default_factory=list)
    sources: list[Source] = field(default_factory=list)  # each file as read (suppressions)


def _key(node: yaml.Node) -> str | None:
    if isinstance(node, yaml.ScalarNode):
        value = scalar_value(node)
        return value if isinstance(value, str) else None
    return None


def _get(mapping: yaml.Node, key: str) -> tuple[yaml.Node, yaml.Node] | None:
    if isinstance(mapping, yaml.MappingNode):
        for k, v in mapping.value:
            if _key(k) == key:
                return k, v
    return None


def _timer_names(value: yaml.Node) -> set[str]:
    """The `name:`s written on the alternatives of one `after:` entry."""
    alternatives = value.value if isinstance(value, yaml.SequenceNode) else [value]
    return {name for alt in alternatives if (found := _get(alt, "name")) is not None
            and (name := _key(found[1])) is not None}


def _set(mapping: yaml.MappingNode, key_node: yaml.Node, value: yaml.Node) -> None:
    key = _key(key_node)
    for i, (k, _) in enumerate(mapping.value):
        if _key(k) == key:
            mapping.value[i] = (mapping.value[i][0], value)
            return
    mapping.value.append((key_node, value))


def _empty_map(like: yaml.Node) -> yaml.MappingNode:
    return yaml.MappingNode(MAP_TAG, [], like.start_mark, like.end_mark, flow_style=False)


def _copy_tree(root: yaml.Node, path: str, files: dict[int, str],
               alive: list[yaml.Node]) -> yaml.Node:
    """Copy the containers of a tree (scalars are shared), recording each node's file."""
    copies: dict[int, yaml.Node] = {}
    order: list[yaml.Node] = []
    stack = [root]
    while stack:
        node = stack.pop()
        order.append(node)
        if isinstance(node, yaml.MappingNode):
            stack.extend(v for pair in node.value for v in pair)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    for node in reversed(order):  # children before parents
        if isinstance(node, yaml.MappingNode):
            new: yaml.Node = yaml.MappingNode(
                node.tag, [(copies[id(k)], copies[id(v)]) for k, v in node.value],
                node.start_mark, node.end_mark, flow_style=node.flow_style)
        elif isinstance(node, yaml.SequenceNode):
            new = yaml.SequenceNode(node.tag, [copies[id(v)] for v in node.value],
                                    node.start_mark, node.end_mark, flow_style=node.flow_style)
        else:
            new = node
        copies[id(node)] = new
        alive.append(new)
        files.setdefault(id(new), path)
    return copies[id(root)]


class _Resolver:
    def __init__(self, files: dict[int, str], problems: list[Diagnostic]) -> None:
        self.files = files
        self.problems = problems
        self.changes: list[Change] = []
        self.overlay_path = ""  # the file being applied; its nodes are not in `files`
        self.removals = True  # False: leave `remove:` out (what the removals cause, by diff)
        self.added: list[str] = []  # the states the overlay being applied adds (`add:`)

    def span(self, node: yaml.Node) -> Span:
        return span_of(self.files.get(id(node), self.overlay_path), node)

    def error(self, node: yaml.Node, message: str, hint: str = "") -> None:
        self.problems.append(Diagnostic(ID, "error", message, self.span(node), hint))

    # -- states ----------------------------------------------------------------------------
    def index(self, root: yaml.MappingNode) -> dict[str, tuple[yaml.MappingNode, int]]:
        """state name -> (the `states` mapping holding it, its position there)."""
        out: dict[str, tuple[yaml.MappingNode, int]] = {}
        top = _get(root, "states")
        stack = [top[1]] if top and isinstance(top[1], yaml.MappingNode) else []
        while stack:
            states = stack.pop()
            for i, (k, v) in enumerate(states.value):
                name = _key(k)
                if name is not None:
                    out.setdefault(name, (states, i))
                nested = _get(v, "states")
                if nested and isinstance(nested[1], yaml.MappingNode):
                    stack.append(nested[1])
        return out

    def merge_states(self, root: yaml.MappingNode, target: yaml.MappingNode,
                     overlay_states: yaml.Node) -> None:
        """Patch states the base has. A name the base does not have is an error (a typo would
        otherwise become a new, unreachable state): new states are declared under `add:`."""
        if not isinstance(overlay_states, yaml.MappingNode):
            return  # the builder reports the wrong type
        for k, v in overlay_states.value:
            name = _key(k)
            index = self.index(root)
            where = index.get(name) if name else None
            if where is None:
                # The overlay's own new states too: `add:` may come later in the file.
                close = did_you_mean(name or "", [*index, *self.added], words=True)
                self.error(k, f"the base has no state `{name}` to change",
                           (close + " To" if close else "to")
                           + f" add a new state, declare it under `add: {{states: {{{name}: "
                             "...}}`")
                continue
            base_value = _base_mapping(where, v)
            self.patch_state(root, name, base_value, v)  # type: ignore[arg-type]

    def add_states(self, root: yaml.MappingNode, target: yaml.MappingNode,
                   added: yaml.Node) -> None:
        """`add: {states: {...}}`: every name is a new state. A name the base has may only be
        descended into (`add: {states: {running: {states: {paused: ...}}}}`) to add nested
        states under it."""
        if not isinstance(added, yaml.MappingNode):
            return  # the builder reports the wrong type
        for k, v in added.value:
            name = _key(k)
            where = self.index(root).get(name) if name else None
            if where is None:
                target.value.append((k, v))
                self.changes.append(Change("state-added", name or "?"))
                continue
            keys = [_key(pk) for pk, _ in v.value] if isinstance(v, yaml.MappingNode) else []
            nested = _get(v, "states")
            if keys != ["states"] or nested is None:
                self.error(k, f"state `{name}` is already in the base; `add:` declares new "
                              "states only",
                           f"to change `{name}`, write it under `states:` (not `add:`); to "
                           f"add states inside it, write `{name}: {{states: {{NEW: ...}}}}` "
                           "under `add: {states: ...}`")
                continue
            base_value = _base_mapping(where, v)
            inner = _get(base_value, "states")
            if inner is None or not isinstance(inner[1], yaml.MappingNode):
                inner = (nested[0], _empty_map(nested[1]))
                _set(base_value, nested[0], inner[1])
            self.add_states(root, inner[1], nested[1])  # type: ignore[arg-type]

    def patch_state(self, root: yaml.MappingNode, name: str, base: yaml.MappingNode,
                    patch: yaml.Node) -> None:
        if not isinstance(patch, yaml.MappingNode):
            return
        changed = False
        for k, v in patch.value:
            key = _key(k)
            if key in ("on", "after") and isinstance(v, yaml.MappingNode):
                # Events (and timers, by their key) are added or replaced one by one; a
                # timer's change is named `STATE.after.KEY`, as `remove:` names it.
                on = _get(base, key)
                if on is None or not isinstance(on[1], yaml.MappingNode):
                    on = (k, _empty_map(v))
                    _set(base, k, on[1])
                prefix = f"{name}.after." if key == "after" else f"{name}."
                for ek, ev in v.value:
                    event = _key(ek) or "?"
                    kind = "transition-replaced" if _get(on[1], event) else "transition-added"
                    _set(on[1], ek, ev)  # type: ignore[arg-type]
                    self.changes.append(Change(kind, prefix + event))
            elif key in ("done", "always"):  # a transition, named like others `STATE.EVENT`
                kind = "transition-replaced" if _get(base, key) else "transition-added"
                _set(base, k, v)
                self.changes.append(Change(kind, f"{name}.done.state.{name}" if key == "done"
                                           else f"{name}.{events.ALWAYS}"))
            elif key == "states":
                nested = _get(base, "states")
                if nested is None or not isinstance(nested[1], yaml.MappingNode):
                    nested = (k, _empty_map(v))
                    _set(base, k, nested[1])
                self.merge_states(root, nested[1], v)  # type: ignore[arg-type]
            elif key in ("tags", "requires", "entry", "exit", "clear"):
                old = _get(base, key)
                items = [] if old is None else (
                    list(old[1].value) if isinstance(old[1], yaml.SequenceNode) else [old[1]])
                new = list(v.value) if isinstance(v, yaml.SequenceNode) else [v]
                _set(base, k, yaml.SequenceNode(SEQ_TAG, items + new, v.start_mark, v.end_mark,
                                                flow_style=True))
                changed = True
            else:
                _set(base, k, v)
                changed = True
        if changed:
            self.changes.append(Change("state-changed", name))

    def add(self, root: yaml.MappingNode, added: yaml.Node) -> None:
        """The overlay's `add:` section: `{states: {NAME: {...}}}`."""
        if not isinstance(added, yaml.MappingNode):
            self.error(added, "`add` must be a mapping: {states: {NAME: {...}}}")
            return
        for k, v in added.value:
            if _key(k) != "states":
                self.error(k, f"unknown key `{_key(k)}` in `add`",
                           "allowed: `states` (new record fields and rules go under `record:` "
                           "and `rules:`)")
                continue
            top = _get(root, "states")
            if top is None or not isinstance(top[1], yaml.MappingNode):
                _set(root, k, _empty_map(v))
                top = _get(root, "states")
            self.add_states(root, top[1], v)  # type: ignore[index,arg-type]

    # -- removals --------------------------------------------------------------------------
    def remove(self, root: yaml.MappingNode, removal: yaml.Node,
               base_rules: dict[str, bool]) -> None:
        if not isinstance(removal, yaml.MappingNode):
            self.error(removal, "`remove` must be a mapping: {states: [...], transitions: "
                                "[STATE.EVENT], fields: [...], rules: [ID]}")
            return
        for k, v in removal.value:
            key = _key(k)
            items = v.value if isinstance(v, yaml.SequenceNode) else [v]
            for item in items:
                name = _key(item)
                if name is None:
                    self.error(item, f"each entry of `remove.{key}` must be a name")
                elif key == "states":
                    self._remove_state(root, name, item)
                elif key == "transitions":
                    self._remove_transition(root, name, item)
                elif key == "fields":
                    self._remove_from(root, "record", name, item, "field")
                elif key == "rules":
                    self._remove_rule(root, name, item, base_rules)
                else:
                    self.error(k, f"unknown key `{key}` in `remove`",
                               "allowed: `states`, `transitions`, `fields`, `rules`")
                    break

    def _remove_state(self, root: yaml.MappingNode, name: str, node: yaml.Node) -> None:
        where = self.index(root).get(name)
        if where is None:
            self.error(node, f"cannot remove state `{name}`: the base has no such state")
            return
        holder, i = where
        del holder.value[i]
        self.changes.append(Change("state-removed", name, self.span(node)))

    def _remove_transition(self, root: yaml.MappingNode, name: str, node: yaml.Node) -> None:
        state, _, event = name.partition(".")
        where = self.index(root).get(state)
        # The `done:` transition, or the eventless ones (`always:`)
        written = "done" if event == f"done.state.{state}" else \
            "always" if event == events.ALWAYS else None
        if where is not None and written is not None:
            body = where[0].value[where[1]][1]
            if isinstance(body, yaml.MappingNode) and _get(body, written) is not None:
                body.value[:] = [(k, v) for k, v in body.value if _key(k) != written]
                self.changes.append(Change("transition-removed", name))
                return
        section = "on"
        if event.startswith("after.") and len(event) > 6:  # a timer: `STATE.after.15m`
            section, event = "after", event[6:]
        on = _get(where[0].value[where[1]][1], section) if where else None
        if event and on is not None and section == "after" and _get(on[1], event) is None:
            # A timer named `name: reminder` is also `STATE.after.reminder`; its change is
            # named by its key as written, as a patch of it is.
            event = next((_key(k) for k, v in on[1].value if event in _timer_names(v)),
                         None) or event
            name = f"{state}.after.{event}"
        if not event or on is None or _get(on[1], event) is None:
            what = f"timer `{event}`" if section == "after" else f"event `{event}`"
            self.error(node, f"cannot remove transition `{name}`: the base has no {what} "
                             f"on state `{state}`",
                       "write transitions to remove as `STATE.EVENT`, timers as "
                       "`STATE.after.KEY` (`waiting.after.15m`) or `STATE.after.NAME` for a "
                       "timer with a `name:`")
            return
        on[1].value[:] = [(k, v) for k, v in on[1].value if _key(k) != event]
        self.changes.append(Change("transition-removed", name, self.span(node)))

    def _remove_from(self, root: yaml.MappingNode, section: str, name: str, node: yaml.Node,
                     what: str) -> None:
        holder = _get(root, section)
        if holder is None or _get(holder[1], name) is None:
            self.error(node, f"cannot remove {what} `{name}`: the base has no such {what}")
            return
        holder[1].value[:] = [(k, v) for k, v in holder[1].value if _key(k) != name]
        self.changes.append(Change(f"{what}-removed", name, self.span(node)))

    def _remove_rule(self, root: yaml.MappingNode, rule_id: str, node: yaml.Node,
                     base_rules: dict[str, bool]) -> None:
        if rule_id not in base_rules:
            self.error(node, f"cannot remove rule `{rule_id}`: the base has no rule with that id")
        elif not base_rules[rule_id]:
            self.error(node, f"rule `{rule_id}` is not overridable; an overlay cannot remove it",
                       "the base's owners can mark it `overridable: true`")
        else:
            rules = _get(root, "rules")
            assert rules is not None and isinstance(rules[1], yaml.SequenceNode)
            rules[1].value[:] = [r for r in rules[1].value if _rule_id(r) != rule_id]
            self.changes.append(Change("rule-removed", rule_id, self.span(node)))

    # -- record and rules ------------------------------------------------------------------
    def add_fields(self, root: yaml.MappingNode, key_node: yaml.Node, fields: yaml.Node) -> None:
        if not isinstance(fields, yaml.MappingNode):
            _set(root, key_node, fields)  # the builder reports the wrong type
            return
        record = _get(root, "record")
        if record is None or not isinstance(record[1], yaml.MappingNode):
            record = (key_node, _empty_map(fields))
            _set(root, key_node, record[1])
        for k, v in fields.value:
            name = _key(k) or "?"
            if _get(record[1], name) is not None:
                self.error(k, f"record field `{name}` is already defined by the base",
                           f"to change it, also list it under `remove: {{fields: [{name}]}}`")
                continue
            record[1].value.append((k, v))
            self.changes.append(Change("field-added", name))

    def add_rules(self, root: yaml.MappingNode, key_node: yaml.Node, rules: yaml.Node,
                  base_rules: dict[str, bool]) -> None:
        if not isinstance(rules, yaml.SequenceNode):
            return
        holder = _get(root, "rules")
        if holder is None or not isinstance(holder[1], yaml.SequenceNode):
            holder = (key_node, yaml.SequenceNode(SEQ_TAG, [], rules.start_mark, rules.end_mark))
            _set(root, key_node, holder[1])
        for rule in rules.value:
            rule_id = _rule_id(rule)
            present = rule_id is not None and any(
                _rule_id(r) == rule_id for r in holder[1].value)
            if rule_id is not None and rule_id in base_rules and present:
                if not base_rules[rule_id]:
                    self.error(rule, f"rule `{rule_id}` of the base is not overridable; an "
                                     "overlay cannot weaken it",
                               "give the new rule another id: both then apply")
                    continue
                holder[1].value[:] = [rule if _rule_id(r) == rule_id else r
                                      for r in holder[1].value]
                self.changes.append(Change("rule-replaced", rule_id))
                continue
            holder[1].value.append(rule)
            # A base rule removed above and written again: the overlay replaced it.
            kind = "rule-replaced" if rule_id in base_rules else "rule-added"
            self.changes.append(Change(kind, rule_id or "(unnamed)"))


def duplicate_keys(source: Source) -> list[Diagnostic]:
    """Keys written twice in one mapping of `source` (iteratively, every mapping)."""
    problems: list[Diagnostic] = []
    stack = [source.root] if source.root is not None else []
    while stack:
        node = stack.pop()
        if isinstance(node, yaml.MappingNode):
            first: dict[str, yaml.Node] = {}
            for k, v in node.value:
                key = _key(k)
                if key is not None and key in first:
                    mark = first[key].start_mark
                    problems.append(Diagnostic(
                        "duplicate-key", "error",
                        f"duplicate key `{key}` (first defined at line {mark.line + 1}, column "
                        f"{mark.column + 1})",
                        span_of(source.path, k),
                        "YAML keeps only the last value; remove or rename one of them"))
                elif key is not None:
                    first[key] = k
                stack.append(v)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    return problems


def _rule_id(rule: yaml.Node) -> str | None:
    found = _get(rule, "id")
    return _key(found[1]) if found else None


def _base_rules(root: yaml.MappingNode) -> dict[str, bool]:
    rules = _get(root, "rules")
    out: dict[str, bool] = {}
    for rule in rules[1].value if rules and isinstance(rules[1], yaml.SequenceNode) else []:
        rule_id = _rule_id(rule)
        if rule_id is not None:
            flag = _get(rule, "overridable")
            out[rule_id] = bool(flag and scalar_value(flag[1]) is True)  # type: ignore[arg-type]
    return out


def base_path(overlay: Path, ref: str) -> Path:
    folder = overlay.parent
    if "/" in ref or ref.endswith((".yaml", ".yml")):
        return folder / ref
    for suffix in (".yaml", ".yml"):
        if (folder / f"{ref}{suffix}").exists():
            return folder / f"{ref}{suffix}"
    return folder / f"{ref}.yaml"


def bases_of(path: Path) -> list[Path]:
    """The files the spec at `path` extends, its own base first, as real paths; as far as they
    can be read (a chain that breaks is reported by `resolve`, when the spec is checked)."""
    out: list[Path] = []
    current, root = path, specs_root(path)
    while len(out) <= MAX_CHAIN:
        try:
            raw = read_spec(current, root)
        except (OSError, SpecFileError):
            break
        if b"extends" not in raw:  # most specs: no need to parse them
            break
        source, _ = load_bytes(str(current), raw)
        found = _get(source.root, "extends") if source is not None and source.root else None
        ref = _key(found[1]) if found is not None else None
        if ref is None:
            break
        current = base_path(current, ref)
        if current.resolve() in out:
            break
        out.append(current.resolve())
    return out


def extending(bases: Iterable[Path], candidates: Iterable[Path]) -> dict[Path, Path]:
    """The `candidates` that extend one of `bases`, directly or through other overlays, each
    with the base of `bases` it extends (as given)."""
    wanted = {b.resolve(): b for b in bases}
    out: dict[Path, Path] = {}
    for candidate in candidates:
        if candidate.resolve() in wanted:
            continue
        base = next((wanted[b] for b in bases_of(candidate) if b in wanted), None)
        if base is not None:
            out[candidate] = base
    return out


def resolve(source: Source, removals: bool = True) -> tuple[Merged | None, list[Diagnostic]]:
    """Merge `source` onto its chain of bases. Returns (None, []) when it extends nothing.
    With `removals` False, every `remove:` of the chain is left out (the linter compares the
    two to find what a removal breaks in a base)."""
    root = source.root
    extends = _get(root, "extends") if isinstance(root, yaml.MappingNode) else None
    if extends is None:
        return None, []
    problems: list[Diagnostic] = []
    files: dict[int, str] = {}
    chain = [source]
    seen = [Path(source.path).resolve()]
    current = source
    ext: tuple[yaml.Node, yaml.Node] | None = extends
    while ext is not None:
        ref = _key(ext[1])
        where = span_of(current.path, ext[1])
        if ref is None:
            problems.append(Diagnostic(ID, "error", "`extends` must name a spec", where,
                                       "write `extends: agent_run` or a relative path"))
            return None, problems
        path = base_path(Path(current.path), ref)
        resolved = path.resolve()
        root_dir = specs_root(Path(source.path))
        if not resolved.is_relative_to(root_dir):
            problems.append(Diagnostic(ID, "error", f"`extends: {ref}` points outside {root_dir}",
                                       where, "a base must be a spec in the same specs folder"))
            return None, problems
        if resolved in seen:
            cycle = " -> ".join(p.name for p in [*seen, resolved])
            problems.append(Diagnostic(ID, "error", f"`extends` forms a cycle: {cycle}", where,
                                       "remove `extends` from one of these specs"))
            return None, problems
        if len(chain) > MAX_CHAIN:
            problems.append(Diagnostic(ID, "error", f"more than {MAX_CHAIN} specs extend each "
                                       "other in a chain", where, "flatten the chain"))
            return None, problems
        try:
            raw = read_spec(path, root_dir)
        except SpecFileError as exc:
            problems.append(Diagnostic(ID, "error", f"`extends: {ref}`: {exc}", where, exc.hint))
            return None, problems
        except OSError:
            problems.append(Diagnostic(ID, "error", f"`extends: {ref}`: no spec at {path}", where,
                                       "name a spec in the same folder, without `.yaml`"))
            return None, problems
        base, _ = load_bytes(str(path), raw)
        if base is None or not isinstance(base.root, yaml.MappingNode):
            problems.append(Diagnostic(ID, "error", f"base spec {path} cannot be read",
                                       where, f"run `statechart check {path}`"))
            return None, problems
        chain.append(base)
        seen.append(resolved)
        current, ext = base, _get(base.root, "extends")

    # An overlay's own duplicate keys would vanish in the merge (the later one replaces the
    # earlier): report them here, as the builder does for a spec without `extends`.
    for link in chain[:-1]:
        problems.extend(duplicate_keys(link))
    # Merge from the root base up: each overlay onto the result so far.
    alive: list[yaml.Node] = []
    merged = _copy_tree(chain[-1].root, chain[-1].path, files, alive)  # type: ignore[arg-type]
    resolver = _Resolver(files, problems)
    resolver.removals = removals
    for overlay in reversed(chain[:-1]):
        resolver.overlay_path = overlay.path
        if overlay is not source:  # a middle link: record where its nodes came from
            overlay = Source(overlay.path, overlay.text,
                             _copy_tree(overlay.root, overlay.path, files,  # type: ignore[arg-type]
                                        alive))
        merged = _apply(resolver, merged, overlay)  # type: ignore[arg-type]
    if _get(root, "statechart") is None:  # type: ignore[arg-type]
        problems.append(Diagnostic(ID, "error", "an overlay needs its own `statechart` name",
                                   span_of(source.path, root),  # type: ignore[arg-type]
                                   "its generated module must not overwrite the base's"))
    # The text of every file of the chain, so that the source hash changes with any of them.
    text = "".join(part.text for part in chain)
    return Merged(Source(source.path, text, merged), files, [s.path for s in chain],
                  resolver.changes, alive, chain), problems


def _apply(resolver: _Resolver, base: yaml.MappingNode, overlay: Source) -> yaml.MappingNode:
    root = overlay.root
    assert isinstance(root, yaml.MappingNode)
    base_rules = _base_rules(base)
    resolver.added = _added_states(root)
    removal = _get(root, "remove")
    if removal is not None and resolver.removals:
        resolver.remove(base, removal[1], base_rules)
    for k, v in root.value:
        key = _key(k)
        if key in ("extends", "remove"):
            continue
        if key == "add":
            resolver.add(base, v)
            continue
        if key == "states":
            top = _get(base, "states")
            if top is None or not isinstance(top[1], yaml.MappingNode):
                _set(base, k, _empty_map(v))
                top = _get(base, "states")
            resolver.merge_states(base, top[1], v)  # type: ignore[index,arg-type]
        elif key == "record":
            resolver.add_fields(base, k, v)
        elif key == "rules":
            resolver.add_rules(base, k, v, base_rules)
        else:
            _set(base, k, v)
    # Drop the base's `extends`: the merged tree is complete.
    base.value[:] = [(k, v) for k, v in base.value if _key(k) != "extends"]
    return base


def _added_states(overlay: yaml.MappingNode) -> list[str]:
    """The names under the overlay's `add: {states: ...}`, nested ones included."""
    found = _get(overlay, "add")
    stack = [found[1]] if found is not None else []
    out: list[str] = []
    while stack:
        states = _get(stack.pop(), "states")
        if states is None or not isinstance(states[1], yaml.MappingNode):
            continue
        for k, v in states[1].value:
            name = _key(k)
            if name is not None:
                out.append(name)
            stack.append(v)
    return out


def _base_mapping(where: tuple[yaml.MappingNode, int], like: yaml.Node) -> yaml.MappingNode:
    """The base state's body at `where`, made a mapping first when the base wrote none (a
    state written `name: {}` or `name:`), so that an overlay can patch or extend it."""
    holder, i = where
    key_node, base_value = holder.value[i]
    if not isinstance(base_value, yaml.MappingNode):
        base_value = _empty_map(like)
        holder.value[i] = (key_node, base_value)
    return base_value
