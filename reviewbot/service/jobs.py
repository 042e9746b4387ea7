"""The durable side of the queue: round jobs and their states, in the rounds database (deliveries:
`reviewbot.service.deliveries`).

The queue (huey) only carries `(job id, dispatch)` messages; this table is the truth. A message
whose dispatch number is not the job's current one, or whose job is no longer queued, does
nothing — so messages may be sent twice (recovery, lock waits) without a job ever running twice.

One round at a time per PR: a job is claimed only while no other job of its PR is `running` with
a fresh heartbeat. Claims are serialised per PR (SQLite: BEGIN IMMEDIATE; PostgreSQL: an advisory
transaction lock), so two workers never both see "nobody is running".
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import datetime, timedelta

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from reviewbot.service import counters
from reviewbot.service.deliveries import CANCELLED, DeliveryIntake
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
from reviewbot.store.tables import jobs

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


class JobBook(DeliveryIntake):
    """The job state machine (claim, heartbeat, finish, retry, recover) on top of the delivery intake."""

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

    def cancelled(self, job_id: int) -> str:
        """Why the running job `job_id` must publish nothing (its PR was closed while it ran), or ""."""
        with self._tx() as conn:
            row = conn.execute(sa.select(jobs.c.state, jobs.c.reason).where(jobs.c.id == job_id)).first()
        if row is None:
            return ""
        state, reason = row
        return str(reason) if state == "running" and str(reason or "").startswith(CANCELLED) else ""

    def heartbeat(self, owner: str, job_ids: Collection[int] | None = None) -> int:
        """Refresh the heartbeat of the jobs `owner` is running (only `job_ids`, when given: a job
        whose round has ended must not look alive while its outcome waits to be written); returns
        how many."""
        if job_ids is not None and not job_ids:
            return 0
        now = utcnow()
        query = sa.update(jobs).where(jobs.c.owner == owner, jobs.c.state == "running")
        if job_ids is not None:
            query = query.where(jobs.c.id.in_(sorted(job_ids)))
        with self._tx() as conn:
            result = conn.execute(query.values(heartbeat_at=now))
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
        refusal: str = "",
    ) -> Dispatch | None:
        """End a running job (done / skipped / failed) and return the next queued job of its PR to
        start at once, if any (the others of the PR were waiting for this one). `refusal`: what a
        refused command did (counted as `command_refusals`)."""
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
                if refusal:
                    counters.bump(conn, "command_refusals", {"outcome": refusal})
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

    def unsent(self, messages: Collection[tuple[int, int]], *, grace_seconds: float) -> list[Dispatch]:
        """Queued jobs whose current message is not among `messages` (what the queue holds, as
        (job id, dispatch) pairs): the queue lost it (Redis restarted empty, a send that failed).

        Each gets a new dispatch number, taken by a conditional update, so of several workers that
        notice the same loss only one sends its message, and any late copy of the old one goes
        stale. Jobs changed in the last `grace_seconds` are left alone: their message may be on
        its way (the server commits a job before it enqueues it).
        """
        now = utcnow()
        cutoff = now - timedelta(seconds=grace_seconds)
        present = set(messages)
        out: list[Dispatch] = []
        with self._tx() as conn:
            queued = conn.execute(
                sa.select(jobs.c.id, jobs.c.dispatch, jobs.c.not_before).where(
                    jobs.c.state == "queued", jobs.c.updated_at <= cutoff
                )
            ).all()
            for job_id, dispatch, not_before in queued:
                if (int(job_id), int(dispatch)) in present:
                    continue
                taken = conn.execute(
                    sa.update(jobs)
                    .where(jobs.c.id == job_id, jobs.c.state == "queued", jobs.c.dispatch == dispatch)
                    .values(dispatch=dispatch + 1, updated_at=now)
                )
                if taken.rowcount:
                    wait = max(((as_utc(not_before) or now) - now).total_seconds(), 0.0)
                    out.append(Dispatch(int(job_id), int(dispatch) + 1, wait))
            if out:
                counters.bump(conn, "jobs_resent", amount=len(out))
        return out

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


def jobs_of_pr(engine: Engine, repository: str, pr: int) -> list[Job]:
    """The PR's round jobs, newest first (what `reviewbot rounds` lists next to the rounds: failed
    jobs with their reasons, and those still queued or running)."""
    return JobBook(engine).list(repository=repository, pr=pr)
