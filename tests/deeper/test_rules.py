"""Both rules are registered, documented in the house headings, and have annotated fixture cases in
C++ and Python with positive and negative annotations (the shared runner then checks every case)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewbot.checks import comment_guard_mismatch, guard_ignores_coupled_flag
from reviewbot.checks.registry import CHECKS, doc
from reviewbot.model.change import SkipReason
from reviewbot.model.finding import Severity
from tests.checks.fixtures import FIXTURES, expectations
from tests.deeper.helpers import review_fixture

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


@pytest.mark.parametrize(
    "case",
    sorted(p for rule in RULES for p in (FIXTURES / rule).iterdir() if p.is_dir()),
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_no_check_crashes_on_the_fixture_repositories(case: Path, tmp_path: Path) -> None:
    """A crashing check is reported as a note, not a failure: a negative case would then pass silently."""
    reviewed = review_fixture(case.parent.name, case.name, tmp_path / "repo")
    crashed = [n.message for n in reviewed.review.notes if n.reason is SkipReason.CHECK_CRASHED]
    assert crashed == []
    assert reviewed.review.kpi["checks_failed"] == 0
