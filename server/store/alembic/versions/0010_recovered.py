"""Recovery after a restore (issue 30): which entries of a match a restore from a backup
lost and players' copies brought back (``match.recovered_from``, ``match.recovered_until``;
0 and 0: none), for the table to say so.

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMN (SQLite has it): a batch copy would trip the tables' foreign keys.
    for column in ("recovered_from", "recovered_until"):
        op.add_column(
            "match", sa.Column(column, sa.BigInteger(), nullable=False, server_default="0")
        )
