"""Counters in the database: every server and worker adds to the same rows, /metrics reads them.

Chosen over prometheus-client's multiprocess mode because workers may run on other hosts (Redis +
PostgreSQL), where no shared directory exists; the database is the one thing all of them share.
Increments are upserts, so concurrent writers never lose counts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection

from reviewbot.store.tables import service_metrics

__all__ = ["bump", "observe", "read_all", "labels_key", "DURATION_BUCKETS"]

# Seconds. A round is usually a few seconds; a big PR with tests may take minutes.
DURATION_BUCKETS = (0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0)


def labels_key(labels: Mapping[str, str]) -> str:
    """The canonical text of a label set (sorted JSON), the second half of a counter's key."""
    return json.dumps({str(k): str(v) for k, v in sorted(labels.items())}, separators=(",", ":"))


def _upsert(dialect: str) -> sa.Insert:
    """`INSERT ... ON CONFLICT (name, labels) DO UPDATE value = value + excluded.value`, built once:
    building a statement costs more CPU than running it, and every delivery bumps a counter."""
    index, set_ = ["name", "labels"], "value"
    if dialect == "postgresql":
        pg = postgresql.insert(service_metrics)
        return pg.on_conflict_do_update(
            index_elements=index, set_={set_: service_metrics.c.value + pg.excluded.value}
        )
    lite = sqlite.insert(service_metrics)
    return lite.on_conflict_do_update(
        index_elements=index, set_={set_: service_metrics.c.value + lite.excluded.value}
    )


_UPSERTS = {name: _upsert(name) for name in ("postgresql", "sqlite")}


def bump(conn: Connection, name: str, labels: Mapping[str, str] | None = None, amount: float = 1.0) -> None:
    """Add `amount` to the counter `name{labels}` inside the caller's transaction."""
    stmt = _UPSERTS.get(conn.dialect.name)
    if stmt is None:  # pragma: no cover - reviewbot supports SQLite and PostgreSQL only
        raise NotImplementedError(conn.dialect.name)
    conn.execute(stmt, {"name": name, "labels": labels_key(labels or {}), "value": float(amount)})


def observe(conn: Connection, name: str, value: float, labels: Mapping[str, str] | None = None) -> None:
    """Record one observation of the histogram `name`: cumulative buckets, _sum and _count."""
    base = dict(labels or {})
    for bound in DURATION_BUCKETS:
        if value <= bound:
            bump(conn, f"{name}_bucket", {**base, "le": repr(bound)})
    bump(conn, f"{name}_bucket", {**base, "le": "+Inf"})
    bump(conn, f"{name}_sum", base, value)
    bump(conn, f"{name}_count", base)


def read_all(conn: Connection) -> dict[str, dict[str, float]]:
    """Every counter: name -> labels key -> value."""
    out: dict[str, dict[str, float]] = {}
    rows = conn.execute(sa.select(service_metrics.c.name, service_metrics.c.labels, service_metrics.c.value))
    for name, labels, value in rows:
        out.setdefault(str(name), {})[str(labels)] = float(value)
    return out
