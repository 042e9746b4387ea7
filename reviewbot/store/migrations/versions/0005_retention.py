"""Indexes for retention: the service prunes deliveries, finished jobs and old rounds by age.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_service_deliveries_received_at", "service_deliveries", ["received_at"])
    op.create_index("ix_service_jobs_finished_at", "service_jobs", ["finished_at"])
    op.create_index("ix_rounds_created_at", "rounds", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_rounds_created_at", table_name="rounds")
    op.drop_index("ix_service_jobs_finished_at", table_name="service_jobs")
    op.drop_index("ix_service_deliveries_received_at", table_name="service_deliveries")
