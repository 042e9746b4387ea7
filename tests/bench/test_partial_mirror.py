"""bench/partial_mirror.py: a mirror without some blobs still exports the rest of the tree, and says what it left out."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from reviewbot.errors import ReviewbotError
from reviewbot.execution import table_sides
from tests.bench.scripts import load_script
from tests.gitrepo import Repo, git

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "partial_mirror.py"


partial = load_script("bench_partial_mirror", "partial_mirror.py")


def _mirror_without_a_blob(tmp_path: Path) -> tuple[Path, str]:
    """A bare copy of a small repository whose `assets/big.bin` blob was deleted from the object store."""
    repo = Repo(tmp_path / "work")
    sha = repo.commit({"pkg/config.py": "X = 1\n", "assets/big.bin": b"\x00" * 64, "run.sh": "echo\n"}, "c")
    mirror = tmp_path / "mirror.git"
    subprocess.run(["git", "clone", "-q", "--bare", "--no-local", str(repo.path), str(mirror)], check=True)
    blob = git(repo.path, "rev-parse", f"{sha}:assets/big.bin")
    subprocess.run(["git", "--git-dir", str(mirror), "repack", "-q", "-a", "-d"], check=True)
    for pack in (mirror / "objects" / "pack").glob("*.pack"):  # unpack, then drop the one blob
        pack.rename(tmp_path / pack.name)
        (mirror / "objects" / "pack" / pack.name.replace(".pack", ".idx")).unlink()
        with (tmp_path / pack.name).open("rb") as fh:
            subprocess.run(["git", "--git-dir", str(mirror), "unpack-objects", "-q"], stdin=fh, check=True)
    (mirror / "objects" / blob[:2] / blob[2:]).unlink()
    return mirror, sha


def _export(mirror: Path, sha: str, dest: Path) -> None:
    """The export the tables' sides make (looked up at call time, as the round does)."""
    vars(table_sides)["checkout"](mirror, sha, dest)


def test_an_export_that_fails_on_a_missing_blob_is_made_without_that_file(tmp_path: Path) -> None:
    mirror, sha = _mirror_without_a_blob(tmp_path)
    assert partial.missing_blobs(mirror, sha) == ["assets/big.bin"]
    with pytest.raises(ReviewbotError, match="unable to read sha1 file"):
        _export(mirror, sha, tmp_path / "plain")  # what the round does on its own
    with partial.leaving_out_missing_blobs() as left_out:
        _export(mirror, sha, tmp_path / "tree")
    assert left_out == {sha: ["assets/big.bin"]}
    tree = tmp_path / "tree"
    assert (tree / "pkg" / "config.py").read_text() == "X = 1\n" and (tree / "run.sh").exists()
    assert not (tree / "assets" / "big.bin").exists()
    # Outside the block the round's own export is back.
    with pytest.raises(ReviewbotError):
        _export(mirror, sha, tmp_path / "again")
