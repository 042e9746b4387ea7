"""The explicit list of checks. A check is a module with `id`, `severity`, `summary`, `run(ctx)`."""

from __future__ import annotations

from types import ModuleType

from reviewbot.checks import (
    duplicated_predicate,
    flag_overloading,
    formatting_noise,
    missing_tests,
    unconditional_override,
)

__all__ = ["CHECKS", "get", "doc"]

_MODULES: tuple[ModuleType, ...] = (
    missing_tests,
    unconditional_override,
    duplicated_predicate,
    flag_overloading,
    formatting_noise,
)

CHECKS: dict[str, ModuleType] = {m.id: m for m in _MODULES}


def get(rule_id: str) -> ModuleType | None:
    return CHECKS.get(rule_id)


def doc(rule_id: str) -> str:
    module = CHECKS[rule_id]
    return (module.__doc__ or "").strip()
