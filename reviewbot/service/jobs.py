"""The durable side of the queue: deliveries, round jobs and their states, in the rounds database.

The queue (huey) only carries `(job id, dispatch)` messages; this table is the truth. A message
whose dispatch number is not the job's current one, or whose job is no longer queued, does
nothing — so messages may be sent twice (recovery, lock waits) without a job ever running twice.

One round at a time per PR: a job is claimed only while no other job of its PR is `running` with
a fresh heartbeat. Claims are serialised per PR (SQLite: BEGIN IMMEDIATE; PostgreSQL: an advisory
transaction lock), so two workers never both see "nobody is running".
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from reviewbot.errors import StoreError
from reviewbot.service import counters
from reviewbot.service.events import Decision, RoundRequest
from reviewbot.service.job_records import (
    Accepted,
    Claim,
    Dispatch,
    Job,
    Recovered,
    as_utc,
    jobs_table,
    utcnow,
)
from reviewbot.store.store import rounds
from reviewbot.store.tables import deliveries, jobs

__all__ = [
    "Job",
    "JobBook",
    "Accepted",
    "Claim",
    "Dispatch",
    "Recovered",
    "utcnow",
    "jobs_table",
    "jobs_of_pr",
]

_JOB_LOCK = 0x72626A62  # "rbjb"; paired with a hash of (repository, PR)


def _pr_key(repository: str, pr: int) -> int:
    return zlib.crc32(f"{repository}#{pr}".encode()) - (1 << 31)


class JobBook:
    """Deliveries and jobs over the rounds store's engine (which migration 0002 extended)."""

    def __init__(self, engine: Engine, *, max_attempts: int = 5) -> None:
        self.engine = engine
        self.max_attempts = max_attempts

    @contextmanager
    def _tx(self, *locks: tuple[str, int]) -> Iterator[Connection]:
        """A transaction holding the per-PR lock of each (repository, PR) in `locks` (PostgreSQL;
        SQLite's BEGIN IMMEDIATE already makes every writing transaction exclusive)."""
        try:
            with self.engine.begin() as conn:
                if conn.dialect.name == "postgresql":
                    # Sorted, so two transactions wanting the same PRs never wait on each other.
                    for key in sorted({_pr_key(*lock) for lock in locks}):
                        conn.execute(
                            sa.text("SELECT pg_advisory_xact_lock(:a, :b)"), {"a": _JOB_LOCK, "b": key}
                        )
                yield conn
        except IntegrityError:
            raise
        except SQLAlchemyError as exc:
            reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
            raise StoreError(
                f"the jobs table failed: {reason}; check the database (REVIEWBOT_DB_URL) and retry"
            ) from exc

    # --- the server side ---------------------------------------------------------------------

    def accept(self, delivery_id: str, decision: Decision) -> Accepted:
        """Record a delivery once and create the jobs it asks for, in one transaction.

        A delivery id seen before changes nothing (GitHub redelivers on timeouts and on request).
        A request for a head that already has a round, or a queued/running/done job, adds no job
        unless it is an explicit request (`force`) and nothing for it is queued yet.
        """
        try:
            return self._accept(delivery_id, decision)
        except IntegrityError:
            # A concurrent copy of the same delivery committed first (PostgreSQL: no table lock).
            return Accepted("duplicate_delivery", "delivery already received", (), ())

    def _accept(self, delivery_id: str, decision: Decision) -> Accepted:
        with self._tx(*((r.repository, r.pr) for r in decision.requests)) as conn:
            seen = conn.execute(
                sa.select(deliveries.c.outcome).where(deliveries.c.delivery_id == delivery_id)
            ).scalar()
            if seen is not None:
                counters.bump(conn, "deliveries", {"event": decision.event, "outcome": "duplicate_delivery"})
                return Accepted("duplicate_delivery", f"delivery already received ({seen})", (), ())
            now = utcnow()
            created: list[Dispatch] = []
            notes: list[str] = []
            for request in decision.requests:
                dup = self._duplicate(conn, request)
                if dup is not None:
                    notes.append(dup)
                    continue
                values = {
                    "repository": request.repository,
                    "pr": request.pr,
                    "head_sha": request.head_sha,
                    "installation_id": request.installation_id,
                    "trigger": request.trigger,
                    "delivery_id": delivery_id,
                    "requested_by": request.requested_by,
                    "force": request.force,
                    "state": "queued",
                    "attempts": 0,
                    "dispatch": 1,
                    "created_at": now,
                    "updated_at": now,
                }
                key = conn.execute(sa.insert(jobs).values(**values)).inserted_primary_key
                assert key is not None
                job_id = int(key[0])
                created.append(Dispatch(job_id, 1))
                notes.append(f"job {job_id} queued for {request.repository}#{request.pr}")
            if decision.kind == "round":
                outcome = "queued" if created else "duplicate_round"
            else:
                outcome = decision.kind  # ping | ignored
            detail = "; ".join(notes) if notes else decision.reason
            conn.execute(
                sa.insert(deliveries).values(
                    delivery_id=delivery_id,
                    event=decision.event,
                    action=decision.action,
                    repository=decision.repository,
                    pr=decision.pr,
                    outcome=outcome,
                    detail=detail[:2000],
                    received_at=now,
                )
            )
            counters.bump(conn, "deliveries", {"event": decision.event, "outcome": outcome})
        return Accepted(outcome, detail, tuple(d.job_id for d in created), tuple(created))

    def _duplicate(self, conn: Connection, request: RoundRequest) -> str | None:
        same_pr = (jobs.c.repository == request.repository, jobs.c.pr == request.pr)
        head_match = (
            jobs.c.head_sha.is_(None) if request.head_sha is None else jobs.c.head_sha == request.head_sha
        )
        if request.force:
            queued = conn.execute(
                sa.select(jobs.c.id).where(*same_pr, head_match, jobs.c.state == "queued").limit(1)
            ).scalar()
            return None if queued is None else f"job {queued} is already queued for this head"
        existing = conn.execute(
            sa.select(jobs.c.id, jobs.c.state)
            .where(*same_pr, head_match, jobs.c.state.in_(("queued", "running", "done")))
            .order_by(jobs.c.id.desc())
            .limit(1)
        ).first()
        if existing is not None:
            return f"head {str(request.head_sha)[:12]} already has job {existing[0]} ({existing[1]})"
        round_index = conn.execute(
            sa.select(rounds.c.round_index).where(
                rounds.c.repository == request.repository,
                rounds.c.pr == request.pr,
                rounds.c.head_sha == request.head_sha,
            )
        ).scalar()
        if round_index is not None:
            return f"head {str(request.head_sha)[:12]} was reviewed in round {round_index}"
        return None

    # --- the worker side ---------------------------------------------------------------------

    def get(self, job_id: int) -> Job | None:
        with self._tx() as conn:
            row = conn.execute(sa.select(jobs).where(jobs.c.id == job_id)).first()
        return None if row is None else Job.from_row(row)

    def claim(
        self, job_id: int, dispatch: int, owner: str, *, lease_seconds: float, wait_seconds: float
    ) -> Claim:
        """Take the job for `owner` if the message is current and no other round of the PR runs.

        Blocked: the job stays queued and the returned `retry` message (a new dispatch number, so
        earlier copies go stale) should be sent after `wait_seconds`.
        """
        with self._tx() as conn:
            row = conn.execute(sa.select(jobs.c.repository, jobs.c.pr).where(jobs.c.id == job_id)).first()
        if row is None:
            return Claim("stale", None)
        now = utcnow()
        with self._tx((row[0], row[1])) as conn:
            job_row = conn.execute(sa.select(jobs).where(jobs.c.id == job_id)).first()
            job = Job.from_row(job_row)
            if job.state != "queued" or job.dispatch != dispatch:
                return Claim("stale", job)
            fresh = now - timedelta(seconds=lease_seconds)
            runner = conn.execute(
                sa.select(jobs.c.id)
                .where(
                    jobs.c.repository == job.repository,
                    jobs.c.pr == job.pr,
                    jobs.c.state == "running",
                    jobs.c.id != job.id,
                    jobs.c.heartbeat_at >= fresh,
                )
                .limit(1)
            ).scalar()
            if runner is not None:
                conn.execute(
                    sa.update(jobs)
                    .where(jobs.c.id == job.id)
                    .values(dispatch=job.dispatch + 1, updated_at=now)
                )
                return Claim("blocked", job, Dispatch(job.id, job.dispatch + 1, wait_seconds))
            conn.execute(
                sa.update(jobs)
                .where(jobs.c.id == job.id)
                .values(
                    state="running",
                    owner=owner,
                    attempts=job.attempts + 1,
                    started_at=now,
                    heartbeat_at=now,
                    updated_at=now,
                    not_before=None,
                )
            )
            claimed = Job.from_row(conn.execute(sa.select(jobs).where(jobs.c.id == job.id)).first())
        return Claim("run", claimed)

    def heartbeat(self, owner: str) -> int:
        """Refresh the heartbeat of every job `owner` is running; returns how many."""
        now = utcnow()
        with self._tx() as conn:
            result = conn.execute(
                sa.update(jobs)
                .where(jobs.c.owner == owner, jobs.c.state == "running")
                .values(heartbeat_at=now)
            )
        return int(result.rowcount or 0)

    def finish(
        self,
        job: Job,
        state: str,
        reason: str,
        *,
        round_index: int | None = None,
        result_head: str | None = None,
        duration: float | None = None,
        api: Mapping[str, int] | None = None,
    ) -> Dispatch | None:
        """End a running job (done / skipped / failed) and return the next queued job of its PR to
        start at once, if any (the others of the PR were waiting for this one)."""
        now = utcnow()
        with self._tx((job.repository, job.pr)) as conn:
            result = conn.execute(
                sa.update(jobs)
                .where(jobs.c.id == job.id, jobs.c.owner == job.owner, jobs.c.state == "running")
                .values(
                    state=state,
                    reason=reason[:4000],
                    round_index=round_index,
                    result_head=result_head,
                    finished_at=now,
                    updated_at=now,
                )
            )
            if result.rowcount:
                counters.bump(conn, "jobs_finished", {"state": state})
                if state == "failed":
                    counters.bump(conn, "job_failures", {"kind": "exhausted"})
                if duration is not None and state == "done":
                    counters.observe(conn, "round_duration_seconds", duration)
                for kind, n in (api or {}).items():
                    if n:
                        counters.bump(conn, "github_api_calls", {"kind": kind}, n)
            return self._next_of_pr(conn, job.repository, job.pr, now)

    def _next_of_pr(self, conn: Connection, repository: str, pr: int, now: datetime) -> Dispatch | None:
        row = conn.execute(
            sa.select(jobs.c.id, jobs.c.dispatch)
            .where(
                jobs.c.repository == repository,
                jobs.c.pr == pr,
                jobs.c.state == "queued",
                sa.or_(jobs.c.not_before.is_(None), jobs.c.not_before <= now),
            )
            .order_by(jobs.c.id)
            .limit(1)
        ).first()
        return None if row is None else Dispatch(int(row[0]), int(row[1]))

    def retry_later(self, job: Job, reason: str, delay: float) -> tuple[Dispatch | None, Dispatch | None]:
        """Put a job whose attempt failed transiently back in the queue for after `delay` seconds.

        Returns (its delayed message, the next queued job of the PR to start meanwhile)."""
        now = utcnow()
        with self._tx((job.repository, job.pr)) as conn:
            result = conn.execute(
                sa.update(jobs)
                .where(jobs.c.id == job.id, jobs.c.owner == job.owner, jobs.c.state == "running")
                .values(
                    state="queued",
                    owner=None,
                    dispatch=job.dispatch + 1,
                    reason=reason[:4000],
                    not_before=now + timedelta(seconds=delay),
                    updated_at=now,
                )
            )
            if not result.rowcount:
                return None, None
            counters.bump(conn, "job_retries")
            nxt = self._next_of_pr(conn, job.repository, job.pr, now)
        return Dispatch(job.id, job.dispatch + 1, delay), nxt

    def recover(
        self,
        *,
        lease_seconds: float,
        dead_owner: Callable[[str], bool],
        resend_queued_older_than: float | None,
    ) -> Recovered:
        """Re-queue interrupted jobs; returns the messages to send.

        Interrupted: `running` with a heartbeat older than the lease, or owned by a worker known to
        be dead. A job interrupted `max_attempts` times is failed instead (something in it kills
        workers). With `resend_queued_older_than`, queued jobs untouched for that long get their
        message sent again (it may have been lost between the commit and the enqueue).
        """
        now = utcnow()
        stale_before = now - timedelta(seconds=lease_seconds)
        out: list[Dispatch] = []
        resent: list[Dispatch] = []
        with self._tx() as conn:
            running = [
                Job.from_row(r) for r in conn.execute(sa.select(jobs).where(jobs.c.state == "running"))
            ]
            for job in running:
                dead = job.owner is not None and dead_owner(job.owner)
                if not dead and job.heartbeat_at is not None and job.heartbeat_at >= stale_before:
                    continue
                why = (
                    f"worker {job.owner} stopped during the round"
                    if dead
                    else "the worker stopped sending heartbeats"
                )
                if job.attempts >= self.max_attempts:
                    state, values = (
                        "failed",
                        {"reason": f"interrupted {job.attempts} times; last: {why}", "finished_at": now},
                    )
                    counters.bump(conn, "job_failures", {"kind": "interrupted"})
                    counters.bump(conn, "jobs_finished", {"state": "failed"})
                else:
                    state, values = "queued", {"reason": f"re-queued: {why}", "dispatch": job.dispatch + 1}
                    counters.bump(conn, "jobs_recovered")
                result = conn.execute(
                    sa.update(jobs)
                    .where(jobs.c.id == job.id, jobs.c.state == "running", jobs.c.dispatch == job.dispatch)
                    .values(state=state, owner=None, updated_at=now, **values)
                )
                if result.rowcount and state == "queued":
                    out.append(Dispatch(job.id, job.dispatch + 1))
            if resend_queued_older_than is not None:
                cutoff = now - timedelta(seconds=resend_queued_older_than)
                queued = conn.execute(
                    sa.select(jobs.c.id, jobs.c.dispatch, jobs.c.not_before).where(
                        jobs.c.state == "queued", jobs.c.updated_at <= cutoff
                    )
                ).all()
                seen = {d.job_id for d in out}
                for job_id, dispatch, not_before in queued:
                    if job_id in seen:
                        continue
                    wait = max(((as_utc(not_before) or now) - now).total_seconds(), 0.0)
                    resent.append(Dispatch(int(job_id), int(dispatch), wait))
        return Recovered(tuple(out), tuple(resent))

    # --- reads for commands and metrics ------------------------------------------------------

    def list(
        self,
        repository: str | None = None,
        pr: int | None = None,
        states: Sequence[str] | None = None,
        limit: int = 200,
    ) -> list[Job]:
        """Jobs, newest first, optionally of one repository / PR / set of states."""
        query = sa.select(jobs).order_by(jobs.c.id.desc()).limit(limit)
        if repository is not None:
            query = query.where(jobs.c.repository == repository)
        if pr is not None:
            query = query.where(jobs.c.pr == pr)
        if states:
            query = query.where(jobs.c.state.in_(list(states)))
        with self._tx() as conn:
            return [Job.from_row(r) for r in conn.execute(query)]

    def counts_by_state(self) -> dict[str, int]:
        with self._tx() as conn:
            rows = conn.execute(sa.select(jobs.c.state, sa.func.count()).group_by(jobs.c.state)).all()
        return {str(state): int(n) for state, n in rows}

    def read_counters(self) -> dict[str, dict[str, float]]:
        """Every shared counter (see counters.py): name -> labels key -> value."""
        with self._tx() as conn:
            return counters.read_all(conn)

    def ping(self) -> None:
        """Raise StoreError unless the database answers."""
        with self._tx() as conn:
            conn.execute(sa.text("SELECT 1"))

    def delivery(self, delivery_id: str) -> dict[str, Any] | None:
        """The recorded outcome of one delivery, or None."""
        with self._tx() as conn:
            row = conn.execute(sa.select(deliveries).where(deliveries.c.delivery_id == delivery_id)).first()
        return None if row is None else dict(row._mapping)


def jobs_of_pr(engine: Engine, repository: str, pr: int) -> list[Job]:
    """The PR's round jobs, newest first (what `reviewbot rounds` lists next to the rounds: failed
    jobs with their reasons, and those still queued or running)."""
    return JobBook(engine).list(repository=repository, pr=pr)
