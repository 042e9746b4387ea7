"""load_change against real repositories: statuses, exact line numbers, skips, limits, merge base."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from reviewbot.change import diff
from reviewbot.change.diff import Limits, load_change
from reviewbot.errors import EnvironmentProblem, UsageError
from reviewbot.model.change import ChangeSet, FileStatus, SkipReason
from tests.gitrepo import Repo

BASE_TEXT = "".join(f"line {n}\n" for n in range(1, 21))


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return Repo(tmp_path / "repo")


@pytest.fixture
def opened() -> Iterator[list[ChangeSet]]:
    """ChangeSets to close after the test (their trees keep a git process)."""
    sets: list[ChangeSet] = []
    yield sets
    for cs in sets:
        cs.close()


def _load(
    opened: list[ChangeSet], repo: Repo, base: str, head: str, limits: Limits | None = None
) -> ChangeSet:
    cs = load_change(repo.path, base, head, limits or Limits())
    opened.append(cs)
    return cs


def test_modification_has_exact_added_and_removed_lines(repo: Repo, opened: list[ChangeSet]) -> None:
    base = repo.commit({"src/m.py": BASE_TEXT})
    lines = BASE_TEXT.splitlines()
    lines[2] = "line 3 changed"  # replace line 3
    del lines[4]  # remove line 5
    lines.insert(15, "inserted after old line 17")  # lands at head line 16
    head = repo.commit({"src/m.py": "\n".join(lines) + "\n"})
    cs = _load(opened, repo, base, head)
    assert (cs.base_sha, cs.head_sha, cs.merge_base) == (base, head, base)
    [f] = cs.files
    assert (f.path, f.old_path, f.status, f.skipped, f.binary) == (
        "src/m.py",
        "src/m.py",
        FileStatus.MODIFIED,
        None,
        False,
    )
    assert f.removed_lines == {3: "line 3", 5: "line 5"}
    assert f.added_lines == {3: "line 3 changed", 16: "inserted after old line 17"}
    assert f.base_text == BASE_TEXT
    assert f.head_text is not None and f.head_text.splitlines()[15] == "inserted after old line 17"
    assert [(h.source_start, h.source_length, h.target_start, h.target_length) for h in f.hunks] == [
        (1, 8, 1, 7),
        (14, 6, 13, 7),
    ]
    assert f.hunks[0].header == "@@ -1,8 +1,7 @@"
    assert cs.coverage == 1.0 and cs.notes == [] and not cs.diff_truncated
    assert cs.patch_bytes > 100


def test_addition_and_deletion(repo: Repo, opened: list[ChangeSet]) -> None:
    base = repo.commit({"old.py": "A = 1\nB = 2\n", "keep.py": "K = 0\n"})
    head = repo.commit({"old.py": None, "new.py": "N = 1\n"})
    cs = _load(opened, repo, base, head)
    added, deleted = cs.file("new.py"), cs.file("old.py")
    assert added is not None and deleted is not None
    assert (added.status, added.old_path, added.base_text, added.head_text) == (
        FileStatus.ADDED,
        None,
        None,
        "N = 1\n",
    )
    assert added.added_lines == {1: "N = 1"} and added.removed_lines == {}
    assert (deleted.status, deleted.old_path, deleted.base_text, deleted.head_text) == (
        FileStatus.DELETED,
        "old.py",
        "A = 1\nB = 2\n",
        None,
    )
    assert deleted.removed_lines == {1: "A = 1", 2: "B = 2"} and deleted.added_lines == {}
    assert cs.file("keep.py") is None


def test_pure_rename_and_rename_with_edits(repo: Repo, opened: list[ChangeSet]) -> None:
    base = repo.commit({"a/moved.py": BASE_TEXT, "b/edited.py": BASE_TEXT.replace("line", "row")})
    edited = BASE_TEXT.replace("line", "row").replace("row 10\n", "row ten\n")
    head = repo.commit(
        {"a/moved.py": None, "c/moved.py": BASE_TEXT, "b/edited.py": None, "d/edited.py": edited}
    )
    cs = _load(opened, repo, base, head)
    pure, changed = cs.file("c/moved.py"), cs.file("d/edited.py")
    assert pure is not None and changed is not None
    assert (pure.status, pure.old_path, pure.hunks) == (FileStatus.RENAMED, "a/moved.py", ())
    assert pure.base_text == pure.head_text == BASE_TEXT
    assert (changed.status, changed.old_path) == (FileStatus.RENAMED, "b/edited.py")
    assert changed.removed_lines == {10: "row 10"} and changed.added_lines == {10: "row ten"}
    assert changed.base_text == BASE_TEXT.replace("line", "row") and changed.head_text == edited
    assert len(cs.files) == 2


def test_binary_file_is_skipped_with_a_note(repo: Repo, opened: list[ChangeSet]) -> None:
    base = repo.commit({"ok.py": "X = 1\n"})
    head = repo.commit({"ok.py": "X = 2\n", "assets/logo.png": b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" * 10})
    cs = _load(opened, repo, base, head)
    png = cs.file("assets/logo.png")
    assert png is not None
    assert (png.binary, png.skipped, png.hunks, png.head_text) == (True, SkipReason.BINARY, (), None)
    assert [(n.reason, n.path, n.message) for n in cs.notes] == [
        (SkipReason.BINARY, "assets/logo.png", "assets/logo.png: binary file; not analysed")
    ]
    assert cs.coverage == 0.5


def test_a_latin1_word_is_read_as_replacement_characters_and_the_file_analysed(
    repo: Repo, opened: list[ChangeSet]
) -> None:
    base = repo.commit({"legacy/names.txt": "plain\n"})
    head = repo.commit({"legacy/names.txt": "café crème\n".encode("latin-1")})
    cs = _load(opened, repo, base, head)
    [f] = cs.files
    assert (f.skipped, f.binary, f.base_text, f.head_text) == (
        None,
        False,
        "plain\n",
        "caf\ufffd cr\ufffdme\n",
    )
    # The hunk shows the bytes the way the file's text does: one U+FFFD each, never a lone surrogate.
    assert f.added_lines == {1: "caf\ufffd cr\ufffdme"} and f.removed_lines == {1: "plain"}
    assert [(n.reason, n.path, n.message) for n in cs.notes] == [
        (
            SkipReason.REPLACED_BYTES,
            "legacy/names.txt",
            "legacy/names.txt: 2 byte(s) are not UTF-8 and were read as U+FFFD; analysed as decoded",
        )
    ]
    assert cs.coverage == 1.0


def test_a_mostly_undecodable_file_is_skipped_as_not_utf8(repo: Repo, opened: list[ChangeSet]) -> None:
    base = repo.commit({"legacy/names.txt": "plain\n"})
    head = repo.commit({"legacy/names.txt": bytes(range(0x80, 0x100)) * 4 + b"\n"})
    cs = _load(opened, repo, base, head)
    [f] = cs.files
    assert (f.skipped, f.binary, f.hunks, f.base_text, f.head_text) == (
        SkipReason.NON_UTF8,
        False,
        (),
        None,
        None,
    )
    assert cs.notes[0].message == "legacy/names.txt: not UTF-8 text; not analysed"
    assert cs.coverage == 0.0


def test_five_megabyte_file_is_too_large_and_never_diffed(repo: Repo, opened: list[ChangeSet]) -> None:
    base = repo.commit({"src/small.cc": "int a = 1;\n"})
    big = "".join(f"int generated_{i:07d} = {i:07d};\n" for i in range(5 * 1024 * 1024 // 33))
    assert 5 * 1024 * 1024 - 33 < len(big) <= 5 * 1024 * 1024
    head = repo.commit({"src/small.cc": "int a = 2;\n", "rtp_llm/gen/big.cc": big})
    cs = _load(opened, repo, base, head)
    f = cs.file("rtp_llm/gen/big.cc")
    assert f is not None
    assert (f.status, f.skipped, f.hunks, f.head_text) == (FileStatus.ADDED, SkipReason.TOO_LARGE, (), None)
    [note] = cs.notes
    assert note.path == "rtp_llm/gen/big.cc"
    assert note.message == "rtp_llm/gen/big.cc: 5.0 MB is over the 1.0 MB file limit; not analysed"
    assert cs.coverage == 0.5 < 1.0
    # The huge file never went through the diff, so it neither costs time nor eats the diff budget.
    assert cs.patch_bytes < 1000 and not cs.diff_truncated
    small = cs.file("src/small.cc")
    assert small is not None and small.added_lines == {1: "int a = 2;"}


def test_diff_over_the_byte_limit_is_cut_at_a_file_boundary(repo: Repo, opened: list[ChangeSet]) -> None:
    base = repo.commit({"keep.txt": "k\n"})
    files: dict[str, str | bytes | None] = {
        f"f{i}.py": "".join(f"v{i}_{j} = {j}\n" for j in range(100)) for i in range(6)
    }
    head = repo.commit(files)
    full = _load(opened, repo, base, head)
    assert [f.path for f in full.files] == [f"f{i}.py" for i in range(6)] and full.coverage == 1.0
    section = full.patch_bytes // 6
    cs = _load(opened, repo, base, head, Limits(max_diff_bytes=section * 2 + section // 2))
    assert cs.diff_truncated
    assert [f.path for f in cs.files] == ["f0.py", "f1.py"]
    assert all(f.skipped is None and len(f.added_lines) == 100 for f in cs.files)  # whole files only
    assert cs.files_left_out == 4
    assert cs.patch_bytes == full.patch_bytes  # the full size is still known
    [note] = cs.notes
    assert note.reason is SkipReason.TRUNCATED
    assert "over the" in note.message and "diff limit" in note.message
    assert "4 of 6 changed files were left out (from f2.py on)" in note.message
    assert cs.coverage == round(2 / 6, 4)


def test_diff_over_the_line_and_file_limits(repo: Repo, opened: list[ChangeSet]) -> None:
    base = repo.commit({"keep.txt": "k\n"})
    head = repo.commit({f"f{i}.py": "x = 1\n" * 50 for i in range(5)})
    by_lines = _load(opened, repo, base, head, Limits(max_diff_lines=130))
    assert [f.path for f in by_lines.files] == ["f0.py", "f1.py"] and by_lines.diff_truncated
    assert (
        "lines, over the 130-line diff limit, so 3 of 5 changed files were left out"
        in by_lines.notes[0].message
    )
    by_files = _load(opened, repo, base, head, Limits(max_files=3))
    assert [f.path for f in by_files.files] == ["f0.py", "f1.py", "f2.py"] and by_files.diff_truncated
    assert by_files.notes[0].message == (
        "the change has 5 files, over the 3-file limit, so 2 of 5 changed files were left out (from f3.py on)"
    )
    assert by_files.coverage == 0.6


def test_base_branch_moving_on_does_not_leak_into_the_change(repo: Repo, opened: list[ChangeSet]) -> None:
    fork = repo.commit({"shared.py": BASE_TEXT, "main_only.py": "M = 0\n"})
    repo.checkout("pr", create=True)
    head = repo.commit({"shared.py": BASE_TEXT.replace("line 2\n", "line two\n")})
    repo.checkout("main")
    # main moves on after the PR branched: edits the same file elsewhere and another file.
    repo.commit({"shared.py": BASE_TEXT.replace("line 19\n", "line nineteen\n"), "main_only.py": "M = 1\n"})
    cs = _load(opened, repo, "main", "pr")
    assert cs.merge_base == fork and cs.head_sha == head and cs.base_sha != fork
    [f] = cs.files
    assert f.path == "shared.py"
    assert f.added_lines == {2: "line two"} and f.removed_lines == {2: "line 2"}
    assert f.base_text == BASE_TEXT  # the text at the merge base, not at main's tip


def test_symlinks_and_trees_for_the_whole_repository(repo: Repo, opened: list[ChangeSet]) -> None:
    base = repo.commit({"lib/util.py": "U = 1\n", "app.py": "A = 1\n"})
    os.symlink("lib/util.py", repo.path / "alias.py")
    head = repo.commit({"app.py": "A = 2\n"})
    cs = _load(opened, repo, base, head)
    alias = cs.file("alias.py")
    assert alias is not None and alias.skipped is SkipReason.UNAVAILABLE
    assert cs.notes[0].message == "alias.py: symbolic link; not analysed"
    assert cs.head_tree is not None and cs.base_tree is not None
    assert cs.head_tree.read("lib/util.py") == "U = 1\n"  # an unchanged file, read from head
    assert cs.base_tree.read("app.py") == "A = 1\n"
    assert "alias.py" not in cs.head_tree.paths()


def test_no_change_and_errors(repo: Repo, opened: list[ChangeSet], tmp_path: Path) -> None:
    sha = repo.commit({"a.py": "A = 1\n"})
    cs = _load(opened, repo, sha, sha)
    assert (cs.files, cs.notes, cs.coverage, cs.patch_bytes) == ([], [], 1.0, 0)
    with pytest.raises(EnvironmentProblem, match="unknown revision: feature/missing"):
        load_change(repo.path, "main", "feature/missing")
    with pytest.raises(EnvironmentProblem, match="not a git repository"):
        load_change(tmp_path, "main", "main")
    with pytest.raises(UsageError, match="max_files"):
        Limits(max_files=0)


def test_skipped_files_are_filtered_when_pathspecs_would_be_too_long(
    repo: Repo, opened: list[ChangeSet], monkeypatch: pytest.MonkeyPatch
) -> None:
    # With very many skipped files load_change does not narrow `git diff` by pathspecs but drops
    # their sections from the stream; both ways must give the same ChangeSet.
    base = repo.commit({"keep.txt": "k\n"})
    head = repo.commit(
        {
            "a.py": "A = 1\n",
            "big.py": "x\n" * 3000,
            "m.py": "M = 1\n",
            "z1.py": "Z = 1\n",
            "z2.py": "Z = 2\n",
            "0.json": "{}\n",
        }
    )
    limits = Limits(max_file_bytes=1000, max_files=5)
    narrowed = _load(opened, repo, base, head, limits)
    monkeypatch.setattr(diff, "_MAX_PATHSPEC_CHARS", 0)
    filtered = _load(opened, repo, base, head, limits)
    for cs in (narrowed, filtered):
        # The file limit keeps sources first (reviewbot.change.select): a data file is left out
        # (`0.json`; by path order it would have been `z2.py`); the kept files stay in path order.
        assert [(f.path, f.skipped) for f in cs.files] == [
            ("a.py", None),
            ("big.py", SkipReason.TOO_LARGE),
            ("m.py", None),
            ("z1.py", None),
            ("z2.py", None),
        ]
        assert cs.files_left_out == 1 and cs.diff_truncated and cs.left_out == ("0.json",)
        assert [n.reason for n in cs.notes] == [SkipReason.TOO_LARGE, SkipReason.TRUNCATED]
    assert narrowed.files == filtered.files
    assert narrowed.patch_bytes == filtered.patch_bytes


def test_a_long_diff_streams_intact_across_read_blocks(repo: Repo, opened: list[ChangeSet]) -> None:
    # ~300 KB of diff: file sections straddle the 64 KiB blocks git's output is read in.
    old = {f"pkg/m{i:03d}.py": "".join(f"a{j} = {j}\n" for j in range(40)) for i in range(250)}
    new = {f"pkg/m{i:03d}.py": "".join(f"a{j} = {j} + {i}\n" for j in range(40)) for i in range(250)}
    base = repo.commit(dict(old))
    head = repo.commit(dict(new))
    cs = _load(opened, repo, base, head)
    assert cs.patch_bytes > 256 * 1024 and not cs.diff_truncated
    assert [f.path for f in cs.files] == sorted(new)
    for f in cs.files:
        i = int(f.path[5:8])
        assert f.added_lines == {j + 1: f"a{j} = {j} + {i}" for j in range(40)}
        assert f.removed_lines == {j + 1: f"a{j} = {j}" for j in range(40)}
