"""``server.writer_lock``: one SQLite writer across processes, handed over in turn.

The other process is a real one (``python -c``) that takes the lock, says so on stdout,
and holds it until told to let go on stdin; nothing here depends on timing except the
bounded waits for a message that must (or must not) come.
"""

from __future__ import annotations

import fcntl
import os
import select
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from server.writer_lock import WriterLock

_OTHER = """
import sys
from pathlib import Path
from server.writer_lock import WriterLock
lock = WriterLock(Path(sys.argv[1]))
lock.acquire()
print("holding", flush=True)
sys.stdin.readline()
lock.release()
print("released", flush=True)
"""


class Other:
    """Another process that wants the writer lock of the same database."""

    def __init__(self, database: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", _OTHER, str(database)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip

    def said(self, seconds: float) -> str:
        """Its next line, or "" if it says nothing for ``seconds``."""
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], seconds)
        return self.process.stdout.readline().strip() if ready else ""

    def let_go(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write("\n")
        self.process.stdin.flush()

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


@pytest.fixture
def database(tmp_path: Path) -> Path:
    return tmp_path / "canasta.db"


@pytest.fixture
def lock(database: Path) -> Iterator[WriterLock]:
    mine = WriterLock(database)
    yield mine
    mine.close()


def _announced(lock: WriterLock) -> bool:
    """Whether a waiter has announced itself on the queue file."""
    fd = os.open(lock.queue_path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def test_another_process_waits_while_i_write(database: Path, lock: WriterLock) -> None:
    lock.acquire()
    other = Other(database)
    try:
        assert other.said(1.0) == ""  # it cannot take the lock while I hold it
        lock.release()
        assert other.said(30) == "holding"
        other.let_go()
        assert other.said(30) == "released"
    finally:
        other.close()


def test_a_waiting_process_goes_before_my_next_write(database: Path, lock: WriterLock) -> None:
    """Fairness: releasing and writing again at once must not overtake a process that was
    already waiting (plain ``flock`` would usually let it)."""
    lock.acquire()
    other = Other(database)
    try:
        for _ in range(600):  # wait for its announcement, at most about 30 s
            if _announced(lock):
                break
            select.select([], [], [], 0.05)
        assert _announced(lock)
        lock.release()  # returns once the waiting process holds the lock
        with open(lock.path, "rb") as probe, pytest.raises(BlockingIOError):
            fcntl.flock(probe.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert other.said(30) == "holding"
        other.let_go()
        lock.acquire()  # mine again once it let go
        assert other.said(30) == "released"
        lock.release()
    finally:
        other.close()


def test_a_try_gives_up_at_once_while_another_process_writes(
    database: Path, lock: WriterLock
) -> None:
    """The event loop only tries (``wait=False``): it must never block on another process."""
    other = Other(database)
    try:
        assert other.said(30) == "holding"
        assert lock.acquire(wait=False) is False
        assert not _announced(lock)  # a try does not queue up
        other.let_go()
        assert other.said(30) == "released"
        assert lock.acquire(wait=False) is True
        lock.release()
    finally:
        other.close()


def test_uncontended_lock_and_files(database: Path, lock: WriterLock) -> None:
    for _ in range(3):
        lock.acquire()
        lock.release()
    assert lock.path.exists()
    assert lock.queue_path.exists()
    assert lock.path.stat().st_mode & 0o777 == 0o600


def test_a_file_system_without_locks_falls_back(tmp_path: Path) -> None:
    """Where ``flock`` fails (a directory that cannot hold the lock file here), writers fall
    back to SQLite's own locking instead of failing every write."""
    missing = tmp_path / "no such dir" / "canasta.db"
    lock = WriterLock(missing)
    lock.acquire()
    lock.release()
    lock.close()
