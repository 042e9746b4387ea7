"""Exporting a commit from a mirror that lacks some of its blobs, for the executed-tables bench.

The bench's mirrors (MIRRORS/<owner>+<name>/repo) were copied without some large blobs (test assets,
media, prebuilt libraries): `git checkout-index` then fails on the whole tree, and no truth table of
the commit is run, although the derivation's module never reads those files. A pull request's real
clone has every blob. So the bench, when the export fails for that reason only, exports the tree
without the files whose blobs the mirror lacks, and records which (the page lists them): the tables
then run as they would on a complete clone, unless the left-out files matter, which their run shows.

    with leaving_out_missing_blobs() as left_out:   # left_out: sha -> paths not exported
        ...                                          # the review's exports go through it
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from reviewbot.change import git as change_git
from reviewbot.errors import ReviewbotError
from reviewbot.execution import execute, table_sides

__all__ = ["leaving_out_missing_blobs", "missing_blobs"]

_MISSING = "unable to read sha1 file"


def missing_blobs(repo: Path, sha: str) -> list[str]:
    """Paths of `sha`'s tree whose blob the object store of `repo` lacks."""
    listed = subprocess.run(
        ["git", "--git-dir", str(repo), "ls-tree", "-r", "-z", sha], capture_output=True, check=True
    ).stdout.split(b"\0")
    blobs = [(e.split(b"\t", 1)[0].split()[2], e.split(b"\t", 1)[1]) for e in listed if b"\t" in e]
    blobs = [(oid, path) for oid, path in blobs if len(oid) >= 40]
    checked = subprocess.run(
        ["git", "--git-dir", str(repo), "cat-file", "--batch-check"],
        input=b"".join(oid + b"\n" for oid, _ in blobs),
        capture_output=True,
        check=True,
    ).stdout.splitlines()
    return [
        path.decode() for (_, path), line in zip(blobs, checked, strict=True) if line.endswith(b" missing")
    ]


def _export_without(repo: Path, sha: str, dest: Path, left_out: list[str]) -> None:
    """`checkout` of reviewbot.change.git with the paths `left_out` dropped from the throw-away index."""
    commit = change_git.resolve(repo, sha)
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="reviewbot-index-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        change_git.run_git(repo, ["read-tree", commit], env=env)
        names = "".join(f"{p}\0" for p in left_out)
        subprocess.run(
            [
                "git",
                "--git-dir",
                str(repo),
                f"--work-tree={dest.resolve()}",
                "update-index",
                "--force-remove",
                "-z",
                "--stdin",
            ],
            input=names.encode(),
            env={**os.environ, **env},
            check=True,
            capture_output=True,
        )
        change_git.run_git(
            repo, [f"--work-tree={dest.resolve()}", "checkout-index", "--all", "--force"], env=env
        )


@contextmanager
def leaving_out_missing_blobs() -> Iterator[dict[str, list[str]]]:
    """Within: every export of the review (the test stage's and the tables') that fails only because
    the mirror lacks blobs is made again without those files; yields sha -> the paths left out."""
    left_out: dict[str, list[str]] = {}
    original = change_git.checkout

    def export(repo: Path, sha: str, dest: Path) -> None:
        try:
            original(repo, sha, dest)
            return
        except ReviewbotError as exc:
            if _MISSING not in str(exc):
                raise
        missing = left_out.setdefault(sha, missing_blobs(repo, sha))
        if not missing:
            raise ReviewbotError(f"could not export {sha[:12]}: the mirror lacks objects other than blobs")
        _export_without(repo, sha, dest, missing)

    # The two modules that export a revision for a round (the test stage, the tables' sides).
    execute.checkout = export  # type: ignore[attr-defined]
    table_sides.checkout = export  # type: ignore[attr-defined]
    try:
        yield left_out
    finally:
        execute.checkout = original  # type: ignore[attr-defined]
        table_sides.checkout = original  # type: ignore[attr-defined]
