"""A log entry is keyed by its match and seq (issue 29: storage per move): the surrogate ``id``
and the unique index on ``(match_id, seq)`` go, and that pair becomes the primary key. On
SQLite the table becomes that key's own B-tree (``WITHOUT ROWID``), so the match's id is no
longer stored a second time in an index for every move (about 45 bytes a move after VACUUM).
Nothing refers to ``log_entry.id``.

Revision ID: 0014
Revises: 0013
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

_COLUMNS = (
    "match_id, seq, seat, hand_number, payload, signature, actor_key, entry_hash,"
    " receipt_signature, events_json, created_ms, standing_order"
)


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        op.drop_constraint("uq_log_entry_match_seq", "log_entry", type_="unique")
        op.drop_constraint("log_entry_pkey", "log_entry", type_="primary")
        op.drop_column("log_entry", "id")
        op.create_primary_key("log_entry_pkey", "log_entry", ["match_id", "seq"])
        return
    # SQLite cannot change a table's key in place: a new table, the rows copied in key order.
    op.create_table(
        "log_entry_keyed",
        sa.Column("match_id", sa.String(length=64), sa.ForeignKey("match.id"), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("hand_number", sa.Integer(), nullable=False),
        sa.Column("payload", sa.LargeBinary(), nullable=False),
        sa.Column("signature", sa.LargeBinary(), nullable=False),
        sa.Column("actor_key", sa.LargeBinary(), nullable=False),
        sa.Column("entry_hash", sa.LargeBinary(), nullable=False),
        sa.Column("receipt_signature", sa.LargeBinary(), nullable=False),
        sa.Column("events_json", sa.Text(), nullable=False),
        sa.Column("created_ms", sa.BigInteger(), nullable=False),
        sa.Column("standing_order", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("match_id", "seq"),
        sqlite_with_rowid=False,
    )
    op.execute(
        f"INSERT INTO log_entry_keyed ({_COLUMNS}) SELECT {_COLUMNS} FROM log_entry"
        " ORDER BY match_id, seq"
    )
    op.drop_table("log_entry")
    op.rename_table("log_entry_keyed", "log_entry")
