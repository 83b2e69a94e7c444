"""``server.store.db.Database``: durable write transactions on SQLite, what a failed COMMIT
leaves behind (nothing: the next writer gets the database), and the move path's prepared
statements run on the driver (``run``, ``read_row``, ``write_statements``) with the same
transactions and errors (a duplicate key: the store's own ``DuplicateKeyError``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError
from sqlmodel import Session

from bench.postgres import PostgresServer
from server.store.conflicts import is_unique_violation
from server.store.db import Database, Statements, run
from server.store.errors import BusyError, DuplicateKeyError, store_error


@pytest.fixture
def db(tmp_path: Path) -> Database:
    database = Database(f"sqlite:///{tmp_path / 'test.db'}")
    with database.write() as session:
        connection = session.connection()
        connection.exec_driver_sql("CREATE TABLE parent (id INTEGER PRIMARY KEY)")
        connection.exec_driver_sql(
            "CREATE TABLE child (id INTEGER PRIMARY KEY, parent INTEGER REFERENCES parent(id)"
            " DEFERRABLE INITIALLY DEFERRED)"
        )
    return database


def _children(db: Database) -> list[int]:
    with db.read() as session:
        rows = session.connection().exec_driver_sql("SELECT id FROM child ORDER BY id")
        return [row[0] for row in rows]


def test_a_write_is_committed_and_a_failed_block_rolled_back(db: Database) -> None:
    with db.write() as session:
        session.connection().exec_driver_sql("INSERT INTO parent (id) VALUES (1)")
        session.connection().exec_driver_sql("INSERT INTO child (id, parent) VALUES (1, 1)")

    def failing() -> None:
        with db.write() as session:
            session.connection().exec_driver_sql("INSERT INTO child (id, parent) VALUES (2, 1)")
            raise ValueError("bug")

    with pytest.raises(ValueError, match="bug"):
        failing()
    assert _children(db) == [1]


def test_a_failed_commit_leaves_the_database_writable(db: Database) -> None:
    """The deferred foreign key fails only at COMMIT, as a full disk would fail it. SQLite
    then keeps the transaction open; unless it is rolled back, the pooled connection keeps
    the write lock and every later write waits for it and fails."""
    with pytest.raises(IntegrityError), db.write() as session:
        session.connection().exec_driver_sql("INSERT INTO child (id, parent) VALUES (7, 99)")
    for n in range(3):  # whichever pooled connection comes next
        with db.write() as session:
            session.connection().exec_driver_sql(f"INSERT INTO parent (id) VALUES ({n + 10})")
    assert _children(db) == []
    other = Database(db.url)  # another process's connection sees no lock held
    with other.write() as session:
        session.connection().exec_driver_sql("INSERT INTO parent (id) VALUES (99)")
    other.dispose()


def test_a_prepared_statement_runs_in_the_sessions_transaction(db: Database) -> None:
    """``run`` takes the session's own transaction: rolled back with the block, committed
    with it, and its rows and changed-row count are SQLAlchemy's."""
    insert = text("INSERT INTO parent (id) VALUES (:id)")

    def failing() -> None:
        with db.write() as session:
            assert run(session, insert, {"id": 5}) == ([], 1)
            raise ValueError("bug")

    with pytest.raises(ValueError, match="bug"):
        failing()
    with db.write() as session:
        assert run(session, insert, {"id": 6}) == ([], 1)
        assert run(session, text("SELECT id FROM parent WHERE id >= :low"), {"low": 0}) == (
            [(6,)],
            -1,
        )
        assert run(session, text("UPDATE parent SET id = 7 WHERE id = :id"), {"id": 99})[1] == 0
    assert db.read_row(text("SELECT id, 'x' FROM parent WHERE id = :id"), {"id": 6}) == (6, "x")
    assert db.read_row(text("SELECT id FROM parent WHERE id = :id"), {"id": 5}) is None


def test_a_duplicate_key_through_the_driver_is_a_unique_violation(db: Database) -> None:
    """The service tells a lost race (two processes storing one seq) by the store's
    ``DuplicateKeyError`` (SQLAlchemy's ``IntegrityError`` behind it); a statement handed to
    the driver raises the same, and the write transaction is rolled back."""
    insert = text("INSERT INTO parent (id) VALUES (:id)")
    with db.write() as session:
        run(session, insert, {"id": 1})

    def duplicate() -> None:
        with db.write() as session:
            run(session, insert, {"id": 2})
            run(session, insert, {"id": 1})

    with pytest.raises(DuplicateKeyError) as info:
        duplicate()
    assert info.value.__cause__ is not None
    assert is_unique_violation(info.value.__cause__)
    assert db.read_row(text("SELECT count(*) FROM parent"), {}) == (1,)


