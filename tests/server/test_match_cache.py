"""The process's copies of matches (issue 29: memory): as many as ``match_cache_size`` says,
and none of a finished match. A real server over gRPC on SQLite (and PostgreSQL)."""

from __future__ import annotations

from collections.abc import Callable

import grpc
import pytest

from server.app import App
from server.config import ConfigFileError, ServerConfig
from shared import wire
from shared.pb import canasta_pb2 as pb
from tests.testkit import PlayerClient, seated_match

from .conftest import AppFactory


def _cached(app: App, match_id: str) -> tuple[bool, bool, bool]:
    ctx = app.service.ctx
    match = ctx.matches.get(match_id)
    state = ctx.states.get(match_id, match.revision) if match else None
    hands = any(ctx.hands.get((match_id, n)) for n in range(1, 4))
    return match is not None, state is not None, hands


def test_a_finished_match_leaves_the_caches(app: App, players: Callable[..., PlayerClient]) -> None:
    seats = [players(f"player {n}") for n in range(4)]
    match_id = seated_match(seats)
    view = seats[0].view(match_id)
    dealer = seats[view.dealing_seat].view(match_id)
    seats[view.dealing_seat].deal(dealer)  # the first hand is dealt: its record is kept
    view = seats[0].view(match_id)
    assert _cached(app, match_id) == (True, True, True)
    resigned = seats[0].submit(view, ["resign"])
    assert resigned.view.match.status == pb.MATCH_STATUS_FINISHED
    assert _cached(app, match_id) == (False, False, False)
    assert len(app.service.ctx.states) == 0
    # Read again, it comes from the database (and is not kept either).
    assert seats[1].view(match_id).match.status == pb.MATCH_STATUS_FINISHED
    assert _cached(app, match_id) == (False, False, False)


def test_the_caches_hold_match_cache_size_matches(make_app: AppFactory) -> None:
    app = make_app(match_cache_size=16, limit_open_matches=1000)
    with grpc.insecure_channel(f"127.0.0.1:{app.port}") as channel:
        seats = [PlayerClient(channel).join_server(f"p{n}") for n in range(4)]
        ids = [seated_match(seats) for _ in range(20)]
        for match_id in ids:
            view = seats[0].view(match_id)
            dealer = seats[view.dealing_seat]
            dealer.deal(dealer.view(match_id))  # its views carry the deal's events now
            for seat in seats:
                seat.view(match_id)
    # The events of those views, built for sending, are kept twice match_cache_size at most.
    assert 0 < len(wire._EVENT_MESSAGES) <= 32
    ctx = app.service.ctx
    assert len(ctx.matches) == 16
    assert len(ctx.states) == 16
    assert _cached(app, ids[-1])[:2] == (True, True)
    assert _cached(app, ids[0])[:2] == (False, False)


@pytest.mark.parametrize("size", [0, 15, 1_000_001])
def test_match_cache_size_is_bounded(size: int) -> None:
    with pytest.raises(ConfigFileError, match="match_cache_size must be 16 to 1000000"):
        ServerConfig(match_cache_size=size)


def test_sqlite_cache_kib_sizes_each_connections_page_cache(make_app: AppFactory) -> None:
    app = make_app(sqlite_cache_kib=300)
    if not app.db.is_sqlite:
        pytest.skip("SQLite's page cache")
    pooled = app.db.engine.raw_connection()
    try:
        driver = pooled.driver_connection
        assert driver is not None
        assert driver.execute("PRAGMA cache_size").fetchone()[0] == -300
    finally:
        pooled.close()


@pytest.mark.parametrize("size", [63, 1_048_577])
def test_sqlite_cache_kib_is_bounded(size: int) -> None:
    with pytest.raises(ConfigFileError, match="sqlite_cache_kib must be 64 to 1048576"):
        ServerConfig(sqlite_cache_kib=size)
