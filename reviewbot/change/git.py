"""A thin, typed wrapper over the git command line (subprocess, never a shell).

Errors: a missing git, a directory that is not a repository or a revision git does not know are
`EnvironmentProblem`s (the user can fix them); any other failed git command is a `GitError`
carrying git's own message.

Every command runs with `LC_ALL=C` (git's messages stay English, so they can be recognised),
`core.quotePath=false` (non-ASCII paths come out as UTF-8, not octal escapes) and without the
variables that would point git at another repository (GIT_DIR and friends, as set inside hooks).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
import threading
import weakref
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO

from reviewbot.change.model import SkipReason
from reviewbot.errors import EnvironmentProblem, GitError, UsageError

__all__ = [
    "GITLINK_MODE",
    "REGULAR_MODES",
    "SYMLINK_MODE",
    "DiffEntry",
    "GitTree",
    "BINARY_SNIFF_BYTES",
    "changed_paths",
    "checkout",
    "decode_text",
    "diff_patch_chunks",
    "diff_raw",
    "is_ancestor",
    "merge_base",
    "resolve",
    "run_git",
]

# git's own rule for "is this binary" (xdiff's FIRST_FEW_BYTES): a NUL byte in the first 8000
# bytes. Using the same figure keeps GitTree and `git diff` in agreement about every file.
BINARY_SNIFF_BYTES = 8000

REGULAR_MODES = frozenset({"100644", "100755"})
SYMLINK_MODE = "120000"
GITLINK_MODE = "160000"

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


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _LOCATING_VARS}
    env.update({"LC_ALL": "C", "LANGUAGE": "C", "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"})
    if extra:
        env.update(extra)
    return env


def _argv(repo: Path, args: Sequence[str]) -> list[str]:
    return ["git", "-C", str(repo), "-c", "core.quotePath=false", *args]


def _check_repo_dir(repo: Path) -> None:
    if not repo.is_dir():
        raise EnvironmentProblem(f"not a git repository: {repo}; pass the directory of a git clone")


def _problem(repo: Path, args: Sequence[str], returncode: int, stderr: bytes) -> Exception:
    message = stderr.decode("utf-8", "replace").strip()
    if "not a git repository" in message:
        return EnvironmentProblem(f"not a git repository: {repo}; pass the directory of a git clone")
    if "dubious ownership" in message:
        return EnvironmentProblem(
            f"git refuses to read {repo} because another user owns it; "
            f"run `git config --global --add safe.directory {repo}`"
        )
    return GitError(f"git {' '.join(args[:3])} failed (exit {returncode}) in {repo}: {message}")


def _not_installed(exc: OSError) -> EnvironmentProblem:
    return EnvironmentProblem(f"git is not installed ({exc.strerror}); install git and put it on PATH")


def run_git(
    repo: Path,
    args: Sequence[str],
    *,
    ok_codes: Sequence[int] = (0,),
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run `git -C repo ARGS` and return the finished process (stdout as bytes).

    Raises EnvironmentProblem when git is missing or `repo` is not a repository, GitError when
    git exits with a code outside `ok_codes`.
    """
    _check_repo_dir(repo)
    try:
        proc = subprocess.run(_argv(repo, args), capture_output=True, env=_env(env), check=False)
    except OSError as exc:
        raise _not_installed(exc) from exc
    if proc.returncode not in ok_codes:
        raise _problem(repo, args, proc.returncode, proc.stderr)
    return proc


def _decode_path(raw: bytes) -> str:
    # surrogateescape lets a non-UTF-8 file name travel back to git unchanged as an argument.
    return raw.decode("utf-8", "surrogateescape")


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
        raise EnvironmentProblem(
            f"unknown revision: {rev}; fetch it first (`git fetch origin {rev}`) or check the name"
        )
    return sha


def merge_base(repo: Path, base: str, head: str) -> str:
    """The commit GitHub diffs a pull request against: the best common ancestor of base and head."""
    base_sha, head_sha = resolve(repo, base), resolve(repo, head)
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
    return sorted(_decode_path(p) for p in proc.stdout.split(b"\0") if p)


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
            src, dst = _decode_path(fields[i + 1]), _decode_path(fields[i + 2])
            i += 3
        else:
            src = dst = _decode_path(fields[i + 1])
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
    _check_repo_dir(repo)
    argv = _argv(
        repo, ["diff", "-p", "-U3", "--src-prefix=a/", "--dst-prefix=b/", *_DIFF_OPTS, a, b, "--", *pathspecs]
    )
    with tempfile.TemporaryFile() as err:
        try:
            proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, env=_env())
        except OSError as exc:
            raise _not_installed(exc) from exc
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
            raise _problem(repo, ["diff", "-p"], returncode, err.read())


_SECTION = b"\ndiff --git "


def _split_sections(stream: IO[bytes]) -> Iterator[bytes]:
    # A hunk line always starts with ' ', '+', '-' or '\', so "\ndiff --git " only ever starts a
    # new file section.
    buf = b""
    while True:
        block = stream.read(1 << 16)
        if not block:
            break
        scan_from = max(0, len(buf) - len(_SECTION))
        buf += block
        start = 0
        while (cut := buf.find(_SECTION, max(scan_from, start))) != -1:
            yield buf[start : cut + 1]
            start = cut + 1
        buf = buf[start:]
    if buf:
        yield buf


def decode_text(data: bytes) -> str | SkipReason:
    """The text of a blob, or why it is not analysable text (BINARY or NON_UTF8)."""
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        return SkipReason.BINARY
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return SkipReason.NON_UTF8


