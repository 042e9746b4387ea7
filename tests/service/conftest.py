"""Fixtures for the App service: settings on temporary SQLite, PostgreSQL and Redis when present."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from reviewbot.service.runtime import Runtime
from reviewbot.settings import Settings
from tests.service.helpers import SECRET

PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
REDIS_URL = "redis://127.0.0.1:6379/0"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Everything in tmp_path; short leases and delays so recovery and retries happen in seconds."""
    state = tmp_path / "state"
    return Settings(
        webhook_secret=SECRET,
        github_token="ghp_test_token_not_real",
        state_dir=state,
        db_url=f"sqlite:///{state / 'reviewbot.sqlite3'}",
        queue_url=None,
        queue_name="reviewbot",
        cache_dir=tmp_path / "cache",
        retry_base_seconds=0.2,
        retry_max_seconds=1.0,
        job_lease_seconds=3.0,
        lock_retry_seconds=0.2,
        request_interval=0.0,
        write_interval=0.0,
        # The workers' late-write window (timeout + GitHub's limit): 12 s, the fixed window these
        # tests were written for; 30 s + 10 s would make a recovered job wait 40 s.
        github_timeout_seconds=10.0,
        github_request_limit_seconds=2.0,
    )


@pytest.fixture
def runtime(settings: Settings) -> Iterator[Runtime]:
    rt = Runtime.open(settings)
    yield rt
    rt.close()


def _pg_available() -> bool:
    try:
        import psycopg

        with psycopg.connect(PG_ADMIN, connect_timeout=2):
            return True
    except Exception:
        return False


@pytest.fixture(scope="session")
def pg_database() -> Iterator[str]:
    """A PostgreSQL database of its own for this test session, dropped at the end."""
    if not _pg_available():
        pytest.skip("PostgreSQL is not reachable on 127.0.0.1:5432 (user postgres)")
    import psycopg

    name = f"reviewbot_test_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"postgresql://postgres@127.0.0.1:5432/{name}"
    finally:
        with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def pg_url(pg_database: str) -> str:
    """The session database, emptied of rows from earlier tests (the schema stays)."""
    import psycopg

    with psycopg.connect(pg_database, autocommit=True) as conn:
        tables = [
            r[0]
            for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'").fetchall()
            if r[0] != "reviewbot_schema_version"
        ]
        if tables:
            conn.execute("TRUNCATE " + ", ".join(f'"{t}"' for t in tables) + " RESTART IDENTITY CASCADE")
    return pg_database


@pytest.fixture
def redis_queue(settings: Settings) -> Iterator[Settings]:
    """`settings` on RedisHuey with a queue name of this test's own; its keys are deleted after."""
    try:
        import redis

        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2).ping()
    except Exception:
        pytest.skip("Redis is not reachable on 127.0.0.1:6379")
    name = f"reviewbot_test_{uuid.uuid4().hex[:10]}"
    yield settings.with_(queue_url=REDIS_URL, queue_name=name)
    client = redis.Redis.from_url(REDIS_URL)
    keys = list(client.scan_iter(match=f"huey.*{name}*"))
    if keys:
        client.delete(*keys)
