"""A checked spec as an XState v5 machine config (JSON): what `createMachine` takes and
Stately's visual editor opens. One exporter: the conformance tooling (tests/conformance/)
runs these configs in XState to record its golden traces.

- every state's `id` is its name and every target is written `#name`, so a target resolves
  the same wherever its source is;
- our transitions are SCXML's external ones: `reenter: true`; `internal: true` is XState's
  default, `reenter: false`; a targetless transition has no `target`; `target: [a2, b2]` is a
  target array;
- `history: KIND` targets a history child of the target (`NAME__KIND`, `type: history`),
  whose `target` is the state's `history_default:` for that kind, else its default entry;
- `done:` is `onDone`, `always:` is `always`, `after: {15m: ...}` is `after: {"900000":
  ...}` (a deadline's field name is a named delay the application supplies);
- guards and actions are named (`guard: "g"`, `actions: ["a"]`); a transition with `in:`
  states has the guard `{type: "statechart:in", params: {guard?, in: ["#a"]}}` (XState's
  `stateIn`, which a JSON config cannot hold as a function);
- a spec whose keys take families (`error` takes `error.tool`, `"*"`) has XState's wildcard
  keys: our `k` is `k.*` (which takes `k` too), our `*` is `t.*` for the first token t of
  every event the spec names (XState's `*` would take its own `xstate.done.state.*` events
  too), with `meta.key` giving the key as written;
- `description` and `tags` are XState's own; everything else our keys say (record fields,
  rules, migrations, `requires`, `limit`, a transition's `set:` ...) rides in `meta` under
  `statechart-compiler`, which XState keeps as it is.
"""

from __future__ import annotations

import json
from typing import Any

from statechart.model import Spec, State, Transition
from statechart.scxml import extras
from statechart.xstate import META

IN_GUARD = "statechart:in"  # a colon: never the name of one of the spec's guards


def history_id(target: str, kind: str) -> str:
    """The id of the XState history state that stands for `history: KIND` to `target`."""
    return f"{target}__{kind}"


def _meta(values: dict[str, Any]) -> dict[str, Any]:
    return {"meta": {META: values}} if values else {}


def _transition(t: Transition) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if t.targets:
        out = {"target": [f"#{x}" for x in t.targets], "reenter": True}
    elif t.targetless:
        out = {}
    elif t.kind == "internal":
        out = {"target": f"#{t.target}", "reenter": False}
    else:
        out = {"target": f"#{history_id(t.target, t.history) if t.history else t.target}",
               "reenter": True}
    if t.in_states:
        params: dict[str, Any] = {"guard": t.guard} if t.guard else {}
        out["guard"] = {"type": IN_GUARD, "params": {**params,
                                                     "in": [f"#{s}" for s in t.in_states]}}
    elif t.guard:
        out["guard"] = t.guard
    if t.actions:
        out["actions"] = list(t.actions)
    if t.description is not None:
        out["description"] = t.description
    ours = {k: v for k, v in extras.read(extras.TRANSITION,
                                         extras.written(extras.TRANSITION, t)).items()
            if k != "description"}
    if t.trigger == "after":
        ours["after"] = t.after_key
        if t.timer_id is not None and t.order == 0:
            ours["timer"] = t.timer_id
    return {**out, **_meta(ours)}


def _family_keys(spec: Spec) -> bool:
    """Whether a key of the spec takes events other than its own name (`*`, or a key that is
    a token prefix of another event): then XState needs its wildcard keys."""
    events = _sent(spec)
    prefixes = {".".join(e.split(".")[:i]) for e in events for i in range(1, e.count(".") + 1)}
    return any(t.trigger == "event" and (t.event == "*" or t.event in prefixes)
               for t in spec.transitions())


def _sent(spec: Spec) -> list[str]:
    """The events the application sends (the `on:` keys but `*`), in first-use order."""
    return list(dict.fromkeys(t.event for t in spec.transitions()
                              if t.trigger == "event" and t.event != "*"))


def _on(state: State, firsts: list[str] | None) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for t in state.transitions:
        if t.trigger != "event":
            continue
        if firsts is None:
            out.setdefault(t.event, []).append(_transition(t))
            continue
        written = _transition(t)
        meta = written.setdefault("meta", {}).setdefault(META, {})
        meta["key"] = t.event
        for key in [f"{first}.*" for first in firsts] if t.event == "*" else [f"{t.event}.*"]:
            out.setdefault(key, []).append(written)
    return out


