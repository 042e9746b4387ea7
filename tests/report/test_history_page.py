"""The round-history page in a real browser (issue 17, item 1).

Two rounds of the bundled example PR are recorded in a real SQLite store by the real `reviewbot run`
(tests and mutants in the sandbox); `reviewbot rounds --html` writes the page; Debian's chromium,
driven headless by Playwright with the system executable (no browser download), renders it and the
assertions read the rendered page. Screenshots are kept in $REVIEWBOT_TEST_ARTIFACTS (default: the
test's temporary directory); the path is printed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from reviewbot.example import build_example
from reviewbot.report.history_html import render_history_html
from reviewbot.report.history_page import PageFinding, PageRound, PrHistory
from reviewbot.report.sanitize import segments
from reviewbot.store.store import Store

# Debian's chromium package; another system's chromium can be named in $REVIEWBOT_TEST_CHROMIUM.
CHROMIUM = Path(os.environ.get("REVIEWBOT_TEST_CHROMIUM", "/usr/bin/chromium"))
ROOT = Path(__file__).resolve().parents[2]
PR = 1361
REPO = "acme/rtp-llm"
DISMISSED_RULE = "unconditional-override"
DISMISS_REASON = "the override is the point of this PR <b>"

if not CHROMIUM.exists():
    pytest.skip(
        f"{CHROMIUM} is absent (Debian's chromium package; .ci/run installs it)", allow_module_level=True
    )
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (pip install playwright; .ci/run does)"
)


@dataclass(frozen=True)
class Recorded:
    db: str
    head1: str
    head2: str
    rounds: list[
        dict[str, Any]
    ]  # each round's stored JSON report (`reviewbot rounds --round K --format json`)
    tmp: Path
    env: dict[str, str]


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "reviewbot.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"reviewbot {' '.join(args)} -> {done.returncode}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    tmp = tmp_path_factory.mktemp("history")
    example = build_example(tmp / "repo")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REVIEWBOT_", "GITHUB_", "GH_"))}
    env.update(
        PYTHONPATH=str(ROOT),
        HOME=str(tmp / "home"),
        XDG_STATE_HOME=str(tmp / "state"),
        XDG_CACHE_HOME=str(tmp / "cache"),
    )
    db = f"sqlite:///{tmp / 'rounds.sqlite3'}"
    where = ("--pr", str(PR), "--repo", REPO, "--db", db)
    for head in (example.round1, example.round2):
        cli(env, "run", *where, "--path", str(example.path), "--base", example.base, "--head", head)
        if head == example.round1:
            # A maintainer sets one finding aside before round 2 (`reviewbot dismiss`, migration 0004).
            doc = json.loads(cli(env, "rounds", *where, "--round", "1", "--format", "json").stdout)
            (fp,) = [f["fingerprint"] for f in doc["findings"] if f["rule"] == DISMISSED_RULE]
            cli(env, "dismiss", *where, fp[:8], "--reason", DISMISS_REASON, "--by", "maintainer")
    rounds = [
        json.loads(cli(env, "rounds", *where, "--round", str(k), "--format", "json").stdout) for k in (1, 2)
    ]
    return Recorded(db, example.round1, example.round2, rounds, tmp, env)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    named = os.environ.get("REVIEWBOT_TEST_ARTIFACTS")
    path = Path(named) / "history-page" if named else tmp_path_factory.mktemp("history-page-artifacts")
    path.mkdir(parents=True, exist_ok=True)
    return path


class Opened:
    """A page opened from a file, with every request the browser made for it."""

    def __init__(self, browser: Any, url: str) -> None:
        self.page = browser.new_page(viewport={"width": 1200, "height": 900})
        self.requests: list[str] = []
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.goto(url)

    def text(self, selector: str) -> str:
        loc = self.page.locator(selector)
        assert loc.count() == 1, f"{selector}: {loc.count()} elements"
        assert loc.is_visible(), f"{selector} is not visible"
        return str(loc.inner_text())


def write_page(rec: Recorded, lang: str) -> Path:
    out = rec.tmp / f"out-{lang}.html"
    cli(
        rec.env, "rounds", "--pr", str(PR), "--repo", REPO, "--db", rec.db, "--html", str(out), "--lang", lang
    )
    return out


def fixed_in_round_2(rec: Recorded) -> dict[str, Any]:
    """The finding round 2 recorded as fixed (the example's round 2 adds the missing test)."""
    (fixed,) = rec.rounds[1]["fixed"]
    assert fixed["rule"] == "missing-tests" and fixed["fixed_in"] == rec.head2
    return dict(fixed)


def test_two_rounds_and_the_fixed_finding_in_chromium(
    recorded: Recorded, browser: Any, artifacts: Path
) -> None:
    out = write_page(recorded, "en")
    fixed = fixed_in_round_2(recorded)
    fp = fixed["fingerprint"]
    opened = Opened(browser, out.as_uri())
    page = opened.page

    # Both rounds, each with its head commit and status as stored.
    assert page.locator("section.round").count() == 2
    for k, head, doc in ((1, recorded.head1, recorded.rounds[0]), (2, recorded.head2, recorded.rounds[1])):
        assert opened.text(f"#round-{k} h2") == f"Round {k} {doc['status']}"
        assert opened.text(f"#round-{k} .head-sha") == head
        counts = opened.text(f"#round-{k} dd.counts")
        assert counts == " · ".join(f"{p} {doc['summary'][p]}" for p in ("P0", "P1", "P2", "P3"))
    assert [recorded.rounds[0]["status"], recorded.rounds[1]["status"]] == ["BLOCKING", "LGTM"]
    assert page.locator("table.overview tbody tr").count() == 2

    # Round 1 reported it as new; round 2 lists it under "Fixed in this round", badge "fixed".
    assert opened.text(f"#round-1 li#r1-{fp} .badge") == "new"
    item = f"#round-2 ul[data-group=fixed] li#r2-{fp}"
    assert opened.text(f"{item} .badge") == "fixed"
    assert opened.text(f"{item} .rule") == "missing-tests"
    assert f"fixed in {recorded.head2[:12]}" in opened.text(item)
    assert opened.text("#round-2 h3[data-group=fixed]") == "Fixed in this round (1)"
    green = page.locator(f"{item} .badge").evaluate("e => getComputedStyle(e).backgroundColor")
    assert green == "rgb(26, 127, 55)"  # the inline stylesheet applies: the badge is shown green
    # Every other finding of round 1 is still open in round 2, none of them fixed.
    open_fps = {
        f["fingerprint"]
        for f in recorded.rounds[1]["findings"]
        if f["state"] == "still_open" and not f.get("dismissal")
    }
    shown_open = page.locator("#round-2 ul[data-group=still_open] > li").evaluate_all(
        "els => els.map(e => e.dataset.fingerprint)"
    )
    assert set(shown_open) == open_fps and fp not in open_fps

    # The finding dismissed before round 2: listed as dismissed, with who and why, in round 2 only.
    (dismissed,) = [f for f in recorded.rounds[1]["findings"] if f.get("dismissal")]
    assert dismissed["rule"] == DISMISSED_RULE and dismissed["fingerprint"] not in open_fps
    item2 = f"#round-2 ul[data-group=dismissed] li#r2-{dismissed['fingerprint']}"
    assert opened.text(f"{item2} .badge") == "dismissed"
    assert opened.text(f"{item2} .dismissal").startswith("dismissed by maintainer on ")
    assert opened.text(f"{item2} .dismissal").endswith(f"reason: {DISMISS_REASON}")
    assert opened.text(f"#round-1 li#r1-{dismissed['fingerprint']} .badge") == "new"
    assert page.locator("table.overview tbody tr td:nth-child(11)").all_inner_texts() == ["0", "1"]

    # Truth tables and the test run of each round, as each round stored them.
    for k, doc in ((1, recorded.rounds[0]), (2, recorded.rounds[1])):
        tests = doc["tests"]
        assert opened.text(f"#round-{k} .mutants").startswith(
            f"mutants {tests['mutants']}: killed {tests['killed']}, survived {tests['survived']}"
        )
        targets = page.locator(f"#round-{k} .truth-table").evaluate_all(
            "els => els.map(e => e.dataset.target)"
        )
        assert targets == [t["target"] for t in doc["truth_tables"]] and targets
    assert page.locator("#round-2 .truth-table").first.get_attribute("data-change") == "unchanged"

    # The finding is linkable by its fingerprint: the link lands on it, showing its latest state.
    page.goto(f"{out.as_uri()}#{fp}")
    assert page.evaluate("document.querySelector(':target').id") == fp
    assert opened.text(f"[id='{fp}'] .badge") == "fixed"
    assert "latest state (round 2): fixed" in opened.text(f"[id='{fp}']")
    # Self-contained: the browser fetched nothing but the file itself.
    assert {u.split("#")[0] for u in opened.requests} == {out.as_uri()}

    shot = artifacts / "history-en.png"
    page.screenshot(path=str(shot), full_page=True)
    page.locator(item).screenshot(path=str(artifacts / "history-en-fixed.png"))
    assert shot.stat().st_size > 10_000
    print(f"\nhistory page screenshots: {artifacts}")
    page.close()


def test_the_chinese_page(recorded: Recorded, browser: Any, artifacts: Path) -> None:
    out = write_page(recorded, "zh")
    fp = fixed_in_round_2(recorded)["fingerprint"]
    opened = Opened(browser, out.as_uri())
    page = opened.page
    assert page.locator("html").get_attribute("lang") == "zh-CN"
    assert opened.text("#round-1 h2") == f"第 1 轮 {recorded.rounds[0]['status']}"
    assert opened.text("#round-2 h2") == f"第 2 轮 {recorded.rounds[1]['status']}"
    assert opened.text(f"#round-2 ul[data-group=fixed] li#r2-{fp} .badge") == "已修复"
    assert opened.text("#round-2 h3[data-group=fixed]") == "本轮已修复 (1)"
    assert opened.text(f"#round-1 li#r1-{fp} .badge") == "新增"
    assert f"修复于 {recorded.head2[:12]}" in opened.text(f"#round-2 li#r2-{fp}")
    # Finding sentences in Chinese as round 1 stored them, also where round 2 closed the finding (its
    # fixed record is kept from round 1's, which stored them).
    with Store.open(recorded.db) as store:
        first = store.get_round(REPO, PR, 1)
    assert first is not None
    (stored,) = [f for f in first.findings if f.fingerprint == fp]
    title = stored.data["localized"]["zh"]["title"]
    assert title != stored.title and re.search(r"[\u4e00-\u9fff]", title)
    shown = "".join(seg.text for seg in segments(title))
    assert opened.text(f"#round-1 li#r1-{fp} .title") == shown
    assert opened.text(f"#round-2 li#r2-{fp} .title") == shown
    assert opened.text(f"[id='{fp}'] .title") == shown
    shot = artifacts / "history-zh.png"
    page.screenshot(path=str(shot), full_page=True)
    print(f"\nhistory page screenshot (zh): {shot}")
    page.close()


def hostile_history() -> PrHistory:
    """A round whose PR-controlled texts try to run script, load a resource and reorder the text;
    and a finding dismissed the way migration 0004 stores dismissals (`data["dismissal"]`)."""
    evil = 'x</span><script>window.pwned = 1</script><img src="http://127.0.0.1:9/p.png">\u202eevil'
    findings = (
        PageFinding.of(
            fingerprint="0123456789abcdef",
            rule="missing-tests",
            severity="P1",
            path="a<b>.py",
            line=3,
            title=f"`{evil}` has no test",
            state="still_open",
            fixed_in=None,
            data={"evidence": [evil], "dismissal": {"reason": evil, "by": "octocat", "at": "2026-12-01"}},
        ),
    )
    rnd = PageRound(
        1, "a" * 40, "b" * 40, "LGTM", {"P0": 0, "P1": 1, "P2": 0, "P3": 0}, "now", True, False, findings
    )
    return PrHistory("acme/evil", 7, (rnd,))


def test_pr_text_stays_text_and_a_dismissal_shows(browser: Any, tmp_path: Path) -> None:
    out = tmp_path / "evil.html"
    out.write_text(render_history_html(hostile_history(), "en"), encoding="utf-8")
    opened = Opened(browser, out.as_uri())
    page = opened.page
    assert page.evaluate("typeof window.pwned") == "undefined"
    assert page.locator("script, img").count() == 0
    title = opened.text("#r1-0123456789abcdef .title")
    assert "<script>window.pwned = 1</script>" in title and "\\u202eevil" in title
    assert opened.text("#r1-0123456789abcdef .badge") == "dismissed"
    dismissal = opened.text("#r1-0123456789abcdef .dismissal")
    assert dismissal.startswith("dismissed by octocat on 2026-12-01 · reason: x</span><script>")
    assert opened.text("#round-1 h3[data-group=dismissed]") == "Dismissed (1)"
    assert {u for u in opened.requests} == {out.as_uri()}
    page.close()
