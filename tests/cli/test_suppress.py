"""Inline suppressions (issue 27): `// reviewbot: ignore[rule] reason` on a finding's line or the line
above takes it out and counts it in the KPI; one without a reason suppresses nothing and is a P3."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewbot.checks.suppression_without_reason import parse_suppression
from reviewbot.cli import main
from reviewbot.example import build_example
from tests.gitrepo import git

CC = "rtp_llm/cpp/config/ModelConfig.cc"
WRITE = "    if (config.rope_config.style == RopeStyle::No && !use_kvcache) {"  # line 20: the P1's line


def _review(tmp_path: Path, capsys: pytest.CaptureFixture[str], replace: str) -> dict:
    """The example's first round with its line `WRITE` replaced by `replace`."""
    example = build_example(tmp_path / "repo")
    repo = example.path
    git(repo, "checkout", "-q", example.round1)
    text = (repo / CC).read_text()
    assert text.count(WRITE + "\n") == 1
    (repo / CC).write_text(text.replace(WRITE + "\n", replace + "\n"))
    git(repo, "commit", "-q", "-am", "suppress")
    head = git(repo, "rev-parse", "HEAD")
    argv = [
        "run",
        "--path",
        str(repo),
        "--base",
        example.base,
        "--head",
        head,
        "--no-tests",
        "--format",
        "json",
    ]
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def _rules(doc: dict) -> list[str]:
    return [f["rule"] for f in doc["findings"]]


def test_a_suppression_with_a_reason_on_the_line_takes_the_finding_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = _review(tmp_path, capsys, WRITE + "  // reviewbot: ignore[missing-tests] pinned by the e2e suite")
    assert "missing-tests" not in _rules(doc)
    assert doc["status"] != "BLOCKING"  # the only P1 was suppressed
    assert doc["kpi"]["suppressed"] == 1
    (s,) = doc["kpi"]["suppressed_findings"]
    assert s["rule"] == "missing-tests" and s["reason"] == "pinned by the e2e suite" and s["line"] == 20
    assert "suppression-without-reason" not in _rules(doc)


def test_a_suppression_on_the_line_above_names_several_rules(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    comment = "    // reviewbot: ignore[missing-tests, flag-overloading] embedding models only"
    doc = _review(tmp_path, capsys, comment + "\n" + WRITE)
    assert "missing-tests" not in _rules(doc)
    assert doc["kpi"]["suppressed"] >= 1
    assert {s["rule"] for s in doc["kpi"]["suppressed_findings"]} <= {"missing-tests", "flag-overloading"}


def test_a_suppression_without_a_reason_suppresses_nothing_and_is_a_p3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = _review(tmp_path, capsys, WRITE + "  // reviewbot: ignore[missing-tests]")
    assert "missing-tests" in _rules(doc) and doc["status"] == "BLOCKING"
    assert doc["kpi"]["suppressed"] == 0
    (bare,) = [f for f in doc["findings"] if f["rule"] == "suppression-without-reason"]
    assert bare["severity"] == "P3" and bare["path"] == CC and bare["line"] == 20
    assert "gives no reason" in bare["title"]


def test_a_suppression_of_another_rule_leaves_the_finding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = _review(tmp_path, capsys, WRITE + "  // reviewbot: ignore[formatting-noise] unrelated")
    assert "missing-tests" in _rules(doc) and doc["kpi"]["suppressed"] == 0


@pytest.mark.parametrize(
    ("line", "rules", "reason"),
    [
        (
            "x = 1  # reviewbot: ignore[missing-tests] covered elsewhere",
            ("missing-tests",),
            "covered elsewhere",
        ),
        ("// reviewbot: ignore[a, b] -- why", ("a", "b"), "why"),
        ("/* reviewbot: ignore[a] */", None, None),  # not a line comment
        ("x = 1  # reviewbot: ignore[a]", ("a",), ""),
        ("x = 1  # reviewbot: ignore[a] :", ("a",), ""),
        ("x = 1  # reviewbot ignore a", None, None),
    ],
)
def test_the_comment_syntax(line: str, rules: tuple[str, ...] | None, reason: str | None) -> None:
    found = parse_suppression(line)
    if rules is None:
        assert found is None
    else:
        assert found is not None and found.rules == rules and found.reason == reason
