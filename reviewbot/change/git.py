"""A thin, typed wrapper over the git command line (subprocess, never a shell).

Errors: a missing git, a directory that is not a repository or a revision git does not know are
`EnvironmentProblem`s (the user can fix them); any other failed git command is a `GitError`
carrying git's own message. How git is run (environment, quoting) is in gitproc.py; reading
file contents of a commit is GitTree (tree.py), re-exported here.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from reviewbot.change.gitproc import (
    check_repo_dir,
    decode_path,
    git_argv,
    git_env,
    git_problem,
    not_installed,
    run_git,
)
from reviewbot.change.tree import (
    BINARY_SNIFF_BYTES,
    GITLINK_MODE,
    REGULAR_MODES,
    SYMLINK_MODE,
    Decoded,
    GitTree,
    decode_bytes,
    decode_text,
)
from reviewbot.errors import EnvironmentProblem, UsageError

__all__ = [
    "BINARY_SNIFF_BYTES",
    "GITLINK_MODE",
    "REGULAR_MODES",
    "SYMLINK_MODE",
    "Decoded",
    "DiffEntry",
    "GitTree",
    "changed_paths",
    "checkout",
    "decode_bytes",
    "decode_text",
    "diff_patch_chunks",
    "diff_raw",
    "is_ancestor",
    "merge_base",
    "resolve",
    "run_git",
]


def resolve(repo: Path, rev: str) -> str:
    """The full sha of the commit `rev` names (tags are peeled to their commit)."""
    if not rev or "\n" in rev:
        raise EnvironmentProblem(f"unknown revision: {rev!r}; pass a branch, tag or commit sha")
    proc = run_git(
        repo,
        ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"],
        ok_codes=(0, 1),
    )
    sha = proc.stdout.decode("ascii", "replace").strip()
    if proc.returncode != 0 or not sha:
        raise EnvironmentProblem(f"unknown revision: {rev}; {_fetch_hint(repo, rev)}")
    return sha


_REF_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._/+-]*")
_HEX = re.compile(r"[0-9a-f]{7,64}")
_FULL_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def _fetch_hint(repo: Path, rev: str) -> str:
    """How to get `rev` into `repo`: git commands that run as written (quoted, the repository named
    unless it is the current directory), after which the same `rev` resolves."""
    name = re.split(r"[~^]", rev, maxsplit=1)[0]  # feature~2: get feature
    if _REF_NAME.fullmatch(name) is None or ".." in name or name.endswith((".", "/", ".lock")):
        return "check the name (pass a branch, tag or commit sha)"
    remotes = run_git(repo, ["remote"], ok_codes=None).stdout.decode("utf-8", "replace").split()
    if not remotes:
        return "check the name (the repository has no remote to fetch it from)"
    remote = "origin" if "origin" in remotes else remotes[0]
    git = "git" if repo.resolve() == Path.cwd().resolve() else f"git -C {shlex.quote(str(repo))}"
    first, _, rest = name.partition("/")
    tracking = f"refs/remotes/{remote}/{name}"
    if first in remotes and rest:  # origin/feature: update that remote-tracking branch
        command = f"{git} fetch {shlex.quote(first)} {shlex.quote(f'{rest}:refs/remotes/{name}')}"
    elif _HEX.fullmatch(name):
        # A full sha is fetched by itself; an abbreviated one only with the branches that hold it.
        command = f"{git} fetch {shlex.quote(remote)}" + (f" {name}" if len(name) in (40, 64) else "")
    elif run_git(repo, ["show-ref", "--verify", "--quiet", tracking], ok_codes=None).returncode == 0:
        command = f"{git} branch {shlex.quote(name)} {shlex.quote(f'{remote}/{name}')}"
        return f"only {remote}/{name} exists here: create the branch (`{command}`) or pass {remote}/{name}"
    else:  # a branch or a tag of the remote: fetched, then a local branch of that name
        quoted = shlex.quote(name)
        command = f"{git} fetch {shlex.quote(remote)} {quoted} && {git} branch {quoted} FETCH_HEAD"
    return f"fetch it first (`{command}`) or check the name"


def merge_base(repo: Path, base: str, head: str) -> str:
    """The commit GitHub diffs a pull request against: the best common ancestor of base and head."""
    # Callers often pass what `resolve` returned: a full sha needs no second `rev-parse` (a spawn).
    base_sha, head_sha = (rev if _FULL_SHA.fullmatch(rev) else resolve(repo, rev) for rev in (base, head))
    proc = run_git(repo, ["merge-base", base_sha, head_sha], ok_codes=(0, 1))
    sha = proc.stdout.decode("ascii").strip()
    if proc.returncode == 1 or not sha:
        raise EnvironmentProblem(
            f"{base} and {head} have no common ancestor; if the clone is shallow, fetch more history "
            "(`git fetch --unshallow`)"
        )
    return sha


def is_ancestor(repo: Path, a: str, b: str) -> bool:
    """True when commit `a` is `b` or one of its ancestors."""
    a_sha, b_sha = resolve(repo, a), resolve(repo, b)
    proc = run_git(repo, ["merge-base", "--is-ancestor", a_sha, b_sha], ok_codes=(0, 1))
    return proc.returncode == 0


def changed_paths(repo: Path, a: str, b: str) -> list[str]:
    """Every path whose content or mode differs between commits a and b, sorted.

    Renames are not paired: a moved file shows up under its old and its new path, which is what
    a caller asking "did this path change" wants.
    """
    a_sha, b_sha = resolve(repo, a), resolve(repo, b)
    proc = run_git(repo, ["diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", a_sha, b_sha])
    return sorted(decode_path(p) for p in proc.stdout.split(b"\0") if p)


@dataclass(frozen=True)
class DiffEntry:
    """One line of `git diff --raw`: what happened to one path between two commits."""

    status: str  # A, D, M, R, T (git's letter; a rename's score is in `score`)
    score: int | None
    old_mode: str
    new_mode: str
    old_blob: str
    new_blob: str
    old_path: str | None  # None for additions
    path: str  # the new path; the old one for deletions


# Options shared by the raw listing and the patch so both see the same file pairs, whatever the
# user's or repository's diff configuration says.
_DIFF_OPTS = (
    "--find-renames",
    "--no-ext-diff",
    "--no-textconv",
    "--no-color",
    "--no-relative",
    "--diff-algorithm=myers",
    "--ignore-submodules=none",
)


def diff_raw(repo: Path, a: str, b: str) -> list[DiffEntry]:
    """The files that differ between commits a and b (renames detected), in git's order."""
    proc = run_git(repo, ["diff", "--raw", "-z", "--no-abbrev", *_DIFF_OPTS, a, b, "--"])
    fields = proc.stdout.split(b"\0")
    entries: list[DiffEntry] = []
    i = 0
    while i < len(fields) and fields[i]:
        meta = fields[i].decode("ascii").lstrip(":").split(" ")
        old_mode, new_mode, old_blob, new_blob, letters = meta
        status, score = letters[0], (int(letters[1:]) if letters[1:] else None)
        if status in ("R", "C"):
            src, dst = decode_path(fields[i + 1]), decode_path(fields[i + 2])
            i += 3
        else:
            src = dst = decode_path(fields[i + 1])
            i += 2
        entries.append(
            DiffEntry(
                status, score, old_mode, new_mode, old_blob, new_blob, None if status == "A" else src, dst
            )
        )
    return entries


