"""Build the bundled example (examples/pr1361) into a real git repository.

The example ships as directory overlays so it can be read as plain files: `base/` is the
repository before the PR, `round1/` the files the PR's first head changes, `round2/` what its
second head adds (a focused truth-table test and a smoke test). Branch `main` holds the base;
branch `pr` has one commit per round.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from reviewbot import DATA_DIR
from reviewbot.errors import EnvironmentProblem

__all__ = ["ExampleRepo", "build_example", "EXAMPLE_DIR"]

EXAMPLE_DIR = DATA_DIR / "examples" / "pr1361"

_GIT_ENV = {
    "GIT_AUTHOR_NAME": "Example Author",
    "GIT_AUTHOR_EMAIL": "author@example.invalid",
    "GIT_COMMITTER_NAME": "Example Author",
    "GIT_COMMITTER_EMAIL": "author@example.invalid",
    # Fixed dates make the example's commit ids, and so its reports, reproducible.
    "GIT_AUTHOR_DATE": "2026-08-31T12:00:00+00:00",
    "GIT_COMMITTER_DATE": "2026-08-31T12:00:00+00:00",
}


@dataclass(frozen=True)
class ExampleRepo:
    path: Path
    base: str  # sha of main
    round1: str  # sha of the PR's first head
    round2: str  # sha of the PR's second head (tests added)


def _git(cwd: Path, *args: str, date: str | None = None) -> str:
    env = {**os.environ, **_GIT_ENV}
    if date:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = date
    try:
        out = subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True)
    except FileNotFoundError as exc:
        raise EnvironmentProblem("git is not installed; install git to build the example") from exc
    except subprocess.CalledProcessError as exc:
        raise EnvironmentProblem(f"git {' '.join(args)} failed: {exc.stderr.strip()}") from exc
    return out.stdout.strip()


def _overlay(src: Path, dest: Path) -> None:
    shutil.copytree(src, dest, dirs_exist_ok=True)


def build_example(dest: Path) -> ExampleRepo:
    """Create the example repository at `dest` (which must not exist or be empty)."""
    dest.mkdir(parents=True, exist_ok=True)
    _git(dest, "init", "-q", "-b", "main")
    _overlay(EXAMPLE_DIR / "base", dest)
    _git(dest, "add", "-A")
    _git(dest, "commit", "-q", "-m", "base: model configs and attention backends")
    base = _git(dest, "rev-parse", "HEAD")
    _git(dest, "checkout", "-q", "-b", "pr")
    _overlay(EXAMPLE_DIR / "round1", dest)
    _git(
        dest,
        "commit",
        "-q",
        "-am",
        "feat: skip the fused rope/KV-cache kernel for embedding models",
        date="2026-08-31T12:20:00+00:00",
    )
    round1 = _git(dest, "rev-parse", "HEAD")
    _overlay(EXAMPLE_DIR / "round2", dest)
    _git(dest, "add", "-A")
    _git(
        dest,
        "commit",
        "-q",
        "-m",
        "test: pin the need_rope_kv_cache truth table; bert smoke test",
        date="2026-09-01T03:40:00+00:00",
    )
    round2 = _git(dest, "rev-parse", "HEAD")
    _git(dest, "checkout", "-q", "main")
    return ExampleRepo(dest, base, round1, round2)
