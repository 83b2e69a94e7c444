"""Meld validity and canasta classification (docs/rules.md §1.9).

These functions look only at cards and the config: whose meld it is and whether the move is
allowed now belongs to the moves that put cards down (``melding`` for MELD and LAY_OFF,
``pile`` for taking the pile). Errors name the rule that the cards break.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Final

from .cards import IS_RED3, IS_WILD, RANK, THREE, Card, rank_name
from .config import RuleConfig
from .errors import IllegalMoveError

CANASTA_SIZE: Final = 7


def meld_rank(cards: Sequence[Card]) -> int:
    """The rank a group of cards would be melded as, read from its natural cards.

    Raises ``IllegalMoveError`` for red threes, mixed ranks, black threes with other cards,
    and groups with no natural card to give them a rank.
    """
    rank = -1
    for card in cards:
        if IS_RED3[card]:
            raise IllegalMoveError(
                "red threes cannot be melded: they are laid out by themselves", "1.7"
            )
        if IS_WILD[card]:
            continue
        if rank == -1:
            rank = RANK[card]
        elif RANK[card] != rank:
            raise IllegalMoveError(
                f"a meld holds cards of one rank; these mix {rank_name(rank)} and "
                f"{rank_name(RANK[card])} (sequences are not melds in this game)",
                "1.9",
            )
    if rank == -1:
        raise IllegalMoveError(
            "a meld needs natural cards: wild cards alone cannot be melded "
            "(to add a wild card to a meld, lay it off: lay RANK CARD)",
            "1.9",
        )
    if rank == THREE and any(IS_WILD[c] for c in cards):
        raise IllegalMoveError("black threes may not be melded with wild cards", "1.9")
    return rank


def group_melds(groups: Sequence[Sequence[Card]]) -> dict[int, tuple[Card, ...]]:
    """Sort meld groups by rank, joining groups of one rank (one meld per rank, §1.9)."""
    by_rank: dict[int, tuple[Card, ...]] = {}
    for group in groups:
        if not group:
            raise IllegalMoveError("a meld needs cards", "1.9")
        rank = meld_rank(group)
        by_rank[rank] = (*by_rank.get(rank, ()), *group)
    return by_rank


def check_meld(
    config: RuleConfig, rank: int, cards: Sequence[Card], *, new: bool, old_wilds: int = 0
) -> None:
    """Raise unless ``cards`` (the whole meld after the move) form a valid meld of ``rank``.

    ``new`` says the meld starts now, so it must reach the three-card minimum by itself.
    ``old_wilds`` is how many wild cards the meld held before: a meld that is over the wild
    limit without anyone adding a wild (two cutthroat partners' melds joined, §3.2) stays
    on the table and may still take naturals, but no more wild cards [engine policy].
    """
    fault = meld_fault(config, rank, cards, new=new, old_wilds=old_wilds)
    if fault is not None:
        raise IllegalMoveError(*fault)


def meld_fault(
    config: RuleConfig,
    rank: int,
    cards: Sequence[Card],
    *,
    new: bool,
    old_wilds: int = 0,
    wilds: int = -1,
) -> tuple[str, str] | None:
    """``check_meld``'s refusal (the message and the rule's section), or ``None`` when
    ``cards`` form a valid meld of ``rank``: the move lists ask it without an exception.
    ``wilds`` is the number of wild cards among ``cards`` where the caller knows it."""
    if config.closed_books and len(cards) > CANASTA_SIZE:
        return (
            f"a meld closes as a book at {CANASTA_SIZE} cards; this one would hold {len(cards)}",
            "3.7",
        )
    if wilds < 0:
        wilds = sum(1 for c in cards if IS_WILD[c])
    naturals = len(cards) - wilds
    if new and len(cards) < 3:
        return (
            f"a new meld needs at least three cards; {len(cards)} "
            f"{rank_name(rank) if len(cards) != 1 else 'card'} are not enough",
            "1.9",
        )
    if rank == THREE:
        return None  # black threes: three or four of them, no wilds (checked by meld_rank)
    if naturals < 2:
        return "a meld needs at least two natural cards", "1.9"
    limit = config.max_wilds(naturals)
    if wilds > limit and wilds > old_wilds:
        if config.wild_limit == "max3":
            return f"a meld may hold at most three wild cards; this one would hold {wilds}", "1.9"
        if config.wild_limit == "max2":
            return f"a meld may hold at most two wild cards; this one would hold {wilds}", "3.4"
        if config.wild_limit == "fewer_than_naturals_max3":
            return (
                f"a meld must hold fewer wild cards than natural cards, and at most three "
                f"({wilds} wild, {naturals} natural)",
                "3.7",
            )
        return (
            f"a meld may not hold more wild cards than natural cards "
            f"({wilds} wild, {naturals} natural)",
            "1.9",
        )
    return None


def is_canasta(meld: Sequence[Card]) -> bool:
    return len(meld) >= CANASTA_SIZE


def is_natural(meld: Sequence[Card]) -> bool:
    """A meld without wild cards (a natural canasta once it has seven cards)."""
    return not any(IS_WILD[c] for c in meld)


def wild_count(meld: Sequence[Card]) -> int:
    return sum(1 for c in meld if IS_WILD[c])


# -- the kinds of meld beyond one group per rank (Samba, Bolivia, Modern American, Hand and Foot) --

GROUP: Final = "group"
SEQUENCE: Final = "sequence"
WILD: Final = "wild"


def meld_kind(cards: Sequence[Card]) -> str:
    """``GROUP``, ``SEQUENCE`` or ``WILD``, read from a meld's cards."""
    rank = -1
    for card in cards:
        if IS_WILD[card]:
            continue
        if rank == -1:
            rank = RANK[card]
        elif RANK[card] != rank:
            return SEQUENCE
    return WILD if rank == -1 else GROUP


@lru_cache(maxsize=4096)
def meld_facts(cards: tuple[Card, ...]) -> tuple[str, int, int]:
    """A meld's kind (``meld_kind``), the rank of its first natural card (-1 in a wild meld)
    and its number of wild cards, memoised: a side's melds outlive many positions (each move
    changes one or two of them), and the move lists and going-out searches ask of each."""
    kind = GROUP
    rank = -1
    wilds = 0
    for card in cards:
        if IS_WILD[card]:
            wilds += 1
        elif rank == -1:
            rank = RANK[card]
        elif RANK[card] != rank:
            kind = SEQUENCE
    return (WILD if rank == -1 else kind), rank, wilds


def check_wild_meld(cards: Sequence[Card], old: int, books: bool = False) -> None:
    """§3.5: three to seven wild cards; a bolivia (seven) takes nothing more. With ``books``
    (Hand and Foot's closed books, §3.7) the seven-card meld is a wild book, closed."""
    if not all(IS_WILD[c] for c in cards):
        raise IllegalMoveError("a wild-card meld holds only twos and jokers", "3.5")
    if old >= CANASTA_SIZE:
        if books:
            raise IllegalMoveError("a wild book is closed at 7 cards: nothing may be added", "3.7")
        raise IllegalMoveError("a bolivia is complete: nothing may be added to it", "3.5")
    if len(cards) < 3:
        raise IllegalMoveError("a new wild-card meld needs at least three wild cards", "3.5")
    if len(cards) > CANASTA_SIZE:
        if books:
            raise IllegalMoveError(
                f"a wild book closes at 7 cards; this one would hold {len(cards)}", "3.7"
            )
        raise IllegalMoveError("a wild-card meld holds at most seven cards", "3.5")
