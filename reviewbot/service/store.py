"""The rounds store: every round of every pull request, its findings and its rendered report.

SQLAlchemy Core over a SQLite file by default (in the user's state directory) or PostgreSQL
(`postgresql://` URL); the same statements serve both. The schema belongs to the numbered Alembic
migrations in `reviewbot/service/migrations/versions/`, applied by `Store.open` under a lock, so
several workers may open the same database at once. New tables (jobs, deliveries) come as a new
numbered migration plus their Table definitions next to the ones below; never by dropping tables.
"""

from __future__ import annotations

import logging
import os
import re
import zlib
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple

import sqlalchemy as sa
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError, IntegrityError, SQLAlchemyError
from sqlalchemy.pool import StaticPool

from reviewbot.errors import StoreError
from reviewbot.review.finding import Finding, Location, Severity
from reviewbot.review.result import Review
from reviewbot.review.rounds import OPEN_STATES

__all__ = [
    "FindingRecord",
    "RoundRecord",
    "RoundSummary",
    "SavedRound",
    "Store",
    "default_db_url",
    "engine_url",
    "migrate",
    "metadata",
]

log = logging.getLogger(__name__)

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
VERSION_TABLE = "reviewbot_schema_version"
# Any constant works; it only has to be the same for every reviewbot process on one server.
_MIGRATION_LOCK = 0x72657669657762  # "reviewb"
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


# --- records -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FindingRecord:
    """One finding of one round as stored: the columns a query needs plus the whole finding."""

    fingerprint: str
    rule: str
    severity: str
    path: str
    line: int
    title: str
    anchor: str
    state: str
    fixed_in: str | None
    data: Mapping[str, Any]

    @classmethod
    def from_finding(cls, f: Finding) -> FindingRecord:
        data = f.to_json()
        # to_json is the public shape; these fields are needed to rebuild the Finding exactly.
        data.update(
            anchor=f.anchor,
            suggestion_lang=f.suggestion_lang,
            replacement=f.replacement,
            related=[[loc.path, loc.line, loc.text] for loc in f.related],
        )
        return cls(
            f.fingerprint,
            f.rule,
            f.severity.value,
            f.path,
            f.line,
            f.title,
            f.anchor,
            f.state,
            f.fixed_in,
            data,
        )

    def to_finding(self) -> Finding:
        d = self.data
        finding = Finding(
            rule=self.rule,
            severity=Severity(self.severity),
            path=self.path,
            line=self.line,
            title=self.title,
            anchor=self.anchor,
            evidence=tuple(d.get("evidence", ())),
            suggestion=d.get("suggestion", ""),
            suggestion_code=d.get("suggestion_code", ""),
            suggestion_lang=d.get("suggestion_lang", ""),
            replacement=d.get("replacement"),
            checklist=tuple(d.get("checklist", ())),
            extra=tuple((str(k), str(v)) for k, v in dict(d.get("extra", {})).items()),
            state=self.state,
            fixed_in=self.fixed_in,
            related=tuple(Location(str(p), int(n), str(t)) for p, n, t in d.get("related", ())),
        )
        # Identity is the stored fingerprint, even if a later reviewbot computes them differently.
        if finding.fingerprint != self.fingerprint:
            finding = finding.with_(fingerprint_override=self.fingerprint)
        return finding


