"""§1.11.2 and §1.11.3 in Modern American (docs/rules.md §3.6, §3.8a): the going-out search
behind asking partner, the dead-end guard and the obligation to go out finds every way
out the engine allows and none it refuses: wild cards to whichever meld needs them, a
wild meld, the seven-card maximum, sevens without wild cards, aces with them only after a
wild opening, the two canastas, the final discard, and the §3.8a options (rule of five,
dead ranks, no going out with an unfinished aces, sevens or wild meld). The randomized
check plays the engine's own moves to decide each small position, and the search must
agree both ways.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Mapping, Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared import rules
from shared.rules import GameState, make_config, parse_cards
from shared.rules.actions import Discard, Draw, LayOff, Meld
from shared.rules.cards import IS_THREE, IS_WILD, JOKER_RANK, RANK, VALUE, Card, card_text
from shared.rules.dealing import deal_position, new_match
from shared.rules.errors import CanastaError
from shared.rules.state import EndReason
from shared.rules.variants.modern_american import WILD_MELD, can_go_out, going_out_moves
from tests.testkit import examples

from .asking import engine_goes_out, may_ask

OTHERS = ["5h", "6h", "10d"]
KINGS = "kc kd kh ks kc kd kh"
QUEENS = "qc qd qh qs qc qd qh"


def _position(
    hand: str,
    melds: Sequence[str],
    options: Mapping[str, object] | None = None,
    *,
    theirs: Sequence[str] = (),
    wild_opening: bool = False,
) -> GameState:
    """Seat 0 to play after drawing, holding ``hand`` (its last card drawn), its side
    holding ``melds`` (and the other side ``theirs``)."""
    cards = parse_cards(hand)
    state = deal_position(
        new_match(make_config("modern_american", dict(options or {}))),
        [cards[:-1], *(parse_cards(h) for h in OTHERS)],
        cards[-1:],
        melds=[[parse_cards(m) for m in melds], [parse_cards(m) for m in theirs]],
        turn=0,
    )
    state.wild_opening = (wild_opening, False)
    return rules.apply(state, 0, Draw())


def _memo_key(state: GameState, seat: int) -> object:
    side = state.side_of[seat]
    return (tuple(sorted(state.hands[seat])), state.melds[side], state.wild_opening)


def _moves(state: GameState, seat: int) -> list[object]:
    """Every discard, meld of a subset of the hand and lay-off onto one of the side's melds."""
    side = state.side_of[seat]
    hand = tuple(sorted(state.hands[seat]))
    subsets = {
        tuple(sorted(c))
        for size in range(1, len(hand) + 1)
        for c in itertools.combinations(hand, size)
    }
    ranks = [
        JOKER_RANK if rank == WILD_MELD else rank
        for rank, cards in enumerate(state.melds[side])
        if cards
    ]
    moves: list[object] = [Discard(c) for c in set(hand)]
    for cards in subsets:
        if len(cards) >= 3:
            moves.append(Meld((cards,)))
        moves.extend(LayOff(rank, cards) for rank in ranks)
    return moves


def _engine_goes_out(state: GameState, seat: int, seen: dict[object, bool]) -> bool:
    """Whether some sequence of melds and lay-offs the engine accepts, and a final discard,
    takes ``seat`` out this turn (a bounded exhaustive search over the engine's moves)."""
    return engine_goes_out(state, seat, seen, _memo_key, _moves)


def _openings(state: GameState, seat: int) -> list[Meld]:
    """An unopened seat's opening melds worth trying (one action, as §3.6 asks): each rank
    of the hand left out, or melded with all its naturals or all but one, with none, one or
    two wild cards, the naturals of a rank of four or more perhaps split into a natural
    triple and the rest; and perhaps a wild meld of the wild cards left. The best wild cards
    go first (the minimum counts them); what is left can be laid off later."""
    hand = state.hands[seat]
    by_rank: dict[int, list[Card]] = {}
    for card in hand:
        if not IS_WILD[card]:
            by_rank.setdefault(RANK[card], []).append(card)
    wilds = sorted((c for c in hand if IS_WILD[c]), key=lambda c: -VALUE[c])
    per_rank: list[list[tuple[int, int, bool] | None]] = []
    for cards in by_rank.values():
        choices: list[tuple[int, int, bool] | None] = [None]
        for taken in {len(cards), len(cards) - 1}:
            for extra in range(3):
                choices.append((taken, extra, False))
                if extra and taken >= 4:
                    choices.append((taken, extra, True))
        per_rank.append(choices)
    out = []
    for combo in itertools.product(*per_rank):
        spare = list(wilds)
        groups: list[tuple[Card, ...]] = []
        for cards, choice in zip(by_rank.values(), combo, strict=True):
            if choice is None:
                continue
            taken, extra, split = choice
            if taken < 2 or extra > len(spare):
                break
            naturals = tuple(cards[:taken])
            added = tuple(spare[:extra])
            del spare[:extra]
            if split:
                groups += [naturals[:3], (*naturals[3:], *added)]
            else:
                groups.append((*naturals, *added))
        else:
            for size in {0, *range(3, len(spare) + 1)}:
                wild_group = [tuple(spare[:size])] if size else []
                if groups or wild_group:
                    out.append(Meld((*groups, *wild_group)))
    return out


