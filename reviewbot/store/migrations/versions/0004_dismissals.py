"""Dismissed findings of a pull request, and the arguments of a comment command on its job.

`dismissals`: one row per (repository, PR, fingerprint); every later round of the PR shows the
finding as dismissed, not blocking, while its fingerprint holds. `service_jobs.command`: the JSON
arguments of a `/reviewbot dismiss` comment, run by the worker after its permission check.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "dismissals",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("repository", sa.String(512), nullable=False),
        sa.Column("pr", sa.Integer, nullable=False),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("rule", sa.String(128), nullable=False),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("dismissed_by", sa.String(255), nullable=False),
        sa.Column("dismissed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
        sa.UniqueConstraint("repository", "pr", "fingerprint", name="uq_dismissals_pr_fingerprint"),
    )
    with op.batch_alter_table("service_jobs") as batch:
        batch.add_column(sa.Column("command", sa.Text, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("service_jobs") as batch:
        batch.drop_column("command")
    op.drop_table("dismissals")
