"""The generated module's sections written as text (statechart.codegen.module_lines) and its
docstrings' wrapping (`python_module.wrap`) give what the template's loops, `py()` and
textwrap gave (issue 31: the same bytes, faster)."""

from __future__ import annotations

import textwrap

from hypothesis import given
from hypothesis import strategies as st

from statechart.codegen import module_lines
from statechart.codegen._jinja import py
from statechart.codegen.python_module import wrap

_WORDS = st.lists(st.text(alphabet="ab-_>,.()", min_size=1, max_size=12), max_size=60)


@given(_WORDS, st.integers(min_value=1, max_value=40))
def test_wrap_is_textwrap_s(words: list[str], width: int) -> None:
    text = " ".join(words)
    assert wrap(text, width) == textwrap.wrap(text, width=width, break_long_words=False,
                                              break_on_hyphens=False)


_NAMES = st.text(st.characters(exclude_categories=("Cs",)), max_size=8)
_PLAIN = st.one_of(st.none(), st.integers(), _NAMES)


@given(st.lists(st.tuples(_NAMES, _NAMES, _NAMES, st.lists(_NAMES, max_size=3).map(tuple)),
                max_size=5))
def test_rows_are_py_s_literals(rows: list[tuple[str, str, str, tuple[str, ...]]]) -> None:
    assert module_lines.alternative_lines(rows) == "".join(
        f"        {py(row)},\n" for row in rows)
    assert module_lines.rows(rows, "    ") == "".join(f"    {py(row)},\n" for row in rows)


@given(st.lists(_PLAIN, min_size=1, max_size=4).map(tuple))
def test_a_tuple_of_plain_values_is_py_s(values: tuple[object, ...]) -> None:
    assert module_lines.values(values) == py(values)


def test_a_lone_surrogate_is_refused_as_py_refuses_it() -> None:
    import pytest

    from statechart.codegen import CodegenError

    with pytest.raises(CodegenError, match="surrogate"):
        module_lines.alternative_lines([("a\ud800", "go", "b", ())])
