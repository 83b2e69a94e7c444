"""Schema migrations: the migrated schema equals the models, and old databases upgrade.

The engine-neutral tests run on SQLite and on PostgreSQL (``engine``, ``database_url``)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import inspect, text
from sqlalchemy.engine import Connection
from sqlmodel import SQLModel

import server.store.models  # noqa: F401  (registers the tables)
from server.store.db import Database
from server.store.migrations import MIGRATIONS, Migration, MigrationError, migrate, schema_version


def _schema(db: Database) -> dict[str, Any]:
    inspector = inspect(db.engine)
    out: dict[str, Any] = {}
    for table in sorted(inspector.get_table_names()):
        if table == "schema_version":
            continue
        out[table] = {
            "columns": [
                (c["name"], str(c["type"]), c["nullable"]) for c in inspector.get_columns(table)
            ],
            "pk": inspector.get_pk_constraint(table)["constrained_columns"],
            "unique": sorted(
                tuple(u["column_names"]) for u in inspector.get_unique_constraints(table)
            ),
            "indexes": sorted(
                (tuple(i["column_names"]), bool(i["unique"])) for i in inspector.get_indexes(table)
            ),
            "fks": sorted(
                (tuple(f["constrained_columns"]), f["referred_table"])
                for f in inspector.get_foreign_keys(table)
            ),
        }
    return out


OpenDatabase = Callable[[str], Database]


@pytest.fixture
def open_db(tmp_path: Path, database_url: Callable[[str], str]) -> Iterator[OpenDatabase]:
    """``open_db(name)``: a Database on storage ``name`` of the test's engine (a new object
    each call, as a second server process would have)."""
    opened: list[Database] = []

    def open_(name: str) -> Database:
        db = Database(database_url(name) or f"sqlite:///{tmp_path / name}.db")
        opened.append(db)
        return db

    yield open_
    for db in opened:
        db.dispose()


def test_migrations_build_exactly_the_models(open_db: OpenDatabase) -> None:
    migrated = open_db("migrated")
    assert migrate(migrated) == [m.version for m in MIGRATIONS]
    modelled = open_db("modelled")
    SQLModel.metadata.create_all(modelled.engine)
    assert _schema(migrated) == _schema(modelled)


def test_migrate_is_idempotent(open_db: OpenDatabase) -> None:
    db = open_db("db")
    assert migrate(db) == [m.version for m in MIGRATIONS]
    assert migrate(db) == []
    assert schema_version(db) == len(MIGRATIONS)


def test_servers_starting_at_once_apply_each_migration_once(open_db: OpenDatabase) -> None:
    dbs = [open_db("db") for _ in range(4)]
    # Create the (empty) database first: on a brand-new SQLite file, connections opening at
    # once can fail switching it to WAL ("database is locked"), which is not a migration race.
    with dbs[0].read() as session:
        session.connection()
    applied: list[list[int]] = []
    errors: list[BaseException] = []
    start = threading.Barrier(len(dbs))

    def run(db: Database) -> None:
        start.wait()
        try:
            applied.append(migrate(db))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(db,)) for db in dbs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    assert sorted(v for versions in applied for v in versions) == [m.version for m in MIGRATIONS]
    assert schema_version(dbs[0]) == len(MIGRATIONS)


def test_a_running_database_is_upgraded_in_place(open_db: OpenDatabase) -> None:
    db = open_db("db")
    migrate(db)
    with db.write() as session:
        session.connection().execute(
            text(
                "INSERT INTO player (public_key, display_name, email, invitation_code, blocked,"
                " created_ms) VALUES (:key, 'alice', '', '', :no, 1)"
            ),
            {"key": b"\x01", "no": False},
        )

    def add_nickname(conn: Connection) -> None:
        conn.execute(text("ALTER TABLE player ADD COLUMN nickname VARCHAR NOT NULL DEFAULT ''"))
        conn.execute(text("UPDATE player SET nickname = display_name"))

    latest = len(MIGRATIONS)
    later = (*MIGRATIONS, Migration(latest + 1, "player nicknames", add_nickname))
    assert migrate(db, later) == [latest + 1]
    with db.read() as session:
        row = session.connection().execute(text("SELECT nickname FROM player")).one()
    assert row[0] == "alice"
    assert schema_version(db) == latest + 1
    with pytest.raises(MigrationError, match="newer than this server"):
        migrate(db)  # the old server refuses the newer schema


def test_a_failed_migration_changes_nothing(open_db: OpenDatabase) -> None:
    db = open_db("db")
    migrate(db)

    def broken(conn: Connection) -> None:
        conn.execute(text("CREATE TABLE half_done (x INTEGER)"))
        raise RuntimeError("boom")

    latest = len(MIGRATIONS)
    with pytest.raises(RuntimeError):
        migrate(db, (*MIGRATIONS, Migration(latest + 1, "broken", broken)))
    assert schema_version(db) == latest
    assert "half_done" not in inspect(db.engine).get_table_names()


def test_migrations_are_numbered_without_gaps(tmp_path: Path) -> None:
    db = Database(f"sqlite:///{tmp_path / 'db.db'}")
    with pytest.raises(MigrationError):
        migrate(db, (Migration(2, "two", lambda conn: None),))


def test_sqlite_is_durable(tmp_path: Path) -> None:
    db = Database(f"sqlite:///{tmp_path / 'db.db'}")
    with db.read() as session:
        conn = session.connection()
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1


def test_v2_keeps_every_snapshot_valid(tmp_path: Path) -> None:
    """A v1 database (a snapshot after every move) upgrades with snapshot_version = version."""
    db = Database(f"sqlite:///{tmp_path / 'db.db'}")
    migrate(db, MIGRATIONS[:1])
    with db.write() as session:
        conn = session.connection()
        conn.execute(
            text(
                "INSERT INTO player (id, public_key, display_name, email, invitation_code,"
                " blocked, created_ms) VALUES (1, x'01', 'alice', '', '', 0, 1)"
            )
        )
        conn.execute(
            text(
                "INSERT INTO match (id, preset, config_json, status, players, version, revision,"
                " head_hash, invite_code, created_by, created_ms, updated_ms, state_json)"
                " VALUES ('m', 'classic', '{}', 'playing', 4, 17, 20, x'00', 'c', 1, 1, 1, '{}')"
            )
        )
    assert migrate(db, MIGRATIONS[:2]) == [2]
    with db.read() as session:
        row = session.connection().execute(text("SELECT snapshot_version FROM match")).one()
    assert row[0] == 17


def test_v3_indexes_when_the_matches_changed(open_db: OpenDatabase) -> None:
    """A v2 database with matches in it gets the change feed's index; doing it twice is
    harmless (another process may have made it)."""
    db = open_db("db")
    migrate(db, MIGRATIONS[:2])
    with db.write() as session:
        conn = session.connection()
        conn.execute(
            text(
                "INSERT INTO player (id, public_key, display_name, email, invitation_code,"
                " blocked, created_ms) VALUES (1, :key, 'alice', '', '', :no, 1)"
            ),
            {"key": b"\x01", "no": False},
        )
        conn.execute(
            text(
                "INSERT INTO match (id, preset, config_json, status, players, version, revision,"
                " head_hash, invite_code, created_by, created_ms, updated_ms, state_json,"
                " snapshot_version) VALUES ('m', 'classic', '{}', 'playing', 4, 1, 2, :hash,"
                " 'c', 1, 1, 5, '', 0)"
            ),
            {"hash": b"\x00"},
        )
    assert migrate(db) == [3]
    indexed = {tuple(i["column_names"]) for i in inspect(db.engine).get_indexes("match")}
    assert ("updated_ms",) in indexed
    with db.write() as session:
        MIGRATIONS[2].apply(session.connection())
    with db.read() as session:
        rows = session.connection().execute(text("SELECT id FROM match WHERE updated_ms >= 5"))
        assert [r[0] for r in rows] == ["m"]