def _sync_level(session: Session) -> object:
    return session.connection().exec_driver_sql("PRAGMA synchronous").scalar()


def test_only_a_write_that_promises_nothing_skips_the_disk_flush(db: Database) -> None:
    """A "seen" mark (``write(durable=False)``) commits at ``synchronous=NORMAL``; every other
    write sets FULL again for itself, whatever the pooled connection did before."""
    for durable in (False, True, False, False, True):
        with db.write(durable=durable) as session:
            assert _sync_level(session) == (2 if durable else 1)  # FULL, NORMAL
            session.connection().exec_driver_sql("INSERT INTO parent DEFAULT VALUES")
    assert db.read_row(text("SELECT count(*) FROM parent"), {}) == (5,)


def test_the_move_path_commits_durably_on_a_connection_a_lazy_write_used(
    tmp_path: Path,
) -> None:
    """The move path's kept connection may come from the pool after a ``write(durable=False)``
    session left it at NORMAL (a spectator's look before the process's first move): its first
    durable transaction still sets FULL for itself."""
    database = Database(f"sqlite:///{tmp_path / 'lazy.db'}", pool_size=1)
    with database.write(durable=False) as session:
        assert _sync_level(session) == 1  # NORMAL, left on the pool's one connection
    level = text("PRAGMA synchronous")
    for durable in (True, False, True):
        with database.write_statements(durable=durable) as statements:
            assert statements.run(level, {})[0][0][0] == (2 if durable else 1)
    database.dispose()


@pytest.mark.postgres
def test_a_lazy_write_on_postgresql_turns_off_only_its_own_synchronous_commit(
    postgres_server: PostgresServer,
) -> None:
    with postgres_server.database() as url:
        database = Database(url)
        with database.write() as session:  # the test server's own default is off: say on
            name = session.connection().exec_driver_sql("SELECT current_database()").scalar()
            session.connection().exec_driver_sql(
                f'ALTER DATABASE "{name}" SET synchronous_commit = on'
            )
        database.engine.dispose()  # new connections take the database's setting
        show = "SHOW synchronous_commit"
        with database.write(durable=False) as session:
            assert session.connection().exec_driver_sql(show).scalar() == "off"
        with database.write() as session:
            assert session.connection().exec_driver_sql(show).scalar() == "on"
        database.dispose()


def test_an_error_on_a_later_row_is_wrapped_too(db: Database) -> None:
    """SQLite reports some errors only when it reaches the row (here an integer overflow in
    the second): fetching is inside the wrapper, so it is SQLAlchemy's error all the same."""
    overflow = text("SELECT abs(v) FROM (SELECT 1 AS v UNION ALL SELECT -9223372036854775808)")

    def read() -> None:
        with db.read() as session:
            run(session, overflow, {})

    with pytest.raises(OperationalError, match="integer overflow"):
        read()
    with pytest.raises(OperationalError, match="integer overflow"):
        db.read_row(text("SELECT 1 UNION ALL SELECT abs(-9223372036854775808)"), {})


_INSERT_PARENT = text("INSERT INTO parent (id) VALUES (:id)")
_INSERT_CHILD = text("INSERT INTO child (id, parent) VALUES (:id, :parent)")


def test_a_transaction_of_statements_commits_or_rolls_back_as_a_whole(db: Database) -> None:
    """``write_statements`` (a move's transaction, with no session on SQLite): committed when
    the block ends, rolled back when it raises; its rows and counts are ``run``'s."""
    with db.write_statements() as statements:
        assert statements.run(_INSERT_PARENT, {"id": 1}) == ([], 1)
        assert statements.run(_INSERT_CHILD, {"id": 1, "parent": 1}) == ([], 1)
        assert statements.run(text("SELECT id FROM child"), {}) == ([(1,)], -1)

    def failing() -> None:
        with db.write_statements() as statements:
            statements.run(_INSERT_CHILD, {"id": 2, "parent": 1})
            raise ValueError("bug")

    with pytest.raises(ValueError, match="bug"):
        failing()
    assert _children(db) == [1]


