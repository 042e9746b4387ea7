"""Long runs (issue 27 item 9): progress on stderr by stage when it is a terminal (files read and
parsed, tests, checks `n/m rules`), and `-v` naming what was reviewed (never `PR #None`) with each
stage's time."""

from __future__ import annotations

import logging
import os
import pty
import re
from pathlib import Path

import pytest

from reviewbot import runner
from reviewbot.cli import main
from reviewbot.example import ExampleRepo, build_example
from reviewbot.review.progress import TerminalProgress


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> ExampleRepo:
    return build_example(tmp_path_factory.mktemp("example") / "repo")


def _args(example: ExampleRepo, *extra: str) -> list[str]:
    return ["run", "--path", str(example.path), "--base", example.base, "--head", example.round1, *extra]


def test_progress_names_each_stage_and_what_it_read(
    example: ExampleRepo, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[tuple[str, str]] = []
    monkeypatch.setattr(runner, "terminal_progress", lambda stream: lambda s, d: seen.append((s, d)))
    assert main(_args(example, "--no-tests", "--format", "json")) == 0
    stages = [s for s, _ in seen]
    assert stages[0] == "index" and stages[-1] == ""  # parse is shown by the timer; "" clears the line
    assert re.fullmatch(r"\d+ changed files parsed", seen[0][1])
    read = next(d for s, d in seen if s in ("tests", "checks") and "files read" in d)
    assert re.fullmatch(r"\d+ files read, \d+ parsed", read)
    rules = [d for s, d in seen if s == "checks" and d.endswith(" rules")]
    assert rules[0].startswith("0/") and len(rules) == int(rules[0].split("/")[1].split()[0])
    assert capsys.readouterr().out.startswith("{")  # stdout holds the report only


def test_on_a_terminal_the_line_is_drawn_on_stderr_and_cleared(
    example: ExampleRepo, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    primary, secondary = pty.openpty()
    tty = os.fdopen(secondary, "w", encoding="utf-8")
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setattr("sys.stderr", tty)
    # As the real hook (runner.terminal_progress), without the one-second delay of a fast review.
    monkeypatch.setattr(
        runner, "terminal_progress", lambda stream: TerminalProgress(stream, 0.0) if stream.isatty() else None
    )
    try:
        assert main(_args(example, "--no-tests", "--format", "json")) == 0
        tty.flush()
        drawn = os.read(primary, 1 << 20).decode("utf-8", "replace")
    finally:
        tty.close()
        os.close(primary)
    assert "reviewbot: checks… (" in drawn and " rules) " in drawn and "files read" in drawn
    assert drawn.endswith("\r\x1b[K")  # the last line is cleared when the round ends
    assert "reviewbot:" not in capsys.readouterr().out


def test_off_a_terminal_there_is_no_progress(example: ExampleRepo, capfd: pytest.CaptureFixture[str]) -> None:
    assert main(_args(example, "--no-tests", "--format", "text")) == 0
    assert "\r" not in capfd.readouterr().err


def test_verbose_names_the_range_and_each_stage_time(
    example: ExampleRepo, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    with caplog.at_level(logging.INFO):
        assert main(["-v", *_args(example, "--no-tests", "--format", "text")]) == 0
    text = caplog.text
    assert "PR #None" not in text
    span = f"{example.base}..{example.round1}"
    (line,) = [r.getMessage() for r in caplog.records if r.getMessage().startswith("reviewed ")]
    assert line.startswith(f"reviewed {span}: BLOCKING, ")
    for stage in ("change", "parse", "index", "checks", "render"):
        assert re.search(rf"\b{stage} \d+ ms\b", line), (stage, line)
    assert any(span in r.getMessage() and "round 1" in r.getMessage() for r in caplog.records)


def test_verbose_with_a_pr_names_it(
    example: ExampleRepo, tmp_path: Path, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 'rounds.db'}"
    with caplog.at_level(logging.INFO):
        assert main(["-v", *_args(example, "--no-tests", "--pr", "12", "--db", db, "--format", "text")]) == 0
    messages = [r.getMessage() for r in caplog.records]
    assert any(m.startswith(f"reviewed PR #12 ({example.base}..{example.round1}): ") for m in messages)
    assert any(" PR #12 round 1 at " in m for m in messages)
