"""GitTree: read one commit's files without a checkout, through one `git cat-file --batch`."""

from __future__ import annotations

import contextlib
import re
import subprocess
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import IO

from reviewbot.change.blobs import (
    BINARY_SNIFF_BYTES,
    GITLINK_MODE,
    MAX_UNDECODABLE_SHARE,
    REGULAR_MODES,
    SYMLINK_MODE,
    Blob,
    Decoded,
    decode_bytes,
    decode_text,
    ls_tree_records,
)
from reviewbot.change.gitproc import check_repo_dir, decode_path, git_argv, git_env, not_installed, run_git
from reviewbot.errors import GitError
from reviewbot.model.change import SkipReason

_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")  # a full object id (SHA-1 or SHA-256)
_TEXT_MEMO_CHARS = 8 << 20  # characters of recently read texts a tree keeps (a few MiB: see GitTree)

__all__ = [
    "BINARY_SNIFF_BYTES",
    "GITLINK_MODE",
    "MAX_UNDECODABLE_SHARE",
    "REGULAR_MODES",
    "SYMLINK_MODE",
    "Decoded",
    "GitTree",
    "decode_bytes",
    "decode_text",
]


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
    one process, not thousands. Files over `max_bytes` are never read. Reads from several threads
    take turns on the one process. Close it (or use it as a context manager) when done; a
    forgotten tree is closed when collected.
    """

    def __init__(self, repo: Path, sha: str, max_bytes: int = 1 << 20) -> None:
        self.repo = repo
        self.sha = sha
        self.max_bytes = max_bytes
        self._blobs: dict[str, Blob] | None = None
        self._missing: dict[str, Blob] = {}  # files whose objects the repository lacks (size unknown: -1)
        self._remote: str | None = None
        self._remote_known = False
        self._proc: subprocess.Popen[bytes] | None = None
        self._finalizer: weakref.finalize[[subprocess.Popen[bytes]], GitTree] | None = None
        self._lock = threading.RLock()  # one conversation with cat-file at a time
        # Texts read lately, most recent last: several stages read the same files (the index, then the
        # readers of a switch, then the call graph: 140 of 410 reads of a warm rtp-llm review).
        self._texts: OrderedDict[str, str] = OrderedDict()
        self._text_chars = 0

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
        with self._lock:
            self._stop()

    def _stop(self) -> None:
        if self._finalizer is not None:
            self._finalizer()
        self._finalizer = None
        self._proc = None

    def _entries(self) -> dict[str, Blob]:
        if self._blobs is None:
            self._missing = {}
            self._blobs = self._list_sized() if self._promisor() is None else self._list_without_fetching()
        return self._blobs

    def _promisor(self) -> str | None:
        """The promisor remote when the repository is a partial clone: git fetches a missing object
        from it the moment anything asks for its size or content, one request per object."""
        if not self._remote_known:
            pattern = r"^(remote\..*\.promisor|extensions\.partialclone)$"
            out = run_git(self.repo, ["config", "--get-regexp", pattern], ok_codes=(0, 1)).stdout
            for line in out.decode("utf-8", "replace").splitlines():
                key, _, value = line.partition(" ")
                if key.lower() == "extensions.partialclone" and value:
                    self._remote = value
                    break
                if key.endswith(".promisor") and value.lower() in ("true", "yes", "on", "1"):
                    self._remote = key[len("remote.") : -len(".promisor")]
            self._remote_known = True
        return self._remote

    def _list_sized(self) -> dict[str, Blob]:
        """One `git ls-tree -l` (no promisor remote, so a missing object is reported, never fetched)."""
        out = run_git(self.repo, ["ls-tree", "-r", "-z", "-l", "--full-tree", self.sha]).stdout
        blobs: dict[str, Blob] = {}
        for path, mode, sha, size in ls_tree_records(out, sized=True):
            if not size.isdigit():
                # "BAD": the object is not in the repository (a mirror that leaves large files out, a
                # damaged clone). One unreadable file must not sink the review: it is left out of the
                # tree and named by `missing()`, so the caller can say so.
                self._missing[path] = Blob(mode, sha, -1)
                continue
            blobs[path] = Blob(mode, sha, int(size))
        return blobs

    def _list_without_fetching(self) -> dict[str, Blob]:
        """A partial clone: `ls-tree -l` would fetch every missing blob, one request each, only to learn
        its size. The tree's objects are listed instead (trees only), the missing ones found with
        `rev-list --missing=print` (which never fetches), and only present blobs are sized."""
        out = run_git(self.repo, ["ls-tree", "-r", "-z", "--full-tree", self.sha]).stdout
        listed = list(ls_tree_records(out, sized=False))
        walk = ["rev-list", "--objects", "--no-object-names", "--missing=print", "--no-walk", self.sha]
        absent = {
            line[1:].decode("ascii")
            for line in run_git(self.repo, walk).stdout.splitlines()
            if line.startswith(b"?")
        }
        present = sorted({sha for _, _, sha, _ in listed} - absent)
        sizes: dict[str, int] = {}
        if present:
            # Every object asked for is present; protocol.allow=never keeps a surprise from fetching.
            check = ["-c", "protocol.allow=never", "cat-file", "--batch-check=%(objectname) %(objectsize)"]
            answer = run_git(self.repo, check, stdin="".join(f"{sha}\n" for sha in present).encode("ascii"))
            for line in answer.stdout.decode("ascii", "replace").splitlines():
                sha, _, size = line.partition(" ")
                if size.isdigit():
                    sizes[sha] = int(size)
        blobs: dict[str, Blob] = {}
        for path, mode, sha, _ in listed:
            if sha in sizes:
                blobs[path] = Blob(mode, sha, sizes[sha])
            else:
                self._missing[path] = Blob(mode, sha, -1)
        return blobs

    def missing(self) -> list[str]:
        """Files of the commit whose objects the repository does not hold, in git's order."""
        self._entries()
        return list(self._missing)

    def lacks(self, path: str) -> bool:
        """True when the commit has `path` but the repository does not hold its content."""
        self._entries()
        return path in self._missing

    def fetch(self, paths: Iterable[str], timeout: float = 300.0) -> list[str]:
        """Ask a partial clone's promisor remote, in one request, for the missing objects of `paths`
        (the files the analysis needs, never the whole tree); returns those still missing. Without a
        promisor remote nothing can be fetched: the missing ones are returned as they are."""
        self._entries()
        wanted = [p for p in dict.fromkeys(paths) if p in self._missing]
        remote = self._promisor()
        if not wanted or remote is None:
            return wanted
        shas = sorted({self._missing[p].sha for p in wanted})
        args = [
            "-c",
            "fetch.negotiationAlgorithm=noop",
            "fetch",
            remote,
            "--no-tags",
            "--no-write-fetch-head",
        ]
        args += ["--recurse-submodules=no", "--filter=blob:none", "--stdin"]
        stdin = "".join(f"{sha}\n" for sha in shas).encode("ascii")
        with contextlib.suppress(GitError):  # offline, or the remote lacks them too: they stay missing
            run_git(self.repo, args, stdin=stdin, ok_codes=None, timeout=timeout)
        with self._lock:
            self._blobs = None  # list again: what arrived now has a size
        self._entries()
        return [p for p in wanted if p in self._missing]

    def paths(self) -> list[str]:
        """Every regular file of the commit, in git's order (symlinks and submodules left out)."""
        return list(self._entries())

    def sizes(self) -> dict[str, int]:
        """Size in bytes of every regular file, known without reading any of them."""
        return {p: b.size for p, b in self._entries().items()}

    def size(self, path: str) -> int | None:
        """Size in bytes of one regular file, None when the commit has no such file."""
        blob = self._entries().get(path)
        return None if blob is None else blob.size

    def grep(
        self, words: Iterable[str], pathspecs: Iterable[str] = (), *, substrings: bool = False
    ) -> set[str] | None:
        """Paths of the commit's files that contain one of `words` as a whole word (`git grep -w -F`),
        limited by git `pathspecs`; None when git cannot answer (then read everything).

        One `git grep` over the commit's objects costs a fraction of reading every file into Python
        (rtp-llm, 4,100 source files: about 0.3 s against 6 s), and most files mention none of the
        names a change involves. Objects the repository lacks are skipped by git with a message on
        stderr (they are not in `paths()` either). With `substrings`, `words` are matched anywhere in a
        line, not only as whole words."""
        patterns = sorted({w for w in words if w})
        if not patterns:
            return set()
        if self._promisor() is not None and self.missing():
            return None  # git grep would first fetch every missing blob of the commit, in one batch
        check_repo_dir(self.repo)
        # git grep maps the pack files as cat-file does: with both alive the review's processes hold
        # the pack twice (rtp-llm: 41 + 55 MiB beside Python's 95). The next read starts a new cat-file.
        self.close()
        args = [
            "grep",
            "-l",
            "-z",
            *([] if substrings else ["-w"]),
            "-F",
            "-I",
            "--no-color",
            "--full-name",
        ]
        for w in patterns:
            args += ["-e", w]
        args += [self.sha, "--", *pathspecs]
        try:
            proc = subprocess.run(git_argv(self.repo, args), capture_output=True, env=git_env(), check=False)
        except OSError as exc:
            raise not_installed(exc) from exc
        if proc.returncode not in (0, 1):  # 1: nothing matched
            return None
        prefix = self.sha.encode("ascii") + b":"
        return {
            decode_path(raw[len(prefix) :] if raw.startswith(prefix) else raw)
            for raw in proc.stdout.split(b"\0")
            if raw
        }

    def changed_since(self, other: str, limit: int) -> list[str] | None:
        """Paths whose content differs between commit (or tree) `other` and this commit: changed,
        added or deleted (no rename detection: a renamed file is a deletion and an addition). None
        when git cannot tell (`other` unknown here, say after a gc) or more than `limit` differ."""
        if not _SHA.fullmatch(other):
            return None
        try:
            out = run_git(
                self.repo, ["diff-tree", "-r", "-z", "--no-renames", "--name-only", other, self.sha]
            )
        except GitError:
            return None
        paths = [decode_path(raw) for raw in out.stdout.split(b"\0") if raw]
        return paths if len(paths) <= limit else None

    def read(self, path: str) -> str | None:
        """The decoded text (stray non-UTF-8 bytes read as U+FFFD), or None for binary, mostly
        non-UTF-8, too large or missing files."""
        return self.read_many([path])[path]

    def read_many(self, paths: Iterable[str]) -> dict[str, str | None]:
        """`read` for many paths through one batch: {path: text or None}."""
        out: dict[str, str | None] = {}
        todo: list[str] = []
        with self._lock:
            for path in paths:
                known = self._texts.get(path)
                if known is None:
                    todo.append(path)
                else:
                    self._texts.move_to_end(path)
                    out[path] = known
        for path, data in self.read_bytes_many(todo).items():
            text = None if data is None else decode_text(data)
            # SkipReason is a str enum: test for it, not for str.
            out[path] = None if text is None or isinstance(text, SkipReason) else text
            if (kept := out[path]) is not None:
                self._remember(path, kept)
        return out

    def _remember(self, path: str, text: str) -> None:
        with self._lock:
            if len(text) > _TEXT_MEMO_CHARS // 8 or path in self._texts:
                return
            self._texts[path] = text
            self._text_chars += len(text)
            while self._text_chars > _TEXT_MEMO_CHARS:
                _, gone = self._texts.popitem(last=False)
                self._text_chars -= len(gone)

    def read_bytes_many(self, paths: Iterable[str]) -> dict[str, bytes | None]:
        """Raw contents: None for missing paths and for files over `max_bytes` (never read)."""
        entries = self._entries()
        out: dict[str, bytes | None] = {}
        wanted: list[tuple[str, Blob]] = []
        for path in paths:
            blob = entries.get(path)
            out[path] = None
            if blob is not None and blob.size <= self.max_bytes:
                wanted.append((path, blob))
        if wanted:
            with self._lock:
                contents = self._cat([b.sha for _, b in wanted])
            for (path, _), data in zip(wanted, contents, strict=True):
                out[path] = data
        return out

    def _process(self) -> subprocess.Popen[bytes]:
        if self._proc is None or self._proc.poll() is not None:
            check_repo_dir(self.repo)
            try:
                proc = subprocess.Popen(
                    git_argv(self.repo, ["cat-file", "--batch"]),
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    env=git_env(),
                )
            except OSError as exc:
                raise not_installed(exc) from exc
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
            except (OSError, ValueError) as exc:  # git died, or the pipe was closed under us
                failure.append(exc)

        writer = threading.Thread(target=feed, name="git-cat-file-feed", daemon=True)
        writer.start()
        try:
            results = [self._read_object(stdout, sha) for sha in shas]
        except BaseException:
            # Kill first: a writer blocked on a full pipe only returns once git is gone.
            proc.kill()
            writer.join()
            self.close()
            raise
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
