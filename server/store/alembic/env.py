"""Alembic's entry point: run the revisions on the connection ``server.store.migrations``
hands over (inside its transaction and lock), never on one of Alembic's own."""

from __future__ import annotations

from alembic import context

connection = context.config.attributes["connection"]
context.configure(connection=connection, transactional_ddl=True)
with context.begin_transaction():
    context.run_migrations()