def _engine_opens_and_goes_out(state: GameState) -> bool:
    """Whether some opening (``_openings``), then melds and lay-offs, and a final discard
    take an unopened seat 0 out this turn."""
    seen: dict[object, bool] = {}
    for opening in _openings(state, 0):
        try:
            after = rules.apply(state, 0, opening)
        except CanastaError:
            continue
        if _engine_goes_out(after, 0, seen):
            return True
    return False


def _follow_the_way_out(state: GameState) -> None:
    """The moves the search names, then the last card discarded, take seat 0 out."""
    moves = going_out_moves(state, 0, state.hands[0])
    assert moves is not None
    for move in moves:
        state = rules.apply(state, 0, move)
    assert len(state.hands[0]) == 1, [card_text(c) for c in state.hands[0]]
    state = rules.apply(state, 0, Discard(state.hands[0][0]))
    assert state.last_hand is not None
    assert state.last_hand.reason is EndReason.WENT_OUT


def _agrees(state: GameState) -> bool:
    found = can_go_out(state, 0, state.hands[0], None)
    played = _engine_goes_out(state, 0, {})
    assert found is played, ([card_text(c) for c in state.hands[0]], state.melds[0])
    if found:
        _follow_the_way_out(state)
    if len(state.hands[0]) >= 2:
        assert may_ask(state) is found
    return found


# -- ways out the greedy search missed (or invented) -------------------------------------------


@pytest.mark.parametrize(
    ("hand", "melds", "options", "allowed"),
    [
        # §3.6: a wild card fits an unfinished meld: the greedy spread gave wild cards only
        # to melds they finished or to ranks of the hand, and found no place for the 2
        ("2c 9s", [KINGS, QUEENS, "8c 8d 8h"], {}, True),
        ("2c 2d 9s", [KINGS, QUEENS, "8c 8d 8h", "10c 10d 10h"], {}, True),
        # §3.6: two wild cards make the second canasta on either of two melds
        ("2c 2d 4c 8c 9s", [KINGS, "4c 4d 4h 4s", "8d 8h 8s 8c"], {}, True),
        # §3.6: three wild cards form a wild meld; the sixes take the fourth, finishing
        ("2c 2d 2h jo 6c 9s", [KINGS, "6c 6d 6h 6s 6d"], {}, True),
        # §3.6: sevens never take a wild card, so a 2 must start a wild meld ... of three
        ("2c 7c 9s", [KINGS, QUEENS, "7c 7d 7h"], {}, False),
        ("2c 2d 2h 7c 9s", [KINGS, QUEENS, "7c 7d 7h"], {}, True),
        # §3.6: at most two wild cards in a meld, at most seven cards
        ("2c 2d 2h 9s", [KINGS, QUEENS, "8c 8d 8h"], {}, True),
        ("2c 2d 9s", [KINGS, QUEENS, "8c 8d 8h 8s 2h 8c"], {}, False),
        # §3.8a no_out_with_unfinished_special: no going out with natural aces unfinished,
        # nor with an unfinished wild meld
        ("4c 9s", [KINGS, QUEENS, "4c 4d 4h", "ac ad ah"], {}, True),
        (
            "4c 9s",
            [KINGS, QUEENS, "4c 4d 4h", "ac ad ah"],
            {"no_out_with_unfinished_special": True},
            False,
        ),
        ("2c 9s", [KINGS, QUEENS, "2d 2h jo"], {}, True),
        ("2c 9s", [KINGS, QUEENS, "2d 2h jo"], {"no_out_with_unfinished_special": True}, False),
        # §3.6 aces take wild cards only after a wild opening (wild_opening here: False)
        ("2c 2d ac 9s", [KINGS, "ac ad ah as"], {}, False),
        # §3.8a rule of five: the jack meld needs five naturals before a wild card joins
        ("jc 2c 2d 9s", [KINGS, "jc jd jh js"], {"rule_of_five": True}, True),
        ("2c 9s", [KINGS, QUEENS, "jc jd jh js"], {"rule_of_five": True}, False),
        ("2c 9s", [KINGS, QUEENS, "jc jd jh js"], {}, True),
        # §3.6: no going out without a final discard
        ("9s", [KINGS, QUEENS], {}, True),
        ("9c 9s 9d 9h", [KINGS, QUEENS], {}, True),
        ("9c 9s 9d", [KINGS, QUEENS], {}, False),
        ("9c 9s 9d 9h", [KINGS], {}, False),
    ],
)
def test_1_11_2_ask_in_modern_american_finds_every_way_out_3_6(
    hand: str, melds: list[str], options: dict[str, object], allowed: bool
) -> None:
    """§1.11.2, §3.6, §3.8a: asking partner is allowed exactly when some way out exists,
    and the search agrees with playing the engine's own moves."""
    state = _position(hand, melds, options)
    assert _agrees(state) is allowed


