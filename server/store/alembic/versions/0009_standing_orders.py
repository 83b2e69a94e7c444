"""Standing orders (issue 28): a player's default orders (``player.order_draw``,
``player.order_answer``, off by default) and a match's own (``seat.order_draw``,
``seat.order_answer``; NULL: the player's default applies), and which log entries the server
made under such an order (``log_entry.standing_order``).

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMN (SQLite has it): a batch copy would trip the tables' foreign keys.
    op.add_column(
        "player", sa.Column("order_draw", sa.Boolean(), nullable=False, server_default=sa.false())
    )
    op.add_column(
        "player",
        sa.Column("order_answer", sa.String(length=8), nullable=False, server_default=""),
    )
    op.add_column("seat", sa.Column("order_draw", sa.Boolean(), nullable=True))
    op.add_column("seat", sa.Column("order_answer", sa.String(length=8), nullable=True))
    op.add_column(
        "log_entry",
        sa.Column("standing_order", sa.Boolean(), nullable=False, server_default=sa.false()),
    )
