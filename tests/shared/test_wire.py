"""shared.wire: views mirror the engine's PlayerView; moves decode strictly; signed bytes fixed."""

from __future__ import annotations

import struct

import pytest

from shared.pb import canasta_pb2 as pb
from shared.rules import (
    EndReason,
    GameState,
    HandResult,
    NotationError,
    Phase,
    SideScore,
    apply,
    deal_hand,
    legal_actions,
    make_config,
    new_match,
    parse_cards,
    player_view,
    shuffled_deck,
)
from shared.rules.dealing import deal_position
from shared.wire import (
    AUTH_TAG,
    CANASTA_KINDS,
    MELD_KINDS,
    REGISTER_TAG,
    Move,
    Registration,
    WireError,
    auth_message,
    hand_result_to_pb,
    move_from_bytes,
    move_to_bytes,
    parse_actions,
    phase_from_pb,
    register_message,
    registration_from_bytes,
    registration_to_bytes,
    view_to_pb,
)


def _played_state(moves: int = 40) -> GameState:
    config = make_config("classic", {"target": 500})
    state = deal_hand(new_match(config, seed=3), shuffled_deck(config, 3))
    for _ in range(moves):
        seat = state.actor()
        if seat is None:
            break
        state = apply(state, seat, legal_actions(state, seat)[0])
    return state


def test_view_mirrors_the_engine_json() -> None:
    state = _played_state()
    for seat in range(4):
        view = player_view(state, seat)
        message = view_to_pb(view)
        data = view.to_json()
        assert message.seat == seat
        assert list(message.hand) == data["hand"]
        assert list(message.hand_counts) == data["hand_counts"]
        assert phase_from_pb(message.phase) == data["phase"]
        assert (message.actor if message.HasField("actor") else None) == data["actor"]
        assert (message.pile_top if message.HasField("pile_top") else None) == data["pile_top"]
        assert message.stock_size == data["stock_size"]
        assert list(message.legal) == data["legal"]
        assert [
            {"side": s.side, "melds": [(m.rank, list(m.cards), m.canasta) for m in s.melds]}
            for s in message.sides
        ] == [
            {
                "side": s["side"],
                "melds": [(m["rank"], m["cards"], m["canasta"]) for m in s["melds"]],
            }
            for s in data["sides"]
        ]
        assert [
            (e.seat, e.kind, list(e.cards), list(e.private_cards), e.text) for e in message.events
        ] == [(e["seat"], e["kind"], e["cards"], e["private"], e["text"]) for e in data["events"]]
        for event in message.events:
            assert event.seat == seat or not event.private_cards


def test_view_carries_the_last_hand() -> None:
    state = _played_state(10_000)
    assert state.phase in (Phase.DEAL, Phase.MATCH_OVER)
    message = view_to_pb(player_view(state, 0))
    assert message.last_hand.hand_number == 1
    assert [c.cumulative for c in message.last_hand.columns] == list(state.scores)


def test_meld_and_canasta_kinds_travel_as_enums() -> None:
    """Issue 15: a client reads each meld's kind and each canasta's kind from the wire (every
    preset's special canastas, docs/rules.md §3.4-§3.6) instead of guessing them from its cards."""
    melds = [["ac ac ad ad ah ah as", "jk jk jk jk 2c 2d 2h", "kc kd 2s"], []]
    config = make_config("modern_american")
    hands = [parse_cards("5c 5d"), parse_cards("4h 4d"), parse_cards("4s 6d"), parse_cards("8c 8h")]
    table = [[parse_cards(m) for m in side] for side in melds]
    state = deal_position(new_match(config), hands, parse_cards("jd"), pile=(), melds=table)
    message = view_to_pb(player_view(state, 0))
    shown = {(m.rank, m.kind, m.canasta_kind, m.canasta) for m in message.sides[0].melds}
    assert shown == {
        ("a", pb.MELD_KIND_GROUP, pb.CANASTA_KIND_NATURAL_ACES, "natural_aces"),
        ("wild", pb.MELD_KIND_WILD, pb.CANASTA_KIND_WILD_JOKERS, "wild_jokers"),
        ("k", pb.MELD_KIND_GROUP, pb.CANASTA_KIND_NONE, ""),
    }
    assert list(message.talon) == [4, 3]
    kinds = {"samba", "escalera", "bolivia", "natural", "mixed", ""}
    kinds |= {"natural_aces", "natural_sevens", "wild", "wild_jokers", "wild_twos"}
    assert set(CANASTA_KINDS) == kinds
    assert len(set(CANASTA_KINDS.values())) == len(kinds)
    assert set(MELD_KINDS) == {"group", "sequence", "wild"}


def test_new_score_columns_travel() -> None:
    """The score columns Samba, Bolivia and Modern American added reach the wire."""
    result = HandResult(1, EndReason.WENT_OUT, 0, False, (SideScore(
        column=0, seats=(0, 2), meld_points=-300, natural_canastas=0, mixed_canastas=0,
        canasta_bonus=0, red_threes=2, red_three_points=-300, going_out_bonus=0,
        hand_penalty=85, hand_total=-10785, cumulative=-10785, sequence_canastas=1,
        wild_canastas=2, special_canastas=3, black_threes=1, black_three_points=-100,
        special_penalty=10000,
    ),))  # fmt: skip
    column = hand_result_to_pb(result).columns[0]
    assert (column.sequence_canastas, column.wild_canastas, column.special_canastas) == (1, 2, 3)
    assert (column.black_threes, column.black_three_points) == (1, -100)
    assert (column.special_penalty, column.meld_points) == (10000, -300)


def test_move_round_trip_and_strict_decoding() -> None:
    move = Move("m1", 2, 7, bytes(32), 123, ("draw", "discard kd"))
    assert move_from_bytes(move_to_bytes(move)) == move
    with pytest.raises(WireError, match="no match"):
        move_from_bytes(move_to_bytes(Move("", 0, 1, bytes(32), 0, ("draw",))))
    with pytest.raises(WireError, match="seq"):
        move_from_bytes(move_to_bytes(Move("m", 0, 0, bytes(32), 0, ("draw",))))
    with pytest.raises(WireError, match="prev_hash"):
        move_from_bytes(move_to_bytes(Move("m", 0, 1, b"", 0, ("draw",))))
    with pytest.raises(WireError, match="not a serialized"):
        move_from_bytes(b"\x0a\xff")
    with pytest.raises(WireError, match="too long"):
        move_from_bytes(pb.MovePayload(match_id="m", seq=1, prev_hash=bytes(32),
                                       actions=["x" * 3000]).SerializeToString())  # fmt: skip


def test_parse_actions_names_the_failing_step() -> None:
    assert [str(a) for a in parse_actions(("draw", "discard td"))] == ["draw", "discard 10d"]
    with pytest.raises(NotationError, match="action 2"):
        parse_actions(("draw", "discard zz"))
    with pytest.raises(NotationError, match="could not read"):
        parse_actions(("discard zz",))


def test_signed_messages_are_fixed_bytes() -> None:
    registration = Registration(b"k" * 32, "Alice", "", "", b"s" * 32, 5)
    payload = registration_to_bytes(registration)
    assert registration_from_bytes(payload) == registration
    assert register_message(payload) == REGISTER_TAG + payload
    message = auth_message(b"S" * 32, b"P" * 32, b"C" * 32)
    lp = struct.pack(">I", 32)
    assert message == AUTH_TAG + lp + b"S" * 32 + lp + b"P" * 32 + lp + b"C" * 32
