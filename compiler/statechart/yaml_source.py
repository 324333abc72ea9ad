"""Read a spec file into a YAML node tree that keeps every position, safely and fast.

What this guards against (each has a spec in the tests' hostile corpus, tests/hostile/, with
the finding it must give in tests/hostile/expected.json):
- YAML 1.1 booleans: PyYAML turns `on`, `off`, `yes`, `no` into booleans, which would turn every
  `on:` key of a spec into `True`. We compose nodes with no implicit resolvers at all and
  resolve plain scalars ourselves with the YAML 1.2 core schema (`scalar_value`).
- Alias bombs: nine levels of aliases expand to a billion nodes when walked. Specs may not use
  anchors or aliases; a shared node is refused with the position of its anchor.
- Absurd size and nesting: files over `MAX_BYTES` are refused before parsing; libyaml (the
  wheel's, >= 0.2.6 patch) stops past 1000 levels itself, and `MAX_DEPTH` bounds what we walk.
- Bad bytes: invalid UTF-8, NUL and other control characters get a line and column here, since
  libyaml's ReaderError only knows a byte offset.

The C loader (`CSafeLoader`) is used when present; it is several times faster than pure Python.
"""

from __future__ import annotations

import gc
import re
from dataclasses import dataclass
from typing import ClassVar

import yaml

from statechart.diagnostics import Diagnostic, Span, new_span

try:
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    # Not a subclass of CSafeLoader, but the same loader interface: mypy sees a redefinition.
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]

MAX_BYTES = 16 * 1024 * 1024
MAX_DEPTH = 64

STR_TAG = "tag:yaml.org,2002:str"
MAP_TAG = "tag:yaml.org,2002:map"
SEQ_TAG = "tag:yaml.org,2002:seq"

# C0/C1 controls (tab, LF, CR allowed), and the Unicode line separators: libyaml counts U+0085,
# U+2028 and U+2029 as line breaks where editors do not, so every later position would be off.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029]")
# YAML 1.2 core schema (https://yaml.org/spec/1.2.2/#1032-tag-resolution)
_LONE_CR = re.compile(r"\r(?!\n)")  # a line break to YAML, not to line-counting tools
_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_INT10 = re.compile(r"^[-+]?[0-9]+$")
_INT8 = re.compile(r"^0o[0-7]+$")
_INT16 = re.compile(r"^0x[0-9a-fA-F]+$")
# The plain scalars of `_NULL` and `_BOOL` that start with a letter, and their values.
_WORDS: dict[str, object] = {
    **dict.fromkeys(("null", "Null", "NULL")),
    **dict.fromkeys(("true", "True", "TRUE"), True),
    **dict.fromkeys(("false", "False", "FALSE"), False),
}
_FLOAT = re.compile(
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)


class _Loader(_BaseLoader):
    """Composes nodes only; every plain scalar stays a string tag until we resolve it."""

    # PyYAML keeps this table on the class (`add_implicit_resolver` is a classmethod), but
    # types-PyYAML declares it as an instance attribute, so mypy refuses the ClassVar.
    yaml_implicit_resolvers: ClassVar[dict[str, list[object]]] = {}  # type: ignore[misc]

    def resolve(self, kind: type, value: object, implicit: object) -> str:
        # Called for every untagged node; the default walks resolver tables we left empty.
        if kind is yaml.ScalarNode:
            return STR_TAG
        return SEQ_TAG if kind is yaml.SequenceNode else MAP_TAG


@dataclass(frozen=True)
class Source:
    path: str
    text: str
    root: yaml.Node | None  # None when the file is empty or only comments


def span_of(path: str, node: yaml.Node) -> Span:
    start, end = node.start_mark, node.end_mark
    line, column = start.line + 1, start.column + 1
    if end.line == start.line and end.column <= start.column:
        return new_span(path, line, column, line, column + 1)
    return new_span(path, line, column, end.line + 1, end.column + 1)


