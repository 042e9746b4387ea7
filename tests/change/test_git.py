"""The git wrapper against real repositories: revisions, errors, GitTree reads, checkout."""

from __future__ import annotations

import io
import os
import threading
from pathlib import Path

import pytest

from reviewbot.change.git import (
    Decoded,
    GitTree,
    _split_sections,
    changed_paths,
    checkout,
    decode_bytes,
    decode_text,
    diff_raw,
    is_ancestor,
    merge_base,
    resolve,
)
from reviewbot.errors import EnvironmentProblem, GitError, UsageError
from reviewbot.model.change import SkipReason
from tests.gitrepo import Repo


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return Repo(tmp_path / "repo")


def test_resolve_gives_full_sha_of_branch_tag_and_short_sha(repo: Repo) -> None:
    sha = repo.commit({"a.txt": "one\n"})
    repo.git("tag", "-a", "v1", "-m", "annotated tag")
    assert resolve(repo.path, "main") == sha
    assert resolve(repo.path, sha[:8]) == sha
    # An annotated tag is its own object; resolve peels it to the commit.
    assert resolve(repo.path, "v1") == sha
    assert len(sha) == 40


@pytest.mark.parametrize("rev", ["no-such-branch", "deadbeef" * 5, "--output=/tmp/x", ""])
def test_unknown_revision_is_an_environment_problem(repo: Repo, rev: str) -> None:
    repo.commit({"a.txt": "one\n"})
    with pytest.raises(EnvironmentProblem, match="unknown revision") as info:
        resolve(repo.path, rev)
    assert info.value.exit_code == 2