def test_3_6_aces_take_wild_cards_after_a_wild_opening() -> None:
    """§3.6: with a wild card in the side's initial meld, the aces take two wild cards and
    make the second canasta; under the rule of five (§3.8a) they need five aces first."""
    state = _position("2c 2d ac 9s", [KINGS, "ac ad ah as"], wild_opening=True)
    assert _agrees(state)
    state = _position("2c 2d 9s", [KINGS, "ac ad ah as"], {"rule_of_five": True}, wild_opening=True)
    assert not _agrees(state)


def test_3_8a_dead_ranks_strand_a_meld_the_other_side_completed() -> None:
    """§3.8a dead ranks: once the other side has a canasta of jacks, no jack joins ours."""
    theirs = ["jc jd jh js js 2h 2s"]
    options = {"dead_ranks": True}
    assert not _agrees(_position("2c 9s", [KINGS, QUEENS, "jc jd jh"], options, theirs=theirs))
    assert _agrees(_position("2c 9s", [KINGS, QUEENS, "jc jd jh"], theirs=theirs))


@pytest.mark.parametrize(
    ("hand", "allowed"),
    [
        # kings and queens with two wild cards: 160 points, kings the natural triple
        (f"{KINGS} qc qd qh qs qc 2c 2d 9s", True),
        # a wild canasta of twos beside the kings
        (f"{KINGS} 2c 2d 2h 2s 2c 2d 2h 9s", True),
        # fours and fives with two wild cards: 100 points, short of 125
        ("4c 4d 4h 4s 4c 4d 2c 5c 5d 5h 5s 5c 5d 2d 9s", False),
    ],
)
def test_3_6_an_unopened_side_opens_and_goes_out_in_one_turn(hand: str, allowed: bool) -> None:
    """§3.6, SC39: the opening's natural triple and minimum are found in the same turn as
    the two canastas, and the search's own moves (one opening meld) take the player out."""
    state = _position(hand, [])
    assert can_go_out(state, 0, state.hands[0], None) is allowed
    assert may_ask(state) is allowed
    if allowed:
        _follow_the_way_out(state)


def test_3_6_one_canasta_asked_for_keeps_a_natural_triple() -> None:
    """§3.6 with ``canastas_to_go_out = 1``: a wild canasta and two melds of three naturals
    go out only with the wild cards kept off one of them, the opening's natural triple."""
    options = {"canastas_to_go_out": 1}
    state = _position("2c 2d 2h 2s 2c 2d 2h kc kd kh qc qd qh jo 9s", [], options)
    assert can_go_out(state, 0, state.hands[0], None)
    _follow_the_way_out(state)


# -- the engine's own moves decide, on small random tables --------------------------------------

RANKS = ["4", "5", "6", "8", "9", "10", "j", "q"]
OPTION_SETS: tuple[dict[str, object], ...] = (
    {},
    {"rule_of_five": True},
    {"dead_ranks": True},
    {"no_out_with_unfinished_special": True},
    {"aces_wild_rule": "aces_meld"},
    {"rule_of_five": True, "no_out_with_unfinished_special": True, "dead_ranks": True},
)


