"""Table talk (issue 32): each match's talk entries, signed by their seats and chained beside
its log (``shared.talk``).

Revision ID: 0015
Revises: 0014
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "talk",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("match_id", sa.String(length=64), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("at_seq", sa.BigInteger(), nullable=False),
        sa.Column("at_hash", sa.LargeBinary(), nullable=False),
        sa.Column("client_ms", sa.BigInteger(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("signature", sa.LargeBinary(), nullable=False),
        sa.Column("talk_hash", sa.LargeBinary(), nullable=False),
        sa.Column("receipt_signature", sa.LargeBinary(), nullable=False),
        sa.Column("created_ms", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(["match_id"], ["match.id"]),
        sa.ForeignKeyConstraint(["player_id"], ["player.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("match_id", "seq", name="uq_talk_match_seq"),
    )
