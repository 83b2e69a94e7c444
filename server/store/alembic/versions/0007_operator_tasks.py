"""The operator's tasks: players deleted by the operator (their name and contact details gone,
their key kept so that the moves they signed still verify), and the log of every action taken
with the ``canasta-server`` admin commands.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "player", sa.Column("deleted_ms", sa.BigInteger(), nullable=False, server_default="0")
    )
    op.create_table(
        "admin_action",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("at_ms", sa.BigInteger(), nullable=False),
        sa.Column("actor", sa.String(), nullable=False),
        sa.Column("action", sa.String(), nullable=False),
        sa.Column("target", sa.String(), nullable=False),
        sa.Column("detail", sa.Text(), nullable=False),
    )
