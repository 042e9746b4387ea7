"""The round-history page's HTML without a browser: what it holds, what it refuses, the CLI's errors."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from reviewbot import cli
from reviewbot.report.history_html import render_history_html
from reviewbot.report.history_page import PageFinding, PageRound, PrHistory, dismissal_of


def table(target: str, head: str) -> dict[str, Any]:
    rows = [
        {"inputs": {"a": True}, "base": "keeps input", "head": head, "changed": head != "keeps input"},
        {"inputs": {"a": False}, "base": "keeps input", "head": "keeps input", "changed": False},
    ]
    changed = sum(1 for r in rows if r["changed"])
    return {
        "target": target,
        "function": "f",
        "path": "cfg.py",
        "line": 3,
        "inputs": [{"name": "a"}],
        "rows": rows,
        "row_count": 2,
        "changed_rows": changed,
        "truncated": False,
    }


def finding(fp: str, state: str, **data: Any) -> PageFinding:
    return PageFinding.of(
        fingerprint=fp,
        rule="missing-tests",
        severity="P1",
        path="cfg.py",
        line=3,
        title="`x` has no test",
        state=state,
        fixed_in="c" * 40 if state == "fixed" else None,
        data=data,
    )


def round_(k: int, findings: tuple[PageFinding, ...], tables: tuple[dict[str, Any], ...]) -> PageRound:
    return PageRound(k, f"{k}" * 40, "b" * 40, "LGTM", {"P1": 1}, "t", k == 1, False, findings, tables)


class Elements(HTMLParser):
    """Tags and ids of a document, and every attribute that could load something."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.ids: list[str] = []
        self.loads: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for name, value in attrs:
            if name == "id" and value:
                self.ids.append(value)
            if name in ("src", "srcset", "data") or (name == "href" and tag == "link"):
                self.loads.append((tag, value or ""))


def parsed(html: str) -> Elements:
    p = Elements()
    p.feed(html)
    return p


def test_a_self_contained_document_with_unique_linkable_ids() -> None:
    h = PrHistory(
        "acme/x",
        5,
        (
            round_(1, (finding("aaaa000011112222", "new"),), (table("t.one", "false"), table("t.gone", "1"))),
            round_(2, (finding("aaaa000011112222", "fixed"),), (table("t.one", "true"), table("t.new", "2"))),
        ),
    )
    html = render_history_html(h, "en")
    doc = parsed(html)
    assert doc.loads == [] and "script" not in doc.tags and "link" not in doc.tags
    assert '<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;' in html
    assert len(doc.ids) == len(set(doc.ids))  # every id once: a fingerprint links to one place
    assert {"round-1", "round-2", "r1-aaaa000011112222", "r2-aaaa000011112222", "aaaa000011112222"} <= set(
        doc.ids
    )
    # How each round's tables compare with the round before.
    changes = [(c.table["target"], c.since_previous) for c in h.table_changes(2)[0]]
    assert changes == [("t.one", "changed"), ("t.new", "added")]
    assert h.table_changes(2)[1] == ["cfg.py::f::t.gone"]
    assert [(c.table["target"], c.since_previous) for c in h.table_changes(1)[0]] == [
        ("t.one", "first"),
        ("t.gone", "first"),
    ]
    assert "No longer changed by the PR (no table this round): cfg.py::f::t.gone" in html
    life = h.lives()[0]
    assert (life.first_round, life.last_round, life.states) == (1, 2, ((1, "new"), (2, "fixed")))


def test_untrusted_text_is_escaped_in_the_source() -> None:
    evil = '<script>alert(1)</script>"><img src=x onerror=alert(2)>\u202e'
    f = PageFinding.of(
        fingerprint="f" * 16,
        rule="r",
        severity="P2",
        path=evil,
        line=1,
        title=evil,
        state="new",
        fixed_in=None,
        data={"evidence": [evil], "suggestion": evil},
    )
    html = render_history_html(PrHistory("o/r", 1, (round_(1, (f,), ()),)), "zh")
    doc = parsed(html)
    assert "script" not in doc.tags and "img" not in doc.tags and doc.loads == []
    assert "\u202e" not in html and "\\u202e" in html
    assert html.count("&lt;script&gt;alert(1)&lt;/script&gt;") == 6  # title x2, path x2, evidence, suggestion


