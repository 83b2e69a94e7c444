"""Index ``match.updated_ms``: while anyone watches, every server process asks several times
a second which matches changed in the last few seconds (``server.service.live.feed``).

``IF NOT EXISTS`` (SQLite and PostgreSQL alike): a database that already has the index,
whoever made it, is left as it is.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("CREATE INDEX IF NOT EXISTS ix_match_updated_ms ON match (updated_ms)")
