from __future__ import annotations

from pathlib import Path

import pytest

from reviewbot.checks.registry import KNOWN_RULES as ALL_RULES
from reviewbot.errors import UsageError
from reviewbot.model.finding import Finding, Severity
from reviewbot.review.checklist import (
    bundled_names,
    evaluate,
    load_checklist,
    parse_checklist,
    with_checklist_refs,
)


def _finding(rule: str, severity: Severity = Severity.P3) -> Finding:
    return Finding(rule=rule, severity=severity, path="a.cc", line=3, title=f"{rule} title", anchor=rule)


def test_bundled_checklists_load_and_name_only_known_rules() -> None:
    assert {"general", "rtp-llm"} <= set(bundled_names())
    for name in bundled_names():
        cl = load_checklist(name, ALL_RULES)
        assert cl.items, name
        assert len({i.id for i in cl.items}) == len(cl.items), f"{name}: duplicate item ids"


def test_items_fail_by_their_rules_and_findings_name_their_items() -> None:
    general = load_checklist("general", ALL_RULES)
    findings = [_finding("duplicated-predicate"), _finding("missing-tests", Severity.P1)]
    result = evaluate([general], findings)
    failed = {i.id for i in result.items if i.failed}
    assert "general/se-dry" in failed and "general/tests-focused" in failed
    assert "general/arch-rollback" not in failed
    assert result.total == len(general.items) and result.failed == len(failed)
    refs = with_checklist_refs(findings, result)
    assert any("DRY" in label for label in refs[0].checklist)


def test_chinese_labels() -> None:
    result = evaluate([load_checklist("general", ALL_RULES)], [], lang="zh")
    assert result.items[0].section == "通用原则检查清单"
    assert "兼容性" in result.items[0].label


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("items: [", "not valid YAML"),
        ("name: x\n", "list of `items`"),
        ("items:\n  - label: no id\n", "needs `id` and `label`"),
        ("items:\n  - id: a\n    label: b\n    rules: [no-such-rule]\n", "unknown rule(s) no-such-rule"),
    ],
)
def test_bad_checklists_are_usage_errors(text: str, message: str) -> None:
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_checklist(text, "repo.yaml", ALL_RULES)


def test_items_of_rules_that_did_not_run_are_not_evaluated_not_passed() -> None:
    general = load_checklist("general", ALL_RULES)
    result = evaluate([general], [], not_run=frozenset({"untested-branch", "ineffective-test"}))
    by_id = {i.id: i for i in result.items}
    assert by_id["general/tests-effective"].evaluated is False and not by_id["general/tests-effective"].failed
    # An item that also names a static rule is still evaluated.
    assert by_id["general/tests-focused"].evaluated is True
    ran = evaluate([general], [], not_run=frozenset())
    assert all(i.evaluated for i in ran.items)


def test_a_disabled_rules_item_is_not_evaluated_in_a_review(tmp_path: Path) -> None:
    # `[review] disabled = ["formatting-noise"]`: the rule did not run, so "Logic changes are not mixed
    # with unrelated formatting" was not checked; ticking it would claim what nobody looked at.

    from reviewbot.change.diff import load_change
    from reviewbot.review.pipeline import ReviewSettings, review_change
    from tests.checks.fixtures import FIXTURES, build_case

    repo, base, head = build_case(FIXTURES / "formatting-noise" / "py-reindent-block", tmp_path / "repo")
    change = load_change(repo.path, base, head)
    rule = frozenset({"formatting-noise"})
    on = review_change(change, ReviewSettings(enabled_rules=rule))  # an opt-in rule, turned on
    off = review_change(change, ReviewSettings(enabled_rules=rule, disabled_rules=rule))
    default = review_change(change, ReviewSettings())  # opt-in and not enabled: it did not run either
    item = "general/quality-no-formatting"
    assert [(i.evaluated, i.failed) for i in on.checklist.items if i.id == item] == [(True, True)]
    assert [(i.evaluated, i.failed) for i in off.checklist.items if i.id == item] == [(False, False)]
    [reason] = [i.reason for i in off.checklist.items if i.id == item]
    assert reason == "not evaluated: `formatting-noise` is disabled in .reviewbot.toml"  # not "tests not run"
    [(evaluated, why)] = [(i.evaluated, i.reason) for i in default.checklist.items if i.id == item]
    assert not evaluated and "opt-in" in why


def test_every_rule_that_can_block_fails_a_general_item() -> None:
    # A BLOCKING review whose checklist reads "0 fail" contradicts itself: every rule declared P0–P2
    # names at least one item of the general checklist its findings fail.
    from reviewbot.checks.registry import CHECKS

    listed = {r for item in load_checklist("general", ALL_RULES).items for r in item.rules}
    blocking = {c.id for c in CHECKS.values() if c.severity in (Severity.P0, Severity.P1, Severity.P2)}
    assert blocking and blocking <= listed, sorted(blocking - listed)
