"""Fixtures shared by several test folders: a throw-away PostgreSQL database."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator

import pytest

PG_HOST = os.environ.get("REVIEWBOT_TEST_PG_HOST", "127.0.0.1")
PG_PORT = int(os.environ.get("REVIEWBOT_TEST_PG_PORT", "5432"))


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """A `postgresql://` URL of a database created for this test session and dropped after it.

    Skips (with the reason) when no PostgreSQL accepts user `postgres` on 127.0.0.1:5432.
    """
    psycopg = pytest.importorskip("psycopg")
    from psycopg import sql

    try:
        admin = psycopg.connect(
            host=PG_HOST, port=PG_PORT, user="postgres", dbname="postgres", autocommit=True, connect_timeout=3
        )
    except psycopg.OperationalError as exc:
        pytest.skip(f"PostgreSQL is not reachable on {PG_HOST}:{PG_PORT} as user postgres: {exc}".strip())
    name = f"reviewbot_test_{os.getpid()}_{secrets.token_hex(4)}"
    with admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        try:
            yield f"postgresql://postgres@{PG_HOST}:{PG_PORT}/{name}"
        finally:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
