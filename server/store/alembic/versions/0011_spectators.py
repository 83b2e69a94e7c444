"""Spectators (issue 32): a match's spectator policy (``match.spectators``, ``none`` unless
its players chose another), the policy each seat's player asked to change it to
(``seat.spectators_vote``), and who follows a match they do not sit in (``spectator``).

Revision ID: 0011
Revises: 0010
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMN (SQLite has it): a batch copy would trip the tables' foreign keys.
    op.add_column(
        "match",
        sa.Column("spectators", sa.String(length=16), nullable=False, server_default="none"),
    )
    op.add_column(
        "seat",
        sa.Column("spectators_vote", sa.String(length=16), nullable=False, server_default=""),
    )
    op.create_table(
        "spectator",
        sa.Column("match_id", sa.String(length=64), sa.ForeignKey("match.id"), primary_key=True),
        sa.Column("player_id", sa.Integer(), sa.ForeignKey("player.id"), primary_key=True),
        sa.Column("first_ms", sa.BigInteger(), nullable=False),
        sa.Column("last_ms", sa.BigInteger(), nullable=False),
    )
