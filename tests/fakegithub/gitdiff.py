"""What GitHub computes from git for a pull request, computed the same way from the bare repository.

GitHub shows a PR as the three-dot diff `merge-base(base, head)..head`; `files` carries each
file's hunks as `patch` (no file headers), and review comments may only sit on lines of those
hunks. This module answers those questions with real git so the fake and the client never share
diff code.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "FileDiff",
    "CommitInfo",
    "pr_files",
    "diff_lines",
    "commits_between",
    "merge_base",
    "show",
    "blob_sha",
    "commit_info",
    "map_line",
]

_STATUS = {"A": "added", "D": "removed", "M": "modified", "R": "renamed", "C": "copied", "T": "changed"}


def _git(repo: Path, *args: str, check: bool = True) -> str:
    out = subprocess.run(
        ["git", "-c", "core.quotePath=false", *args],
        cwd=repo,
        capture_output=True,
        check=check,
    )
    return out.stdout.decode("utf-8", errors="replace")


@dataclass(frozen=True)
class FileDiff:
    filename: str
    previous_filename: str | None
    status: str  # added | removed | modified | renamed | ...
    additions: int
    deletions: int
    patch: str | None  # None for binary files and patches over the size limit
    sha: str  # blob at head (base blob for removed files)
    binary: bool


@dataclass(frozen=True)
class CommitInfo:
    sha: str
    tree: str
    parents: tuple[str, ...]
    author_name: str
    author_email: str
    author_date: str
    committer_name: str
    committer_email: str
    committer_date: str
    message: str


def merge_base(repo: Path, base: str, head: str) -> str:
    return _git(repo, "merge-base", base, head).strip()


def is_ancestor(repo: Path, commit: str, head: str) -> bool:
    """`commit` is `head` or one of its ancestors (a commit of the PR's history)."""
    out = subprocess.run(["git", "merge-base", "--is-ancestor", commit, head], cwd=repo, capture_output=True)
    return out.returncode == 0


def blob_sha(repo: Path, rev: str, path: str) -> str:
    out = _git(repo, "rev-parse", f"{rev}:{path}", check=False).strip()
    return out or "0" * 40


def show(repo: Path, rev: str, path: str) -> bytes | None:
    out = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=repo, capture_output=True)
    return out.stdout if out.returncode == 0 else None


def pr_files(repo: Path, base: str, head: str, patch_limit: int = 500_000) -> list[FileDiff]:
    """The `pulls/{n}/files` entries of a PR from `base` to `head`, in git's path order.

    Three git commands whatever the size of the PR (a list with blob ids, the counts, one patch cut
    into its files' sections), so a PR of thousands of files answers in a moment, as GitHub does."""
    mb = merge_base(repo, base, head)
    raw = _git(repo, "diff", "--raw", "-z", "--no-abbrev", "-M", mb, head).split("\0")
    numstat = _git(repo, "diff", "--numstat", "-z", "-M", mb, head).split("\0")
    counts = _parse_numstat(numstat)
    whole = _git(repo, "diff", "--no-color", "--no-ext-diff", "-M", mb, head)
    sections = [part for part in re.split(r"(?m)^(?=diff --git )", whole) if part]
    entries: list[tuple[str, str, str, str, str]] = []  # code, old, new, old blob, new blob
    i = 0
    while i < len(raw) and raw[i]:
        meta = raw[i].lstrip(":").split(" ")
        code = meta[4][0]
        if code in "RC":
            old, new = raw[i + 1], raw[i + 2]
            i += 3
        else:
            old = new = raw[i + 1]
            i += 2
        entries.append((code, old, new, meta[2], meta[3]))
    files: list[FileDiff] = []
    for k, (code, old, new, old_blob, new_blob) in enumerate(entries):
        added, deleted, binary = counts.get(new, (0, 0, False))
        if len(sections) == len(entries):
            section = sections[k]
        else:  # pragma: no cover - git printed a file without its section: ask for it alone
            paths = [old, new] if old != new else [new]
            section = _git(repo, "diff", "--no-color", "--no-ext-diff", "-M", mb, head, "--", *paths)
        patch = None if binary else _hunks_only(section)
        if patch is not None and len(patch.encode()) > patch_limit:
            patch = None
        status = _STATUS.get(code, "modified")
        sha = old_blob if status == "removed" else new_blob
        files.append(FileDiff(new, old if code in "RC" else None, status, added, deleted, patch, sha, binary))
    return files


