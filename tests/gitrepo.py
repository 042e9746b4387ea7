"""Real git repositories for tests: commits built from {path: text|bytes|None} dictionaries."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00+00:00",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00+00:00",
}


def git(repo: Path, *args: str) -> str:
    out = subprocess.run(
        ["git", *args], cwd=repo, env={**os.environ, **_ENV}, check=True, capture_output=True, text=True
    )
    return out.stdout.strip()


class Repo:
    """A git repository in a temporary directory; `commit` writes files and returns the sha."""

    def __init__(self, path: Path, branch: str = "main") -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        git(path, "init", "-q", "-b", branch)

    def write(self, files: dict[str, str | bytes | None]) -> None:
        for rel, content in files.items():
            target = self.path / rel
            if content is None:
                if target.exists():
                    target.unlink()
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content)

    def commit(self, files: dict[str, str | bytes | None], message: str = "change") -> str:
        self.write(files)
        git(self.path, "add", "-A")
        git(self.path, "commit", "-q", "--allow-empty", "-m", message)
        return git(self.path, "rev-parse", "HEAD")

    def checkout(self, ref: str, create: bool = False) -> None:
        if create:
            git(self.path, "checkout", "-q", "-b", ref)
        else:
            git(self.path, "checkout", "-q", ref)

    def git(self, *args: str) -> str:
        return git(self.path, *args)