def test_not_a_repository(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(EnvironmentProblem, match=f"not a git repository: {plain}"):
        resolve(plain, "HEAD")
    missing = tmp_path / "missing"
    with pytest.raises(EnvironmentProblem, match=f"not a git repository: {missing}"):
        merge_base(missing, "a", "b")


def test_git_not_installed(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    repo.commit({"a.txt": "one\n"})
    monkeypatch.setenv("PATH", str(repo.path / "no-bin-here"))
    with pytest.raises(EnvironmentProblem, match="git is not installed"):
        resolve(repo.path, "HEAD")


def test_other_failures_are_git_errors_with_git_message(repo: Repo) -> None:
    sha = repo.commit({"a.txt": "one\n"})
    tree = GitTree(repo.path, "0" * 40)
    with pytest.raises(GitError, match="ls-tree") as info:
        tree.paths()
    assert "not a tree object" in str(info.value) or "Not a valid object" in str(info.value)
    assert resolve(repo.path, sha) == sha


def test_merge_base_and_ancestry(repo: Repo) -> None:
    root = repo.commit({"a.txt": "one\n"})
    repo.checkout("feature", create=True)
    feature = repo.commit({"b.txt": "two\n"})
    repo.checkout("main")
    main = repo.commit({"c.txt": "three\n"})
    assert merge_base(repo.path, "main", "feature") == root
    assert is_ancestor(repo.path, root, feature)
    assert is_ancestor(repo.path, feature, feature)
    assert not is_ancestor(repo.path, main, feature)
    assert not is_ancestor(repo.path, feature, root)


def test_unrelated_histories_have_no_merge_base(repo: Repo) -> None:
    repo.commit({"a.txt": "one\n"})
    repo.git("checkout", "-q", "--orphan", "other")
    repo.git("rm", "-q", "-rf", ".")
    repo.commit({"z.txt": "other history\n"})
    with pytest.raises(EnvironmentProblem, match="no common ancestor"):
        merge_base(repo.path, "main", "other")


def test_changed_paths_lists_both_sides_of_a_rename(repo: Repo) -> None:
    a = repo.commit({"keep.txt": "same\n", "old name.txt": "x\n" * 20, "gone.txt": "bye\n"})
    b = repo.commit({"old name.txt": None, "new name.txt": "x\n" * 20, "gone.txt": None, "é.txt": "new\n"})
    assert changed_paths(repo.path, a, b) == ["gone.txt", "new name.txt", "old name.txt", "é.txt"]
    assert changed_paths(repo.path, b, b) == []


def test_diff_raw_statuses_and_unquoted_paths(repo: Repo) -> None:
    a = repo.commit({"m.txt": "1\n", "d.txt": "gone\n", "r.txt": "moved\n" * 10, "tab\tname.txt": "t\n"})
    b = repo.commit(
        {"m.txt": "2\n", "d.txt": None, "r.txt": None, "dir/r2.txt": "moved\n" * 10, "a é.txt": "new\n"}
    )
    entries = {e.path: e for e in diff_raw(repo.path, a, b)}
    assert {p: e.status for p, e in entries.items()} == {
        "a é.txt": "A",
        "d.txt": "D",
        "dir/r2.txt": "R",
        "m.txt": "M",
    }
    assert entries["dir/r2.txt"].old_path == "r.txt"
    assert entries["dir/r2.txt"].score == 100
    assert entries["a é.txt"].old_path is None
    assert entries["d.txt"].old_path == "d.txt"
    assert len(entries["m.txt"].new_blob) == 40


def test_decode_text() -> None:
    assert decode_text("héllo\n".encode()) == "héllo\n"
    # A stray byte that is not UTF-8 reads as U+FFFD; a file that is mostly undecodable is not text.
    assert decode_text(b"caf\xe9\n") == "caf\ufffd\n"
    assert decode_bytes(b"// caf\xe9 cr\xe8me\nint x;\n") == Decoded("// caf\ufffd cr\ufffdme\nint x;\n", 2)
    assert decode_bytes("héllo".encode()) == Decoded("héllo", 0)
    assert decode_text(b"\xff\xfe\xfd a") is SkipReason.NON_UTF8
    assert decode_text(b"text\0more") is SkipReason.BINARY
    # git looks at the first 8000 bytes only; so do we, so both agree about every file.
    assert decode_text(b"a" * 8000 + b"\0") == "a" * 8000 + "\0"


def test_gittree_paths_sizes_and_reads(repo: Repo) -> None:
    repo.write(
        {
            "src/a.py": "print('a')\n",
            "blob.bin": b"\x89PNG\0\0\x01",
            "latin.txt": "café\n".encode("latin-1"),
            "big.txt": "x" * 5000,
            "exe.sh": "#!/bin/sh\n",
        }
    )
    os.chmod(repo.path / "exe.sh", 0o755)
    os.symlink("src/a.py", repo.path / "link.py")
    sha = repo.commit({})
    with GitTree(repo.path, sha, max_bytes=4096) as tree:
        assert tree.paths() == ["big.txt", "blob.bin", "exe.sh", "latin.txt", "src/a.py"]  # no symlink
        assert tree.sizes()["big.txt"] == 5000
        assert tree.read("src/a.py") == "print('a')\n"
        assert tree.read("exe.sh") == "#!/bin/sh\n"
        assert tree.read("blob.bin") is None
        assert tree.read("latin.txt") == "caf\ufffd\n"  # one stray byte: read, as U+FFFD
        assert tree.read("big.txt") is None  # over max_bytes: never read
        assert tree.read("link.py") is None
        assert tree.read("missing.py") is None
        assert tree.read_bytes_many(["latin.txt", "big.txt"]) == {
            "latin.txt": "café\n".encode("latin-1"),
            "big.txt": None,
        }


def test_gittree_read_many_in_one_batch_and_reopen_after_close(repo: Repo) -> None:
    files: dict[str, str | bytes | None] = {
        f"pkg/m{i:03d}.py": f"VALUE = {i}\n" * (i % 7 + 1) for i in range(300)
    }
    sha = repo.commit(files)
    tree = GitTree(repo.path, sha)
    texts = tree.read_many(sorted(files) + ["nope.py"])
    assert texts == {**files, "nope.py": None}
    first = tree._proc
    assert first is not None and first.poll() is None
    # The same process serves later reads: one process for the whole tree, not one per file.
    assert tree.read("pkg/m005.py") == "VALUE = 5\n" * 6
    assert tree._proc is first
    tree.close()
    assert first.poll() is not None
    assert tree.read("pkg/m001.py") == "VALUE = 1\n" * 2
    tree.close()


def test_gittree_large_objects_through_the_pipe(repo: Repo) -> None:
    # Objects bigger than a pipe buffer, many of them: reads must not deadlock.
    files: dict[str, str | bytes | None] = {f"f{i}.txt": f"{i:04d}" * 50_000 for i in range(20)}
    sha = repo.commit(files)
    with GitTree(repo.path, sha, max_bytes=1 << 20) as tree:
        assert tree.read_many(sorted(files)) == files


def test_checkout_exports_a_revision_without_touching_the_repository(repo: Repo, tmp_path: Path) -> None:
    repo.write({"src/a.py": "A = 1\n", "run.sh": "#!/bin/sh\necho hi\n"})
    os.chmod(repo.path / "run.sh", 0o755)
    os.symlink("src/a.py", repo.path / "link.py")
    first = repo.commit({})
    repo.commit({"src/a.py": "A = 2\n", "later.txt": "later\n"})
    index_before = (repo.path / ".git" / "index").read_bytes()
    dest = tmp_path / "export"
    checkout(repo.path, first, dest)
    assert (dest / "src" / "a.py").read_text() == "A = 1\n"
    assert os.access(dest / "run.sh", os.X_OK)
    assert os.readlink(dest / "link.py") == "src/a.py"
    assert not (dest / "later.txt").exists()
    assert not (dest / ".git").exists()
    # The repository's own index, work tree and worktree list are unchanged.
    assert (repo.path / ".git" / "index").read_bytes() == index_before
    assert (repo.path / "src" / "a.py").read_text() == "A = 2\n"
    assert repo.git("worktree", "list").count("\n") == 0
    with pytest.raises(UsageError, match="not an empty directory"):
        checkout(repo.path, first, dest)


def test_gittree_missing_object_is_a_git_error_and_the_tree_recovers(repo: Repo) -> None:
    sha = repo.commit({f"f{i}.txt": f"content {i}\n" * 1000 for i in range(50)})
    blob = repo.git("rev-parse", f"{sha}:f7.txt")
    listed = GitTree(repo.path, sha)
    assert len(listed.paths()) == 50
    (repo.path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()  # damaged after the listing
    with pytest.raises(GitError, match=f"cannot read object {blob}"):
        listed.read_many([f"f{i}.txt" for i in range(50)])
    assert listed.read("f8.txt") == "content 8\n" * 1000  # a new cat-file process serves the rest
    listed.close()
    # Listed afresh, the file whose object is gone is left out of the tree and named as missing.
    fresh = GitTree(repo.path, sha)
    assert len(fresh.paths()) == 49 and "f7.txt" not in fresh.paths()
    assert fresh.missing() == ["f7.txt"]
    assert fresh.read("f7.txt") is None and fresh.read("f8.txt") == "content 8\n" * 1000
    fresh.close()


class _Trickle(io.BytesIO):
    """A stream that hands out a few bytes per read, like a slow pipe."""

    def __init__(self, data: bytes, step: int) -> None:
        super().__init__(data)
        self.step = step

    def read(self, size: int | None = -1) -> bytes:
        return super().read(self.step)


@pytest.mark.parametrize("step", [1, 5, 11, 64, 1 << 16])
def test_patch_sections_are_split_whatever_the_read_size(step: int) -> None:
    sections = [
        b"diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-diff --git x\n+diff --git y\n",
        b"diff --git a/b b/b\nnew file mode 100644\n",
        b"diff --git a/c b/c\n--- a/c\n+++ b/c\n@@ -1 +1 @@\n-c\n+d\n",
    ]
    assert list(_split_sections(_Trickle(b"".join(sections), step))) == sections


def test_bare_clone_serves_reads_and_checkout(repo: Repo, tmp_path: Path) -> None:
    # The GitHub worker keeps bare clones: nothing here may need a work tree.
    repo.write({"src/a.py": "A = 1\n"})
    sha = repo.commit({})
    bare = tmp_path / "bare.git"
    repo.git("clone", "-q", "--bare", str(repo.path), str(bare))
    assert resolve(bare, "main") == sha
    with GitTree(bare, sha) as tree:
        assert tree.read_many(["src/a.py"]) == {"src/a.py": "A = 1\n"}
    checkout(bare, sha, tmp_path / "out")
    assert (tmp_path / "out" / "src" / "a.py").read_text() == "A = 1\n"
    assert not (bare / "index").exists()  # the throw-away index stayed outside the repository


def test_gittree_reads_from_several_threads(repo: Repo) -> None:
    files: dict[str, str | bytes | None] = {f"m{i:03d}.py": f"X = {i}\n" * (200 + i) for i in range(120)}
    sha = repo.commit(files)
    results: list[dict[str, str | None]] = []
    with GitTree(repo.path, sha) as tree:
        workers = [
            threading.Thread(target=lambda k=k: results.append(tree.read_many(sorted(files)[k::4])))
            for k in range(4)
        ]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
    merged = {p: t for r in results for p, t in r.items()}
    assert merged == files
