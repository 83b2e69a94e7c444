"""Which database errors mean "another transaction got there first", or a busy database (not
bugs): what ``server.store.errors`` raises them as.

The service handles the races it expects (a duplicate seq, a duplicate key at registration)
where they happen; the edge reports any other such race as ABORTED (try again).
"""

from __future__ import annotations

from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError

# SQLSTATEs of a transaction that lost to a concurrent one: serialization_failure and
# deadlock_detected (PostgreSQL; the service's own races are handled where they happen).
_RACE_SQLSTATES = frozenset({"40001", "40P01"})


def is_unique_violation(exc: BaseException) -> bool:
    """A duplicate key (a concurrent insert won), not another broken constraint (a bug)."""
    if not isinstance(exc, IntegrityError):
        return False
    orig = getattr(exc, "orig", None)
    sqlstate = getattr(orig, "sqlstate", None)
    if sqlstate is not None:  # PostgreSQL
        return bool(sqlstate == "23505")
    return "UNIQUE constraint failed" in str(orig)  # SQLite


def lost_a_race(exc: BaseException) -> bool:
    """A transaction that lost to a concurrent one: a duplicate key, or (PostgreSQL) a
    serialization failure or deadlock."""
    if is_unique_violation(exc):
        return True
    sqlstate = getattr(getattr(exc, "orig", None), "sqlstate", None)
    return isinstance(exc, DBAPIError) and sqlstate in _RACE_SQLSTATES


def is_busy(exc: BaseException) -> bool:
    """SQLite's write lock stayed taken for the whole busy timeout (another process, such as
    an operator command, held the database that long), or every connection of the pool stayed
    in use for the pool's whole timeout: not a bug, try again later."""
    if isinstance(exc, PoolTimeoutError):  # every pooled connection stayed in use (PostgreSQL)
        return True
    return isinstance(exc, OperationalError) and "database is locked" in str(exc.orig)
