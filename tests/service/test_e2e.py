"""End to end on loopback with the real `run_pr_round`: webhook -> queue -> worker process -> fake GitHub."""

from __future__ import annotations

import re
import signal
from pathlib import Path

import httpx
import pytest

from reviewbot.settings import Settings
from tests.service.e2e import REPO, Stack, app_stack
from tests.service.helpers import wait_for


def first_round_then_a_push(stack: Stack) -> None:
    """opened -> one comment, round 1; synchronize -> the same comment edited, round 2."""
    remote = stack.remote
    assert stack.push(remote.round1, action="opened") == "queued"
    (job,) = stack.wait_settled()
    assert job.state == "done", job.reason
    assert (job.round_index, job.result_head) == (1, remote.round1)
    (comment,) = stack.bot_comments()
    first_body = comment.body  # type: ignore[attr-defined]
    assert len(stack.fake.calls("issues/create-comment")) == 1

    assert stack.push(remote.round2) == "queued"
    jobs = stack.wait_settled()
    assert [j.state for j in jobs] == ["done", "done"], [j.reason for j in jobs]
    (edited,) = stack.bot_comments()
    assert edited.id == comment.id  # type: ignore[attr-defined]
    assert edited.body != first_body  # type: ignore[attr-defined]
    assert len(stack.fake.calls("issues/create-comment")) == 1
    assert len(stack.fake.calls("issues/update-comment")) >= 1
    rounds = stack.rounds()
    assert [(r.round_index, r.head_sha) for r in rounds] == [(1, remote.round1), (2, remote.round2)]


def test_a_pull_request_and_a_push_give_one_comment_edited_for_round_2(
    settings: Settings, tmp_path: Path
) -> None:
    with app_stack(settings, tmp_path) as stack:
        stack.start_worker()
        first_round_then_a_push(stack)
        text = httpx.get(f"{stack.server.url}/metrics", timeout=5).text
        assert 'reviewbot_jobs_finished_total{state="done"} 2.0' in text
        assert "reviewbot_round_duration_seconds_count 2.0" in text
        assert 'reviewbot_github_api_calls_total{kind="write"}' in text
        log = stack.worker_log(0)
        assert stack.token is not None and stack.token not in log
        assert settings.require_secret().decode() not in log


def test_a_round_github_refuses_is_recorded_failed_with_its_reason(
    settings: Settings, tmp_path: Path
) -> None:
    with app_stack(settings, tmp_path) as stack:
        stack.fake.inject(kind="status", status=404, operation="pulls/get", times=5)
        stack.start_worker()
        stack.push(stack.remote.round1, action="opened")
        (job,) = stack.wait_settled()
        assert job.state == "failed"
        assert (
            job.reason is not None
            and job.reason.startswith("failed after 1 attempt(s): ")
            and "404" in job.reason
        )
        # It says so in one line (issue 17 item 4); a personal token cannot create the neutral check
        # run (GitHub allows only Apps), and the line says that too.
        (note,) = stack.bot_comments()
        body = note.body
        assert body.count("\n") == 0 and body.startswith("> reviewbot could not finish the round")
        assert "404" in body and "check run could not be created" in body
        # The job's outcome line in the worker's log, at ERROR.
        (line,) = [x for x in stack.worker_log(0).splitlines() if ": failed in " in x]
        assert re.search(
            rf"ERROR reviewbot\.service\.worker: job {job.id} {REPO}#\d+: failed in \d+\.\ds: "
            r"failed after 1 attempt\(s\): .*404",
            line,
        ), line
        text = httpx.get(f"{stack.server.url}/metrics", timeout=5).text
        assert 'reviewbot_job_failures_total{kind="exhausted"} 1.0' in text
        assert 'reviewbot_jobs{state="failed"} 1.0' in text


def test_the_same_delivery_three_times_gives_one_round(settings: Settings, tmp_path: Path) -> None:
    with app_stack(settings, tmp_path) as stack:
        stack.start_worker()
        outcomes = [stack.push(stack.remote.round1, delivery="dup-1", action="opened") for _ in range(3)]
        assert outcomes == ["queued", "duplicate_delivery", "duplicate_delivery"]
        (job,) = stack.wait_settled()
        assert job.state == "done", job.reason
        assert len(stack.rounds()) == 1
        assert len(stack.bot_comments()) == 1
        assert len(stack.fake.calls("issues/create-comment")) == 1


def test_twenty_pushes_within_a_second_coalesce_into_one_comment_on_the_last_head(
    settings: Settings, tmp_path: Path
) -> None:
    with app_stack(settings, tmp_path) as stack:
        heads = stack.commits_on_top(20)
        stack.start_worker()
        # Back to back, as GitHub sends them after a burst (no bound on how long the burst takes: on a
        # loaded machine it took 2 s, and what is tested is the coalescing, not the speed of the fake).
        stack.rapid_pushes(heads)
        jobs = stack.wait_settled(timeout=50)
        assert len(jobs) == 20
        assert {j.state for j in jobs} <= {"done", "skipped"}
        assert len(stack.bot_comments()) == 1
        rounds = stack.rounds()
        assert rounds[-1].head_sha == heads[-1]
        assert len(rounds) < 20  # superseded pushes were skipped, not reviewed
        skipped = [j for j in jobs if j.state == "skipped"]
        assert skipped and all("moved on" in (j.reason or "") for j in skipped)


@pytest.mark.redis
@pytest.mark.postgres
def test_redis_queue_two_worker_processes_and_postgresql(
    redis_queue: Settings, pg_url: str, tmp_path: Path
) -> None:
    settings = redis_queue.with_(db_url=pg_url)
    with app_stack(settings, tmp_path, as_app=True) as stack:
        assert stack.runtime.queue.describe().startswith("RedisHuey")
        stack.start_worker()
        stack.start_worker()
        first_round_then_a_push(stack)
        heads = stack.commits_on_top(6)
        stack.rapid_pushes(heads)
        jobs = stack.wait_settled(timeout=50)
        assert {j.state for j in jobs} <= {"done", "skipped"}, [j.reason for j in jobs]
        assert len(stack.bot_comments()) == 1
        assert stack.rounds()[-1].head_sha == heads[-1]
        assert len(stack.fake.check_runs(REPO)) >= 1  # as an App, the round also reports a check run
        assert stack.fake.calls("apps/create-installation-access-token")


def test_sigkill_in_the_middle_of_a_round_then_restart_completes_it_with_one_comment(
    settings: Settings, tmp_path: Path
) -> None:
    with app_stack(settings, tmp_path) as stack:
        # Hold the round open at a read that comes before any write.
        hold = stack.fake.inject(kind="delay", operation="issues/list-comments", delay=10.0, times=1)
        victim = stack.start_worker()
        assert stack.push(stack.remote.round1, action="opened") == "queued"
        wait_for(lambda: hold.total_fired == 1, timeout=30, what="the round to reach the held request")
        (running,) = stack.jobs()
        assert running.state == "running" and running.attempts == 1
        victim.send_signal(signal.SIGKILL)
        victim.wait(timeout=10)

        stack.start_worker()
        (job,) = stack.wait_settled()
        assert job.state == "done", job.reason
        assert job.attempts == 2
        assert job.round_index == 1
        assert len(stack.bot_comments()) == 1
        assert len(stack.fake.calls("issues/create-comment")) == 1
        assert "re-queued 1 interrupted job(s)" in stack.worker_log(1)
        assert [r.round_index for r in stack.rounds()] == [1]
