"""The hidden state marker, and PR-controlled text that tries to break it or ping people."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import zlib
from pathlib import Path

import pytest

from reviewbot.change.diff import load_change
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.review import Review
from reviewbot.report import sanitize
from reviewbot.report.marker import MarkedFinding, State, decode_state, encode_state
from reviewbot.report.render import render_markdown
from reviewbot.review.rounds import PreviousRound, apply_round
from tests.gitrepo import Repo
from tests.rounds.records import finding, review_of

NASTY = "x = 1; // --> <!-- reviewbot:state v1 AAAA.0123456789abcdef --> @someone #12 acme/x#3 GH-4 `"


def rounds_review(tmp_path: Path, findings: list[Finding], code: str = "x = 1;\n") -> Review:
    repo = Repo(tmp_path / "repo")
    base = repo.commit({"README": "x\n"})
    head = repo.commit({"src/config.cc": code})
    change = load_change(repo.path, base, head)
    try:
        first = apply_round(review_of(change, findings), change, None, repository="acme/x", pr=9)
        return apply_round(
            review_of(change, findings), change, PreviousRound.of(first), previous_is_ancestor=True, pr=9
        )
    finally:
        change.close()


def raw_marker(doc: object, version: int = 1) -> str:
    payload = base64.urlsafe_b64encode(zlib.compress(json.dumps(doc).encode())).decode().rstrip("=")
    return (
        f"<!-- reviewbot:state v{version} {payload}.{hashlib.sha256(payload.encode()).hexdigest()[:16]} -->"
    )


def test_state_round_trips_and_continues_the_next_round(tmp_path: Path) -> None:
    findings = [
        finding("missing-tests", "if (a && !b) {", 3, Severity.P1),
        finding(
            "duplicated-predicate", "a && !b", 3, Severity.P3, title="Predicate `a && !b` is written twice"
        ),
    ]
    review = rounds_review(tmp_path, findings)
    state = State.from_review(review)
    decoded = decode_state("Report body\n\n" + encode_state(state) + "\n")
    assert decoded == state
    assert (decoded.round_index, decoded.head_sha, decoded.pr) == (2, review.head_sha, 9)
    assert [h.round for h in decoded.history] == [1, 2]
    previous = decoded.previous_round()
    assert [f.fingerprint for f in previous.open_findings] == [f.fingerprint for f in review.findings]
    assert [(f.rule, f.anchor, f.title, f.state) for f in previous.open_findings] == [
        (f.rule, f.anchor, f.title, f.state) for f in review.findings
    ]


def test_decode_takes_the_last_valid_marker_at_a_line_start() -> None:
    old = State(1, "a" * 40, "b" * 40, ())
    new = State(2, "c" * 40, "b" * 40, ())
    good_old, good_new = encode_state(old), encode_state(new)
    assert decode_state(f"{good_old}\ntext\n{good_new}\n") == new
    assert decode_state(f"{good_new}\r\n{good_old}\r\n") == old  # GitHub hands back CRLF bodies
    # Not at a line start, edited, cut, or of an unknown version: ignored, the earlier valid one wins.
    edited = good_new[:40] + ("A" if good_new[40] != "A" else "B") + good_new[41:]
    for bad in (
        f"  {good_new}",
        f"see {good_new}",
        edited,
        good_new[:-25] + " -->",
        raw_marker({}, version=2),
    ):
        assert decode_state(f"{good_old}\n{bad}\n") == old, bad
    assert decode_state("no marker here") is None


VALID = {"round": 1, "head": "a" * 40, "base": "b" * 40, "repo": "", "pr": 7, "findings": [], "history": []}


@pytest.mark.parametrize(
    "doc",
    [
        {**VALID, "round": 0},
        {**VALID, "round": True},
        {**VALID, "head": "not-a-sha"},
        {**VALID, "pr": "7"},
        {**VALID, "findings": [["x"]]},
        {**VALID, "findings": [["fp", "pwned", "r", "P1", "p", 1, "", ""]]},
        {**VALID, "findings": [["fp", "new", "r", "P9", "p", 1, "", ""]]},
        {**VALID, "history": [1]},
        {k: v for k, v in VALID.items() if k != "findings"},
        ["not", "an", "object"],
    ],
)
def test_well_checksummed_but_malformed_state_is_refused(doc: object) -> None:
    assert decode_state(raw_marker(VALID)) is not None
    assert decode_state(raw_marker(doc)) is None


def test_a_payload_that_inflates_without_bound_is_refused() -> None:
    bomb = {"round": 1, "head": "a" * 40, "base": "b" * 40, "repo": "x" * (2 << 20), "pr": 1}
    assert decode_state(raw_marker({**bomb, "findings": [], "history": []})) is None


def test_two_hundred_findings_fit_in_a_small_marker() -> None:
    findings = tuple(
        MarkedFinding(
            f"{i:016x}", "new", "unconditional-override", "P2", f"src/module_{i}/config.cc", i,
            f"config.flag_{i} = config.style == No && !use_kvcache;",
            f"`config.flag_{i}` is overridden for every task",
        )
        for i in range(200)
    )  # fmt: skip
    marker = encode_state(State(1, "a" * 40, "b" * 40, findings))
    assert decode_state(marker) == State(1, "a" * 40, "b" * 40, findings)
    assert len(marker) < 16_000, len(marker)


def test_pr_text_cannot_close_the_block_forge_the_marker_or_ping(tmp_path: Path) -> None:
    forged = encode_state(State(99, "f" * 40, "f" * 40, ()))
    nasty = finding(
        "unconditional-override",
        NASTY,
        1,
        Severity.P1,
        title=f"`{NASTY}` overrides the flag",
        evidence=(f"src/config.cc:1 `{NASTY}`", forged, f"\n{forged}\n"),
    ).with_(suggestion=f"ask @someone\n{forged}", suggestion_code=f"```\n{forged}\n@someone -->\n")
    review = rounds_review(tmp_path, [nasty], code=NASTY + "\n")
    review.strengths = [f"{forged} @someone"]
    real = State.from_review(review)
    body = render_markdown(review, "en", marker=encode_state(real))

    assert decode_state(body) == real and real.round_index == 2
    assert body.rstrip("\n").splitlines()[-1] == encode_state(real)
    # Exactly one comment opener and closer: the marker's own.
    assert body.count("<!--") == 1 and body.count("-->") == 1 and body.count("--!>") == 0
    assert body.rstrip("\n").endswith("-->")
    # Mentions and references are inert inside a fenced block (and must stay: `@decorator` in a
    # suggested test); everywhere GitHub would link them, they are broken.
    prose, code = split_fences(body)
    assert re.search(r"@someone", prose) is None
    assert "#12" not in prose and "x#3" not in prose and "GH-4" not in prose  # (the title's `PR #9` is ours)
    assert "@" + sanitize.ZWJ + "someone" in prose  # still readable, just not a mention
    assert "@someone -->" not in code and "@someone --" + sanitize.ZWJ + ">" in code


def split_fences(body: str) -> tuple[str, str]:
    """(text outside fenced code blocks, text inside them), fences closed the way CommonMark does."""
    prose: list[str] = []
    code: list[str] = []
    fence: str | None = None
    for line in body.splitlines(keepends=True):
        m = re.match(r"^ {0,3}(`{3,}|~{3,})", line)
        if fence is None:
            if m:
                fence = m.group(1)
            else:
                prose.append(line)
        elif (
            m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line[m.end() :].strip()
        ):
            fence = None
        else:
            code.append(line)
    return "".join(prose), "".join(code)


def test_sanitize_neutralises_cross_repository_refs_and_issue_links() -> None:
    out = sanitize.text(
        "see acme/x#12 and https://github.com/acme/x/issues/7 or http://www.github.com/a/b/pull/1"
    )
    assert "x#12" not in out and "https://github.com" not in out and "http://www.github.com" not in out
    assert out.replace(sanitize.ZWJ, "") == (
        "see acme/x#12 and https://github.com/acme/x/issues/7 or http://www.github.com/a/b/pull/1"
    )
    # Entities and ordinary links stay as they are.
    assert sanitize.text("&#123; https://github.com/acme/x") == "&#123; https://github.com/acme/x"
