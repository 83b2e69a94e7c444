"""The match header: the canonical bytes (``shared.transcript.Header``) that a match's hash
chain starts from, so that every signed move commits to the rules and seating.

Written when a match starts. Matches that started before this revision have none (NULL):
their chains start from the old genesis hash, they play on as before, and they cannot be
exported as verifiable transcripts.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("match") as table:
        table.add_column(sa.Column("header", sa.LargeBinary(), nullable=True))
