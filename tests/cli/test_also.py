"""`reviewbot run --also FORMAT=FILE`: one review, several reports (the Action writes markdown and SARIF)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewbot.cli import main
from reviewbot.example import ExampleRepo, build_example


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> ExampleRepo:
    return build_example(tmp_path_factory.mktemp("example") / "repo")


def test_also_writes_each_format_from_one_review(example: ExampleRepo, tmp_path: Path) -> None:
    md, sarif, js = tmp_path / "r.md", tmp_path / "r.sarif", tmp_path / "r.json"
    args = [
        "run",
        "--path",
        str(example.path),
        "--base",
        example.base,
        "--head",
        example.round1,
        "--no-tests",
    ]
    assert (
        main(
            [*args, "--format", "markdown", "-o", str(md), "--also", f"sarif={sarif}", "--also", f"json={js}"]
        )
        == 0
    )
    doc = json.loads(js.read_text())
    results = json.loads(sarif.read_text())["runs"][0]["results"]
    assert len(results) == len(doc["findings"]) > 0
    assert md.read_text().startswith("## reviewbot review — " + doc["status"])


@pytest.mark.parametrize("spec", ["sarif", "yaml=x.yaml", "sarif="])
def test_a_bad_also_is_one_line_and_exit_2(
    example: ExampleRepo, spec: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["run", "--path", str(example.path), "--base", example.base, "--head", example.round1]
    assert main([*args, "--also", spec]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"reviewbot: --also {spec}: give FORMAT=FILE")