def _parse_numstat(parts: list[str]) -> dict[str, tuple[int, int, bool]]:
    counts: dict[str, tuple[int, int, bool]] = {}
    i = 0
    while i < len(parts) and parts[i]:
        added, deleted, path = parts[i].split("\t", 2)
        if path == "":  # rename: the old and new paths follow as separate fields
            path = parts[i + 2]
            i += 3
        else:
            i += 1
        binary = added == "-"
        counts[path] = (0 if binary else int(added), 0 if binary else int(deleted), binary)
    return counts


def _hunks_only(raw: str) -> str | None:
    start = raw.find("\n@@")
    if start < 0:
        return None if "Binary files" in raw else ""
    text = raw[start + 1 :]
    return text[:-1] if text.endswith("\n") else text


def diff_lines(patch: str | None) -> tuple[set[int], set[int], dict[int, int]]:
    """Lines a review comment may target: RIGHT (head) lines, LEFT (base) lines, RIGHT line -> position."""
    right: set[int] = set()
    left: set[int] = set()
    positions: dict[int, int] = {}
    if not patch:
        return right, left, positions
    old = new = 0
    for position, line in enumerate(patch.split("\n")):
        if line.startswith("@@"):
            head = line.split("@@")[1].split()
            old = int(head[0][1:].split(",")[0])
            new = int(head[1][1:].split(",")[0])
            continue
        if line.startswith("+"):
            right.add(new)
            positions[new] = position
            new += 1
        elif line.startswith("-"):
            left.add(old)
            old += 1
        elif line.startswith("\\"):
            continue
        else:
            right.add(new)
            left.add(old)
            positions[new] = position
            old += 1
            new += 1
    return right, left, positions


_FMT = "%H%x1f%T%x1f%P%x1f%an%x1f%ae%x1f%aI%x1f%cn%x1f%ce%x1f%cI%x1f%B%x1e"


def commits_between(repo: Path, base: str, head: str) -> list[CommitInfo]:
    """Commits reachable from head but not base, oldest first (what `pulls/{n}/commits` lists)."""
    return _parse_log(_git(repo, "log", "--reverse", f"--format={_FMT}", f"{base}..{head}"))


def commit_info(repo: Path, rev: str) -> CommitInfo:
    """One commit; raises CalledProcessError for an unknown revision."""
    return _parse_log(_git(repo, "log", "-1", f"--format={_FMT}", rev, "--"))[0]


def _parse_log(out: str) -> list[CommitInfo]:
    commits = []
    for rec in out.split("\x1e"):
        rec = rec.strip("\n")
        if not rec:
            continue
        f = rec.split("\x1f")
        commits.append(
            CommitInfo(f[0], f[1], tuple(f[2].split()), f[3], f[4], f[5], f[6], f[7], f[8], f[9].strip())
        )
    return commits


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)


def map_line(repo: Path, old_sha: str, new_sha: str, path: str, line: int) -> int | None:
    """Line `line` of `path` at `old_sha`, where it is at `new_sha`; None when a change touched it or
    the file is gone (GitHub then shows a review thread on it as outdated)."""
    if old_sha == new_sha:
        return line
    if subprocess.run(
        ["git", "cat-file", "-e", f"{new_sha}:{path}"], cwd=repo, capture_output=True
    ).returncode:
        return None
    shift = 0
    for m in _HUNK.finditer(_git(repo, "diff", "-U0", "--no-color", old_sha, new_sha, "--", path)):
        start, count = int(m.group(1)), int(m.group(2) or "1")
        added = int(m.group(4) or "1")
        first = start if count else start + 1  # a pure insertion goes after line `start`
        if count and first <= line < first + count:
            return None  # the line itself was changed or removed
        if first > line:
            break
        shift += added - count
    return line + shift
