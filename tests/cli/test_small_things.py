"""Issue 27's smaller items: missing extras, Ctrl-C at start-up, `--path` that does not exist,
`example`'s options and temporary directory, the Dockerfile's documentation link."""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

import pytest

from reviewbot import cli
from reviewbot.cli import main

ROOT = Path(__file__).resolve().parents[2]


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert out == "" and len(lines) == 1 and lines[0].startswith("reviewbot: "), err
    return lines[0]


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for name in list(__import__("os").environ):
        if name.startswith(("REVIEWBOT_", "GITHUB_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path


@pytest.mark.parametrize(
    ("env", "argv", "extra"),
    [
        (
            {"REVIEWBOT_QUEUE_URL": "redis://127.0.0.1:1/0", "REVIEWBOT_WEBHOOK_SECRET": "s"},
            ["serve"],
            "redis",
        ),
        ({"REVIEWBOT_QUEUE_URL": "redis://127.0.0.1:1/0", "GITHUB_TOKEN": "t"}, ["worker"], "redis"),
        ({"REVIEWBOT_DB_URL": "postgresql://u@127.0.0.1:1/x", "GITHUB_TOKEN": "t"}, ["worker"], "postgres"),
        ({}, ["rounds", "--pr", "3", "--repo", "a/b", "--db", "postgresql://u@127.0.0.1:1/x"], "postgres"),
        (
            {},
            ["dismiss", "abcd", "--reason", "r", "--pr", "3", "--repo", "a/b", "--db", "postgresql://u@h/x"],
            "postgres",
        ),
    ],
)
def test_a_url_whose_extra_is_missing_is_one_line_naming_it(
    clean_env: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    env: dict[str, str],
    argv: list[str],
    extra: str,
) -> None:
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setitem(sys.modules, "redis", None)  # import redis / psycopg: ImportError, as uninstalled
    monkeypatch.setitem(sys.modules, "psycopg", None)
    assert main(argv) == 2
    line = _one_line(capsys)
    assert line.endswith(f"pip install 'reviewbot[{extra}]'"), line
    assert "Traceback" not in line


def test_the_readme_and_the_app_doc_name_the_extras() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "pip install 'reviewbot[redis]'" in readme or "reviewbot[postgres,redis]" in readme
    where = (ROOT / "docs" / "where-to-run.md").read_text()
    assert "reviewbot[postgres]" in where and "reviewbot[redis]" in where


def test_ctrl_c_while_the_command_loads_is_one_line_and_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(name: str) -> object:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli.importlib, "import_module", interrupted)
    assert main(["run", "--base", "a", "--head", "b"]) == 130
    assert _one_line(capsys) == "reviewbot: interrupted"


def test_a_path_that_does_not_exist_says_so(clean_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--path", "/nonexistent", "--base", "a", "--head", "b"]) == 2
    assert _one_line(capsys) == "reviewbot: --path /nonexistent: no such directory"
    file = clean_env / "file"
    file.write_text("x")
    assert main(["run", "--path", str(file), "--base", "a", "--head", "b"]) == 2
    assert "not a directory" in _one_line(capsys)


def test_example_offers_only_its_own_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["example", "--help"]) == 0
    text = capsys.readouterr().out
    for option in ("--post", "--pr", "--repo", "--api-url", "--base", "--head", "--staged", "--db", "--path"):
        assert not re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", text), option
    for option in ("--format", "--lang", "--fail-level", "--round", "--dest", "--no-tests"):
        assert option in text


def test_example_leaves_no_temporary_directory(
    clean_env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tmp = clean_env / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    assert main(["example", "--no-tests", "--format", "json"]) == 0
    assert '"status": "BLOCKING"' in capsys.readouterr().out
    assert list(tmp.iterdir()) == []
    kept = clean_env / "kept"
    assert main(["example", "--no-tests", "--format", "text", "--dest", str(kept)]) == 0
    assert (kept / ".git").is_dir() and str(kept) in capsys.readouterr().err


def test_the_dockerfile_points_at_a_doc_that_exists() -> None:
    docker = (ROOT / "Dockerfile").read_text()
    links = re.findall(r"docs/[\w.-]+\.md", docker)
    assert links and all((ROOT / link).is_file() for link in links), links
