"""The execution-stage rules are documented like every check (ruff-style headings) and registered."""

from __future__ import annotations

from types import ModuleType

import pytest

from reviewbot.checks import ineffective_test, untested_branch
from reviewbot.checks.registry import ALL_RULES
from reviewbot.review.finding import Severity

HEADINGS = ("## What it does", "## Why is this bad?", "## Example", "## Use instead")


@pytest.mark.parametrize("module", [untested_branch, ineffective_test], ids=lambda m: m.id)
def test_rule_module_is_documented_and_registered(module: ModuleType) -> None:
    doc = module.__doc__ or ""
    positions = [doc.find(h) for h in HEADINGS]
    assert all(p >= 0 for p in positions) and positions == sorted(positions)
    assert doc.startswith(f"{module.id} ({module.severity.value})")
    assert module.severity is Severity.P2 and module.summary.endswith(".")
    assert ALL_RULES[module.id] is module
