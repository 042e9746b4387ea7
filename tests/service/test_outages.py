"""Store and queue outages with the real worker and huey's consumer (issue 15 items 11 and 12).

The database is a private PostgreSQL cluster the test stops and starts; the queue in the Redis test
is a private redis-server restarted without its data (tests/service/outage.py).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from reviewbot.service.app import create_app
from reviewbot.service.jobs import Job
from reviewbot.service.runtime import Runtime
from reviewbot.service.worker import RoundResult
from reviewbot.settings import Settings
from reviewbot.store.store import Store
from tests.service.e2e import PR, REPO, app_stack
from tests.service.helpers import ServerThread, deliver, pull_request_event, wait_for
from tests.service.outage import PrivatePostgres, PrivateRedis
from tests.service.test_worker import consuming, enqueue, final

pytestmark = pytest.mark.postgres


@pytest.fixture(scope="module")
def private_pg() -> Iterator[PrivatePostgres]:
    pg = PrivatePostgres()
    yield pg
    pg.close()


@pytest.fixture
def pg_runtime(settings: Settings, private_pg: PrivatePostgres) -> Iterator[Runtime]:
    """The worker's runtime on the private cluster (emptied first), the queue on SQLite."""
    with Store.open(private_pg.url) as store, store.engine.begin() as conn:
        conn.exec_driver_sql("TRUNCATE service_jobs, service_deliveries, service_metrics RESTART IDENTITY")
    rt = Runtime.open(settings.with_(db_url=private_pg.url))
    yield rt
    if not _up(private_pg):
        private_pg.start()
    rt.close()


def _up(pg: PrivatePostgres) -> bool:
    import socket

    try:
        with socket.create_connection(("127.0.0.1", pg.port), timeout=0.5):
            return True
    except OSError:
        return False


def _outage(pg: PrivatePostgres, seconds: float) -> threading.Thread:
    """Stop the database now and start it again `seconds` later (in a thread)."""
    pg.stop()

    def later() -> None:
        time.sleep(seconds)
        pg.start()

    t = threading.Thread(target=later, daemon=True)
    t.start()
    return t


def test_a_store_outage_while_the_round_records_ends_the_attempt_retryable_and_the_retry_completes(
    pg_runtime: Runtime, private_pg: PrivatePostgres
) -> None:
    """The round published, then the store went away before it was recorded: the attempt ends as a
    retry (written when the store is back), not `running` for good; the retry runs the round again."""
    lease = pg_runtime.settings.job_lease_seconds
    attempts: list[int] = []
    back: list[threading.Thread] = []

    def round_fn(job: Job) -> RoundResult:
        attempts.append(job.attempts)
        if job.attempts == 1:
            back.append(_outage(private_pg, 2 * lease))  # longer than the lease
            with Store.open(private_pg.url):  # recording the round: the store refuses
                pass
        return RoundResult("done", f"round 1 published (attempt {job.attempts})", 1, job.head_sha)

    with consuming(pg_runtime, round_fn, threads=2) as worker:
        a = enqueue(pg_runtime, "d1", 7, "a" * 40)
        wait_for(lambda: back, timeout=30, what="the outage")
        back[0].join()
        started = time.monotonic()
        job = wait_for(lambda: final(pg_runtime, a), timeout=10 * lease, what="the job to end")
        waited = time.monotonic() - started
        assert worker._owed == []
    assert (job.state, job.attempts, attempts) == ("done", 2, [1, 2]), job.reason
    assert job.reason == "round 1 published (attempt 2)"
    # The outcome was written within a few heartbeats of the store's return, not after the lease.
    assert waited < lease + 2, waited
    print(
        f"\nstore outage {2 * lease:.0f} s during recording: job done {waited:.1f} s after the store came back"
    )


