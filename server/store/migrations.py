"""Versioned schema migrations, so a running database can be upgraded in place.

The ``schema_version`` table lists every migration applied (version, name, time). ``migrate``
applies the missing ones in order, each in its own transaction together with its
``schema_version`` row, under a lock (SQLite: the write transaction; PostgreSQL: an advisory
lock), so two servers starting at once cannot both apply one. A database newer than this
server's code is refused rather than touched.

Each migration is written against its own frozen table definitions, never against
``server.store.models``: a later change to the models must not change what an old migration did.
Adding a column later means appending ``Migration(2, "...", _v2)`` that alters the tables,
and changing ``server.store.models`` to match; ``tests/server/test_migrations.py`` checks that the
migrated schema equals the models.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

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
    inspect,
    text,
)
from sqlalchemy.engine import Connection
from sqlmodel import Session

from server.store.db import Database

_ADVISORY_LOCK_ID = 0x43414E41  # "CANA"


class MigrationError(RuntimeError):
    """The database cannot be brought to this server's schema."""


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    apply: Callable[[Connection], None]


def _v1_initial(conn: Connection) -> None:
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


def _v2_sparse_snapshots(conn: Connection) -> None:
    """Snapshots every few moves instead of every move: record which seq a snapshot is at.

    Until now every move rewrote the snapshot, so each match's snapshot is at its version.
    """
    conn.execute(text("ALTER TABLE match ADD COLUMN snapshot_version BIGINT NOT NULL DEFAULT 0"))
    conn.execute(text("UPDATE match SET snapshot_version = version"))


def _v3_match_updated_index(conn: Connection) -> None:
    """Index ``match.updated_ms``: while anyone watches, every server process asks several
    times a second which matches changed in the last few seconds (``server.service.feed``).

    ``IF NOT EXISTS`` (SQLite and PostgreSQL alike) on top of ``migrate``'s lock: a database
    that already has the index, whoever made it, is left as it is.
    """
    conn.execute(text("CREATE INDEX IF NOT EXISTS ix_match_updated_ms ON match (updated_ms)"))


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "initial schema", _v1_initial),
    Migration(2, "sparse state snapshots", _v2_sparse_snapshots),
    Migration(3, "index of match.updated_ms for the change feed", _v3_match_updated_index),
)
"""Every migration, in order. Append only; never edit one that has shipped."""

_VERSION_TABLE = Table(
    "schema_version",
    MetaData(),
    Column("version", Integer, primary_key=True, autoincrement=False),
    Column("name", String, nullable=False),
    Column("applied_ms", BigInteger, nullable=False),
)


def schema_version(db: Database) -> int:
    """The highest migration applied (0 for an empty database)."""
    with db.read() as session:
        conn = session.connection()
        if not inspect(conn).has_table("schema_version"):
            return 0
        value = conn.execute(text("SELECT MAX(version) FROM schema_version")).scalar()
        return int(value or 0)


def migrate(db: Database, migrations: Sequence[Migration] = MIGRATIONS) -> list[int]:
    """Apply every pending migration; returns the versions applied (empty if up to date)."""
    versions = [m.version for m in migrations]
    if versions != list(range(1, len(versions) + 1)):
        raise MigrationError("migrations must be numbered 1, 2, 3... without gaps")
    applied: list[int] = []
    for migration in migrations:
        with db.write() as session:
            conn = session.connection()
            _lock(db, session)
            _VERSION_TABLE.create(conn, checkfirst=True)
            current = int(
                conn.execute(text("SELECT MAX(version) FROM schema_version")).scalar() or 0
            )
            if current > len(migrations):
                raise MigrationError(
                    f"the database schema is version {current}, newer than this server knows "
                    f"({len(migrations)}): upgrade the server"
                )
            if migration.version <= current:
                continue
            migration.apply(conn)
            conn.execute(
                _VERSION_TABLE.insert().values(
                    version=migration.version,
                    name=migration.name,
                    applied_ms=int(time.time() * 1000),
                )
            )
            applied.append(migration.version)
    return applied


def _lock(db: Database, session: Session) -> None:
    if not db.is_sqlite and db.engine.dialect.name == "postgresql":
        session.connection().execute(
            text("SELECT pg_advisory_xact_lock(:id)"), {"id": _ADVISORY_LOCK_ID}
        )
