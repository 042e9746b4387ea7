"""Rounds of a pull request and the findings of each round.

Revision ID: 0001
Revises: (none)
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rounds",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("repository", sa.String(512), nullable=False),
        sa.Column("pr", sa.Integer, nullable=False),
        sa.Column("round_index", sa.Integer, nullable=False),
        sa.Column("base_sha", sa.String(64), nullable=False),
        sa.Column("head_sha", sa.String(64), nullable=False),
        sa.Column("merge_base", sa.String(64), nullable=False),
        sa.Column("previous_head", sa.String(64), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("reviewed_at", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("p0", sa.Integer, nullable=False),
        sa.Column("p1", sa.Integer, nullable=False),
        sa.Column("p2", sa.Integer, nullable=False),
        sa.Column("p3", sa.Integer, nullable=False),
        sa.Column("full_review", sa.Boolean, nullable=False),
        sa.Column("force_pushed", sa.Boolean, nullable=False),
        sa.Column("kpi", sa.JSON, nullable=False),
        sa.Column("report_markdown", sa.Text, nullable=False),
        sa.Column("report_json", sa.Text, nullable=False),
        sa.UniqueConstraint("repository", "pr", "round_index", name="uq_rounds_pr_round"),
        sa.UniqueConstraint("repository", "pr", "head_sha", name="uq_rounds_pr_head"),
    )
    op.create_table(
        "round_findings",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column(
            "round_id",
            sa.Integer,
            sa.ForeignKey("rounds.id", name="fk_round_findings_round", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("rule", sa.String(128), nullable=False),
        sa.Column("severity", sa.String(4), nullable=False),
        sa.Column("path", sa.Text, nullable=False),
        sa.Column("line", sa.Integer, nullable=False),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("anchor", sa.Text, nullable=False),
        sa.Column("state", sa.String(32), nullable=False),
        sa.Column("fixed_in", sa.String(64), nullable=True),
        sa.Column("data", sa.JSON, nullable=False),
        sa.UniqueConstraint("round_id", "fingerprint", name="uq_round_findings_fingerprint"),
    )


def downgrade() -> None:
    op.drop_table("round_findings")
    op.drop_table("rounds")
