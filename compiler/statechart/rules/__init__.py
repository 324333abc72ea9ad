"""The rule registry: a plain dict from rule id to its module.

Each module's docstring is the rule's documentation (`statechart rule ID`, docs/rules.md).
`PHASE` says where a rule's problems come from: `yaml` rules are reported while reading the
file (they have no `check`), `model` and `graph` rules check the built model.
"""

from __future__ import annotations

from types import ModuleType

from statechart.rules import (
    ambiguous_transition,
    cleared_required,
    completion_loop,
    descriptor_order,
    duplicate_key,
    duplicate_state,
    in_never_active,
    invalid_history_default,
    invalid_internal,
    invalid_migration,
    invalid_multi_target,
    invalid_name,
    invalid_work,
    missing_initial,
    no_path_to_final,
    overlay,
    racing_work,
    rule_violation,
    schema,
    scxml_import,
    terminal_exit,
    trap_state,
    unaccepted_outcome,
    unknown_field,
    unknown_state,
    unreachable_state,
    unused_field,
    unused_suppression,
    yaml_syntax,
)

RULES: dict[str, ModuleType] = {
    m.ID: m
    for m in (
        yaml_syntax, duplicate_key, schema, overlay, duplicate_state, invalid_name, unknown_state,
        missing_initial, unknown_field, unreachable_state, terminal_exit, trap_state,
        no_path_to_final, completion_loop, ambiguous_transition, rule_violation,
        invalid_migration, unused_field, unused_suppression, cleared_required, invalid_internal,
        in_never_active, scxml_import, invalid_history_default, invalid_multi_target,
        descriptor_order, invalid_work, unaccepted_outcome, racing_work,
    )
}

CHECKS = [m for m in RULES.values() if hasattr(m, "check")]

# The rules a project may turn off or lower to a warning (`severity`, `per-file-ignores`,
# `# statechart: ignore[...]`): warnings, and the errors about a spec's design that still
# compiles to a working module. Every other error means the model is incomplete or
# contradictory (a target that is not a state, a name that clashes): lowering it would let
# `build` generate code from a model the generators cannot trust.
ADJUSTABLE = frozenset(
    {m.ID for m in RULES.values() if m.SEVERITY == "warning"}
    | {"unreachable-state", "trap-state", "no-path-to-final", "rule-violation"}
)


def get(rule_id: str) -> ModuleType:
    try:
        return RULES[rule_id]
    except KeyError:
        from statechart.build_model import did_you_mean

        hint = did_you_mean(rule_id, RULES)
        raise KeyError(f"no rule `{rule_id}`" + (f"; {hint}" if hint else "")) from None


def documentation(rule_id: str) -> str:
    module = get(rule_id)
    return (module.__doc__ or "").strip()
