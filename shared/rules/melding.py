"""Melding from hand and laying off: the MELD and LAY_OFF moves (docs/rules.md §1.6 T2).

A player may, after drawing, start melds and add cards to the side's melds, in any number
and order. What makes a meld valid is ``melds`` (§1.9); here is what makes the move legal
now: the cards come from the hand, one meld per rank per side, a side's first meld must reach
its minimum (``opening``, §1.10), black threes meld only when going out (``threes``, §1.9),
and afterwards the dead-end guard must let the turn end (``goingout``, §1.11.3).

Each move is validated into a ``Plan`` (``plan_meld``, ``plan_lay_off``) and then executed
from it. A move the engine listed itself (``engine.apply_listed``) builds the same plan
with ``listed=True``, which leaves out the checks of the cards' validity and the opening
minimum (the listing made them) but never the building, so both paths execute alike; a
ruleset's own plan (``Ruleset.plan_meld``, ``plan_lay_off``) is told ``listed`` too.
"""

from __future__ import annotations

from .actions import Combine, LayOff, Meld
from .cards import IS_RED3, IS_WILD, RANK, THREE, card_text, rank_name
from .edits import Plan, put_down, remove_cards, set_hand
from .errors import IllegalMoveError
from .goingout import after_put_down
from .melds import check_meld, group_melds, wild_count
from .opening import check_opening_meld
from .ruleset import rules
from .state import Event, GameState
from .threes import check_black_threes


def plan_meld(s: GameState, seat: int, action: Meld, listed: bool = False) -> Plan:
    """§1.9, §1.10: validate new melds (or cards joining melds of their rank); ``listed``:
    only build the plan of a listed meld, without the checks the listing made."""
    planned = rules(s).plan_meld(s, seat, action, listed)
    if planned is not None:
        return planned
    config = s.config
    side = s.side_of[seat]
    if not action.melds:
        raise IllegalMoveError("name the cards to meld, for example: meld 7h 7c 2s", "1.9")
    hand = remove_cards(s.hands[seat], [c for g in action.melds for c in g], "to meld")
    by_rank = group_melds(action.melds)
    melds = list(s.melds[side])
    if not listed:
        for rank, cards in by_rank.items():
            if rank == THREE:
                check_black_threes(s, cards, len(melds[THREE]))
            old = melds[rank]
            check_meld(config, rank, (*old, *cards), new=not old, old_wilds=wild_count(old))
        if not s.opened(side):
            check_opening_meld(s, seat, hand, by_rank)
    touched = tuple((rank, bool(melds[rank])) for rank in by_rank)
    for rank, cards in by_rank.items():
        melds[rank] = (*melds[rank], *cards)
    return Plan(side, hand, tuple(melds), touched, len(hand), THREE in by_rank and bool(hand))


def meld(s: GameState, seat: int, action: Meld, listed: bool = False) -> None:
    """§1.6 T2 MELD (``listed``: a move the engine listed, executed without its checks)."""
    plan = plan_meld(s, seat, action, listed)
    opening = not s.opened(plan.side)
    put_down(s, plan)
    set_hand(s, seat, plan.hand)
    s.turn_melded = True
    cards_down = tuple(c for g in action.melds for c in g)
    # Several melds in one action: their sizes ("3+3"), so a reader can tell where each ends.
    sizes = "+".join(str(len(g)) for g in action.melds) if len(action.melds) > 1 else ""
    s.events = (*s.events, Event(seat, "meld", cards_down, text=sizes))
    if opening:
        rules(s).side_opened(s, seat, cards_down, False)
    if plan.obliges_out:
        s.must_go_out = True
    after_put_down(s, seat, listed)


def plan_lay_off(s: GameState, seat: int, action: LayOff, listed: bool = False) -> Plan:
    """§1.6 T2 LAY_OFF: naturals of the meld's rank and/or wild cards onto a side meld;
    ``listed``: only build the plan of a listed lay-off, without the checks the listing made."""
    planned = rules(s).plan_lay_off(s, seat, action, listed)
    if planned is not None:
        return planned
    if action.which != 1 or action.suit >= 0:
        raise IllegalMoveError("in this game a side has one meld per rank: name it by its rank")
    side = s.side_of[seat]
    rank = action.rank
    if not THREE <= rank <= 12:
        raise IllegalMoveError("name the rank of the meld to lay off to, for example: lay 9 9d")
    if not action.cards:
        raise IllegalMoveError("name the cards to lay off, for example: lay 9 9d 2c", "1.6")
    existing = s.melds[side][rank]
    if not existing:
        raise IllegalMoveError(f"your side has no meld of {rank_name(rank)} to add to", "1.6")
    hand = remove_cards(s.hands[seat], action.cards, "to lay off")
    merged = (*existing, *action.cards)
    if not listed:
        for card in action.cards:
            fits = RANK[card] == rank and not IS_RED3[card]
            if rank != THREE and IS_WILD[card]:
                fits = True
            if not fits:
                raise IllegalMoveError(
                    f"{card_text(card)} does not fit a meld of {rank_name(rank)}", "1.9"
                )
        check_meld(s.config, rank, merged, new=False, old_wilds=wild_count(existing))
    melds = list(s.melds[side])
    melds[rank] = merged
    return Plan(side, hand, tuple(melds), ((rank, True),), len(hand), False)


def lay_off(s: GameState, seat: int, action: LayOff, listed: bool = False) -> None:
    """§1.6 T2 LAY_OFF (``listed``: a move the engine listed, executed without its checks)."""
    plan = plan_lay_off(s, seat, action, listed)
    put_down(s, plan)
    set_hand(s, seat, plan.hand)
    s.turn_melded = True
    s.events = (*s.events, Event(seat, "layoff", action.cards))
    after_put_down(s, seat, listed)


def combine(s: GameState, seat: int, action: Combine, listed: bool = False) -> None:
    """§3.4: join two group melds of one rank (Samba and Bolivia); ``listed``: a move the
    engine listed, executed without its checks (the ruleset's plan, the dead-end guard)."""
    plan = rules(s).plan_combine(s, seat, action, listed)
    put_down(s, plan)
    s.turn_melded = True
    s.events = (*s.events, Event(seat, "combine", text=str(action)))
    after_put_down(s, seat, listed)
