"""The store's own errors: what a database refusal that is not a bug means to the rooms above.

The rooms above the store (the service, the edge) know no database library: ``Database``
(``server.store.db``) raises these in place of the library's errors that they stand for, and
the edge maps them to statuses (``server.edge.status``). Any other database error is a bug and
stays the library's (INTERNAL at the edge).
"""

from __future__ import annotations

from sqlalchemy.exc import DataError

from server.store.conflicts import is_busy, is_unique_violation, lost_a_race


class StoreError(Exception):
    """A database refusal that is not a bug (its message is the database's, for the log)."""


class LostRaceError(StoreError):
    """A transaction lost to a concurrent one (PostgreSQL: a serialization failure or a
    deadlock): nothing was stored; read afresh and try again."""


class DuplicateKeyError(LostRaceError):
    """A concurrent insert of the same key won (a duplicate seq, a key registered twice at the
    same moment): nothing was stored."""


class BusyError(StoreError):
    """SQLite's write lock stayed taken for the whole busy timeout (another process, such as an
    operator command, held the database that long), or every pooled connection stayed in use
    for the pool's timeout: try again later."""


class UnstorableError(StoreError):
    """A value the database refuses to store or compare (PostgreSQL: a NUL character in text)."""


def store_error(exc: BaseException) -> StoreError | None:
    """The store's error that a database library's error stands for, or None (a bug, or not
    a database error at all)."""
    if is_unique_violation(exc):
        return DuplicateKeyError(str(exc))
    if lost_a_race(exc):
        return LostRaceError(str(exc))
    if is_busy(exc):
        return BusyError(str(exc))
    if isinstance(exc, DataError):
        return UnstorableError(str(exc))
    return None
