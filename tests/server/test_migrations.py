"""Schema migrations (Alembic): the migrated schema equals the models, and old databases
upgrade in place, also with matches in flight that are then played on.

The engine-neutral tests run on SQLite and on PostgreSQL (``engine``, ``database_url``)."""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from sqlalchemy import inspect, text
from sqlmodel import SQLModel

import server.store.models  # noqa: F401  (registers the tables)
from server.app import App, open_app
from server.config import ServerConfig
from server.service import matches
from server.store.db import Database
from server.store.migrations import (
    SCRIPTS,
    MigrationError,
    head_revision,
    migrate,
    schema_revision,
)
from tests.testkit import PlayerClient, next_plain_move, replay_history, seated_match

from .conftest import DatabaseUrl, database_urls


def _schema(db: Database) -> dict[str, Any]:
    inspector = inspect(db.engine)
    out: dict[str, Any] = {}
    for table in sorted(inspector.get_table_names()):
        if table in ("schema_version", "alembic_version"):
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
def database_url(engine: str, request: pytest.FixtureRequest) -> Iterator[DatabaseUrl]:
    """Empty PostgreSQL databases: these tests migrate them (``conftest.database_urls``)."""
    yield from database_urls(engine, request, migrated=False)


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


ALL = [
    "0001",
    "0002",
    "0003",
    "0004",
    "0005",
    "0006",
    "0007",
    "0008",
    "0009",
    "0010",
    "0011",
    "0012",
    "0013",
    "0014",
    "0015",
]


def test_migrations_build_exactly_the_models(open_db: OpenDatabase) -> None:
    migrated = open_db("migrated")
    assert migrate(migrated) == ALL
    assert head_revision() == ALL[-1]
    modelled = open_db("modelled")
    SQLModel.metadata.create_all(modelled.engine)
    assert _schema(migrated) == _schema(modelled)


def test_migrate_is_idempotent(open_db: OpenDatabase) -> None:
    db = open_db("db")
    assert schema_revision(db) is None
    assert migrate(db) == ALL
    assert migrate(db) == []
    assert schema_revision(db) == head_revision()


def test_servers_starting_at_once_apply_each_revision_once(open_db: OpenDatabase) -> None:
    dbs = [open_db("db") for _ in range(4)]
    # Create the (empty) database first: on a brand-new SQLite file, connections opening at
    # once can fail switching it to WAL ("database is locked"), which is not a migration race.
    with dbs[0].read() as session:
        session.connection()
    applied: list[list[str]] = []
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
    assert sorted(r for revisions in applied for r in revisions) == ALL
    assert schema_revision(dbs[0]) == head_revision()


def _scripts_with(tmp_path: Path, name: str, upgrade: str) -> Path:
    """A copy of the revisions with one more, ``0099`` (its ``upgrade`` body given)."""
    scripts = tmp_path / f"alembic-{name}"
    shutil.copytree(SCRIPTS, scripts, ignore=shutil.ignore_patterns("__pycache__"))
    (scripts / "versions" / f"0099_{name}.py").write_text(
        f'''"""{name}"""

from alembic import op

revision = "0099"
down_revision = "{ALL[-1]}"
branch_labels = None
depends_on = None


def upgrade() -> None:
{upgrade}
'''
    )
    return scripts


def test_a_running_database_is_upgraded_in_place(open_db: OpenDatabase, tmp_path: Path) -> None:
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
    later = _scripts_with(
        tmp_path,
        "nicknames",
        "    op.execute(\"ALTER TABLE player ADD COLUMN nickname VARCHAR NOT NULL DEFAULT ''\")\n"
        '    op.execute("UPDATE player SET nickname = display_name")',
    )
    assert migrate(db, scripts=later) == ["0099"]
    with db.read() as session:
        row = session.connection().execute(text("SELECT nickname FROM player")).one()
    assert row[0] == "alice"
    with pytest.raises(MigrationError, match="does not know"):
        migrate(db)  # the old server refuses the newer schema


