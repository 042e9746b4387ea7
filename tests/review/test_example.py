"""The bundled example end to end through the CLI: what the README's first command shows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewbot.cli import main
from reviewbot.example import ExampleRepo, build_example

CC = "rtp_llm/cpp/config/ModelConfig.cc"


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> ExampleRepo:
    return build_example(tmp_path_factory.mktemp("example") / "repo")


def _line(example: ExampleRepo, needle: str) -> int:
    text = _show(example, CC)
    return next(n for n, t in enumerate(text.splitlines(), 1) if needle in t)


def _show(example: ExampleRepo, path: str) -> str:
    import subprocess

    return subprocess.run(
        ["git", "show", f"{example.round1}:{path}"],
        cwd=example.path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def _run_json(example: ExampleRepo, capsys: pytest.CaptureFixture[str], *extra: str) -> dict:
    code = main(
        [
            "run",
            "--path",
            str(example.path),
            "--base",
            example.base,
            "--head",
            example.round1,
            "--format",
            "json",
            "--no-tests",
            *extra,
        ]
    )
    assert code == 0
    return json.loads(capsys.readouterr().out)


def test_example_report_has_the_seed_findings_at_the_right_lines(
    example: ExampleRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = _run_json(example, capsys)
    assert doc["status"] == "BLOCKING"
    by_rule = {f["rule"]: f for f in doc["findings"]}
    if_line = _line(example, "if (config.rope_config.style == RopeStyle::No && !use_kvcache)")
    assign_line = _line(example, "config.need_rope_kv_cache = false;")
    fuse_line = _line(example, "config.fuse_qkv_add_bias =")

    missing = by_rule["missing-tests"]
    assert (missing["path"], missing["line"], missing["blocking"]) == (CC, if_line, True)
    assert "no test mentions them" in missing["evidence"][0]
    # --no-tests: nothing ran, so the rows to pin are offered in prose and no unexecuted sketch
    assert missing["suggestion_code"] == "" and "(rope_style=RopeStyle.No" in missing["suggestion"]

    dup = by_rule["duplicated-predicate"]
    assert (dup["path"], dup["line"]) == (CC, if_line)
    evidence = "\n".join(dup["evidence"])
    assert f"same function: {CC}:{fuse_line}" in evidence
    # only the same-function copy: a copy in the other language decides another field elsewhere
    assert "other language:" not in evidence

    override = by_rule["unconditional-override"]
    assert (override["path"], override["line"], override["severity"]) == (CC, assign_line, "P2")
    evidence = "\n".join(override["evidence"])
    assert "rtp_llm/models/bert.py:" in evidence
    assert "rtp_llm/cpp/pybind/ConfigInit.cc:" in evidence
    assert "other than LANGUAGE_MODEL" in evidence

    overloading = by_rule["flag-overloading"]
    assert (overloading["path"], overloading["line"]) == (CC, assign_line)
    evidence = "\n".join(overloading["evidence"])
    assert "rocm_impl/aiter.py" in evidence and "rope_kvcache_op.forward" in evidence
    assert "py_flashinfer_mha.py" in evidence and "kv_cache_write_op.forward" in evidence

    # The one blank line the change deletes is incidental: formatting-noise wants re-spaced code.
    assert "formatting-noise" not in by_rule
    assert doc["checklist"]["failed"] > 0 and doc["checklist"]["total"] >= doc["checklist"]["failed"]
    assert doc["kpi"]["coverage"] == 1.0 and doc["kpi"]["diff_truncated"] is False


def test_same_change_twice_gives_identical_json_apart_from_timings(
    example: ExampleRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    first = _run_json(example, capsys)
    second = _run_json(example, capsys)
    for doc in (first, second):
        doc["kpi"].pop("timings_ms")
        doc.pop("reviewed_at")
    assert first == second


def test_markdown_in_chinese(example: ExampleRepo, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "run",
            "--path",
            str(example.path),
            "--base",
            example.base,
            "--head",
            example.round1,
            "--lang",
            "zh",
            "--no-tests",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "阻塞项" in out and "Checklist Findings（" in out and "通用原则检查清单" in out


def test_fail_on_blocking_exits_1(example: ExampleRepo, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "run",
            "--path",
            str(example.path),
            "--base",
            example.base,
            "--head",
            example.round1,
            "--no-tests",
            "--fail-on-blocking",
            "--output",
            str(example.path.parent / "r.md"),
        ]
    )
    assert code == 1
    assert (example.path.parent / "r.md").read_text().startswith("## reviewbot review — BLOCKING")


def test_usage_errors_exit_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--path", str(tmp_path), "--base", "a", "--head", "b"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("reviewbot: not a git repository") and "\n" not in err
    assert main(["run", "--base", "a"]) == 2
    assert "give both --base and --head" in capsys.readouterr().err
    assert main(["run", "--format", "yaml"]) == 2


def test_rules_lists_and_documents(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules"]) == 0
    listing = capsys.readouterr().out
    assert "missing-tests" in listing and "P1" in listing
    assert main(["rules", "unconditional-override"]) == 0
    assert "## Why is this bad?" in capsys.readouterr().out


def test_json_reach_names_the_population_and_models(
    example: ExampleRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    (reach,) = _run_json(example, capsys)["reach"]
    assert reach["target"] == "config.need_rope_kv_cache" and reach["path"] == CC
    assert "every task_type other than LANGUAGE_MODEL" in reach["sentence"]
    assert [m.split(" ")[0] for m in reach["models"]] == ["Bert", "Cohere", "Baichuan13B"]
