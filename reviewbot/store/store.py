"""The rounds store: every round of every pull request, its findings and its rendered report.

SQLAlchemy Core over a SQLite file by default (in the user's state directory) or PostgreSQL
(`postgresql://` URL); the same statements serve both. The schema belongs to the numbered Alembic
migrations in `reviewbot/service/migrations/versions/` (see service.db), applied by `Store.open`.
New tables (jobs, deliveries) come as a new numbered migration plus their Table definitions; never
by dropping tables.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Any, TypedDict, cast

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from reviewbot.errors import StoreError
from reviewbot.model.kpi import Kpi
from reviewbot.model.round import RoundRow
from reviewbot.store.db import open_engine, shown, utc
from reviewbot.store.records import FindingRecord, RoundRecord, StoredFinding

__all__ = [
    "FindingRecord",
    "RoundRecord",
    "Store",
    "metadata",
    "rounds",
    "round_findings",
]

_PR_LOCK = 0x72626F74  # "rbot"; paired with a hash of (repository, PR)

metadata = sa.MetaData()

# Mirrors migration 0001 (tests/rounds/test_store.py compares the two).
rounds = sa.Table(
    "rounds",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("repository", sa.String(512), nullable=False),
    sa.Column("pr", sa.Integer, nullable=False),
    sa.Column("round_index", sa.Integer, nullable=False),
    sa.Column("base_sha", sa.String(64), nullable=False),
    sa.Column("head_sha", sa.String(64), nullable=False),
    sa.Column("merge_base", sa.String(64), nullable=False),
    sa.Column("previous_head", sa.String(64), nullable=True),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("reviewed_at", sa.String(64), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("p0", sa.Integer, nullable=False),
    sa.Column("p1", sa.Integer, nullable=False),
    sa.Column("p2", sa.Integer, nullable=False),
    sa.Column("p3", sa.Integer, nullable=False),
    sa.Column("full_review", sa.Boolean, nullable=False),
    sa.Column("force_pushed", sa.Boolean, nullable=False),
    sa.Column("kpi", sa.JSON, nullable=False),
    sa.Column("report_markdown", sa.Text, nullable=False),
    sa.Column("report_json", sa.Text, nullable=False),
    sa.UniqueConstraint("repository", "pr", "round_index", name="uq_rounds_pr_round"),
    sa.UniqueConstraint("repository", "pr", "head_sha", name="uq_rounds_pr_head"),
    sa.Index("ix_rounds_created_at", "created_at"),  # retention (migration 0005)
)

round_findings = sa.Table(
    "round_findings",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column(
        "round_id",
        sa.Integer,
        sa.ForeignKey("rounds.id", name="fk_round_findings_round", ondelete="CASCADE"),
        nullable=False,
    ),
    sa.Column("position", sa.Integer, nullable=False),
    sa.Column("fingerprint", sa.String(64), nullable=False),
    sa.Column("rule", sa.String(128), nullable=False),
    sa.Column("severity", sa.String(4), nullable=False),
    sa.Column("path", sa.Text, nullable=False),
    sa.Column("line", sa.Integer, nullable=False),
    sa.Column("title", sa.Text, nullable=False),
    sa.Column("anchor", sa.Text, nullable=False),
    sa.Column("state", sa.String(32), nullable=False),
    sa.Column("fixed_in", sa.String(64), nullable=True),
    sa.Column("data", sa.JSON, nullable=False),
    sa.UniqueConstraint("round_id", "fingerprint", name="uq_round_findings_fingerprint"),
)


class Store:
    """Rounds of pull requests, keyed by (repository, PR). Open with `Store.open(url)`."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    @classmethod
    def open(cls, url: str | None = None) -> Store:
        """Connect (None = $REVIEWBOT_DB_URL or the state-directory SQLite file) and migrate."""
        return cls(open_engine(url))

    @property
    def url(self) -> str:
        """The database URL with the password hidden (for messages and logs)."""
        return shown(self.engine.url)

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _tx(self) -> Iterator[Connection]:
        try:
            with self.engine.begin() as conn:
                yield conn
        except IntegrityError:
            raise
        except SQLAlchemyError as exc:
            raise StoreError(
                f"the rounds database {self.url} failed: {exc}; check the server and retry"
            ) from exc

    # --- reads ---

    def latest_round(self, repository: str, pr: int) -> RoundRecord | None:
        """The newest round of the PR (highest round index), with its findings."""
        query = (
            sa.select(rounds)
            .where(rounds.c.repository == repository, rounds.c.pr == pr)
            .order_by(rounds.c.round_index.desc())
            .limit(1)
        )
        with self._tx() as conn:
            return self._load(conn, query)

    def round_for_head(self, repository: str, pr: int, head_sha: str) -> RoundRecord | None:
        """The round that reviewed `head_sha` in this PR, if any."""
        query = sa.select(rounds).where(
            rounds.c.repository == repository, rounds.c.pr == pr, rounds.c.head_sha == head_sha
        )
        with self._tx() as conn:
            return self._load(conn, query)

    def get_round(self, repository: str, pr: int, round_index: int) -> RoundRecord | None:
        """Round `round_index` (1-based) of the PR, with its findings and stored report."""
        query = sa.select(rounds).where(
            rounds.c.repository == repository, rounds.c.pr == pr, rounds.c.round_index == round_index
        )
        with self._tx() as conn:
            return self._load(conn, query)

    def history(self, repository: str, pr: int) -> list[RoundRow]:
        """Every round of the PR, oldest first, with finding counts by state (its report and
        findings are not read)."""
        where = (rounds.c.repository == repository, rounds.c.pr == pr)
        cols = [c for c in rounds.c if c.name not in ("kpi", "report_markdown", "report_json")]
        counts_q = (
            sa.select(round_findings.c.round_id, round_findings.c.state, sa.func.count())
            .join(rounds, rounds.c.id == round_findings.c.round_id)
            .where(*where)
            .group_by(round_findings.c.round_id, round_findings.c.state)
        )
        with self._tx() as conn:
            rows = (
                conn.execute(sa.select(*cols).where(*where).order_by(rounds.c.round_index)).mappings().all()
            )
            counts: dict[int, dict[str, int]] = {}
            for round_id, state, n in conn.execute(counts_q):
                counts.setdefault(round_id, {})[state] = int(n)
        out = []
        for r in rows:
            c = counts.get(r["id"], {})
            out.append(
                RoundRow(
                    round=r["round_index"],
                    head_sha=r["head_sha"],
                    status=r["status"],
                    summary={"P0": r["p0"], "P1": r["p1"], "P2": r["p2"], "P3": r["p3"]},
                    new=c.get("new", 0),
                    fixed=c.get("fixed", 0),
                    still_open=c.get("still_open", 0),
                    cannot_substantiate=c.get("cannot_substantiate", 0),
                    full_review=bool(r["full_review"]),
                    force_pushed=bool(r["force_pushed"]),
                    reviewed_at=r["reviewed_at"],
                    created_at=utc(r["created_at"]),
                )
            )
        return out

    def _load(self, conn: Connection, query: sa.Select[Any]) -> RoundRecord | None:
        row = conn.execute(query).mappings().first()
        if row is None:
            return None
        frows = conn.execute(
            sa.select(round_findings)
            .where(round_findings.c.round_id == row["id"])
            .order_by(round_findings.c.position)
        ).mappings()
        return RoundRecord(
            repository=row["repository"],
            pr=row["pr"],
            round_index=row["round_index"],
            base_sha=row["base_sha"],
            head_sha=row["head_sha"],
            merge_base=row["merge_base"],
            previous_head=row["previous_head"],
            reviewed_at=row["reviewed_at"],
            status=row["status"],
            summary={"P0": row["p0"], "P1": row["p1"], "P2": row["p2"], "P3": row["p3"]},
            kpi=row["kpi"],
            full_review=bool(row["full_review"]),
            force_pushed=bool(row["force_pushed"]),
            report_markdown=row["report_markdown"],
            report_json=row["report_json"],
            findings=tuple(
                FindingRecord(
                    fingerprint=f["fingerprint"],
                    rule=f["rule"],
                    severity=f["severity"],
                    path=f["path"],
                    line=f["line"],
                    title=f["title"],
                    anchor=f["anchor"],
                    state=f["state"],
                    fixed_in=f["fixed_in"],
                    data=_stored_finding(f["data"], f["id"]),
                )
                for f in frows
            ),
            id=row["id"],
            created_at=utc(row["created_at"]),
        )

    # --- writes ---

    def save_round(self, record: RoundRecord) -> tuple[RoundRecord, bool]:
        """Record a round atomically: (the round as stored, whether it was created). A head the PR
        already has a round for is replaced in place (same round index, same creation time; created
        False): re-running a head never adds a round."""
        try:
            return self._save_once(record)
        except IntegrityError:
            # Another writer that does not take the PR lock (an older reviewbot) got in between our
            # read and our insert; decide again against what it wrote.
            pass
        try:
            return self._save_once(record)
        except IntegrityError as exc:
            raise StoreError(
                f"could not record round {record.round_index} of {record.repository} PR #{record.pr}: "
                f"{exc.orig}; another reviewer is writing this PR, run again"
            ) from exc

    def _save_once(self, record: RoundRecord) -> tuple[RoundRecord, bool]:
        with self._tx() as conn:
            if conn.dialect.name == "postgresql":
                # One writer per PR at a time (SQLite gets this from BEGIN IMMEDIATE).
                key = zlib.crc32(f"{record.repository}#{record.pr}".encode()) - (1 << 31)
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(:a, :b)"), {"a": _PR_LOCK, "b": key})
            pr_where = (rounds.c.repository == record.repository, rounds.c.pr == record.pr)
            existing = conn.execute(
                sa.select(rounds.c.id).where(*pr_where, rounds.c.head_sha == record.head_sha)
            ).scalar()
            values = _round_values(record)
            if existing is not None:
                round_id = int(existing)
                conn.execute(sa.update(rounds).where(rounds.c.id == round_id).values(**values))
                conn.execute(sa.delete(round_findings).where(round_findings.c.round_id == round_id))
                created = False
            else:
                clash = conn.execute(
                    sa.select(rounds.c.head_sha).where(*pr_where, rounds.c.round_index == record.round_index)
                ).scalar()
                if clash is not None:
                    raise StoreError(
                        f"round {record.round_index} of {record.repository} PR #{record.pr} is already "
                        f"recorded for head {str(clash)[:12]}; another reviewer recorded a round "
                        "meanwhile, run again"
                    )
                round_id = conn.execute(
                    sa.insert(rounds)
                    .values(
                        repository=record.repository,
                        pr=record.pr,
                        round_index=record.round_index,
                        head_sha=record.head_sha,
                        created_at=datetime.now(timezone.utc),
                        **values,
                    )
                    .returning(rounds.c.id)
                ).scalar_one()
                created = True
            rows = list(_finding_rows(round_id, record.findings))
            if rows:
                conn.execute(sa.insert(round_findings), rows)
            stored = self._load(conn, sa.select(rounds).where(rounds.c.id == round_id))
        if stored is None:  # only if the row vanished inside our own transaction
            raise StoreError(
                f"round {record.round_index} of {record.repository} PR #{record.pr} was not stored"
            )
        return stored, created


