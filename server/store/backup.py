"""Backups of the SQLite database while the server runs, and putting one back.

``backup`` uses SQLite's online backup API in one step: the copy is made inside one read
transaction, so it is the database as of one moment, every acknowledged move before that
moment included, while the server goes on storing moves (in WAL mode a reader never blocks the
writer). The copy is written beside the target under a temporary name, checked, made a
self-contained file (rollback journal, no ``-wal`` beside it), flushed to disk and only then
linked into place: a crash never leaves half a backup under the target's name, and an
existing file is never replaced. The copy is readable by its owner only: it holds the secret
of every deal still in play.

``restore`` puts a backup in place of the database, only while no process has the database
open: every process that opens the SQLite file (``server.store.db.Database``) holds a shared
lock on ``<file>.lock`` until it closes it, and ``restore`` takes that lock exclusively or
refuses. The database it replaces is renamed aside (``<file>.before-restore-<UTC time>``).

PostgreSQL has its own tools (``pg_dump``, ``pg_restore``; docs/operating.md says what to run).
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

from server.store.db import owner_only, sqlite_file, use_lock_path
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
    if make_url(url).get_backend_name() != "sqlite":
        raise BackupError(
            "the database is not SQLite: for PostgreSQL use pg_dump and pg_restore "
            "(docs/operating.md: Backups)"
        )
    try:
        return sqlite_file(url)
    except ValueError as exc:
        raise BackupError(str(exc)) from None


def backup(url: str, target: Path) -> BackupSummary:
    """Copy the live database of ``url`` to ``target`` (which must not exist yet)."""
    source = sqlite_path(url)
    if not source.is_file():
        raise BackupError(f"there is no database at {source}")
    if not target.parent.is_dir():
        raise BackupError(f"the directory {target.parent} does not exist")
    if target.exists():
        raise BackupError(f"{target} exists already: choose a new name (backups never overwrite)")
    started = time.perf_counter()
    partial = _private_file(target.with_name(f".{target.name}.partial-{os.getpid()}"))
    try:
        with closing(_connect(source)) as live, closing(sqlite3.connect(partial)) as copy:
            live.backup(copy)  # one step: one read transaction, one moment of the database
            copy.execute("PRAGMA journal_mode=DELETE")  # one self-contained file
            _check(copy, partial)
        _flush(partial)
        try:
            os.link(partial, target)  # unlike a rename, never replaces a file made meanwhile
        except FileExistsError:
            raise BackupError(f"{target} exists already: choose a new name") from None
        _flush(target.parent)
    finally:
        partial.unlink(missing_ok=True)
    return describe(target, time.perf_counter() - started)


SCHEDULED_PREFIX = "canasta-"
SCHEDULED_SUFFIX = ".db"


def scheduled_backup(
    url: str, directory: Path, every_ms: int, keep: int, now_ms: int
) -> BackupSummary | None:
    """A backup into ``directory`` if the newest one there is ``every_ms`` old (None if not
    due yet, or another process is taking one), named by the UTC time; then only the newest
    ``keep`` of them stay. Several processes on one database may all call it: a lock file in
    the directory lets one at a time look and write."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    lock_path = directory / ".canasta-backup.lock"
    with open(os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600), "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return None  # another process is at it
        taken = _scheduled(directory)
        if taken and now_ms - _taken_ms(taken[-1]) < every_ms:
            return None
        stamp = datetime.fromtimestamp(now_ms / 1000, UTC).strftime("%Y%m%d-%H%M%S")
        summary = backup(url, directory / f"{SCHEDULED_PREFIX}{stamp}{SCHEDULED_SUFFIX}")
        for old in _scheduled(directory)[:-keep]:
            old.unlink(missing_ok=True)
        return summary


def _taken_ms(path: Path) -> int:
    """When a scheduled backup was taken, from its name (``canasta-20261205-180000.db``)."""
    stamp = path.name[len(SCHEDULED_PREFIX) : -len(SCHEDULED_SUFFIX)]
    return int(datetime.strptime(stamp, "%Y%m%d-%H%M%S").replace(tzinfo=UTC).timestamp() * 1000)


def _scheduled(directory: Path) -> list[Path]:
    """The scheduled backups in ``directory``, oldest first (their names sort by time)."""
    return sorted(
        p
        for p in directory.glob(f"{SCHEDULED_PREFIX}*{SCHEDULED_SUFFIX}")
        if len(p.name) == len("canasta-20261205-180000.db")
        and p.name[len(SCHEDULED_PREFIX) : -len(SCHEDULED_SUFFIX)].replace("-", "").isdigit()
    )


def describe(path: Path, seconds: float = 0.0) -> BackupSummary:
    """Read what a backup file holds; ``BackupError`` if it is not a good one."""
    if not path.is_file():
        raise BackupError(f"there is no file {path}")
    try:
        with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as db:
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


def restore(source: Path, url: str, *, new: bool = False) -> tuple[BackupSummary, Path | None]:
    """Put the backup ``source`` in place of the database of ``url``; what it holds, and
    where the database it replaced was moved (None if there was none, which only ``new``
    allows: a restore to a path with no database is more often a wrong path than a new
    machine).

    The database in place (with its ``-wal`` and ``-shm``) is renamed aside, never read, so a
    damaged one is no obstacle; the backup is copied to a temporary file beside it, flushed,
    and renamed into place."""
    summary = describe(source)
    database = sqlite_path(url)
    if not database.parent.is_dir():
        raise BackupError(f"the directory {database.parent} does not exist")
    with _exclusive(database):
        if not database.exists() and not new:
            raise BackupError(
                f"there is no database at {database}: check --data-dir and --config (the "
                "service's own), or pass --new to restore onto a new machine"
            )
        incoming = _private_file(database.with_name(f".{database.name}.restoring-{os.getpid()}"))
        try:
            with (
                closing(sqlite3.connect(source)) as backup_db,
                closing(sqlite3.connect(incoming)) as copy,
            ):
                backup_db.backup(copy)
                copy.execute("PRAGMA journal_mode=DELETE")
                _check(copy, source)
            _flush(incoming)
            kept = _move_aside(database) if database.exists() else None
            os.replace(incoming, database)
            _flush(database.parent)
        finally:
            incoming.unlink(missing_ok=True)
    return summary, kept


def _move_aside(database: Path) -> Path:
    """Rename the database and its ``-wal`` and ``-shm`` to ``<name>.before-restore-<UTC
    time>`` (the three together stay one database); the new name."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
    kept = database.with_name(f"{database.name}.before-restore-{stamp}")
    for suffix in ("-wal", "-shm"):  # the main file last: its name is what the operator sees
        companion = database.with_name(database.name + suffix)
        if companion.exists():
            os.replace(companion, kept.with_name(kept.name + suffix))
    os.replace(database, kept)
    owner_only(kept)  # a copy like any other, though it was made under another umask
    _flush(database.parent)
    return kept


def _private_file(path: Path) -> Path:
    """Create ``path`` empty, readable by its owner only (a copy of the database holds every
    unrevealed deal's secret), failing if it exists."""
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    return path


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