@pytest.mark.parametrize(
    ("state", "data", "shown"),
    [
        ("still_open", {"dismissal": {"reason": "by design", "by": "bob", "at": "2026-12-01"}}, "dismissed"),
        ("still_open", {"extra": {"dismissed_reason": "by design", "dismissed_by": "bob"}}, "dismissed"),
        ("dismissed", {}, "dismissed"),
        ("fixed", {"dismissal": {"reason": "by design"}}, "fixed"),  # the fix is the newer fact
        ("still_open", {}, "still_open"),
    ],
)
def test_dismissals_as_stored(state: str, data: dict[str, Any], shown: str) -> None:
    f = finding("d" * 16, state, **data)
    assert f.state == shown
    assert (f.dismissal is not None) == (dismissal_of(state, data) is not None)
    html = render_history_html(PrHistory("o/r", 1, (round_(1, (f,), ()),)), "en")
    if shown == "dismissed":
        reason = "reason: by design" if data else "no reason recorded"
        assert reason in html and 'data-group="dismissed"' in html
        assert ("dismissed by bob" in html) == bool(data)


def test_every_page_text_in_both_languages() -> None:
    from reviewbot.report.history_html import _strings

    strings = _strings()
    assert set(strings["en"]) == set(strings["zh"])
    for key, text in strings["en"].items():
        assert set(re.findall(r"{(\w+)}", text)) == set(re.findall(r"{(\w+)}", strings["zh"][key])), key


def test_cli_errors_write_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = f"sqlite:///{tmp_path / 'rounds.sqlite3'}"
    base = ["rounds", "--pr", "7", "--repo", "acme/x", "--db", db]
    out = tmp_path / "page.html"
    cases = [
        ([*base, "--html", str(out)], "acme/x PR #7 has no rounds recorded in"),
        ([*base, "--html", str(out), "--round", "1"], "leave out --round and --format"),
        ([*base, "--html", str(tmp_path / "missing" / "p.html")], "does not exist"),
        ([*base, "--html", str(tmp_path)], "is a directory"),
    ]
    for argv, message in cases:
        capsys.readouterr()
        assert cli.main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("reviewbot: ") and message in err and err.count("\n") == 1, err
    assert not out.exists()


def test_a_failed_head_run_shows_its_command_exit_code_and_output() -> None:
    tail = "collected 3 items\nE   assert 1 == 2\n\x1b[31mFAILED\x1b[0m test_cfg.py::test_x <b>"
    tests = {
        "ran": 3,
        "passed": 2,
        "failed": 1,
        "exit_code": 1,
        "command": "make test",
        "head_failure": {"command": "make test", "exit_code": 1, "timed_out": False, "output_tail": tail},
    }
    rnd = PageRound(1, "a" * 40, "b" * 40, "INCOMPLETE", {}, "t", True, False, (), (), tests)
    html = render_history_html(PrHistory("o/r", 1, (rnd,)), "en")
    assert "The test command failed on the unmodified head (exit code 1)" in html
    pre = html.split('<pre class="tail">', 1)[1].split("</pre>", 1)[0]
    assert pre.split("\n") == [
        "collected 3 items",
        "E   assert 1 == 2",
        "\\x1b[31mFAILED\\x1b[0m test_cfg.py::test_x &lt;b&gt;",
    ]
    zh = render_history_html(PrHistory("o/r", 1, (rnd,)), "zh")
    assert "测试命令在未修改的 head 上失败（退出码 1）" in zh


def test_finding_sentences_in_the_page_language() -> None:
    zh = {"zh": {"title": "`x` 没有测试", "evidence": ["证据"], "suggestion": "补一个测试"}}
    h = PrHistory(
        "o/r",
        1,
        (
            round_(1, (finding("e" * 16, "new", localized=zh, evidence=["proof"]),), ()),
            # Closed in round 2: stored from round 1's record, without the other languages.
            round_(2, (finding("e" * 16, "fixed", evidence=["proof"]),), ()),
        ),
    )
    page = render_history_html(h, "zh")
    assert page.count("<code>x</code> 没有测试") == 3  # round 1, round 2, every finding
    assert "证据" in page and "补一个测试" in page and "has no test" not in page
    english = render_history_html(h, "en")
    assert english.count("<code>x</code> has no test") == 3 and "没有测试" not in english
