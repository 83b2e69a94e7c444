"""Small edits of a position that every kind of move shares, and the ``Plan`` a move becomes.

The rule modules (``pile``, ``melding``, ``stock``, ``threes``, ``goingout``...) change a
private clone of the state (``engine.apply`` makes it), never the caller's state. The edits
here keep that clone's invariants in one place: a hand stays in ``cards.SORT_KEY`` order, every
container stays a tuple (so ``GameState._clone`` may share them), and a card the player does not
hold is refused with the same message wherever a move names it.

A meld, lay-off or pile take is validated first into a ``Plan`` without changing anything,
then executed with ``put_down``: ``engine.check`` can stop after the validation when nothing
later could refuse the move, which is what keeps move listing cheap.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from .cards import SORT_KEY, Card, card_text
from .errors import IllegalMoveError
from .state import Extra, GameState, Melds

EXTRA_BIT = 16
"""``turn_new_ranks`` bit of the side's further meld number ``i`` is ``EXTRA_BIT + i`` (rank
bits are 0..13), so concealed going out can see melds started this turn in Samba too."""


class Plan(NamedTuple):
    """A validated meld, lay-off or pile take, ready to execute.

    Validation never changes the state, so ``check`` can stop after it whenever the
    dead-end guard obviously passes (``hand_left >= 2`` and no obligation to go out).
    """

    side: int
    hand: tuple[Card, ...]
    """The acting hand without the cards put down (before any pile cards join it)."""
    melds: Melds
    """The side's melds after the move."""
    touched: tuple[tuple[int, bool], ...]
    """(rank, meld existed before) for every meld the move adds to or starts."""
    hand_left: int
    """Cards in hand once the move is complete."""
    obliges_out: bool
    """The move can only be made when going out this turn (black threes)."""
    extra: Extra | None = None
    """The side's further melds after the move (Samba and Bolivia); ``None``: unchanged."""


def put_down(s: GameState, plan: Plan) -> None:
    """Place a validated plan's melds, tracking what this turn put down.

    The flags decide whether going out is concealed (docs/rules.md §1.11.4): a meld started this
    turn is the player's own, while adding to a meld the side had before the turn spoils it.
    """
    set_melds(s, plan.side, plan.melds)
    if plan.extra is not None:
        extra = list(s.extra)
        extra[plan.side] = plan.extra
        s.extra = tuple(extra)
    s.turn_put_down = True
    for rank, existed in plan.touched:
        bit = 1 << rank
        if not existed:
            s.turn_new_ranks |= bit
        elif not s.turn_new_ranks & bit:
            s.touched_old_meld = True


def remove_cards(hand: tuple[Card, ...], cards: Sequence[Card], purpose: str) -> tuple[Card, ...]:
    """``hand`` without ``cards``; a card the player does not hold is refused."""
    rest = list(hand)
    for card in cards:
        if not 0 <= card < 53:
            raise IllegalMoveError(f"{card!r} is not a card")
        try:
            rest.remove(card)
        except ValueError:
            held = hand.count(card)
            raise IllegalMoveError(
                f"you do not hold {'another' if held else 'the'} {card_text(card)} {purpose}"
            ) from None
    return tuple(rest)


def set_hand(s: GameState, seat: int, hand: tuple[Card, ...]) -> None:
    """Replace one seat's hand (already in ``SORT_KEY`` order)."""
    hands = list(s.hands)
    hands[seat] = hand
    s.hands = tuple(hands)


def give(s: GameState, seat: int, cards: Sequence[Card]) -> None:
    """Add cards to a seat's hand, keeping it sorted."""
    if cards:
        set_hand(s, seat, tuple(sorted((*s.hands[seat], *cards), key=SORT_KEY.__getitem__)))


def set_melds(s: GameState, side: int, melds: Melds) -> None:
    """Replace one side's melds."""
    all_melds = list(s.melds)
    all_melds[side] = melds
    s.melds = tuple(all_melds)
