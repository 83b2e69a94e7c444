"""Cards: each way a person writes one, canonical text, values and the deck (docs/rules.md §1.2)."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.rules import NotationError, card_text, cards_text, deck, parse_card, parse_cards
from shared.rules.cards import (
    IS_BLACK3,
    IS_NATURAL,
    IS_RED3,
    IS_WILD,
    JOKER,
    RANK_TEXT,
    SUIT_LETTERS,
    SUIT_SYMBOLS,
    VALUE,
    make_card,
    parse_rank,
    sort_cards,
)

ALL_FACES = range(53)
RANKS = {"2": 0, "3": 1, "4": 2, "5": 3, "6": 4, "7": 5, "8": 6, "9": 7, "10": 8}
RANKS.update({"j": 9, "q": 10, "k": 11, "a": 12})
SUITS = {"c": 0, "d": 1, "h": 2, "s": 3}


def card(rank: str, suit: str) -> int:
    return make_card(RANKS[rank], SUITS[suit])


def assert_clear(exc: NotationError) -> None:
    """A message a player can read: one non-empty line, of sensible length."""
    message = str(exc)
    assert message == exc.message
    assert message.strip() == message
    assert message
    assert len(message.splitlines()) == 1, f"a message of several lines: {message!r}"
    assert exc.kind == "notation"
    assert isinstance(exc, ValueError)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("7h", card("7", "h")),
        ("10d", card("10", "d")),
        ("td", card("10", "d")),
        ("TD", card("10", "d")),
        ("T♦", card("10", "d")),
        ("10♢", card("10", "d")),
        ("jk", JOKER),
        ("JK", JOKER),
        ("joker", JOKER),
        ("Joker", JOKER),
        ("jo", JOKER),
        ("*", JOKER),
        ("Q♠", card("q", "s")),
        ("q♤", card("q", "s")),
        ("QS", card("q", "s")),
        ("Kc", card("k", "c")),
        ("k♣", card("k", "c")),
        ("K♧", card("k", "c")),
        ("ah", card("a", "h")),
        ("A♥", card("a", "h")),
        ("a♡", card("a", "h")),
        ("2s", card("2", "s")),
        ("3c", card("3", "c")),
        ("3D", card("3", "d")),
        ("jh", card("j", "h")),
        ("  9s  ", card("9", "s")),
        ("\t8c\n", card("8", "c")),
    ],
)
def test_every_card_form(text: str, expected: int) -> None:
    assert parse_card(text) == expected


def test_numeric_aliases_for_court_cards_and_ace() -> None:
    """``11h``..``14h`` and ``1h`` are read as j, q, k, a (a deliberate alias in cards.py)."""
    assert [parse_card(t) for t in ("11h", "12h", "13h", "14h", "1h")] == [
        card("j", "h"),
        card("q", "h"),
        card("k", "h"),
        card("a", "h"),
        card("a", "h"),
    ]


def test_the_card_error_documents_every_rank_spelling() -> None:
    """Issue 14.9: the numeric aliases are kept (players who count court cards use them) and
    so the refusal of a card names them beside the letters."""
    with pytest.raises(NotationError) as info:
        parse_card("7x")
    assert "j, q, k, a (or 11, 12, 13, 14, and 1 for a)" in info.value.message


@pytest.mark.parametrize("face", ALL_FACES)
def test_card_text_round_trip(face: int) -> None:
    text = card_text(face)
    assert text == text.lower() == text.strip()
    assert parse_card(text) == face
    assert parse_card(text.upper()) == face
    assert parse_card(f" {text} ") == face
    if face != JOKER:
        assert parse_card(text[:-1] + SUIT_SYMBOLS[SUIT_LETTERS.index(text[-1])]) == face


def test_card_texts_are_distinct() -> None:
    texts = [card_text(c) for c in ALL_FACES]
    assert len(set(texts)) == 53
    assert texts[JOKER] == "jk"
    assert {t[:-1] for t in texts[:52]} == set(RANK_TEXT)


def test_parse_cards_separators() -> None:
    want = (card("7", "h"), card("7", "c"), JOKER)
    assert parse_cards("7h 7c jk") == want
    assert parse_cards("7h,7c, jk") == want
    assert parse_cards(" 7h ,  7c ,jk ") == want
    assert parse_cards(["7h", "7c", "jk"]) == want
    assert parse_cards("") == ()
    assert cards_text(want) == "7h 7c jk"


@pytest.mark.parametrize(("text", "rank"), [("9", 7), ("10", 8), ("t", 8), ("K", 11), ("a", 12)])
def test_parse_rank(text: str, rank: int) -> None:
    assert parse_rank(text) == rank


MALFORMED_CARDS = [
    "",
    "   ",
    "7x",
    "7",
    "10",
    "hh",
    "h7",
    "7hh",
    "0h",
    "15h",
    "1O h",
    "10 d",
    "♠",
    "7♠♠",
    "jkr",
    "jokers",
    "7h,",
    "x" * 10_000,
    "\x00",
    "7\u200bh",
    "☃",
    "🂧",
    "ñ",
    ";;",
]


@pytest.mark.parametrize("text", MALFORMED_CARDS, ids=lambda t: repr(t[:12]))
def test_malformed_card(text: str) -> None:
    with pytest.raises(NotationError) as info:
        parse_card(text)
    assert_clear(info.value)
    message = info.value.message
    word = text.strip()
    assert (word and repr(word)[1:-1][:12] in message) or "expected a card" in message


@pytest.mark.parametrize("text", ["zz", "", "11h", "jk", "0", "15"])
def test_malformed_rank(text: str) -> None:
    with pytest.raises(NotationError) as info:
        parse_rank(text)
    assert_clear(info.value)
    assert "rank" in info.value.message


@given(st.text(max_size=30))
@settings(max_examples=300, derandomize=True, database=None)
def test_parse_card_never_crashes(text: str) -> None:
    try:
        face = parse_card(text)
    except NotationError as exc:
        assert_clear(exc)
    else:
        assert 0 <= face <= JOKER


# -- values and the deck (§1.2) --------------------------------------------------------------


def test_card_values() -> None:
    assert VALUE[JOKER] == 50
    for suit in "cdhs":
        assert VALUE[card("2", suit)] == 20
        assert VALUE[card("a", suit)] == 20
        for rank in ("8", "9", "10", "j", "q", "k"):
            assert VALUE[card(rank, suit)] == 10
        for rank in ("4", "5", "6", "7"):
            assert VALUE[card(rank, suit)] == 5
    assert VALUE[card("3", "c")] == VALUE[card("3", "s")] == 5


def test_card_classes() -> None:
    assert [c for c in ALL_FACES if IS_RED3[c]] == [card("3", "d"), card("3", "h")]
    assert [c for c in ALL_FACES if IS_BLACK3[c]] == [card("3", "c"), card("3", "s")]
    wilds = [c for c in ALL_FACES if IS_WILD[c]]
    assert sorted(wilds) == sorted([card("2", s) for s in "cdhs"] + [JOKER])
    naturals = [c for c in ALL_FACES if IS_NATURAL[c]]
    assert len(naturals) == 44
    assert not any(IS_WILD[c] or IS_RED3[c] or IS_BLACK3[c] for c in naturals)


@pytest.mark.parametrize(
    ("decks", "jokers", "size"), [(2, 2, 108), (2, 3, 110), (3, 2, 162), (1, 0, 52)]
)
def test_deck(decks: int, jokers: int, size: int) -> None:
    cards = deck(decks, jokers)
    assert len(cards) == size
    counts = Counter(cards)
    assert all(counts[c] == decks for c in range(52))
    assert counts[JOKER] == decks * jokers


def test_deck_point_total() -> None:
    """docs/rules.md §1.2: the 108 cards without the red threes are worth 1180."""
    assert sum(VALUE[c] for c in deck() if not IS_RED3[c]) == 1180


def test_sort_order() -> None:
    """Display order: naturals 4..A by rank and suit first, then the specials grouped."""
    hand = parse_cards("jk 2c 3s 3d ah 4c 10h 4s kd 9c 2h")
    ordered = sort_cards(hand)
    assert cards_text(ordered[:6]) == "4c 4s 9c 10h kd ah"
    assert sorted(cards_text(ordered[6:]).split()) == ["2c", "2h", "3d", "3s", "jk"]
    assert cards_text(ordered[6:]).index("2c") + 3 == cards_text(ordered[6:]).index("2h")
    assert sort_cards(ordered) == ordered
    assert sort_cards(reversed(hand)) == ordered
