"""Optional dependencies ("extras") and the one line that names the one to install.

`pip install 'reviewbot[redis]'` adds the Redis client for `REVIEWBOT_QUEUE_URL=redis://...`;
`pip install 'reviewbot[postgres]'` adds psycopg for a `postgresql://` rounds store. A URL that needs
an extra that is not installed fails before any work: one line, exit 2 (was a huey traceback, or a
SQLAlchemy error with no hint).
"""

from __future__ import annotations

import importlib

from reviewbot.errors import EnvironmentProblem

__all__ = ["EXTRAS", "require_extra", "require_extras"]

# extra -> (the module it installs, the URL schemes that need it)
EXTRAS: dict[str, tuple[str, tuple[str, ...]]] = {
    "redis": ("redis", ("redis://", "rediss://", "unix://")),
    "postgres": ("psycopg", ("postgresql://", "postgresql+psycopg://", "postgres://")),
}


def require_extra(extra: str, what: str) -> None:
    """EnvironmentProblem naming `pip install 'reviewbot[extra]'` when its module cannot be imported."""
    module = EXTRAS[extra][0]
    try:
        importlib.import_module(module)
    except ImportError:
        raise EnvironmentProblem(
            f"{what} needs the {module} package, which is not installed: pip install 'reviewbot[{extra}]'"
        ) from None


def require_extras(*, queue_url: str | None = None, db_url: str | None = None) -> None:
    """Check the extras the queue and store URLs need (None: the SQLite defaults, which need none)."""
    for url, what in ((queue_url, "the queue URL"), (db_url, "the rounds database URL")):
        if not url:
            continue
        scheme = url.split(":", 1)[0].lower()
        for extra, (_, schemes) in EXTRAS.items():
            if any(s.split(":", 1)[0] == scheme for s in schemes):
                require_extra(extra, f"{what} ({scheme}://...)")