def diff_patch_chunks(repo: Path, a: str, b: str, pathspecs: Sequence[str] = ()) -> Iterator[bytes]:
    """Stream `git diff -p a b`, one file's section ("diff --git ..." up to the next) at a time.

    Streaming keeps memory bounded by the largest single file diff, so a caller can stop keeping
    sections at a size limit and still count the full size. The generator must be exhausted or
    closed; it raises GitError if git failed.
    """
    check_repo_dir(repo)
    argv = git_argv(
        repo, ["diff", "-p", "-U3", "--src-prefix=a/", "--dst-prefix=b/", *_DIFF_OPTS, a, b, "--", *pathspecs]
    )
    with tempfile.TemporaryFile() as err:
        try:
            proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, env=git_env())
        except OSError as exc:
            raise not_installed(exc) from exc
        assert proc.stdout is not None
        finished = False
        try:
            yield from _split_sections(proc.stdout)
            finished = True
        finally:
            proc.stdout.close()
            if not finished:
                # Closed early by the caller (or failed): the rest of the diff is not wanted.
                proc.kill()
            returncode = proc.wait()
        if returncode != 0:
            err.seek(0)
            raise git_problem(repo, ["diff", "-p"], returncode, err.read())


_SECTION = b"\ndiff --git "


def _split_sections(stream: IO[bytes]) -> Iterator[bytes]:
    # A hunk line always starts with ' ', '+', '-' or '\\', so "\ndiff --git " only ever starts a
    # new file section. A bytearray grows in place: no quadratic copying for a huge section.
    buf = bytearray()
    while block := stream.read(1 << 16):
        scan_from = max(0, len(buf) - len(_SECTION) + 1)
        buf += block
        start = 0
        while (cut := buf.find(_SECTION, max(scan_from, start))) != -1:
            yield bytes(buf[start : cut + 1])
            start = cut + 1
        del buf[:start]
    if buf:
        yield bytes(buf)


def checkout(repo: Path, sha: str, dest: Path) -> None:
    """Write the files of commit `sha` into `dest` (a new or empty directory), as checkout would.

    Uses a throw-away index (`read-tree` + `checkout-index`): files come out exactly as
    `git checkout` writes them (exec bits, symlinks, eol/smudge filters), nothing is registered in
    the repository (unlike a worktree) and `export-ignore` attributes do not drop files (unlike
    `git archive`). `dest` gets no `.git`; submodules stay empty directories.
    """
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise UsageError(f"cannot export {sha[:12]} into {dest}: it is not an empty directory")
    commit = resolve(repo, sha)
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="reviewbot-index-") as tmp:
        index_env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        run_git(repo, ["read-tree", commit], env=index_env)
        run_git(repo, [f"--work-tree={dest.resolve()}", "checkout-index", "--all", "--force"], env=index_env)
