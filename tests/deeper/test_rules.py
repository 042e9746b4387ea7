"""Both rules are registered, documented in the house headings, and have annotated fixture cases in
C++ and Python with positive and negative annotations (the shared runner then checks every case)."""

from __future__ import annotations

import pytest

from reviewbot.checks import comment_guard_mismatch, guard_ignores_coupled_flag
from reviewbot.checks.registry import CHECKS, doc
from reviewbot.review.finding import Severity
from tests.checks.fixtures import FIXTURES, expectations

RULES = {
    "guard-ignores-coupled-flag": (guard_ignores_coupled_flag, Severity.P2),
    "comment-guard-mismatch": (comment_guard_mismatch, Severity.P3),
}


@pytest.mark.parametrize("rule", sorted(RULES))
def test_rule_is_a_static_check_with_the_documented_headings(rule: str) -> None:
    module, severity = RULES[rule]
    assert CHECKS[rule] is module and module.severity is severity and module.summary
    text = doc(rule)
    for heading in ("## What it does", "## Why is this bad?", "## Example", "## Use instead"):
        assert heading in text, f"{rule}: missing {heading}"


@pytest.mark.parametrize("rule", sorted(RULES))
def test_rule_has_cases_in_both_languages_with_positive_and_negative_annotations(rule: str) -> None:
    cases = [p for p in (FIXTURES / rule).iterdir() if p.is_dir()]
    assert {p.name.split("-", 1)[0] for p in cases} >= {"cpp", "py"}
    for lang in ("cpp", "py"):
        kinds = {e.kind for case in cases if case.name.startswith(lang + "-") for e in expectations(case)}
        assert {"ruleid", "ok"} <= kinds, f"{rule}/{lang}: needs positive and negative annotations"
