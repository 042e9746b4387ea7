"""A round that cannot finish concludes its check run `neutral` and says so in one line; re-runs of
reviewbot's checks (one check run, or the whole suite) queue a round even when GitHub's payload names
no pull request (fork PRs). Real HTTP: the webhook server on loopback, the fake GitHub, a real worker."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from reviewbot.service.app import create_app
from reviewbot.service.events import classify
from reviewbot.service.github_round import github_round
from reviewbot.service.runtime import Runtime
from reviewbot.service.worker import Worker
from reviewbot.settings import Settings
from tests.service.e2e import BOT, PR, REPO, seeded_fake
from tests.service.helpers import ServerThread, check_run_event, deliver, pull_request_event

HEAD = "e" * 40


@pytest.fixture
def server(runtime: Runtime) -> Iterator[ServerThread]:
    with ServerThread(create_app(runtime.settings, runtime.book, runtime.queue)) as srv:
        yield srv


def test_a_fork_prs_check_run_rerun_is_queued_from_its_external_id(
    server: ServerThread, runtime: Runtime
) -> None:
    event = check_run_event(REPO, [], HEAD)  # GitHub leaves pull_requests empty for forks
    event["check_run"]["external_id"] = f"{REPO}#41@{HEAD}"
    r = deliver(server.url, "check_run", event)
    assert r.json()["outcome"] == "queued", r.text
    (job,) = runtime.book.list()
    assert (job.pr, job.head_sha, job.force, job.trigger) == (41, HEAD, True, "check_run.rerequested")


def test_a_check_suite_rerun_finds_its_pr_by_head(server: ServerThread, runtime: Runtime) -> None:
    assert (
        deliver(server.url, "pull_request", pull_request_event("opened", REPO, 42, HEAD)).json()["outcome"]
        == "queued"
    )
    (first,) = runtime.book.list()
    claim = runtime.book.claim(first.id, first.dispatch, "host:1:test", lease_seconds=30, wait_seconds=1)
    assert claim.job is not None
    runtime.book.finish(claim.job, "done", "round 1 published", round_index=1, result_head=HEAD)

    suite = {
        "action": "rerequested",
        "check_suite": {"id": 5, "head_sha": HEAD, "app": {"id": 4242}, "pull_requests": []},
        "repository": check_run_event(REPO, [], HEAD)["repository"],
        "installation": {"id": 77},
        "sender": {"login": "maintainer", "type": "User"},
    }
    r = deliver(server.url, "check_suite", suite)
    assert r.json()["outcome"] == "queued", r.text
    rerun = runtime.book.list()[0]
    assert (rerun.pr, rerun.head_sha, rerun.force, rerun.trigger) == (
        42,
        HEAD,
        True,
        "check_suite.rerequested",
    )

    suite["check_suite"]["head_sha"] = "f" * 40  # a head reviewbot never saw: nothing to re-run
    r = deliver(server.url, "check_suite", suite)
    assert r.json()["outcome"] == "ignored" and "no pull request" in r.json()["detail"]
    assert len(runtime.book.list()) == 2


def test_a_round_that_fails_for_good_leaves_a_neutral_check_run_and_one_line(
    settings: Settings, tmp_path: Path
) -> None:
    with seeded_fake(tmp_path) as (fake, remote, token):
        fake.options.allow_pat_check_runs = True  # the worker posts with a personal token here
        s = settings.with_(api_url=fake.api_url, github_token=token)
        runtime = Runtime.open(s)
        try:
            event = pull_request_event("opened", REPO, PR, remote.round1)
            accepted = runtime.book.accept("d-1", classify("pull_request", event))
            (job_id,) = accepted.job_ids
            # Forced failure: GitHub refuses the bot's first read of the conversation (403, for good).
            fake.inject(kind="status", status=403, operation="issues/list-comments", times=1)
            Worker(s, runtime.book, runtime.queue, github_round(s)).handle(job_id, 1)
            job = runtime.book.get(job_id)
            assert job is not None and job.state == "failed" and "403" in (job.reason or "")
        finally:
            runtime.close()
        (run,) = fake.check_runs(REPO)
        assert (run.conclusion, run.head_sha, run.external_id) == (
            "neutral",
            remote.round1,
            f"{REPO}#{PR}@{remote.round1}",
        )
        assert "403" in run.output["summary"]
        (note,) = [c for c in fake.comments(REPO, PR) if c.user == BOT]
        assert note.body.count("\n") == 0 and note.body.startswith("> reviewbot could not finish the round")
        assert "neutral" in note.body and "403" in note.body
        assert not any(r.fault is None and r.operation == "pulls/create-review" for r in fake.log)
