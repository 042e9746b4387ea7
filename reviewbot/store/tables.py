"""The service's tables: webhook deliveries, round jobs, and counters shared by all processes.

They live in the rounds database, created by migrations 0002-0004 and indexed for retention by 0005 (this
module mirrors them; tests/service/test_tables.py compares the two). Times are stored in UTC.
"""

from __future__ import annotations

import sqlalchemy as sa

__all__ = ["metadata", "deliveries", "jobs", "commands", "service_metrics", "JOB_STATES", "ACTIVE_STATES"]

metadata = sa.MetaData()

# queued -> running -> done | skipped | failed; running -> queued again on retry or recovery.
JOB_STATES = ("queued", "running", "done", "skipped", "failed")
ACTIVE_STATES = ("queued", "running")

# One row per X-GitHub-Delivery: the primary key is what makes a redelivery a no-op.
deliveries = sa.Table(
    "service_deliveries",
    metadata,
    sa.Column("delivery_id", sa.String(64), primary_key=True),
    sa.Column("event", sa.String(64), nullable=False),
    sa.Column("action", sa.String(64), nullable=True),
    sa.Column("repository", sa.String(512), nullable=True),
    sa.Column("pr", sa.Integer, nullable=True),
    sa.Column("outcome", sa.String(32), nullable=False),
    sa.Column("detail", sa.Text, nullable=False),
    sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
    sa.Index("ix_service_deliveries_received_at", "received_at"),  # retention (migration 0005)
)

jobs = sa.Table(
    "service_jobs",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("repository", sa.String(512), nullable=False),
    sa.Column("pr", sa.Integer, nullable=False),
    sa.Column("head_sha", sa.String(64), nullable=True),  # None: whatever the head is when the job runs
    sa.Column("installation_id", sa.BigInteger, nullable=True),
    sa.Column("trigger", sa.String(64), nullable=False),
    sa.Column("delivery_id", sa.String(64), nullable=True),
    sa.Column("requested_by", sa.String(255), nullable=True),
    sa.Column("force", sa.Boolean, nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("attempts", sa.Integer, nullable=False),
    # Bumped whenever a queue message is sent for the job; a message carrying an older value is
    # stale and does nothing, so re-sending (recovery, lock waits) never runs a job twice.
    sa.Column("dispatch", sa.Integer, nullable=False),
    sa.Column("owner", sa.String(255), nullable=True),
    sa.Column("reason", sa.Text, nullable=True),
    sa.Column("round_index", sa.Integer, nullable=True),
    sa.Column("result_head", sa.String(64), nullable=True),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("not_before", sa.DateTime(timezone=True), nullable=True),
    sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
    # The JSON arguments of a comment command other than a review (`/reviewbot dismiss`; migration 0004).
    sa.Column("command", sa.Text, nullable=True),
    sa.Index("ix_service_jobs_pr_state", "repository", "pr", "state"),
    sa.Index("ix_service_jobs_state", "state"),
    sa.Index("ix_service_jobs_finished_at", "finished_at"),  # retention (migration 0005)
)

# One row per `/reviewbot` comment command (migration 0003): the key is the comment's id and its
# updated_at, so the same comment delivered again under a new delivery id (a replay) runs no round.
commands = sa.Table(
    "service_commands",
    metadata,
    sa.Column("command_key", sa.String(96), primary_key=True),
    sa.Column("repository", sa.String(512), nullable=False),
    sa.Column("pr", sa.Integer, nullable=False),
    sa.Column("delivery_id", sa.String(64), nullable=False),
    sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
)

# Monotonic counters and histogram buckets written by servers and workers alike, so /metrics on
# any server shows what every worker on every host did (no shared multiprocess directory).
service_metrics = sa.Table(
    "service_metrics",
    metadata,
    sa.Column("name", sa.String(128), primary_key=True),
    sa.Column("labels", sa.String(512), primary_key=True),  # canonical JSON of the label dict
    sa.Column("value", sa.Float, nullable=False),
)
