"""Schema migrations through Alembic, so a running database can be upgraded in place.

The revisions are ``server/store/alembic/versions/NNNN_*.py``, one file each, applied in order
(append only; never edit one that has shipped). Each is written against its own frozen table
definitions or plain SQL, never against ``server.store.models``: a later change to the models
must not change what an old revision did. Adding a column means a new revision that alters
the tables, and changing ``server.store.models`` to match; ``tests/server/test_migrations.py``
checks that the migrated schema equals the models.

``migrate`` brings a database to the newest revision in ONE transaction under a lock
(SQLite: the write transaction itself; PostgreSQL: an advisory transaction lock), so servers
starting at once cannot both apply a revision, and a revision that fails leaves the database
as it was. Alembic runs on that transaction's connection (``alembic/env.py``), never on one of
its own. A database migrated before Alembic (a ``schema_version`` table whose highest version
is N) is adopted: stamped at revision N, then upgraded. A database newer than this server's
code is refused rather than touched.
"""

from __future__ import annotations

import logging
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect, text
from sqlalchemy.engine import Connection
from sqlmodel import Session

from server.store.db import Database

log = logging.getLogger("canasta.server")
# Alembic says at INFO, on every start, which dialect it found ("Context impl SQLiteImpl.",
# "Will assume transactional DDL.") and each revision's whole docstring: ``migrate`` says
# instead what it applied, one line a revision.
logging.getLogger("alembic").setLevel(logging.WARNING)

_ADVISORY_LOCK_ID = 0x43414E41  # "CANA"
SCRIPTS = Path(__file__).with_name("alembic")
LEGACY_REVISIONS = {1: "0001", 2: "0002", 3: "0003"}
"""The revision of each version of the hand-written migrations Alembic replaced."""


class MigrationError(RuntimeError):
    """The database cannot be brought to this server's schema."""


def _config(scripts: Path, connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(scripts))
    config.attributes["connection"] = connection
    return config


def head_revision(scripts: Path = SCRIPTS) -> str:
    """The newest revision this server's code knows."""
    head = ScriptDirectory.from_config(_config(scripts)).get_current_head()
    assert head is not None, "no revisions"
    return head


def known_revisions(scripts: Path = SCRIPTS) -> set[str]:
    """Every revision this server's code knows, the newest included."""
    return {r.revision for r in ScriptDirectory.from_config(_config(scripts)).walk_revisions()}


def schema_revision(db: Database) -> str | None:
    """The revision a database is at (None for an empty one)."""
    with db.read() as session:
        return _current(session.connection())


def _current(connection: Connection) -> str | None:
    revision = MigrationContext.configure(connection).get_current_revision()
    if revision is None and inspect(connection).has_table("schema_version"):
        legacy = connection.execute(text("SELECT MAX(version) FROM schema_version")).scalar()
        return LEGACY_REVISIONS.get(int(legacy or 0), f"legacy-{legacy}")
    return revision


def migrate(db: Database, target: str = "head", scripts: Path = SCRIPTS) -> list[str]:
    """Bring the database to ``target`` (the newest revision); the revisions applied, oldest
    first (empty when it was there already). ``scripts``: another revisions directory (tests)."""
    with db.write() as session:
        connection = session.connection()
        _lock(db, session)
        config = _config(scripts, connection)
        # One ScriptDirectory for every question: each new one loads every revision file
        # again (most of what a server's start costs when the schema is already at head).
        revisions = ScriptDirectory.from_config(config)
        current = _current(connection)
        if current is not None and current not in {r.revision for r in revisions.walk_revisions()}:
            raise MigrationError(
                f"the database schema is at revision {current}, which this server does not "
                "know (a newer server made it?): upgrade the server"
            )
        goal = revisions.get_current_head() if target == "head" else target
        assert goal is not None, "no revisions"
        if current == goal:
            return []
        adopted = MigrationContext.configure(connection).get_current_revision() is not None
        if current is not None and not adopted:
            command.stamp(config, current)  # a database of the hand-written migrations
        pending = list(reversed(list(revisions.iterate_revisions(goal, current or "base"))))
        command.upgrade(config, goal)
    for script in pending:  # one line each, once the whole upgrade is committed
        log.info("database schema: applied revision %s (%s)", script.revision, title(script.doc))
    return [script.revision for script in pending]


def title(doc: str | None) -> str:
    """A revision's title for its one log line: its docstring's first clause, on one line."""
    words = " ".join((doc or "").split())
    for mark in (": ", ". "):
        words = words.split(mark, 1)[0]
    words = words.rstrip(".")
    return words if len(words) <= 100 else words[:99] + "…"


def _lock(db: Database, session: Session) -> None:
    if db.engine.dialect.name == "postgresql":
        session.connection().execute(
            text("SELECT pg_advisory_xact_lock(:id)"), {"id": _ADVISORY_LOCK_ID}
        )
