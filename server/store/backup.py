"""Backups of the SQLite database while the server runs, and putting one back.

``backup`` uses SQLite's online backup API in one step: the copy is made inside one read
transaction, so it is the database as of one moment, every acknowledged move before that
moment included, while the server goes on storing moves (in WAL mode a reader never blocks the
writer). The copy is written beside the target under a temporary name, checked, made a
self-contained file (rollback journal, no ``-wal`` beside it), flushed to disk and only then
renamed: a crash never leaves half a backup under the target's name.

``restore`` puts a backup in place of the database, only while no process has the database
open: every process that opens the SQLite file (``server.store.db.Database``) holds a shared
lock on ``<file>.lock`` until it closes it, and ``restore`` takes that lock exclusively or
refuses. The database it replaces is kept beside it (``<file>.before-restore-<UTC time>``).

PostgreSQL has its own tools (``pg_dump``, ``pg_restore``; the README says what to run).
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy.engine import make_url

from server.store.db import use_lock_path
from server.store.migrations import known_revisions


class BackupError(RuntimeError):
    """The backup or restore cannot be done; the message says why and what to do."""


@dataclass(frozen=True, slots=True)
class BackupSummary:
    """What a backup file holds, as its operator wants to see it after writing or reading it."""

    path: Path
    revision: str
    matches: int
    moves: int
    players: int
    bytes: int
    seconds: float

    def line(self) -> str:
        return (
            f"{self.path}: {self.matches} matches, {self.moves} moves, {self.players} players "
            f"(schema {self.revision}, {self.bytes:,} bytes, {self.seconds:.2f} s)"
        )


def sqlite_path(url: str) -> Path:
    """The file of a SQLite database URL; ``BackupError`` for any other database."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database:
        raise BackupError(
            "the database is not SQLite: for PostgreSQL use pg_dump and pg_restore "
            "(README: Operating a server)"
        )
    return Path(parsed.database).expanduser()


def backup(url: str, target: Path) -> BackupSummary:
    """Copy the live database of ``url`` to ``target`` (which must not exist yet)."""
    source = sqlite_path(url)
    if not source.is_file():
        raise BackupError(f"there is no database at {source}")
    if target.exists():
        raise BackupError(f"{target} exists already: choose a new name (backups never overwrite)")
    if not target.parent.is_dir():
        raise BackupError(f"the directory {target.parent} does not exist")
    started = time.perf_counter()
    partial = target.with_name(f".{target.name}.partial-{os.getpid()}")
    try:
        with closing(_connect(source)) as live, closing(sqlite3.connect(partial)) as copy:
            live.backup(copy)  # one step: one read transaction, one moment of the database
            copy.execute("PRAGMA journal_mode=DELETE")  # one self-contained file
            _check(copy, partial)
        _flush(partial)
        os.replace(partial, target)
        _flush(target.parent)
    finally:
        partial.unlink(missing_ok=True)
    return describe(target, time.perf_counter() - started)


def describe(path: Path, seconds: float = 0.0) -> BackupSummary:
    """Read what a backup file holds; ``BackupError`` if it is not a good one."""
    if not path.is_file():
        raise BackupError(f"there is no file {path}")
    try:
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            revision = _check(db, path)
            count = {
                table: int(db.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0])
                for table in ("match", "log_entry", "player")
            }
    except sqlite3.DatabaseError as exc:
        raise BackupError(f"{path} is not a canasta-server database ({exc})") from None
    return BackupSummary(
        path, revision, count["match"], count["log_entry"], count["player"],
        path.stat().st_size, seconds,
    )  # fmt: skip


def restore(source: Path, url: str) -> tuple[BackupSummary, Path | None]:
    """Put the backup ``source`` in place of the database of ``url``; what it holds, and
    where the database it replaced was kept (None if there was none)."""
    summary = describe(source)
    database = sqlite_path(url)
    database.parent.mkdir(parents=True, exist_ok=True)
    with _exclusive(database):
        kept = None
        if database.exists():
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
            kept = database.with_name(f"{database.name}.before-restore-{stamp}")
            with closing(_connect(database)) as live, closing(sqlite3.connect(kept)) as copy:
                live.backup(copy)
                copy.execute("PRAGMA journal_mode=DELETE")
            _flush(kept)
        with closing(sqlite3.connect(source)) as backup_db, closing(_connect(database)) as live:
            backup_db.backup(live)
            live.execute("PRAGMA journal_mode=WAL")
        _flush(database)
    return summary, kept


def _connect(path: Path) -> sqlite3.Connection:
    connection = sqlite3.connect(path, timeout=30)
    connection.execute("PRAGMA busy_timeout=30000")
    return connection


def _check(db: sqlite3.Connection, path: Path) -> str:
    """The schema revision of a good copy; ``BackupError`` for a damaged or foreign file."""
    verdict = db.execute("PRAGMA quick_check").fetchone()[0]
    if verdict != "ok":
        raise BackupError(f"{path} is damaged: {verdict}")
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if not {"alembic_version", "match", "log_entry", "player"} <= tables:
        raise BackupError(f"{path} is not a canasta-server database")
    revision = str(db.execute("SELECT version_num FROM alembic_version").fetchone()[0])
    if revision not in known_revisions():
        raise BackupError(
            f"{path} is at schema revision {revision}, which this server does not know "
            "(made by a newer server?): upgrade the server first"
        )
    return revision


@contextmanager
def _exclusive(database: Path) -> Iterator[None]:
    fd = os.open(use_lock_path(database), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise BackupError(
                f"{database} is in use (is the server running?): stop the server, then restore"
            ) from None
        yield
    finally:
        os.close(fd)


def _flush(path: Path) -> None:
    """Make a written file (or a directory's new entry) survive a crash."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
