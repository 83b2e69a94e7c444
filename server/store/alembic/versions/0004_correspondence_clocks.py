"""Correspondence clocks: a match's time control and running turn clock, each seat's reserve
bank and bot cover, each player's time zone.

Every new column has a default, so matches already in play carry on without a clock.

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
    with op.batch_alter_table("player") as table:
        table.add_column(
            sa.Column("time_zone", sa.String(length=64), nullable=False, server_default="UTC")
        )
    with op.batch_alter_table("match") as table:
        table.add_column(
            sa.Column("time_control_json", sa.Text(), nullable=False, server_default="")
        )
        table.add_column(sa.Column("clock_seat", sa.Integer(), nullable=False, server_default="-1"))
        table.add_column(
            sa.Column("clock_started_ms", sa.BigInteger(), nullable=False, server_default="0")
        )
        table.add_column(
            sa.Column("clock_due_ms", sa.BigInteger(), nullable=False, server_default="0")
        )
    op.create_index("ix_match_clock_due_ms", "match", ["clock_due_ms"])
    with op.batch_alter_table("seat") as table:
        table.add_column(sa.Column("bank_ms", sa.BigInteger(), nullable=False, server_default="0"))
        table.add_column(sa.Column("covered", sa.String(), nullable=False, server_default=""))
