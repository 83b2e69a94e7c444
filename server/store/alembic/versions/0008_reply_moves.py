"""Moves by mail reply (issue 16): a player opts in (``player.allow_reply_moves``, off by
default), and each mail that invites a reply carries a single-use code, stored here only as
its hash, bound to the player, the match and the version it was mailed for.

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMN (SQLite has it): a batch copy of ``player`` would trip its foreign keys.
    op.add_column(
        "player",
        sa.Column("allow_reply_moves", sa.Boolean(), nullable=False, server_default=sa.false()),
    )
    op.create_table(
        "reply_code",
        sa.Column("code_hash", sa.String(length=64), primary_key=True),
        sa.Column("player_id", sa.Integer(), sa.ForeignKey("player.id"), nullable=False),
        sa.Column("match_id", sa.String(length=64), nullable=False),
        sa.Column("version", sa.BigInteger(), nullable=False),
        sa.Column("created_ms", sa.BigInteger(), nullable=False),
        sa.Column("expires_ms", sa.BigInteger(), nullable=False),
        sa.Column("used_ms", sa.BigInteger(), nullable=False),
    )
    op.create_index("ix_reply_code_player_id", "reply_code", ["player_id"])
    op.create_index("ix_reply_code_expires_ms", "reply_code", ["expires_ms"])
