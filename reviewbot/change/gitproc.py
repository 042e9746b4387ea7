"""Running git: one place that builds the command line, the environment and the errors.

Every command runs with `LC_ALL=C` (git's messages stay English, so they can be recognised),
`core.quotePath=false` (non-ASCII paths come out as UTF-8, not octal escapes), bounded pack memory
(`_MEMORY`) and without the variables that would point git at another repository (GIT_DIR and
friends, as set inside hooks).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

from reviewbot.errors import EnvironmentProblem, GitError

__all__ = ["run_git", "git_argv", "git_env", "check_repo_dir", "git_problem", "not_installed", "decode_path"]

# Variables that make git ignore `-C repo` and use another repository or index.
_LOCATING_VARS = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
)


def git_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _LOCATING_VARS}
    env.update({"LC_ALL": "C", "LANGUAGE": "C", "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"})
    if extra:
        env.update(extra)
    return env


# git's defaults let one process map up to 8 GiB of pack (32 MiB windows on 64-bit) and keep 96 MiB of
# delta bases: a review's `cat-file --batch` over 3,000 blobs of rtp-llm peaked at 103 MiB and its
# `git grep` at 60 MiB, beside the review's own ~90 MiB. With these bounds the same work peaks at 55
# and 36 MiB and takes as long (measured 2026-12-03; smaller bounds, e.g. a 4 MiB delta cache, double
# cat-file's time: it inflates the same delta bases again and again).
_MEMORY = (
    "-c", "core.deltaBaseCacheLimit=16m",
    "-c", "core.packedGitLimit=32m",
    "-c", "core.packedGitWindowSize=4m",
)  # fmt: skip


def git_argv(repo: Path, args: Sequence[str]) -> list[str]:
    return ["git", "-C", str(repo), "-c", "core.quotePath=false", *_MEMORY, *args]


def check_repo_dir(repo: Path) -> None:
    if not repo.is_dir():
        raise EnvironmentProblem(f"not a git repository: {repo}; pass the directory of a git clone")


def git_problem(repo: Path, args: Sequence[str], returncode: int, stderr: bytes) -> Exception:
    message = stderr.decode("utf-8", "replace").strip()
    if "not a git repository" in message:
        return EnvironmentProblem(f"not a git repository: {repo}; pass the directory of a git clone")
    if "dubious ownership" in message:
        return EnvironmentProblem(
            f"git refuses to read {repo} because another user owns it; "
            f"run `git config --global --add safe.directory {repo}`"
        )
    return GitError(f"git {' '.join(args[:3])} failed (exit {returncode}) in {repo}: {message}")


def not_installed(exc: OSError) -> EnvironmentProblem:
    return EnvironmentProblem(f"git is not installed ({exc.strerror}); install git and put it on PATH")


def run_git(
    repo: Path,
    args: Sequence[str],
    *,
    ok_codes: Sequence[int] | None = (0,),
    env: dict[str, str] | None = None,
    stdin: bytes | None = None,
    timeout: float | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run `git -C repo ARGS` and return the finished process (stdout as bytes).

    `env` adds to (or overrides) git_env(); `stdin` is fed to git. Raises
    EnvironmentProblem when git is missing or `repo` is not a repository, GitError when git runs
    longer than `timeout` seconds or exits with a code outside `ok_codes` (None: the caller
    checks the code, e.g. to word an error without a secret git may have echoed).
    """
    check_repo_dir(repo)
    try:
        proc = subprocess.run(
            git_argv(repo, args),
            input=stdin,
            capture_output=True,
            env=git_env(env),
            timeout=timeout,
            check=False,
        )
    except OSError as exc:
        raise not_installed(exc) from exc
    except subprocess.TimeoutExpired as exc:
        raise GitError(f"git {args[0]} took longer than {exc.timeout:.0f}s in {repo}") from exc
    if ok_codes is not None and proc.returncode not in ok_codes:
        raise git_problem(repo, args, proc.returncode, proc.stderr)
    return proc


def decode_path(raw: bytes) -> str:
    # surrogateescape lets a non-UTF-8 file name travel back to git unchanged as an argument.
    return raw.decode("utf-8", "surrogateescape")
