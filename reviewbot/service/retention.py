"""Retention: what the service's tables may forget, and when.

Without it every delivery (each `check_run` event of other Apps' CI is one, and is ignored), every
finished job and every round stays for good. The worker calls `prune` every
`prune_interval_seconds`; the ages are settings (`keep_*_days`, 0 keeps a kind for good):

- deliveries that queued a round: `keep_deliveries_days` (GitHub redelivers for 3 days at most, so
  the default 30 keeps every redelivery a no-op), with the comment commands they brought;
- every other delivery (ignored, a duplicate, a ping): `keep_ignored_days`;
- finished jobs (done, skipped, failed): `keep_jobs_days` after they ended; queued and running
  jobs are never pruned;
- rounds: `keep_rounds_days`, except a PR's newest two, which the next round continues from (the
  newest) and a re-run of the newest head rebuilds from (the one before). Their findings go with
  them (ON DELETE CASCADE). `reviewbot rounds` lists what is kept, and says how many went before.

Deletes run in batches of `BATCH` rows, each its own transaction, so pruning a large backlog never
holds the database's write lock (SQLite) for long while deliveries are being accepted.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from reviewbot.errors import StoreError
from reviewbot.service import counters
from reviewbot.service.job_records import utcnow
from reviewbot.settings import Settings
from reviewbot.store.store import rounds
from reviewbot.store.tables import commands, deliveries, jobs

__all__ = ["Pruned", "prune", "BATCH", "ROUND_OUTCOMES"]

log = logging.getLogger(__name__)

BATCH = 500
# Delivery outcomes that created jobs: kept as long as `keep_deliveries_days`.
ROUND_OUTCOMES = ("queued",)
_FINISHED = ("done", "skipped", "failed")
_KEEP_NEWEST_ROUNDS = 2


@dataclass
class Pruned:
    """Rows removed, by table."""

    counts: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def describe(self) -> str:
        return ", ".join(f"{n} {table}" for table, n in self.counts.items() if n) or "nothing"


def _batched(engine: Engine, table: sa.Table, key: sa.Column[Any], where: sa.ColumnElement[bool]) -> int:
    """Delete the rows of `table` matching `where`, BATCH at a time; returns how many."""
    total = 0
    while True:
        with engine.begin() as conn:
            ids = conn.execute(sa.select(key).where(where).limit(BATCH)).scalars().all()
            if not ids:
                return total
            conn.execute(sa.delete(table).where(key.in_(ids)))
            counters.bump(conn, "pruned", {"table": table.name}, len(ids))
        total += len(ids)
        if len(ids) < BATCH:
            return total


def _rounds_where(cutoff: object) -> sa.ColumnElement[bool]:
    newer = rounds.alias("newer")
    # How many rounds of the same PR come after this one: the newest two have 0 and 1.
    after = (
        sa.select(sa.func.count())
        .select_from(newer)
        .where(
            newer.c.repository == rounds.c.repository,
            newer.c.pr == rounds.c.pr,
            newer.c.round_index > rounds.c.round_index,
        )
        .scalar_subquery()
    )
    return sa.and_(rounds.c.created_at < cutoff, after >= _KEEP_NEWEST_ROUNDS)


def prune(engine: Engine, settings: Settings) -> Pruned:
    """Remove what the retention settings no longer keep; returns what went. StoreError when the
    database refuses (the next interval tries again)."""
    now = utcnow()
    out = Pruned()

    def cutoff(days: float) -> object:
        return now - timedelta(days=days)

    try:
        if settings.keep_ignored_days > 0:
            out.counts["service_deliveries"] = _batched(
                engine,
                deliveries,
                deliveries.c.delivery_id,
                sa.and_(
                    deliveries.c.received_at < cutoff(settings.keep_ignored_days),
                    deliveries.c.outcome.not_in(ROUND_OUTCOMES),
                ),
            )
        if settings.keep_deliveries_days > 0:
            when = cutoff(settings.keep_deliveries_days)
            # Only deliveries that queued a round: the others keep to keep_ignored_days (0: for good),
            # even when that is longer than this.
            out.counts["service_deliveries"] = out.counts.get("service_deliveries", 0) + _batched(
                engine,
                deliveries,
                deliveries.c.delivery_id,
                sa.and_(deliveries.c.received_at < when, deliveries.c.outcome.in_(ROUND_OUTCOMES)),
            )
            out.counts["service_commands"] = _batched(
                engine, commands, commands.c.command_key, commands.c.received_at < when
            )
        if settings.keep_jobs_days > 0:
            out.counts["service_jobs"] = _batched(
                engine,
                jobs,
                jobs.c.id,
                sa.and_(
                    jobs.c.state.in_(_FINISHED),
                    jobs.c.finished_at < cutoff(settings.keep_jobs_days),
                ),
            )
        if settings.keep_rounds_days > 0:
            out.counts["rounds"] = _batched(
                engine, rounds, rounds.c.id, _rounds_where(cutoff(settings.keep_rounds_days))
            )
    except SQLAlchemyError as exc:
        reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        raise StoreError(f"pruning old rows failed: {reason}; the next interval tries again") from exc
    return out
