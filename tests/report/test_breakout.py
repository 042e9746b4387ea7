"""Output that cannot be broken out of (issue 16, item 4), read back by a real CommonMark parser.

A pull request controls file names and code lines. Whatever they hold (backticks, `</details><img …>`,
a newline), the published markdown has only reviewbot's own HTML, every code span reads back as the
exact name (fenced by a backtick run longer than any inside it), and a newline in a name shows as `\\n`.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from reviewbot.change.diff import load_change
from reviewbot.example import build_example
from reviewbot.github.client import ApiError
from reviewbot.github.plan import InlineComment, PublicationPlan, ReviewPlan, fit_body
from reviewbot.github.publish import Published, _review
from reviewbot.model.messages import code_span, msg
from reviewbot.report import sanitize
from reviewbot.report.render import render_markdown
from reviewbot.review.pipeline import review_change
from tests.gitrepo import git

markdown_it = pytest.importorskip("markdown_it")

EVIL_DIR = "Evil`x`<"
EVIL_NAME = "details><img src=x onerror=alert(1)>\nline2.cc"
EVIL_PATH = f"rtp_llm/cpp/config/{EVIL_DIR}/{EVIL_NAME}"
EVIL_COMMENT = " // `` </details><img src=x> ` @someone #12"
# reviewbot's own HTML: the folds, the footer, the hidden state block.
OURS = re.compile(r"^(<details>|</details>|<summary>|</summary>|<sub>|</sub>|<!-- reviewbot[^>]*-->)$")


def _tokens(markdown: str) -> list[Any]:
    out: list[Any] = []

    def walk(tokens: list[Any]) -> None:
        for t in tokens:
            out.append(t)
            if t.children:
                walk(t.children)

    walk(markdown_it.MarkdownIt("commonmark").parse(markdown))
    return out


def _html(markdown: str) -> list[str]:
    """Every HTML tag the parser sees outside code, one per item."""
    tags: list[str] = []
    for t in _tokens(markdown):
        if t.type in ("html_inline", "html_block"):
            tags += [m.group() for m in re.finditer(r"<!--.*?-->|<[^>]*>", t.content, re.S)]
    return tags


def _spans(markdown: str) -> list[str]:
    return [t.content for t in _tokens(markdown) if t.type == "code_inline"]


def _foreign(markdown: str) -> list[str]:
    return [tag for tag in _html(markdown) if not OURS.match(tag)]


@pytest.fixture(scope="module")
def evil_report(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The example's round 1 with its file renamed to a hostile name and a hostile comment line."""
    ex = build_example(tmp_path_factory.mktemp("evil") / "pr1361")
    git(ex.path, "checkout", "-q", "-b", "evil", ex.round1)
    source = ex.path / "rtp_llm/cpp/config/ModelConfig.cc"
    text = source.read_text().replace(
        "config.need_rope_kv_cache = false;", "config.need_rope_kv_cache = false;" + EVIL_COMMENT
    )
    source.unlink()
    target = ex.path / EVIL_PATH
    target.parent.mkdir(parents=True)
    target.write_text(text)
    git(ex.path, "add", "-A")
    git(ex.path, "commit", "-q", "-m", "hostile names")
    change = load_change(ex.path, ex.base, git(ex.path, "rev-parse", "HEAD"))
    try:
        review = review_change(change)
    finally:
        change.close()
    assert any(f.path == EVIL_PATH for f in review.findings)
    return render_markdown(review, marker="<!-- reviewbot:state v1 x -->")


def test_a_hostile_file_name_and_code_line_add_no_html_to_the_report(evil_report: str) -> None:
    assert _foreign(evil_report) == []
    tags = _html(evil_report)
    assert tags.count("<details>") == tags.count("</details>") > 0
    # A newline in a name never starts a new line (a list item, a heading) of the report.
    assert "\nline2.cc" not in evil_report
    assert "@someone" not in evil_report and "#12" not in evil_report


def test_code_spans_read_back_as_the_exact_name_with_the_newline_escaped(evil_report: str) -> None:
    shown = EVIL_PATH.replace("\n", "\\n")
    spans = _spans(evil_report)
    assert f"{shown}:20" in spans  # the finding's place: one span, backticks and all
    assert any(s.startswith("config.need_rope_kv_cache = false; // ``") for s in spans)


@pytest.mark.parametrize(
    "name",
    ["a`b", "`x`", "``", "a ``` b", "</details><img src=x>", "x\ny", "` leading", "trailing `", "  "],
)
def test_a_name_in_a_catalogue_message_reads_back_exactly(name: str) -> None:
    title = msg("ineffective-test.title", name=name).render()
    assert code_span(name) in title
    rendered = sanitize.inline(title)
    assert _foreign(rendered) == []
    assert name.replace("\n", "\\n") in _spans(rendered)


def test_names_in_plain_text_and_cells_show_newlines_escaped() -> None:
    assert sanitize.plain("a\nb") == "a\\\\nb"  # markdown for the text a\nb
    assert sanitize.code_span("x\r\ny\u202e") == "`x\\r\\ny\\u202e`"
    rendered = sanitize.plain("</details><img src=x>\n- item")
    assert _foreign(rendered) == [] and [t.type for t in _tokens(rendered)].count("bullet_list_open") == 0


def test_a_cut_inside_a_long_fence_and_a_fold_closes_both() -> None:
    body = "intro\n<details><summary>x</summary>\n\n````python\n" + "a = '```'\n" * 400
    body += "````\n\n</details>\n<!-- reviewbot:state v1 abc -->\n"
    text, cut = fit_body(body, 1500, "(cut {n})")
    assert cut and len(text) <= 1500
    tokens = _tokens(text)
    assert any(t.type == "fence" and t.markup == "````" for t in tokens)
    paragraphs = [t.content for t in tokens if t.type == "inline"]
    assert any(p.startswith("(cut ") for p in paragraphs)  # the note is text, not code
    assert _html(text).count("<details>") == _html(text).count("</details>")
    assert "<!-- reviewbot:state v1 abc -->" in _html(text)


class _RefusingApi:
    """GitHub refusing the inline placement (422), then taking the review without comments."""

    def __init__(self) -> None:
        self.payloads: list[dict[str, Any]] = []

    def list_reviews(self, repo: str, pr: int) -> list[Any]:
        return []

    def get_pull(self, repo: str, pr: int) -> Any:  # asked after a 422: the head has not moved
        return type("Pull", (), {"head_sha": "c" * 40})()

    def create_review(self, repo: str, pr: int, payload: dict[str, Any], reconcile: Any = None) -> Any:
        self.payloads.append(payload)
        if payload["comments"]:
            raise ApiError("Pull request review thread line must be part of the diff", 422)
        return type("Info", (), {"id": 1})()


def test_the_places_github_refused_are_listed_as_code_spans() -> None:
    comment = InlineComment(EVIL_PATH, 20, "body", "fp")
    review = ReviewPlan("c" * 40, "Review body", (comment,))
    plan = PublicationPlan("acme/x", 7, "c" * 40, "", "create", None, review, None)  # type: ignore[arg-type]
    api = _RefusingApi()
    _review(api, plan, "reviewbot[bot]", Published())  # type: ignore[arg-type]
    body = api.payloads[-1]["body"]
    shown = EVIL_PATH.replace("\n", "\\n")
    assert _foreign(body) == [] and f"{shown}:20" in _spans(body)
