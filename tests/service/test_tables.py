"""Migrations 0002 and 0003 create exactly the service tables the code declares (SQLite and PostgreSQL)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from reviewbot.settings import Settings
from reviewbot.store.db import VERSION_TABLE
from reviewbot.store.store import Store
from reviewbot.store.tables import metadata


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, settings: Settings) -> Iterator[Store]:
    url = settings.db_url if request.param == "sqlite" else request.getfixturevalue("pg_url")
    s = Store.open(url)
    yield s
    s.close()


def test_the_migrated_service_tables_match_the_code(store: Store) -> None:
    mine = set(metadata.tables)

    def only_mine(name: str | None, type_: str, parent: object) -> bool:
        return type_ != "table" or name in mine

    with store.engine.connect() as conn:
        ctx = MigrationContext.configure(
            conn, opts={"version_table": VERSION_TABLE, "include_name": only_mine}
        )
        assert compare_metadata(ctx, metadata) == []
        assert mine <= set(sa.inspect(conn).get_table_names())
        assert mine == {"service_deliveries", "service_jobs", "service_commands", "service_metrics"}
