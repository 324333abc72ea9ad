"""Property tests of the checker (hypothesis).

1. Mutated valid specs (keys deleted, duplicated, renamed; values swapped for other types;
   text truncated; random bytes and unicode inserted) never make the checker raise, and every
   diagnostic has a known rule id and a position inside the file.
2. Randomly generated valid specs (random graphs with nesting, guards, records, rules, all
   states reachable and able to finish) get no errors: a false positive in a rule fails here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st

from statechart import names
from statechart.linter import FileResult, check_source
from statechart.rules import RULES

ROOT = Path(__file__).parent.parent
SEEDS = [
    (ROOT / "specs" / "agent_run.yaml").read_text("utf-8"),
    (Path(__file__).parent / "hostile" / "norway_names_valid.yaml").read_text("utf-8"),
    (Path(__file__).parent / "hostile" / "deep_states_20_valid.yaml").read_text("utf-8"),
]
SETTINGS = settings(max_examples=150, deadline=None,
                    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
SMOKE = 15  # examples of a `slow` property in the default run
# Characters whose positions are known to be wrong (libyaml counts them as line breaks; the
# bug is reported and covered by tests/hostile/*_positions.yaml): left out here so that this
# test finds other problems.
LINE_BREAKS_LIBYAML_ONLY = "\u2028\u2029\x85"


def _check(raw: bytes) -> FileResult:
    result = check_source("mutated.yaml", raw)
    lines = raw.decode("utf-8", "replace").removeprefix("\ufeff").split("\n")
    for d in result.diagnostics:
        where = f"{d.rule} {d.span.line}:{d.span.column} {d.message!r}"
        assert d.rule in RULES, where
        assert d.severity in ("error", "warning"), where
        assert d.message and isinstance(d.help, str), where
        assert 1 <= d.span.line <= len(lines), f"line outside the file: {where}"
        if "invalid UTF-8" not in d.message:  # column in bytes: reported, hostile corpus
            assert 1 <= d.span.column <= len(lines[d.span.line - 1]) + 1, \
                f"column outside line {d.span.line}: {where}"
    return result


# -- 1. mutations ----------------------------------------------------------------------------

class _PlainDumper(yaml.SafeDumper):
    """Writes every string plain when YAML allows it, so that `on`, `true` and `12` come back
    the way the spec's loader (YAML 1.2 core schema) reads them."""

    yaml_implicit_resolvers: dict[str, list[object]] = {}


def _tree(text: str) -> Any:
    return yaml.load(text, Loader=yaml.BaseLoader)  # every scalar a string: nothing resolved


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*prefix, i))
    return out


def _get(node: Any, path: tuple) -> Any:
    for p in path:
        node = node[p]
    return node


scalar_text = st.one_of(
    st.sampled_from(["", "~", "null", "true", "false", "yes", "on", "off", "0", "-1", "1.5",
                     "0x1F", ".inf", "class", "None", "send", "on_enter", "done", "created",
                     "running", "a b", "!!binary", "*alias", "&anchor", "{", "[", "#", "'"]),
    st.text(st.characters(blacklist_categories=("Cs",),
                          blacklist_characters=LINE_BREAKS_LIBYAML_ONLY), max_size=12),
)
values = st.recursive(
    scalar_text, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                         st.dictionaries(scalar_text, inner, max_size=3)),
    max_leaves=6)


