"""The explicit, typed list of rules. Every rule is a module with `id`, `severity`, `summary`, `run(ctx)`.

Static rules and the execution-stage rules (which read `ctx.execution`) are registered alike: the pipeline
runs every rule through `run(ctx)`, `reviewbot rules` and SARIF describe every one of them.
"""

from __future__ import annotations

from reviewbot.checks import (
    always_true_guard,
    comment_guard_mismatch,
    default_changed,
    defaults_raise,
    derivation_drift,
    derivation_overridden,
    duplicated_predicate,
    env_name_typo,
    env_switch_renamed,
    explicit_value_overwritten,
    flag_overloading,
    flag_removed_without_alias,
    formatting_noise,
    guard_ignores_coupled_flag,
    guard_removed,
    ineffective_test,
    missing_tests,
    renamed_flag_still_referenced,
    stale_comment,
    stale_doc_default,
    suppression_without_reason,
    unconditional_override,
    undefined_name,
    unguarded_optional_import,
    untested_branch,
    validation_rejects_default,
)
from reviewbot.checks.base import Check

__all__ = ["RULES", "CHECKS", "ALL_RULES", "KNOWN_RULES", "EXECUTION_RULES", "get", "doc"]

# In report order. Each module satisfies the Check protocol by its module-level names, which mypy checks.
RULES: tuple[Check, ...] = (
    missing_tests,
    unconditional_override,
    duplicated_predicate,
    flag_overloading,
    formatting_noise,
    guard_ignores_coupled_flag,
    comment_guard_mismatch,
    guard_removed,
    env_switch_renamed,
    default_changed,
    always_true_guard,
    derivation_overridden,
    derivation_drift,
    stale_comment,
    untested_branch,
    ineffective_test,
    suppression_without_reason,
    undefined_name,
    validation_rejects_default,
    env_name_typo,
    renamed_flag_still_referenced,
    flag_removed_without_alias,
    explicit_value_overwritten,
    stale_doc_default,
    defaults_raise,
    unguarded_optional_import,
)

CHECKS: dict[str, Check] = {r.id: r for r in RULES}
ALL_RULES = CHECKS  # one registry: kept as a name for callers that list rules
KNOWN_RULES: frozenset[str] = frozenset(CHECKS)
# Rules that judge executed tests; without executed tests they are not evaluated (checklist).
EXECUTION_RULES: frozenset[str] = frozenset({untested_branch.id, ineffective_test.id, defaults_raise.id})


def get(rule_id: str) -> Check | None:
    return CHECKS.get(rule_id)


def doc(rule_id: str) -> str:
    return (CHECKS[rule_id].__doc__ or "").strip()
