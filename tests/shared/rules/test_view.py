"""``player_view`` shows a seat what it could see at a real table, and nothing more.

Besides direct checks (own hand, counts, sizes, private event cards only on the seat's own
events), the leak test is one of information flow: scrambling everything the seat may not
know (the other hands, the stock order, other seats' private event cards) must not change
its view at all.
"""

from __future__ import annotations

import dataclasses
import json
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared import rules
from shared.rules import Draw, GameState, Phase, card_text, player_view
from shared.rules.cards import sort_cards
from tests.shared.rules import playout
from tests.shared.rules.playout import Spot, foot_spots, spots
from tests.testkit import examples

VIEWS = settings(
    max_examples=examples(80),
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def texts(cards: tuple[int, ...] | list[int]) -> list[str]:
    return [card_text(c) for c in cards]


def check_view(state: GameState, seat: int) -> dict[str, Any]:
    view = player_view(state, seat)
    data = view.to_json()
    assert data["seat"] == seat
    assert data["phase"] == state.phase.value
    assert data["actor"] == state.actor()
    assert data["turn"] == state.turn
    assert data["dealer"] == state.dealer
    assert data["hand_number"] == state.hand_number
    assert data["hand"] == texts(sort_cards(state.hands[seat]))
    assert data["hand_counts"] == [len(h) for h in state.hands]
    assert data["stock_size"] == len(state.stock)
    assert data["pile_size"] == len(state.pile)
    assert data["pile_top"] == (card_text(state.pile[-1]) if state.pile else None)
    assert data["scores"] == list(state.scores)
    assert data["my_side"] == state.side_of[seat]
    assert data.get("foot_sizes", []) == [len(f) for f in state.feet]  # sizes only (§3.7)
    if state.actor() == seat:
        assert data["legal"] == rules.legal_action_kinds(state, seat)
    else:
        assert data["legal"] == []
    # Every meld and red three on the table, side by side.
    for side in data["sides"]:
        melds = state.melds[side["side"]]
        extra = state.extra_of(side["side"])  # Samba and Bolivia's further melds (§3.4)
        if state.talon and melds[0]:  # Modern American's wild meld, at the twos' index (§3.6)
            extra, melds = (melds[0],), ((), *melds[1:])
        firsts = [m for m in side["melds"] if "#" not in m["rank"] and "-" not in m["rank"]]
        firsts = [m for m in firsts if m["rank"] != "wild"]
        assert sorted(m["rank"] for m in firsts) == sorted(
            rules.cards.rank_text(r) for r, m in enumerate(melds) if m
        )
        assert len(side["melds"]) == len(firsts) + len(extra)
        for meld in firsts:
            rank = next(
                r for r, m in enumerate(melds) if m and rules.cards.rank_text(r) == meld["rank"]
            )
            assert sorted(meld["cards"]) == sorted(texts(melds[rank]))
        shown = sorted(sorted(m["cards"]) for m in side["melds"] if m not in firsts)
        assert shown == sorted(sorted(texts(m)) for m in extra)
        seats = [s for s in range(state.players) if state.side_of[s] == side["side"]]
        assert side["seats"] == seats
        assert sorted(side["red_threes"]) == sorted(
            texts([c for s in seats for c in state.red3[s]])
        )
    # The hand's events in order, private cards only on the seat's own events.
    assert len(data["events"]) == len(state.events)
    for shown, event in zip(data["events"], state.events, strict=True):
        assert shown["seat"] == event.seat
        assert shown["kind"] == event.kind
        assert shown["cards"] == texts(event.cards)
        if event.seat == seat:
            assert shown["private"] == texts(event.private)
        else:
            assert shown["private"] == [], f"seat {seat} sees seat {event.seat}'s {event.kind}"
    json.dumps(data)  # plain JSON
    return data


def lists_in(value: Any) -> list[list[Any]]:
    """Every list inside a JSON value."""
    found: list[list[Any]] = []
    if isinstance(value, list):
        found.append(value)
        for item in value:
            found.extend(lists_in(item))
    elif isinstance(value, dict):
        for item in value.values():
            found.extend(lists_in(item))
    return found


def scramble(state: GameState, seat: int, rng: random.Random) -> GameState:
    """``state`` with everything hidden from ``seat`` replaced by other cards: the other
    hands, the stock order, and in Hand and Foot every foot still face down, its own too
    (§3.7)."""
    others = [s for s in range(state.players) if s != seat]
    pool = [c for s in others for c in state.hands[s]] + list(state.stock)
    pool += [c for packet in state.talon for c in packet]  # Modern American's talon (§3.6)
    pool += [c for foot in state.feet for c in foot]
    rng.shuffle(pool)
    hands = list(state.hands)
    for s in others:
        hands[s], pool = tuple(sort_cards(pool[: len(hands[s])])), pool[len(hands[s]) :]
    talon = []
    for packet in state.talon:
        talon.append(tuple(pool[: len(packet)]))
        pool = pool[len(packet) :]
    feet = list(state.feet)
    for s, foot in enumerate(feet):
        feet[s], pool = tuple(sort_cards(pool[: len(foot)])), pool[len(foot) :]
    events = tuple(
        e._replace(private=tuple(rng.randrange(53) for _ in e.private)) if e.seat != seat else e
        for e in state.events
    )
    return dataclasses.replace(
        state,
        hands=tuple(hands),
        stock=tuple(pool),
        events=events,
        talon=tuple(talon),
        feet=tuple(feet),
    )


@given(spots, st.integers(min_value=0, max_value=2**16))
@VIEWS
def test_views_show_only_what_a_seat_may_see(spot: Spot, salt: int) -> None:
    views_show_only_what_a_seat_may_see(spot, salt)


def views_show_only_what_a_seat_may_see(spot: Spot, salt: int) -> None:
    state = spot.state()
    for seat in range(state.players):
        data = check_view(state, seat)
        text = json.dumps(data, sort_keys=True)
        # No list in the view is another seat's hand or the stock order.
        hidden = [texts(sort_cards(state.hands[s])) for s in range(state.players) if s != seat]
        hidden.append(texts(state.stock))
        hidden.extend(texts(packet) for packet in state.talon)
        hidden.extend(texts(foot) for foot in state.feet)  # every foot, the seat's own too
        mine = data["hand"]
        for value in lists_in(data):
            for secret in hidden:
                if len(secret) >= 4 and secret != mine:
                    assert value != secret, f"seat {seat}'s view holds hidden cards {secret}"
        # Scrambling everything hidden from the seat leaves its view exactly as it was.
        other = scramble(state, seat, random.Random(salt))
        assert json.dumps(player_view(other, seat).to_json(), sort_keys=True) == text


def test_stock_draws_are_private() -> None:
    config = playout.config_for("classic")
    state = playout.start_match(config, 11)
    seat = state.actor()
    assert seat is not None
    state = rules.apply(state, seat, Draw())
    draw = state.events[-1]
    assert draw.kind == "draw"
    assert draw.seat == seat
    assert draw.private
    for viewer in range(config.players):
        shown = player_view(state, viewer).to_json()["events"][-1]
        assert shown["kind"] == "draw"
        assert shown["private"] == (texts(draw.private) if viewer == seat else [])
        deals = [e for e in player_view(state, viewer).to_json()["events"] if e["kind"] == "deal"]
        assert [bool(e["private"]) for e in deals] == [e["seat"] == viewer for e in deals]
        check_view(state, viewer)


def test_views_between_hands_and_after_the_match() -> None:
    config = playout.config_for("two_player")
    state = playout.play_match(config, 4, playout.eager, max_hands=60)
    assert state.phase is Phase.MATCH_OVER
    for seat in range(config.players):
        data = check_view(state, seat)
        assert data["actor"] is None
        assert data["legal"] == []
        assert data["winners"] == list(state.winners)
        assert data["last_hand"] == (state.last_hand.to_json() if state.last_hand else None)
        assert not data["pile_frozen"]
        assert not data["must_go_out"]


def test_talon_is_hidden_until_drawn() -> None:
    """docs/rules.md §3.6: the seven bonus cards lie face down; a view shows how many remain in
    each packet, and the player who draws a packet alone sees its cards (its event)."""
    state = playout.start_match(playout.config_for("modern_american"), 5)
    packets = [texts(p) for p in state.talon]
    assert [len(p) for p in packets] == [4, 3]
    rng = random.Random(5)
    drawn = None
    for position in playout.play(state, rng, playout.eager):
        for viewer in range(position.players):
            data = check_view(position, viewer)
            assert data["talon"] == [len(p) for p in position.talon]
            talon_events = [e for e in data["events"] if e["kind"] == "talon"]
            for event in talon_events:
                if event["seat"] != viewer:
                    assert event["private"] == [], "another seat's bonus cards are shown"
            for packet in position.talon:
                for value in lists_in(data):
                    assert len(packet) < 3 or value != texts(packet)
        talon = [e for e in position.events if e.kind == "talon" and e.private]
        if talon:
            drawn = talon[0]
            break
    assert drawn is not None, "nobody drew the talon in this hand (pick another seed)"
    assert sorted(texts(drawn.private)) in [sorted(p) for p in packets]


@pytest.mark.parametrize("steps", [0, 60, 250, 600])
def test_the_foot_is_hidden_from_everyone_its_owner_included(steps: int) -> None:
    """§3.7, §3.8a: a foot still face down shows only its size, in every seat's view; giving
    every face-down foot other cards (the seat's own too) leaves each view exactly as it was."""
    config = playout.config_for("hand_and_foot")
    state = playout.random_position(config, 17 + steps, steps, playout.eager)
    assert any(state.feet), "no foot is face down in this position"
    for seat in range(config.players):
        data = check_view(state, seat)
        assert data["foot_sizes"] == [len(f) for f in state.feet]
        assert data["hands_per_match"] == 4
        for value in lists_in(data):
            for foot in state.feet:
                assert len(foot) < 4 or value != texts(foot), f"seat {seat} sees a foot"
        other = scramble(state, seat, random.Random(steps))
        assert player_view(other, seat).to_json() == data


def test_a_picked_up_foot_is_seen_by_its_owner_alone() -> None:
    """§3.8a: once its hand is used up a player picks up the foot; the pickup is public (with
    the foot's size), its cards private to the owner, as a stock draw is."""
    config = playout.config_for("hand_and_foot")
    for seed in range(40):  # random play empties a hand in some of its first hands
        start = playout.start_match(config, seed)
        state = next(
            (
                s
                for s in playout.play(start, random.Random(seed), playout.eager, checked=False)
                if any(e.kind == "foot" for e in s.events)
            ),
            start,
        )
        if state is not start:
            break
    pickup = next(e for e in state.events if e.kind == "foot")
    assert len(pickup.private) == config.foot_size
    assert not state.feet[pickup.seat]
    assert pickup.text == f"picked up the foot ({config.foot_size} cards)"
    for viewer in range(config.players):
        shown = next(e for e in check_view(state, viewer)["events"] if e["kind"] == "foot")
        assert shown["private"] == (texts(pickup.private) if viewer == pickup.seat else [])
        assert shown["text"] == pickup.text


@pytest.mark.slow  # Hand and Foot's long hands: out of the inner loop (make test-fast)
@given(foot_spots, st.integers(min_value=0, max_value=2**16))
@settings(VIEWS, max_examples=30)
def test_hand_and_foot_views_show_only_what_a_seat_may_see(spot: Spot, salt: int) -> None:
    """The leak test above at Hand and Foot positions (§3.7), every face-down foot hidden."""
    views_show_only_what_a_seat_may_see(spot, salt)


# -- spectators (issue 32) ---------------------------------------------------------------------

PUBLIC = [
    "preset",
    "players",
    "phase",
    "actor",
    "turn",
    "dealer",
    "hand_number",
    "hand_counts",
    "sides",
    "pile_top",
    "pile_size",
    "pile_blocked",
    "stock_size",
    "scores",
    "minimums",
    "target",
    "canastas_to_go_out",
    "permission",
    "must_go_out",
    "last_hand",
    "winners",
    "talon",
    "foot_sizes",
    "hands_per_match",
    "books_to_go_out",
]
"""The fields every seat sees alike: a spectator's view holds these, as every seat has them."""


def scramble_all(state: GameState, rng: random.Random) -> GameState:
    """``state`` with everything hidden from a spectator replaced: every hand, the stock
    order, every foot and talon packet, every private card of every event."""
    pool = [c for hand in state.hands for c in hand] + list(state.stock)
    pool += [c for packet in state.talon for c in packet] + [c for f in state.feet for c in f]
    rng.shuffle(pool)

    def take(size: int) -> tuple[int, ...]:
        nonlocal pool
        taken, pool = pool[:size], pool[size:]
        return tuple(sort_cards(taken))

    hands = tuple(take(len(h)) for h in state.hands)
    talon = tuple(take(len(p)) for p in state.talon)
    feet = tuple(take(len(f)) for f in state.feet)
    events = tuple(
        e._replace(private=tuple(rng.randrange(53) for _ in e.private)) for e in state.events
    )
    return dataclasses.replace(
        state, hands=hands, stock=tuple(pool), events=events, talon=talon, feet=feet
    )


@given(spots, st.integers(min_value=0, max_value=2**16))
@VIEWS
def test_a_spectator_sees_the_table_and_no_seat_s_cards(spot: Spot, salt: int) -> None:
    """Issue 32 (RULES.md §1.12: a hand is private to its player): the spectator's view holds
    exactly what every seat's view holds alike, no hand, no legal list, no private card; and
    scrambling every hidden card leaves it as it was."""
    state = spot.state()
    data = rules.spectator_view(state).to_json()
    assert data["seat"] == rules.NO_SEAT
    assert data["my_side"] == rules.NO_SEAT
    assert data["hand"] == []
    assert data["legal"] == []
    for seat in range(state.players):
        seen = player_view(state, seat).to_json()
        for field in PUBLIC:
            assert data.get(field) == seen.get(field), field
        if not data["pile_frozen"] and seen["pile_frozen"]:  # frozen for this side only
            assert not state.opened(state.side_of[seat]), "only a side's own freeze differs"
    assert [e["private"] for e in data["events"]] == [[] for _ in state.events]
    assert [(e["seat"], e["kind"], e["cards"]) for e in data["events"]] == [
        (e.seat, e.kind, texts(e.cards)) for e in state.events
    ]
    other = scramble_all(state, random.Random(salt))
    assert rules.spectator_view(other).to_json() == data


def test_a_spectator_is_told_of_a_freeze_that_holds_for_every_side() -> None:
    """§1.8.1: a wild card in the pile freezes it for both sides, and a spectator sees so; a
    side's own freeze before it opens is its ``opened`` flag, not the pile's."""
    config = playout.config_for("classic")
    for seed in range(40):
        state = playout.start_match(config, seed)
        if state.pile_frozen:
            shown = rules.spectator_view(state)
            assert shown.pile_frozen
            assert shown.frozen_reason
            assert shown.frozen_reason == player_view(state, 0).frozen_reason
            break
    else:
        pytest.fail("no seed in 40 turned a wild card up to start the pile")
    state = playout.start_match(config, next(s for s in range(40) if not _starts_frozen(s)))
    assert not rules.spectator_view(state).pile_frozen  # nobody has opened: frozen per side
    assert player_view(state, 0).pile_frozen


def _starts_frozen(seed: int) -> bool:
    return playout.start_match(playout.config_for("classic"), seed).pile_frozen
