"""Which names a spec may use: the single list that the checker and the code generators share.

Names become Python identifiers in generated code (class attributes, enum members, keyword
arguments, methods), so they are checked here once, and the generators trust them.
The hazards: non-ASCII identifiers, which Python NFKC-normalises (`ᴺone` becomes the name
`None`, `ﬁnal` becomes `final`, so two spec names could become one attribute); names that
shadow python-statemachine's API (`send`, `model`, `states`); and the prefixes that
python-statemachine calls as hooks by convention (`on_<event>`). Each has a spec in
tests/hostile/ (unicode_normalisation.yaml, api_names.yaml) that `check` must refuse.
"""

from __future__ import annotations

import keyword
import re

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

# Names the generated module and its record class use for themselves.
GENERATED_NAMES = frozenset({
    "record", "restore", "to_json", "from_json", "to_dict", "from_dict", "now", "clock",
    "status", "run_id", "history", "counts", "version", "spec_version", "enter", "exit",
    "state", "transition", "event", "source", "target", "machine", "self", "cls",
    "has_tag",
    "mro",  # enum.Enum refuses it as a member name (states and events become enum members)
})

CALLBACK_PREFIXES = ("on_", "before_", "after_", "error_", "done_state_", "done_invoke_")

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
    if keyword.iskeyword(name) or keyword.issoftkeyword(name) or name == "type":
        return "is a Python keyword"
    return None


def member_problem(name: str) -> str | None:
    """Why `name` cannot be a state, event, guard or action (a member of the machine class)."""
    reason = identifier_problem(name)
    if reason:
        return reason
    if name in STATEMACHINE_NAMES:
        return "would shadow python-statemachine's API in the generated class"
    if name in GENERATED_NAMES:
        return "is used by the generated class itself"
    if name.startswith(CALLBACK_PREFIXES):
        return (f"starts with `{name.split('_')[0]}_`, which python-statemachine treats as a "
                "callback convention")
    return None