@dataclass(frozen=True)
class _Blob:
    mode: str
    sha: str
    size: int


def _shutdown(proc: subprocess.Popen[bytes]) -> None:
    if proc.stdin is not None and not proc.stdin.closed:
        with contextlib.suppress(OSError):
            proc.stdin.close()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()


class GitTree:
    """Read access to one commit's files (the RepoTree protocol), without a checkout.

    Paths and sizes come from one `git ls-tree`; contents from one long-lived
    `git cat-file --batch` process started on the first read, so reading thousands of files costs
    one process, not thousands. Files over `max_bytes` are never read. Not thread-safe; close it
    (or use it as a context manager) when done; a forgotten tree is closed when collected.
    """

    def __init__(self, repo: Path, sha: str, max_bytes: int = 1 << 20) -> None:
        self.repo = repo
        self.sha = sha
        self.max_bytes = max_bytes
        self._blobs: dict[str, _Blob] | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._finalizer: weakref.finalize | None = None

    def __repr__(self) -> str:
        return f"GitTree({str(self.repo)!r}, {self.sha[:12]!r})"

    def __enter__(self) -> GitTree:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Stop the cat-file process, if one was started. Reading again starts a new one."""
        if self._finalizer is not None:
            self._finalizer()
        self._finalizer = None
        self._proc = None

    def _entries(self) -> dict[str, _Blob]:
        if self._blobs is None:
            out = run_git(self.repo, ["ls-tree", "-r", "-z", "-l", "--full-tree", self.sha]).stdout
            blobs: dict[str, _Blob] = {}
            for record in out.split(b"\0"):
                if not record:
                    continue
                meta, _, raw_path = record.partition(b"\t")
                mode, kind, sha, size = meta.decode("ascii").split()
                # Symlinks and submodules are not source files: their "content" is a target
                # path or a commit id.
                if kind == "blob" and mode in REGULAR_MODES:
                    blobs[_decode_path(raw_path)] = _Blob(mode, sha, int(size))
            self._blobs = blobs
        return self._blobs

    def paths(self) -> list[str]:
        """Every regular file of the commit, in git's order (symlinks and submodules left out)."""
        return list(self._entries())

    def sizes(self) -> dict[str, int]:
        """Size in bytes of every regular file, known without reading any of them."""
        return {p: b.size for p, b in self._entries().items()}

    def read(self, path: str) -> str | None:
        """The decoded text, or None for binary, non-UTF-8, too large or missing files."""
        return self.read_many([path])[path]

    def read_many(self, paths: Iterable[str]) -> dict[str, str | None]:
        """`read` for many paths through one batch: {path: text or None}."""
        out: dict[str, str | None] = {}
        for path, data in self.read_bytes_many(paths).items():
            text = None if data is None else decode_text(data)
            # SkipReason is a str enum: test for it, not for str.
            out[path] = None if text is None or isinstance(text, SkipReason) else text
        return out

    def read_bytes_many(self, paths: Iterable[str]) -> dict[str, bytes | None]:
        """Raw contents: None for missing paths and for files over `max_bytes` (never read)."""
        entries = self._entries()
        out: dict[str, bytes | None] = {}
        wanted: list[tuple[str, _Blob]] = []
        for path in paths:
            blob = entries.get(path)
            out[path] = None
            if blob is not None and blob.size <= self.max_bytes:
                wanted.append((path, blob))
        if wanted:
            for (path, _), data in zip(wanted, self._cat([b.sha for _, b in wanted]), strict=True):
                out[path] = data
        return out

    def _process(self) -> subprocess.Popen[bytes]:
        if self._proc is None or self._proc.poll() is not None:
            _check_repo_dir(self.repo)
            try:
                proc = subprocess.Popen(
                    _argv(self.repo, ["cat-file", "--batch"]),
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    env=_env(),
                )
            except OSError as exc:
                raise _not_installed(exc) from exc
            self._proc = proc
            self._finalizer = weakref.finalize(self, _shutdown, proc)
        return self._proc

    def _cat(self, shas: list[str]) -> list[bytes]:
        proc = self._process()
        assert proc.stdin is not None and proc.stdout is not None
        stdin, stdout = proc.stdin, proc.stdout
        failure: list[BaseException] = []

        # Requests are written from a thread while this one reads answers: writing them all
        # first would deadlock once both pipes are full, and one round trip per object is slow.
        def feed() -> None:
            try:
                stdin.write(b"".join(s.encode("ascii") + b"\n" for s in shas))
                stdin.flush()
            except OSError as exc:
                failure.append(exc)

        writer = threading.Thread(target=feed, name="git-cat-file-feed", daemon=True)
        writer.start()
        try:
            results = [self._read_object(stdout, sha) for sha in shas]
        except GitError:
            self.close()
            raise
        finally:
            writer.join()
        if failure:
            self.close()
            raise GitError(f"git cat-file stopped while reading {self.sha[:12]} in {self.repo}: {failure[0]}")
        return results

    def _read_object(self, stdout: IO[bytes], sha: str) -> bytes:
        header = stdout.readline()
        parts = header.split()
        if len(parts) != 3 or parts[0].decode("ascii", "replace") != sha:
            reason = header.decode("utf-8", "replace").strip() or "git cat-file exited"
            raise GitError(f"cannot read object {sha} of {self.sha[:12]} in {self.repo}: {reason}")
        size = int(parts[2])
        data = stdout.read(size)
        stdout.read(1)  # the newline git puts after every object
        if len(data) != size:
            raise GitError(f"git cat-file returned a short object {sha} in {self.repo}")
        return data


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
