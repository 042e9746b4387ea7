"""Installation tokens that expire during a round (issue 15 item 1), against the fake GitHub.

The fake's `token_expiry` fault makes the token a request carries expire at that moment: the request
and every later one with that token answer 401 `Bad credentials`, as GitHub answers an installation
token that outlived its hour. Before the fix a round got that 401 at publish time and failed for good
(the worker reads a 401 as permanent): nothing, or only part of the report, was posted.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from reviewbot.github import run_pr_round
from reviewbot.github.auth import ROUND_MARGIN
from reviewbot.github.client import ApiError
from reviewbot.github.resilience import Failure, decide
from tests.github.conftest import APP_SLUG, PR, REPO, Seeded, bot_comments, settings

BOT = f"{APP_SLUG}[bot]"
EXCHANGE = "apps/create-installation-access-token"
# Every request a round 1 makes with the installation token, the writes first.
WRITES = ("issues/create-comment", "pulls/create-review", "checks/create")
READS = ("pulls/get", "issues/list-comments", "graphql/query")


def _installation_tokens(seeded: Seeded) -> list[float]:
    with seeded.fake.world.lock:
        return [t.expires_at or 0.0 for t in seeded.fake.world.tokens.values() if t.kind == "installation"]


@pytest.mark.parametrize("operation", WRITES + READS)
def test_a_token_expiring_mid_round_still_publishes_exactly_once(
    seeded: Seeded, tmp_path: Path, operation: str
) -> None:
    seeded.fake.inject(kind="token_expiry", operation=operation)
    outcome = run_pr_round(settings(seeded, tmp_path, app=True), REPO, PR, post=True)

    assert outcome.status == "published", outcome.reason
    assert len(bot_comments(seeded, BOT)) == 1 and len(seeded.fake.comments(REPO, PR)) == 1
    assert len(seeded.fake.reviews(REPO, PR)) == 1 and len(seeded.fake.check_runs(REPO)) == 1
    refused = [r for r in seeded.fake.log if r.status == 401]
    assert [(r.operation, r.fault) for r in refused] == [(operation, "token_expiry")]
    # The refused request was sent again, once, with a new token: two exchanges in all.
    tried = [r.status for r in seeded.fake.calls(operation)]
    assert tried[0] == 401 and tried[1] in (200, 201)
    assert len(seeded.fake.calls(EXCHANGE)) == 2
    expired, fresh = sorted(_installation_tokens(seeded))
    assert expired <= time.time() < fresh
    assert outcome.api["api_retries"] == 1


def test_a_token_refused_twice_fails_without_looping(seeded: Seeded, tmp_path: Path) -> None:
    # The renewed token is refused too (e.g. the App was suspended): one renewal, then the 401 stands.
    seeded.fake.inject(kind="token_expiry", operation="issues/create-comment", times=2)
    with pytest.raises(ApiError) as caught:
        run_pr_round(settings(seeded, tmp_path, app=True), REPO, PR, post=True)
    assert caught.value.status == 401
    assert [r.status for r in seeded.fake.calls("issues/create-comment")] == [401, 401]
    assert len(seeded.fake.calls(EXCHANGE)) == 2 and seeded.fake.comments(REPO, PR) == []


@pytest.mark.parametrize(("ttl", "exchanges"), [(3600, 1), (int(ROUND_MARGIN) - 60, 2)])
def test_a_round_starts_only_with_a_token_that_outlives_it(
    seeded: Seeded, tmp_path: Path, ttl: int, exchanges: int
) -> None:
    # An hour-long token is reused by the next round; one with less than ROUND_MARGIN left is not,
    # so that no round starts with a token that may run out before it publishes.
    seeded.fake.options.installation_token_ttl = ttl
    s = settings(seeded, tmp_path, app=True)
    run_pr_round(s, REPO, PR, post=True)
    seeded.fake.set_head(REPO, PR, seeded.remote.round2)
    second = run_pr_round(s, REPO, PR, post=True)
    assert second.status == "published"
    assert len(seeded.fake.calls(EXCHANGE)) == exchanges
    assert not [r for r in seeded.fake.log if r.status == 401]


def test_a_personal_token_refused_is_not_renewed(seeded: Seeded, tmp_path: Path) -> None:
    seeded.fake.inject(kind="token_expiry", operation="pulls/get")
    with pytest.raises(ApiError) as caught:
        run_pr_round(settings(seeded, tmp_path), REPO, PR, post=True)
    assert caught.value.status == 401 and len(seeded.fake.calls("pulls/get")) == 1


def _decide(status: int, renewable: bool) -> str:
    failure = Failure.of_answer(status, {}, {"message": "Bad credentials"})
    return decide(
        failure,
        1,
        now=0.0,
        max_attempts=4,
        backoff_base=1.0,
        backoff_max=2.0,
        rate_limit_wait=60.0,
        secondary_wait_max=300.0,
        renewable=renewable,
    ).kind


def test_a_401_is_renewed_only_when_the_credentials_can_be() -> None:
    assert _decide(401, renewable=True) == "renew"
    assert _decide(401, renewable=False) == "fail"
    assert _decide(403, renewable=True) == "fail"
