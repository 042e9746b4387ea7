"""Webhook deliveries: each recorded once, turned into round jobs in the same transaction.

`Ledger` holds the engine and the per-PR transaction lock that deliveries and jobs share; `DeliveryIntake`
is the server's side (accept a delivery, create the jobs it asks for, skip duplicates). The worker's side,
the job state machine, is `reviewbot.service.jobs.JobBook`, which extends it.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from reviewbot.errors import StoreError
from reviewbot.service import counters
from reviewbot.service.events import BY_HEAD, Decision, RoundRequest
from reviewbot.service.job_records import Accepted, DeliveryRecord, Dispatch, utcnow
from reviewbot.store.store import rounds
from reviewbot.store.tables import commands, deliveries, jobs

__all__ = ["CANCELLED", "Ledger", "DeliveryIntake"]

# The start of a job's reason once its PR was closed (a running job keeps running until it asks).
CANCELLED = "cancelled:"

# The statements of the acknowledgement path, built once (bound parameters): building a statement
# costs more CPU than running it, and the webhook's answer waits for all of them.
_SEEN = sa.select(deliveries.c.outcome).where(deliveries.c.delivery_id == sa.bindparam("delivery_id"))
_SAME_PR = (jobs.c.repository == sa.bindparam("repository"), jobs.c.pr == sa.bindparam("pr"))
_QUEUED_FOR_HEAD = {
    has_head: sa.select(jobs.c.id).where(*_SAME_PR, head, jobs.c.state == "queued").limit(1)
    for has_head, head in (
        (True, jobs.c.head_sha == sa.bindparam("head_sha")),
        (False, jobs.c.head_sha.is_(None)),
    )
}
_JOB_FOR_HEAD = {
    has_head: sa.select(jobs.c.id, jobs.c.state)
    .where(*_SAME_PR, head, jobs.c.state.in_(("queued", "running", "done")))
    .order_by(jobs.c.id.desc())
    .limit(1)
    for has_head, head in (
        (True, jobs.c.head_sha == sa.bindparam("head_sha")),
        (False, jobs.c.head_sha.is_(None)),
    )
}
_ROUND_OF_HEAD = sa.select(rounds.c.round_index).where(
    rounds.c.repository == sa.bindparam("repository"),
    rounds.c.pr == sa.bindparam("pr"),
    rounds.c.head_sha == sa.bindparam("head_sha"),
)
_INSERT_JOB = sa.insert(jobs)
_INSERT_DELIVERY = sa.insert(deliveries)

_JOB_LOCK = 0x72626A62  # "rbjb"; paired with a hash of (repository, PR)


def _pr_key(repository: str, pr: int) -> int:
    return zlib.crc32(f"{repository}#{pr}".encode()) - (1 << 31)


class Ledger:
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


class DeliveryIntake(Ledger):
    """The server side: record a delivery once and queue the round jobs it asks for."""

    def accept(self, delivery_id: str, decision: Decision) -> Accepted:
        """Record a delivery once and create the jobs it asks for, in one transaction.

        A delivery id seen before changes nothing (GitHub redelivers on timeouts and on request), and
        neither does a comment command seen before under another delivery id (a replay): comments are
        keyed by id and edit time (`Decision.command_key`).
        A request for a head that already has a round, or a queued/running/done job, adds no job
        unless it is an explicit request (`force`) and nothing for it is queued yet.
        """
        try:
            return self._accept(delivery_id, decision)
        except IntegrityError:
            # A concurrent copy of the same delivery or comment committed first (PostgreSQL: no table lock).
            if decision.command_key is not None and self._seen_command(decision.command_key):
                return Accepted("duplicate_command", "comment command already received", (), ())
            return Accepted("duplicate_delivery", "delivery already received", (), ())

    def _by_head(self, decision: Decision) -> tuple[Decision, list[str]]:
        """`decision` with each BY_HEAD request's PR found by its head SHA (a re-run of a fork PR's
        check): the PR whose round or job had that head. Unknown heads are dropped, with a note."""
        if not any(r.pr == BY_HEAD for r in decision.requests):
            return decision, []
        kept: list[RoundRequest] = []
        notes: list[str] = []
        with self._tx() as conn:
            for r in decision.requests:
                if r.pr != BY_HEAD:
                    kept.append(r)
                    continue
                pr = _pr_of_head(conn, r.repository, str(r.head_sha))
                if pr is None:
                    notes.append(
                        f"no pull request of {r.repository} is known with head {str(r.head_sha)[:12]}"
                    )
                else:
                    kept.append(replace(r, pr=pr))
        found = tuple(kept)
        pr = found[0].pr if found else None
        kind = decision.kind if found else "ignored"
        reason = decision.reason if found else "; ".join(notes)
        return replace(decision, requests=found, pr=pr, kind=kind, reason=reason), notes

    def _accept(self, delivery_id: str, decision: Decision) -> Accepted:
        decision, head_notes = self._by_head(decision)
        locks = [(r.repository, r.pr) for r in decision.requests]
        if decision.kind == "cancel" and decision.repository is not None and decision.pr is not None:
            locks.append((decision.repository, decision.pr))
        with self._tx(*locks) as conn:
            seen = conn.execute(_SEEN, {"delivery_id": delivery_id}).scalar()
            if seen is not None:
                counters.bump(conn, "deliveries", {"event": decision.event, "outcome": "duplicate_delivery"})
                return Accepted("duplicate_delivery", f"delivery already received ({seen})", (), ())
            now = utcnow()
            created: list[Dispatch] = []
            notes: list[str] = list(head_notes) if decision.requests else []
            requests = decision.requests
            if decision.command_key is not None and requests:
                earlier = self._command(conn, decision.command_key)
                if earlier is not None:
                    notes.append(f"comment {decision.command_key} was received before (delivery {earlier})")
                    requests = ()
                else:
                    conn.execute(
                        sa.insert(commands).values(
                            command_key=decision.command_key,
                            repository=requests[0].repository,
                            pr=requests[0].pr,
                            delivery_id=delivery_id,
                            received_at=now,
                        )
                    )
            for request in requests:
                # A command with arguments (dismiss) is never merged into another job: it would be lost.
                dup = None if request.command is not None else self._duplicate(conn, request)
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
                    "command": request.command,
                    "state": "queued",
                    "attempts": 0,
                    "dispatch": 1,
                    "created_at": now,
                    "updated_at": now,
                }
                key = conn.execute(_INSERT_JOB, values).inserted_primary_key
                assert key is not None
                job_id = int(key[0])
                created.append(Dispatch(job_id, 1))
                notes.append(f"job {job_id} queued for {request.repository}#{request.pr}")
            if decision.kind == "cancel":
                notes.append(self._cancel(conn, decision, delivery_id, now))
            if decision.kind == "round" and decision.requests and not requests:
                outcome = "duplicate_command"
            elif decision.kind == "round":
                outcome = "queued" if created else "duplicate_round"
            elif decision.kind == "cancel":
                outcome = "cancelled"
            else:
                outcome = decision.kind  # ping | ignored
            detail = "; ".join(notes) if notes else decision.reason
            conn.execute(
                _INSERT_DELIVERY,
                {
                    "delivery_id": delivery_id,
                    "event": decision.event,
                    "action": decision.action,
                    "repository": decision.repository,
                    "pr": decision.pr,
                    "outcome": outcome,
                    "detail": detail[:2000],
                    "received_at": now,
                },
            )
            counters.bump(conn, "deliveries", {"event": decision.event, "outcome": outcome})
        return Accepted(outcome, detail, tuple(d.job_id for d in created), tuple(created))

    @staticmethod
    def _cancel(conn: Connection, decision: Decision, delivery_id: str, now: Any) -> str:
        """The PR was closed: its queued jobs end `skipped`, and a running one is told so in its reason
        (the round asks before it publishes: JobBook.cancelled) and publishes nothing."""
        why = f"{CANCELLED} the pull request was closed (delivery {delivery_id})"
        of_pr = (jobs.c.repository == decision.repository, jobs.c.pr == decision.pr)
        queued = conn.execute(
            sa.update(jobs)
            .where(*of_pr, jobs.c.state == "queued")
            .values(state="skipped", reason=why, owner=None, finished_at=now, updated_at=now)
        ).rowcount
        running = conn.execute(
            sa.update(jobs).where(*of_pr, jobs.c.state == "running").values(reason=why, updated_at=now)
        ).rowcount
        if queued:
            counters.bump(conn, "jobs_finished", {"state": "skipped"}, queued)
            counters.bump(conn, "jobs_cancelled", {"state": "queued"}, queued)
        if running:
            counters.bump(conn, "jobs_cancelled", {"state": "running"}, running)
        return f"closed: {queued or 0} queued job(s) cancelled, {running or 0} running job(s) told to publish nothing"

    @staticmethod
    def _command(conn: Connection, key: str) -> str | None:
        """The delivery that brought this comment command first, or None."""
        found = conn.execute(sa.select(commands.c.delivery_id).where(commands.c.command_key == key)).scalar()
        return None if found is None else str(found)

    def _seen_command(self, key: str) -> bool:
        with self._tx() as conn:
            return self._command(conn, key) is not None

    def _duplicate(self, conn: Connection, request: RoundRequest) -> str | None:
        params = {"repository": request.repository, "pr": request.pr, "head_sha": request.head_sha}
        has_head = request.head_sha is not None
        if request.force:
            queued = conn.execute(_QUEUED_FOR_HEAD[has_head], params).scalar()
            return None if queued is None else f"job {queued} is already queued for this head"
        existing = conn.execute(_JOB_FOR_HEAD[has_head], params).first()
        if existing is not None:
            return f"head {str(request.head_sha)[:12]} already has job {existing[0]} ({existing[1]})"
        round_index = conn.execute(_ROUND_OF_HEAD, params).scalar()
        if round_index is not None:
            return f"head {str(request.head_sha)[:12]} was reviewed in round {round_index}"
        return None

    def delivery(self, delivery_id: str) -> DeliveryRecord | None:
        """The recorded outcome of one delivery, or None."""
        with self._tx() as conn:
            row = conn.execute(sa.select(deliveries).where(deliveries.c.delivery_id == delivery_id)).first()
        return None if row is None else DeliveryRecord.from_row(row)


def _pr_of_head(conn: Connection, repository: str, head_sha: str) -> int | None:
    """The PR of `repository` that reviewbot reviewed (or queued) at `head_sha`, newest first."""
    found = conn.execute(
        sa.select(rounds.c.pr)
        .where(rounds.c.repository == repository, rounds.c.head_sha == head_sha)
        .order_by(rounds.c.id.desc())
        .limit(1)
    ).scalar()
    if found is None:
        found = conn.execute(
            sa.select(jobs.c.pr)
            .where(
                jobs.c.repository == repository,
                sa.or_(jobs.c.head_sha == head_sha, jobs.c.result_head == head_sha),
            )
            .order_by(jobs.c.id.desc())
            .limit(1)
        ).scalar()
    return None if found is None else int(found)
