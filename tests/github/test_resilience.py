"""Flaky GitHub: 5xx, timeouts, primary and secondary rate limits — against the fake, end to end."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from reviewbot.errors import GitHubError
from reviewbot.github import run_pr_round
from tests.github.conftest import APP_SLUG, PR, REPO, Seeded, bot_comments, settings

BOT = f"{APP_SLUG}[bot]"


class Waits:
    """A real sleep that remembers how long it was asked to wait."""

    def __init__(self) -> None:
        self.asked: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.asked.append(seconds)
        time.sleep(seconds)


def test_one_502_and_one_secondary_limit_on_every_endpoint(seeded: Seeded, tmp_path: Path) -> None:
    seeded.fake.inject(kind="status", status=502)
    seeded.fake.inject(kind="secondary_rate_limit", retry_after=1)
    waits = Waits()
    outcome = run_pr_round(settings(seeded, tmp_path, app=True), REPO, PR, post=True, sleep=waits)

    assert outcome.status == "published"
    assert len(bot_comments(seeded, BOT)) == 1 and len(seeded.fake.comments(REPO, PR)) == 1
    assert len(seeded.fake.reviews(REPO, PR)) == 1 and len(seeded.fake.check_runs(REPO)) == 1
    operations = {r.operation for r in seeded.fake.log}
    for op in operations:  # every endpoint the round used failed twice before it answered
        statuses = [r.status for r in seeded.fake.calls(op)]
        assert statuses[:2] == [502, 403] and statuses[2] in (200, 201), (op, statuses)
    assert waits.asked.count(1.0) == len(operations)  # retry-after honoured once per endpoint
    assert outcome.api["api_retries"] >= 2 * (len(operations) - 3)  # the App handshake counts apart


def test_a_timed_out_create_is_found_not_sent_twice(seeded: Seeded, tmp_path: Path) -> None:
    # GitHub creates the comment but the answer comes after the client gave up.
    seeded.fake.inject(kind="delay", delay=2.5, when="after", operation="issues/create-comment")
    s = settings(seeded, tmp_path, app=True, timeout=1.0, backoff_base=2.0, backoff_max=2.0)
    outcome = run_pr_round(s, REPO, PR, post=True)
    assert outcome.status == "published"
    assert len(seeded.fake.calls("issues/create-comment")) == 1
    assert len(seeded.fake.comments(REPO, PR)) == 1
    assert outcome.published is not None and outcome.published.comment is not None
    assert outcome.published.comment.id == seeded.fake.comments(REPO, PR)[0].id


def test_primary_limit_with_a_near_reset_is_waited_out(seeded: Seeded, tmp_path: Path) -> None:
    seeded.fake.exhaust_rate_limit(seeded.token, reset_in=2)
    waits = Waits()
    outcome = run_pr_round(settings(seeded, tmp_path), REPO, PR, post=True, sleep=waits)
    assert outcome.status == "published"
    assert any(1.0 <= w <= 4.0 for w in waits.asked)
    assert seeded.fake.calls("users/get-authenticated")[0].status == 403
    assert len(seeded.fake.comments(REPO, PR)) == 1


def test_primary_limit_with_a_far_reset_ends_the_round_incomplete(seeded: Seeded, tmp_path: Path) -> None:
    seeded.fake.exhaust_rate_limit(seeded.token, reset_in=3600)
    outcome = run_pr_round(settings(seeded, tmp_path), REPO, PR, post=True)
    assert outcome.status == "incomplete" and "rate limit" in outcome.reason
    assert outcome.retry_at is not None and outcome.retry_at > time.time() + 3000
    assert seeded.fake.writes() == [] and len(seeded.fake.log) == 1  # gave up at once, no hammering


def test_rate_limit_while_publishing_says_what_was_posted(seeded: Seeded, tmp_path: Path) -> None:
    seeded.fake.inject(kind="primary_rate_limit", operation="pulls/create-review", reset_in=3600)
    outcome = run_pr_round(settings(seeded, tmp_path, app=True), REPO, PR, post=True)
    assert outcome.status == "incomplete"
    assert "summary comment" in outcome.reason and "created" in outcome.reason
    assert len(seeded.fake.comments(REPO, PR)) == 1 and seeded.fake.reviews(REPO, PR) == []
    assert seeded.fake.check_runs(REPO) == []  # the gate is not set from a half-published round


def test_a_server_error_that_persists_is_reported_after_the_last_attempt(
    seeded: Seeded, tmp_path: Path
) -> None:
    seeded.fake.inject(kind="status", status=503, operation="pulls/get", times=10)
    with pytest.raises(GitHubError, match="503"):
        run_pr_round(settings(seeded, tmp_path, max_attempts=3), REPO, PR, post=True)
    assert len(seeded.fake.calls("pulls/get")) == 3
    assert seeded.fake.writes() == []
