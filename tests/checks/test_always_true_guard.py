"""always-true-guard: severities and evidence on the fixture cases (the reported lines are held by
test_fixtures)."""

from __future__ import annotations

from pathlib import Path

from reviewbot.model.finding import Finding, Severity
from tests.checks.fixtures import FIXTURES, review_case

RULE = "always-true-guard"


def _findings(case: str, tmp_path: Path) -> dict[int, Finding]:
    return {f.line: f for f in review_case(FIXTURES / RULE / case, tmp_path / "repo") if f.rule == RULE}


def test_constant_guards_are_p0_and_misread_strings_p1(tmp_path: Path) -> None:
    found = _findings("py-env-and-names", tmp_path)
    holder = found[25]
    assert holder.severity is Severity.P0
    assert holder.title.startswith("`envs.USE_MODELSCOPE is True` is always `False`")
    assert holder.evidence == ("Used as an object at config/switches.py:28: `envs.USE_MODELSCOPE.get()`.",)
    assert found[36].severity is Severity.P0 and "always `False`" in found[36].title
    assert found[42].evidence[0].startswith("`REGISTRY` is bound to `Registry()` at config/switches.py:19")
    assert found[54].title.startswith('`MODE` is always `True`: `MODE` is bound to `"fast"`')
    raw = found[73]
    assert raw.severity is Severity.P1
    assert "`DISABLE_STREAM=0` → '0'" in raw.evidence[0]
    assert found[61].severity is Severity.P1 and "`%`" in found[61].title
    assert sorted(found) == [25, 36, 42, 54, 61, 73]
    assert "USE_MODELSCOPE" in holder.localized("zh").title and holder.localized("zh").title != holder.title


def test_a_function_name_tested_for_truth_in_cpp(tmp_path: Path) -> None:
    found = _findings("cpp-function-and-division", tmp_path)
    assert found[8].severity is Severity.P0
    assert (
        found[8].evidence[0]
        == "`useFastPath` is bound to `def useFastPath(...)` at cpp/Shards.cc:3 and never rebound."
    )
    assert sorted(found) == [8, 16]
