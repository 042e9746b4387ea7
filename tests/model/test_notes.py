"""Notes carry a catalogue message: English in `message` (JSON, logs), any language in the report."""

from __future__ import annotations

from reviewbot.change.notes import skip_note, unparsable_note
from reviewbot.model.change import Note, SkipReason
from reviewbot.model.messages import msg
from reviewbot.model.review import ChecklistResult, Review, Status
from reviewbot.report.comment import render_markdown


def test_skip_notes_keep_their_english_sentence_and_say_it_in_chinese() -> None:
    note = skip_note("big.bin", SkipReason.TOO_LARGE, size=3 * 1024 * 1024, limit=1024 * 1024)
    assert note.message == "big.bin: 3.0 MB is over the 1.0 MB file limit; not analysed"
    assert note.localized("en") == note.message
    assert note.localized("zh") == "big.bin：大小 3.0 MB，超过 1.0 MB 的单文件上限，未分析"
    assert skip_note("a.png", SkipReason.BINARY).localized("zh") == "a.png：二进制文件，未分析"
    assert "无法解析" in unparsable_note(None, "bad hunk").localized("zh")


def test_a_note_without_a_message_shows_its_text_and_equality_ignores_the_message() -> None:
    plain = Note(SkipReason.UNAVAILABLE, "as written")
    assert plain.localized("zh") == "as written"
    assert Note.of(SkipReason.UNAVAILABLE, msg("note.no-tree")) == Note(
        SkipReason.UNAVAILABLE, msg("note.no-tree").render("en")
    )


def test_the_report_says_its_notes_in_the_report_language() -> None:
    review = Review(
        status=Status.INCOMPLETE,
        base_sha="b" * 40,
        head_sha="c" * 40,
        merge_base="b" * 40,
        reviewed_at="2026-01-01 00:00 UTC",
        findings=[],
        checklist=ChecklistResult(),
        strengths=[],
        notes=[
            skip_note("a.png", SkipReason.BINARY),
            Note.of(SkipReason.UNAVAILABLE, msg("note.no-sandbox")),
        ],
        kpi={"coverage": 0.5},
    )
    zh = render_markdown(review, "zh")
    assert "a.png：二进制文件，未分析" in zh
    assert "测试在没有沙箱的情况下运行" in zh
    assert "binary file" not in zh
    assert "a.png: binary file; not analysed" in render_markdown(review, "en")
