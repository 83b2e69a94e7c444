"""Standing orders act only where the rules leave one legal action, or on the question the
player answered in advance (``shared.rules.orders``; docs/rules.md §1.6 T1, §1.11.2).

Bots play whole hands of every preset; at every position the order's move is compared with
what the rules allow there: a standing draw must come only where no take of the pile is
legal (tried independently of the listing: every support the hand could give the top card,
with and without the rest of the hand melded), and never in any other phase.
"""

from __future__ import annotations

import itertools
import random

import pytest

from shared import rules
from shared.rules import Answer, Draw, GameState, Phase, TakePile
from shared.rules.bot import choose_action
from shared.rules.cards import IS_RED3, IS_WILD, RANK
from shared.rules.orders import standing_action
from tests.shared.rules import playout


def _supports(state: GameState, seat: int) -> list[tuple[int, ...]]:
    """Every set of the hand's cards that could join the pile's top card in a meld: up to
    four naturals of its rank and up to three wild cards (more only repeat a legal one)."""
    top = state.pile[-1]
    hand = state.hands[seat]
    naturals = [c for c in hand if RANK[c] == RANK[top] and not IS_WILD[c] and not IS_RED3[c]]
    wilds = [c for c in hand if IS_WILD[c]]
    found: set[tuple[int, ...]] = set()
    for n in range(min(len(naturals), 4) + 1):
        for w in range(min(len(wilds), 3) + 1):
            for chosen in itertools.combinations(naturals, n):
                for wild in itertools.combinations(wilds, w):
                    found.add(tuple(sorted(chosen + wild)))
    return sorted(found)


def _some_take_is_legal(state: GameState, seat: int) -> bool:
    """Whether any take of the pile is legal, found without ``legal_actions``: each support
    alone, and with the opening the bot would lay down from the rest of the hand."""
    if not state.pile:
        return False
    for support in _supports(state, seat):
        if rules.is_legal(state, seat, TakePile(support)):
            return True
        rest = list(state.hands[seat])
        for card in support:
            rest.remove(card)
        for group in _groups(rest):
            if rules.is_legal(state, seat, TakePile(support, group)):
                return True
    return False


def _groups(cards: list[int]) -> list[tuple[tuple[int, ...], ...]]:
    """Melds of three or more naturals of one rank from ``cards`` (all of them at once, and
    each alone), which an unopened side may add to a take to reach its minimum."""
    by_rank: dict[int, list[int]] = {}
    for card in cards:
        if not IS_WILD[card] and not IS_RED3[card]:
            by_rank.setdefault(RANK[card], []).append(card)
    melds = [tuple(group) for group in by_rank.values() if len(group) >= 3]
    return [tuple(melds), *((m,) for m in melds)] if melds else []


def _positions(preset: str, seeds: range) -> list[GameState]:
    """Every position of one bot-played hand per seed."""
    config = rules.make_config(preset)
    found: list[GameState] = []
    for seed in seeds:
        rng = random.Random(seed)
        state = rules.deal_hand(
            rules.new_match(config, seed=seed), rules.shuffled_deck(config, seed)
        )
        for _ in range(playout.MAX_ACTIONS_PER_HAND):
            if state.phase not in playout.HAND_PHASES:
                break
            found.append(state)
            seat = state.actor()
            assert seat is not None
            state = rules.apply(state, seat, choose_action(state, seat, rng))
    return found


@pytest.mark.parametrize("preset", playout.preset_params())
def test_standing_draw_only_where_drawing_is_the_one_legal_start(preset: str) -> None:
    """§1.6 T1: the order draws only where no take is legal, and does in most turns."""
    starts = drawn = 0
    for state in _positions(preset, range(6)):
        seat = state.actor()
        assert seat is not None
        action = standing_action(state, seat, draw=True, answer="")
        if state.phase is not Phase.DRAW:
            assert action is None, f"{preset}: an order acted in {state.phase}"
            continue
        starts += 1
        assert standing_action(state, seat, draw=False, answer="yes") is None
        for other in range(state.players):
            if other != seat:
                assert standing_action(state, other, draw=True, answer="yes") is None
        if action is None:
            continue
        drawn += 1
        assert isinstance(action, Draw)
        assert rules.legal_actions(state, seat) == [action]
        assert not _some_take_is_legal(state, seat), f"{preset}: a take was open"
    assert starts
    assert drawn > starts // 3, f"{preset}: drew in {drawn} of {starts} turn starts"


@pytest.mark.parametrize("answer", ["yes", "no", ""])
def test_standing_answer_is_the_answer_given_in_advance(answer: str) -> None:
    """§1.11.2: partner's question, answered as the player said (or left to them)."""
    asked = 0
    for state in _positions("classic", range(40)):
        seat = state.actor()
        assert seat is not None
        if state.phase is not Phase.PLAY or not rules.is_legal(state, seat, rules.actions.ASK):
            continue
        state = rules.apply(state, seat, rules.actions.ASK)
        partner = state.actor()
        assert partner is not None
        assert state.phase is Phase.ANSWER
        asked += 1
        action = standing_action(state, partner, draw=True, answer=answer)
        if not answer:
            assert action is None
        else:
            assert action == Answer(answer == "yes")
            assert rules.is_legal(state, partner, action)
        assert standing_action(state, seat, draw=True, answer="yes") is None
    assert asked
