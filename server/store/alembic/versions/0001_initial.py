"""The initial schema (players, matches, seats, the log, hands, invitations, sign-in).

Written against its own frozen table definitions, never against ``server.store.models``: a
later change to the models must not change what an old revision did.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

from alembic import op
from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    ForeignKey,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

revision = "0001"
down_revision: str | None = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    meta = MetaData()
    Table(
        "player", meta,
        Column("id", Integer, primary_key=True),
        Column("public_key", LargeBinary, nullable=False, unique=True),
        Column("display_name", String, nullable=False),
        Column("email", String, nullable=False),
        Column("invitation_code", String, nullable=False),
        Column("blocked", Boolean, nullable=False),
        Column("created_ms", BigInteger, nullable=False),
    )  # fmt: skip
    Table(
        "match", meta,
        Column("id", String(64), primary_key=True),
        Column("preset", String, nullable=False),
        Column("config_json", Text, nullable=False),
        Column("status", String, nullable=False, index=True),
        Column("players", Integer, nullable=False),
        Column("version", BigInteger, nullable=False),
        Column("revision", BigInteger, nullable=False),
        Column("head_hash", LargeBinary, nullable=False),
        Column("invite_code", String(32), nullable=False, unique=True),
        Column("created_by", Integer, ForeignKey("player.id"), nullable=False),
        Column("created_ms", BigInteger, nullable=False),
        Column("updated_ms", BigInteger, nullable=False),
        Column("state_json", Text, nullable=False),
    )  # fmt: skip
    Table(
        "seat", meta,
        Column("match_id", String(64), ForeignKey("match.id"), primary_key=True),
        Column("seat", Integer, primary_key=True),
        Column("kind", String, nullable=False),
        Column("player_id", Integer, ForeignKey("player.id"), nullable=True, index=True),
        Column("seen_revision", BigInteger, nullable=False),
    )  # fmt: skip
    Table(
        "log_entry", meta,
        Column("id", Integer, primary_key=True),
        Column("match_id", String(64), ForeignKey("match.id"), nullable=False),
        Column("seq", BigInteger, nullable=False),
        Column("seat", Integer, nullable=False),
        Column("hand_number", Integer, nullable=False),
        Column("payload", LargeBinary, nullable=False),
        Column("signature", LargeBinary, nullable=False),
        Column("actor_key", LargeBinary, nullable=False),
        Column("entry_hash", LargeBinary, nullable=False),
        Column("receipt_signature", LargeBinary, nullable=False),
        Column("events_json", Text, nullable=False),
        Column("created_ms", BigInteger, nullable=False),
        UniqueConstraint("match_id", "seq", name="uq_log_entry_match_seq"),
    )  # fmt: skip
    Table(
        "hand", meta,
        Column("match_id", String(64), ForeignKey("match.id"), primary_key=True),
        Column("hand_number", Integer, primary_key=True),
        Column("commitment", LargeBinary, nullable=False),
        Column("secret", LargeBinary, nullable=False),
        Column("revealed", Boolean, nullable=False),
        Column("deal_seq", BigInteger, nullable=False),
        Column("created_ms", BigInteger, nullable=False),
    )  # fmt: skip
    Table(
        "invitation", meta,
        Column("code", String(64), primary_key=True),
        Column("created_ms", BigInteger, nullable=False),
        Column("expires_ms", BigInteger, nullable=False),
        Column("used_by", Integer, ForeignKey("player.id"), nullable=True),
        Column("used_ms", BigInteger, nullable=False),
    )  # fmt: skip
    Table(
        "auth_challenge", meta,
        Column("challenge", LargeBinary, primary_key=True),
        Column("public_key", LargeBinary, nullable=False),
        Column("expires_ms", BigInteger, nullable=False, index=True),
    )  # fmt: skip
    Table(
        "auth_token", meta,
        Column("token_hash", LargeBinary, primary_key=True),
        Column("player_id", Integer, ForeignKey("player.id"), nullable=False, index=True),
        Column("expires_ms", BigInteger, nullable=False, index=True),
    )  # fmt: skip
    meta.create_all(conn)
