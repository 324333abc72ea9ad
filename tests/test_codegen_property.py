"""Property: any spec that passes `check` generates a module that compiles, imports and runs.

Hypothesis builds random valid specs: names next to keywords and builtins (`str`, `State`,
`None_`, `property`), descriptions with quotes, backslashes, newlines, `\\r`, U+2028 and other
Unicode, nested and parallel states, guards, actions, every field type, timers (delays and
deadlines) that the walk fires as time passes.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
from codegen_support import checked_text, generate, import_source, validator, walk
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from statechart import names

ODD = ["str", "int", "float", "bool", "dict", "list", "State", "Enum", "Any", "Final",
       "json", "enum", "math", "uuid", "property", "classmethod", "print", "None_", "class_",
       "if_", "True_", "Self", "TypeAlias", "dataclass", "field", "Mapping", "Callable",
       "OrderedSet", "InvalidRecord", "LimitExceeded", "camelCase", "A", "z_9", "x",
       # names that clash in Python or python-statemachine: mapped (docs/generated-code.md)
       "send", "on_hold", "error_x", "after_y", "done_state_z", "record", "state", "history",
       "class", "mro", "model", "match", "to_dict", "self", "restore", "configuration"]
WORD = st.from_regex(r"[a-z][a-z0-9_]{0,7}", fullmatch=True)
MEMBER = st.one_of(st.sampled_from(ODD), WORD).filter(lambda n: names.member_problem(n) is None)
FIELD = st.one_of(st.sampled_from(ODD), WORD).filter(
    lambda n: names.identifier_problem(n) is None and n not in names.RECORD_BUILTINS)
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


def yaml_string(text: str) -> str:
    """A YAML double-quoted scalar that reads back as exactly `text`."""
    out = []
    for c in text:
        if c == '"':
            out.append('\\"')
        elif c == "\\":
            out.append("\\\\")
        elif " " <= c <= "~":
            out.append(c)
        elif ord(c) <= 0xFFFF:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(f"\\U{ord(c):08x}")
    return '"' + "".join(out) + '"'


@st.composite
def specs(draw: Any) -> str:
    pool = draw(st.lists(MEMBER, min_size=22, max_size=30, unique=True))
    states, events, guards, actions = pool[:8], pool[8:16], pool[16:19], pool[19:22]
    fields = draw(st.lists(FIELD, min_size=1, max_size=4, unique=True))
    fields = [f for f in fields if f not in pool] or ["zz_field"]
    types = draw(st.lists(st.sampled_from(["string", "integer", "number", "boolean",
                                           "datetime", "enum", "json"]),
                          min_size=len(fields), max_size=len(fields)))
    shape = draw(st.sampled_from(["flat", "nested", "parallel"]))
    desc = lambda: yaml_string(draw(TEXT))  # noqa: E731
    lines = ["statechart: prop", "version: 1", f"description: {desc()}",
             f"initial: {states[0]}", "record:"]
    for name, kind in zip(fields, types, strict=True):
        if kind == "enum":
            values = draw(st.lists(st.sampled_from(["a", "b", "value", "name", "Any", "x1"]),
                                   min_size=1, max_size=3, unique=True))
            lines.append(f"  {name}: {{enum: [{', '.join(values)}], "
                         f"description: {desc()}}}")
        else:
            lines.append(f"  {name}: {{type: {kind}, description: {desc()}}}")
    sets = draw(st.lists(st.sampled_from(fields), max_size=2, unique=True))
    lines.append("states:")
    a, b, c, final = states[0], states[1], states[2], states[7]
    lines += [f"  {a}:", f"    description: {desc()}", f"    entry: [{actions[0]}]",
              "    on:",
              f"      {events[0]}:",
              f"        - {{target: {b}, guard: {guards[0]}, set: [{', '.join(sets)}]}}",
              f"        - {{target: {final}, description: {desc()}}}"]
    # Timers (`after:`): a delay and, when there is a datetime field, maybe a deadline.
    delays = st.sampled_from(["500ms", "1s", "15m", "PT2H", "P1D", "P1DT2H"])
    after = [f"{draw(delays)}: {b}"] if draw(st.booleans()) else []
    deadlines = [f for f, kind in zip(fields, types, strict=True) if kind == "datetime"]
    if deadlines and draw(st.booleans()):
        after.append(f"{deadlines[0]}: {{target: {final}, guard: {guards[1]}}}")
    if after:
        lines.append(f"    after: {{{', '.join(after)}}}")
    inner_after = f", after: {{{draw(delays)}: {c}}}" if draw(st.booleans()) else ""
    if shape == "flat":
        lines += [f"  {b}:", f"    exit: [{actions[1]}]",
                  f"    on: {{{events[1]}: {c}, {events[2]}: {a}}}",
                  f"  {c}:", f"    on: {{{events[3]}: {final}}}"]
    elif shape == "nested":
        lines += [f"  {b}:", f"    initial: {c}", f"    exit: [{actions[1]}]",
                  f"    on: {{{events[1]}: {final}, {events[2]}: {a}}}", "    states:",
                  f"      {c}:", f"        entry: [{actions[2]}]",
                  f"        on: {{{events[3]}: {states[3]}}}",
                  f"      {states[3]}: {{on: {{{events[4]}: {c}}}{inner_after}}}"]
    else:
        lines += [f"  {b}:", "    parallel: true",
                  f"    on: {{{events[1]}: {final}, {events[2]}: {a}}}", "    states:",
                  f"      {c}:", f"        initial: {states[3]}", "        states:",
                  f"          {states[3]}:", f"            on: {{{events[3]}: {states[4]}}}",
                  f"          {states[4]}: {{after: {{{draw(delays)}: {states[3]}}}}}",
                  f"      {states[5]}:", f"        initial: {states[6]}", "        states:",
                  f"          {states[6]}:", f"            on: {{{events[4]}: {states[6]}}}"]
    lines += [f"  {final}:", "    final: true", f"    description: {desc()}"]
    return "\n".join(lines) + "\n"


SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])


@pytest.mark.slow  # `pytest -m slow`; the default run keeps a few examples (`_smoke`)
@SETTINGS
@given(text=specs())
def test_any_checked_spec_generates_a_module_that_imports_and_runs(
        text: str, tmp_path: Path) -> None:
    _generates_a_module_that_imports_and_runs(text, tmp_path)


@settings(SETTINGS, max_examples=8)
@given(text=specs())
def test_any_checked_spec_generates_a_module_that_imports_and_runs_smoke(
        text: str, tmp_path: Path) -> None:
    _generates_a_module_that_imports_and_runs(text, tmp_path)


def _generates_a_module_that_imports_and_runs(text: str, tmp_path: Path) -> None:
    spec = checked_text(text)
    assert spec is not None, text  # the strategy only builds valid specs
    produced = generate(spec)
    source = produced["generated/prop.py"]
    tree = ast.parse(source.decode("ascii"))
    compile(tree, "prop.py", "exec")
    module = import_source(source, tmp_path, "prop")
    assert module.SPEC_SHA256 == spec.source_sha256
    assert module.DESCRIPTION == (spec.description or "")  # literals, read back exactly
    for state in spec.states.values():
        if state.description:
            assert module.STATE_DESCRIPTIONS[module.PropState(state.name)] \
                == state.description
    schema = produced["generated/prop.schema.json"]
    assert json.loads(schema).get("description", "") == (spec.description or "")
    walk(module, validator(schema), steps=12, seed=len(text))