def test_an_outcome_the_store_refused_is_written_when_it_is_back_and_a_waiting_job_does_not_spin(
    pg_runtime: Runtime, private_pg: PrivatePostgres
) -> None:
    """The round finished but the store was down when its `done` was written: no re-run, `done` is
    written once the store answers; the PR's next job, blocked meanwhile, is sent a bounded number
    of times (doubling waits; the ending round sends it), not every lock_retry_seconds."""
    lease = pg_runtime.settings.job_lease_seconds
    release = threading.Event()
    calls: list[int] = []
    back: list[threading.Thread] = []

    def round_fn(job: Job) -> RoundResult:
        calls.append(job.id)
        if len(calls) == 1:
            release.wait(30)  # job b is queued and blocked by now
            back.append(_outage(private_pg, 2 * lease))
        return RoundResult("done", f"job {job.id} done", 1, job.head_sha)

    with consuming(pg_runtime, round_fn, threads=2) as worker:
        a = enqueue(pg_runtime, "d1", 7, "a" * 40)
        wait_for(lambda: calls, timeout=30, what="round a to start")
        b = enqueue(pg_runtime, "d2", 7, "b" * 40)
        time.sleep(4 * pg_runtime.settings.lock_retry_seconds)
        release.set()
        wait_for(lambda: back, timeout=30, what="the outage")
        back[0].join()
        ja = wait_for(lambda: final(pg_runtime, a), timeout=10 * lease, what="job a to end")
        jb = wait_for(lambda: final(pg_runtime, b), timeout=10 * lease, what="job b to end")
        assert worker._owed == []
    assert (ja.state, ja.attempts) == ("done", 1), ja.reason
    assert (jb.state, jb.attempts) == ("done", 1), jb.reason
    assert calls == [a, b]  # a's round ran once
    # Blocked for a few seconds plus an outage of 2 leases: before, one dispatch per 0.2 s (~50).
    assert jb.dispatch <= 8, jb.dispatch
    print(f"\nblocked job sent {jb.dispatch} time(s) during the round and the outage")


@pytest.mark.redis
def test_messages_lost_with_redis_are_sent_again_within_a_few_heartbeats(settings: Settings) -> None:
    redis = PrivateRedis()
    try:
        rt = Runtime.open(settings.with_(queue_url=redis.url, queue_name="outage"))
        try:
            _lost_messages(rt, redis.restart_empty)
        finally:
            rt.close()
    finally:
        redis.close()


def _final_of(rt: Runtime, job_id: int) -> Callable[[], Job | None]:
    return lambda: final(rt, job_id)


def _lost_messages(rt: Runtime, lose: Callable[[], None]) -> None:
    lease = rt.settings.job_lease_seconds
    hold = threading.Event()
    ran: list[int] = []

    def round_fn(job: Job) -> RoundResult:
        ran.append(job.id)
        if len(ran) == 1:
            hold.wait(30)
        return RoundResult("done", "ok", 1, job.head_sha)

    with consuming(rt, round_fn, threads=1):
        first = enqueue(rt, "d0", 1, "0" * 40)
        wait_for(lambda: ran, timeout=30, what="the first round to start")
        waiting = [enqueue(rt, f"d{i}", i, str(i) * 40) for i in (2, 3, 4)]
        assert rt.queue.pending() == 3
        lose()  # the three messages are gone; the jobs are queued in the store
        assert rt.queue.pending() == 0
        lost_at = time.monotonic()
        hold.set()
        wait_for(lambda: final(rt, first), timeout=30, what="the first job")
        for job_id in waiting:
            job = wait_for(_final_of(rt, job_id), timeout=5 * lease, what=f"job {job_id}")
            assert job.state == "done"
        took = time.monotonic() - lost_at
    counters = rt.book.read_counters()
    assert counters["jobs_resent"] == {"{}": 3.0}
    # Before: queued jobs were re-sent after 10 x the lease (30 s here; 10 min by default). Now on
    # the next heartbeat (a quarter lease); the bound leaves room for a loaded machine.
    assert took < 5 * lease, took
    print(f"\nqueue lost 3 messages: all 3 jobs done {took:.1f} s later (lease {lease:.0f} s)")