def test_a_failed_revision_changes_nothing(open_db: OpenDatabase, tmp_path: Path) -> None:
    db = open_db("db")
    migrate(db)
    broken = _scripts_with(
        tmp_path,
        "broken",
        '    op.execute("CREATE TABLE half_done (x INTEGER)")\n    raise RuntimeError("boom")',
    )
    with pytest.raises(RuntimeError, match="boom"):
        migrate(db, scripts=broken)
    assert schema_revision(db) == head_revision()
    assert "half_done" not in inspect(db.engine).get_table_names()


@pytest.mark.parametrize("legacy", [2, 3])
def test_a_database_of_the_hand_written_migrations_is_adopted(
    open_db: OpenDatabase, legacy: int
) -> None:
    """Before Alembic the server kept its own ``schema_version`` table: such a database is
    stamped at the revision it was at, then upgraded."""
    db = open_db("db")
    migrate(db, target=ALL[legacy - 1])
    with db.write() as session:
        conn = session.connection()
        conn.execute(text("DROP TABLE alembic_version"))
        conn.execute(
            text(
                "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, name VARCHAR NOT NULL,"
                " applied_ms BIGINT NOT NULL)"
            )
        )
        for version in range(1, legacy + 1):
            conn.execute(text("INSERT INTO schema_version VALUES (:v, 'old', 1)"), {"v": version})
    assert schema_revision(db) == ALL[legacy - 1]
    assert migrate(db) == ALL[legacy:]
    assert schema_revision(db) == head_revision()
    modelled = open_db("modelled")
    SQLModel.metadata.create_all(modelled.engine)
    assert _schema(db) == _schema(modelled)


def test_sqlite_is_durable(tmp_path: Path) -> None:
    db = Database(f"sqlite:///{tmp_path / 'db.db'}")
    with db.read() as session:
        conn = session.connection()
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1


def test_0002_keeps_every_snapshot_valid(tmp_path: Path) -> None:
    """A 0001 database (a snapshot after every move) upgrades with snapshot_version = version."""
    db = Database(f"sqlite:///{tmp_path / 'db.db'}")
    migrate(db, target="0001")
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
    assert migrate(db, target="0002") == ["0002"]
    with db.read() as session:
        row = session.connection().execute(text("SELECT snapshot_version FROM match")).one()
    assert row[0] == 17


def test_0003_indexes_when_the_matches_changed(open_db: OpenDatabase) -> None:
    """A 0002 database with matches in it gets the change feed's index; doing it twice is
    harmless (another process may have made it)."""
    db = open_db("db")
    migrate(db, target="0002")
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
    assert migrate(db, target="0003") == ["0003"]
    indexed = {tuple(i["column_names"]) for i in inspect(db.engine).get_indexes("match")}
    assert ("updated_ms",) in indexed
    with db.write() as session:  # the same statement again, as another process might
        session.connection().execute(
            text("CREATE INDEX IF NOT EXISTS ix_match_updated_ms ON match (updated_ms)")
        )
    with db.read() as session:
        rows = session.connection().execute(text("SELECT id FROM match WHERE updated_ms >= 5"))
        assert [r[0] for r in rows] == ["m"]


_COPIED = ("player", "match", "seat", "log_entry", "hand")


