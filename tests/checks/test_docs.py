"""Every rule is documented with the same headings (ruff's rule-doc convention) and a known severity."""

from __future__ import annotations

from types import ModuleType

import pytest

from reviewbot.checks import ineffective_test, untested_branch
from reviewbot.checks.registry import ALL_RULES, CHECKS, KNOWN_RULES, doc
from reviewbot.model.finding import Severity

HEADINGS = ("## What it does", "## Why is this bad?", "## Example", "## Use instead")


@pytest.mark.parametrize("rule", sorted(ALL_RULES))
def test_rule_module_is_documented(rule: str) -> None:
    module = ALL_RULES[rule]
    doc = module.__doc__ or ""
    assert module.id == rule
    assert doc.splitlines()[0].startswith(f"{rule} ({module.severity.value}"), (
        "first line: `<id> (<severity>): <summary>`"
    )
    positions = [doc.find(h) for h in HEADINGS]
    assert all(p >= 0 for p in positions), (
        f"{rule}: missing {[h for h, p in zip(HEADINGS, positions, strict=True) if p < 0]}"
    )
    assert positions == sorted(positions), f"{rule}: headings out of order"
    assert isinstance(module.severity, Severity) and module.summary.endswith(".")


def test_every_known_rule_has_a_module() -> None:
    assert set(ALL_RULES) == set(KNOWN_RULES)


@pytest.mark.parametrize("module", [untested_branch, ineffective_test], ids=lambda m: m.id)
def test_execution_stage_rules_are_registered_at_p2(module: ModuleType) -> None:
    assert ALL_RULES[module.id] is module and module.severity is Severity.P2


def test_sarif_describes_every_registered_rule_with_its_documentation() -> None:
    from reviewbot.model.review import ChecklistResult, Review, Status
    from reviewbot.report.render import render_sarif
    from reviewbot.report.sarif import plain_text

    review = Review(Status.LGTM, "b" * 40, "h" * 40, "b" * 40, "", [], ChecklistResult([]), [], [], {})
    rules = render_sarif(review)["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == list(CHECKS)
    for r in rules:
        # markdown as written; text is the same documentation with the markdown syntax taken out
        assert r["help"]["markdown"] == doc(r["id"]) and "## What it does" in r["help"]["markdown"], r["id"]
        assert r["help"]["text"] == plain_text(doc(r["id"])) and "##" not in r["help"]["text"], r["id"]
        assert r["fullDescription"]["text"] and "##" not in r["fullDescription"]["text"], r["id"]
