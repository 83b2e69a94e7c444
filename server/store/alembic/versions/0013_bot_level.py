"""Bot levels (issue 31): a bot seat's level, chosen when the match is created
(``seat.bot_level``: ``easy``, ``normal`` or ``strong``; empty: ``normal``, as every bot
seat made before it plays).

Revision ID: 0013
Revises: 0012
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMN (SQLite has it): a batch copy would trip the tables' foreign keys.
    op.add_column(
        "seat", sa.Column("bot_level", sa.String(length=16), nullable=False, server_default="")
    )
