"""Fixtures for server tests: real servers on 127.0.0.1:0, each test once over a real SQLite
file in tmp_path and once over a fresh database of a real PostgreSQL 15 (``engine``)."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Protocol

import grpc
import pytest
from sqlalchemy import inspect, text

from bench.postgres import PostgresServer
from server.app import App, open_app
from server.config import ServerConfig
from server.store.db import Database
from server.store.migrations import migrate
from tests.testkit import PlayerClient

from .mailkit import hooks, mailbox  # noqa: F401  (fixtures, shared by the notification tests)

AppFactory = Callable[..., App]

ENGINES = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    """The database the test's servers use. A test that only makes sense on one of them says
    so with ``@pytest.mark.parametrize("engine", ["sqlite"])``."""
    return str(request.param)


class DatabaseUrl(Protocol):
    def __call__(self, name: str, *, empty: bool = False) -> str: ...


@pytest.fixture
def database_url(engine: str, request: pytest.FixtureRequest) -> Iterator[DatabaseUrl]:
    """``database_url(name)``: the URL of storage ``name`` ("" is the SQLite default under the
    data directory); on PostgreSQL each name gets its own fresh database, at the newest schema
    revision unless its first call says ``empty=True``, dropped afterwards."""
    yield from database_urls(engine, request, migrated=True)


def database_urls(
    engine: str, request: pytest.FixtureRequest, *, migrated: bool
) -> Iterator[DatabaseUrl]:
    """The body of a ``database_url`` fixture whose PostgreSQL databases are ``migrated``
    unless asked ``empty`` (``test_migrations`` wants them all empty)."""
    if engine == "sqlite":
        yield lambda name, *, empty=False: ""
        return
    server: PostgresServer = request.getfixturevalue("postgres_server")
    urls: dict[str, str] = {}
    with ExitStack() as stack:

        def url(name: str, *, empty: bool = False) -> str:
            if name not in urls:
                database = server.database(migrated=migrated and not empty)
                urls[name] = stack.enter_context(database)
            return urls[name]

        yield url


@pytest.fixture(scope="session")
def migrated_sqlite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file at the newest schema revision, made once per test process. Each server
    ``make_app`` starts on a new SQLite file starts from a copy of it: migrating a new file
    costs about 0.1 s, a large share of a short test. (``test_migrations`` migrates new and
    older files itself.)"""
    path = tmp_path_factory.mktemp("migrated") / "canasta.db"
    database = Database(f"sqlite:///{path}")
    migrate(database)
    database.dispose()
    return path


@pytest.fixture
def make_app(
    tmp_path: Path, database_url: DatabaseUrl, migrated_sqlite: Path
) -> Iterator[AppFactory]:
    """Build (and by default start) a server whose data lives in ``tmp_path / name`` (keys,
    and the SQLite file) and in storage ``name``: the same name again is the same server's
    data, as after a restart."""
    yield from app_factory(tmp_path, database_url, migrated_sqlite)


@pytest.fixture(scope="module", params=ENGINES)
def module_make_app(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    migrated_sqlite: Path,
) -> Iterator[AppFactory]:
    """``make_app`` for a whole test module, once on each database: for a module whose tests
    share a server they never change (each asserts that it stored nothing), where building
    the same table for each would cost more than the test."""
    engine = str(request.param)
    for urls in database_urls(engine, request, migrated=True):
        yield from app_factory(tmp_path_factory.mktemp(f"apps-{engine}"), urls, migrated_sqlite)


def app_factory(
    root: Path, database_url: DatabaseUrl, migrated_sqlite: Path
) -> Iterator[AppFactory]:
    """The body of a ``make_app`` fixture whose servers keep their data under ``root``; stops
    them all when the fixture ends."""
    apps: list[App] = []

    def make(
        name: str = "server", *, start: bool = True, bots: bool = True, **settings: Any
    ) -> App:
        settings.setdefault("database_url", database_url(name))
        # Tests read views far faster than a person: the per-player read budget (300 a
        # minute) is off unless a test is about it (test_attacks sets its own).
        settings.setdefault("limit_reads_per_minute", 0)
        data_dir = root / name
        if not settings["database_url"] and not (data_dir / "canasta.db").exists():
            data_dir.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(migrated_sqlite, data_dir / "canasta.db")
        config = ServerConfig(data_dir=data_dir, listen="127.0.0.1:0", **settings)
        app = open_app(config)
        if start:
            app.server.start()
            app.feed.start()
            if bots:
                app.bots.start()
        apps.append(app)
        return app

    yield make
    for app in apps:
        app.stop(grace=None)


@pytest.fixture
def app(make_app: AppFactory) -> App:
    return make_app()


@pytest.fixture
def channel(app: App) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(f"127.0.0.1:{app.port}") as chan:
        yield chan


@pytest.fixture
def players(channel: grpc.Channel) -> Callable[..., PlayerClient]:
    """``players("alice")``: a registered, signed-in client of the ``app`` server."""

    def make(name: str = "player") -> PlayerClient:
        return PlayerClient(channel).join_server(name)

    return make


def db_dump(app: App) -> list[str]:
    """Every row of every table, as text: compares a database byte for byte.

    SQLite: its own SQL dump (schema too). PostgreSQL: each table's rows ordered by all their
    columns, values in Python's repr (bytes included), on a connection of its own.
    """
    if app.db.is_sqlite:
        path = app.config.db_url.removeprefix("sqlite:///")
        with sqlite3.connect(path) as conn:
            return list(conn.iterdump())
    lines: list[str] = []
    with app.db.engine.connect() as conn:
        for table in sorted(inspect(conn).get_table_names()):
            columns = [c["name"] for c in inspect(conn).get_columns(table)]
            lines.append(f"{table}: {', '.join(columns)}")
            order = ", ".join(str(n) for n in range(1, len(columns) + 1))
            rows = conn.execute(text(f'SELECT * FROM "{table}" ORDER BY {order}'))
            lines.extend(repr(tuple(row)) for row in rows)
    return lines


@pytest.fixture
def dump() -> Callable[[App], list[str]]:
    return db_dump
