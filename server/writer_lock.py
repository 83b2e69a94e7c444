"""One SQLite writer at a time across server processes, handed over promptly and fairly.

SQLite allows one write transaction at a time per database file. When a second process asks,
SQLite's busy handler makes it sleep and retry with growing pauses (1, 2, 5, 10 ... 100 ms),
so under load the process that holds the lock keeps getting it back while the other sleeps:
its players see latencies of a second. Each ``canasta-server serve --workers N`` process
instead waits for the database's writer lock file with ``flock``, which the kernel grants the
moment it is free.

``flock`` alone is not fair either: a releasing process that writes again at once (a group
committer with more moves queued) usually takes the lock back before the woken waiter runs.
So a waiter first announces itself with a shared lock on a second file, the *queue* file; a
releasing process that finds the queue taken (it cannot lock it exclusively) waits until the
announced waiter holds the writer lock before it competes again. Under contention the
processes alternate; without it, a write costs four uncontended system calls.

Locks made with ``flock`` belong to an open file, so the threads of one process share them:
callers serialize their own threads first (``Database`` holds a ``threading.Lock``).
"""

from __future__ import annotations

import fcntl
import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)


class WriterLock:
    """Exclusive across processes (not threads), alternating between waiting processes."""

    def __init__(self, database_file: Path) -> None:
        self.path = database_file.with_name(database_file.name + ".write-lock")
        self.queue_path = database_file.with_name(database_file.name + ".write-queue")
        self._lock_fd: int | None = None
        self._queue_fd: int | None = None
        self._broken = False

    def acquire(self, *, wait: bool = True) -> bool:
        """Become the database's writer: block until then, or (``wait`` false) only if no
        other process is the writer now. True once this process is the writer."""
        if self._broken:
            return True
        try:
            lock_fd, queue_fd = self._files()
            try:
                fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                if not wait:
                    return False
            fcntl.flock(queue_fd, fcntl.LOCK_SH)  # announce: "I am waiting"
            try:
                fcntl.flock(lock_fd, fcntl.LOCK_EX)
            finally:
                fcntl.flock(queue_fd, fcntl.LOCK_UN)
        except OSError as exc:  # e.g. a file system without flock: SQLite's own lock remains
            self._give_up(exc)
        return True

    def release(self) -> None:
        """Stop being the writer; if another process is waiting, let it go first."""
        if self._broken or self._lock_fd is None or self._queue_fd is None:
            return
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            try:
                fcntl.flock(self._queue_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                # Someone announced itself: it drops its announcement once it holds the lock.
                fcntl.flock(self._queue_fd, fcntl.LOCK_EX)
            fcntl.flock(self._queue_fd, fcntl.LOCK_UN)
        except OSError as exc:
            self._give_up(exc)

    def close(self) -> None:
        for fd in (self._lock_fd, self._queue_fd):
            if fd is not None:
                os.close(fd)
        self._lock_fd = self._queue_fd = None

    def _files(self) -> tuple[int, int]:
        if self._lock_fd is None or self._queue_fd is None:
            self._lock_fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            self._queue_fd = os.open(self.queue_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        return self._lock_fd, self._queue_fd

    def _give_up(self, exc: OSError) -> None:
        log.warning(
            "cannot lock %s (%s): writers fall back to SQLite's own busy waiting", self.path, exc
        )
        self._broken = True
        self.close()