@dataclass(frozen=True)
class RoundRecord:
    """One round of a pull request: what was reviewed, the outcome, the findings and the report."""

    repository: str
    pr: int
    round_index: int
    base_sha: str
    head_sha: str
    merge_base: str
    previous_head: str | None
    reviewed_at: str
    status: str
    summary: Mapping[str, int]
    kpi: Mapping[str, Any]
    full_review: bool
    force_pushed: bool
    report_markdown: str
    report_json: str
    findings: tuple[FindingRecord, ...] = ()
    id: int | None = None  # set once stored
    created_at: datetime | None = None  # set once stored: when the round was first recorded

    @property
    def open_findings(self) -> list[Finding]:
        """The findings the next round must recheck."""
        return [r.to_finding() for r in self.findings if r.state in OPEN_STATES]

    @classmethod
    def from_review(
        cls, review: Review, *, repository: str, pr: int, report_markdown: str, report_json: str
    ) -> RoundRecord:
        """The record of a review whose `round` was filled by review.rounds."""
        closed = [*review.round.fixed, *review.round.cannot_substantiate]
        return cls(
            repository=repository,
            pr=pr,
            round_index=review.round.round_index,
            base_sha=review.base_sha,
            head_sha=review.head_sha,
            merge_base=review.merge_base,
            previous_head=review.round.previous_head,
            reviewed_at=review.reviewed_at,
            status=review.status.value,
            summary=review.summary(),
            kpi=review.kpi,
            full_review=review.round.full_review,
            force_pushed=review.round.force_pushed,
            report_markdown=report_markdown,
            report_json=report_json,
            findings=tuple(FindingRecord.from_finding(f) for f in [*review.findings, *closed]),
        )


@dataclass(frozen=True)
class RoundSummary:
    """A line of a PR's history: one round without its report and findings."""

    round_index: int
    head_sha: str
    base_sha: str
    status: str
    summary: Mapping[str, int]
    new: int
    fixed: int
    still_open: int
    cannot_substantiate: int
    full_review: bool
    force_pushed: bool
    reviewed_at: str
    created_at: datetime
    counts: Mapping[str, int] = field(default_factory=dict)

    def history_row(self) -> dict[str, Any]:
        """The row shape of `RoundInfo.history` (the report's round-history table)."""
        return {
            "round": self.round_index,
            "head_sha": self.head_sha,
            "status": self.status,
            "summary": dict(self.summary),
            "new": self.new,
            "fixed": self.fixed,
            "still_open": self.still_open,
            "cannot_substantiate": self.cannot_substantiate,
            "full_review": self.full_review,
            "force_pushed": self.force_pushed,
            "reviewed_at": self.reviewed_at,
        }


class SavedRound(NamedTuple):
    record: RoundRecord
    created: bool  # False: the head had a round already, which was replaced in place


# --- opening and migrating -----------------------------------------------------------------------


def default_db_url() -> str:
    """$REVIEWBOT_DB_URL, else a SQLite file in the XDG state directory."""
    env = os.environ.get("REVIEWBOT_DB_URL")
    if env:
        return env
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return f"sqlite:///{Path(state) / 'reviewbot' / 'reviewbot.sqlite3'}"


def engine_url(url: str | None) -> URL:
    """The SQLAlchemy URL for `--db`: None = the default; a bare path = a SQLite file; `postgresql://`
    and `postgres://` use psycopg 3 (the driver reviewbot installs)."""
    raw = url or default_db_url()
    if "://" not in raw:
        raw = f"sqlite:///{Path(raw).expanduser().resolve()}"
    try:
        parsed = make_url(raw)
    except ArgumentError as exc:
        raise StoreError(
            f"cannot read the database URL {raw!r}: {exc}; pass --db sqlite:///FILE or postgresql://..."
        ) from exc
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed


def _shown(url: URL) -> str:
    return url.render_as_string(hide_password=True)


def _create_engine(url: URL) -> Engine:
    if url.get_backend_name() != "sqlite":
        return sa.create_engine(url, pool_pre_ping=True)
    memory = url.database in (None, "", ":memory:")
    if not memory:
        Path(str(url.database)).parent.mkdir(parents=True, exist_ok=True)
    engine = sa.create_engine(url, poolclass=StaticPool) if memory else sa.create_engine(url)

    @sa.event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # pysqlite would open transactions itself and never around DDL; the BEGIN below owns them,
        # so a migration and a save are each one real transaction.
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA busy_timeout=30000")
        if not memory:
            cur.execute("PRAGMA journal_mode=WAL")  # readers do not wait for a writer
        cur.close()

    @sa.event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        # IMMEDIATE takes the write lock up front: two processes never both read "no round yet"
        # and then collide, and concurrent migrations run one after the other.
        conn.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def known_revisions() -> list[str]:
    """The migration ids this reviewbot ships, oldest first (file `NNNN_name.py` has revision "NNNN")."""
    names = (p.name for p in (MIGRATIONS_DIR / "versions").glob("*.py"))
    return sorted(m.group(1) for n in names if (m := re.match(r"(\d{4})_", n)))


