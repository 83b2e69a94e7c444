"""Group commit: many moves, one durable transaction (SQLite).

SQLite has one writer and every durable commit costs a sync to disk, so under load the server
gathers the pending move writes into one transaction, then a single COMMIT makes the whole
batch durable, and only then is each caller told its outcome. Nobody gets a receipt before the
commit that stores their move. For other databases, or when stopped, each write is simply its
own transaction.

A unit of work that finds it has nothing to write (the match moved on) says so by raising
``NothingWrittenError`` before its first write, and the batch goes on. Any other failure may
have left part of that unit's writes behind, so the whole transaction is rolled back and the
rest of the batch runs again without the failed unit. (A savepoint around every unit would do
the same at two more statements per move, and each statement lets another thread take
Python's interpreter lock from the committer: slower under load.)
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from sqlmodel import Session

from server.db import Database

T = TypeVar("T")


class NothingWrittenError(Exception):
    """Raised by a unit of work before its first write: it declined, nothing to undo."""


class _UnitFailedError(Exception):
    """A unit failed after it may have written: roll the transaction back."""


class _Item(Generic[T]):
    def __init__(self, work: Callable[[Session], T]) -> None:
        self.work = work
        self.result: T | None = None
        self.error: BaseException | None = None
        self.done = threading.Event()


class GroupCommitter:
    def __init__(self, db: Database, max_batch: int = 128) -> None:
        self.db = db
        self.max_batch = max_batch
        self._queue: queue.Queue[_Item[Any] | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        if db.is_sqlite:
            self._thread = threading.Thread(target=self._loop, name="group-commit", daemon=True)
            self._thread.start()

    def run(self, work: Callable[[Session], T]) -> T:
        """Run ``work`` in a write transaction; return once that transaction is committed."""
        if self._thread is None:
            with self.db.write() as session:
                return work(session)
        item: _Item[T] = _Item(work)
        self._queue.put(item)
        item.done.wait()
        if item.error is not None:
            raise item.error
        return item.result  # type: ignore[return-value]

    def stop(self) -> None:
        """Commit what is queued, then run later writes directly."""
        thread, self._thread = self._thread, None
        if thread is None:
            return
        self._queue.put(None)
        thread.join(30)
        late: list[_Item[Any]] = []
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is not None:
                late.append(item)
        if late:
            self._commit(late)

    def _loop(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            batch = [first]
            stopping = False
            while len(batch) < self.max_batch:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    stopping = True
                    break
                batch.append(item)
            self._commit(batch)
            if stopping:
                return

    def _commit(self, batch: list[_Item[Any]]) -> None:
        pending = batch
        try:
            while pending:
                pending = self._commit_once(pending)
        finally:
            for item in batch:
                item.done.set()

    def _commit_once(self, batch: list[_Item[Any]]) -> list[_Item[Any]]:
        """Run and commit ``batch``; what must run again (after a unit's failure), else []."""
        failed: _Item[Any] | None = None
        try:
            with self.db.write() as session:
                for item in batch:
                    try:
                        item.result = item.work(session)
                    except NothingWrittenError as exc:
                        item.error = exc
                    except BaseException as exc:
                        item.error, failed = exc, item
                        raise _UnitFailedError from exc
        except _UnitFailedError:
            again = [item for item in batch if item is not failed]
            for item in again:
                item.result = item.error = None
            return again
        except BaseException as exc:  # the commit failed: nothing of the batch is stored
            for item in batch:
                if item.error is None or isinstance(item.error, NothingWrittenError):
                    item.error = exc
        return []
