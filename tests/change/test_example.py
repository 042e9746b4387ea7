"""load_change on the bundled example (examples/pr1361): the change the seed review reviewed."""

from __future__ import annotations

from pathlib import Path

from reviewbot.change.diff import load_change
from reviewbot.change.git import changed_paths
from reviewbot.example import build_example
from reviewbot.model.change import FileStatus

PATH = "rtp_llm/cpp/config/ModelConfig.cc"


def test_round1_changes_only_model_config(tmp_path: Path) -> None:
    ex = build_example(tmp_path / "pr1361")
    cs = load_change(ex.path, ex.base, ex.round1)
    try:
        assert (cs.base_sha, cs.head_sha, cs.merge_base) == (ex.base, ex.round1, ex.base)
        assert [f.path for f in cs.files] == [PATH]
        [f] = cs.files
        assert (f.status, f.old_path, f.skipped) == (FileStatus.MODIFIED, PATH, None)
        assert cs.coverage == 1.0 and cs.notes == [] and not cs.diff_truncated
        blank, logic = f.hunks
        # The first hunk only deletes a blank line near the top of the file.
        assert blank.source_start < 10 and blank.whitespace_only
        assert blank.added == () and [t for _, t in blank.removed] == [""]
        assert not logic.whitespace_only and logic.removed == ()
        added = dict(logic.added)
        guard = [
            n
            for n, t in added.items()
            if "if (config.rope_config.style == RopeStyle::No && !use_kvcache)" in t
        ]
        assert len(guard) == 1
        assert added[guard[0] + 1].strip() == "config.need_rope_kv_cache = false;"
        assert f.head_text is not None and f.base_text is not None
        head_lines = f.head_text.splitlines()
        # Line numbers point into the head text; removed ones into the merge-base text.
        assert all(head_lines[n - 1] == t for n, t in f.added_lines.items())
        base_lines = f.base_text.splitlines()
        assert all(base_lines[n - 1] == t for n, t in f.removed_lines.items())
        assert cs.head_tree is not None and PATH in cs.head_tree.paths()
    finally:
        cs.close()


def test_round2_adds_tests_on_top(tmp_path: Path) -> None:
    ex = build_example(tmp_path / "pr1361")
    cs = load_change(ex.path, ex.base, ex.round2)
    try:
        statuses = {f.path: f.status for f in cs.files}
        assert statuses[PATH] is FileStatus.MODIFIED
        new = sorted(p for p, s in statuses.items() if s is FileStatus.ADDED)
        assert new and all("test" in p for p in new)
        # Between rounds only the new test files changed.
        assert changed_paths(ex.path, ex.round1, ex.round2) == new
    finally:
        cs.close()
