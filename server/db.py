"""The database engine and its transactions (SQLModel over SQLite by default, any URL else).

SQLite gets the settings that make a receipt trustworthy: WAL journal (readers never block the
writer) and ``synchronous=FULL`` (every commit is on disk before ``commit()`` returns, so a
receipt is only ever sent for a durable entry). Write transactions start with ``BEGIN
IMMEDIATE`` and are serialized in the process, because SQLite has one writer anyway and a
deferred transaction that upgrades to a write can fail with "database is locked" under load;
across processes (``serve --workers N``, operator commands) by ``server.writer_lock``.
Other databases (PostgreSQL: ``postgresql+psycopg://...``) run writes at once, at READ
COMMITTED; the service relies only on conditional updates, row locks (``FOR UPDATE``) and
unique constraints, and ``server.errors`` reports a race it did not foresee as ABORTED.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine, make_url
from sqlmodel import Session, create_engine

from server.writer_lock import WriterLock

_BUSY_TIMEOUT_MS = 30_000

SQLITE_DRIVER = "sqlite_driver"
"""Key of ``Session.info`` under which a write session carries its sqlite3 connection, for
statements that skip SQLAlchemy (``Repository``)."""


class Database:
    """One engine plus ``read()`` and ``write()`` sessions; pass it around, never import it."""

    def __init__(self, url: str, *, pool_size: int = 16) -> None:
        parsed = make_url(url)
        self.url = url
        self.is_sqlite = parsed.get_backend_name() == "sqlite"
        self._write_lock = threading.Lock()
        self._writer: WriterLock | None = None
        if self.is_sqlite:
            if parsed.database in (None, "", ":memory:"):
                raise ValueError("the server needs a SQLite file, not an in-memory database")
            database_file = Path(parsed.database).expanduser()
            database_file.parent.mkdir(parents=True, exist_ok=True)
            self._writer = WriterLock(database_file)
            self.engine: Engine = create_engine(
                url,
                connect_args={"check_same_thread": False, "timeout": _BUSY_TIMEOUT_MS / 1000},
                pool_size=pool_size,
                max_overflow=4 * pool_size,
            )
            event.listen(self.engine, "connect", _sqlite_connect)
            event.listen(self.engine, "begin", self._sqlite_begin)
        else:
            self.engine = create_engine(
                url, pool_size=pool_size, max_overflow=4 * pool_size, pool_pre_ping=True
            )

    def _sqlite_begin(self, conn: Connection) -> None:
        driver: Any = conn.connection.driver_connection
        if not driver.in_transaction:  # else a write transaction begun by ``begin_write``
            conn.exec_driver_sql("BEGIN")

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A session for reading, all of it from one snapshot; anything it changed is rolled
        back.

        Readers pair rows read by separate statements (a match and its state snapshot), so
        they must not see a move committed in between. A SQLite read transaction is one
        snapshot; on PostgreSQL that takes REPEATABLE READ (the default, READ COMMITTED, takes
        a new snapshot per statement), which never fails to serialize a read-only transaction.
        """
        with Session(self.engine, expire_on_commit=False) as session:
            if not self.is_sqlite:
                session.connection(execution_options={"isolation_level": "REPEATABLE READ"})
            yield session

    @contextmanager
    def write(self) -> Iterator[Session]:
        """A write transaction: committed (durably) if the block succeeds, else rolled back."""
        if not self.is_sqlite:
            with Session(self.engine, expire_on_commit=False) as session, session.begin():
                yield session
            return
        transaction = self.begin_write()
        try:
            yield transaction.session
        except BaseException:
            transaction.close()
            raise
        transaction.commit()

    def begin_write(self, connection: Connection | None = None) -> WriteTransaction:
        """Become the writer (this process's threads, then the server's processes) and open
        a SQLite write transaction (``BEGIN IMMEDIATE``) on ``connection`` (one kept by the
        caller), else on one from the pool."""
        transaction = self._begin_write(connection, wait=True)
        assert transaction is not None
        return transaction

    def try_begin_write(self, connection: Connection | None = None) -> WriteTransaction | None:
        """``begin_write`` if no other writer holds the database now, else None at once."""
        return self._begin_write(connection, wait=False)

    def _begin_write(self, connection: Connection | None, *, wait: bool) -> WriteTransaction | None:
        """Open the write transaction, or (not ``wait``) None if another writer has it.

        The transaction is begun and ended on the SQLite driver itself, and its session
        joins it (``_sqlite_begin``): SQLAlchemy's own way costs about 0.12 ms of CPU more
        per transaction, which for a commit of one move is more than the commit. Its steps
        may run in different threads, one at a time: the group committer writes a batch on
        the event loop and commits it in a thread of its own.
        """
        assert self._writer is not None
        if not self._write_lock.acquire(blocking=wait):
            return None
        if not self._writer.acquire(wait=wait):
            self._write_lock.release()
            return None
        borrowed = connection is None
        try:
            if connection is None:
                connection = self.engine.connect()
            driver: Any = connection.connection.driver_connection
            driver.execute("BEGIN IMMEDIATE")
        except BaseException:
            if borrowed and connection is not None:
                connection.close()
            self._release_writer()
            raise
        session = Session(bind=connection, expire_on_commit=False, info={SQLITE_DRIVER: driver})

        def end() -> None:
            try:
                session.close()
                if borrowed:
                    connection.close()
            finally:
                self._release_writer()

        return WriteTransaction(session, driver, end)

    def _release_writer(self) -> None:
        assert self._writer is not None
        try:
            self._writer.release()
        finally:
            self._write_lock.release()

    def dispose(self) -> None:
        self.engine.dispose()
        if self._writer is not None:
            self._writer.close()


class WriteTransaction:
    """An open SQLite write transaction and the writer locks it holds until it ends."""

    def __init__(self, session: Session, driver: Any, end: Callable[[], None]) -> None:
        self.session = session
        self._driver = driver
        """The session's sqlite3 connection."""
        self._end = end

    def commit(self) -> None:
        """Commit durably (a sync to disk), then let the next writer in.

        A COMMIT that fails (a full disk, an I/O error) leaves SQLite's transaction open, and
        SQLAlchemy would not roll it back: the connection would keep the database's write
        lock, and every later write would wait for it and fail. ``close`` rolls it back.
        """
        try:
            if self.session.in_transaction():  # ORM work joined the transaction
                self.session.commit()
            if self._driver.in_transaction:
                self._driver.execute("COMMIT")
        finally:
            self.close()

    def close(self) -> None:
        """End the transaction (rolled back unless committed) and let the next writer in."""
        try:
            if self._driver.in_transaction:
                self._driver.rollback()
        finally:
            self._end()


def _sqlite_connect(dbapi_connection: Any, _record: Any) -> None:
    # Let SQLAlchemy's "begin" event emit BEGIN itself (pysqlite's own handling defers it).
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=FULL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute(f"PRAGMA busy_timeout={_BUSY_TIMEOUT_MS}")
    cursor.close()
