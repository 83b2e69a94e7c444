"""Notifications and absence: each player's delivery settings (a verified e-mail address and
its mode, a webhook) and vacation; the outbox of notifications, written in the same commit as
their cause; how many reminders a timed turn has had; and abandoning a match before its first
deal.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMN (SQLite has it): a batch copy of ``player`` would trip its foreign keys.
    columns: list[sa.Column[object]] = [
        sa.Column("email_verified", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("email_pending", sa.String(), nullable=False, server_default=""),
        sa.Column("email_code_hash", sa.String(), nullable=False, server_default=""),
        sa.Column("email_code_expires_ms", sa.BigInteger(), nullable=False, server_default="0"),
        sa.Column("email_mode", sa.String(), nullable=False, server_default="off"),
        sa.Column("digest_sent_ms", sa.BigInteger(), nullable=False, server_default="0"),
        sa.Column("vacation_started_ms", sa.BigInteger(), nullable=False, server_default="0"),
        sa.Column("vacation_used_ms", sa.BigInteger(), nullable=False, server_default="0"),
        sa.Column("vacation_year", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("webhook_url", sa.String(), nullable=False, server_default=""),
        sa.Column("webhook_secret", sa.String(), nullable=False, server_default=""),
    ]
    for column in columns:
        op.add_column("player", column)
    op.add_column(
        "match", sa.Column("clock_reminded", sa.Integer(), nullable=False, server_default="0")
    )
    op.add_column(
        "match",
        sa.Column("clock_paused_left_ms", sa.BigInteger(), nullable=False, server_default="0"),
    )
    op.add_column(
        "match", sa.Column("aborted", sa.Boolean(), nullable=False, server_default=sa.false())
    )
    op.add_column(
        "seat", sa.Column("abort_asked", sa.Boolean(), nullable=False, server_default=sa.false())
    )
    op.create_table(
        "notification",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("player_id", sa.Integer(), sa.ForeignKey("player.id"), nullable=False),
        sa.Column("match_id", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("detail_json", sa.Text(), nullable=False),
        sa.Column("created_ms", sa.BigInteger(), nullable=False),
        sa.Column("state", sa.String(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_ms", sa.BigInteger(), nullable=False),
        sa.Column("lease_until_ms", sa.BigInteger(), nullable=False),
        sa.Column("email_state", sa.String(), nullable=False),
        sa.Column("webhook_state", sa.String(), nullable=False),
        sa.Column("done_ms", sa.BigInteger(), nullable=False),
    )
    op.create_index("ix_notification_player_id", "notification", ["player_id"])
    op.create_index("ix_notification_state", "notification", ["state"])
    op.create_index("ix_notification_next_attempt_ms", "notification", ["next_attempt_ms"])
