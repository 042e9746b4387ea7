from __future__ import annotations

from reviewbot.report import sanitize


def test_mentions_and_references_do_not_ping() -> None:
    out = sanitize.text("ask @someone and @org/team about #123 and GH-7, mail a@b.c")
    assert "@someone" not in out and "@org/team" not in out
    assert "#123" not in out and "GH-7" not in out
    assert out.replace(sanitize.ZWJ, "") == "ask @someone and @org/team about #123 and GH-7, mail a@b.c"


def test_comment_markers_cannot_open_or_close_a_hidden_block() -> None:
    out = sanitize.text("x --> y <!-- z --!>")
    assert "-->" not in out and "<!--" not in out and "--!>" not in out


def test_code_span_and_fence_and_cell() -> None:
    assert "`" not in sanitize.code("a `b` c")
    fenced = sanitize.fence("line\n```\nescaped")
    assert "\n```" not in fenced
    assert sanitize.cell("a|b\nc") == "a\\|b c"
