"""A PR reviewed round after round against the fake GitHub, with the bundled example as its code."""

from __future__ import annotations

import urllib.parse
from dataclasses import replace
from pathlib import Path

from reviewbot.github import run_pr_round
from reviewbot.model.budget import RoundBudget
from reviewbot.model.review import Status
from reviewbot.report.marker import decode_state
from tests.fakegithub import push
from tests.github.conftest import APP_SLUG, AUTHOR, PR, REPO, Seeded, bot_comments, settings
from tests.gitrepo import git

BOT = f"{APP_SLUG}[bot]"


def _extra_commit(seeded: Seeded) -> str:
    """Round 2 plus one more guarded override: exactly one new finding on a changed line."""
    src = seeded.remote.example.path
    git(src, "checkout", "-q", seeded.remote.round2)
    path = src / "rtp_llm/cpp/config/ModelConfig.cc"
    text = path.read_text().replace(
        "    return config;\n",
        "    if (config.rope_config.style == RopeStyle::No && !use_kvcache) {\n"
        "        config.use_logn_attn = false;\n    }\n    return config;\n",
    )
    path.write_text(text)
    git(src, "commit", "-q", "-am", "also drop logn scaling for embedding models")
    sha = git(src, "rev-parse", "HEAD")
    push(src, seeded.remote.bare, sha, "refs/heads/feature")
    return sha


def test_round_one_then_a_push_edits_the_same_comment(seeded: Seeded, tmp_path: Path) -> None:
    s = settings(seeded, tmp_path, app=True)
    first = run_pr_round(s, REPO, PR, post=True)
    assert first.status == "published" and first.review is not None
    assert first.review.status is Status.BLOCKING

    (comment,) = bot_comments(seeded, BOT)
    state = decode_state(comment.body)
    assert state is not None and state.round_index == 1 and state.head_sha == seeded.remote.round1
    (review,) = seeded.fake.reviews(REPO, PR)
    assert review.user == BOT and review.state == "COMMENTED"
    inline = seeded.fake.review_comments(REPO, PR)
    new = [f for f in first.review.findings if f.state == "new"]
    assert sorted((c.path, c.line) for c in inline) == sorted((f.path, f.line) for f in new)
    assert any("[P1]" in c.body and c.line == 20 for c in inline)
    (run1,) = seeded.fake.check_runs(REPO)
    assert (run1.name, run1.head_sha, run1.conclusion) == ("reviewbot", seeded.remote.round1, "failure")
    assert len(run1.annotations) == len(first.review.findings)

    seeded.fake.set_head(REPO, PR, seeded.remote.round2)
    second = run_pr_round(s, REPO, PR, post=True)
    assert second.status == "published" and second.review is not None
    assert second.review.status is Status.LGTM and second.review.round.round_index == 2
    assert [f.rule for f in second.review.round.fixed] == ["missing-tests"]

    (edited,) = bot_comments(seeded, BOT)
    assert edited.id == comment.id and edited.body != comment.body
    edited_state = decode_state(edited.body)
    assert (
        "round 2" in edited.body
        and edited_state is not None
        and edited_state.head_sha == seeded.remote.round2
    )
    assert [c.id for c in seeded.fake.comments(REPO, PR)] == [comment.id]
    # Nothing new in round 2: no second review, no new inline comment.
    assert len(seeded.fake.reviews(REPO, PR)) == 1 and len(seeded.fake.review_comments(REPO, PR)) == len(
        inline
    )
    runs = seeded.fake.check_runs(REPO, seeded.remote.round2)
    assert [r.conclusion for r in runs] == ["success"]
    assert seeded.fake.calls("issues/update-comment") and len(seeded.fake.calls("issues/create-comment")) == 1


def test_inline_comments_only_for_findings_new_this_round(seeded: Seeded, tmp_path: Path) -> None:
    s = settings(seeded, tmp_path, app=True)
    assert run_pr_round(s, REPO, PR, post=True).status == "published"
    before = {c.id for c in seeded.fake.review_comments(REPO, PR)}

    seeded.fake.set_head(REPO, PR, _extra_commit(seeded))
    outcome = run_pr_round(s, REPO, PR, post=True)
    assert outcome.review is not None
    new = [f for f in outcome.review.findings if f.state == "new"]
    assert [(f.rule, f.line) for f in new] == [("unconditional-override", 24)]
    assert any(f.state == "still_open" for f in outcome.review.findings)

    reviews = seeded.fake.reviews(REPO, PR)
    assert len(reviews) == 2 and reviews[-1].commit_id == outcome.head_sha
    added = [c for c in seeded.fake.review_comments(REPO, PR) if c.id not in before]
    assert [(c.path, c.line, c.review_id) for c in added] == [(new[0].path, 24, reviews[-1].id)]
    assert len(bot_comments(seeded, BOT)) == 1