def schema_revision(engine: Engine) -> str | None:
    """The migration the database is at; None for a database reviewbot never opened."""
    with engine.begin() as conn:
        if not sa.inspect(conn).has_table(VERSION_TABLE):
            return None
        value = conn.execute(sa.text(f"SELECT version_num FROM {VERSION_TABLE}")).scalar()
        return None if value is None else str(value)


def migrate(engine: Engine) -> None:
    """Bring the schema to the newest migration, in one transaction, one process at a time."""
    known = known_revisions()
    current = schema_revision(engine)
    if current == known[-1]:
        return  # the usual case: no need to load Alembic (a third of a second) at all
    if current is not None and current not in known:
        raise StoreError(
            f"the database is at schema revision {current}, newer than this reviewbot knows "
            f"({known[-1]}); upgrade reviewbot or use another --db"
        )
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK})
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")


def _utc(value: datetime) -> datetime:
    # SQLite hands back naive datetimes; every stored time is UTC.
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)


# --- the store ---------------------------------------------------------------------------------


class Store:
    """Rounds of pull requests, keyed by (repository, PR). Open with `Store.open(url)`."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    @classmethod
    def open(cls, url: str | None = None) -> Store:
        """Connect (None = $REVIEWBOT_DB_URL or the state-directory SQLite file) and migrate."""
        target = engine_url(url)
        try:
            engine = _create_engine(target)
        except (SQLAlchemyError, OSError, ImportError) as exc:
            raise StoreError(
                f"cannot use the rounds database {_shown(target)}: {exc}; check --db / REVIEWBOT_DB_URL"
            ) from exc
        try:
            migrate(engine)
        except StoreError:
            engine.dispose()
            raise
        except (SQLAlchemyError, OSError) as exc:
            engine.dispose()
            reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
            raise StoreError(
                f"cannot open the rounds database {_shown(target)}: {reason}; "
                "check that the server runs and the URL in --db / REVIEWBOT_DB_URL is right"
            ) from exc
        log.debug("rounds store open at %s", _shown(target))
        return cls(engine)

    @property
    def url(self) -> str:
        """The database URL with the password hidden (for messages and logs)."""
        return _shown(self.engine.url)

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

    def history(self, repository: str, pr: int) -> list[RoundSummary]:
        """Every round of the PR, oldest first, with finding counts by state."""
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
                RoundSummary(
                    round_index=r["round_index"],
                    head_sha=r["head_sha"],
                    base_sha=r["base_sha"],
                    status=r["status"],
                    summary={"P0": r["p0"], "P1": r["p1"], "P2": r["p2"], "P3": r["p3"]},
                    new=c.get("new", 0),
                    fixed=c.get("fixed", 0),
                    still_open=c.get("still_open", 0),
                    cannot_substantiate=c.get("cannot_substantiate", 0),
                    full_review=bool(r["full_review"]),
                    force_pushed=bool(r["force_pushed"]),
                    reviewed_at=r["reviewed_at"],
                    created_at=_utc(r["created_at"]),
                    counts=c,
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
                    data=f["data"],
                )
                for f in frows
            ),
            id=row["id"],
            created_at=_utc(row["created_at"]),
        )

    # --- writes ---

    def save_round(self, record: RoundRecord) -> SavedRound:
        """Record a round atomically. A head the PR already has a round for is replaced in place
        (same round index, same creation time): re-running a head never adds a round."""
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

    def _save_once(self, record: RoundRecord) -> SavedRound:
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
        return SavedRound(stored, created)


def _round_values(r: RoundRecord) -> dict[str, Any]:
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
        "kpi": dict(r.kpi),
        "report_markdown": r.report_markdown,
        "report_json": r.report_json,
    }


def _finding_rows(round_id: int, findings: Iterable[FindingRecord]) -> Iterator[dict[str, Any]]:
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
            "data": dict(f.data),
        }
