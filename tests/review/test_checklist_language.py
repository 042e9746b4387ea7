"""Checklist texts by language: one function picks them; a checklist without Chinese shows its English."""

from __future__ import annotations

from reviewbot.review.checklist import evaluate, in_language, load_checklist, parse_checklist


def test_bundled_labels_are_chinese_in_a_chinese_review_and_english_otherwise() -> None:
    general = load_checklist("general")
    zh = evaluate([general], [], "zh")
    en = evaluate([general], [], "en")
    assert zh.items[0].section == "通用原则检查清单"
    assert "兼容性" in zh.items[0].label
    assert en.items[0].section == "General Principles Checklist"
    assert "Compatibility" in en.items[0].label


def test_a_repository_checklist_without_chinese_keeps_its_english_text() -> None:
    own = parse_checklist("id: own\nname: Ours\nitems:\n  - id: a\n    label: Keep it small\n", "own.yaml")
    item = evaluate([own], [], "zh").items[0]
    assert (item.section, item.label) == ("Ours", "Keep it small")
    assert in_language({"en": "x", "zh": ""}, "zh") == "x"
    assert in_language({"en": "x", "zh": "甲"}, "zh") == "甲"
