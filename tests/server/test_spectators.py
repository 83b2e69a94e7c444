"""Spectators through the real service (issue 32): a registered player who sits in a match
follows it only as its players allow (``none``, ``table``, ``after-hand``, ``after-match``),
sees exactly the engine's ``spectator_view`` of the table and, in the history, a hand's hidden
cards and secret only when the policy shows them (docs/rules.md §1.12: a hand is its player's
alone while it is played). Players see who watches, spectators how many; the policy changes
only when every seated player asks for the same one; spectators get no mail or notification."""

from __future__ import annotations

from collections.abc import Callable

import grpc
import pytest

from server.app import App
from server.service.people import admin
from shared.pb import canasta_pb2 as pb
from shared.rules import spectator_view
from shared.wire import view_to_pb
from tests.testkit import PlayerClient, authoritative_state, next_plain_move

from .audit import NOBODY, LeakAudit


def _create(owner: PlayerClient, spectators: str, **fields: object) -> pb.CreateMatchResponse:
    request = pb.CreateMatchRequest(preset="classic", seat=0, spectators=spectators, **fields)  # type: ignore[arg-type]
    response: pb.CreateMatchResponse = owner.stub.CreateMatch(request, metadata=owner.metadata)
    return response


def _four(players: Callable[..., PlayerClient], spectators: str) -> tuple[list[PlayerClient], str]:
    seats = [players(f"seat {n}") for n in range(4)]
    created = _create(seats[0], spectators)
    for seat, player in enumerate(seats[1:], start=1):
        player.join_match(created.invite_code, seat=seat)
    return seats, created.match.match_id


def _ask(player: PlayerClient, match_id: str, policy: str) -> pb.MatchSummary:
    response: pb.SetSpectatorsResponse = player.stub.SetSpectators(
        pb.SetSpectatorsRequest(match_id=match_id, policy=policy), metadata=player.metadata
    )
    return response.match


def _play_until(seats: list[PlayerClient], match_id: str, hand: int) -> None:
    """Plain moves until hand ``hand`` is being played (its cut made)."""
    for _ in range(2_000):
        view = seats[0].view(match_id)
        if view.view.hand_number >= hand and not view.HasField("dealing_seat"):
            return
        next_plain_move(seats, match_id)
    raise AssertionError(f"hand {hand} never began")


def _check_spectator(app: App, audit: LeakAudit, eve: PlayerClient, match_id: str) -> pb.MatchView:
    """Eve's view is the engine's spectator view of the server's state, and leaks nothing."""
    view = eve.view(match_id)
    audit.check(NOBODY, view)
    state = authoritative_state(app.service, match_id)
    assert view.view == view_to_pb(spectator_view(state))
    assert view.view.seat == NOBODY
    assert not view.view.hand
    assert not view.HasField("dealing_seat") or view.deal_commitment == b""
    assert not view.match.HasField("my_seat")
    assert view.match.invite_code == ""  # the invite is for the players to hand out
    return view


def test_a_table_spectator_sees_the_engine_s_spectator_view_and_nothing_hidden(
    app: App, players: Callable[..., PlayerClient]
) -> None:
    seats, match_id = _four(players, "table")
    eve, fay = players("eve"), players("fay")
    audit = LeakAudit(app, match_id)
    for _ in range(30):  # the cut, then moves of the first hand
        _check_spectator(app, audit, eve, match_id)
        next_plain_move(seats, match_id)
    _check_spectator(app, audit, fay, match_id)
    # Players see who watches; spectators how many, not who.
    mine = seats[2].view(match_id)
    assert mine.spectators == 2
    assert sorted(mine.spectator_names) == ["eve", "fay"]
    assert mine.match.spectators == "table"
    theirs = eve.view(match_id)
    assert theirs.spectators == 2
    assert list(theirs.spectator_names) == []
    # The history: every entry, no private card, no secret of the hand in play.
    entries, history = eve.full_history(match_id)
    assert len(entries) == theirs.version
    audit.check(NOBODY, history)
    for entry in entries:
        audit.check(NOBODY, entry)
    # A spectator has no moves, and cannot move.
    with pytest.raises(grpc.RpcError) as refused:
        eve.stub.GetMoves(pb.GetMovesRequest(match_id=match_id), metadata=eve.metadata)
    assert refused.value.code() is grpc.StatusCode.PERMISSION_DENIED


def test_without_spectators_a_stranger_sees_nothing(
    app: App, players: Callable[..., PlayerClient]
) -> None:
    seats, match_id = _four(players, "")
    assert seats[0].view(match_id).match.spectators == "none"
    eve = players("eve")
    calls: list[Callable[[], object]] = [
        lambda: eve.view(match_id),
        lambda: eve.history(match_id),
        lambda: next(iter(eve.watch([match_id], timeout=5))),
    ]
    for call in calls:
        with pytest.raises(grpc.RpcError) as refused:
            call()
        assert refused.value.code() is grpc.StatusCode.PERMISSION_DENIED
        assert "allow no spectators" in (refused.value.details() or "")
    assert seats[0].view(match_id).spectators == 0


