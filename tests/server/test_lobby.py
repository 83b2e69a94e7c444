"""The lobby over gRPC: create, join by code with a seat choice, bots, start, refusals."""

from __future__ import annotations

from collections.abc import Callable

import grpc
import pytest
from sqlalchemy import text

from server.app import App
from shared.pb import canasta_pb2 as pb
from tests.testkit import PlayerClient


def _refused(call: Callable[[], object]) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as info:
        call()
    return info.value.code(), info.value.details()


def test_seats_decide_partnerships_and_the_match_starts_when_full(
    players: Callable[..., PlayerClient],
) -> None:
    alice, bob, carol, dave = (players(n) for n in ("alice", "bob", "carol", "dave"))
    created = alice.create_match(seat=1)
    code = created.invite_code
    assert created.match.my_seat == 1
    assert [s.kind for s in created.match.seats].count(pb.SEAT_KIND_EMPTY) == 3
    assert bob.join_match(code, seat=3).seat == 3  # alice's partner
    assert carol.join_match(code).seat == 0  # the first empty seat
    summary = dave.join_match(code).match
    assert summary.status == pb.MATCH_STATUS_PLAYING
    sides = {s.display_name: s.side for s in summary.seats}
    assert sides["alice"] == sides["bob"] != sides["carol"] == sides["dave"]
    assert summary.HasField("to_act")
    view = alice.view(summary.match_id)
    assert view.view.phase == pb.PHASE_DEAL
    assert view.dealing_seat == summary.to_act
    assert len(view.deal_commitment) == 32


def test_two_player_preset_with_options(players: Callable[..., PlayerClient]) -> None:
    alice = players("alice")
    created = alice.create_match(
        "two_player", target=2500, options={"black3_freezes": "true"}, bot_seats=[1]
    )
    assert created.match.players == 2
    assert created.match.target == 2500
    assert created.match.status == pb.MATCH_STATUS_PLAYING
    history = alice.history(created.match.match_id)
    assert '"black3_freezes": true' in history.config_json


def test_fill_with_bots_and_start(app: App, players: Callable[..., PlayerClient]) -> None:
    alice, bob = players("alice"), players("bob")
    created = alice.create_match()
    match_id = created.match.match_id
    summary = alice.fill_with_bot(match_id, seat=2).match
    assert summary.seats[2].kind == pb.SEAT_KIND_BOT
    assert summary.seats[2].public_key == app.service.ctx.keys.bot_public
    code, message = _refused(lambda: bob.join_match(created.invite_code, seat=2))
    assert code == grpc.StatusCode.FAILED_PRECONDITION
    assert "taken" in message
    code, _ = _refused(lambda: bob.start_match(match_id))
    assert code == grpc.StatusCode.PERMISSION_DENIED  # bob does not sit there
    started = alice.start_match(match_id).match
    assert started.status == pb.MATCH_STATUS_PLAYING
    assert [s.kind for s in started.seats] == [pb.SEAT_KIND_HUMAN] + [pb.SEAT_KIND_BOT] * 3
    code, message = _refused(lambda: bob.join_match(created.invite_code))
    assert code == grpc.StatusCode.FAILED_PRECONDITION
    assert "already started" in message
    code, _ = _refused(lambda: alice.start_match(match_id))
    assert code == grpc.StatusCode.FAILED_PRECONDITION


def test_joining_twice_returns_the_same_seat(players: Callable[..., PlayerClient]) -> None:
    alice, bob = players("alice"), players("bob")
    created = alice.create_match()
    assert bob.join_match(created.invite_code).seat == 1
    assert bob.join_match(created.invite_code).seat == 1
    code, _ = _refused(lambda: bob.join_match(created.invite_code, seat=2))
    assert code == grpc.StatusCode.FAILED_PRECONDITION


def test_lobby_refusals(players: Callable[..., PlayerClient]) -> None:
    alice, bob = players("alice"), players("bob")
    created = alice.create_match()
    code, message = _refused(lambda: bob.join_match("no-such-code"))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert "invitation code" in message
    code, _ = _refused(lambda: bob.join_match(created.invite_code, seat=4))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    code, _ = _refused(lambda: bob.view(created.match.match_id))
    assert code == grpc.StatusCode.PERMISSION_DENIED
    code, _ = _refused(lambda: bob.history(created.match.match_id))
    assert code == grpc.StatusCode.PERMISSION_DENIED
    code, _ = _refused(lambda: alice.view("nope"))
    assert code == grpc.StatusCode.NOT_FOUND
    code, _ = _refused(lambda: alice.fill_with_bot("nope"))
    assert code == grpc.StatusCode.NOT_FOUND
    # A waiting match has a view (before the first deal) but takes no moves.
    view = alice.view(created.match.match_id)
    assert view.match.status == pb.MATCH_STATUS_WAITING
    code, message = _refused(lambda: alice.deal(view))
    assert code == grpc.StatusCode.FAILED_PRECONDITION
    assert "not started" in message
    code, message = _refused(lambda: alice.submit(view, ["draw"]))
    assert code == grpc.StatusCode.FAILED_PRECONDITION


def test_my_matches_come_a_page_at_a_time_active_first(
    app: App, players: Callable[..., PlayerClient]
) -> None:
    """ListMyMatches pages (issue 11): the active matches first, oldest first, then the
    finished ones, newest first; a page is never longer than asked, and the tokens walk
    every match exactly once."""
    alice = players("alice")
    created = [alice.create_match(bot_seats=[1, 2, 3]).match for _ in range(5)]
    # The server's order: by creation time, then id (several may share a millisecond).
    active = [m.match_id for m in sorted(created, key=lambda m: (m.created_at_ms, m.match_id))]
    finished = active[:2]
    with app.db.write() as session:  # as if they had been played out
        for match_id in finished:
            session.connection().execute(
                text("UPDATE match SET status = 'finished' WHERE id = :id"), {"id": match_id}
            )
    seen: list[str] = []
    token = ""
    pages = 0
    while True:
        page = alice.stub.ListMyMatches(
            pb.ListMyMatchesRequest(page_size=2, page_token=token), metadata=alice.metadata
        )
        assert len(page.matches) <= 2
        seen.extend(m.match_id for m in page.matches)
        pages += 1
        token = page.next_page_token
        if not token:
            break
    assert seen == active[2:] + finished[::-1]
    assert pages == 3
    only_active = alice.stub.ListMyMatches(
        pb.ListMyMatchesRequest(active_only=True), metadata=alice.metadata
    )
    assert [m.match_id for m in only_active.matches] == active[2:]
    assert not only_active.next_page_token
    for bad in ("x" * 500, "a.\u00b2.abc", "a." + "9" * 5000 + ".abc", f"f.{2**64}.abc", "a.1."):
        with pytest.raises(grpc.RpcError) as info:
            alice.stub.ListMyMatches(
                pb.ListMyMatchesRequest(page_token=bad), metadata=alice.metadata
            )
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
