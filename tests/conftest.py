"""Shared pytest configuration for the whole test suite."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bench.postgres import PostgresServer, start_postgres


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One real PostgreSQL 15 for the whole run, started on first use; an error (never a
    skip) when it cannot start, so a green run has always exercised PostgreSQL."""
    server = start_postgres()
    yield server
    server.stop()
