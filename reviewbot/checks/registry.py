"""The explicit list of checks. A check is a module with `id`, `severity`, `summary`, `run(ctx)`."""

from __future__ import annotations

from types import ModuleType

from reviewbot.checks import (
    comment_guard_mismatch,
    duplicated_predicate,
    flag_overloading,
    formatting_noise,
    guard_ignores_coupled_flag,
    missing_tests,
    unconditional_override,
)

__all__ = ["CHECKS", "ALL_RULES", "KNOWN_RULES", "EXECUTION_RULES", "get", "doc"]

_MODULES: tuple[ModuleType, ...] = (
    missing_tests,
    unconditional_override,
    duplicated_predicate,
    flag_overloading,
    formatting_noise,
    guard_ignores_coupled_flag,
    comment_guard_mismatch,
)

CHECKS: dict[str, ModuleType] = {m.id: m for m in _MODULES}

# Rules whose findings come from later stages (test execution). They are documented modules too; the
# pipeline does not call their `run` directly.
_STAGE_MODULES: dict[str, str] = {
    "untested-branch": "reviewbot.checks.untested_branch",
    "ineffective-test": "reviewbot.checks.ineffective_test",
}


def _stage_modules() -> dict[str, ModuleType]:
    import importlib

    out: dict[str, ModuleType] = {}
    for name in _STAGE_MODULES.values():
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError:
            continue
        out[module.id] = module
    return out


ALL_RULES: dict[str, ModuleType] = {**CHECKS, **_stage_modules()}
KNOWN_RULES: frozenset[str] = frozenset(CHECKS) | frozenset(_STAGE_MODULES)
# Rules only the test-execution stage can report; without executed tests they are not evaluated.
EXECUTION_RULES: frozenset[str] = frozenset(_STAGE_MODULES)


def get(rule_id: str) -> ModuleType | None:
    return ALL_RULES.get(rule_id)


def doc(rule_id: str) -> str:
    module = ALL_RULES[rule_id]
    return (module.__doc__ or "").strip()
