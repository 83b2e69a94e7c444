"""Standing orders through the real service (issue 28): the server draws for a seat whose
player asked it to, only where drawing is the one way to begin the turn (docs/rules.md §1.6
T1), and answers partner's "may I go out?" (§1.11.2) as the player said in advance. Such
moves are signed by the attest key (server-attested in the history); a player's orders show
in their own view and nobody else's; bad requests change nothing."""

from __future__ import annotations

import random
from collections.abc import Callable

import grpc
import pytest

from server.app import App
from shared.pb import canasta_pb2 as pb
from shared.rules import Draw, Phase, legal_actions
from shared.rules.bot import choose_action
from shared.rules.orders import standing_action
from shared.rules.pile import take_ruled_out
from tests.testkit import PlayerClient, authoritative_state

from .conftest import AppFactory


@pytest.fixture
def app(make_app: AppFactory) -> App:
    return make_app()


def _update(client: PlayerClient, **fields: object) -> pb.Settings:
    request = pb.UpdateSettingsRequest(**fields)  # type: ignore[arg-type]
    settings: pb.Settings = client.stub.UpdateSettings(request, metadata=client.metadata)
    return settings


def _set_orders(client: PlayerClient, **fields: object) -> pb.SetOrdersResponse:
    response: pb.SetOrdersResponse = client.stub.SetOrders(
        pb.SetOrdersRequest(**fields),  # type: ignore[arg-type]
        metadata=client.metadata,
    )
    return response


def _turn_rest(app: App, match_id: str, rng: random.Random) -> list[str]:
    """The bot's choice for seat 0 from now to the end of its turn (the oracle's state)."""
    from shared import rules

    state = authoritative_state(app.service, match_id)
    chosen: list[str] = []
    while state.actor() == 0 and state.phase in (Phase.DRAW, Phase.PLAY):
        action = choose_action(state, 0, rng)
        chosen.append(str(action))
        state = rules.apply(state, 0, action)
    return chosen


def test_a_standing_draw_draws_only_where_no_take_is_legal_and_is_server_attested(
    app: App, players: Callable[..., PlayerClient]
) -> None:
    """§1.6 T1: with the order on, every turn of Ann's that drawing alone could begin is
    begun by the server at once; every other turn waits for her."""
    ann = players("ann")
    settings = _update(ann, order_draw=True)
    assert settings.orders.draw
    assert settings.orders.answer == ""
    match_id = ann.create_match(bot_seats=[1, 2, 3]).match.match_id
    rng = random.Random(5)
    # Each deal is random (the server's secret and the cut), so how many of Ann's turns a take
    # could begin varies; a hand can end before drawing alone ever begins one of hers. So
    # whole hands are played, each checked, until one in which the server drew for her.
    ordered = waited = 0
    for hand in range(1, MAX_HANDS + 1):
        _deal_when_due(app, ann, match_id, hand)
        waited += _play_hand_with_the_draw_order(app, ann, match_id, hand, rng)
        ordered = _attested_draws(ann, match_id, hand)
        if ordered:
            break
    assert ordered, (ordered, waited)


MAX_HANDS = 6


def _deal_when_due(app: App, ann: PlayerClient, match_id: str, hand: int) -> None:
    """Hand ``hand`` dealt: by Ann when the cut is hers, else by the bot whose it is."""
    app.bots.drain()
    view = ann.view(match_id)
    if view.HasField("dealing_seat") and view.dealing_seat == 0:
        ann.deal(view)
        app.bots.drain()
    assert authoritative_state(app.service, match_id).hand_number == hand


def _play_hand_with_the_draw_order(
    app: App, ann: PlayerClient, match_id: str, hand: int, rng: random.Random
) -> int:
    """Hand ``hand`` played out, Ann's turns by the bot's choice, checking at each of them
    that the server left nothing its orders would do; the number of turns the order waited."""
    waited = 0
    for _ in range(400):
        app.bots.drain()
        state = authoritative_state(app.service, match_id)
        if state.hand_number > hand or state.phase in (Phase.DEAL, Phase.MATCH_OVER):
            return waited
        assert state.actor() == 0
        # The server left nothing its orders would do (it moved, or nothing applies).
        assert standing_action(state, 0, draw=True, answer="") is None
        view = ann.view(match_id)
        assert view.my_orders.draw
        assert not view.my_orders_per_match
        if state.phase is Phase.DRAW:
            # The order waited: a take of the pile was listed, or could not be ruled out
            # (an order acts only where taking is certainly impossible).
            waited += 1
            assert legal_actions(state, 0) != [Draw()] or not take_ruled_out(state, 0)
        ann.submit(view, _turn_rest(app, match_id, rng))
    raise AssertionError("the hand did not end")


def _attested_draws(ann: PlayerClient, match_id: str, hand: int) -> int:
    """How many of Ann's moves in hand ``hand`` the server made for her; each must be the
    standing order's plain draw, never a bot's play."""
    entries, _ = ann.full_history(match_id)
    ordered = 0
    for entry in entries:
        if entry.seat == 0 and entry.hand_number == hand and entry.server_attested:
            ordered += 1
            assert list(entry.actions) == ["draw"]
            assert entry.standing_order
            assert not entry.played_by_bot
    return ordered


