"""Which names a spec may use, and the Python names the generated code gives them: the single
list that the checker and the code generators share.

A spec's names stay its names wherever a user sees them (enum values, record JSON, history,
docs, `run.send("on_hold")`, messages). Only Python identifiers are mapped (docs/generated-code.md,
"Names"): a name that would be a keyword, shadow python-statemachine's API (`send`, `model`,
`states`) or the generated classes' own (`record`, `status`), or start with a prefix that
python-statemachine calls as a hook by convention (`on_<event>`, `error_<x>`), gets a Python name
`<kind>_<name>` (`state_send`, `event_on_hold`, `guard_after_review`, `field_class`), made
unique against every name of the spec. What stays refused cannot be represented: non-ASCII
identifiers, which Python NFKC-normalises (`ᴺone` becomes the name `None`, `ﬁnal` becomes
`final`, so two spec names could become one), and text that is no identifier at all. Each has
a spec in tests/hostile/ that `check` must refuse.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable

# \Z, not $: `$` also matches before a final newline, and "agent\n" is not a name.
IDENTIFIER = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}\Z")
SPEC_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}\Z")

# Spec names whose outputs are another file's: `docs/specs/index.md` is the page listing every
# spec, so a spec named `index` would write its own page over it and every build would fail
# with two specs writing one file.
RESERVED_SPEC_NAMES = frozenset({"index"})

# dir(StateMachine) | dir(StateChart) of python-statemachine 3.2.2, public names, plus the
# instance attributes it sets. Frozen here so that a library upgrade cannot silently change
# which specs are valid.
STATEMACHINE_NAMES = frozenset({
    "TransitionNotAllowed", "activate_initial_state", "active_listeners", "add_listener",
    "allow_event_without_transition", "allowed_events", "atomic_configuration_update",
    "bind_events_to", "cancel_event", "catch_errors_as_events", "configuration",
    "configuration_values", "current_state", "current_state_value",
    "enable_self_transition_entries", "enabled_events", "events", "id", "is_terminated", "name",
    "prepare", "raise_", "send", "start_configuration_values", "states", "states_map",
    "model", "state_field", "history_values", "listeners", "initial_state", "final_states",
    "validate_disconnected_states", "validate_trap_states", "validate_final_reachability",
})

# Public attributes of python-statemachine's `State` (class and instance), 3.2.2: a nested
# state becomes an attribute of its parent's State, so its Python name must not be one of
# these (`to = State()` inside a compound fails at import: `to` is a read-only property).
STATE_ATTRIBUTES = frozenset({
    "Compound", "Parallel", "ancestors", "final", "from_", "id", "initial", "is_compound",
    "is_descendant", "is_history", "parallel", "to", "document_order", "enter", "exit",
    "history", "invoke", "is_active", "is_atomic", "name", "parent", "states", "transitions",
    "value",
})

# Names the generated module and its record class use for themselves.
GENERATED_NAMES = frozenset({
    "record", "restore", "to_json", "from_json", "to_dict", "from_dict", "now", "clock",
    "status", "run_id", "history", "counts", "version", "spec_version", "enter", "exit",
    "state", "transition", "event", "source", "target", "machine", "self", "cls",
    "has_tag",
    "mro",  # enum.Enum refuses it as a member name (states and events become enum members)
})

CALLBACK_PREFIXES = ("on_", "before_", "after_", "error_", "done_state_", "done_invoke_")

# The run facade's own API (statechart_runtime.run.Run) and the machine's (Machine), which a
# facade method (event, guard, action) or a machine attribute (state, event) must not hide;
# `prepare_event` is a convention callback without a prefix.
RUNTIME_NAMES = frozenset({
    "send", "restore", "status", "configuration", "is_terminated", "record", "machine",
    "clock", "has_tag", "allowed_events", "run_exit_actions", "reset_to", "prepare_event",
})

# Prefix of the Python name of each kind of name that needs one.
KIND_PREFIX = {"state": "state_", "event": "event_", "guard": "guard_", "action": "action_",
               "field": "field_", "value": "value_"}

# Record fields become attributes of the generated record class and keyword arguments of the
# event methods; enum values, states and events become enum members.
RECORD_METHODS = ("to_dict", "from_dict", "to_json", "from_json")
RESERVED_FIELDS = frozenset({"self", *RECORD_METHODS})
RESERVED_ENUM_VALUES = frozenset({"mro"})  # enum.Enum refuses it as a member name

# Built-in fields of every run record (JSON keys); spec fields may not reuse them.
RECORD_BUILTINS = frozenset({
    "runId", "specVersion", "status", "configuration", "lastTransitionAt", "history", "counts",
})


def identifier_problem(name: str) -> str | None:
    """Why `name` cannot be a name in a spec, or None when it can."""
    if not name.isascii():
        return "contains non-ASCII characters (they can normalise to other names)"
    if not IDENTIFIER.match(name):
        return ("is not an identifier (a letter, then letters, digits or `_`; "
                "at most 64 characters)")
    return None


def event_problem(name: str) -> str | None:
    """Why `name` cannot be an event (an `on:` key), or None when it can: `*`, or identifiers
    separated by dots (an event descriptor, `error.tool.timeout`), the first not `done` or
    `after` when there is a dot (the run's own events are `done.state.X`, `after.ID.X`)."""
    if name == "*":
        return None
    tokens = name.split(".")
    for token in tokens:
        problem = identifier_problem(token)
        if problem is not None:
            return problem if len(tokens) == 1 else f"has a part `{token}` that {problem}"
    if len(tokens) > 1 and tokens[0] in ("done", "after"):
        return f"starts like the run's own events (`{tokens[0]}.`...)"
    if len(name) > 200:
        return "is longer than 200 characters"
    return None


def event_python_name(name: str) -> str:
    """The Python name a dotted event starts from: dots become `_` (`error.tool.timeout` ->
    `error_tool_timeout`); then mapped like any name (docs/generated-code.md, "Names")."""
    return name.replace(".", "_")


def suggestion(name: str) -> str:
    """A representable name derived from `name`, for a hint: ASCII letters of its NFKD form
    (`ﬁnal` -> `final`, `café` -> `cafe`), other characters as `_`, a letter first."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    out = re.sub(r"[^A-Za-z0-9_]+", "_", ascii_name).strip("_")
    if not out or not out[0].isalpha():
        out = "n_" + out
    return out[:64].rstrip("_") or "name"


# Python's keywords, frozen so that the generated code does not depend on the Python version
# that builds it. Soft keywords (`match`, `case`, `type`) are valid names and are not mapped.
PYTHON_KEYWORDS = frozenset({
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class",
    "continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if",
    "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try",
    "while", "with", "yield",
})


def is_python_reserved(name: str) -> bool:
    return name in PYTHON_KEYWORDS


def member_needs_mapping(name: str) -> bool:
    """Whether a state, event, guard or action needs a Python name other than its own (it
    becomes a machine attribute, a facade method and an enum member)."""
    return (is_python_reserved(name) or name in STATEMACHINE_NAMES or name in GENERATED_NAMES
            or name in RUNTIME_NAMES or name in STATE_ATTRIBUTES
            or name.startswith(CALLBACK_PREFIXES))


def field_needs_mapping(name: str) -> bool:
    """Whether a record field needs an attribute (and keyword argument) name of its own."""
    return is_python_reserved(name) or name in RESERVED_FIELDS


def enum_member_needs_mapping(name: str) -> bool:
    """Whether a state, event or enum value needs an enum member name other than its own."""
    return is_python_reserved(name) or name in RESERVED_ENUM_VALUES


def python_names(names: Iterable[str], kind: str, needs: Callable[[str], bool],
                 taken: set[str]) -> dict[str, str]:
    """{name: its Python name} for the `names` that `needs` mapping: `<kind>_<name>`, with `_`
    appended while that is in `taken` (every name of the namespace, and the Python names given
    so far, which are added to it). Deterministic: it depends on the names and their order."""
    out: dict[str, str] = {}
    for name in names:
        if name in out or not needs(name):
            continue
        mapped = KIND_PREFIX[kind] + name
        while mapped in taken or needs(mapped):
            mapped += "_"
        taken.add(mapped)
        out[name] = mapped
    return out


def member_problem(name: str) -> str | None:
    """Why `name` cannot be a state, event, guard or action, or None when it can (a name that
    clashes in Python is mapped, not refused: see `python_names`)."""
    return identifier_problem(name)