@st.composite
def mutated_tree_text(draw: st.DrawFn) -> str:
    tree = _tree(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(1, 4))):
        paths = [p for p in _paths(tree) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent, key = _get(tree, path[:-1]), path[-1]
        op = draw(st.sampled_from(["delete", "rename", "replace", "wrap", "unicode-key"]))
        if op == "delete":
            del parent[key]
        elif op == "rename" and isinstance(parent, dict):
            parent[draw(scalar_text)] = parent.pop(key)
        elif op == "unicode-key" and isinstance(parent, dict):
            new = draw(st.text(st.characters(blacklist_categories=("Cs", "Cc"),
                                             blacklist_characters=LINE_BREAKS_LIBYAML_ONLY),
                               min_size=1, max_size=8))
            parent[new] = parent.pop(key)
        elif op == "wrap":
            parent[key] = draw(st.sampled_from([[parent[key]], {"x": parent[key]}]))
        else:
            parent[key] = draw(values)
    flow = draw(st.sampled_from([None, True, False]))
    return yaml.dump(tree, Dumper=_PlainDumper, default_flow_style=flow, allow_unicode=True,
                     sort_keys=False)


@st.composite
def mutated_text(draw: st.DrawFn) -> bytes:
    text = draw(st.one_of(st.sampled_from(SEEDS), mutated_tree_text()))
    lines = text.split("\n")
    for _ in range(draw(st.integers(0, 3))):
        op = draw(st.sampled_from(["dup-line", "del-line", "indent", "truncate", "insert"]))
        i = draw(st.integers(0, max(len(lines) - 1, 0)))
        if op == "dup-line" and lines:
            lines.insert(i, lines[i])  # duplicate keys, duplicate states, duplicate events
        elif op == "del-line" and lines:
            del lines[i]
        elif op == "indent" and lines:
            lines[i] = draw(st.sampled_from([" ", "  ", "\t", ""])) + lines[i].lstrip(" ")
        elif op == "truncate":
            joined = "\n".join(lines)
            lines = joined[: draw(st.integers(0, len(joined)))].split("\n")
        else:
            joined = "\n".join(lines)
            at = draw(st.integers(0, len(joined)))
            junk = draw(st.text(st.characters(blacklist_categories=("Cs",),
                                              blacklist_characters=LINE_BREAKS_LIBYAML_ONLY),
                                max_size=6))
            lines = (joined[:at] + junk + joined[at:]).split("\n")
    raw = "\n".join(lines).encode("utf-8")
    if draw(st.booleans()):
        at = draw(st.integers(0, len(raw)))
        raw = raw[:at] + draw(st.binary(max_size=4)) + raw[at:]
    return raw


# The full runs are `slow` (`pytest -m slow`, a CI step of its own); the default run keeps a
# few examples of each (`_smoke`).
@pytest.mark.slow
@SETTINGS
@given(mutated_text())
def test_mutated_specs_never_crash(raw: bytes) -> None:
    _check(raw)


@settings(SETTINGS, max_examples=SMOKE)
@given(mutated_text())
def test_mutated_specs_never_crash_smoke(raw: bytes) -> None:
    _check(raw)


@pytest.mark.slow
@SETTINGS
@given(mutated_tree_text())
def test_structurally_mutated_specs_never_crash(text: str) -> None:
    _check(text.encode("utf-8"))


@settings(SETTINGS, max_examples=SMOKE)
@given(mutated_tree_text())
def test_structurally_mutated_specs_never_crash_smoke(text: str) -> None:
    _check(text.encode("utf-8"))


def test_a_state_named_with_a_space_is_reported_not_a_crash() -> None:
    """Found by the structural mutations: a state renamed ` ` (and targets left naming the old
    name) made a rule's analysis read the repaired target ` ` as two states named `` (the
    runtime's chart separates a multi-target transition's targets by spaces)."""
    text = ("statechart: s\nversion: 1\ninitial: a\nstates:\n  a:\n    on:\n"
            "      go: missing\n      stop: ' '\n  ' ':\n    final: true\n"
            "rules:\n  - id: r\n    only: {from: a, to: [' ']}\n")
    found = {(d.rule, d.span.line) for d in _check(text.encode()).diagnostics}
    assert ("unknown-state", 7) in found
    assert ("invalid-name", 9) in found


@settings(max_examples=300, deadline=None, phases=[Phase.explicit, Phase.generate])
@given(st.binary(max_size=200))
def test_random_bytes_never_crash(raw: bytes) -> None:
    result = _check(raw)
    assert result.errors or result.spec is not None


# -- 2. random valid specs -------------------------------------------------------------------

POOL = [n for n in (
    ["on", "off", "yes", "no", "y", "n", "On", "NO", "Off", "idle", "busy", "null_state",
     "true_north", "Type", "final_ok", "if_then", "done_x"]
    + [f"{a}{b}" for a in "abcdefgh" for b in ("", "1", "_x", "Q")]
) if names.member_problem(n) is None]
IDENT = st.from_regex(r"\A[a-z][a-z0-9_]{0,10}\Z").filter(lambda s: names.member_problem(s) is None)


def _render_state(name: str, body: dict, indent: int, flow: bool) -> list[str]:
    pad = " " * indent
    if flow or not body:
        return [f"{pad}{name}: {_flow(body)}"]
    out = [f"{pad}{name}:"]
    for key, value in body.items():
        if key == "states":
            out.append(f"{pad}  states:")
            for child, child_body, child_flow in value:
                out += _render_state(child, child_body, indent + 4, child_flow)
        elif key == "on":
            out.append(f"{pad}  on:")
            for event, alts in value.items():
                if len(alts) == 1 and set(alts[0]) == {"target"}:
                    out.append(f"{pad}    {event}: {alts[0]['target']}")
                else:
                    out.append(f"{pad}    {event}:")
                    out += [f"{pad}      - {_flow(a, False)}" for a in alts]
        else:
            out.append(f"{pad}  {key}: {_flow(value, False)}")
    return out


def _plain(body: dict) -> dict:
    """A state body as plain data (the `states` and `on` entries turned into mappings)."""
    out: dict[str, Any] = {}
    for k, v in body.items():
        if k == "states":
            v = {c: _plain(b) for c, b, _ in v}
        elif k == "on":
            v = {e: (a[0]["target"] if len(a) == 1 and set(a[0]) == {"target"} else a)
                 for e, a in v.items()}
        out[k] = v
    return out


def _flow(value: Any, top: bool = True) -> str:
    if top and isinstance(value, dict):
        value = _plain(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flow(v, False)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v, False) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@st.composite
def valid_specs(draw: st.DrawFn) -> str:
    all_names = draw(st.lists(st.one_of(st.sampled_from(POOL), IDENT), min_size=40,
                              max_size=60, unique=True))
    assume(len(all_names) >= 40)
    n_leaves = draw(st.integers(1, 12))
    leaves = all_names[:n_leaves]
    pool = all_names[n_leaves:]
    finals = [pool.pop() for _ in range(draw(st.integers(1, 2)))]
    events = [pool.pop() for _ in range(6)]
    guards = [pool.pop() for _ in range(3)]
    fields = [pool.pop() for _ in range(draw(st.integers(0, 2)))]
    actions = [pool.pop() for _ in range(2)]
    tag = pool.pop()

    # A random tree: leaves grouped under compound (or parallel) states, up to 3 levels.
    nodes: list[Any] = [("leaf", x) for x in leaves]
    groups: dict[str, dict] = {}
    for _level in range(draw(st.integers(0, 3))):
        if len(nodes) < 2 or len(pool) < 2:
            break
        size = draw(st.integers(1, len(nodes)))
        start = draw(st.integers(0, len(nodes) - size))
        name = pool.pop()
        parallel = draw(st.integers(0, 4)) == 0
        groups[name] = {"parallel": parallel, "children": nodes[start:start + size]}
        nodes[start:start + size] = [("group", name)]

    order = leaves  # the chain that reaches every leaf and ends in a final state
    chain = {order[i]: order[i + 1] for i in range(len(order) - 1)}
    chain[order[-1]] = finals[0]
    all_targets = leaves + list(groups) + finals
    used_fields: list[str] = []

    def leaf_body(name: str) -> dict:
        body: dict[str, Any] = {}
        on: dict[str, list[dict]] = {}
        ev = list(events)
        on[ev.pop(draw(st.integers(0, len(ev) - 1)))] = [{"target": chain[name]}]
        if name == order[0]:
            on[ev.pop(draw(st.integers(0, len(ev) - 1)))] = [{"target": finals[-1]}]
        for _ in range(draw(st.integers(0, 3))):
            if not ev:
                break
            event = ev.pop(draw(st.integers(0, len(ev) - 1)))
            n_alts = draw(st.integers(1, 3))
            gs = draw(st.permutations(guards))
            alts = []
            for i in range(n_alts):
                alt: dict[str, Any] = {"target": draw(st.sampled_from(all_targets))}
                if i < n_alts - 1 or draw(st.booleans()):
                    alt["guard"] = gs[i]  # guarded first, distinct guards, fallback last
                if fields and draw(st.booleans()):
                    f = draw(st.sampled_from(fields))
                    alt["set"] = [f]
                    used_fields.append(f)
                alts.append(alt)
            if alts:
                on[event] = alts
        body["on"] = on
        if draw(st.booleans()):
            body["entry"] = [draw(st.sampled_from(actions))]
        if draw(st.integers(0, 3)) == 0:
            body["tags"] = [tag]
        if draw(st.integers(0, 4)) == 0:
            body["limit"] = draw(st.integers(1, 5))
        if draw(st.integers(0, 3)) == 0:
            body["description"] = "'" + draw(st.sampled_from(["on", "yes: no", "#x", "a, b"])) + "'"
        return body

    def render(node: Any) -> tuple[str, dict, bool]:
        if node[0] == "leaf":
            return node[1], leaf_body(node[1]), draw(st.booleans())
        g = groups[node[1]]
        body: dict[str, Any] = {}
        if g["parallel"]:
            body["parallel"] = True
        else:
            first = g["children"][0]
            body["initial"] = first[1]
        body["states"] = [render(child) for child in g["children"]]
        return node[1], body, draw(st.booleans())

    top = [render(node) for node in nodes]
    for i, f in enumerate(finals):
        tagged = i == 0 or draw(st.booleans())
        top.append((f, {"final": True, **({"tags": [tag]} if tagged else {})},
                    draw(st.booleans())))
    lines = ["statechart: prop_spec", "version: 1", f"initial: {top[0][0]}"]
    if fields:
        lines.append("record:")
        for f in fields:
            lines.append(f"  {f}: {{type: {draw(st.sampled_from(['string', 'integer']))}}}")
    lines.append("states:")
    for name, body, flow in top:
        lines += _render_state(name, body, 2, flow)
    if draw(st.booleans()):
        lines += ["rules:", f"  - unreachable: {{from: {finals[0]}, to: {top[0][0]}}}",
                  f"  - never: {{from: {finals[-1]}, to: {{tag: {tag}}}}}"]
    return "\n".join(lines) + "\n"


VALID = settings(max_examples=100, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def _no_errors(text: str) -> None:
    result = _check(text.encode("utf-8"))
    errors = [f"{d.rule}@{d.span.line}:{d.span.column}: {d.message}" for d in result.errors]
    assert not errors, text + "\n" + "\n".join(errors)


@pytest.mark.slow
@VALID
@given(valid_specs())
def test_random_valid_specs_have_no_errors(text: str) -> None:
    _no_errors(text)


@settings(VALID, max_examples=SMOKE)
@given(valid_specs())
def test_random_valid_specs_have_no_errors_smoke(text: str) -> None:
    _no_errors(text)


@pytest.mark.parametrize("seed", range(5))
def test_genspec_output_is_valid(seed: int) -> None:
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from genspec import generate
    finally:
        sys.path.pop(0)
    for nested in (False, True):
        result = _check(generate(30 + seed * 17, nested, seed).encode())
        assert result.diagnostics == []