def test_orders_of_one_match_override_the_default_and_show_only_to_their_player(
    app: App, players: Callable[..., PlayerClient]
) -> None:
    ann, ben = players("ann"), players("ben")
    created = ann.stub.CreateMatch(
        pb.CreateMatchRequest(preset="classic", seat=0, bot_seats=[2, 3]), metadata=ann.metadata
    )
    match_id = created.match.match_id
    ben.join_match(created.invite_code, seat=1)
    _update(ann, order_answer="no")
    view = ann.view(match_id)
    assert view.my_orders == pb.StandingOrders(answer="no")
    assert not view.my_orders_per_match

    response = _set_orders(ann, match_id=match_id, draw=True)
    assert response.orders == pb.StandingOrders(draw=True, answer="no")
    assert response.per_match
    response = _set_orders(ann, match_id=match_id, answer="ask")
    assert response.orders == pb.StandingOrders(draw=True, answer="")
    assert ann.view(match_id).my_orders_per_match
    _update(ann, order_draw=False, order_answer="yes")  # the default moves; the match's stays
    assert ann.view(match_id).my_orders == pb.StandingOrders(draw=True)
    # Ben's view carries his own (none), never Ann's.
    ben_view = ben.view(match_id)
    assert ben_view.my_orders == pb.StandingOrders()
    assert not ben_view.my_orders_per_match

    response = _set_orders(ann, match_id=match_id, follow_default=True)
    assert response.orders == pb.StandingOrders(answer="yes")
    assert not response.per_match
    assert ann.view(match_id).my_orders == pb.StandingOrders(answer="yes")


def test_an_answer_order_answers_partner_at_once(
    app: App, players: Callable[..., PlayerClient]
) -> None:
    """§1.11.2: Ann answers "yes" in advance; when her partner (seat 2) asks, the server
    answers for her, signed by the attest key; she never sees the question as her move.
    Partner may ask only when he could go out, which random deals bring sooner or later: up
    to four whole matches are played for it."""
    from shared import rules

    ann, cid = players("ann"), players("cid")
    rng = random.Random(3)
    for _ in range(4):
        created = ann.stub.CreateMatch(
            pb.CreateMatchRequest(preset="classic", seat=0, bot_seats=[1, 3]),
            metadata=ann.metadata,
        )
        match_id = created.match.match_id
        cid.join_match(created.invite_code, seat=2)
        _set_orders(ann, match_id=match_id, answer="yes")
        for _ in range(20_000):
            app.bots.drain()
            state = authoritative_state(app.service, match_id)
            if state.phase is Phase.MATCH_OVER:
                break
            seat = ann.view(match_id).match.to_act  # the cutter too, between hands
            assert state.phase is not Phase.ANSWER or seat != 0, "the order should have answered"
            player = {0: ann, 2: cid}[seat]
            view = player.view(match_id)
            if view.HasField("dealing_seat"):
                player.deal(view)
                continue
            if seat == 2 and rules.is_legal(state, 2, rules.actions.ASK):
                response = cid.submit(view, ["ask"])
                app.bots.drain()
                after = authoritative_state(app.service, match_id)
                assert after.actor() == 2
                assert after.phase is Phase.PLAY  # answered already
                entries, _ = ann.full_history(match_id)
                assert list(entries[-1].actions) == ["answer yes"]
                assert entries[-1].server_attested
                assert entries[-1].standing_order
                assert entries[-1].seat == 0
                assert response.receipt.seq == entries[-1].seq - 1
                return
            player.submit(view, [str(choose_action(state, seat, rng))])
    raise AssertionError("partner never could ask in four matches")


@pytest.mark.parametrize(
    "fields",
    [
        {"answer": "maybe"},
        {"answer": "x" * 70_000},
        {"follow_default": True, "draw": True},
    ],
)
def test_bad_orders_are_refused_and_change_nothing(
    app: App, players: Callable[..., PlayerClient], fields: dict[str, object]
) -> None:
    ann = players("ann")
    match_id = ann.create_match(bot_seats=[1, 2, 3]).match.match_id
    before = ann.view(match_id)
    with pytest.raises(grpc.RpcError) as refused:
        _set_orders(ann, match_id=match_id, **fields)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert len(refused.value.details()) < 200
    after = ann.view(match_id)
    assert after.my_orders == before.my_orders
    assert after.version == before.version
    with pytest.raises(grpc.RpcError) as refused:
        _update(ann, order_answer="sometimes")
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_orders_in_a_match_not_ones_own_are_refused(
    app: App, players: Callable[..., PlayerClient]
) -> None:
    ann, eve = players("ann"), players("eve")
    match_id = ann.create_match(bot_seats=[1, 2, 3]).match.match_id
    with pytest.raises(grpc.RpcError) as refused:
        _set_orders(eve, match_id=match_id, draw=True)
    assert refused.value.code() in (grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.NOT_FOUND)
    assert ann.view(match_id).my_orders == pb.StandingOrders()
