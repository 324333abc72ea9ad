"""An overlay's states: patching the base's states it names under `states:`, and adding new
ones under `add: {states: ...}`, at the top level or inside a base state."""

from __future__ import annotations

import yaml

from statechart.build_model import did_you_mean
from statechart.overlay.base import ResolverBase
from statechart.overlay.merged import Change
from statechart.overlay.nodes import empty_map, entry, key_name, set_entry
from statechart.yaml_source import SEQ_TAG
from statechart_runtime.chart import events


class StateMerge(ResolverBase):
    """The overlay's `states:` and `add:`, applied to the base's tree."""

    def merge_states(self, root: yaml.MappingNode, target: yaml.MappingNode,
                     overlay_states: yaml.Node) -> None:
        """Patch states the base has. A name the base does not have is an error (a typo would
        otherwise become a new, unreachable state): new states are declared under `add:`."""
        if not isinstance(overlay_states, yaml.MappingNode):
            return  # the builder reports the wrong type
        for k, v in overlay_states.value:
            name = key_name(k)
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
            name = key_name(k)
            where = self.index(root).get(name) if name else None
            if where is None:
                target.value.append((k, v))
                self.changes.append(Change("state-added", name or "?"))
                continue
            keys = [key_name(pk) for pk, _ in v.value] if isinstance(v, yaml.MappingNode) else []
            nested = entry(v, "states")
            if keys != ["states"] or nested is None:
                self.error(k, f"state `{name}` is already in the base; `add:` declares new "
                              "states only",
                           f"to change `{name}`, write it under `states:` (not `add:`); to "
                           f"add states inside it, write `{name}: {{states: {{NEW: ...}}}}` "
                           "under `add: {states: ...}`")
                continue
            base_value = _base_mapping(where, v)
            inner = entry(base_value, "states")
            if inner is None or not isinstance(inner[1], yaml.MappingNode):
                inner = (nested[0], empty_map(nested[1]))
                set_entry(base_value, nested[0], inner[1])
            self.add_states(root, inner[1], nested[1])  # type: ignore[arg-type]

    def patch_state(self, root: yaml.MappingNode, name: str, base: yaml.MappingNode,
                    patch: yaml.Node) -> None:
        if not isinstance(patch, yaml.MappingNode):
            return
        changed = False
        for k, v in patch.value:
            key = key_name(k)
            if key in ("on", "after") and isinstance(v, yaml.MappingNode):
                # Events (and timers, by their key) are added or replaced one by one; a
                # timer's change is named `STATE.after.KEY`, as `remove:` names it.
                on = entry(base, key)
                if on is None or not isinstance(on[1], yaml.MappingNode):
                    on = (k, empty_map(v))
                    set_entry(base, k, on[1])
                prefix = f"{name}.after." if key == "after" else f"{name}."
                for ek, ev in v.value:
                    event = key_name(ek) or "?"
                    kind = "transition-replaced" if entry(on[1], event) else "transition-added"
                    set_entry(on[1], ek, ev)  # type: ignore[arg-type]
                    self.changes.append(Change(kind, prefix + event))
            elif key in ("done", "always"):  # a transition, named like others `STATE.EVENT`
                kind = "transition-replaced" if entry(base, key) else "transition-added"
                set_entry(base, k, v)
                self.changes.append(Change(kind, f"{name}.done.state.{name}" if key == "done"
                                           else f"{name}.{events.ALWAYS}"))
            elif key == "work" and isinstance(v, yaml.MappingNode) \
                    and (found := entry(base, "work")) is not None \
                    and isinstance(found[1], yaml.MappingNode):
                # Work is patched key by key: `work: {timeout: 10m}` keeps the base's handler.
                for wk, wv in v.value:
                    set_entry(found[1], wk, wv)
                changed = True
            elif key == "states":
                nested = entry(base, "states")
                if nested is None or not isinstance(nested[1], yaml.MappingNode):
                    nested = (k, empty_map(v))
                    set_entry(base, k, nested[1])
                self.merge_states(root, nested[1], v)  # type: ignore[arg-type]
            elif key in ("tags", "requires", "entry", "exit", "clear"):
                old = entry(base, key)
                items = [] if old is None else (
                    list(old[1].value) if isinstance(old[1], yaml.SequenceNode) else [old[1]])
                new = list(v.value) if isinstance(v, yaml.SequenceNode) else [v]
                set_entry(base, k, yaml.SequenceNode(SEQ_TAG, items + new, v.start_mark, v.end_mark,
                                                flow_style=True))
                changed = True
            else:
                set_entry(base, k, v)
                changed = True
        if changed:
            self.changes.append(Change("state-changed", name))

    def add(self, root: yaml.MappingNode, added: yaml.Node) -> None:
        """The overlay's `add:` section: `{states: {NAME: {...}}}`."""
        if not isinstance(added, yaml.MappingNode):
            self.error(added, "`add` must be a mapping: {states: {NAME: {...}}}")
            return
        for k, v in added.value:
            if key_name(k) != "states":
                self.error(k, f"unknown key `{key_name(k)}` in `add`",
                           "allowed: `states` (new record fields and rules go under `record:` "
                           "and `rules:`)")
                continue
            top = entry(root, "states")
            if top is None or not isinstance(top[1], yaml.MappingNode):
                set_entry(root, k, empty_map(v))
                top = entry(root, "states")
            self.add_states(root, top[1], v)  # type: ignore[index,arg-type]


def added_states(overlay: yaml.MappingNode) -> list[str]:
    """The names under the overlay's `add: {states: ...}`, nested ones included."""
    found = entry(overlay, "add")
    stack = [found[1]] if found is not None else []
    out: list[str] = []
    while stack:
        states = entry(stack.pop(), "states")
        if states is None or not isinstance(states[1], yaml.MappingNode):
            continue
        for k, v in states[1].value:
            name = key_name(k)
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
        base_value = empty_map(like)
        holder.value[i] = (key_node, base_value)
    return base_value
