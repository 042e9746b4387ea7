"""Comment commands seen by the webhook server, so a replayed `/reviewbot` comment runs no new round.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "service_commands",
        sa.Column("command_key", sa.String(96), primary_key=True),
        sa.Column("repository", sa.String(512), nullable=False),
        sa.Column("pr", sa.Integer, nullable=False),
        sa.Column("delivery_id", sa.String(64), nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("service_commands")
