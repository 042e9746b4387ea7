"""The pre-commit hook: `reviewbot run --staged` directly, and the hook through `pre-commit try-repo`.

try-repo runs this checkout's `.pre-commit-hooks.yaml` (copied into a repository of its own, so the
file's uncommitted state is what is tested) in a real repository with a staged change. The tested hook is `reviewbot-system` (`language: system`: the reviewbot on PATH):
the `language: python` hook has pre-commit build a virtual environment and pip-install reviewbot
and its dependencies from the package index, which a test must not need; both hooks run the same
entry.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from reviewbot.cli import main
from reviewbot.example import EXAMPLE_DIR, ExampleRepo, build_example

ROOT = Path(__file__).resolve().parents[2]
CC = "rtp_llm/cpp/config/ModelConfig.cc"


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def _work_branch(tmp_path: Path) -> ExampleRepo:
    """The example's base on branch `work`, which tracks `main` (its upstream)."""
    example = build_example(tmp_path / "repo")
    _git(example.path, "checkout", "-q", "-b", "work", "--track", "main")
    return example


def _stage_round1(example: ExampleRepo) -> None:
    shutil.copy(EXAMPLE_DIR / "round1" / CC, example.path / CC)
    _git(example.path, "add", CC)


def test_staged_reviews_the_index_against_the_upstream_and_moves_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    example = _work_branch(tmp_path)
    _stage_round1(example)
    (example.path / "README.unstaged").write_text("not staged\n")
    before = (_git(example.path, "rev-parse", "HEAD"), _git(example.path, "status", "--porcelain"))
    refs = _git(example.path, "for-each-ref")
    code = main(
        [
            "run",
            "--path",
            str(example.path),
            "--staged",
            "--no-tests",
            "--fail-on-blocking",
            "--format",
            "json",
        ]
    )
    out = capsys.readouterr().out
    assert code == 1  # BLOCKING: the staged branch has no test
    report = json.loads(out)
    assert report["base_sha"] == example.base  # the upstream (main)
    assert report["head_sha"] not in (example.base, example.round1)
    assert any(f["rule"] == "missing-tests" and f["path"] == CC for f in report["findings"])
    assert not any(f["path"] == "README.unstaged" for f in report["findings"])
    # The staged tree is exactly round 1's (the same change the example's PR makes).
    assert _git(example.path, "rev-parse", f"{report['head_sha']}^{{tree}}") == _git(
        example.path, "rev-parse", f"{example.round1}^{{tree}}"
    )
    assert (_git(example.path, "rev-parse", "HEAD"), _git(example.path, "status", "--porcelain")) == before
    assert _git(example.path, "for-each-ref") == refs


def test_staged_without_an_upstream_reviews_against_head(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    example = build_example(tmp_path / "repo")  # on main, no upstream
    _stage_round1(example)
    assert main(["run", "--path", str(example.path), "--staged", "--no-tests", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["base_sha"] == example.base


def test_staged_refuses_a_head(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    example = build_example(tmp_path / "repo")
    assert main(["run", "--path", str(example.path), "--staged", "--head", "HEAD"]) == 2
    assert "--staged" in capsys.readouterr().err


def test_the_hooks_file_declares_both_hooks_with_the_same_entry() -> None:
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"reviewbot", "reviewbot-system"}
    assert hooks["reviewbot"]["language"] == "python" and hooks["reviewbot-system"]["language"] == "system"
    for h in hooks.values():
        assert h["entry"] == "reviewbot run --staged --fail-on-blocking" and h["pass_filenames"] is False


def _hooks_repo(tmp_path: Path) -> Path:
    """A repository holding this checkout's `.pre-commit-hooks.yaml`, committed: try-repo reads the
    hooks from a commit (a system hook needs nothing else of the repository)."""
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    shutil.copy(ROOT / ".pre-commit-hooks.yaml", hooks / ".pre-commit-hooks.yaml")
    _git(hooks, "init", "-q")
    _git(hooks, "add", ".pre-commit-hooks.yaml")
    _git(hooks, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "hooks")
    return hooks


def _try_repo(repo: Path, hooks: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": str(home),
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    return subprocess.run(
        ["pre-commit", "try-repo", str(hooks), "reviewbot-system", "--verbose"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.skipif(shutil.which("pre-commit") is None, reason="pre-commit is not installed (test extra)")
@pytest.mark.skipif(shutil.which("reviewbot") is None, reason="no reviewbot on PATH for the system hook")
def test_try_repo_fails_a_blocking_staged_change_and_passes_a_harmless_one(tmp_path: Path) -> None:
    example = _work_branch(tmp_path)
    hooks = _hooks_repo(tmp_path)
    _stage_round1(example)
    proc = _try_repo(example.path, hooks, tmp_path / "pc")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "reviewbot (staged change, installed reviewbot)" in proc.stdout and "Failed" in proc.stdout
    assert "BLOCKING" in proc.stdout and "missing-tests" not in proc.stderr

    _git(example.path, "reset", "-q", "--hard")
    (example.path / "NOTES.txt").write_text("release notes\n")
    _git(example.path, "add", "NOTES.txt")
    proc = _try_repo(example.path, hooks, tmp_path / "pc")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Passed" in proc.stdout and "LGTM" in proc.stdout
