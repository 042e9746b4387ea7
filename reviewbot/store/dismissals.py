"""Dismissed findings: which finding of a PR a maintainer set aside, why, who and when.

A dismissal is keyed by (repository, PR, fingerprint), so it holds in every later round for as
long as the finding keeps its fingerprint (rule, file and normalised anchor); a changed anchor is a
new finding, which is not dismissed. Rounds read them (`dismissals_of`) and put each on its finding
(`Finding.dismissal`), which is then shown with its reason and does not block. Created by migration
0004 (this module mirrors it; tests/rounds/test_dismiss.py compares the two).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timezone

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from reviewbot.errors import StoreError, UsageError
from reviewbot.model.finding import Dismissal, Finding
from reviewbot.store.db import utc

__all__ = ["metadata", "dismissals", "dismissals_of", "record_dismissal", "match_prefix", "MAX_REASON"]

metadata = sa.MetaData()
MAX_REASON = 500  # characters: a reason is a sentence, shown in the report next to the finding
_PREFIX = re.compile(r"[0-9a-f]{4,64}")

dismissals = sa.Table(
    "dismissals",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("repository", sa.String(512), nullable=False),
    sa.Column("pr", sa.Integer, nullable=False),
    sa.Column("fingerprint", sa.String(64), nullable=False),
    sa.Column("rule", sa.String(128), nullable=False),
    sa.Column("reason", sa.Text, nullable=False),
    sa.Column("dismissed_by", sa.String(255), nullable=False),
    sa.Column("dismissed_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("source", sa.String(16), nullable=False),  # "cli" | "comment"
    sa.UniqueConstraint("repository", "pr", "fingerprint", name="uq_dismissals_pr_fingerprint"),
)


def _iso(value: datetime) -> str:
    return utc(value).strftime("%Y-%m-%dT%H:%M:%SZ")


def _failed(exc: SQLAlchemyError) -> StoreError:
    reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
    return StoreError(f"the dismissals table failed: {reason}; check the database and retry")


def dismissals_of(engine: Engine, repository: str, pr: int) -> dict[str, Dismissal]:
    """The PR's dismissals by fingerprint."""
    query = sa.select(dismissals).where(dismissals.c.repository == repository, dismissals.c.pr == pr)
    try:
        with engine.connect() as conn:
            rows = conn.execute(query).mappings().all()
    except SQLAlchemyError as exc:
        raise _failed(exc) from exc
    return {
        str(r["fingerprint"]): Dismissal(str(r["reason"]), str(r["dismissed_by"]), _iso(r["dismissed_at"]))
        for r in rows
    }


def record_dismissal(
    engine: Engine,
    repository: str,
    pr: int,
    finding: Finding,
    *,
    reason: str,
    by: str,
    source: str,
    now: datetime | None = None,
) -> Dismissal:
    """Dismiss `finding` of the PR (a second dismissal of it replaces the reason, who and when)."""
    reason = " ".join(reason.split())[:MAX_REASON]
    if not reason:
        raise UsageError("a dismissal needs a reason (say why the finding does not apply)")
    at = (now or datetime.now(timezone.utc)).replace(microsecond=0)
    key = (
        dismissals.c.repository == repository,
        dismissals.c.pr == pr,
        dismissals.c.fingerprint == finding.fingerprint,
    )
    values = {"rule": finding.rule, "reason": reason, "dismissed_by": by[:255], "dismissed_at": at}
    try:
        with engine.begin() as conn:
            updated = conn.execute(sa.update(dismissals).where(*key).values(**values)).rowcount
            if not updated:
                conn.execute(
                    sa.insert(dismissals).values(
                        repository=repository, pr=pr, fingerprint=finding.fingerprint, source=source, **values
                    )
                )
    except SQLAlchemyError as exc:
        raise _failed(exc) from exc
    return Dismissal(reason, by, _iso(at))


def match_prefix(findings: Sequence[Finding], prefix: str, where: str) -> Finding:
    """The one finding whose fingerprint starts with `prefix`; UsageError (one line) otherwise.

    `where` names what was searched ("round 2 of acme/x PR #7") for the message."""
    wanted = prefix.strip().lower()
    if not _PREFIX.fullmatch(wanted):
        raise UsageError(
            f"{prefix!r} is not a fingerprint prefix: give 4 to 64 hex digits of a finding's fingerprint"
        )
    hits = [f for f in findings if f.fingerprint.startswith(wanted)]
    if not hits:
        raise UsageError(f"no open finding of {where} has a fingerprint starting with {wanted}")
    if len(hits) > 1:
        shown = ", ".join(f"{f.fingerprint} ({f.rule})" for f in hits[:5])
        raise UsageError(f"{wanted} is ambiguous in {where}: {shown}; give more digits")
    return hits[0]
