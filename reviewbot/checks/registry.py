"""The explicit, typed list of rules. Every rule is a module with `id`, `severity`, `summary`, `run(ctx)`.

Static rules and the execution-stage rules (which read `ctx.execution`) are registered alike: the pipeline
runs every rule through `run(ctx)`, `reviewbot rules` and SARIF describe every one of them.
"""

from __future__ import annotations

from reviewbot.checks import (
    always_true_guard,
    arg_value_not_consumed,
    choices_exclude_default,
    comment_guard_mismatch,
    config_key_removed,
    default_changed,
    defaults_raise,
    derivation_drift,
    derivation_overridden,
    double_argv_increment,
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
    validation_removed,
)
from reviewbot.checks.base import Check

__all__ = ["RULES", "CHECKS", "ALL_RULES", "KNOWN_RULES", "OPT_IN", "EXECUTION_RULES", "active", "get", "doc"]

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
    validation_removed,
    config_key_removed,
    explicit_value_overwritten,
    stale_doc_default,
    defaults_raise,
    unguarded_optional_import,
    double_argv_increment,
    arg_value_not_consumed,
    choices_exclude_default,
)

CHECKS: dict[str, Check] = {r.id: r for r in RULES}
ALL_RULES = CHECKS  # one registry: kept as a name for callers that list rules
KNOWN_RULES: frozenset[str] = frozenset(CHECKS)
# Rules off unless a repository names them in `[review] enabled` (as ruff keeps rules out of its default
# selection): each was wrong on nearly every real commit it fired on, on both splits of the accuracy
# corpus (docs/accuracy.md), and no narrower condition was found that keeps its few right findings.
# A maintainer who wants the note (a release that must keep every flag) opts in.
OPT_IN: frozenset[str] = frozenset(
    {flag_removed_without_alias.id, formatting_noise.id, validation_removed.id}
)


def active(disabled: frozenset[str], enabled: frozenset[str]) -> frozenset[str]:
    """The rule ids a round runs: every rule but the disabled ones and the opt-in ones not enabled."""
    return frozenset(rid for rid in CHECKS if rid not in disabled and (rid not in OPT_IN or rid in enabled))


# Rules that judge executed tests; without executed tests they are not evaluated (checklist).
EXECUTION_RULES: frozenset[str] = frozenset({untested_branch.id, ineffective_test.id, defaults_raise.id})


def get(rule_id: str) -> Check | None:
    return CHECKS.get(rule_id)


def doc(rule_id: str) -> str:
    return (CHECKS[rule_id].__doc__ or "").strip()
