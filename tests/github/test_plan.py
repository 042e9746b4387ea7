"""The publication plan: inline placement and caps, suggestion blocks, the 65,536 limit, check-run batches."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reviewbot.change.diff import load_change
from reviewbot.github.plan import (
    COMMENT_LIMIT,
    PublicationPlan,
    build_plan,
    commentable_lines,
    fit_body,
    suggestion_block,
)
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.review import ChecklistResult, Review, Status
from reviewbot.report.marker import decode_state
from reviewbot.runner import render_round
from tests.fakegithub import example_remote
from tests.fakegithub.gitdiff import diff_lines, pr_files

HEAD = "c" * 40


def _finding(i: int, line: int, severity: Severity = Severity.P2, **kw: Any) -> Finding:
    return Finding(
        rule="unconditional-override",
        severity=severity,
        path="a.cc",
        line=line,
        title=f"finding {i}",
        anchor=f"x{i} = 1;",
        **kw,
    )


def _review(findings: list[Finding], status: Status = Status.LGTM) -> Review:
    return Review(
        status, "b" * 40, HEAD, "b" * 40, "2026-09-01 04:00 UTC", findings, ChecklistResult(), [], [], {}
    )


def _plan(
    findings: list[Finding], lines: set[int], status: Status = Status.LGTM, **kw: Any
) -> PublicationPlan:
    review = _review(findings, status)
    markdown, _ = render_round(review)
    return build_plan(review, markdown, repo="acme/x", pr=7, lines={"a.cc": frozenset(lines)}, **kw)


def test_only_new_findings_on_diff_lines_go_inline_and_at_most_the_cap() -> None:
    findings = [_finding(i, 10 + i) for i in range(40)]
    findings += [_finding(99, 500), _finding(98, 11, state="still_open")]
    plan = _plan(findings, set(range(1, 100)), max_inline=30)
    assert plan.review is not None
    placed = [(c.path, c.line) for c in plan.review.comments]
    assert placed == [("a.cc", 10 + i) for i in range(30)]
    assert len(plan.not_inline) == 11
    body = plan.summary_body
    assert "Not posted as inline comments (11)" in body and "`a.cc:500` — not on a line of the diff" in body
    assert "`a.cc:49` — over the limit of 30 inline comments per review" in body
    assert decode_state(body) is not None  # the overflow section sits before the marker


def test_a_mechanical_fix_becomes_a_suggestion_block() -> None:
    f = _finding(1, 12, replacement="x1 = compute(`a`, ```b```);")
    review = _plan([f], {12}).review
    assert review is not None
    (comment,) = review.comments
    assert "````suggestion\nx1 = compute(`a`, ```b```);\n````" in comment.body
    assert comment.to_json() == {"path": "a.cc", "line": 12, "side": "RIGHT", "body": comment.body}
    assert suggestion_block("y = 2;") == "```suggestion\ny = 2;\n```"


def test_no_review_when_nothing_new_is_on_the_diff_or_the_head_has_one() -> None:
    assert _plan([_finding(1, 12, state="still_open")], {12}).review is None
    assert _plan([_finding(1, 12)], {12}, review_exists=True).review is None


def test_an_oversized_report_is_shortened_with_a_note_and_keeps_its_state() -> None:
    huge = [_finding(i, 10, evidence=("e" * 900,) * 3) for i in range(40)]
    review = _review(huge, Status.LGTM)
    markdown, _ = render_round(review)
    # The renderer keeps its report within the limit itself; the plan still fits whatever it is given.
    at = markdown.rindex("<!-- reviewbot:state")
    markdown = markdown[:at] + "```\n" + "x\n" * 40_000 + "```\n\n" + markdown[at:]
    plan = build_plan(review, markdown, repo="acme/x", pr=7, lines={"a.cc": frozenset({10})})
    body = plan.summary_body
    assert plan.shortened and len(body) <= COMMENT_LIMIT
    assert "shortened to fit GitHub's 65,536-character comment limit" in body
    state = decode_state(body)
    assert state is not None and len(state.findings) == 40  # the next round still knows every finding
    assert sum(1 for line in body.splitlines() if line.startswith("```")) % 2 == 0


def test_fit_body_closes_an_open_fence_and_leaves_short_bodies_alone() -> None:
    assert fit_body("short", 100, "{n}") == ("short", False)
    text, cut = fit_body("intro\n```\n" + "x\n" * 200, 120, "(cut {n})")
    assert cut and len(text) <= 120 and text.count("```") == 2 and "(cut " in text


def test_check_run_conclusion_and_annotations_in_batches_of_fifty() -> None:
    blocking = [_finding(i, 10, Severity.P1) for i in range(120)]
    plan = _plan(blocking, set(), status=Status.BLOCKING)
    run = plan.check_run
    assert run.conclusion == "failure" and [len(b) for b in run.batches()] == [50, 50, 20]
    assert len(run.create_payload()["output"]["annotations"]) == 50
    assert [len(p["output"]["annotations"]) for p in run.update_payloads()] == [50, 20]
    assert (
        run.annotations[0]["annotation_level"] == "failure"
        and run.annotations[0]["title"] == "[P1] unconditional-override"
    )
    assert plan.write_calls == 1 + 0 + 3
    assert _plan([], set(), status=Status.INCOMPLETE).check_run.conclusion == "neutral"
    assert _plan([], set(), status=Status.LGTM).check_run.conclusion == "success"


def test_commentable_lines_are_the_lines_github_accepts(tmp_path: Path) -> None:
    remote = example_remote(tmp_path)
    for head in (remote.round1, remote.round2):
        change = load_change(remote.bare, remote.base, head)
        try:
            ours = commentable_lines(change)
        finally:
            change.close()
        github = {
            f.filename: frozenset(diff_lines(f.patch)[0]) for f in pr_files(remote.bare, remote.base, head)
        }
        assert ours == github
