"""The GitHub App service: webhook deliveries, round jobs and shared metric counters.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "service_deliveries",
        sa.Column("delivery_id", sa.String(64), primary_key=True),
        sa.Column("event", sa.String(64), nullable=False),
        sa.Column("action", sa.String(64), nullable=True),
        sa.Column("repository", sa.String(512), nullable=True),
        sa.Column("pr", sa.Integer, nullable=True),
        sa.Column("outcome", sa.String(32), nullable=False),
        sa.Column("detail", sa.Text, nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "service_jobs",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("repository", sa.String(512), nullable=False),
        sa.Column("pr", sa.Integer, nullable=False),
        sa.Column("head_sha", sa.String(64), nullable=True),
        sa.Column("installation_id", sa.BigInteger, nullable=True),
        sa.Column("trigger", sa.String(64), nullable=False),
        sa.Column("delivery_id", sa.String(64), nullable=True),
        sa.Column("requested_by", sa.String(255), nullable=True),
        sa.Column("force", sa.Boolean, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
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
    )
    op.create_index("ix_service_jobs_pr_state", "service_jobs", ["repository", "pr", "state"])
    op.create_index("ix_service_jobs_state", "service_jobs", ["state"])
    op.create_table(
        "service_metrics",
        sa.Column("name", sa.String(128), primary_key=True),
        sa.Column("labels", sa.String(512), primary_key=True),
        sa.Column("value", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("service_metrics")
    op.drop_index("ix_service_jobs_state", table_name="service_jobs")
    op.drop_index("ix_service_jobs_pr_state", table_name="service_jobs")
    op.drop_table("service_jobs")
    op.drop_table("service_deliveries")
