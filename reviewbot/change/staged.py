"""The staged change as revisions `load_change` can read: for `reviewbot run --staged` (pre-commit).

    head = staged_commit(repo)      # the index as a commit whose parent is HEAD (no ref is moved)
    base = upstream_or_head(repo)   # the branch's upstream, else HEAD

The commit is an ordinary unreferenced object: no branch, tag or reflog points at it, so `git gc`
removes it in time; the work tree, the index and every ref stay as they were.
"""

from __future__ import annotations

import os
from pathlib import Path

from reviewbot.change.gitproc import run_git

__all__ = ["staged_commit", "upstream_or_head"]

# A fixed identity and date: the commit needs one, and a user without user.name must not be refused.
_IDENTITY = {
    "GIT_AUTHOR_NAME": "reviewbot",
    "GIT_AUTHOR_EMAIL": "reviewbot@localhost.invalid",
    "GIT_COMMITTER_NAME": "reviewbot",
    "GIT_COMMITTER_EMAIL": "reviewbot@localhost.invalid",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+00:00",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+00:00",
}


def staged_commit(repo: Path) -> str:
    """The sha of a commit holding the index on top of HEAD."""
    env: dict[str, str] = {}
    # Inside a commit hook git names the index being committed (`git commit PATH` uses a temporary
    # one); gitproc drops locating variables, so this one is passed on here, made absolute.
    if os.environ.get("GIT_INDEX_FILE"):
        env["GIT_INDEX_FILE"] = os.path.abspath(os.environ["GIT_INDEX_FILE"])
    tree = run_git(repo, ["write-tree"], env=env).stdout.decode().strip()
    head = run_git(repo, ["rev-parse", "--verify", "HEAD^{commit}"]).stdout.decode().strip()
    proc = run_git(repo, ["commit-tree", tree, "-p", head, "-m", "staged change"], env=_IDENTITY)
    return proc.stdout.decode().strip()


def upstream_or_head(repo: Path) -> str:
    """The current branch's upstream (`@{upstream}`) as a sha, else HEAD's."""
    proc = run_git(repo, ["rev-parse", "--verify", "-q", "@{upstream}^{commit}"], ok_codes=None)
    if proc.returncode == 0 and proc.stdout.strip():
        return proc.stdout.decode().strip()
    return run_git(repo, ["rev-parse", "--verify", "HEAD^{commit}"]).stdout.decode().strip()
