"""The database engine and its transactions (SQLModel over SQLite by default, any URL else).

SQLite gets the settings that make a receipt trustworthy: WAL journal (readers never block the
writer) and ``synchronous=FULL`` (every commit is on disk before ``commit()`` returns, so a
receipt is only ever sent for a durable entry; only a write that promises nothing, such as a
"seen" mark, may skip the wait: ``write(durable=False)``). A write transaction starts with ``BEGIN
IMMEDIATE`` (it takes the database's write lock at once, so it never fails half way when a
read turns into a write), and this process's writers take turns on a lock first: SQLite has
one writer at a time anyway, and waiting here is cheaper than SQLite's sleeping retries. An
operator command writing at the same moment from another process waits for the lock
(``busy_timeout``). Other databases (PostgreSQL: ``postgresql+psycopg://...``) run writes at
once, at READ COMMITTED; the service relies only on conditional updates, row locks (``FOR
UPDATE``) and unique constraints, and ``server.edge.status`` reports a race it did not foresee as
ABORTED. A transaction's database errors that are not bugs (a lost race, a busy database, a value
it cannot store) leave it as the store's own (``server.store.errors``).

The move path's statements are prepared SQL text (``server.store.repository``), and
SQLAlchemy's execution machinery around each one costs many times what SQLite takes to run
it (a one-row read: about 0.3 ms against 0.01 ms; a session's begin and commit about 0.5 ms of
CPU, more than the rest of a move's writing). So ``write_statements`` runs a whole write
transaction of such statements on a driver connection, with no session: on SQLite one this
process keeps for them, on PostgreSQL one of the pool's (psycopg, each statement's SQL compiled
once into its parameter style); ``read_row`` reads one row the same way (on SQLite on another
kept connection); and on SQLite ``run`` hands such a statement straight to the driver
connection of a session's transaction. This is the store's one fast path, and it lives here
alone: the same SQL and the same transactions either way, and the driver's errors wrapped as
SQLAlchemy wraps them.

A process that opens a SQLite database holds a shared lock on ``<file>.lock`` until it disposes
of it, so that ``canasta-server restore`` (``server.store.backup``) can tell that nobody uses
the file before it replaces it.
"""

from __future__ import annotations

import fcntl
import functools
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError
from sqlalchemy.sql.elements import TextClause
from sqlmodel import Session, create_engine

from server.store.errors import store_error

_BUSY_TIMEOUT_MS = 30_000
_SYNC_OFF = "SET LOCAL synchronous_commit TO OFF"
Transaction = Session
"""A transaction of ``Database.read`` or ``Database.write``: the rooms above the store hand it
to ``server.store.repository.Repository`` and use nothing of it themselves."""
Rows = list[tuple[Any, ...]]
_WRITE = "canasta_write"
"""Execution option of a write session's connection: its ``synchronous`` level (FULL for a
durable write); its transaction begins IMMEDIATE."""


class Statements(Protocol):
    """A transaction that runs prepared statements (``write_statements``, or a session's)."""

    def run(self, statement: TextClause, params: Mapping[str, Any]) -> tuple[Rows, int]:
        """Execute ``statement``: its rows and the count of rows it changed."""
        ...


class SessionStatements:
    """A session's transaction, as ``Statements``."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def run(self, statement: TextClause, params: Mapping[str, Any]) -> tuple[Rows, int]:
        return run(self.session, statement, params)


class _DriverStatements:
    """A ``sqlite3`` connection's open transaction, as ``Statements``."""

    def __init__(self, driver: Any) -> None:
        self.driver = driver

    def run(self, statement: TextClause, params: Mapping[str, Any]) -> tuple[Rows, int]:
        return _on_driver(self.driver, statement.text, params)


class _PsycopgStatements:
    """A psycopg connection's open transaction, as ``Statements`` (each statement's SQL in
    psycopg's own parameter style: ``Database._driver_sql``)."""

    def __init__(self, database: Database, driver: Any) -> None:
        self.database = database
        self.driver = driver

    def run(self, statement: TextClause, params: Mapping[str, Any]) -> tuple[Rows, int]:
        return self.database._on_psycopg(self.driver, statement, params)


