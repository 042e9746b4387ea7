"""Alembic environment: runs the migrations on the connection `Store.open` hands over.

`reviewbot.store.db.migrate` opens a transaction, takes a lock and puts the connection in
`config.attributes["connection"]`; every revision runs inside that one transaction. The `alembic`
command line also works (`-x url=...`), for a developer inspecting a database by hand.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine
from sqlalchemy.engine import Connection

from reviewbot.store.db import VERSION_TABLE, engine_url


def _run(connection: Connection) -> None:
    context.configure(connection=connection, version_table=VERSION_TABLE, target_metadata=None)
    with context.begin_transaction():
        context.run_migrations()


connection = context.config.attributes.get("connection")
if connection is not None:
    _run(connection)
else:
    url = context.get_x_argument(as_dictionary=True).get("url") or context.config.get_main_option(
        "sqlalchemy.url"
    )
    engine = create_engine(engine_url(url))
    with engine.begin() as conn:
        _run(conn)
    engine.dispose()