@pytest.mark.slow  # a whole hand played under each policy: in make test, not the inner loop
@pytest.mark.parametrize(
    ("policy", "after_hand", "after_match"),
    [("table", False, False), ("after-hand", True, True), ("after-match", False, True)],
)
def test_a_hand_s_cards_reach_spectators_only_as_the_policy_says(
    app: App,
    players: Callable[..., PlayerClient],
    policy: str,
    after_hand: bool,
    after_match: bool,
) -> None:
    """Hand 1 over and hand 2 in play: hand 1's deal and draws (its private cards) and its
    secret reach the spectator under ``after-hand`` only; hand 2's under no policy. Once the
    match is over (here: abandoned by the operator), ``after-match`` shows every hand that
    ended; the hand cut short stays secret from everyone."""
    seats, match_id = _four(players, policy)
    eve = players("eve")
    _play_until(seats, match_id, hand=2)
    entries, history = eve.full_history(match_id)
    first = [e for e in entries if e.hand_number == 1]
    second = [e for e in entries if e.hand_number == 2]
    assert first
    assert second
    shown = any(ev.private_cards for e in first for ev in e.events)
    assert shown is after_hand
    assert not any(ev.private_cards for e in second for ev in e.events)
    secrets = {h.hand_number: h.secret for h in history.hands}
    assert bool(secrets.get(1)) is after_hand
    assert not secrets.get(2)
    _check_spectator(app, LeakAudit(app, match_id), eve, match_id)
    # The operator ends the match: after-match shows the hand that ended, table still none.
    admin.abort_match(app.service.ctx, match_id)
    entries, history = eve.full_history(match_id)
    assert history.end.signature
    revealed = {e.hand_number for e in entries for ev in e.events if ev.private_cards}
    assert revealed == ({1} if after_match else set())
    assert {h.hand_number for h in history.hands if h.secret} == revealed


def test_the_policy_changes_only_when_every_seated_player_asks_the_same(
    app: App, players: Callable[..., PlayerClient]
) -> None:
    alice, bob = players("alice"), players("bob")
    created = _create(alice, "none", bot_seats=[1, 3])
    match_id = created.match.match_id
    bob.join_match(created.invite_code, seat=2)
    eve = players("eve")
    asked = _ask(alice, match_id, "after-hand")
    assert asked.spectators == "none"  # bob has not asked: no change yet
    assert [s.spectators_vote for s in asked.seats] == ["after-hand", "", "", ""]
    with pytest.raises(grpc.RpcError) as refused:
        eve.view(match_id)
    assert refused.value.code() is grpc.StatusCode.PERMISSION_DENIED
    asked = _ask(bob, match_id, "after-hand")  # the bots do not vote
    assert asked.spectators == "after-hand"
    assert [s.spectators_vote for s in asked.seats] == ["", "", "", ""]
    assert eve.view(match_id).view.seat == NOBODY
    # Asking for what is in force withdraws an ask; an unknown policy changes nothing.
    _ask(alice, match_id, "table")
    assert _ask(alice, match_id, "after-hand").seats[0].spectators_vote == ""
    for who, policy, code in [
        (alice, "everyone", grpc.StatusCode.INVALID_ARGUMENT),
        (eve, "none", grpc.StatusCode.PERMISSION_DENIED),
    ]:
        with pytest.raises(grpc.RpcError) as refused:
            _ask(who, match_id, policy)
        assert refused.value.code() is code
    assert alice.view(match_id).match.spectators == "after-hand"


def test_an_unknown_policy_at_creation_is_refused(
    app: App, players: Callable[..., PlayerClient]
) -> None:
    alice = players("alice")
    with pytest.raises(grpc.RpcError) as refused:
        _create(alice, "all-seeing")
    assert refused.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert "after-hand" in (refused.value.details() or "")
    assert not alice.my_matches().matches


def test_a_spectator_watches_changes_and_hears_no_notification(
    app: App, players: Callable[..., PlayerClient]
) -> None:
    seats, match_id = _four(players, "table")
    eve = players("eve")
    audit = LeakAudit(app, match_id)
    stream = eve.watch([match_id], timeout=30)
    try:
        first = next(iter(stream))
        audit.check(NOBODY, first)
        assert first.match_id == match_id
        next_plain_move(seats, match_id)
        news = next(iter(stream))
        audit.check(NOBODY, news)
        assert news.version == first.version + 1
    finally:
        stream.cancel()
    for _ in range(8):
        next_plain_move(seats, match_id)
    with app.db.read() as session:
        repo = app.service.ctx.repo(session)
        player = repo.player_by_key(eve.public_key)
        assert player is not None
        assert repo.notifications_of(player.id, 0, 100) == []