def _random_position(rng: random.Random, cards_in_hand: int) -> GameState:
    """A small position: seat 0's side has opened, with a canasta or two, melds one to four
    cards short of seven (some with wild cards, aces, sevens, a wild meld), and a hand of
    cards that fit them."""
    options = rng.choice(OPTION_SETS)
    suits = "cdhs"
    melds: list[str] = []
    pool = ["2c", "2d", "jo", "ac", "7c"]
    if rng.random() < 0.8:
        melds.append(KINGS)
    for rank in rng.sample([*RANKS, "a", "7"], rng.randrange(1, 4)):
        size = rng.randrange(3, 7)
        cards = [f"{rank}{suits[i % 4]}" for i in range(size)]
        if rank != "7" and size >= 4 and rng.random() < 0.4:
            cards[-1] = rng.choice(["2h", "2s"])
        melds.append(" ".join(cards))
        pool += [f"{rank}{s}" for s in suits]
    if rng.random() < 0.25:
        melds.append(" ".join(["2h", "2s", "jo", "2h"][: rng.randrange(3, 5)]))
    pool += [f"{rng.choice(RANKS)}h" for _ in range(3)]
    theirs = [f"{rng.choice(RANKS)}s " * 7] if rng.random() < 0.3 else []
    hand = " ".join(rng.choice(pool) for _ in range(cards_in_hand))
    return _position(hand, melds, options, theirs=theirs, wild_opening=rng.random() < 0.5)


def _agree(seed: int, most: int) -> bool:
    rng = random.Random(seed)
    for _ in range(20):
        try:
            state = _random_position(rng, rng.randrange(2, most + 1))
        except CanastaError:
            continue  # a table the dealer refused (more copies than the deck has): another
        if any(IS_THREE[c] for c in state.hands[0]):
            continue
        return _agrees(state)
    return False


def _random_unopened(rng: random.Random) -> GameState:
    """An unopened seat 0 holding high cards of a few ranks and wild cards, with one
    canasta (or two) to make to go out."""
    options = dict(rng.choice(OPTION_SETS))
    options["canastas_to_go_out"] = rng.choice((1, 1, 2))
    first, second, third = rng.sample(["10", "j", "q", "k", "a", "7"], 3)
    cards = [f"{first}{s}" for s in "cdhscdhs"][: rng.randrange(4, 9)]
    cards += [f"{second}{s}" for s in "cdhscd"][: rng.randrange(2, 7)]
    cards += rng.sample(["2c", "2d", "2h", "jo", "jo"], rng.randrange(0, 4))
    cards += rng.sample([f"{third}c", f"{third}d", "9h", "4s", f"{first}h"], rng.randrange(0, 3))
    rng.shuffle(cards)
    hand = " ".join(cards)
    return _position(hand, [], options, wild_opening=False)


def _agree_unopened(seed: int) -> bool:
    rng = random.Random(seed)
    for _ in range(20):
        try:
            state = _random_unopened(rng)
        except CanastaError:
            continue
        if any(IS_THREE[c] for c in state.hands[0]):
            continue
        found = can_go_out(state, 0, state.hands[0], None)
        played = _engine_opens_and_goes_out(state)
        assert found is played, [card_text(c) for c in state.hands[0]]
        if found:
            _follow_the_way_out(state)
        return found
    return False


@pytest.mark.parametrize("seed", [0, 7])  # 7: a way out
def test_3_6_unopened_search_agrees_with_playing_the_engine(seed: int) -> None:
    """§3.6, SC39, §1.11.2: for a side that has not opened, the search and the engine's own
    openings (then melds, lay-offs and a final discard) agree on whether it goes out."""
    _agree_unopened(seed)


@pytest.mark.slow
def test_3_6_unopened_search_agrees_with_playing_the_engine_at_length() -> None:
    outs = sum(_agree_unopened(seed) for seed in range(100, 140))
    assert outs >= 5  # the check saw ways out, not only dead ends


@settings(
    max_examples=examples(120),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.integers(0, 2**32))
def test_1_11_2_search_agrees_with_playing_the_engine_3_6(seed: int) -> None:
    """§1.11.2, §1.11.3, §3.6, §3.8a: a way out the search finds is found again by playing
    the engine's moves (and its own moves take the player out), and a way out the engine's
    moves find, the search finds too."""
    _agree(seed, 5)


@pytest.mark.slow
def test_1_11_2_search_agrees_with_playing_the_engine_at_length_3_6() -> None:
    outs = sum(_agree(seed, 6) for seed in range(1000, 1400))
    assert outs > 40  # the check saw ways out, not only dead ends
