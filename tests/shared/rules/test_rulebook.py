"""docs/rules.md §4 scenarios that state a property of a function rather than a line of play.

SC01 (deck composition), SC07 (initial-meld threshold), the SC19 rows that cannot be played
(red threes never stay in a hand) and the SC30 value table. Everything else in §4 is a
JSON scenario in tests/scenarios, played by tests/shared/rules/test_scenarios.py.
"""

from __future__ import annotations

from collections import Counter

import pytest

from shared.rules import CLASSIC, IllegalMoveError, deck, make_config, parse_cards
from shared.rules.cards import IS_BLACK3, IS_RED3, IS_WILD, JOKER, RANK, VALUE
from shared.rules.melds import check_meld, meld_rank


def test_sc01_deck_composition() -> None:
    """SC01, §1.2: 108 cards, 8 of each rank 2..A, 4 jokers, 12 wilds, 4 red and 4 black
    threes; all cards except the red threes are worth 1180."""
    cards = deck(CLASSIC.decks, CLASSIC.jokers_per_deck)
    assert len(cards) == CLASSIC.deck_size == 108
    ranks = Counter(RANK[c] for c in cards if c != JOKER)
    assert sorted(ranks) == list(range(13))
    assert set(ranks.values()) == {8}
    assert cards.count(JOKER) == 4
    assert sum(IS_WILD[c] for c in cards) == 12
    assert sum(IS_RED3[c] for c in cards) == 4
    assert sum(IS_BLACK3[c] for c in cards) == 4
    assert sum(VALUE[c] for c in cards if not IS_RED3[c]) == 1180


def test_sc01_six_player_deck() -> None:
    """§3.3: three packs and six jokers, 162 cards."""
    config = make_config("six_2x3")
    cards = deck(config.decks, config.jokers_per_deck)
    assert len(cards) == config.deck_size == 162
    assert cards.count(JOKER) == 6


@pytest.mark.parametrize(
    ("score", "minimum"),
    [(-5, 15), (-180, 15), (0, 50), (1495, 50), (1500, 90), (2995, 90), (3000, 120), (4990, 120)],
)
def test_sc07_initial_minimum(score: int, minimum: int) -> None:
    """SC07, §1.10 table."""
    assert CLASSIC.initial_minimum(score) == minimum


def test_sc07_six_2x3_adds_150_at_7500() -> None:
    """§3.3: six_2x3 adds a 150 row at 7500; six_3x2 keeps the classic table."""
    assert make_config("six_2x3").initial_minimum(7495) == 120
    assert make_config("six_2x3").initial_minimum(7500) == 150
    assert make_config("six_3x2").initial_minimum(7500) == 120


@pytest.mark.parametrize("text", ["3h 3d 3h", "3d 3h 2c", "3h 4h 4d"])
def test_sc19_red_threes_never_meld(text: str) -> None:
    """SC19 row "3H 3D 3H'": invalid; red threes are never melded (§1.7, §1.9)."""
    with pytest.raises(IllegalMoveError) as caught:
        meld_rank(parse_cards(text))
    assert caught.value.rule == "1.7"


@pytest.mark.parametrize(
    ("text", "default", "option"),
    [
        ("5c 5d 2s", True, True),
        ("5c 2s 2d", False, False),
        ("9c 9d 2s 2h jk", True, False),
        ("9c 9d 9h 2s 2h 2d jk", False, False),
        ("2s 2h jk", False, False),
        ("ks kh", False, False),
        ("3c 3s 2d", False, False),
        ("4h 5h 6h", False, False),
        ("kc kd kh ks 2c 2d jk", True, True),
        ("kc kd 2c 2d jk", True, False),
    ],
)
def test_sc19_meld_table(text: str, default: bool, option: bool) -> None:
    """SC19 (§1.9, D9) as a property of the meld check, for both wild limits."""
    strict = make_config("classic", {"wild_limit": "not_more_than_naturals"})
    for config, valid in ((CLASSIC, default), (strict, option)):
        cards = parse_cards(text)
        try:
            check_meld(config, meld_rank(cards), cards, new=True)
        except IllegalMoveError:
            assert not valid, f"{text} should be a valid meld ({config.wild_limit})"
        else:
            assert valid, f"{text} should be refused ({config.wild_limit})"


@pytest.mark.parametrize(("count", "total"), [(1, 100), (2, 200), (3, 300), (4, 800)])
def test_sc30_red_three_values(count: int, total: int) -> None:
    """SC30, §1.13, D17: 100 each, all four 800 (the sign is played in sc30_*.json)."""
    assert CLASSIC.red3_total(count) == total


@pytest.mark.parametrize(("count", "total"), [(4, 400), (5, 1000), (6, 1200)])
def test_sc30_six_player_red_threes(count: int, total: int) -> None:
    """§3.3: with six red threes in play, 1-4 are worth 100 each, five 1000, six 1200."""
    assert make_config("six_3x2").red3_total(count) == total
