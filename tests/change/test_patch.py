"""parse_patch on its own: golden files, malformed input, GitHub per-file patches.

Golden files: tests/change/golden/NAME.diff is parsed and compared with NAME.json. After a
deliberate parser change, regenerate with `REGEN_GOLDEN=1 python3 -m pytest tests/change/test_patch.py`
and read the JSON diff before committing it.
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import asdict
from enum import Enum
from pathlib import Path

import pytest

from reviewbot.change.diff import parse_patch
from reviewbot.model.change import ChangedFile, ChangeSet, FileStatus, Note, SkipReason

GOLDEN = Path(__file__).parent / "golden"
DIFFS = sorted(GOLDEN.glob("*.diff"))


def render(files: list[ChangedFile], notes: list[Note]) -> str:
    def plain(value: object) -> object:
        if isinstance(value, Enum):
            return value.value
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [plain(v) for v in value]
        return value

    rendered_files = []
    for f in files:
        data = asdict(f)
        # "line: text" strings keep the golden files short enough to review by eye.
        for hunk in data["hunks"]:
            hunk["added"] = [f"{n}: {t}" for n, t in hunk["added"]]
            hunk["removed"] = [f"{n}: {t}" for n, t in hunk["removed"]]
        rendered_files.append(plain(data))
    # A note's catalogue `text` says `message` in other languages (tests/model/test_notes.py); not golden here.
    shown = [{k: v for k, v in asdict(n).items() if k != "text"} for n in notes]
    data = {"files": rendered_files, "notes": [plain(n) for n in shown]}
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


@pytest.mark.parametrize("diff", DIFFS, ids=[d.stem for d in DIFFS])
def test_golden(diff: Path) -> None:
    files, notes = parse_patch(diff.read_text(encoding="utf-8"))
    rendered = render(files, notes)
    expected = diff.with_suffix(".json")
    if os.environ.get("REGEN_GOLDEN"):
        expected.write_text(rendered, encoding="utf-8")
    assert expected.exists(), f"no golden output for {diff.name}; run with REGEN_GOLDEN=1 and review it"
    assert rendered == expected.read_text(encoding="utf-8")


def test_golden_set_is_complete() -> None:
    assert len(DIFFS) >= 4
    assert sorted(GOLDEN.glob("*.json")) == [d.with_suffix(".json") for d in DIFFS]


def test_golden_statuses_at_a_glance() -> None:
    files, notes = parse_patch((GOLDEN / "rename_mode_delete.diff").read_text())
    assert [(f.path, f.old_path, f.status) for f in files] == [
        ("edited_new.py", "edited_old.py", FileStatus.RENAMED),
        ("pkg/moved.py", "moved.py", FileStatus.RENAMED),
        ("removed.py", "removed.py", FileStatus.DELETED),
        ("script.sh", "script.sh", FileStatus.MODIFIED),
    ]
    assert files[0].added_lines == {6: "y5 = 50"} and files[0].removed_lines == {6: "y5 = 5"}
    assert files[1].hunks == () and files[3].hunks == ()
    assert files[2].removed_lines == {1: "old content", 2: "line two"}
    assert notes == []


@pytest.mark.parametrize(
    "garbage",
    [
        "hello world\nthis is not a diff\n",
        "@@ -1,3 +1,3 @@\n-a\n+b\n",
        "--- a/x\n+++ b/x\n@@ -1,9 +1,9 @@\n-only one line\n",
        "+++ b/x\n--- a/x\n",
        "\\ No newline at end of file\n",
        "diff --git \n@@ -1 +1 @@\n-a\n+b\n",
        "\0\1\2binary junk\xff\n",
    ],
)
def test_garbage_never_raises_and_gives_zero_coverage(garbage: str) -> None:
    files, notes = parse_patch(garbage)
    assert files == [] or all(f.skipped is SkipReason.UNPARSABLE_DIFF for f in files)
    assert notes and all(n.reason is SkipReason.UNPARSABLE_DIFF for n in notes)
    cs = ChangeSet("b", "h", "m", files, len(garbage), notes=notes)
    assert cs.coverage == 0.0


def test_empty_text_is_an_empty_change() -> None:
    assert parse_patch("") == ([], [])


def test_malformed_sections_do_not_take_the_others_with_them() -> None:
    files, notes = parse_patch((GOLDEN / "malformed.diff").read_text())
    assert [(f.path, f.skipped) for f in files] == [
        ("good.py", None),
        ("short_hunk.py", SkipReason.UNPARSABLE_DIFF),
        ("stray_text.py", SkipReason.UNPARSABLE_DIFF),
        ("after.py", None),
    ]
    assert [n.path for n in notes] == ["short_hunk.py", "stray_text.py"]
    assert "Hunk is shorter than expected" in notes[0].message
    assert "this line belongs to no hunk" in notes[1].message
    cs = ChangeSet("b", "h", "m", files, 0, notes=notes)
    assert cs.coverage == 0.5


def test_every_truncation_of_a_real_diff_parses_or_says_why() -> None:
    # A diff cut anywhere (a broken download, a size cap upstream) must never raise.
    for diff in DIFFS:
        text = diff.read_text()
        for cut in range(len(text)):
            files, notes = parse_patch(text[:cut])
            for f in files:
                assert f.skipped is None or any(n.path == f.path for n in notes)


def test_random_noise_never_raises() -> None:
    rng = random.Random(1361)
    alphabet = "+- @\\\n\tadfgi/01,diff --git a/x b/x\n@@ -1,2 +1,2 @@\n"
    for _ in range(500):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 200)))
        files, notes = parse_patch(text)
        assert isinstance(files, list) and isinstance(notes, list)


def test_no_newline_at_end_of_file_and_crlf() -> None:
    files, notes = parse_patch((GOLDEN / "modify.diff").read_text())
    tail = files[1]
    assert (tail.removed_lines, tail.added_lines) == ({3: "gamma"}, {3: "delta"})
    crlf = "diff --git a/w.txt b/w.txt\n--- a/w.txt\n+++ b/w.txt\n@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\r\n"
    [f], notes = parse_patch(crlf)
    assert (f.removed_lines, f.added_lines, notes) == ({2: "b"}, {2: "c"}, [])


def test_plain_unified_diff_without_git_headers() -> None:
    text = (
        "--- a/src/x.c\t2026-01-01 00:00:00\n+++ b/src/x.c\t2026-01-02 00:00:00\n@@ -1,2 +1,3 @@\n"
        " int a;\n+int b;\n int c;\n--- /dev/null\n+++ b/src/new.c\n@@ -0,0 +1 @@\n+int n;\n"
    )
    files, notes = parse_patch(text)
    assert [(f.path, f.old_path, f.status) for f in files] == [
        ("src/x.c", "src/x.c", FileStatus.MODIFIED),
        ("src/new.c", None, FileStatus.ADDED),
    ]
    assert files[0].added_lines == {2: "int b;"} and files[1].added_lines == {1: "int n;"}
    assert notes == []


def test_format_patch_mail_with_preamble_and_signature() -> None:
    mail = (
        "From 0123 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] fix\n\n---\n a.py | 2 +-\n\n"
        "diff --git a/a.py b/a.py\nindex 1..2 100644\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
        "-- \n2.39.5\n\n"
    )
    [f], notes = parse_patch(mail)
    assert (f.path, f.added_lines, f.removed_lines, notes) == ("a.py", {1: "x = 2"}, {1: "x = 1"}, [])


def test_github_per_file_patch() -> None:
    hunks = "@@ -1,3 +1,3 @@ def f():\n a = 1\n-b = 2\n+b = 3\n c = 4"
    [f], notes = parse_patch(hunks, path="pkg/new.py", old_path="pkg/old.py", status=FileStatus.RENAMED)
    assert (f.path, f.old_path, f.status, notes) == ("pkg/new.py", "pkg/old.py", FileStatus.RENAMED, [])
    assert (f.removed_lines, f.added_lines) == ({2: "b = 2"}, {2: "b = 3"})
    assert f.hunks[0].header == "@@ -1,3 +1,3 @@ def f():"
    [added], _ = parse_patch("@@ -0,0 +1,2 @@\n+x\n+y", path="n.py", status=FileStatus.ADDED)
    assert (added.old_path, added.status, added.added_lines) == (None, FileStatus.ADDED, {1: "x", 2: "y"})
    [modified], _ = parse_patch("@@ -2 +2 @@\n-p\n+q", path="m.py")
    assert (modified.old_path, modified.status, modified.added_lines) == (
        "m.py",
        FileStatus.MODIFIED,
        {2: "q"},
    )
    [renamed], none = parse_patch("", path="r2.py", old_path="r1.py", status=FileStatus.RENAMED)
    assert (renamed.hunks, renamed.skipped, none) == ((), None, [])
    sql = "@@ -1,2 +1,2 @@\n--- old comment\n+-- new comment\n select 1;\n"
    [query], none = parse_patch(sql, path="q.sql")
    assert (query.removed_lines, query.added_lines, none) == (
        {1: "-- old comment"},
        {1: "-- new comment"},
        [],
    )
    [broken], [note] = parse_patch("@@ -1,4 +1,4 @@\n-a\n", path="bad.py")
    assert (broken.skipped, note.path, note.reason) == (
        SkipReason.UNPARSABLE_DIFF,
        "bad.py",
        SkipReason.UNPARSABLE_DIFF,
    )


def test_symlink_section_is_not_analysed() -> None:
    text = (
        "diff --git a/l b/l\nindex 1..2 120000\n--- a/l\n+++ b/l\n@@ -1 +1 @@\n"
        "-x\n\\ No newline at end of file\n+y\n"
    )
    [f], [note] = parse_patch(text)
    assert (f.skipped, note.message) == (SkipReason.UNAVAILABLE, "l: symbolic link; not analysed")
