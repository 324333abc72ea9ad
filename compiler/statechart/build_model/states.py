"""States: the tree under `states:` in document order, and each state's kind, initial child,
transitions and timers, lists of names, `limit`, context keys and history defaults."""

from __future__ import annotations

from dataclasses import replace

import yaml

from statechart import spec_format as fmt
from statechart.build_model.timers import TimerBuilder
from statechart.build_model.work import WorkBuilder
from statechart.diagnostics import Span
from statechart.model import HistoryKind, State, StateKind
from statechart.yaml_source import MAX_DEPTH, scalar_value


class StateBuilder(TimerBuilder, WorkBuilder):
    """The state tree; a state's transitions and timers come from the builders it extends."""

    def states(self, node: yaml.Node, parent: str | None, out: dict[str, State]) -> None:
        # An explicit stack, not recursion: nesting depth is the user's to choose.
        stack: list[tuple[yaml.Node, str | None, int]] = [(node, parent, 0)]
        while stack:
            mapping_node, parent_name, depth = stack.pop()
            where = f"the states of `{parent_name}`" if parent_name else "`states`"
            items = self.mapping(mapping_node, where, {})
            if items is None:
                continue
            if not items:
                self.schema(mapping_node, f"{where} has no states", "add at least one state")
            if depth >= MAX_DEPTH:
                self.schema(mapping_node, f"states nest deeper than {MAX_DEPTH} levels",
                            "flatten the spec")
                continue
            children_todo = []
            for name, key_node, value_node in items:
                if name in out:
                    self.duplicates.add(name)
                    first = out[name].span
                    where = "" if first.file == self.span(key_node).file else f"{first.file}, "
                    self.error("duplicate-state", key_node,
                               f"state `{name}` is already defined at {where}line {first.line}, "
                               f"column {first.column}",
                               "state names are unique across the whole tree; rename one")
                    continue
                state, sub = self.state(name, key_node, value_node, parent_name, depth)
                out[name] = state
                if sub is not None:
                    children_todo.append((sub, name, depth + 1))
            stack.extend(reversed(children_todo))
        # Children were filled in after their parents; reorder into document (pre-)order.
        # A child skipped as a duplicate state is dropped from its parent's `children`.
        kids: dict[str | None, list[str]] = {}
        for state in out.values():
            kids.setdefault(state.parent, []).append(state.name)
        ordered: dict[str, State] = {}
        walk = list(reversed(kids.get(parent, [])))
        while walk:
            current = walk.pop()
            own = tuple(c for c in out[current].children if c in kids.get(current, ()))
            state = out[current]
            ordered[current] = state if own == state.children else replace(state, children=own)
            walk.extend(reversed(own))
        out.clear()
        out.update(ordered)

    def state(self, name: str, key_node: yaml.Node, node: yaml.Node, parent: str | None,
              depth: int) -> tuple[State, yaml.Node | None]:
        where = f"state `{name}`"
        got: dict[str, tuple[yaml.Node, yaml.Node]] = {}
        if isinstance(node, yaml.ScalarNode) and scalar_value(node) is None:
            pass  # `done:` with nothing: an atomic state with no keys
        else:
            got = self.keyed(node, where, fmt.STATE_KEYS) or {}

        def value(key: str) -> yaml.Node:
            return got[key][1]

        final = "final" in got and self.boolean(value("final"), f"`final` of {where}")
        if "final" in got and not _is_bool(value("final")):
            self.dropped("final", name)
        parallel = "parallel" in got and self.boolean(value("parallel"), f"`parallel` of {where}")
        children_node = value("states") if "states" in got else None
        children: tuple[str, ...] = ()
        if isinstance(children_node, yaml.MappingNode):
            children = tuple(_plain_keys(children_node))
        kind: StateKind
        if final:
            kind = "final"
            for bad in ("states", "initial", "parallel"):
                if bad in got and not (bad == "parallel" and not parallel):
                    self.schema(got[bad][0], f"final state `{name}` cannot have `{bad}`",
                                "a final state ends the run (or its region); it has no children")
        elif parallel:
            kind = "parallel"
            if children_node is None:
                self.schema(key_node, f"parallel state `{name}` needs `states` (its regions)")
            if "initial" in got:
                self.schema(got["initial"][0], f"parallel state `{name}` cannot have `initial`",
                            "every region of a parallel state is entered at once")
        elif children_node is not None:
            kind = "compound"
        else:
            kind = "atomic"
            if "initial" in got:
                self.schema(got["initial"][0], f"`initial` on `{name}`, which has no `states`",
                            "only a state with nested states has an initial child")
        initial = initial_span = None
        if "initial" in got and kind == "compound":
            initial = self.string(value("initial"), f"`initial` of {where}")
            initial_span = self.span(value("initial"))
        transitions = self.transitions(name, value("on")) if "on" in got else ()
        if "after" in got:
            if kind == "final":
                self.schema(got["after"][0], f"final state `{name}` cannot have `after`",
                            "a final state is never left, so its timers could never fire")
            else:
                transitions += self.timers(name, value("after"))
        if "done" in got:
            if kind in ("compound", "parallel"):
                transitions += self.done_transitions(name, *got["done"])
            else:
                self.schema(got["done"][0], f"`done` on {kind} state `{name}`",
                            "only a state with nested states completes: its final child "
                            "(or every region's) raises `done`")
        if "always" in got:
            if kind == "final":
                self.schema(got["always"][0], f"final state `{name}` cannot have `always`",
                            "a final state is never left")
            else:
                transitions += self.done_transitions(name, *got["always"], trigger="always")
        limit = self.integer(value("limit"), f"`limit` of {where}", 1) if "limit" in got else None
        state = State(
            name=name,
            parent=parent,
            kind=kind,
            description=self.text(value("description"), f"`description` of {where}")
            if "description" in got else None,
            initial=initial,
            children=children,
            transitions=transitions,
            tags=self._name_list(got, "tags", where),
            entry=self._name_list(got, "entry", where),
            exit=self._name_list(got, "exit", where),
            requires=self._name_list(got, "requires", where),
            limit=limit,
            span=self.span(key_node),
            initial_span=initial_span,
            depth=depth,
            name_spans=self._name_spans(got, ("tags", "entry", "exit", "requires", "clear")),
        )
        if any(k in got for k in ("clear", "status", "counter")):
            state = self._context_keys(state, got, where)
        if "history_default" in got:
            state = replace(state, history_defaults=self._history_defaults(
                kind, *got["history_default"], where))
        if "work" in got:
            state = replace(state, work=self.work(name, *got["work"]))
        return state, children_node

    def _history_defaults(self, kind: str, key: yaml.Node, node: yaml.Node, where: str
                          ) -> tuple[tuple[HistoryKind, str, Span], ...]:
        """`history_default: NAME` (both kinds) or `{shallow: NAME, deep: NAME}`."""
        if kind not in ("compound", "parallel"):
            self.schema(key, f"`history_default` on {kind} {where}",
                        "only a state with nested states is entered by history")
            return ()
        if isinstance(node, yaml.MappingNode):
            out: list[tuple[HistoryKind, str, Span]] = []
            for written, _, value in self.mapping(node, f"`history_default` of {where}", {
                    k: f"the state a {k} history transition enters the first time"
                    for k in fmt.HISTORY_KINDS}) or ():
                name = self.string(value, f"`history_default.{written}` of {where}")
                if name is not None:
                    out.append((written, name, self.span(value)))  # type: ignore[arg-type]
            return tuple(out)
        name = self.string(node, f"`history_default` of {where}")
        if name is None:
            return ()
        kinds: tuple[HistoryKind, ...] = ("shallow", "deep")
        return tuple((k, name, self.span(node)) for k in kinds)

    def _context_keys(self, state: State, got: dict[str, tuple[yaml.Node, yaml.Node]],
                      where: str) -> State:
        """A state's run-context and status keys: `clear`, `status`, `counter`."""
        def name(key: str) -> tuple[str | None, Span | None]:
            if key not in got:
                return None, None
            return self.string(got[key][1], f"`{key}` of {where}"), self.span(got[key][1])
        status, status_span = name("status")
        counter, counter_span = name("counter")
        return replace(state, clear=self._name_list(got, "clear", where), status=status,
                       status_span=status_span, counter=counter, counter_span=counter_span)

    def _name_list(self, got: dict[str, tuple[yaml.Node, yaml.Node]], key: str,
                   where: str) -> tuple[str, ...]:
        if key not in got:
            return ()
        return tuple(n for n, _ in self.names(got[key][1], f"`{key}` of {where}"))

    def _name_spans(self, got: dict[str, tuple[yaml.Node, yaml.Node]],
                    keys: tuple[str, ...]) -> tuple[tuple[str, str, Span], ...]:
        out = []
        for key in keys:
            if key in got:
                node = got[key][1]
                for item in node.value if isinstance(node, yaml.SequenceNode) else [node]:
                    if isinstance(item, yaml.ScalarNode):
                        out.append((key, item.value, self.span(item)))
        return tuple(out)


def _is_bool(node: yaml.Node) -> bool:
    return isinstance(node, yaml.ScalarNode) and isinstance(scalar_value(node), bool)


def _plain_keys(node: yaml.MappingNode) -> list[str]:
    """Distinct string keys of a mapping, first occurrence first (duplicates reported elsewhere)."""
    seen: dict[str, None] = {}
    for key_node, _ in node.value:
        if isinstance(key_node, yaml.ScalarNode):
            value = scalar_value(key_node)
            if isinstance(value, str) and value:
                seen.setdefault(value, None)
    return list(seen)
