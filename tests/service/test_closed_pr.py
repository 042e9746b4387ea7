"""A pull request closed while its round runs (issue 28 item 4): the App on loopback, workers as processes.

Before, a round already running when the PR was closed still posted its comment, review and check run
on the closed PR, and jobs queued behind it ran too (each then skipped itself). Now a `closed` delivery
cancels the PR's queued jobs (`skipped`) and marks its running one, which asks right before its first
write and publishes nothing; the round also asks GitHub for the PR's state at that moment, so a
`closed` delivery that never arrives changes nothing either.
"""

from __future__ import annotations

from pathlib import Path

import httpx

from reviewbot.service.events import classify
from reviewbot.settings import Settings
from tests.service.e2e import PR, REPO, Stack, app_stack
from tests.service.helpers import deliver, pull_request_event, wait_for

HOLD = 3.0  # the round's thread query is held this long: the PR is closed meanwhile


def _close_on_github(stack: Stack) -> None:
    with stack.fake.world.lock:
        stack.fake.world.pulls[(REPO, PR)].state = "closed"


def _nothing_published(stack: Stack) -> None:
    assert stack.fake.comments(REPO, PR) == []
    assert stack.fake.reviews(REPO, PR) == []
    assert stack.fake.check_runs(REPO) == []
    assert [r for r in stack.fake.writes(auth=False)] == []


def _running_round_held(stack: Stack) -> None:
    hold = stack.fake.inject(kind="delay", operation="graphql/query", delay=HOLD, when="before")
    stack.start_worker()
    assert stack.push(stack.remote.round1, action="opened") == "queued"
    # The thread query comes after the analysis, before the first write.
    wait_for(lambda: hold.total_fired == 1, timeout=60, what="the round to reach its thread query")


def test_a_closed_delivery_cancels_the_queued_job_and_the_running_round_publishes_nothing(
    settings: Settings, tmp_path: Path
) -> None:
    with app_stack(settings, tmp_path, as_app=True) as stack:
        _running_round_held(stack)
        assert stack.push(stack.remote.round2) == "queued"  # waits behind the running round
        _close_on_github(stack)
        event = pull_request_event("closed", REPO, PR, stack.remote.round2)
        event["pull_request"]["state"] = "closed"
        r = deliver(stack.server.url, "pull_request", event)
        assert r.status_code == 200 and r.json()["outcome"] == "cancelled", r.text
        assert "1 queued job(s) cancelled, 1 running job(s) told to publish nothing" in r.json()["detail"]

        first, second = sorted(stack.wait_settled(timeout=60), key=lambda j: j.id)
        assert (first.state, second.state) == ("skipped", "skipped")
        assert (first.reason or "").startswith("cancelled: the pull request was closed"), first.reason
        assert (second.reason or "").startswith("cancelled: the pull request was closed"), second.reason
        assert second.attempts == 0  # never ran
        _nothing_published(stack)
        text = httpx.get(f"{stack.server.url}/metrics", timeout=5).text
        assert 'reviewbot_jobs_cancelled_total{state="queued"} 1.0' in text
        assert 'reviewbot_jobs_cancelled_total{state="running"} 1.0' in text
        assert 'reviewbot_deliveries_total{event="pull_request",outcome="cancelled"} 1.0' in text


def test_a_round_asks_github_before_publishing_and_publishes_nothing_on_a_closed_pr(
    settings: Settings, tmp_path: Path
) -> None:
    # No `closed` delivery reaches the App (lost, or still on its way): the round's own look decides.
    with app_stack(settings, tmp_path, as_app=True) as stack:
        _running_round_held(stack)
        _close_on_github(stack)
        (job,) = stack.wait_settled(timeout=60)
        assert job.state == "skipped", job.reason
        assert job.reason == "cancelled: the PR was closed while the round ran; nothing was published"
        _nothing_published(stack)
        # Reopened: the round runs and publishes as usual.
        with stack.fake.world.lock:
            stack.fake.world.pulls[(REPO, PR)].state = "open"
        assert stack.announce(stack.remote.round1, action="reopened") == "queued"
        jobs = stack.wait_settled(timeout=60)
        assert max(jobs, key=lambda j: j.id).state == "done"
        assert len(stack.bot_comments()) == 1 and len(stack.fake.check_runs(REPO)) == 1


def test_closed_is_classified_as_a_cancellation() -> None:
    event = pull_request_event("closed", REPO, PR, "a" * 40)
    event["pull_request"]["state"] = "closed"
    decision = classify("pull_request", event)
    assert (decision.kind, decision.repository, decision.pr, decision.requests) == ("cancel", REPO, PR, ())