def test_a_store_outage_while_an_app_round_publishes_gives_one_comment_review_and_check_run(
    settings: Settings, private_pg: PrivatePostgres, tmp_path: Path
) -> None:
    """The whole App (fake GitHub, server, a worker process) on the private cluster, stopped while
    the round creates its check run: the attempt ends retryable, the retry finds the comment, the
    review and the check run it published, and records the round."""
    with Store.open(private_pg.url) as store, store.engine.begin() as conn:
        conn.exec_driver_sql(
            "TRUNCATE service_jobs, service_deliveries, service_metrics, rounds RESTART IDENTITY CASCADE"
        )
    lease = settings.job_lease_seconds
    with app_stack(settings.with_(db_url=private_pg.url), tmp_path, as_app=True) as stack:
        hold = stack.fake.inject(kind="delay", operation="checks/create", delay=2.0, times=1)
        stack.start_worker()
        assert stack.push(stack.remote.round1, action="opened") == "queued"
        wait_for(lambda: hold.total_fired == 1, timeout=60, what="the round to create its check run")
        _outage(private_pg, 2 * lease).join()
        (job,) = stack.wait_settled(timeout=60)
        head = stack.remote.round1
        assert (job.state, job.attempts, job.round_index) == ("done", 2, 1), job.reason
        assert len(stack.bot_comments()) == 1
        assert len(stack.fake.calls("issues/create-comment")) == 1
        assert len([r for r in stack.fake.reviews(REPO, PR) if r.commit_id == head]) <= 1
        assert len(stack.fake.check_runs(REPO, head)) == 1
        assert [r.round_index for r in stack.rounds()] == [1]
        log = stack.worker_log(0)
        assert "the store refused its outcome" in log and "its outcome is recorded now" in log


def test_a_delivery_during_a_store_outage_is_refused_with_503_and_its_redelivery_is_accepted(
    pg_runtime: Runtime, private_pg: PrivatePostgres
) -> None:
    """Nothing is acknowledged that is not recorded: 503 while the store is down (GitHub does not
    retry by itself; the operator redelivers, docs/reliability.md), then the same delivery id is
    accepted once the store is back, and a second redelivery changes nothing."""
    app = create_app(pg_runtime.settings, pg_runtime.book, pg_runtime.queue)
    event = pull_request_event("synchronize", REPO, PR, "e" * 40)
    with ServerThread(app) as server:
        private_pg.stop()
        try:
            refused = deliver(server.url, "pull_request", event, delivery="during-outage")
        finally:
            private_pg.start()
        assert refused.status_code == 503
        assert "redeliver" in refused.text
        again = deliver(server.url, "pull_request", event, delivery="during-outage")
        assert again.status_code == 202 and again.json()["outcome"] == "queued"
        twice = deliver(server.url, "pull_request", event, delivery="during-outage")
        assert twice.json()["outcome"] == "duplicate_delivery"
    assert [j.head_sha for j in pg_runtime.book.list(repository=REPO, pr=PR)] == ["e" * 40]


@pytest.mark.redis
def test_a_delivery_while_redis_is_down_is_recorded_and_runs_once_redis_is_back(settings: Settings) -> None:
    """The server records the job and answers 202 even when it cannot enqueue (the store is the
    truth); the worker's heartbeat sends the message once Redis is back."""
    redis = PrivateRedis()
    try:
        rt = Runtime.open(settings.with_(queue_url=redis.url, queue_name="outage"))
        ran: list[int] = []

        def round_fn(job: Job) -> RoundResult:
            ran.append(job.id)
            return RoundResult("done", "ok", 1, job.head_sha)

        try:
            app = create_app(rt.settings, rt.book, rt.queue)
            with ServerThread(app) as server, consuming(rt, round_fn, threads=1):
                redis.stop()
                answer = deliver(
                    server.url, "pull_request", pull_request_event("synchronize", REPO, PR, "f" * 40)
                )
                assert answer.status_code == 202, answer.text
                (job_id,) = answer.json()["jobs"]
                time.sleep(2 * rt.settings.job_lease_seconds)  # Redis stays down a while
                assert ran == []
                redis.start()
                back = time.monotonic()
                job = wait_for(_final_of(rt, job_id), timeout=30, what="the job to run")
                took = time.monotonic() - back
        finally:
            rt.close()
    finally:
        redis.close()
    assert job.state == "done" and ran == [job_id]
    print(f"\nenqueue failed while Redis was down: the job ran {took:.1f} s after Redis came back")
