"""Snapshots every few moves instead of every move: record which seq a snapshot is at.

Until now every move rewrote the snapshot, so each match's snapshot is at its version.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE match ADD COLUMN snapshot_version BIGINT NOT NULL DEFAULT 0")
    op.execute("UPDATE match SET snapshot_version = version")
