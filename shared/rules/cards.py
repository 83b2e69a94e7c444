"""Cards as small integers, their rule properties, and the text people type for them.

A card is identified by its *face*: rank and suit, or joker. Two copies of the queen of hearts
are the same card for every rule of the game (docs/rules.md §1.2), so the engine never tracks which
pack a card came from; it keeps multisets of faces. That makes "the engine picks the copy"
trivial and keeps states small and fast to copy.

Encoding: ``card = suit * 13 + rank`` for the 52 suited faces, ``JOKER = 52``.
Ranks are indexed ``0 = '2', 1 = '3', 2 = '4', ..., 8 = '10', 9 = 'J', 10 = 'Q', 11 = 'K',
12 = 'A'``; suits ``0 = clubs, 1 = diamonds, 2 = hearts, 3 = spades``. Every property a rule
asks about is a tuple lookup indexed by the card (``RANK[c]``, ``VALUE[c]``, ``IS_WILD[c]``...).

>>> parse_card("10d") == parse_card("td") == parse_card("TD")
True
>>> card_text(parse_card("jk")), card_text(parse_card("7♥"))
('jk', '7h')
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from .errors import NotationError

Card = int
"""A card face: ``suit * 13 + rank`` (0..51), or ``JOKER`` (52)."""

JOKER: Final[Card] = 52
CARD_FACES: Final = 53

# (each a ``Final`` constant: a compiled build, make engine-compiled, inlines them)
TWO: Final = 0
THREE: Final = 1
FOUR: Final = 2
FIVE: Final = 3
SIX: Final = 4
SEVEN: Final = 5
EIGHT: Final = 6
NINE: Final = 7
TEN: Final = 8
JACK: Final = 9
QUEEN: Final = 10
KING: Final = 11
ACE: Final = 12
JOKER_RANK: Final = 13
"""Rank index of a joker (jokers have no natural rank)."""

CLUBS: Final = 0
DIAMONDS: Final = 1
HEARTS: Final = 2
SPADES: Final = 3
SUIT_LETTERS = "cdhs"
SUIT_SYMBOLS = "♣♦♥♠"
RANK_TEXT = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "j", "q", "k", "a")
"""How each rank index is written (lower case; parsing is case-insensitive)."""

NATURAL_RANKS: Final[tuple[int, ...]] = tuple(range(FOUR, ACE + 1))


def make_card(rank: int, suit: int) -> Card:
    """The card of a natural rank index and suit index."""
    return suit * 13 + rank


def _rank(card: Card) -> int:
    return JOKER_RANK if card == JOKER else card % 13


def _suit(card: Card) -> int:
    return -1 if card == JOKER else card // 13


def _value(card: Card) -> int:
    """Point value (docs/rules.md §1.2): joker 50, 2 and ace 20, 8..K 10, 4..7 5, black 3 5."""
    rank = _rank(card)
    if rank == JOKER_RANK:
        return 50
    if rank in (TWO, ACE):
        return 20
    if rank >= EIGHT:
        return 10
    if rank == THREE:
        return 0 if _suit(card) in (DIAMONDS, HEARTS) else 5
    return 5


_ALL = range(CARD_FACES)
RANK: Final[tuple[int, ...]] = tuple(_rank(c) for c in _ALL)
SUIT: Final[tuple[int, ...]] = tuple(_suit(c) for c in _ALL)
VALUE: Final[tuple[int, ...]] = tuple(_value(c) for c in _ALL)
IS_WILD: Final[tuple[bool, ...]] = tuple(_rank(c) in (TWO, JOKER_RANK) for c in _ALL)
IS_RED3: Final[tuple[bool, ...]] = tuple(_rank(c) == THREE and _suit(c) in (1, 2) for c in _ALL)
IS_BLACK3: Final[tuple[bool, ...]] = tuple(_rank(c) == THREE and _suit(c) in (0, 3) for c in _ALL)
IS_THREE: Final[tuple[bool, ...]] = tuple(_rank(c) == THREE for c in _ALL)
"""Both colours: Modern American lays out every three (docs/rules.md §3.6)."""
IS_NATURAL: Final[tuple[bool, ...]] = tuple(FOUR <= _rank(c) <= ACE for c in _ALL)
SORT_KEY: Final[tuple[int, ...]] = tuple(
    (_rank(c) if _rank(c) > THREE else _rank(c) + 20) * 4 + max(_suit(c), 0) for c in _ALL
)
"""Display order: naturals 4..A, then jokers, twos and threes; suits in order within a rank."""

RED_THREES = (make_card(THREE, DIAMONDS), make_card(THREE, HEARTS))


def card_text(card: Card) -> str:
    """The canonical text of a card: ``'7h'``, ``'10d'``, ``'qs'``, ``'jk'``."""
    if card == JOKER:
        return "jk"
    if not 0 <= card < JOKER:
        return f"<no such card {card!r}>"
    return RANK_TEXT[card % 13] + SUIT_LETTERS[card // 13]


def cards_text(cards: Iterable[Card]) -> str:
    """Space-separated canonical text of several cards."""
    return " ".join(card_text(c) for c in cards)


def rank_text(rank: int) -> str:
    """How a rank is written in melds and messages: ``'7'``, ``'k'``, ``'3'``."""
    return "jk" if rank == JOKER_RANK else RANK_TEXT[rank]


def rank_name(rank: int) -> str:
    """A rank in words for messages, plural: ``'sevens'``, ``'kings'``, ``'black threes'``."""
    names = (
        "twos", "threes", "fours", "fives", "sixes", "sevens", "eights", "nines", "tens",
        "jacks", "queens", "kings", "aces",
    )  # fmt: skip
    return "jokers" if rank == JOKER_RANK else names[rank]


_RANK_WORDS = {text: i for i, text in enumerate(RANK_TEXT)}
_RANK_WORDS.update({"t": TEN, "1": ACE, "11": JACK, "12": QUEEN, "13": KING, "14": ACE})
_SUIT_WORDS = {letter: i for i, letter in enumerate(SUIT_LETTERS)}
_SUIT_WORDS.update({sym: i for i, sym in enumerate(SUIT_SYMBOLS)})
_SUIT_WORDS.update({"♧": CLUBS, "♢": DIAMONDS, "♡": HEARTS, "♤": SPADES})
_JOKER_WORDS = {"jk", "joker", "jo", "*"}
_RANK_HELP = (
    "ranks are 2-10 (or t), j, q, k, a (or 11, 12, 13, 14, and 1 for a); suits are c, d, h, s; "
    "a joker is jk"
)


def parse_rank(text: str) -> int:
    """Read a bare rank such as ``'9'``, ``'k'`` or ``'10'`` (used to name a meld)."""
    word = text.strip().lower()
    if word in _RANK_WORDS:
        return _RANK_WORDS[word]
    raise NotationError(f"could not read the rank {text!r}: {_RANK_HELP}")


def parse_card(text: str) -> Card:
    """Read one card: rank then suit (``'7h'``, ``'10d'``, ``'td'``, ``'Q♠'``) or ``'jk'``."""
    word = text.strip().lower()
    if not word:
        raise NotationError("expected a card, found nothing")
    if len(word) > 12:
        raise NotationError(f"could not read the card {text[:12]!r}...: {_RANK_HELP}")
    if word in _JOKER_WORDS:
        return JOKER
    suit = _SUIT_WORDS.get(word[-1])
    rank = _RANK_WORDS.get(word[:-1])
    if suit is None or rank is None:
        if word in _RANK_WORDS:
            raise NotationError(
                f"the card {text!r} has no suit: write it like {word}h ({_RANK_HELP})"
            )
        raise NotationError(f"could not read the card {text!r}: {_RANK_HELP}")
    return make_card(rank, suit)


def parse_cards(text: str | Iterable[str]) -> tuple[Card, ...]:
    """Read several cards separated by spaces or commas, or given as separate strings."""
    words = text.replace(",", " ").split() if isinstance(text, str) else list(text)
    return tuple(parse_card(w) for w in words)


def sort_cards(cards: Iterable[Card]) -> tuple[Card, ...]:
    """Cards in display order (grouped by rank)."""
    return tuple(sorted(cards, key=SORT_KEY.__getitem__))


def deck(decks: int = 2, jokers_per_deck: int = 2) -> tuple[Card, ...]:
    """The cards of ``decks`` packs in a fixed canonical order (docs/rules.md §1.2 id order).

    The index of a card in this tuple is its card id in docs/rules.md's scheme when
    ``jokers_per_deck == 2``: ``d*54 + suit*13 + rank``, jokers at ``d*54 + 52 + j``.

    >>> len(deck()), sum(VALUE[c] for c in deck() if not IS_RED3[c])
    (108, 1180)
    """
    one_pack = tuple(range(52)) + (JOKER,) * jokers_per_deck
    return one_pack * decks


RankGroups = list[list[Card] | None]
"""A hand's cards per rank index (0..13: twos, threes, the naturals, jokers), each in hand
order; ``None`` for a rank not held."""


def hand_groups(hand: Iterable[Card]) -> tuple[RankGroups, list[int]]:
    """A hand's cards per rank index (``RankGroups``) and how many it holds of each rank, in
    one pass over the hand.

    The move lists ask several questions of one hand at every decision: which naturals of
    each rank it holds (new melds and lay-offs, §1.9; an opening, §1.10), its cheapest wild
    card, how many of each rank it holds (could it go out, so may it ask partner, §1.11.2).
    Each question used to count the hand afresh; these facts are counted once per listing
    and handed to each (issue 27: facts per position computed once). Nothing about the
    hand's order is assumed.
    """
    groups: RankGroups = [None] * 14
    counts = [0] * 14
    for card in hand:
        rank = RANK[card]
        counts[rank] += 1
        group = groups[rank]
        if group is None:
            groups[rank] = [card]
        else:
            group.append(card)
    return groups, counts
