"""The hand's facts the move lists count once per listing give the answers the rules' own
questions give (issue 27: facts per position computed once).

``cards.hand_groups`` counts a hand once; the listing hands the counts to asking partner's
going-out search (§1.11.2), the groups to the lay-offs and new melds (§1.9) and to the best
opening (§1.10), and asks ``goingout.surely_stranded`` before the search. Each must agree
with the question asked of the hand itself, for hands in any order (a scenario position's or
a test's hand need not be in display order).
"""

from __future__ import annotations

import random

import pytest

from shared import rules
from shared.rules import legal
from shared.rules.actions import LayOff, Meld
from shared.rules.cards import IS_WILD, RANK, VALUE, Card, deck, hand_groups
from shared.rules.goingout import ask_refused_why, can_go_out, surely_stranded
from shared.rules.opening import best_opening, opening_of_groups
from shared.rules.state import EMPTY_MELDS, GameState, Melds, Phase
from tests.shared.rules.playout import random_positions

CLASSIC_FAMILY = ("classic", "two_player", "three_cutthroat", "six_2x3")


def _random_hands(seed: int, count: int) -> list[tuple[Card, ...]]:
    """Hands of 1 to 16 cards from two packs, in no particular order (red threes left out:
    they never stay in a hand, §1.7)."""
    rng = random.Random(seed)
    cards = [c for c in deck() if c not in (14, 27)]
    return [tuple(rng.sample(cards, rng.randint(1, 16))) for _ in range(count)]


def test_hand_groups_are_the_hand_by_rank_in_hand_order() -> None:
    """§1.2: every card sits in the group of its rank, in the order the hand holds it, and
    the counts are the groups' sizes."""
    for hand in _random_hands(3, 400):
        groups, counts = hand_groups(hand)
        for rank in range(14):
            held = [c for c in hand if RANK[c] == rank]
            assert (groups[rank] or []) == held
            assert counts[rank] == len(held)


@pytest.mark.parametrize("preset", ["classic", "samba", "hand_and_foot"])
def test_opening_of_groups_is_best_opening(preset: str) -> None:
    """§1.10: the opening the listing builds from the counted groups is ``best_opening``'s,
    meld for meld, under each wild limit (§1.9; §3.4 two wild cards; §3.7 fewer than the
    naturals)."""
    config = rules.make_config(preset)
    for hand in _random_hands(5, 400):
        assert opening_of_groups(config, hand_groups(hand)[0]) == best_opening(config, hand)


def _positions(preset: str, hands: int = 3) -> list[tuple[GameState, int]]:
    """The play decisions of a few seeded random hands (where asking partner is weighed)."""
    return random_positions(rules.make_config(preset), hands, 17, (Phase.PLAY,))


@pytest.mark.parametrize("preset", CLASSIC_FAMILY)
def test_a_stranded_hand_cannot_go_out(preset: str) -> None:
    """§1.11.2, §1.11.3: a hand ``surely_stranded`` calls stuck (more cards that join no meld
    than one discard can take away) is one the going-out search refuses, so the listing may
    leave out asking partner without the search; and the counted hand gives the search's
    own answer."""
    config = rules.make_config(preset)
    stranded = 0
    for state, seat in _positions(preset):
        hand = state.hands[seat]
        melds = state.melds[state.side_of[seat]]
        counts = hand_groups(hand)[1]
        for allow_discard in (True, False):
            answer = can_go_out(config, hand, melds, allow_discard=allow_discard)
            assert (
                can_go_out(config, hand, melds, allow_discard=allow_discard, counts=counts)
                == answer
            )
            if surely_stranded(counts, melds, allow_discard):
                stranded += 1
                assert not answer
        assert ask_refused_why(state, seat, counts) == ask_refused_why(state, seat)
    assert stranded  # (random hands are mostly stranded: the test saw some)


def test_stranded_counts_the_lone_naturals_and_black_threes() -> None:
    """§1.11.1: one lone natural (or a black three short of a meld) may be the final
    discard; a second one strands the hand, unless the side has a meld it can join (§1.9)."""
    melds: Melds = EMPTY_MELDS
    one_lone = hand_groups((4, 4, 4, 5))[1]  # three sixes, a seven
    assert not surely_stranded(one_lone, melds, True)
    assert surely_stranded(one_lone, melds, False)
    two_lone = hand_groups((4, 4, 4, 5, 6))[1]  # three sixes, a seven, an eight
    assert surely_stranded(two_lone, melds, True)
    with_sevens = list(melds)
    with_sevens[5] = (5, 18, 31)
    assert not surely_stranded(two_lone, tuple(with_sevens), True)
    black_threes = hand_groups((1, 40, 4, 4, 4))[1]  # two black threes, three sixes
    assert surely_stranded(black_threes, melds, True)
    with_threes = list(melds)
    with_threes[1] = (1, 1, 40)
    assert not surely_stranded(black_threes, tuple(with_threes), True)


@pytest.mark.parametrize("preset", CLASSIC_FAMILY)
def test_the_wild_card_offered_is_the_cheapest_held(preset: str) -> None:
    """§1.2, §1.9: the wild card the listing offers onto a meld (or beside a natural pair)
    is the first held of the least valuable ones (a two before a joker), for the hand in
    display order and reversed."""
    offered = 0
    for state, seat in _positions(preset, 2):
        melds = state.melds[state.side_of[seat]]
        if not any(melds):
            continue
        for hand in (state.hands[seat], tuple(reversed(state.hands[seat]))):
            wilds = [c for c in hand if IS_WILD[c]]
            if not wilds:
                continue
            cheapest = min(wilds, key=VALUE.__getitem__)  # (the first of the least valuable)
            sure, check = legal.group_candidates(state, seat, hand, melds, True)
            for action in (*sure, *check):
                assert isinstance(action, LayOff | Meld)
                cards = action.cards if isinstance(action, LayOff) else action.melds[0]
                for card in cards:
                    if IS_WILD[card]:
                        offered += 1
                        assert card == cheapest
    assert offered
