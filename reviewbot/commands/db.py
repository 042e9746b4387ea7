"""The rounds database as the commands name and open it (`--db URL`, else the settings' URL)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

from reviewbot.errors import EnvironmentProblem, StoreError, UsageError
from reviewbot.extras import require_extras

if TYPE_CHECKING:
    from reviewbot.store.store import Store

__all__ = ["check_db_url", "open_store"]


def check_db_url(url: str) -> None:
    """`--db` names a database by URL; a bare word is refused, not made a SQLite file in the cwd."""
    if "://" not in url:
        raise UsageError(
            f"--db wants a database URL such as sqlite:///PATH/rounds.db or postgresql://USER@HOST/DB, "
            f"not {url!r}"
        )
    from reviewbot.store.db import engine_url  # SQLAlchemy: loaded only when a database is named

    try:
        parsed = engine_url(url)
    except StoreError as exc:
        raise UsageError(str(exc)) from exc
    backend = parsed.get_backend_name()
    if backend not in ("sqlite", "postgresql"):
        raise UsageError(f"--db: {backend} databases are not supported; use sqlite:/// or postgresql://")
    require_extras(db_url=url)
    if backend == "sqlite" and parsed.database not in (None, "", ":memory:"):
        file = Path(str(parsed.database)).expanduser()
        if file.is_dir():
            raise UsageError(f"--db {url}: {file} is a directory, not a database file")
        if not file.parent.is_dir():
            raise UsageError(f"--db {url}: the directory {file.parent} does not exist")
        if file.exists():
            _probe_sqlite(url, file)


def _probe_sqlite(url: str, file: Path) -> None:
    """Read an existing SQLite file's schema without writing to it: a file that is not a database
    fails here, before the review, whichever path (local or GitHub) opens it later."""
    try:
        conn = sqlite3.connect(f"{file.resolve().as_uri()}?mode=ro", uri=True)
        try:
            conn.execute("PRAGMA schema_version").fetchone()
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise EnvironmentProblem(f"cannot open the rounds database {url}: {exc}") from exc


def open_store(url: str) -> Store:
    """The rounds store; one that cannot be opened is the user's to fix (exit 2), not a crash."""
    from reviewbot.store.store import Store

    require_extras(db_url=url)
    try:
        return Store.open(url)
    except StoreError as exc:
        raise EnvironmentProblem(str(exc)) from exc
