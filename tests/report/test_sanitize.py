from __future__ import annotations

import re

import pytest
from markupsafe import Markup

from reviewbot.report import sanitize, templating
from reviewbot.report.templating import chrome

EVIL = "</details><img src=x onerror=alert(1)> [click](https://evil.example) *bold* __init__ ~~gone~~ @someone #12 <!-- x -->"


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
    assert sanitize.cell("a|b\nc") == "a\\|b\\\\nc"  # the newline shows as a visible `\n`


@pytest.mark.parametrize("content", ["a", "a`b", "a ``` b", "`starts", "ends`", " padded ", "x = `y`;"])
def test_a_code_span_is_fenced_by_a_longer_run_and_reads_back_exactly(content: str) -> None:
    span = sanitize.code_span(content)
    longest = max((len(m) for m in re.findall(r"`+", content)), default=0)
    assert span.startswith("`" * (longest + 1)) and not span.startswith("`" * (longest + 2))
    assert sanitize.segments(span) == [sanitize.Segment(content, code=True)]


def test_a_fenced_block_outgrows_every_backtick_run_inside_it() -> None:
    block = sanitize.fence_block("def f():\n    '''````\n````'''\n", "py thon;")
    first, *_, last = block.split("\n")
    assert first == "`````python" and last == "`````"
    assert "@pytest.mark" in sanitize.fence_block("@pytest.mark.parametrize")  # code stays pasteable
    assert "-->" not in sanitize.fence_block("x --> y")


def test_inline_keeps_rule_code_spans_and_escapes_everything_else() -> None:
    out = sanitize.inline(f"`cfg.x = 1` is overridden by {EVIL} (`a | b`)")
    assert out.startswith("`cfg.x = 1` is overridden by ") and out.endswith("(`a | b`)")
    for raw in (
        "</details>",
        "<img",
        "[click](",
        "*bold*",
        "__init__",
        "~~",
        "@someone",
        "#12",
        "<!--",
        "-->",
    ):
        assert raw not in out, raw
    assert "&lt;/details>" in out and "\\_\\_init\\_\\_" in out and "[click\\](" in out
    # Identifiers, arrows and bracketed labels stay readable.
    assert sanitize.inline("use_kvcache -> [6.1] rtp_llm/x_y.py:3") == "use_kvcache -> [6.1] rtp_llm/x_y.py:3"


def test_a_code_span_with_backticks_inside_cannot_break_out() -> None:
    nasty = "x = 1; // ` </details> @someone ``"
    out = sanitize.inline(f"The predicate {sanitize.code_span(nasty)} is written twice")
    assert sanitize.segments(out)[1] == sanitize.Segment(nasty.replace("@", "@" + sanitize.ZWJ), code=True)
    assert out.endswith(" is written twice")


def test_shorten_cuts_at_a_word_or_inside_a_span_and_keeps_spans_closed() -> None:
    title = "The new derivation `config.need_rope_kv_cache = False` in `getAttentionConfigs` has no test"
    assert sanitize.inline(title, 160) == title
    cut = sanitize.inline(title, 40)
    assert cut == "The new derivation `config.need_rope_k…`" and len(cut) <= 40
    assert sanitize.inline("word " * 50, 30) == "word word word word word…"


def test_every_template_expression_is_sanitised_unless_marked_safe() -> None:
    env = templating._env()  # the environment the report uses
    assert env.autoescape is True or callable(env.autoescape)
    out = env.from_string("{{ evil }} | {{ evil | code }} | {{ safe }}").render(
        evil=EVIL, safe=Markup("**ours**")
    )
    plain, code, ours = out.split(" | ")
    assert "</details>" not in plain and "<img" not in plain and "@someone" not in plain
    assert code.startswith("`") and "</details>" in code  # literal inside a code span
    assert ours == "**ours**"


def test_chrome_is_ours_but_its_arguments_are_not() -> None:
    t = chrome("en")
    assert t("title_pr", pr=12, round=2, status="LGTM") == "PR #12 round 2 review — LGTM"  # our own #12 links
    assert "<img" not in t("tests_not_run", reason=EVIL) and "@someone" not in t("tests_not_run", reason=EVIL)