@pytest.mark.slow  # two servers and a hand played out: in make test
def test_matches_in_flight_at_the_first_revision_upgrade_and_play_on(
    tmp_path: Path, database_url: Callable[[str], str]
) -> None:
    """A database at revision 0001 holding a match in flight (as a server of that revision
    left it: the state snapshot at every move) is upgraded by a server starting on it, and the
    match plays on to the end of its hand, one chain, every move verifiable."""
    donor_config = ServerConfig(
        data_dir=tmp_path / "keys", listen="127.0.0.1:0", database_url=database_url("donor")
    )
    donor = open_app(donor_config)
    donor.server.start()
    with grpc.insecure_channel(f"127.0.0.1:{donor.port}") as channel:
        seats = [PlayerClient(channel).join_server(f"p{n}") for n in range(4)]
        match_id = seated_match(seats)
        before = _play(seats, match_id, moves=25)
    rows = _rows_as_at_0001(donor, match_id)
    with donor.db.read() as session:
        found = donor.service.ctx.repo(session).match(match_id)
        assert found is not None
        header = found.header  # a 0001 server kept none: the chain's start, kept aside
    donor.stop(grace=None)

    old = Database(database_url("old") or f"sqlite:///{tmp_path / 'old.db'}")
    migrate(old, target="0001")
    with old.write() as session:
        for table in _COPIED:
            for row in rows[table]:
                columns = ", ".join(row)
                values = ", ".join(f":{c}" for c in row)
                session.connection().execute(
                    text(f"INSERT INTO {table} ({columns}) VALUES ({values})"), row
                )
        if not old.is_sqlite:  # the players' ids were given: move the sequence past them
            session.connection().execute(
                text("SELECT setval(pg_get_serial_sequence('player', 'id'), MAX(id)) FROM player")
            )
    old.dispose()

    upgraded = open_app(
        ServerConfig(data_dir=tmp_path / "keys", listen="127.0.0.1:0", database_url=old.url)
    )
    upgraded.server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{upgraded.port}") as channel:
            again = [PlayerClient(channel, key=s.key) for s in seats]
            for client in again:
                client.login()
            assert again[0].view(match_id).version == before
            after = _play(again, match_id, moves=2000, stop_at_next_deal=True)
            entries, history = again[1].full_history(match_id)
            assert history.header == b""  # begun before revision 0006: none is stored
            history.header = header
            replayed = replay_history(match_id, history, entries, again[0].server_key)
            shown = again[1].view(match_id)
    finally:
        upgraded.stop(grace=None)
    assert schema_revision(upgraded.db) == head_revision()
    assert after > before
    assert [e.seq for e in entries] == list(range(1, after + 1))
    assert replayed.hand_number == shown.view.hand_number
    assert list(replayed.scores) == list(shown.view.scores)


def _play(
    seats: list[PlayerClient], match_id: str, moves: int, *, stop_at_next_deal: bool = False
) -> int:
    """Play ``moves`` plain moves (or until the next hand is to be dealt); the version."""
    for _ in range(moves):
        if (
            next_plain_move(seats, match_id, deal_hand_after=1 if stop_at_next_deal else None)
            is None
        ):
            break
    return int(seats[0].view(match_id).version)


def _rows_as_at_0001(app: App, match_id: str) -> dict[str, list[dict[str, Any]]]:
    """The rows of one match and its players as a 0001 server would have stored them: no
    ``snapshot_version``, and the snapshot always of the state after the last move."""
    rows: dict[str, list[dict[str, Any]]] = {}
    with app.db.read() as session:
        conn = session.connection()
        for table in _COPIED:
            where = (
                ""
                if table == "player"
                else (" WHERE id = :m" if table == "match" else " WHERE match_id = :m")
            )
            result = conn.execute(text(f"SELECT * FROM {table}{where}"), {"m": match_id})
            rows[table] = [dict(r._mapping) for r in result]
        match = app.service.ctx.repo(session).match(match_id)
        assert match is not None
        state = matches.load_state(app.service.ctx, app.service.ctx.repo(session), match)
    for row in rows["log_entry"]:
        row.pop("id", None)  # a surrogate key before 0014: the new database numbers its own
    later = {  # columns added after 0001, by the revision that added them
        "player": ("time_zone", "email_verified", "email_pending", "email_code_hash",
                   "email_code_expires_ms", "email_mode", "digest_sent_ms", "webhook_url",
                   "webhook_secret", "vacation_started_ms", "vacation_used_ms",
                   "vacation_year", "deleted_ms", "allow_reply_moves", "order_draw",
                   "order_answer"),
        "match": ("snapshot_version", "time_control_json", "clock_seat", "clock_started_ms",
                  "clock_due_ms", "clock_reminded", "aborted", "clock_paused_left_ms",
                  "header", "recovered_from", "recovered_until", "spectators", "rated",
                  "rated_ms"),
        "seat": ("bank_ms", "covered", "abort_asked", "order_draw", "order_answer",
                 "spectators_vote", "timeouts", "bot_level"),
        "log_entry": ("standing_order",),
    }  # fmt: skip
    for table, columns in later.items():
        for row in rows.get(table, []):
            for column in columns:
                del row[column]
    for row in rows["match"]:
        row["state_json"] = json.dumps(state.to_json(), separators=(",", ":"))
    return rows
