"""A pull request whose base revision carries a given `.reviewbot.toml`, locally and as a remote."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from reviewbot.example import build_example
from tests.fakegithub.repos import make_bare, push
from tests.gitrepo import git


@dataclass(frozen=True)
class ConfiguredPR:
    path: Path  # the working repository
    bare: Path  # the same commits as a remote
    base: str
    head: str


def configured_pr(tmp: Path, config: str) -> ConfiguredPR:
    """The bundled example's first round on top of a base that adds `config` as `.reviewbot.toml`."""
    example = build_example(tmp / "example")
    repo = example.path
    git(repo, "checkout", "-q", "-b", "configured", example.base)
    (repo / ".reviewbot.toml").write_text(config)
    git(repo, "add", ".reviewbot.toml")
    git(repo, "commit", "-q", "-m", "configure reviewbot")
    base = git(repo, "rev-parse", "HEAD")
    patch = subprocess.run(
        ["git", "diff", "--binary", example.base, example.round1], cwd=repo, capture_output=True, check=True
    ).stdout
    subprocess.run(["git", "apply", "--index"], cwd=repo, input=patch, check=True)
    git(repo, "commit", "-q", "-m", "the change")
    head = git(repo, "rev-parse", "HEAD")
    bare = make_bare(tmp / "remote.git")
    push(repo, bare, base, "refs/heads/main")
    push(repo, bare, head, "refs/heads/feature")
    return ConfiguredPR(repo, bare, base, head)
