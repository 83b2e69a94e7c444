"""Samba and Bolivia's verdicts in place agree with the engine's check (issue 27).

The move lists keep a candidate the ruleset has a verdict on in its place without the
engine's trial (``Ruleset.candidate_verdicts``): for Samba and Bolivia
(``variants.samba.melds.sequence_verdicts``) the takes of the pile an opened side is
offered (§1.8.2, §3.4, §3.8a), black threes melded (§1.9, §1.11.3), new and grown
sequences, wild melds and two melds of a rank combined (§3.4, §3.5), and every meld,
lay-off and combination of a player who must go out (§1.11.2, §1.11.3). Each verdict must be
the engine's own answer, or the listing would drop a legal move or offer an illegal one;
seeded random play asks both at every candidate.
"""

from __future__ import annotations

import copy
import random
from collections import Counter

import pytest

from shared import rules
from shared.rules import legal
from shared.rules.actions import Meld, TakePile
from shared.rules.cards import IS_BLACK3, THREE
from shared.rules.engine import is_legal
from shared.rules.goingout import can_go_out
from shared.rules.state import GameState, Phase
from shared.rules.variants.samba import melds
from tests.shared.rules.playout import random_positions


def _positions(preset: str, hands: int, seed: int) -> list[tuple[GameState, int]]:
    """Every decision of a few seeded random hands of ``preset``."""
    return random_positions(rules.make_config(preset), hands, seed)


def _kind(action: object) -> str:
    if isinstance(action, TakePile):
        return "take"
    if isinstance(action, Meld) and IS_BLACK3[action.melds[0][0]]:
        return "black threes"
    return type(action).__name__


@pytest.mark.parametrize(("preset", "hands", "seed"), [("samba", 6, 6), ("bolivia", 6, 6)])
def test_3_4_verdicts_in_place_are_the_engines(preset: str, hands: int, seed: int) -> None:
    """§1.8.2, §1.9, §1.11.3, §3.4, §3.5, §3.8a: every verdict the ruleset gives on a listed
    candidate, at the start of a turn and after the draw, is the engine's check."""
    decided: Counter[tuple[str, bool]] = Counter()
    for state, seat in _positions(preset, hands, seed):
        _, candidates, verdict = legal._listing(state, seat)
        if verdict is None:
            continue
        for action in candidates:
            known = verdict(action)
            if known is None:
                continue
            decided[_kind(action), known] += 1
            if state.must_go_out:
                decided["obliged to go out", known] += 1
            assert known is is_legal(state, seat, action), (preset, str(action))
    # (the random hands reach each kind of verdict, both ways for the takes)
    assert decided["take", True]
    assert decided["take", False]
    assert decided["black threes", True] + decided["black threes", False]
    assert decided["obliged to go out", True]
    assert decided["obliged to go out", False]


def test_3_4_a_sequence_in_one_pass_is_the_checked_sequence() -> None:
    """§3.4, §3.8a: ``sequence_ok`` (the move lists' one-pass test) says yes exactly where
    ``sequence_fault`` (the move's check) finds nothing wrong: three to seven naturals of
    one suit, each rank once, in a row, on runs, near-runs and random cards."""
    rng = random.Random(5)
    deck = list(range(53))
    shapes: list[tuple[int, ...]] = []
    for _ in range(3000):
        suit = rng.randrange(4)
        low = rng.randrange(2, 12)
        run = [suit * 13 + r for r in range(low, min(13, low + rng.randrange(1, 9)))]
        if rng.random() < 0.4 and run:  # spoil it: another suit, a wild, a gap, a double
            run[rng.randrange(len(run))] = rng.choice(deck)
        rng.shuffle(run)
        shapes.append(tuple(run))
        shapes.append(tuple(rng.sample(deck, rng.randrange(1, 9))))
    good = sum(melds.sequence_ok(cards) for cards in shapes)
    for cards in shapes:
        assert melds.sequence_ok(cards) is (melds.sequence_fault(cards) is None), cards
    assert 0 < good < len(shapes)


