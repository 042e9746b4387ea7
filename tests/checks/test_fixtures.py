"""Every annotated fixture case: the reported lines of each named rule equal the `ruleid` lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewbot.checks.registry import CHECKS, EXECUTION_RULES
from reviewbot.checks.registry import KNOWN_RULES as ALL_RULES
from tests.checks.fixtures import FIXTURES, cases, compare, expectations, review_case

CASES = cases()


def test_every_rule_has_cases_in_both_languages() -> None:
    # The execution-stage rules judge executed tests; their cases run real test commands (tests/execution).
    for rule in sorted(set(CHECKS) - EXECUTION_RULES):
        langs = {p.name.split("-", 1)[0] for p in (FIXTURES / rule).iterdir() if p.is_dir()}
        assert {"cpp", "py"} <= langs, f"{rule}: cases only for {langs}"
        kinds = {e.kind for case in (FIXTURES / rule).iterdir() if case.is_dir() for e in expectations(case)}
        assert {"ruleid", "ok"} <= kinds, f"{rule}: needs positive and negative annotations"


@pytest.mark.parametrize("case", CASES, ids=[f"{c.parent.name}/{c.name}" for c in CASES])
def test_fixture(case: Path, tmp_path: Path) -> None:
    findings = review_case(case, tmp_path / "repo")
    problems = compare(case, findings, set(ALL_RULES))
    assert not problems, "\n".join(problems)


def test_runner_rejects_unknown_rule(tmp_path: Path) -> None:
    case = tmp_path / "case"
    (case / "base").mkdir(parents=True)
    (case / "head").mkdir()
    (case / "head" / "a.py").write_text("# ruleid: no-such-rule\nx = 1\n")
    problems = compare(case, [], set(ALL_RULES))
    assert problems == ["a.py:2: annotation names unknown rule 'no-such-rule'"]
