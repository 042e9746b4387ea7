"""The jobs table on real SQLite and PostgreSQL: dedup, per-PR claims, retries, recovery."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import timedelta

import pytest
import sqlalchemy as sa

from reviewbot.service.events import Decision, RoundRequest
from reviewbot.service.jobs import JobBook, jobs_of_pr, jobs_table, utcnow
from reviewbot.settings import Settings
from reviewbot.store.store import Store, rounds
from reviewbot.store.tables import jobs

REPO = "acme/rtp-llm"
LEASE = 30.0


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, settings: Settings) -> Iterator[Store]:
    url = settings.db_url if request.param == "sqlite" else request.getfixturevalue("pg_url")
    s = Store.open(url)
    yield s
    s.close()


@pytest.fixture
def book(store: Store) -> JobBook:
    return JobBook(store.engine, max_attempts=3)


def wanted(pr: int, head: str | None, *, force: bool = False) -> Decision:
    request = RoundRequest(REPO, pr, head, 77, "pull_request.synchronize", force=force)
    return Decision("pull_request", "synchronize", "round", "test", (request,), REPO, pr)


def test_a_delivery_id_is_accepted_once(book: JobBook) -> None:
    first = book.accept("d1", wanted(1, "a" * 40))
    second = book.accept("d1", wanted(1, "b" * 40))  # same id, even with another payload
    assert first.outcome == "queued"
    assert second.outcome == "duplicate_delivery"
    assert len(book.list()) == 1
    counts = book.read_counters()["deliveries"]
    assert sorted(counts.values()) == [1.0, 1.0]


def test_a_head_gets_one_job_until_it_fails(book: JobBook) -> None:
    assert book.accept("d1", wanted(1, "a" * 40)).outcome == "queued"
    assert book.accept("d2", wanted(1, "a" * 40)).outcome == "duplicate_round"
    assert book.accept("d3", wanted(2, "a" * 40)).outcome == "queued"  # another PR
    (job,) = book.list(pr=1)
    claim = book.claim(job.id, job.dispatch, "h:1:x", lease_seconds=LEASE, wait_seconds=0.1)
    assert claim.job is not None
    book.finish(claim.job, "failed", "boom")
    assert book.accept("d4", wanted(1, "a" * 40)).outcome == "queued"  # a failed head may be retried


def test_a_head_that_already_has_a_round_gets_no_job(book: JobBook, store: Store) -> None:
    with store.engine.begin() as conn:
        conn.execute(
            sa.insert(rounds).values(
                repository=REPO,
                pr=1,
                round_index=1,
                base_sha="0" * 40,
                head_sha="a" * 40,
                merge_base="0" * 40,
                created_at=utcnow(),
                reviewed_at="2026-01-01T00:00:00Z",
                status="PASS",
                p0=0,
                p1=0,
                p2=0,
                p3=0,
                full_review=True,
                force_pushed=False,
                kpi={},
                report_markdown="",
                report_json="{}",
            )
        )
    accepted = book.accept("d1", wanted(1, "a" * 40))
    assert accepted.outcome == "duplicate_round"
    assert "round 1" in accepted.detail
    assert book.accept("d2", wanted(1, "a" * 40, force=True)).outcome == "queued"


def test_explicit_requests_rerun_but_do_not_pile_up(book: JobBook) -> None:
    assert book.accept("d1", wanted(1, None, force=True)).outcome == "queued"
    assert book.accept("d2", wanted(1, None, force=True)).outcome == "duplicate_round"
    (job,) = book.list()
    claim = book.claim(job.id, job.dispatch, "h:1:x", lease_seconds=LEASE, wait_seconds=0.1)
    assert claim.job is not None
    book.finish(claim.job, "done", "round 1")
    assert book.accept("d3", wanted(1, None, force=True)).outcome == "queued"


def test_one_running_job_per_pr(book: JobBook) -> None:
    a = book.accept("d1", wanted(1, "a" * 40)).dispatches[0]
    b = book.accept("d2", wanted(1, "b" * 40)).dispatches[0]
    c = book.accept("d3", wanted(2, "c" * 40)).dispatches[0]
    first = book.claim(a.job_id, a.dispatch, "h:1:x", lease_seconds=LEASE, wait_seconds=0.5)
    assert first.status == "run"
    assert first.job is not None and first.job.attempts == 1 and first.job.state == "running"
    blocked = book.claim(b.job_id, b.dispatch, "h:2:y", lease_seconds=LEASE, wait_seconds=0.5)
    assert blocked.status == "blocked"
    assert (
        blocked.retry is not None and blocked.retry.dispatch == b.dispatch + 1 and blocked.retry.delay == 0.5
    )
    # the old message of b is stale now; only the retry may run it
    assert book.claim(b.job_id, b.dispatch, "h:2:y", lease_seconds=LEASE, wait_seconds=0.5).status == "stale"
    assert book.claim(c.job_id, c.dispatch, "h:2:y", lease_seconds=LEASE, wait_seconds=0.5).status == "run"
    nxt = book.finish(first.job, "done", "round 1", round_index=1, result_head="a" * 40, duration=1.2)
    assert nxt is not None and nxt.job_id == b.job_id
    assert (
        book.claim(nxt.job_id, nxt.dispatch, "h:2:y", lease_seconds=LEASE, wait_seconds=0.5).status == "run"
    )
    done = book.get(a.job_id)
    assert done is not None and (done.state, done.round_index, done.result_head) == ("done", 1, "a" * 40)
    counters = book.read_counters()
    assert counters["round_duration_seconds_count"] == {"{}": 1.0}
    assert counters["round_duration_seconds_bucket"]['{"le":"2.5"}'] == 1.0
    assert '{"le":"1.0"}' not in counters["round_duration_seconds_bucket"]


def test_a_running_job_without_heartbeat_does_not_block_its_pr(book: JobBook, store: Store) -> None:
    a = book.accept("d1", wanted(1, "a" * 40)).dispatches[0]
    b = book.accept("d2", wanted(1, "b" * 40)).dispatches[0]
    assert book.claim(a.job_id, a.dispatch, "h:1:x", lease_seconds=LEASE, wait_seconds=0.1).status == "run"
    with store.engine.begin() as conn:
        old = utcnow() - timedelta(seconds=LEASE + 5)
        conn.execute(sa.update(jobs).where(jobs.c.id == a.job_id).values(heartbeat_at=old))
    assert book.claim(b.job_id, b.dispatch, "h:2:y", lease_seconds=LEASE, wait_seconds=0.1).status == "run"
    assert book.heartbeat("h:2:y") == 1


def test_retry_later_requeues_with_a_new_dispatch(book: JobBook) -> None:
    a = book.accept("d1", wanted(1, "a" * 40)).dispatches[0]
    claim = book.claim(a.job_id, a.dispatch, "h:1:x", lease_seconds=LEASE, wait_seconds=0.1)
    assert claim.job is not None
    retry, nxt = book.retry_later(claim.job, "attempt 1 failed: 502", 2.0)
    assert nxt is None
    assert retry is not None and retry.dispatch == a.dispatch + 1 and retry.delay == 2.0
    job = book.get(a.job_id)
    assert job is not None and job.state == "queued" and job.not_before is not None and job.owner is None
    assert "502" in (job.reason or "")
    assert book.claim(a.job_id, a.dispatch, "h:1:x", lease_seconds=LEASE, wait_seconds=0.1).status == "stale"
    again = book.claim(retry.job_id, retry.dispatch, "h:1:x", lease_seconds=LEASE, wait_seconds=0.1)
    assert again.job is not None and again.job.attempts == 2
    assert book.read_counters()["job_retries"] == {"{}": 1.0}


def test_recover_requeues_jobs_of_dead_workers_and_fails_repeat_offenders(book: JobBook) -> None:
    a = book.accept("d1", wanted(1, "a" * 40)).dispatches[0]
    b = book.accept("d2", wanted(2, "b" * 40)).dispatches[0]
    live = book.accept("d3", wanted(3, "c" * 40)).dispatches[0]
    book.claim(a.job_id, a.dispatch, "h:100:dead", lease_seconds=LEASE, wait_seconds=0.1)
    book.claim(b.job_id, b.dispatch, "h:101:dead", lease_seconds=LEASE, wait_seconds=0.1)
    book.claim(live.job_id, live.dispatch, "h:102:live", lease_seconds=LEASE, wait_seconds=0.1)
    with book.engine.begin() as conn:  # b has been interrupted as often as allowed already
        conn.execute(sa.update(jobs).where(jobs.c.id == b.job_id).values(attempts=3))
    sent = book.recover(
        lease_seconds=LEASE, dead_owner=lambda o: o.endswith(":dead"), resend_queued_older_than=None
    )
    assert [(d.job_id, d.dispatch) for d in sent.requeued] == [(a.job_id, a.dispatch + 1)]
    assert sent.resent == ()
    ja, jb, jl = book.get(a.job_id), book.get(b.job_id), book.get(live.job_id)
    assert ja is not None and ja.state == "queued" and "h:100:dead stopped" in (ja.reason or "")
    assert jb is not None and jb.state == "failed" and "interrupted 3 times" in (jb.reason or "")
    assert jl is not None and jl.state == "running"
    counters = book.read_counters()
    assert counters["jobs_recovered"] == {"{}": 1.0}
    assert counters["job_failures"] == {'{"kind":"interrupted"}': 1.0}


def test_recover_at_startup_resends_every_queued_job(book: JobBook) -> None:
    a = book.accept("d1", wanted(1, "a" * 40)).dispatches[0]
    sent = book.recover(lease_seconds=LEASE, dead_owner=lambda o: False, resend_queued_older_than=0.0)
    assert sent.requeued == ()
    assert [(d.job_id, d.dispatch) for d in sent.resent] == [(a.job_id, a.dispatch)]


def test_job_json_is_what_rounds_shows(book: JobBook) -> None:
    a = book.accept("d1", wanted(1, "a" * 40)).dispatches[0]
    claim = book.claim(a.job_id, a.dispatch, "h:1:x", lease_seconds=LEASE, wait_seconds=0.1)
    assert claim.job is not None
    book.finish(claim.job, "failed", "failed after 1 attempt(s): GitHubError: 502")
    (shown,) = [j.to_json() for j in book.list(repository=REPO, pr=1, states=["failed"])]
    assert shown["state"] == "failed"
    assert shown["reason"] == "failed after 1 attempt(s): GitHubError: 502"
    assert shown["finished_at"].endswith("+00:00")


def test_concurrent_copies_of_a_delivery_and_of_a_head_make_one_job(book: JobBook) -> None:
    barrier = threading.Barrier(8)
    outcomes: list[str] = []

    def send(n: int) -> None:
        barrier.wait()
        # four copies of one delivery, four other deliveries of the same head
        outcomes.append(book.accept("same" if n < 4 else f"other-{n}", wanted(1, "a" * 40)).outcome)

    threads = [threading.Thread(target=send, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes).count("queued") == 1
    assert len(book.list()) == 1


def test_jobs_of_a_pr_as_a_table(book: JobBook) -> None:
    a = book.accept("d1", wanted(1, "a" * 40)).dispatches[0]
    book.accept("d2", wanted(1, "b" * 40))
    book.accept("d3", wanted(2, "c" * 40))
    claim = book.claim(a.job_id, a.dispatch, "h:1:x", lease_seconds=LEASE, wait_seconds=0.1)
    assert claim.job is not None
    book.finish(claim.job, "failed", "failed after 5 attempt(s): GitHubError: 502")
    listed = jobs_of_pr(book.engine, REPO, 1)
    assert [(j.state, j.head_sha) for j in listed] == [("queued", "b" * 40), ("failed", "a" * 40)]
    lines = jobs_table(listed).splitlines()
    assert lines[0].split() == ["job", "state", "head", "attempts", "trigger", "updated", "reason"]
    assert lines[2].split()[:4] == [str(a.job_id), "failed", "a" * 12, "1"]
    assert lines[2].endswith("failed after 5 attempt(s): GitHubError: 502")


def test_a_failed_job_shows_in_reviewbot_rounds(
    book: JobBook, store: Store, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from reviewbot.cli import main

    book.accept("d-failed", wanted(9, "c" * 40))
    (job,) = book.list(pr=9)
    claim = book.claim(job.id, job.dispatch, "h:1:x", lease_seconds=LEASE, wait_seconds=0.1)
    assert claim.job is not None
    book.finish(claim.job, "failed", "GitHub answered 502 five times")
    assert main(["rounds", "--pr", "9", "--repo", REPO, "--db", store.url, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [(j["state"], j["reason"]) for j in doc["jobs"]] == [("failed", "GitHub answered 502 five times")]
    assert main(["rounds", "--pr", "9", "--repo", REPO, "--db", store.url]) == 0
    out = capsys.readouterr().out
    assert "jobs:" in out and "failed" in out and "502 five times" in out


def test_unsent_finds_queued_jobs_without_a_message_and_only_one_worker_resends(
    book: JobBook, store: Store
) -> None:
    held = book.accept("d1", wanted(1, "a" * 40)).dispatches[0]  # its message is in the queue
    lost = book.accept("d2", wanted(2, "b" * 40)).dispatches[0]  # its message was lost
    later = book.accept("d3", wanted(3, "c" * 40)).dispatches[0]  # a retry due in an hour, lost
    fresh = book.accept("d4", wanted(4, "d" * 40)).dispatches[0]  # just created: its message on its way
    running = book.accept("d5", wanted(5, "e" * 40)).dispatches[0]
    book.claim(running.job_id, running.dispatch, "h:1:x", lease_seconds=LEASE, wait_seconds=0.1)
    with store.engine.begin() as conn:
        old = utcnow() - timedelta(seconds=60)
        conn.execute(sa.update(jobs).where(jobs.c.id != fresh.job_id).values(updated_at=old))
        conn.execute(
            sa.update(jobs).where(jobs.c.id == later.job_id).values(not_before=utcnow() + timedelta(hours=1))
        )
    in_queue = {(held.job_id, held.dispatch), (lost.job_id, lost.dispatch - 1)}  # a stale copy of lost's
    first = book.unsent(in_queue, grace_seconds=5)
    assert sorted((d.job_id, d.dispatch) for d in first) == [(lost.job_id, 2), (later.job_id, 2)]
    delays = {d.job_id: d.delay for d in first}
    assert delays[lost.job_id] == 0.0 and 3500 < delays[later.job_id] <= 3600
    # Another worker sweeping within the grace finds nothing to send: those jobs changed just now.
    assert book.unsent(in_queue, grace_seconds=5) == []
    # Once the new messages are in the queue, nothing is missing even without a grace.
    now_queued = in_queue | {(d.job_id, d.dispatch) for d in [*first, fresh]}
    assert book.unsent(now_queued, grace_seconds=0) == []
    assert book.read_counters()["jobs_resent"] == {"{}": 2.0}


def test_refused_commands_are_counted_by_what_was_done(book: JobBook) -> None:
    # One reply per user, PR and hour (github.commands): the refusals held back are counted, not posted.
    for i, outcome in enumerate(["replied", "held", "held", "edited"]):
        accepted = book.accept(f"r{i}", wanted(1, None, force=True))
        (job_id,) = accepted.job_ids
        job = book.get(job_id)
        assert job is not None
        claim = book.claim(job.id, job.dispatch, "h:1:x", lease_seconds=LEASE, wait_seconds=0.1)
        assert claim.job is not None
        book.finish(claim.job, "skipped", "needs write permission", refusal=outcome)
    counts = book.read_counters()["command_refusals"]
    assert {json.loads(k)["outcome"]: v for k, v in counts.items()} == {"replied": 1, "held": 2, "edited": 1}