def plain_name(node: yaml.Node) -> str | None:
    """The text of a scalar that is a string starting with a letter under the core schema
    (`target`, `s12`, `"on"`), else None (then `scalar_value` says what it is): the one
    question the model builder asks of most of the 200,000 keys and names of a large spec."""
    if node.__class__ is not yaml.ScalarNode:
        return None
    text = node.value
    if text[:1].isalpha() and node.tag == STR_TAG and (node.style or text not in _WORDS):
        return text  # type: ignore[no-any-return]
    return None


def scalar_value(node: yaml.ScalarNode) -> object:
    """The value of a scalar under the YAML 1.2 core schema (quoted scalars are strings)."""
    text = node.value
    if node.style or node.tag != STR_TAG:  # C loader: "" for plain, None in pure Python
        return text
    if text[:1].isalpha():
        # Most names (`target`, `to_review`): of the core schema's values only the null and
        # boolean words start with a letter, so one lookup replaces six patterns.
        return _WORDS.get(text, text)
    if _NULL.match(text):
        return None
    if _BOOL.match(text):
        return text.lower() == "true"
    if _INT10.match(text):
        return int(text)
    if _INT8.match(text):
        return int(text[2:], 8)
    if _INT16.match(text):
        return int(text[2:], 16)
    if _FLOAT.match(text):
        if text.lstrip("+-").startswith("."):
            lowered = text.lower()
            if lowered.endswith(("inf", "nan")):  # `.inf`, `-.Inf`, `.NaN`: Python spells `inf`
                return float(lowered.replace(".", ""))
        return float(text)
    return text


