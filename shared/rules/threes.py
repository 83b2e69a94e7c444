"""Red threes and black threes (docs/rules.md §1.7; §1.5 H4, §1.9, §1.13; D3, D16, D17).

Red threes are never held or melded: whenever one reaches a hand it is laid out beside the
seat and replaced from the stock (dealt: §1.5 H4, at once or at the seat's first turn, D3),
and at the end of the hand each side scores them, negative for a side that made no meld
(D16), with special totals such as 800 for all four (D17). Black threes meld only three or
four together, and only in the turn the player goes out (§1.9).

The other three rules sit with the move they shape, each citing its section: a red three
drawn from the stock, and drawn as its last card (§1.6 T1, D13), in ``stock``; a black three
on top of the pile (§1.8.2, D6) and black threes freezing it (D5) in ``pile``; red threes
toward the initial-meld minimum (D4) in ``opening``; the upcard (§1.5 H3, D2) in ``dealing``.
"""

from __future__ import annotations

from collections.abc import Sequence

from .cards import SORT_KEY, Card
from .edits import set_hand
from .errors import IllegalMoveError
from .ruleset import rules
from .state import Event, GameState, out_forbidden


def lay_out_red_threes(s: GameState, seat: int) -> None:
    """Lay out every red three in a hand and replace each from the stock (§1.5 H4, §1.7)."""
    hand = s.hands[seat]
    laid: list[Card] = []
    drawn: list[Card] = []
    out = rules(s).laid_out_threes()  # (Modern American: black threes too, §3.6)
    while any(out[c] for c in hand):
        threes = [c for c in hand if out[c]]
        hand = tuple(c for c in hand if not out[c])
        laid.extend(threes)
        for _ in threes:
            if not s.stock:
                break
            card = s.stock[0]
            s.stock = s.stock[1:]
            drawn.append(card)
            hand = (*hand, card)
    drawn_kept = tuple(c for c in drawn if not out[c])
    set_hand(s, seat, tuple(sorted(hand, key=SORT_KEY.__getitem__)))
    if laid:
        add_red_threes(s, seat, laid)
    s.pending_red3 = tuple(False if i == seat else p for i, p in enumerate(s.pending_red3))
    if laid:
        s.events = (
            *s.events,
            Event(seat, "red3", tuple(laid), drawn_kept, text="laid out red threes"),
        )


def add_red_threes(s: GameState, seat: int, threes: Sequence[Card]) -> None:
    """Place red threes face up beside ``seat`` (drawn, dealt, or found in a taken pile)."""
    red3 = list(s.red3)
    red3[seat] = (*red3[seat], *threes)
    s.red3 = tuple(red3)


def lay_out_threes_left_in_hands(s: GameState) -> None:
    """At the end of a hand, red threes still held count as laid out (§1.7).

    Only the ``red3_deal_timing = "first_turn"`` option (D3) leaves them in a hand: a seat
    whose first turn never came still holds its dealt red threes.
    """
    out = rules(s).laid_out_threes()  # (Modern American: black threes too, §3.6)
    for seat in range(s.config.players):
        if any(out[c] for c in s.hands[seat]):
            threes = [c for c in s.hands[seat] if out[c]]
            set_hand(s, seat, tuple(c for c in s.hands[seat] if not out[c]))
            add_red_threes(s, seat, threes)


def red_three_score(
    state: GameState, column_seats: tuple[int, ...], side: int, canastas: int
) -> tuple[int, int]:
    """How many red threes count for a score column, and their points (§1.13; D16, D17).

    ``column_seats`` are the column's seats, ``side`` the side they play for now and
    ``canastas`` the canastas it made. Red threes are pooled per side, or counted per
    player in cutthroat (``red3_scoring = "individual"``, §3.2).
    """
    config = state.config
    if config.red3_scoring == "individual":
        threes = sum(len(state.red3[s]) for s in column_seats)
    else:
        threes = sum(len(state.red3[s]) for s in state.side_seats(side))
    rule = config.red3_negative_if
    if rule == "no_meld":
        negative = not state.opened(side)
    elif rule == "no_canasta":
        negative = canastas == 0
    elif rule == "never":  # §3.8a Hand and Foot: +100 each, never negative
        negative = False
    else:  # "too_few_canastas": plus only with the canastas to go out (§3.4, §3.5)
        negative = canastas < config.canastas_to_go_out
    points = config.red3_total(threes) * (-1 if negative else 1) if threes else 0
    return threes, points


def check_black_threes(s: GameState, cards: Sequence[Card], already: int) -> None:
    """Black threes meld only as three or more, in the turn the player goes out (§1.9), so
    never while going out is forbidden (partner said no, §1.11.2; or, under
    ``must_ask_to_go_out``, partner was not asked and said yes, §3.8a).

    ``already`` is the size of the side's black-three meld before the move. That the turn
    does end with the player out is enforced afterwards: the move sets ``must_go_out``.
    """
    if already == 0 and len(cards) < 3:
        raise IllegalMoveError("black threes can only be melded three or four together", "1.9")
    if s.permission == "no":
        raise IllegalMoveError(
            "black threes are melded only when going out, and your partner said no", "1.9"
        )
    if out_forbidden(s):  # must_ask_to_go_out: not asked, so going out is not allowed yet
        raise IllegalMoveError(
            "black threes are melded only when going out, and under these rules you may go "
            "out only after asking your partner and hearing yes",
            "3.8a",
        )
