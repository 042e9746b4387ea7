"""The reviewbot database: where it is, how to connect, and its numbered migrations.

`open_engine(url)` resolves `--db` / the settings' database (reviewbot.settings), connects
and brings the schema to the newest migration in `migrations/versions/` (Alembic, one transaction,
under a lock so several workers may start at once). SQLite gets real transactions (`BEGIN
IMMEDIATE`), foreign keys and WAL; PostgreSQL goes through psycopg 3.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError, OperationalError, SQLAlchemyError
from sqlalchemy.pool import StaticPool

from reviewbot.errors import StoreError
from reviewbot.settings import load_settings

__all__ = [
    "MIGRATIONS_DIR",
    "VERSION_TABLE",
    "default_db_url",
    "engine_url",
    "known_revisions",
    "migrate",
    "open_engine",
    "schema_revision",
    "shown",
    "utc",
]

log = logging.getLogger(__name__)

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
VERSION_TABLE = "reviewbot_schema_version"
# Any constant works; it only has to be the same for every reviewbot process on one server.
_MIGRATION_LOCK = 0x72657669657762  # "reviewb"
_WRITER = "reviewbot_writer"  # Connection.info key: this connection holds the process's SQLite turn
_WRITER_WAIT = 60.0


def default_db_url() -> str:
    """The settings' database (`db_url`, else a SQLite file in the state directory)."""
    return load_settings().database_url


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


def shown(url: URL) -> str:
    """The URL with its password hidden (for messages and logs)."""
    return url.render_as_string(hide_password=True)


def _create_engine(url: URL) -> Engine:
    if url.get_backend_name() != "sqlite":
        return sa.create_engine(url, pool_pre_ping=True)
    memory = url.database in (None, "", ":memory:")
    if not memory:
        Path(str(url.database)).parent.mkdir(parents=True, exist_ok=True)
    # The driver's own busy timeout applies from the first statement of a connection, before the
    # PRAGMAs below run (switching to WAL needs the lock too).
    args = {"timeout": 30}
    engine = (
        sa.create_engine(url, poolclass=StaticPool, connect_args=args)
        if memory
        else sa.create_engine(url, connect_args=args)
    )

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

    # Threads of this process take turns here, in order, instead of in SQLite's busy handler,
    # which sleeps in growing steps (up to 100 ms) between tries: with 16 deliveries at once the
    # webhook's p99 was 1.9 s (bench/bench_ack.py). Other processes still meet the busy handler.
    writer = threading.Lock()

    @sa.event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        # The timeout is a safety net only: past it, SQLite's own locking still serialises.
        held = writer.acquire(timeout=_WRITER_WAIT)
        conn.info[_WRITER] = held
        try:
            # IMMEDIATE takes the write lock up front: two processes never both read "no round
            # yet" and then collide, and concurrent migrations run one after the other.
            conn.exec_driver_sql("BEGIN IMMEDIATE")
        except BaseException:
            _release(conn)
            raise

    @sa.event.listens_for(engine, "commit")
    @sa.event.listens_for(engine, "rollback")
    def _release(conn: Connection) -> None:
        if conn.info.pop(_WRITER, False):
            writer.release()

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


def _migrate_when_free(engine: Engine, attempts: int = 6) -> None:
    """`migrate`, retried while SQLite reports the file locked by workers opening it at the same time.

    SQLite can answer SQLITE_BUSY without waiting (e.g. while another connection recovers the WAL
    or switches the journal mode), so the busy timeout alone does not cover a burst of opens.
    """
    for attempt in range(attempts):
        try:
            migrate(engine)
            return
        except OperationalError as exc:
            locked = "locked" in str(exc) or "busy" in str(exc)
            if engine.dialect.name != "sqlite" or not locked or attempt == attempts - 1:
                raise
            time.sleep(0.1 * 2**attempt)


def utc(value: datetime) -> datetime:
    """`value` as an aware UTC datetime."""
    # SQLite hands back naive datetimes; every stored time is UTC.
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)


def open_engine(url: str | None = None) -> Engine:
    """An engine on the migrated database; StoreError (with what to check) when that fails."""
    target = engine_url(url)
    try:
        engine = _create_engine(target)
    except (SQLAlchemyError, OSError, ImportError) as exc:
        raise StoreError(
            f"cannot use the rounds database {shown(target)}: {exc}; check --db / REVIEWBOT_DB_URL"
        ) from exc
    try:
        _migrate_when_free(engine)
    except StoreError:
        engine.dispose()
        raise
    except (SQLAlchemyError, OSError) as exc:
        engine.dispose()
        reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        raise StoreError(
            f"cannot open the rounds database {shown(target)}: {reason}; "
            "check that the server runs and the URL in --db / REVIEWBOT_DB_URL is right"
        ) from exc
    log.debug("database open at %s", shown(target))
    return engine
