"""Group commit: many moves, one durable transaction (SQLite).

SQLite has one writer and every durable commit costs a sync to disk, so under load the server
gathers the pending move writes into one transaction, then a single COMMIT makes the whole
batch durable, and only then is each caller told its outcome. Nobody gets a receipt before the
commit that stores their move. For other databases, or when stopped, each write is simply its
own transaction.

Two kinds of callers, two batches:

- A thread (a bot, an operator task) calls ``run`` and waits; the committer's own thread
  gathers these writes and commits them.
- A coroutine on the gRPC event loop (a player's move) awaits ``run_async``. Its write joins
  the loop's batch. The loop itself runs the batch's statements, and only the steps that
  block go to a thread of their own (``loop-commit``): the ``COMMIT`` with its sync to disk,
  and waiting for the writer lock when another writer holds it. While one batch commits,
  the loop goes on serving and the moves that arrive meanwhile form the next batch.

  Why not let the committer thread run the whole batch: each statement a thread runs gives
  up Python's interpreter lock, and under load every one of them then waited for the busy
  loop to let go of it again (a commit of three moves took 2.7 ms that way; the commit
  itself takes 0.3). Why not commit on the loop: under load the loop then spent a third of
  its time waiting for the disk.

A unit of work that finds it has nothing to write (the match moved on) says so by raising
``NothingWrittenError`` before its first write, and the batch goes on. Any other failure may
have left part of that unit's writes behind, so the whole transaction is rolled back and the
rest of the batch runs again without the failed unit. (A savepoint around every unit would do
the same at two more statements per move, and each statement lets another thread take
Python's interpreter lock from the committer: slower under load.)
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Generic, TypeVar

from sqlalchemy.engine import Connection
from sqlmodel import Session

from server.db import Database, WriteTransaction

T = TypeVar("T")


class NothingWrittenError(Exception):
    """Raised by a unit of work before its first write: it declined, nothing to undo."""


class _UnitFailedError(Exception):
    """A unit failed after it may have written: roll the transaction back."""


class _Item(Generic[T]):
    """One unit of work and how its caller hears the outcome: a thread waits on ``done``; a
    coroutine awaits ``future``."""

    def __init__(
        self, work: Callable[[Session], T], future: asyncio.Future[T] | None = None
    ) -> None:
        self.work = work
        self.result: T | None = None
        self.error: BaseException | None = None
        self.done = threading.Event()
        self.future = future

    def finish(self) -> None:
        """Tell the caller the outcome (a future only from its loop's thread)."""
        if self.future is None:
            self.done.set()
        elif self.future.cancelled():
            return
        elif self.error is not None:
            self.future.set_exception(self.error)
        else:
            self.future.set_result(self.result)  # type: ignore[arg-type]


class GroupCommitter:
    def __init__(self, db: Database, max_batch: int = 128) -> None:
        self.db = db
        self.max_batch = max_batch
        self._queue: queue.Queue[_Item[Any] | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._on_loop: list[_Item[Any]] = []
        """The event loop's next batch (touched by the loop's thread only)."""
        self._loop_busy = False
        """Whether a batch of the loop is being written or committed now."""
        self._blocking: ThreadPoolExecutor | None = None
        """The one thread that waits for the writer lock and commits the loop's batches."""
        self._loop_connection: Connection | None = None
        """The connection the loop's batches are written on, kept (no pool round trip)."""
        if db.is_sqlite:
            self._thread = threading.Thread(target=self._loop, name="group-commit", daemon=True)
            self._thread.start()
            self._blocking = ThreadPoolExecutor(1, thread_name_prefix="loop-commit")

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

    async def run_async(self, work: Callable[[Session], T]) -> T:
        """``run`` for a coroutine on an event loop: the write joins the loop's batch.

        Without the committer thread (other databases, or stopped) the write runs in a worker
        thread, so that the loop never waits for a database round trip.
        """
        loop = asyncio.get_running_loop()
        if self._thread is None:
            return await loop.run_in_executor(None, self.run, work)
        item: _Item[T] = _Item(work, loop.create_future())
        self._on_loop.append(item)
        if not self._loop_busy:
            self._loop_busy = True
            loop.call_soon(self._begin_loop_batch, loop)
        assert item.future is not None
        return await item.future

    def _begin_loop_batch(self, loop: asyncio.AbstractEventLoop) -> None:
        """On the loop: become the writer at once if nobody else is, else have the thread wait."""
        if self._loop_connection is None:
            self._loop_connection = self.db.engine.connect()
        try:
            transaction = self.db.try_begin_write(self._loop_connection)
        except BaseException as exc:
            self._loop_batch_failed(loop, exc)
            return
        if transaction is not None:
            self._write_loop_batch(loop, transaction)
            return
        assert self._blocking is not None
        self._blocking.submit(self._wait_for_writer, loop)

    def _wait_for_writer(self, loop: asyncio.AbstractEventLoop) -> None:
        """In the loop-commit thread: wait to be the writer, then give the loop the batch."""
        try:
            transaction = self.db.begin_write(self._loop_connection)
        except BaseException as exc:
            _call_soon(loop, self._loop_batch_failed, loop, exc)
            return
        if not _call_soon(loop, self._write_loop_batch, loop, transaction):
            transaction.close()

    def _write_loop_batch(
        self, loop: asyncio.AbstractEventLoop, transaction: WriteTransaction
    ) -> None:
        """On the loop: run the batch's writes, then hand the commit to the thread."""
        batch, self._on_loop = self._on_loop, []
        failed = _run_units(transaction.session, batch)
        if failed is not None:  # roll back; the rest goes first in the next batch
            transaction.close()
            failed.finish()
            self._on_loop[:0] = _all_but(batch, failed)
            self._next_loop_batch(loop)
            return
        assert self._blocking is not None
        self._blocking.submit(self._commit_loop_batch, loop, transaction, batch)

    def _commit_loop_batch(
        self,
        loop: asyncio.AbstractEventLoop,
        transaction: WriteTransaction,
        batch: list[_Item[Any]],
    ) -> None:
        """In the loop-commit thread: the durable commit; then the loop tells the callers."""
        try:
            transaction.commit()
        except BaseException as exc:
            _fail_all(batch, exc)
        _call_soon(loop, self._loop_batch_done, loop, batch)

    def _loop_batch_done(self, loop: asyncio.AbstractEventLoop, batch: list[_Item[Any]]) -> None:
        for item in batch:
            item.finish()
        self._next_loop_batch(loop)

    def _loop_batch_failed(self, loop: asyncio.AbstractEventLoop, exc: BaseException) -> None:
        """Becoming the writer failed: the whole waiting batch fails with it."""
        batch, self._on_loop = self._on_loop, []
        _fail_all(batch, exc)
        self._loop_batch_done(loop, batch)

    def _next_loop_batch(self, loop: asyncio.AbstractEventLoop) -> None:
        """Start on what is waiting, at the loop's next turn (so that what arrives meanwhile
        joins it, and retries after failed units never nest)."""
        self._loop_busy = bool(self._on_loop)
        if self._loop_busy:
            loop.call_soon(self._begin_loop_batch, loop)

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
        if self._blocking is not None:
            self._blocking.shutdown(wait=True)
        if self._loop_connection is not None:
            self._loop_connection.close()

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
                item.finish()

    def _commit_once(self, batch: list[_Item[Any]]) -> list[_Item[Any]]:
        """Run and commit ``batch``; what must run again (after a unit's failure), else []."""
        failed: _Item[Any] | None = None
        try:
            with self.db.write() as session:
                failed = _run_units(session, batch)
                if failed is not None:
                    raise _UnitFailedError
        except _UnitFailedError:
            assert failed is not None
            return _all_but(batch, failed)
        except BaseException as exc:  # the commit failed: nothing of the batch is stored
            _fail_all(batch, exc)
        return []


def _run_units(session: Session, batch: list[_Item[Any]]) -> _Item[Any] | None:
    """Run each unit's writes in ``session``; the first unit that failed after it may have
    written (the transaction must be rolled back), else None. Never raises: every failure
    is the unit's."""
    for item in batch:
        try:
            item.result = item.work(session)
        except NothingWrittenError as exc:
            item.error = exc
        except BaseException as exc:
            item.error = exc
            return item
    return None


def _all_but(batch: list[_Item[Any]], failed: _Item[Any]) -> list[_Item[Any]]:
    """The units to run again after ``failed`` made the transaction roll back, reset."""
    again = [item for item in batch if item is not failed]
    for item in again:
        item.result = item.error = None
    return again


def _fail_all(batch: list[_Item[Any]], exc: BaseException) -> None:
    """The commit failed: nothing of the batch is stored."""
    for item in batch:
        if item.error is None or isinstance(item.error, NothingWrittenError):
            item.error = exc


def _call_soon(loop: asyncio.AbstractEventLoop, callback: Callable[..., None], *args: Any) -> bool:
    """Schedule ``callback`` on ``loop`` from another thread; False if the loop has closed."""
    try:
        loop.call_soon_threadsafe(callback, *args)
    except RuntimeError:
        return False
    return True
