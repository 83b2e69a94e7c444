"""Group commit (``server.committer``) on a real SQLite file: one transaction per batch, a
unit that declines costs the others nothing, a unit that fails after writing leaves no trace
and the rest of its batch is still stored. The same for the event loop's batches
(``run_async``), which also must never block the loop while another writer holds the
database, and whose callers all hear of a failed commit."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, text
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session

from server.committer import GroupCommitter, NothingWrittenError, _Item
from server.db import Database


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = Database(f"sqlite:///{tmp_path / 'c.db'}")
    with database.write() as session:
        session.connection().exec_driver_sql("CREATE TABLE note (text TEXT NOT NULL)")
    yield database
    database.dispose()


def _note(words: str, then: Exception | None = None) -> Callable[[Session], str]:
    def work(session: Session) -> str:
        session.connection().execute(text("INSERT INTO note VALUES (:t)"), {"t": words})
        if then is not None:
            raise then
        return words

    return work


def _declines(session: Session) -> str:
    raise NothingWrittenError


def _notes(db: Database) -> list[str]:
    with db.read() as session:
        rows = session.connection().exec_driver_sql("SELECT text FROM note ORDER BY rowid")
        return [row[0] for row in rows]


def _run_batch(db: Database, works: list[Callable[[Session], Any]]) -> list[_Item[Any]]:
    """One batch, committed as the committer's thread would (without its queue's timing)."""
    committer = GroupCommitter(db)
    committer.stop()
    items: list[_Item[Any]] = [_Item(work) for work in works]
    committer._commit(items)
    assert all(item.done.is_set() for item in items)
    return items


def test_a_batch_is_stored_in_order(db: Database) -> None:
    items = _run_batch(db, [_note("a"), _note("b"), _note("c")])
    assert [i.result for i in items] == ["a", "b", "c"]
    assert _notes(db) == ["a", "b", "c"]


def test_a_unit_that_declines_leaves_the_rest(db: Database) -> None:
    items = _run_batch(db, [_note("a"), _declines, _note("c")])
    assert isinstance(items[1].error, NothingWrittenError)
    assert [items[0].result, items[2].result] == ["a", "c"]
    assert _notes(db) == ["a", "c"]


def test_a_unit_that_fails_after_writing_leaves_no_trace(db: Database) -> None:
    """Its insert is rolled back with the transaction; the units before and after it run
    again in a new one and are stored once."""
    items = _run_batch(db, [_note("a"), _note("b", ValueError("bug")), _note("c")])
    assert isinstance(items[1].error, ValueError)
    assert items[0].error is None
    assert items[2].error is None
    assert [items[0].result, items[2].result] == ["a", "c"]
    assert _notes(db) == ["a", "c"]


def test_run_returns_after_commit_and_raises_the_units_error(db: Database) -> None:
    committer = GroupCommitter(db)
    try:
        assert committer.run(_note("x")) == "x"
        assert _notes(db) == ["x"]
        with pytest.raises(ValueError, match="bug"):
            committer.run(_note("y", ValueError("bug")))
        assert _notes(db) == ["x"]
    finally:
        committer.stop()


# -- the event loop's batches ------------------------------------------------------------------


def _commits(db: Database) -> list[int]:
    """A list that grows by one at each commit on ``db``'s engine."""
    seen: list[int] = []
    event.listen(db.engine, "commit", lambda conn: seen.append(1))
    return seen


def _on_loop(db: Database, works: list[Callable[[Session], Any]]) -> list[Any]:
    """Await every unit at once from one event loop; each outcome, result or exception."""
    committer = GroupCommitter(db)

    async def main() -> list[Any]:
        return await asyncio.gather(
            *(committer.run_async(work) for work in works), return_exceptions=True
        )

    try:
        return asyncio.run(main())
    finally:
        committer.stop()


def test_the_loops_moves_share_one_commit(db: Database) -> None:
    commits = _commits(db)
    assert _on_loop(db, [_note("a"), _note("b"), _note("c")]) == ["a", "b", "c"]
    assert _notes(db) == ["a", "b", "c"]
    assert len(commits) == 1


def test_on_the_loop_a_unit_that_declines_leaves_the_rest(db: Database) -> None:
    outcomes = _on_loop(db, [_note("a"), _declines, _note("c")])
    assert isinstance(outcomes[1], NothingWrittenError)
    assert [outcomes[0], outcomes[2]] == ["a", "c"]
    assert _notes(db) == ["a", "c"]


def test_on_the_loop_a_unit_that_fails_after_writing_leaves_no_trace(db: Database) -> None:
    outcomes = _on_loop(db, [_note("a"), _note("b", ValueError("bug")), _note("c")])
    assert isinstance(outcomes[1], ValueError)
    assert [outcomes[0], outcomes[2]] == ["a", "c"]
    assert _notes(db) == ["a", "c"]


def _with_deferred_check(db: Database) -> Callable[[Session], str]:
    """A unit whose write only fails at COMMIT (SQLite checks a deferred foreign key then),
    as a full disk would fail it."""
    with db.write() as session:
        session.connection().exec_driver_sql("CREATE TABLE parent (id INTEGER PRIMARY KEY)")
        session.connection().exec_driver_sql(
            "CREATE TABLE child (parent_id INTEGER REFERENCES parent (id)"
            " DEFERRABLE INITIALLY DEFERRED)"
        )

    def orphan(session: Session) -> str:
        session.connection().exec_driver_sql("INSERT INTO child VALUES (42)")
        return "orphan"

    return orphan


def test_a_failed_commit_fails_every_caller_of_the_batch(db: Database) -> None:
    """The commit fails in the committer's thread: every move of the batch hears so, nothing
    is stored, and the next batch is stored (the failed transaction did not stay open)."""
    orphan = _with_deferred_check(db)
    outcomes = _on_loop(db, [_note("a"), orphan, _note("c")])
    assert all(isinstance(outcome, IntegrityError) for outcome in outcomes)
    assert _notes(db) == []
    assert _on_loop(db, [_note("later")]) == ["later"]
    assert _notes(db) == ["later"]


def test_a_failed_commit_in_a_thread_leaves_the_database_writable(db: Database) -> None:
    orphan = _with_deferred_check(db)
    items = _run_batch(db, [_note("a"), orphan])
    assert all(isinstance(item.error, IntegrityError) for item in items)
    for _ in range(3):  # whichever pooled connection comes next
        assert _run_batch(db, [_note("b")])[0].result == "b"
    assert _notes(db) == ["b", "b", "b"]


def test_the_loop_goes_on_while_another_writer_holds_the_database(db: Database) -> None:
    """Another writer (here a thread in a long write transaction) holds the database: the
    loop's write waits in the committer's thread, the loop keeps running meanwhile, and the
    write is stored once the other lets go."""
    holding, let_go = threading.Event(), threading.Event()

    def other_writer() -> None:
        with db.write() as session:
            session.connection().execute(text("INSERT INTO note VALUES ('other')"))
            holding.set()
            let_go.wait(30)

    other = threading.Thread(target=other_writer)
    other.start()
    assert holding.wait(30)
    committer = GroupCommitter(db)

    async def main() -> tuple[str, int]:
        write = asyncio.ensure_future(committer.run_async(_note("mine")))
        ticks = 0
        while ticks < 20:  # the loop is free: 20 turns of 10 ms while the write waits
            await asyncio.sleep(0.01)
            ticks += 1
        assert not write.done()
        let_go.set()
        return await write, ticks

    try:
        assert asyncio.run(main()) == ("mine", 20)
    finally:
        let_go.set()
        other.join()
        committer.stop()
    assert _notes(db) == ["other", "mine"]
