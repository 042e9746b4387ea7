"""Bare repositories for the fake: what a PR's clone URL points at."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from reviewbot.example import ExampleRepo, build_example

__all__ = ["ExampleRemote", "example_remote", "make_bare", "push"]


def _git(cwd: Path, *args: str) -> str:
    out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def make_bare(path: Path, *, allow_filter: bool = True) -> Path:
    """An empty bare repository; `allow_filter` lets clients make partial clones (as GitHub does)."""
    path.mkdir(parents=True, exist_ok=True)
    _git(path, "init", "-q", "--bare", "-b", "main")
    if allow_filter:
        _git(path, "config", "uploadpack.allowFilter", "true")
        _git(path, "config", "uploadpack.allowAnySHA1InWant", "true")
    return path


def push(src: Path, bare: Path, rev: str, ref: str) -> None:
    """Push `rev` of the working repository `src` to `ref` of `bare` (forced)."""
    _git(src, "push", "-q", "--force", str(bare), f"{rev}:{ref}")


@dataclass(frozen=True)
class ExampleRemote:
    example: ExampleRepo
    bare: Path

    @property
    def base(self) -> str:
        return self.example.base

    @property
    def round1(self) -> str:
        return self.example.round1

    @property
    def round2(self) -> str:
        return self.example.round2


def example_remote(tmp: Path, *, allow_filter: bool = True, head_branch: str = "feature") -> ExampleRemote:
    """The bundled example as a remote: `main` at base, `head_branch` at round 2 (both rounds reachable)."""
    example = build_example(tmp / "example")
    bare = make_bare(tmp / "remote.git", allow_filter=allow_filter)
    push(example.path, bare, "main", "refs/heads/main")
    push(example.path, bare, example.round2, f"refs/heads/{head_branch}")
    return ExampleRemote(example, bare)
