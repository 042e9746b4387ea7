"""A cached git workspace: one bare clone per repository under the cache directory.

Each round fetches only what it needs from the base repository — `pull/N/head` (which exists for
fork PRs too) and the PR's base commit — as a partial clone (`--filter=blob:none`) when the server
allows it, a full fetch otherwise. The blobs of the two trees the review reads (head and merge
base) are then fetched in one batch, so reading the repository later does not fetch file by file.
The review reads the bare repository directly (reviewbot.change.load_change); nothing is checked
out. A file lock serialises rounds of the same repository; the token, when one is needed, goes to
git through the environment, never into a config file or a command line.
"""

from __future__ import annotations

import base64
import fcntl
import functools
import logging
import re
import shutil
import subprocess
import time
import urllib.parse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from reviewbot.change.gitproc import run_git
from reviewbot.errors import EnvironmentProblem, GitError

__all__ = ["Checkout", "GitWorkspace", "require_git", "GIT_MINIMUM"]

log = logging.getLogger(__name__)
_SAFE = re.compile(r"[^A-Za-z0-9._-]")
_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


@dataclass(frozen=True)
class Checkout:
    """Where the round's commits are: a local repository and the two shas to review."""

    path: Path
    base_sha: str
    head_sha: str
    partial: bool  # blobs outside head and merge base were not downloaded
    seconds: float


GIT_MINIMUM = (2, 31)  # GIT_CONFIG_COUNT/KEY/VALUE: how the token reaches git (see _auth_env)


