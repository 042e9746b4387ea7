"""The records of the jobs table: a job, the messages that run it, and what claims return.

`jobs_table` renders jobs for people (`reviewbot rounds` shows failed and pending ones).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, NamedTuple, TypedDict

__all__ = [
    "Job",
    "JobJson",
    "Accepted",
    "Claim",
    "DeliveryRecord",
    "Dispatch",
    "Recovered",
    "utcnow",
    "as_utc",
    "jobs_table",
]


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def as_utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)


class Dispatch(NamedTuple):
    """A queue message to send: run job `job_id` if its dispatch is still `dispatch`, after `delay` s."""

    job_id: int
    dispatch: int
    delay: float = 0.0


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


class JobJson(TypedDict):
    """A job as `reviewbot rounds --format json` and the API show it (times in ISO 8601 UTC)."""

    id: int
    repository: str
    pr: int
    head_sha: str | None
    installation_id: int | None
    trigger: str
    delivery_id: str | None
    requested_by: str | None
    force: bool
    state: str
    attempts: int
    dispatch: int
    owner: str | None
    reason: str | None
    round_index: int | None
    result_head: str | None
    created_at: str
    updated_at: str
    not_before: str | None
    started_at: str | None
    heartbeat_at: str | None
    finished_at: str | None
    command: str | None


@dataclass(frozen=True)
class Job:
    """One requested round and what became of it."""

    id: int
    repository: str
    pr: int
    head_sha: str | None
    installation_id: int | None
    trigger: str
    delivery_id: str | None
    requested_by: str | None
    force: bool
    state: str
    attempts: int
    dispatch: int
    owner: str | None
    reason: str | None
    round_index: int | None
    result_head: str | None
    created_at: datetime
    updated_at: datetime
    not_before: datetime | None
    started_at: datetime | None
    heartbeat_at: datetime | None
    finished_at: datetime | None
    command: str | None = None  # JSON arguments of a comment command (`/reviewbot dismiss`)

    @classmethod
    def from_row(cls, row: Any) -> Job:
        m = dict(row._mapping) if hasattr(row, "_mapping") else dict(row)
        for key in ("created_at", "updated_at", "not_before", "started_at", "heartbeat_at", "finished_at"):
            m[key] = as_utc(m[key])
        m["force"] = bool(m["force"])
        return cls(**m)

    def to_json(self) -> JobJson:
        """The job as `reviewbot rounds --format json` and the API show it (times in ISO 8601 UTC)."""
        return JobJson(
            id=self.id,
            repository=self.repository,
            pr=self.pr,
            head_sha=self.head_sha,
            installation_id=self.installation_id,
            trigger=self.trigger,
            delivery_id=self.delivery_id,
            requested_by=self.requested_by,
            force=self.force,
            state=self.state,
            attempts=self.attempts,
            dispatch=self.dispatch,
            owner=self.owner,
            reason=self.reason,
            round_index=self.round_index,
            result_head=self.result_head,
            created_at=self.created_at.isoformat(),
            updated_at=self.updated_at.isoformat(),
            not_before=_iso(self.not_before),
            started_at=_iso(self.started_at),
            heartbeat_at=_iso(self.heartbeat_at),
            finished_at=_iso(self.finished_at),
            command=self.command,
        )


@dataclass(frozen=True)
class DeliveryRecord:
    """What the server recorded of one webhook delivery (the deliveries table)."""

    delivery_id: str
    event: str
    action: str | None
    repository: str | None
    pr: int | None
    outcome: (
        str  # queued | cancelled | ping | ignored | duplicate_delivery | duplicate_round | duplicate_command
    )
    detail: str
    received_at: datetime

    @classmethod
    def from_row(cls, row: Any) -> DeliveryRecord:
        m = row._mapping
        received = as_utc(m["received_at"])
        assert received is not None  # the column is NOT NULL
        return cls(
            str(m["delivery_id"]),
            str(m["event"]),
            m["action"],
            m["repository"],
            m["pr"],
            str(m["outcome"]),
            str(m["detail"]),
            received,
        )


class Accepted(NamedTuple):
    """What the server did with a delivery: `outcome` is recorded and counted by event."""

    outcome: str  # queued | duplicate_delivery | duplicate_round | ignored | ping
    detail: str
    job_ids: tuple[int, ...]
    dispatches: tuple[Dispatch, ...]


class Recovered(NamedTuple):
    """What `recover` found: interrupted jobs put back in the queue, and queued jobs whose message
    is sent again (a copy is harmless; a message lost with a dead worker is not)."""

    requeued: tuple[Dispatch, ...]
    resent: tuple[Dispatch, ...]


class Claim(NamedTuple):
    """The answer to "may I run this message's job now?"."""

    status: str  # run | blocked | stale
    job: Job | None
    retry: Dispatch | None = None  # for blocked: the message to send later


def jobs_table(jobs: Iterable[Job]) -> str:
    """Jobs as aligned text columns, one a line: id, state, head, attempts, trigger, reason."""
    rows = [("job", "state", "head", "attempts", "trigger", "updated", "reason")]
    for j in jobs:
        rows.append(
            (
                str(j.id),
                j.state,
                (j.result_head or j.head_sha or "(current)")[:12],
                str(j.attempts),
                j.trigger,
                j.updated_at.strftime("%Y-%m-%d %H:%M:%S"),
                (j.reason or "").replace("\n", " "),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    return "".join(
        "  ".join(c.ljust(w) for c, w in zip(r[:-1], widths, strict=True)) + "  " + r[-1] + "\n" for r in rows
    )
