"""Drawing from the stock, and the end of the stock (docs/rules.md §1.6 T1, §1.12; D13, D14).

A draw takes ``draw_count`` cards from the top of the stock; each red three drawn is laid out
and replaced (§1.7). A red three drawn as the stock's last card ends the hand at once, or
(D13 option) lets the player meld but not discard, and pass to end the hand.

Once the stock is gone, each player must begin the turn by taking the pile, or the hand ends
(§1.12): the take is compulsory when the top card could be laid off onto the side's unfrozen
melds (D14; option: whenever any take is legal), and otherwise the player may take or pass.
Cutthroat (``stock_out_rule = "end_after_last_discard"``, §3.2) ends the hand at once.
``engine`` starts each turn, and with the stock gone hands over to ``start_turn_without_stock``.
"""

from __future__ import annotations

from .actions import TakePile
from .cards import IS_BLACK3, IS_WILD, RANK, Card, rank_name
from .edits import give
from .errors import IllegalMoveError
from .pile import pile_takes, take_is_legal, take_pile, take_ruled_out
from .ruleset import rules
from .scoring import end_hand
from .state import EndReason, Event, GameState, Phase
from .threes import add_red_threes


def draw(s: GameState, seat: int) -> None:
    """§1.6 T1 DRAW_STOCK, with red threes laid out and replaced, and the last-card rules."""
    if not s.stock:
        raise IllegalMoveError(
            "the stock is empty: take the discard pile, or pass to end the hand", "1.12"
        )
    need = s.config.draw_count
    got: list[Card] = []
    threes: list[Card] = []
    out = rules(s).laid_out_threes()  # (Modern American: black threes too, §3.6)
    stock = s.stock
    taken = 0  # (the stock is cut once: Samba's holds a hundred cards, and one draws two)
    while need and taken < len(stock):
        card = stock[taken]
        taken += 1
        if out[card]:
            threes.append(card)
            continue
        got.append(card)
        need -= 1
    s.stock = stock[taken:]
    give(s, seat, got)
    if threes:
        add_red_threes(s, seat, threes)
    s.events = (
        *s.events,
        Event(seat, "draw", tuple(threes), tuple(got)),
    )
    s.drew_from_stock = True
    s.phase = Phase.PLAY
    if threes and not got and not s.stock:  # §1.7: a red three was the last stock card
        if s.config.last_card_red3 == "end_no_play":
            end_hand(s, EndReason.RED3_LAST_CARD)
        else:
            s.no_discard = True


def pass_at_stock_end(s: GameState, seat: int, listed: bool = False) -> None:
    """§1.12: with the stock gone, declining the pile ends the hand unless taking is compulsory.

    A ``listed`` pass (``engine.apply_listed``) is not asked again whether a take is
    compulsory: that question tries every candidate take on a copy of the position."""
    if s.stock:
        raise IllegalMoveError("you may only pass once the stock is empty; draw instead", "1.12")
    forced = None if listed else compulsory_take(s, seat)
    if forced is not None:
        if forced.cards or forced.melds:  # D14 "any_legal": any legal take is compulsory
            why = "you can take the pile, and in this game any possible take is compulsory"
        else:  # the top card goes on the side's meld of its rank
            why = (
                f"the pile's top card can be laid off on your side's meld of "
                f"{rank_name(RANK[s.pile[-1]])}"
            )
        raise IllegalMoveError(
            f"the stock is empty and {why}, so you must take the pile: {forced}", "1.12"
        )
    end_hand(s, EndReason.STOCK_OUT_NO_TAKE)


def compulsory_take(s: GameState, seat: int) -> TakePile | None:
    """A take that the player must make now that the stock is gone, if any (§1.12; D14)."""
    if s.config.stock_out_forced_take == "layoff_only":
        side = s.side_of[seat]
        if not s.pile or s.pile_frozen or not s.opened(side):
            return None
        if IS_WILD[s.pile[-1]] or IS_BLACK3[s.pile[-1]]:
            return None
        if not s.melds[side][RANK[s.pile[-1]]] and not s.extra_of(side):
            return None  # (Samba: the top card may fit a further meld; the trial decides)
        candidates: list[TakePile] = [TakePile()]
    else:
        candidates = pile_takes(s, seat)
    for take in candidates:
        trial = s._clone()
        try:
            take_pile(trial, seat, take)
        except IllegalMoveError:
            continue
        return take
    return None


def start_turn_without_stock(s: GameState) -> None:
    """§1.6 T0, §1.12: a turn starts with the stock gone, so the hand ends unless the player
    to move may take the pile (cutthroat, §3.2: it ends once the last card's drawer discarded)."""
    if s.config.stock_out_rule == "end_after_last_discard":
        end_hand(s, EndReason.STOCK_EXHAUSTED)
    elif not _may_take(s, s.turn):
        end_hand(s, EndReason.STOCK_OUT_NO_TAKE)


def _may_take(s: GameState, seat: int) -> bool:
    """Whether the player to move might take the pile once the stock is gone (§1.12).

    Answered with the legal candidates first, then with cheap necessary conditions, so the
    hand ends by itself only when no take is possible; in a doubtful case the player decides
    (take, or pass).
    """
    for take in pile_takes(s, seat):
        if take_is_legal(s, seat, take):
            return True
    return not take_ruled_out(s, seat)
