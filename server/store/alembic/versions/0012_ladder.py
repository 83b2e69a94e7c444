"""The club ladder (issue 33): whether a match counts for it (``match.rated``), when the ladder
took a finished match in (``match.rated_ms``), each seat's turns that ran out
(``seat.timeouts``), and each player's rating and statistics (``standing``).

Revision ID: 0012
Revises: 0011
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMN (SQLite has it): a batch copy would trip the tables' foreign keys.
    op.add_column(
        "match", sa.Column("rated", sa.Boolean(), nullable=False, server_default=sa.true())
    )
    op.add_column(
        "match", sa.Column("rated_ms", sa.BigInteger(), nullable=False, server_default="0")
    )
    op.create_index("ix_match_rated_ms", "match", ["rated_ms"])
    op.add_column("seat", sa.Column("timeouts", sa.Integer(), nullable=False, server_default="0"))
    op.create_table(
        "standing",
        sa.Column("player_id", sa.Integer(), sa.ForeignKey("player.id"), primary_key=True),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("rd", sa.Float(), nullable=False),
        sa.Column("volatility", sa.Float(), nullable=False),
        sa.Column("period", sa.BigInteger(), nullable=False),
        sa.Column("information", sa.Float(), nullable=False),
        sa.Column("surprise", sa.Float(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("matches", sa.Integer(), nullable=False),
        sa.Column("wins", sa.Integer(), nullable=False),
        sa.Column("hands", sa.Integer(), nullable=False),
        sa.Column("hand_points", sa.BigInteger(), nullable=False),
        sa.Column("canastas", sa.Integer(), nullable=False),
        sa.Column("went_out", sa.Integer(), nullable=False),
        sa.Column("moves", sa.Integer(), nullable=False),
        sa.Column("move_ms", sa.BigInteger(), nullable=False),
        sa.Column("timeouts", sa.Integer(), nullable=False),
    )