def _node(spec: Spec, state: State, histories: dict[str, set[str]],
          firsts: list[str] | None) -> dict[str, Any]:
    out: dict[str, Any] = {"id": state.name}
    if state.kind == "parallel":
        out["type"] = "parallel"
    elif state.kind == "final":
        out["type"] = "final"
    elif state.kind == "compound":
        out["initial"] = state.initial
    if state.description is not None:
        out["description"] = state.description
    if state.tags:
        out["tags"] = list(state.tags)
    if state.entry:
        out["entry"] = list(state.entry)
    if state.exit:
        out["exit"] = list(state.exit)
    on = _on(state, firsts)
    if on:
        out["on"] = on
    for trigger, key in (("done", "onDone"), ("always", "always")):
        written = [_transition(t) for t in state.transitions if t.trigger == trigger]
        if written:
            out[key] = written
    after: dict[str, list[dict[str, Any]]] = {}
    for t in state.transitions:
        if t.trigger == "after":
            delay = str(t.delay_ms) if t.delay_ms is not None else (t.deadline or "")
            after.setdefault(delay, []).append(_transition(t))
    if after:
        out["after"] = after
    ours = {k: v for k, v in extras.read(extras.STATE, extras.written(extras.STATE, state))
            .items() if k not in ("description", "tags")}
    out.update(_meta(ours))
    if state.children:
        states = {c: _node(spec, spec.states[c], histories, firsts) for c in state.children}
        # History states after the children: never active, so the order of states is kept.
        defaults: dict[str, str] = {kind: name for kind, name, _ in state.history_defaults}
        for kind in (*defaults, *(k for k in ("shallow", "deep")
                                  if k in histories.get(state.name, ()) and k not in defaults)):
            default = defaults.get(kind) or (state.initial if state.kind == "compound"
                                             else None)
            hid = history_id(state.name, kind)
            states[hid] = {"id": hid, "type": "history", "history": kind,
                           **({"target": f"#{default}"} if default else {}),
                           **_meta({"default": "written"} if kind in defaults else {})}
        out["states"] = states
    return out


def _spec_meta(spec: Spec) -> dict[str, Any]:
    """The spec's own keys XState has no place for, as their YAML values."""
    ours: dict[str, Any] = {"version": spec.version}
    if spec.record:
        ours["record"] = {f.name: extras.read(extras.FIELD, extras.written(extras.FIELD, f))
                          for f in spec.record}
    rules = []
    for rule in spec.rules:
        written: dict[str, Any] = {"id": rule.id} if rule.id is not None else {}
        written[rule.kind] = {
            end: [{"tag": name} if kind == "tag" else name for kind, name, _ in selectors]
            for end, selectors in (("from", rule.sources), ("to", rule.targets))}
        if rule.description is not None:
            written["description"] = rule.description
        if rule.overridable:
            written["overridable"] = True
        rules.append(written)
    if rules:
        ours["rules"] = rules
    migrations = []
    for m in spec.migrations:
        migration: dict[str, Any] = {"from_version": m.from_version}
        for key, value in (("states", {old: new for old, new, _ in m.states}),
                           ("fields", {old: new for old, new, _ in m.fields}),
                           ("fill", [name for name, _ in m.fill])):
            if value:
                migration[key] = value
        migrations.append(migration)
    if migrations:
        ours["migrations"] = migrations
    return ours


def machine_config(spec: Spec) -> dict[str, Any]:
    """The XState v5 machine config of a checked spec (JSON-ready)."""
    histories: dict[str, set[str]] = {}
    for t in spec.transitions():
        if t.history:
            histories.setdefault(t.target, set()).add(t.history)
    firsts = list(dict.fromkeys(e.split(".")[0] for e in _sent(spec))) \
        if _family_keys(spec) else None
    out: dict[str, Any] = {"id": spec.name, "initial": spec.initial}
    if spec.description is not None:
        out["description"] = spec.description
    out["states"] = {s.name: _node(spec, s, histories, firsts) for s in spec.top_level}
    out.update(_meta(_spec_meta(spec)))
    return out


def config_text(spec: Spec, header: list[str]) -> str:
    """The config as JSON text (deterministic: keys in the spec's order, two-space indent).
    JSON has no comments: the generated-file `header` is the machine's `meta` entry
    `statechart-compiler.generated`, which an import ignores."""
    config = machine_config(spec)
    ours = config.pop("meta", {}).get(META, {})
    config = {"id": config.pop("id"),
              "meta": {META: {"generated": " ".join(header), **ours}}, **config}
    return json.dumps(config, indent=2, ensure_ascii=False) + "\n"