class Database:
    """One engine plus ``read()`` and ``write()`` sessions; pass it around, never import it."""

    def __init__(self, url: str, *, pool_size: int = 16, cache_kib: int = 0) -> None:
        """``cache_kib``: SQLite's page cache for each connection (0: SQLite's own, 2,000
        KiB); the server's is ``sqlite_cache_kib``."""
        parsed = make_url(url)
        self.url = url
        self.is_sqlite = parsed.get_backend_name() == "sqlite"
        self._write_lock = threading.Lock()
        self.on_commit: Callable[[float], None] = _ignore
        """Told the seconds each write transaction's COMMIT took (the server's metrics)."""
        self._lazy_level: str | None = None
        """A lazy write's ``synchronous`` level on SQLite, once asked (``_lazy_sync_level``)."""
        self._kept: dict[str, Any] = {}
        """SQLite: the pooled connections this process keeps checked out, by use ("write" for
        ``write_statements``, under the write lock; "read" for ``read_row``, under
        ``_read_lock``): checking one out of the pool and back costs more than its statement."""
        self._read_lock = threading.Lock()
        self._write_level: str | None = None
        """The ``synchronous`` level the kept write connection is at, or None when unknown: a
        connection taken from the pool may keep the level a ``write(durable=False)`` session
        set on it, so the first transaction on a newly kept one sets its own."""
        if self.is_sqlite:
            path = sqlite_file(url)
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            owner_only(path)
            self._use_lock: int | None = hold_use_lock(path)
            self.engine: Engine = create_engine(
                url,
                connect_args={"check_same_thread": False, "timeout": _BUSY_TIMEOUT_MS / 1000},
                pool_size=pool_size,
                max_overflow=4 * pool_size,
            )
            event.listen(self.engine, "connect", functools.partial(_sqlite_connect, cache_kib))
            event.listen(self.engine, "begin", _sqlite_begin)
        else:
            self._use_lock = None
            self.engine = create_engine(
                url, pool_size=pool_size, max_overflow=4 * pool_size, pool_pre_ping=True
            )
            self._driver_sql: dict[TextClause, str] = {}
            """PostgreSQL: each prepared statement's SQL as the driver takes it, compiled once."""
            self._driver_error: type[Exception] = self.engine.dialect.dbapi.Error  # type: ignore[union-attr]

    def describe(self) -> str:
        """Where the data is, for the start banner: the SQLite file, or PostgreSQL's host,
        port and database (never the password)."""
        if self.is_sqlite:
            return f"SQLite {sqlite_file(self.url)}"
        parsed = make_url(self.url)
        where = f"{parsed.host or 'localhost'}:{parsed.port or 5432}/{parsed.database or ''}"
        return f"PostgreSQL {where}"

    @property
    def waits_on_network(self) -> bool:
        """Whether a statement waits on a network round trip (not on SQLite's local file)."""
        return not self.is_sqlite

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A session for reading, all of it from one snapshot; anything it changed is rolled
        back.

        Readers pair rows read by separate statements (a match and its state snapshot), so
        they must not see a move committed in between. A SQLite read transaction is one
        snapshot; on PostgreSQL that takes REPEATABLE READ (the default, READ COMMITTED, takes
        a new snapshot per statement), which never fails to serialize a read-only transaction.
        """
        with _store_errors(), Session(self.engine, expire_on_commit=False) as session:
            if not self.is_sqlite:
                session.connection(execution_options={"isolation_level": "REPEATABLE READ"})
            yield session

    @contextmanager
    def write(self, *, durable: bool = True) -> Iterator[Session]:
        """A write transaction: committed if the block succeeds, else rolled back.

        ``durable=False`` is for a note nobody is promised, such as which version of a match a
        player has seen: its commit does not wait for the disk (SQLite ``synchronous=NORMAL``
        for this transaction, PostgreSQL ``synchronous_commit`` off), so a read that notes it
        costs no disk flush (about 2 ms of this box's time, the loop's included). A crash of
        the machine (not of the process) may lose such a write, never corrupt the database,
        and the next durable commit makes it durable too."""
        if not self.is_sqlite:
            with _store_errors(), Session(self.engine, expire_on_commit=False) as session:
                session.begin()
                if not durable:
                    session.connection().exec_driver_sql(_SYNC_OFF)
                yield session  # an exception leaves the session, which rolls back
                self._commit(session)
            return
        level = "FULL" if durable else self._lazy_sync_level()
        with (
            _store_errors(),
            self._write_lock,
            Session(self.engine, expire_on_commit=False) as session,
        ):
            connection = session.connection(execution_options={_WRITE: level})
            driver: Any = connection.connection.driver_connection
            try:
                yield session
                self._commit(session)
            except BaseException:
                # A COMMIT that fails (a full disk, an I/O error) leaves SQLite's transaction
                # open, and SQLAlchemy does not roll it back: the pooled connection would keep
                # the database's write lock and every later write would wait for it and fail.
                if driver.in_transaction:
                    driver.rollback()
                raise

    @contextmanager
    def write_statements(self, *, durable: bool = True) -> Iterator[Statements]:
        """``write()`` for a transaction of prepared statements alone (the move path's:
        ``server.store.repository.PreparedRepository``): committed if the block succeeds, else
        rolled back. It runs on the driver with no session (the module's docstring): on SQLite
        on the connection kept for it, on PostgreSQL on one of the pool's."""
        if not self.is_sqlite:
            with _store_errors(), self._pooled_driver() as driver:
                # psycopg begins the transaction with the first statement (READ COMMITTED, as
                # a ``write()`` session's).
                try:
                    if not durable:
                        self._on_psycopg(driver, _SYNC_OFF, {})
                    yield _PsycopgStatements(self, driver)
                    started = time.perf_counter()
                    self._psycopg_call(driver.commit)
                    self.on_commit(time.perf_counter() - started)
                except BaseException:
                    if not driver.closed:
                        self._psycopg_call(driver.rollback)
                    raise
            return
        level = "FULL" if durable else self._lazy_sync_level()
        with _store_errors(), self._write_lock:
            driver = self._kept_driver("write")
            if self._write_level != level:  # the connection keeps it: set it on a change
                _on_driver(driver, f"PRAGMA synchronous={level}", {})
                self._write_level = level
            _on_driver(driver, "BEGIN IMMEDIATE", {})
            try:
                yield _DriverStatements(driver)
                started = time.perf_counter()
                _on_driver(driver, "COMMIT", {})
                self.on_commit(time.perf_counter() - started)
            except BaseException:
                if driver.in_transaction:  # a failed COMMIT too leaves it open (see ``write``)
                    driver.rollback()
                raise

    def read_row(self, statement: TextClause, params: Mapping[str, Any]) -> tuple[Any, ...] | None:
        """The first row of one prepared read, outside any session (one statement reads one
        snapshot on its own). Every signed-in call's token lookup comes here."""
        if not self.is_sqlite:
            # One statement, one snapshot: in autocommit it is its own transaction, with no
            # BEGIN before it and no ROLLBACK after (two round trips fewer on every call).
            with _store_errors(), self._pooled_driver() as driver:
                self._psycopg_call(_autocommit, driver, True)
                try:
                    rows, _ = self._on_psycopg(driver, statement, params)
                finally:
                    if not driver.closed:
                        self._psycopg_call(_autocommit, driver, False)
            return rows[0] if rows else None
        with _store_errors(), self._read_lock:
            rows, _ = _on_driver(self._kept_driver("read"), statement.text, params)
        return rows[0] if rows else None

    @contextmanager
    def _pooled_driver(self) -> Iterator[Any]:
        """PostgreSQL: a psycopg connection from the pool (pinged first, as a session's is),
        given back after the block; one that broke meanwhile is thrown away."""
        pooled = self.engine.raw_connection()
        try:
            yield pooled.driver_connection
        except BaseException:
            driver = pooled.driver_connection
            if driver is None or driver.closed or driver.broken:
                pooled.invalidate()
            raise
        finally:
            pooled.close()

    def _on_psycopg(
        self, driver: Any, statement: TextClause | str, params: Mapping[str, Any]
    ) -> tuple[Rows, int]:
        """Run a prepared statement on a psycopg connection: its rows and the count of rows it
        changed; its errors wrapped as SQLAlchemy wraps them (as ``_on_driver``)."""
        if isinstance(statement, str):
            sql = statement
        else:
            found = self._driver_sql.get(statement)
            if found is None:
                found = self._driver_sql[statement] = str(
                    statement.compile(dialect=self.engine.dialect)
                )
            sql = found
        cursor = self._psycopg_call(driver.execute, sql, params)
        rows = self._psycopg_call(cursor.fetchall) if cursor.description is not None else []
        return [tuple(row) for row in rows], cursor.rowcount

    def _psycopg_call(self, method: Callable[..., Any], *args: Any) -> Any:
        """``method(*args)``, a psycopg error wrapped as SQLAlchemy wraps it."""
        error = self._driver_error
        try:
            return method(*args)
        except error as exc:
            sql = args[0] if args and isinstance(args[0], str) else method.__name__.upper()
            params = dict(args[1]) if len(args) > 1 and isinstance(args[1], Mapping) else {}
            raise DBAPIError.instance(sql, params, exc, error) from None

    def _kept_driver(self, use: str) -> Any:
        """The driver connection kept for ``use`` (opened from the pool on first use, with the
        pool's settings: ``_sqlite_connect``); the caller holds the lock that goes with it."""
        pooled = self._kept.get(use)
        if pooled is None:
            pooled = self._kept[use] = self.engine.raw_connection()
            if use == "write":
                self._write_level = None
        return pooled.driver_connection

    def _lazy_sync_level(self) -> str:
        """NORMAL where the database is in WAL mode; FULL else (in the rollback-journal mode a
        file system without WAL support leaves the file in, a power cut during a NORMAL commit
        may corrupt the database)."""
        if self._lazy_level is None:
            pooled = self.engine.raw_connection()
            try:
                rows, _ = _on_driver(pooled.driver_connection, "PRAGMA journal_mode", {})
            finally:
                pooled.close()
            wal = bool(rows) and str(rows[0][0]).lower() == "wal"
            self._lazy_level = "NORMAL" if wal else "FULL"
        return self._lazy_level

    def _commit(self, session: Session) -> None:
        started = time.perf_counter()
        session.commit()
        self.on_commit(time.perf_counter() - started)

    def dispose(self) -> None:
        with self._write_lock, self._read_lock:
            for pooled in self._kept.values():
                pooled.close()
            self._kept.clear()
            self._write_level = None
        self.engine.dispose()
        if self._use_lock is not None:
            os.close(self._use_lock)
            self._use_lock = None


@contextmanager
def _store_errors() -> Iterator[None]:
    """Raise a database error that is not a bug as the store's own (``store_error``), after
    whatever the transaction's own handlers did with it (rolled it back)."""
    try:
        yield
    except (DBAPIError, PoolTimeoutError) as exc:
        error = store_error(exc)
        if error is None:
            raise
        raise error from exc


def run(session: Session, statement: TextClause, params: Mapping[str, Any]) -> tuple[Rows, int]:
    """Execute a prepared statement in ``session``'s transaction: its rows and the count of
    rows it changed. On SQLite the driver runs it directly (see the module's docstring)."""
    connection = session.connection()
    if connection.dialect.name == "sqlite":
        return _on_driver(connection.connection.driver_connection, statement.text, params)
    result: Any = connection.execute(statement, params)
    rows = [tuple(row) for row in result] if result.returns_rows else []
    return rows, int(result.rowcount)


def _autocommit(driver: Any, on: bool) -> None:
    """Turn a psycopg connection's autocommit on or off (psycopg refuses it, with its own
    error, inside a failed transaction)."""
    driver.autocommit = on


def _on_driver(driver: Any, sql: str, params: Mapping[str, Any]) -> tuple[Rows, int]:
    """Run SQL on a ``sqlite3`` connection: its rows and the count of rows it changed. Its
    errors, fetching included, are wrapped as SQLAlchemy wraps them (a duplicate key is an
    ``IntegrityError``, a busy database an ``OperationalError``, wherever they come from:
    ``server.store.conflicts`` tells them apart)."""
    try:
        cursor = driver.execute(sql, params)
        return cursor.fetchall(), cursor.rowcount
    except sqlite3.Error as exc:
        raise DBAPIError.instance(sql, dict(params), exc, sqlite3.Error) from None


def sqlite_file(url: str) -> Path:
    """The file of a SQLite URL, as a plain path (``ValueError`` for an in-memory database or
    a ``file:`` URI: the use lock and ``restore`` need to know the one file it is)."""
    parsed = make_url(url)
    name = parsed.database or ""
    if name in ("", ":memory:"):
        raise ValueError("the server needs a SQLite file, not an in-memory database")
    if name.startswith("file:") or parsed.query.get("uri"):
        raise ValueError("give the SQLite database as a path (sqlite:///PATH), not a file: URI")
    return Path(name).expanduser()


SQLITE_COMPANIONS = ("-wal", "-shm", "-journal")
"""The files SQLite keeps beside a database while it is in use."""


def owner_only(database: Path) -> None:
    """Make a SQLite database and the files beside it readable by their owner only, whatever
    the umask: they hold players' addresses, webhook secrets and the secrets of every hand in
    play. A new database is created empty with mode 0600 first, since SQLite gives the WAL,
    shared-memory and journal files it makes the database file's own mode."""
    os.close(os.open(database, os.O_RDWR | os.O_CREAT, 0o600))
    for path in (database, *(database.with_name(database.name + s) for s in SQLITE_COMPANIONS)):
        try:
            mode = path.stat().st_mode
        except FileNotFoundError:
            continue
        if mode & 0o077:
            os.chmod(path, mode & 0o700)


def use_lock_path(database: Path) -> Path:
    """The lock file of a SQLite database: shared by its users, exclusive for a restore. Named
    after the file's real path, so that every spelling of it (relative, through a symbolic
    link) shares one lock."""
    real = database.resolve()
    return real.with_name(real.name + ".lock")


def hold_use_lock(database: Path) -> int:
    """Take the shared use lock of ``database``; the descriptor, to close when done. Waits
    while a restore holds it exclusively (seconds at most)."""
    fd = os.open(use_lock_path(database), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_SH)
    return fd


def _ignore(_seconds: float) -> None:
    pass


def _sqlite_begin(conn: Connection) -> None:
    """Begin every transaction ourselves (pysqlite's own handling defers it): IMMEDIATE for
    a write session, after setting its ``synchronous`` level (every write sets its own, as
    SQLite allows only outside a transaction, so no write inherits a lazy one's), and a
    plain (deferred, snapshot-on-first-read) BEGIN for a read."""
    # Straight to the driver: SQLAlchemy's statement machinery would cost more than the BEGIN.
    driver = conn.connection.driver_connection
    level = conn.get_execution_options().get(_WRITE)
    if level is None:
        _on_driver(driver, "BEGIN", {})
        return
    _on_driver(driver, f"PRAGMA synchronous={level}", {})
    _on_driver(driver, "BEGIN IMMEDIATE", {})


def _sqlite_connect(cache_kib: int, dbapi_connection: Any, _record: Any) -> None:
    # Let the "begin" event emit BEGIN itself.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=FULL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute(f"PRAGMA busy_timeout={_BUSY_TIMEOUT_MS}")
    if cache_kib:
        cursor.execute(f"PRAGMA cache_size=-{int(cache_kib)}")
    cursor.close()
