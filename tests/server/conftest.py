"""Fixtures for server tests: real servers on 127.0.0.1:0 over real SQLite files in tmp_path."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from server.app import App, open_app
from server.config import ServerConfig
from server.testkit import PlayerClient

AppFactory = Callable[..., App]


@pytest.fixture
def make_app(tmp_path: Path) -> Iterator[AppFactory]:
    """Build (and by default start) a server whose data lives in ``tmp_path / name``."""
    apps: list[App] = []

    def make(
        name: str = "server", *, start: bool = True, bots: bool = True, **settings: Any
    ) -> App:
        config = ServerConfig(data_dir=tmp_path / name, listen="127.0.0.1:0", **settings)
        app = open_app(config)
        if start:
            app.server.start()
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
    """Every row of every table, as SQL text: compares a database byte for byte."""
    path = app.config.db_url.removeprefix("sqlite:///")
    with sqlite3.connect(path) as conn:
        return list(conn.iterdump())


@pytest.fixture
def dump() -> Callable[[App], list[str]]:
    return db_dump