def _line_col(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def _problem(rule: str, path: str, line: int, col: int, message: str, hint: str) -> Diagnostic:
    return Diagnostic(rule, "error", message, Span.point(path, line, col), hint)


def too_large(size: int | None) -> str:
    """The message for a file over `MAX_BYTES` (`size` None: more than that was read)."""
    what = f"{size:,} bytes" if size is not None else f"more than {MAX_BYTES:,} bytes"
    return f"file is {what}, over the {MAX_BYTES:,}-byte limit for a spec"


TOO_LARGE_HINT = "split the spec, or check that this is the file you meant"


def decode(path: str, raw: bytes) -> tuple[str | None, list[Diagnostic]]:
    """Bytes to text, or a positioned diagnostic saying why not."""
    if len(raw) > MAX_BYTES:  # bytes from git or a caller; files are refused before reading
        return None, [_problem("yaml-syntax", path, 1, 1, too_large(len(raw)), TOO_LARGE_HINT)]
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    elif raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None, [
            _problem("yaml-syntax", path, 1, 1, "file is UTF-16; specs must be UTF-8",
                     "save the file as UTF-8")
        ]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        prefix = raw[: exc.start].decode("utf-8", "replace")
        line, col = _line_col(prefix, len(prefix))
        return None, [
            _problem("yaml-syntax", path, line, col,
                     f"invalid UTF-8 byte 0x{raw[exc.start]:02x}; specs must be UTF-8 text",
                     "save the file as UTF-8; is this a binary file?")
        ]
    lone_cr = _LONE_CR.search(text)
    if lone_cr:
        line, col = _line_col(text, lone_cr.start())
        return None, [
            _problem("yaml-syntax", path, line, col,
                     "carriage return without a line feed (classic Mac line ending)",
                     "save the file with LF or CRLF line endings")
        ]
    bad = _CONTROL.search(text)
    if bad:
        line, col = _line_col(text, bad.start())
        return None, [
            _problem("yaml-syntax", path, line, col,
                     f"control character U+{ord(bad.group()):04X} in the file",
                     "remove it; specs are plain text")
        ]
    return text, []


def _yaml_error(path: str, text: str, exc: yaml.YAMLError) -> Diagnostic:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
    lines = text.split("\n")
    if line > len(lines):  # libyaml puts an error at the end of input past the last line
        line, col = len(lines), len(lines[-1]) + 1
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    context = getattr(exc, "context", None)
    message = f"{context}, {problem}" if context else str(problem)
    hint = "fix the YAML syntax at this position"
    at = mark.index if mark is not None and mark.index is not None else -1
    if "\t" in message or "tab" in message or (0 <= at < len(text) and text[at] == "\t"):
        hint = "indent with spaces; YAML does not allow tabs for indentation"
    return _problem("yaml-syntax", path, line, col, f"invalid YAML: {message}", hint)


def _check_shape(path: str, root: yaml.Node, has_anchor: bool) -> list[Diagnostic]:
    """Refuse aliases, explicit tags and deep nesting, walking each node once (iteratively)."""
    problems: list[Diagnostic] = []
    seen: set[int] = set()
    stack: list[tuple[yaml.Node, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if has_anchor:
            if id(node) in seen:
                problems.append(Diagnostic(
                    "yaml-syntax", "error",
                    "anchors and aliases are not supported in specs (this anchored node is reused)",
                    span_of(path, node),
                    "write the value out where it is used; aliases can expand without bound",
                ))
                return problems
            seen.add(id(node))
        if node.tag not in (STR_TAG, MAP_TAG, SEQ_TAG):
            problems.append(Diagnostic(
                "yaml-syntax", "error", f"explicit YAML tag {node.tag!r} is not supported",
                span_of(path, node), "remove the tag; specs use plain YAML values"))
            continue
        if depth > MAX_DEPTH:
            problems.append(Diagnostic(
                "yaml-syntax", "error", f"nesting deeper than {MAX_DEPTH} levels",
                span_of(path, node), "flatten the spec; no statechart needs this depth"))
            return problems
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack.append((value, depth + 1))
                stack.append((key, depth + 1))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, depth + 1) for item in node.value)
    return problems


def _explicit_tags(path: str, text: str) -> list[Diagnostic]:
    """Any explicit tag, standard ones (`!!str`, `!!map`) included: the composed tree cannot
    tell `!!str 1` from a plain `1`, so the event stream is read again (only for texts that
    contain a `!`, which most specs do not)."""
    for event in yaml.parse(text, Loader=_Loader):
        tag = getattr(event, "tag", None)
        if tag is not None:
            mark = event.start_mark
            line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
            return [_problem("yaml-syntax", path, line, col,
                             f"explicit YAML tag {tag!r} is not supported",
                             "remove the tag; specs use plain YAML values")]
    return []


def load_text(path: str, text: str) -> tuple[Source | None, list[Diagnostic]]:
    has_anchor = "&" in text  # no anchor, no alias: skip the per-node alias walk
    gc_was_enabled = gc.isenabled()
    gc.disable()  # the composer builds many small objects and no cycles; gc only costs here
    try:
        loader = _Loader(text)
        try:
            root = loader.get_single_node()
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        return None, [_yaml_error(path, text, exc)]
    except RecursionError:  # pure-Python fallback loader on deep input
        return None, [_problem("yaml-syntax", path, 1, 1, "nesting too deep to parse",
                               "flatten the spec")]
    finally:
        if gc_was_enabled:
            gc.enable()
    if root is None:
        return Source(path, text, None), []
    # Explicit tags need a "!" and aliases an "&" in the text: without either, the builder's
    # own depth-bounded walk is enough and large specs skip a pass over every node.
    problems = _explicit_tags(path, text) if "!" in text else []
    if not problems and has_anchor:
        problems = _check_shape(path, root, has_anchor)
    if problems:
        return None, problems
    return Source(path, text, root), []


def load_bytes(path: str, raw: bytes) -> tuple[Source | None, list[Diagnostic]]:
    text, problems = decode(path, raw)
    if text is None:
        return None, problems
    return load_text(path, text)