@functools.cache
def require_git(executable: str = "git") -> tuple[int, ...]:
    """git's version, once per process; EnvironmentProblem when git is missing or older than 2.31,
    whose fetches would ignore the token given through the environment (and fail as "not found" on
    a private repository, far from the cause)."""
    try:
        out = subprocess.run([executable, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EnvironmentProblem(f"git is needed to fetch pull requests and could not be run: {exc}") from exc
    match = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", out)
    if match is None:
        raise EnvironmentProblem(f"cannot tell git's version from {out.strip()[:80]!r}")
    version = tuple(int(g) for g in match.groups() if g is not None)
    if version[:2] < GIT_MINIMUM:
        raise EnvironmentProblem(
            f"git {'.'.join(map(str, version))} is too old: reviewbot needs git >= "
            f"{'.'.join(map(str, GIT_MINIMUM))} (it passes credentials through GIT_CONFIG_COUNT); "
            "upgrade git, or set use_git off to review from the API's patches only"
        )
    return version


class GitWorkspace:
    def __init__(self, cache_dir: Path, *, timeout: float = 900.0) -> None:
        require_git()  # once per process: a clear message instead of a failed fetch
        self.cache_dir = cache_dir
        self.timeout = timeout

    def repo_dir(self, api_url: str, repo: str) -> Path:
        """`<cache>/git/<host>/<owner>/<name>.git` — one per repository (and GitHub host)."""
        host = urllib.parse.urlsplit(api_url).netloc or "github"
        owner, name = repo.split("/", 1)
        return (
            self.cache_dir
            / "git"
            / _SAFE.sub("_", host)
            / _SAFE.sub("_", owner)
            / f"{_SAFE.sub('_', name)}.git"
        )

    def prepare(
        self,
        *,
        api_url: str,
        repo: str,
        clone_url: str,
        pr_number: int,
        base_sha: str,
        head_sha: str,
        base_ref: str = "",
        token: str | None = None,
    ) -> Checkout:
        """Fetch the PR's head and base into the cached clone; raises EnvironmentProblem / GitError."""
        if shutil.which("git") is None:
            raise EnvironmentProblem("git is not installed; the review falls back to the API's patches")
        for sha in (base_sha, head_sha):
            if not _SHA.match(sha):
                raise GitError(f"{sha!r} is not a commit id")
        started = time.monotonic()
        path = self.repo_dir(api_url, repo)
        env = _auth_env(clone_url, token)
        with _locked(path):
            if not (path / "HEAD").exists():
                path.mkdir(parents=True, exist_ok=True)
                self._git(path, ["init", "-q", "--bare"], env)
                self._git(path, ["config", "gc.auto", "0"], env)  # objects other rounds read must stay
            self._git(path, ["config", "remote.origin.url", clone_url], env)
            partial = self._fetch(path, env, pr_number, base_sha, head_sha, base_ref)
            if partial:
                self._prefetch(path, env, base_sha, head_sha)
        seconds = time.monotonic() - started
        log.info(
            "%s: fetched PR #%d (%s partial clone) in %.1fs",
            repo,
            pr_number,
            "a" if partial else "no",
            seconds,
        )
        return Checkout(path, base_sha, head_sha, partial, seconds)

    # --- steps ----------------------------------------------------------------------------------
    def _fetch(self, path: Path, env: dict[str, str], pr: int, base: str, head: str, base_ref: str) -> bool:
        # The base commit is always asked for: when it is here already the server sends nothing, and
        # asking is cheaper than checking (in a partial clone a check fetches what it misses).
        refspecs = [
            f"+refs/pull/{pr}/head:refs/reviewbot/pull/{pr}/head",
            f"+{base}:refs/reviewbot/pull/{pr}/base",
        ]
        try:
            stderr = self._git(
                path, ["fetch", "-q", "--no-tags", "--filter=blob:none", "origin", *refspecs], env
            )
        except GitError:
            # The server may refuse a commit id in a fetch: take the base branch instead.
            refspecs = refspecs[:1] + (
                [f"+refs/heads/{base_ref}:refs/reviewbot/base/{base_ref}"] if base_ref else []
            )
            stderr = self._git(
                path, ["fetch", "-q", "--no-tags", "--filter=blob:none", "origin", *refspecs], env
            )
        if not self._has_commit(path, env, head):
            # The PR moved on between the API call and the fetch; ask for the exact commit.
            self._git(
                path,
                ["fetch", "-q", "--no-tags", "origin", f"+{head}:refs/reviewbot/pull/{pr}/reviewed"],
                env,
            )
        for sha, what in ((head, "head"), (base, "base")):
            if not self._has_commit(path, env, sha):
                raise GitError(f"the PR's {what} commit {sha[:12]} could not be fetched from origin")
        promisor = self._git(
            path, ["config", "--get", "remote.origin.promisor"], env, ok=(0, 1), stdout=True
        ).strip()
        return "filtering not recognized" not in stderr and promisor == "true"

    def _prefetch(self, path: Path, env: dict[str, str], base: str, head: str) -> None:
        mb = self._git(path, ["merge-base", base, head], env, ok=(0, 1), stdout=True).strip() or base
        listing = self._git(
            path, ["rev-list", "--objects", "--missing=print", "--no-walk", head, mb], env, stdout=True
        )
        missing = [line[1:].strip() for line in listing.splitlines() if line.startswith("?")]
        if not missing:
            return
        self._git(
            path,
            [
                "-c",
                "fetch.negotiationAlgorithm=noop",
                "fetch",
                "-q",
                "origin",
                "--no-tags",
                "--no-write-fetch-head",
                "--recurse-submodules=no",
                "--filter=blob:none",
                "--stdin",
            ],
            env,
            stdin="\n".join(missing) + "\n",
        )
        log.debug("prefetched %d blobs", len(missing))

    def _has_commit(self, path: Path, env: dict[str, str], sha: str) -> bool:
        proc = run_git(
            path, ["cat-file", "-e", f"{sha}^{{commit}}"], ok_codes=None, env=env, timeout=self.timeout
        )
        return proc.returncode == 0

    # --- running git (gitproc builds the command line and the environment) ----------------------
    def _git(
        self,
        path: Path,
        args: Sequence[str],
        env: dict[str, str],
        *,
        ok: Sequence[int] = (0,),
        stdin: str | None = None,
        stdout: bool = False,
    ) -> str:
        """Run git; returns stderr (or stdout with `stdout=True`)."""
        proc = run_git(
            path,
            args,
            ok_codes=None,  # checked here, so that the message is redacted
            env=env,
            stdin=None if stdin is None else stdin.encode(),
            timeout=self.timeout,
        )
        stderr = proc.stderr.decode("utf-8", "replace")
        if proc.returncode not in ok:
            raise GitError(
                f"git {' '.join(a for a in args if not a.startswith('-'))[:80]} failed "
                f"(exit {proc.returncode}): {_redacted(stderr.strip())[:500]}"
            )
        return proc.stdout.decode("utf-8", "replace") if stdout else stderr


def _auth_env(clone_url: str, token: str | None) -> dict[str, str]:
    """What git's environment (gitproc.git_env) gets on top for a fetch: never a prompt, and the token."""
    # GIT_CONFIG_COUNT=0 makes git ignore GIT_CONFIG_KEY_*/VALUE_* the bot itself was started with.
    env = {"GIT_ASKPASS": "true", "GIT_CONFIG_COUNT": "0"}
    if token and clone_url.startswith("https://"):
        basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
        # Config from the environment (git >= 2.31): not on the command line, not in a file.
        env.update(
            GIT_CONFIG_COUNT="1",
            GIT_CONFIG_KEY_0="http.extraHeader",
            GIT_CONFIG_VALUE_0=f"Authorization: Basic {basic}",
        )
    return env


def _redacted(text: str) -> str:
    return re.sub(r"(Authorization: \w+) \S+", r"\1 ***", text)


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