def test_a_failed_commit_of_statements_leaves_the_database_writable(db: Database) -> None:
    """As ``test_a_failed_commit_leaves_the_database_writable``, for the connection that
    ``write_statements`` keeps: a COMMIT refused by the deferred key is rolled back, so the
    next transactions (kept connection, session, another process) all get the lock."""
    with pytest.raises(IntegrityError), db.write_statements() as statements:
        statements.run(_INSERT_CHILD, {"id": 7, "parent": 99})
    with db.write_statements() as statements:
        statements.run(_INSERT_PARENT, {"id": 10})
    with db.write() as session:
        run(session, _INSERT_PARENT, {"id": 11})
    other = Database(db.url)
    with other.write_statements() as statements:
        statements.run(_INSERT_PARENT, {"id": 12})
    other.dispose()
    assert _children(db) == []
    assert db.read_row(text("SELECT count(*) FROM parent"), {}) == (3,)


def test_a_duplicate_key_in_a_transaction_of_statements_is_a_unique_violation(
    db: Database,
) -> None:
    with db.write_statements() as statements:
        statements.run(_INSERT_PARENT, {"id": 1})
    _a_duplicate_key_is_refused_whole(db)


def _a_duplicate_key_is_refused_whole(db: Database) -> None:
    """With parent 1 stored: a transaction of statements that inserts 2, then 1 again, fails
    as a unique violation, and its first insert is rolled back with it."""

    def duplicate() -> None:
        with db.write_statements() as statements:
            statements.run(_INSERT_PARENT, {"id": 2})
            statements.run(_INSERT_PARENT, {"id": 1})

    with pytest.raises(DuplicateKeyError) as info:
        duplicate()
    assert info.value.__cause__ is not None
    assert is_unique_violation(info.value.__cause__)
    assert db.read_row(text("SELECT count(*) FROM parent"), {}) == (1,)


def _statements_sync_level(statements: Statements) -> object:
    return statements.run(text("PRAGMA synchronous"), {})[0][0][0]


def test_only_a_lazy_transaction_of_statements_skips_the_disk_flush(db: Database) -> None:
    """The kept connection keeps its level and sets it when a transaction wants another (a
    session sets its own before each transaction): a durable one after a lazy one is FULL
    again, a lazy one after a durable one NORMAL."""
    levels = (True, False, False, True, True, False, True)
    for durable in levels:
        with db.write_statements(durable=durable) as statements:
            assert _statements_sync_level(statements) == (2 if durable else 1)  # FULL, NORMAL
            statements.run(text("INSERT INTO parent DEFAULT VALUES"), {})
    assert db.read_row(text("SELECT count(*) FROM parent"), {}) == (len(levels),)


@pytest.mark.postgres
def test_a_transaction_of_statements_on_postgresql_runs_on_the_driver(
    postgres_server: PostgresServer,
) -> None:
    """On PostgreSQL too the block runs on a driver connection (one of the pool's), with the
    same transactions and errors: committed, rolled back when it raises, a duplicate key the
    same ``DuplicateKeyError``, a lazy one's commit alone not waiting for the disk; and
    ``read_row`` reads outside any transaction."""
    with postgres_server.database() as url:
        database = Database(url)
        with database.write() as session:
            connection = session.connection()
            connection.exec_driver_sql("CREATE TABLE parent (id INTEGER PRIMARY KEY)")
            name = connection.exec_driver_sql("SELECT current_database()").scalar()
            connection.exec_driver_sql(f'ALTER DATABASE "{name}" SET synchronous_commit = on')
        database.engine.dispose()  # new connections take the database's setting
        with database.write_statements() as statements:
            assert statements.run(_INSERT_PARENT, {"id": 1}) == ([], 1)
            assert statements.run(text("SELECT id FROM parent"), {}) == ([(1,)], 1)

        def failing() -> None:
            with database.write_statements() as statements:
                statements.run(_INSERT_PARENT, {"id": 5})
                raise ValueError("bug")

        with pytest.raises(ValueError, match="bug"):
            failing()
        _a_duplicate_key_is_refused_whole(database)
        show = text("SHOW synchronous_commit")
        for durable in (False, True):
            with database.write_statements(durable=durable) as statements:
                assert statements.run(show, {})[0] == [("on" if durable else "off",)]
        in_transaction = text("SELECT now() = statement_timestamp()")
        assert database.read_row(in_transaction, {}) == (True,)  # autocommit: its own
        database.dispose()


def test_a_pool_with_no_free_connection_is_busy_not_a_bug() -> None:
    """Every pooled connection in use for the pool's whole timeout (PostgreSQL under a burst
    of calls) is the store's ``BusyError`` (UNAVAILABLE at the edge, try again), as SQLite's
    held write lock is; not a library error the edge would answer INTERNAL."""
    assert isinstance(store_error(PoolTimeoutError("QueuePool limit reached")), BusyError)
    assert store_error(ValueError("not a database error")) is None