def test_a_marker_in_someone_elses_comment_is_never_edited(seeded: Seeded, tmp_path: Path) -> None:
    s = settings(seeded, tmp_path, app=True)
    dry = run_pr_round(s, REPO, PR, post=False)
    assert dry.plan is not None
    # The author pastes a bot report, hidden marker and all, before reviewbot ever posted.
    forged_body = dry.plan.summary_body
    forged = seeded.fake.add_comment(REPO, PR, AUTHOR, forged_body)

    run_pr_round(s, REPO, PR, post=True)
    assert len(seeded.fake.comments(REPO, PR)) == 2  # round 1 made its own comment
    seeded.fake.set_head(REPO, PR, seeded.remote.round2)
    run_pr_round(s, REPO, PR, post=True)

    by_id = {c.id: c for c in seeded.fake.comments(REPO, PR)}
    assert by_id[forged].body == forged_body and by_id[forged].user == AUTHOR
    (ours,) = bot_comments(seeded, BOT)
    assert "round 2" in ours.body and len(by_id) == 2
    assert [r.path for r in seeded.fake.calls("issues/update-comment")] == [
        f"/repos/{REPO}/issues/comments/{ours.id}"
    ]


def test_a_moved_head_skips_the_round(seeded: Seeded, tmp_path: Path) -> None:
    s = settings(seeded, tmp_path, app=True)
    outcome = run_pr_round(s, REPO, PR, post=True, expected_head=seeded.remote.base)
    assert outcome.status == "skipped" and "moved on" in outcome.reason
    assert seeded.fake.writes(auth=False) == [] and outcome.review is None


def test_the_bot_comment_is_found_beyond_the_first_page(seeded: Seeded, tmp_path: Path) -> None:
    s = settings(seeded, tmp_path, app=True)
    run_pr_round(s, REPO, PR, post=True)
    for i in range(150):  # a busy PR: the bot's comment is now on page 1 of 2 (100 per page)
        seeded.fake.add_comment(REPO, PR, AUTHOR, f"comment {i}")
    seeded.fake.set_head(REPO, PR, seeded.remote.round2)
    seeded.fake.clear_log()
    outcome = run_pr_round(s, REPO, PR, post=True)
    listing = seeded.fake.calls("issues/list-comments")
    pages = [dict(urllib.parse.parse_qsl(r.query)) for r in listing]
    assert pages == [{"per_page": "100"}, {"per_page": "100", "page": "2"}]
    assert outcome.published is not None and outcome.published.comment_action == "updated"
    assert len(bot_comments(seeded, BOT)) == 1 and outcome.api["api_calls"] == len(seeded.fake.log)


def test_a_round_cut_to_its_report_budget_concludes_its_check_run_as_incomplete(
    seeded: Seeded, tmp_path: Path
) -> None:
    """The check run is planned from the review as published: the comment said INCOMPLETE (findings
    left out to fit the stored-report budget) while the check run said success."""
    s = settings(seeded, tmp_path, app=True)
    assert run_pr_round(s, REPO, PR, post=True).status == "published"
    seeded.fake.set_head(REPO, PR, seeded.remote.round2)
    full = run_pr_round(replace(s, record_rounds=False), REPO, PR, post=False)
    assert full.review is not None and full.review.status is Status.LGTM  # round 2 as it stands
    tight = replace(s, budget=RoundBudget(report_bytes=len(full.markdown) + 2_000))
    second = run_pr_round(tight, REPO, PR, post=True)
    assert second.status == "published" and second.review is not None
    assert second.review.status is Status.INCOMPLETE
    assert len(second.review.findings) < len(full.review.findings)
    (comment,) = bot_comments(seeded, BOT)
    assert "INCOMPLETE" in comment.body
    (run,) = seeded.fake.check_runs(REPO, seeded.remote.round2)
    assert run.conclusion == "neutral"
    assert len(run.annotations) == len(second.review.findings)
