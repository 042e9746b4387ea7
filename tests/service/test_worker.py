"""The worker with huey's real consumer (SqliteHuey, threads) and an in-test round function."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from reviewbot.errors import GitHubError, UsageError
from reviewbot.service.events import Decision, RoundRequest
from reviewbot.service.jobs import Job
from reviewbot.service.runtime import Runtime
from reviewbot.service.worker import RoundResult, Worker, make_consumer, owner_is_dead
from reviewbot.settings import Settings
from tests.service.helpers import wait_for

REPO = "acme/rtp-llm"


def wanted(pr: int, head: str) -> Decision:
    request = RoundRequest(REPO, pr, head, None, "pull_request.synchronize")
    return Decision("pull_request", "synchronize", "round", "test", (request,), REPO, pr)


@contextmanager
def consuming(runtime: Runtime, fn: Callable[[Job], RoundResult], threads: int = 2) -> Iterator[Worker]:
    worker = Worker(runtime.settings, runtime.book, runtime.queue, fn)
    consumer = make_consumer(runtime.queue, threads, embedded=True)
    worker.start()
    consumer.start()
    try:
        yield worker
    finally:
        consumer.stop(graceful=True)
        worker.stop()


def enqueue(runtime: Runtime, delivery: str, pr: int, head: str) -> int:
    accepted = runtime.book.accept(delivery, wanted(pr, head))
    runtime.queue.send(accepted.dispatches)
    return accepted.job_ids[0]


def final(runtime: Runtime, job_id: int) -> Job | None:
    job = runtime.book.get(job_id)
    return job if job is not None and job.state in ("done", "skipped", "failed") else None


def test_transient_failures_are_retried_with_backoff_then_succeed(runtime: Runtime) -> None:
    calls: list[float] = []

    def flaky(job: Job) -> RoundResult:
        calls.append(time.monotonic())
        if len(calls) < 3:
            raise GitHubError("GitHub answered 502 Bad Gateway three times")
        return RoundResult("done", "round 1 published", 1, job.head_sha)

    job_id = enqueue(runtime, "d1", 1, "a" * 40)
    with consuming(runtime, flaky):
        job = wait_for(lambda: final(runtime, job_id), timeout=20, what="the job to finish")
    assert (job.state, job.attempts, job.round_index) == ("done", 3, 1)
    base = runtime.settings.retry_base_seconds
    assert calls[1] - calls[0] >= base  # backoff: 0.2 s, then 0.4 s (plus jitter)
    assert calls[2] - calls[1] >= 2 * base
    assert runtime.book.read_counters()["job_retries"] == {"{}": 2.0}


def test_a_job_that_exhausts_its_retries_is_recorded_failed_with_its_reason(settings: Settings) -> None:
    runtime = Runtime.open(settings.with_(max_attempts=3, github_token="ghp_secret_in_message"))
    attempts: list[int] = []

    def broken(job: Job) -> RoundResult:
        attempts.append(job.attempts)
        raise GitHubError("GitHub answered 503 for token ghp_secret_in_message")

    try:
        job_id = enqueue(runtime, "d1", 1, "a" * 40)
        with consuming(runtime, broken):
            job = wait_for(lambda: final(runtime, job_id), timeout=20, what="the job to fail")
        assert attempts == [1, 2, 3]
        assert job.state == "failed"
        assert job.reason == "failed after 3 attempt(s): GitHubError: GitHub answered 503 for token ***"
        counters = runtime.book.read_counters()
        assert counters["job_failures"] == {'{"kind":"exhausted"}': 1.0}
        assert counters["jobs_finished"] == {'{"state":"failed"}': 1.0}
    finally:
        runtime.close()


def test_a_configuration_error_fails_at_once(runtime: Runtime) -> None:
    def misconfigured(job: Job) -> RoundResult:
        raise UsageError("cannot read the App private key /nope.pem; check REVIEWBOT_PRIVATE_KEY_PATH")

    job_id = enqueue(runtime, "d1", 1, "a" * 40)
    with consuming(runtime, misconfigured):
        job = wait_for(lambda: final(runtime, job_id), timeout=20, what="the job to fail")
    assert job.attempts == 1
    assert "REVIEWBOT_PRIVATE_KEY_PATH" in (job.reason or "")


def test_one_round_at_a_time_per_pr_but_prs_in_parallel(runtime: Runtime) -> None:
    lock = threading.Lock()
    running: dict[int, int] = {}
    most_per_pr: dict[int, int] = {}
    most_overall = 0

    def slow(job: Job) -> RoundResult:
        nonlocal most_overall
        with lock:
            running[job.pr] = running.get(job.pr, 0) + 1
            most_per_pr[job.pr] = max(most_per_pr.get(job.pr, 0), running[job.pr])
            most_overall = max(most_overall, sum(running.values()))
        time.sleep(0.3)
        with lock:
            running[job.pr] -= 1
        return RoundResult("done", "ok", 1, job.head_sha)

    ids = [enqueue(runtime, f"d{i}", 1 + i % 2, f"{i:040x}") for i in range(8)]
    with consuming(runtime, slow, threads=4):
        wait_for(lambda: all(final(runtime, i) for i in ids), timeout=30, what="all jobs to finish")
    assert most_per_pr == {1: 1, 2: 1}
    assert most_overall == 2  # the two PRs did run side by side
    assert {j.state for j in runtime.book.list()} == {"done"}


def test_a_skipped_round_is_recorded_with_its_reason(runtime: Runtime) -> None:
    def moved(job: Job) -> RoundResult:
        return RoundResult("skipped", "the PR head moved on to bbbbbbbbbbbb; a newer job reviews it")

    job_id = enqueue(runtime, "d1", 1, "a" * 40)
    with consuming(runtime, moved):
        job = wait_for(lambda: final(runtime, job_id), timeout=20, what="the job to end")
    assert job.state == "skipped"
    assert "moved on" in (job.reason or "")


def test_at_start_the_worker_requeues_a_round_a_dead_worker_left_running(runtime: Runtime) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    job_id = enqueue(runtime, "d1", 1, "a" * 40)
    runtime.queue.huey.flush()  # the message went with the dead worker
    job = runtime.book.get(job_id)
    assert job is not None
    me = Worker(runtime.settings, runtime.book, runtime.queue, lambda j: RoundResult("done", "x"))
    host = me.owner.rsplit(":", 2)[0]
    claim = runtime.book.claim(
        job_id, job.dispatch, f"{host}:{dead.pid}:0000", lease_seconds=60, wait_seconds=1
    )
    assert claim.status == "run"
    seen: list[int] = []

    def rerun(job: Job) -> RoundResult:
        seen.append(job.attempts)
        return RoundResult("done", "round 1 published", 1, job.head_sha)

    with consuming(runtime, rerun):
        done = wait_for(lambda: final(runtime, job_id), timeout=20, what="the interrupted job to complete")
    assert done.state == "done"
    assert seen == [2]


def test_owner_is_dead() -> None:
    me = "box:100:aaaa"
    assert owner_is_dead("box:100:bbbb", me=me)  # our pid, an earlier incarnation
    assert not owner_is_dead("box:100:aaaa", me=me)
    assert not owner_is_dead("other-host:1:zzzz", me=me)  # judged by heartbeat instead
    gone = subprocess.Popen(["true"])
    gone.wait()
    assert owner_is_dead(f"box:{gone.pid}:cccc", me=me)
    with subprocess.Popen(["sleep", "5"]) as alive:
        assert not owner_is_dead(f"box:{alive.pid}:cccc", me=me)
        alive.kill()
    assert not owner_is_dead("garbage", me=me)


@pytest.mark.parametrize("attempts,expected", [(1, 0.2), (2, 0.4), (3, 0.8), (6, 1.0)])
def test_backoff_doubles_up_to_the_cap(runtime: Runtime, attempts: int, expected: float) -> None:
    worker = Worker(runtime.settings, runtime.book, runtime.queue, lambda j: RoundResult("done", "x"))
    delay = worker.backoff(attempts, GitHubError("502"))
    assert expected <= delay <= expected * 1.2
