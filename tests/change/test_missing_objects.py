"""Partial or damaged clones (issue 15, item 17): a file whose object the repository lacks is skipped
and named, and lowers coverage only when it is one of the changed files; nothing fetches every blob.

Two ways a blob goes missing, both built for real: a loose object deleted from .git/objects (a
damaged clone, a mirror without some large objects), and a `--filter=blob:none` partial clone of a
local bare repository (git would fetch each missing blob from it on demand).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reviewbot.change.diff import load_change
from reviewbot.change.tree import GitTree
from reviewbot.model.change import SkipReason
from tests.fakegithub.repos import make_bare, push
from tests.gitrepo import Repo, git

ROOT = Path(__file__).resolve().parents[2]

BASE_CFG = "def derive(cfg):\n    return cfg\n"
HEAD_CFG = "def derive(cfg):\n    if cfg.style == 0:\n        cfg.flag = False\n    return cfg\n"
UNRELATED = {
    "assets/weights.bin": b"\x00\x01" * 4000,  # a large binary a mirror leaves out
    "tools/generated_table.py": "TABLE = [\n" + "    1,\n" * 500 + "]\n",  # source, but not touched
    "README.md": "docs\n",
}


def _pr(tmp: Path) -> tuple[Repo, str, str]:
    repo = Repo(tmp / "repo")
    base = repo.commit({"cfg.py": BASE_CFG, **UNRELATED}, "base")
    repo.checkout("pr", create=True)
    head = repo.commit({"cfg.py": HEAD_CFG}, "head")
    return repo, base, head


def _drop_object(repo: Repo, rev_path: str) -> str:
    """Delete the loose object of `rev:path`, so that `git cat-file` fails for it."""
    sha = repo.git("rev-parse", rev_path)
    (repo.path / ".git" / "objects" / sha[:2] / sha[2:]).unlink()
    done = subprocess.run(["git", "-C", str(repo.path), "cat-file", "-e", sha], capture_output=True)
    assert done.returncode != 0
    return sha


def _review(path: Path, base: str, head: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REVIEWBOT_", "GITHUB_"))}
    env.update(PYTHONPATH=str(ROOT), HOME=str(tmp), XDG_STATE_HOME=str(tmp / "state"))
    argv = [sys.executable, "-m", "reviewbot.cli", "run", "--path", str(path), "--base", base, "--head", head]
    return subprocess.run(
        [*argv, "--no-tests", "--no-cache", "--format", "json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_missing_blob_in_an_unrelated_file_is_named_and_coverage_stays_1(tmp_path: Path) -> None:
    repo, base, head = _pr(tmp_path)
    _drop_object(repo, f"{head}:assets/weights.bin")
    _drop_object(repo, f"{head}:tools/generated_table.py")

    done = _review(repo.path, base, head, tmp_path)

    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["kpi"]["coverage"] == 1.0
    assert report["status"] != "INCOMPLETE"  # the changed file was read in full
    named = [n for n in report["notes"] if "not in this clone" in n["message"]]
    assert len(named) == 1 and named[0]["path"] is None, report["notes"]
    assert "assets/weights.bin" in named[0]["message"]
    assert "tools/generated_table.py" in named[0]["message"]
    assert "cfg.py" not in named[0]["message"]
    assert report["truth_tables"], "the review of the changed file went on"  # its derivation's table


def test_a_missing_blob_in_a_changed_file_lowers_coverage_instead_of_failing(tmp_path: Path) -> None:
    repo, base, head = _pr(tmp_path)
    repo.checkout("main")
    other = repo.commit({"other.py": "A = 1\n"}, "another file")
    repo.checkout("pr")
    head2 = repo.commit({"other.py": "A = 2\n", "cfg.py": HEAD_CFG + "\n"}, "two changed files")
    _drop_object(repo, f"{head2}:cfg.py")

    done = _review(repo.path, other, head2, tmp_path)

    assert done.returncode == 0, done.stderr  # was exit 3: `git diff` failed on the missing object
    report = json.loads(done.stdout)
    assert 0 < report["kpi"]["coverage"] < 1.0
    assert report["status"] == "INCOMPLETE"
    skipped = [n for n in report["notes"] if n["path"] == "cfg.py"]
    assert skipped and "not in this clone" in skipped[0]["message"], report["notes"]


def test_the_note_is_in_both_languages(tmp_path: Path) -> None:
    repo, base, head = _pr(tmp_path)
    _drop_object(repo, f"{head}:assets/weights.bin")
    change = load_change(repo.path, base, head)
    try:
        (note,) = [n for n in change.notes if n.text is not None and n.text.key == "note.missing-objects"]
        assert "assets/weights.bin" in note.localized("en") and "assets/weights.bin" in note.localized("zh")
        assert note.localized("zh") != note.localized("en")
        assert note.reason is SkipReason.UNAVAILABLE and change.coverage == 1.0
    finally:
        change.close()


@pytest.fixture
def partial(tmp_path: Path) -> tuple[Path, Path, str, str]:
    """A bare `--filter=blob:none` clone of a PR (base on main, head on pr), no blob downloaded yet."""
    repo, base, head = _pr(tmp_path)
    server = make_bare(tmp_path / "server.git")
    push(repo.path, server, base, "refs/heads/main")
    push(repo.path, server, head, "refs/heads/pr")
    clone = tmp_path / "clone.git"
    git(tmp_path, "clone", "-q", "--bare", "--filter=blob:none", server.as_uri(), str(clone))
    return clone, server, base, head


def _absent(clone: Path, rev: str) -> set[str]:
    out = git(clone, "rev-list", "--objects", "--missing=print", "--no-object-names", "--no-walk", rev)
    return {line[1:] for line in out.splitlines() if line.startswith("?")}


def test_a_partial_clone_fetches_only_what_the_diff_needs(partial: tuple[Path, Path, str, str]) -> None:
    clone, _, base, head = partial
    before = _absent(clone, head)
    assert len(before) == 4  # cfg.py (head) and the three unrelated files

    change = load_change(clone, base, head)
    try:
        assert [f.path for f in change.files] == ["cfg.py"] and change.files[0].skipped is None
        assert change.files[0].base_text == BASE_CFG and change.files[0].head_text == HEAD_CFG
        assert change.coverage == 1.0
        assert change.head_tree is not None
        assert change.head_tree.grep(["derive"]) is None  # git grep would fetch every blob first
    finally:
        change.close()
    # The two sides of cfg.py came in one request each; the unrelated blobs were never fetched.
    assert _absent(clone, head) == before - {git(clone, "rev-parse", f"{head}:cfg.py")}
    assert git(clone, "rev-parse", f"{base}:README.md") in _absent(clone, base)


def test_a_partial_clone_whose_remote_is_gone_skips_the_changed_file(
    partial: tuple[Path, Path, str, str], tmp_path: Path
) -> None:
    clone, server, base, head = partial
    server.rename(tmp_path / "server-gone.git")

    done = _review(clone, base, head, tmp_path)

    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["kpi"]["coverage"] == 0.0 and report["status"] == "INCOMPLETE"
    assert any(n["path"] == "cfg.py" and "not in this clone" in n["message"] for n in report["notes"])
    unrelated = [n for n in report["notes"] if n["path"] is None and "not in this clone" in n["message"]]
    assert unrelated and "README.md" in unrelated[0]["message"]


def test_listing_a_partial_clone_fetches_nothing(partial: tuple[Path, Path, str, str]) -> None:
    clone, server, _, head = partial
    with GitTree(clone, head) as tree:
        assert tree.paths() == []  # no blob is local: none has a size, none was fetched to learn it
        assert sorted(tree.missing()) == sorted(["cfg.py", *UNRELATED])
        assert tree.fetch(["README.md"]) == []
        assert tree.read("README.md") == "docs\n" and tree.lacks("cfg.py")
    assert len(_absent(clone, head)) == 3
    with GitTree(clone, head) as tree:  # no promisor remote reachable: still listed, not fatal
        server.rename(server.with_name("moved.git"))
        assert tree.fetch(["cfg.py"]) == ["cfg.py"]
