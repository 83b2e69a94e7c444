"""Group commit (``server.committer``) on a real SQLite file: one transaction per batch, a
unit that declines costs the others nothing, a unit that fails after writing leaves no trace
and the rest of its batch is still stored."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text
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