@pytest.mark.parametrize(
    ("preset", "options"),
    [
        ("samba", {}),
        ("bolivia", {}),
        ("samba", {"wild_limit": "max3", "wild_onto_canasta": True}),
        ("bolivia", {"canastas_to_go_out": 1, "sequence_canastas_to_go_out": 0}),
    ],
)
def test_1_9_black_threes_melded_leave_the_whole_hands_way_out(
    preset: str, options: dict[str, object]
) -> None:
    """§1.9, §1.11.3: ``black_threes_verdict`` asks whether the whole hand can go out on the
    melds as they are in place of the hand left after melding all its black threes: the
    going-out search gives both the same answer. Random positions of seeded play, with one
    to four of the hand's cards turned into black threes, with and without a black-three
    meld on the table (the threes melded being three or more, or onto that meld)."""
    config = rules.make_config(preset, options)
    threes = [card for card in range(len(IS_BLACK3)) if IS_BLACK3[card]]
    rng = random.Random(19)
    answers: Counter[bool] = Counter()
    for state, seat in random_positions(config, 6, 19, (Phase.PLAY,)):
        side = state.side_of[seat]
        if not state.extra or not state.opened(side):
            continue
        extra = state.extra_of(side)
        for count in range(1, 5):
            hand = [c for c in state.hands[seat] if not IS_BLACK3[c]]
            if len(hand) < count + 2:
                continue
            for i in rng.sample(range(len(hand)), count):
                hand[i] = rng.choice(threes)
            cards = tuple(c for c in hand if IS_BLACK3[c])
            rest = [c for c in hand if not IS_BLACK3[c]]
            for old in ((), (threes[0], threes[-1], threes[0])):
                if not old and count < 3:
                    continue
                melds = list(state.melds[side])
                melds[THREE] = old
                whole = can_go_out(config, hand, tuple(melds), extra=extra)
                melds[THREE] = (*old, *cards)
                after = can_go_out(config, rest, tuple(melds), extra=extra)
                assert whole is after, (preset, options, hand, old)
                answers[whole] += 1
    assert answers[True]  # (both answers reached)
    assert answers[False]


@pytest.mark.parametrize(
    ("preset", "options"),
    [
        ("samba", {}),
        ("bolivia", {}),
        ("samba", {"canastas_to_go_out": 1}),
        ("bolivia", {"canastas_to_go_out": 1, "sequence_canastas_to_go_out": 0}),
    ],
)
def test_1_9_the_black_threes_verdict_is_the_engines_with_up_to_six_threes(
    preset: str, options: dict[str, object]
) -> None:
    """§1.9, §1.11.3: ``black_threes_verdict`` on melding every black three in hand is the
    engine's check of that meld, with three to six of them (three decks hold six), the rest
    of the hand a random part of a seeded position's."""
    config = rules.make_config(preset, options)
    threes = [card for card in range(len(IS_BLACK3)) if IS_BLACK3[card]]
    rng = random.Random(23)
    answers: Counter[bool] = Counter()
    for state, seat in random_positions(config, 6, 23, (Phase.PLAY,)):
        if state.must_go_out or state.no_discard:
            continue
        for count in range(3, 7):
            kept = [c for c in state.hands[seat] if not IS_BLACK3[c]]
            if len(kept) < 2:
                continue
            kept = rng.sample(kept, rng.randint(2, len(kept)))
            hand = tuple(sorted(kept + [rng.choice(threes) for _ in range(count)]))
            position = copy.copy(state)
            position.hands = tuple(hand if s == seat else h for s, h in enumerate(state.hands))
            cards = tuple(c for c in hand if IS_BLACK3[c])
            verdict = melds.black_threes_verdict(position, seat, cards)
            if verdict is None:
                continue
            assert verdict is is_legal(position, seat, Meld((cards,))), (preset, options, hand)
            answers[verdict] += 1
    assert answers[True] > 5, answers  # (both answers reached, often)
    assert answers[False] > 5, answers
