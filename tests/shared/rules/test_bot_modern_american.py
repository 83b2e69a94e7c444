"""The bot under Modern American's rules (docs/rules.md §3.6, §3.8a): it keeps clear of the big
penalties (an unfinished natural aces or sevens meld costs 2500, three aces or sevens left
in a hand 1500) and works toward the two canastas going out needs, so that bot-only
matches reach the target of 8500 (their penalties once sank every score, and a match
never ended)."""

from __future__ import annotations

import random

import pytest

from shared import rules
from shared.rules import GameState, Phase, make_config, new_match, parse_cards
from shared.rules.actions import Discard, Draw
from shared.rules.bot import choose_action
from shared.rules.cards import ACE, RANK, SEVEN
from shared.rules.dealing import deal_position

OTHERS = ["5h 6h", "6s 8s", "10d 10c"]
KINGS = "kc kd kh ks kc kd kh"


def _position(
    hand: str, melds: list[str], *, stock: str = "", wild_opening: bool = False
) -> GameState:
    """Seat 0 to draw (its side holding ``melds``); the stock is ``stock`` when given,
    the rest of the deck out of play, for a position late in the hand."""
    config = make_config("modern_american")
    state = deal_position(
        new_match(config),
        [parse_cards(hand), *(parse_cards(h) for h in OTHERS)],
        parse_cards(stock or "4d"),
        melds=[[parse_cards(m) for m in melds], []],
        turn=0,
        fill="box" if stock else "stock",
        talon=[(), ()],
    )
    state.wild_opening = (wild_opening, False)
    return state


def _bot_turn(state: GameState) -> tuple[GameState, list[rules.Action]]:
    """Seat 0's whole turn as the bot plays it."""
    played = []
    while state.actor() == 0 and state.phase is not Phase.DEAL:
        action = choose_action(state, 0)
        played.append(action)
        state = rules.apply(state, 0, action)
        if isinstance(action, Discard):
            break
    return state, played


def test_3_6_bot_melds_no_unfinished_sevens_and_throws_the_third_away() -> None:
    """§3.6: three sevens would be an unfinished natural sevens meld (2500 against the side
    at the end of the hand, and no wild card can spoil it), and three held cost 1500: the
    bot melds its nines, keeps the sevens off the table and discards one."""
    state = _position(
        "7c 7d 7h 9c 9d 9h 5s 8c 8d 4c 4s 6c",
        [KINGS],
        stock="4h 5c 6d 8h 9s 10h jc qd jd qc 10s jh",
    )
    state, played = _bot_turn(state)
    assert isinstance(played[0], Draw)
    assert not state.melds[0][SEVEN]
    assert state.melds[0][RANK[parse_cards("9c")[0]]]
    assert isinstance(played[-1], Discard)
    assert RANK[played[-1].card] == SEVEN


def test_3_6_bot_spoils_unfinished_natural_aces_late_in_the_hand() -> None:
    """§3.6: late in the hand, with aces allowed wild cards (the side's opening held one),
    a wild card onto three natural aces turns a 2500 penalty into a mixed meld."""
    state = _position("2c 9s 5d 6d jc", [KINGS, "ac ad ah"], stock="8h 8c 8d", wild_opening=True)
    state, _ = _bot_turn(state)
    assert any(c == parse_cards("2c")[0] for c in state.melds[0][ACE])


def _bot_only_match(seed: int, hand_cap: int) -> int:
    """The hands a bot-only Modern American match takes to reach the target (``hand_cap``
    plus one when it does not)."""
    config = make_config("modern_american")
    rng = random.Random(seed)
    state = new_match(config, seed=seed)
    for hands in range(1, hand_cap + 1):
        state = rules.deal_hand(state, rules.shuffled_deck(config, rng.getrandbits(64)))
        while state.phase not in (Phase.DEAL, Phase.MATCH_OVER):
            seat = state.actor()
            assert seat is not None
            state = rules.apply(state, seat, choose_action(state, seat, rng))
        if state.phase is Phase.MATCH_OVER:
            assert max(state.scores) >= config.target
            return hands
    return hand_cap + 1


@pytest.mark.slow
def test_3_6_bot_only_matches_reach_the_target() -> None:
    """§3.6: seeded bot-only matches end at 8500 within 30 hands each (before the bot
    learnt the penalties, 2 of 50 did)."""
    hands = [_bot_only_match(seed, 30) for seed in range(10)]
    assert all(h <= 30 for h in hands), hands