class _ReplacedColumns(TypedDict):
    """The `rounds` columns a re-run of the same head replaces."""

    base_sha: str
    merge_base: str
    previous_head: str | None
    reviewed_at: str
    status: str
    p0: int
    p1: int
    p2: int
    p3: int
    full_review: bool
    force_pushed: bool
    kpi: Kpi
    report_markdown: str
    report_json: str


class _FindingRow(TypedDict):
    """A row of `round_findings`."""

    round_id: int
    position: int
    fingerprint: str
    rule: str
    severity: str
    path: str
    line: int
    title: str
    anchor: str
    state: str
    fixed_in: str | None
    data: StoredFinding


def _stored_finding(data: object, row_id: int) -> StoredFinding:
    """The `data` column of a `round_findings` row as read back: a JSON object, given the shape the
    store writes (a row of an older reviewbot may lack keys: its readers use `.get`)."""
    if not isinstance(data, dict):
        raise StoreError(
            f"round_findings row {row_id} holds {type(data).__name__}, not the finding's JSON object; "
            "the rounds database was changed outside reviewbot"
        )
    return cast(StoredFinding, data)


def _round_values(r: RoundRecord) -> _ReplacedColumns:
    """Columns that a re-run of the same head replaces (index, head and creation time stay)."""
    return {
        "base_sha": r.base_sha,
        "merge_base": r.merge_base,
        "previous_head": r.previous_head,
        "reviewed_at": r.reviewed_at,
        "status": r.status,
        "p0": int(r.summary.get("P0", 0)),
        "p1": int(r.summary.get("P1", 0)),
        "p2": int(r.summary.get("P2", 0)),
        "p3": int(r.summary.get("P3", 0)),
        "full_review": r.full_review,
        "force_pushed": r.force_pushed,
        "kpi": r.kpi.copy(),
        "report_markdown": r.report_markdown,
        "report_json": r.report_json,
    }


def _finding_rows(round_id: int, findings: Iterable[FindingRecord]) -> Iterator[_FindingRow]:
    for position, f in enumerate(findings):
        yield {
            "round_id": round_id,
            "position": position,
            "fingerprint": f.fingerprint,
            "rule": f.rule,
            "severity": f.severity,
            "path": f.path,
            "line": f.line,
            "title": f.title,
            "anchor": f.anchor,
            "state": f.state,
            "fixed_in": f.fixed_in,
            "data": f.data.copy(),
        }
