"""Database races the service did not foresee reach the client as ABORTED (retry), never as
INTERNAL: real conflicts from a real SQLite and a real PostgreSQL, through ``status_of``."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import DBAPIError, IntegrityError

from bench.postgres import PostgresServer
from server.edge.status import status_of


def test_a_unique_violation_is_aborted(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'db.sqlite'}")
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE t (k INTEGER PRIMARY KEY)"))
        conn.execute(text("INSERT INTO t VALUES (1)"))
    with pytest.raises(IntegrityError) as info, engine.begin() as conn:
        conn.execute(text("INSERT INTO t VALUES (1)"))
    engine.dispose()
    code, message, trailer = status_of(info.value)
    assert code == grpc.StatusCode.ABORTED
    assert "retry" in message
    assert dict(trailer)["canasta-error"] == "conflict"


@pytest.mark.postgres
def test_a_serialization_failure_is_aborted(postgres_server: PostgresServer) -> None:
    with postgres_server.database() as url:
        engine = create_engine(url, isolation_level="REPEATABLE READ")
        with engine.begin() as conn:
            conn.execute(text("CREATE TABLE t (x INTEGER)"))
            conn.execute(text("INSERT INTO t VALUES (0)"))
        with engine.connect() as first, engine.connect() as second:
            for conn in (first, second):  # both take their snapshot
                conn.execute(text("SELECT x FROM t")).one()
            first.execute(text("UPDATE t SET x = 1"))
            first.commit()
            with pytest.raises(DBAPIError) as info:
                second.execute(text("UPDATE t SET x = 2"))
        engine.dispose()
    assert getattr(info.value.orig, "sqlstate", None) == "40001"
    code, _, trailer = status_of(info.value)
    assert code == grpc.StatusCode.ABORTED
    assert dict(trailer)["canasta-error"] == "conflict"


def test_other_database_errors_stay_internal(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'db.sqlite'}")
    with pytest.raises(DBAPIError) as info, engine.connect() as conn:
        conn.execute(text("SELECT * FROM no_such_table"))
    engine.dispose()
    assert status_of(info.value)[0] == grpc.StatusCode.INTERNAL
