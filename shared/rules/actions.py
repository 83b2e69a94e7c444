"""The actions a seat can take: small frozen values with a canonical text form.

Cards in actions are faces (``shared.rules.cards``); the engine takes the copies from the
acting player's hand. ``str(action)`` is the canonical notation that ``notation.parse_action``
reads back, so an action survives a round trip through text exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from .cards import JOKER_RANK, RANK_TEXT, SUIT_LETTERS, Card, cards_text, rank_text
from .memo import remember


@dataclass(frozen=True, slots=True)
class MeldRef:
    """Which of a side's melds a lay-off, a pile take or a combination names (§3.4, §3.5).

    A group meld by its rank and, where a side has several melds of one rank (Samba), its
    place among them in table order (``which``, from 1: ``9#2`` is the second meld of nines);
    a wild-card meld (Bolivia) by ``rank = JOKER_RANK`` (``wild``, ``wild#2``); a sequence by
    its suit and any of its ranks, written as a range of two of its cards (``4h-6h``): two
    sequences of one suit never overlap (§3.8a), so one card of it names it.
    """

    rank: int
    which: int = 1
    suit: int = -1
    """At least 0: a sequence of this suit holding ``rank`` (and ``high``)."""
    high: int = -1
    """The top rank of a sequence reference as written (informational, for the text form)."""

    # (written out, as the dataclass would generate them, so that a compiled build compiles
    # them: the move lists hash and compare every candidate)
    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__ or not isinstance(other, MeldRef):
            return NotImplemented
        return (
            self.rank == other.rank
            and self.which == other.which
            and self.suit == other.suit
            and self.high == other.high
        )

    def __hash__(self) -> int:
        return hash((self.rank, self.which, self.suit, self.high))

    @property
    def is_sequence(self) -> bool:
        return self.suit >= 0

    def __str__(self) -> str:
        if self.suit >= 0:
            low = RANK_TEXT[self.rank] + SUIT_LETTERS[self.suit]
            high = RANK_TEXT[max(self.high, self.rank)] + SUIT_LETTERS[self.suit]
            return f"{low}-{high}"
        name = "wild" if self.rank == JOKER_RANK else rank_text(self.rank)
        return name if self.which == 1 else f"{name}#{self.which}"


@dataclass(frozen=True, slots=True)
class Draw:
    """Take the top card(s) of the stock (§1.6 T1)."""

    def __str__(self) -> str:
        return "draw"


@dataclass(frozen=True, slots=True)
class TakePile:
    """Take the whole discard pile (§1.6 T1, §1.8).

    ``cards`` go from the hand into one meld with the top card (empty: lay the top card off on
    the side's meld of its rank). ``melds`` are further melds from the hand made in the same
    move, which count toward the initial-meld minimum of an unopened side (§1.10 rule 4).
    """

    cards: tuple[Card, ...] = ()
    melds: tuple[tuple[Card, ...], ...] = ()
    onto: MeldRef | None = None
    """Samba and Bolivia (§3.4): the meld the top card (with ``cards``) joins; ``None``: the
    engine picks (a new meld for a pair, else the first meld the top card fits)."""

    # (written out, as the dataclass would generate them, so that a compiled build compiles
    # them: the move lists hash and compare every candidate)
    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__ or not isinstance(other, TakePile):
            return NotImplemented
        return self.cards == other.cards and self.melds == other.melds and self.onto == other.onto

    def __hash__(self) -> int:
        return hash((self.cards, self.melds, self.onto))

    def __str__(self) -> str:
        parts = [cards_text(self.cards)] + [cards_text(m) for m in self.melds]
        text = ", ".join(parts).strip()
        if self.onto is not None:
            text = f"to {self.onto} {text}".rstrip()
        return f"pickup {text}" if text else "pickup"


@dataclass(frozen=True, slots=True)
class Meld:
    """Lay down one or more melds from the hand (§1.6 T2, §1.9).

    Cards of a rank the side already has join that meld (classic); where a side may hold
    several melds of a rank (Samba, §3.4) each group is a new meld, and a group of one suit in
    sequence is a sequence meld. An unopened side's first meld of the
    hand is one ``Meld`` whose melds together meet the minimum (§1.10 rule 2).
    """

    melds: tuple[tuple[Card, ...], ...]

    # (written out, as the dataclass would generate them, so that a compiled build compiles
    # them: the move lists hash and compare every candidate)
    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__ or not isinstance(other, Meld):
            return NotImplemented
        return self.melds == other.melds

    def __hash__(self) -> int:
        return hash((self.melds,))

    def __str__(self) -> str:
        return "meld " + ", ".join(cards_text(m) for m in self.melds)


@dataclass(frozen=True, slots=True)
class LayOff:
    """Add cards from the hand to the side's existing meld of ``rank`` (§1.6 T2); in Samba
    and Bolivia ``which``, ``suit`` and ``high`` name one meld among several (``MeldRef``)."""

    rank: int
    cards: tuple[Card, ...]
    which: int = 1
    suit: int = -1
    high: int = -1

    # (written out, as the dataclass would generate them, so that a compiled build compiles
    # them: the move lists hash and compare every candidate)
    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__ or not isinstance(other, LayOff):
            return NotImplemented
        return (
            self.rank == other.rank
            and self.cards == other.cards
            and self.which == other.which
            and self.suit == other.suit
            and self.high == other.high
        )

    def __hash__(self) -> int:
        return hash((self.rank, self.cards, self.which, self.suit, self.high))

    @property
    def ref(self) -> MeldRef:
        return MeldRef(self.rank, self.which, self.suit, self.high)

    def __str__(self) -> str:
        if self.which == 1 and self.suit < 0 and self.rank != JOKER_RANK:
            return f"lay {rank_text(self.rank)} {cards_text(self.cards)}"
        return f"lay {self.ref} {cards_text(self.cards)}"


@dataclass(frozen=True, slots=True)
class Combine:
    """Join two group melds of one rank into one (Samba and Bolivia, §3.4, §3.8a)."""

    first: MeldRef
    second: MeldRef

    # (written out, as the dataclass would generate them, so that a compiled build compiles
    # them: the move lists hash and compare every candidate)
    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__ or not isinstance(other, Combine):
            return NotImplemented
        return self.first == other.first and self.second == other.second

    def __hash__(self) -> int:
        return hash((self.first, self.second))

    def __str__(self) -> str:
        return f"combine {self.first} {self.second}"


@dataclass(frozen=True, slots=True)
class Discard:
    """Put one card from the hand on the discard pile, ending the turn (§1.6 T3)."""

    card: Card

    # (written out, as the dataclass would generate them, so that a compiled build compiles
    # them: the move lists hash and compare every candidate)
    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__ or not isinstance(other, Discard):
            return NotImplemented
        return self.card == other.card

    def __hash__(self) -> int:
        return hash((self.card,))

    def __str__(self) -> str:
        return f"discard {cards_text((self.card,))}"


@dataclass(frozen=True, slots=True)
class AskPartner:
    """Ask partner "may I go out?"; the answer binds for this turn (§1.11.2)."""

    def __str__(self) -> str:
        return "ask"


@dataclass(frozen=True, slots=True)
class Answer:
    """Partner's binding answer to "may I go out?" (§1.11.2)."""

    yes: bool

    def __str__(self) -> str:
        return "answer yes" if self.yes else "answer no"


@dataclass(frozen=True, slots=True)
class Pass:
    """Decline to take the pile once the stock is gone, which ends the hand (§1.12).

    Also ends the turn of a player who drew a red three as the last card under
    ``last_card_red3 = "meld_no_discard"`` (D13), since that player may not discard.
    """

    def __str__(self) -> str:
        return "pass"


@dataclass(frozen=True, slots=True)
class Resign:
    """Concede the match for the seat's side, at any moment before it ends, in turn or not
    (``shared.rules.concede``). Never listed among a seat's moves: nobody resigns by chance."""

    def __str__(self) -> str:
        return "resign"


Action = Draw | TakePile | Meld | LayOff | Combine | Discard | AskPartner | Answer | Pass | Resign
"""Any action a seat can submit."""

DRAW: Final = Draw()
ASK: Final = AskPartner()
PASS: Final = Pass()
YES: Final = Answer(True)
NO: Final = Answer(False)
RESIGN: Final = Resign()
DISCARDS: Final = tuple(Discard(c) for c in range(53))
"""Shared instances: actions are immutable values, so the engine can reuse them."""


# -- shared instances of the actions the move lists build again and again ---------------------

_MEMO_LIMIT = 65_536
"""Entries each memo below keeps, the oldest going first (``memo.remember``): a bound on
memory. A long run reaches it (random play meets a few new melds a hand, and asks again of
old and new alike), so a full memo keeps most of what it holds instead of starting again."""
_LAYOFFS: dict[tuple[int, tuple[Card, ...], int], LayOff] = {}
_MELDS: dict[tuple[tuple[Card, ...], ...], Meld] = {}
_TAKES: dict[tuple[tuple[Card, ...], tuple[tuple[Card, ...], ...]], TakePile] = {}


def layoff_of(rank: int, cards: tuple[Card, ...], which: int = 1) -> LayOff:
    """``LayOff(rank, cards, which)``, one shared instance per value: the move lists offer the
    same lay-offs at every turn, and building a frozen dataclass costs more than finding it
    (actions are immutable values, compared by value, so sharing changes nothing)."""
    key = (rank, cards, which)
    found = _LAYOFFS.get(key)
    if found is None:
        found = remember(_LAYOFFS, key, LayOff(rank, cards, which), _MEMO_LIMIT)
    return found


def meld_of(melds: tuple[tuple[Card, ...], ...]) -> Meld:
    """``Meld(melds)``, one shared instance per value (``layoff_of``)."""
    found = _MELDS.get(melds)
    if found is None:
        found = remember(_MELDS, melds, Meld(melds), _MEMO_LIMIT)
    return found


def take_of(cards: tuple[Card, ...], melds: tuple[tuple[Card, ...], ...] = ()) -> TakePile:
    """``TakePile(cards, melds)``, one shared instance per value (``layoff_of``)."""
    key = (cards, melds)
    found = _TAKES.get(key)
    if found is None:
        found = remember(_TAKES, key, TakePile(cards, melds), _MEMO_LIMIT)
    return found
