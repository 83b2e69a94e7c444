"""The discard pile: when it is frozen, and taking it (docs/rules.md §1.8; §1.6 T1; D5-D8, D15).

The pile is frozen for everyone once it holds a wild card, a red three turned as the upcard
or (option D5) a black three, and frozen for a side that has not opened (§1.8.1); a frozen
pile is taken only with a natural pair of the top card's rank (D7 option: a lay-off onto the
side's meld). An unfrozen pile may be taken with a pair, a natural and a wild card, or by
laying the top card off (D8). Every check of §1.8.2 is in ``plan_take``, in its order, and
``take_pile`` executes the take (§1.6 T1: the top card is melded, red threes in the pile are
laid out, the rest joins the hand). A take the engine listed itself (``engine.apply_listed``)
builds the same plan with ``listed=True``, without the checks the listing made.

Move listing lives here too, because the end of the stock (``stock``) needs it as a rule:
``pile_takes`` lists the candidate takes and ``take_ruled_out`` says when none can exist.
"""

from __future__ import annotations

from typing import NamedTuple

from .actions import TakePile, take_of
from .cards import (
    IS_BLACK3,
    IS_NATURAL,
    IS_RED3,
    IS_WILD,
    RANK,
    THREE,
    VALUE,
    Card,
    card_text,
    rank_name,
)
from .config import RuleConfig
from .edits import Plan, give, put_down, remove_cards, set_hand
from .errors import IllegalMoveError
from .goingout import after_put_down
from .melds import check_meld, group_melds, meld_fault, wild_count
from .opening import (
    best_opening,
    check_opening_by_take_allowed,
    opening_target,
    require_minimum,
)
from .ruleset import form_sides, rules
from .state import Event, GameState, Phase
from .threes import add_red_threes, check_black_threes


def frozen_reason(s: GameState, side: int) -> str:
    """Why the pile is frozen for ``side`` (§1.8.1), or ``""`` when it is not."""
    reason = rules(s).frozen_reason(s, side)
    if reason is not None:
        return reason
    if s.pile_frozen:
        return _frozen_pile(s)
    if not s.opened(side) and s.config.pile_freezes:  # Hand and Foot: no freezing (§3.8a)
        return "your side has not made its first meld yet"
    return ""


def frozen_for_every_side(s: GameState) -> str:
    """Why the pile is frozen for every side alike (what a spectator is told), or ``""``: a
    side's own freeze, before it has opened, is not the pile's (§1.8.1)."""
    reasons = {rules(s).frozen_reason(s, side) for side in set(s.side_of)}
    if reasons != {None}:
        return reasons.pop() or "" if len(reasons) == 1 else ""
    return _frozen_pile(s) if s.pile_frozen else ""


def _frozen_pile(s: GameState) -> str:
    """Why a pile frozen for everyone (``pile_frozen``) is so (§1.8.1)."""
    if any(IS_WILD[c] for c in s.pile):
        return "it holds a wild card"
    if any(IS_RED3[c] for c in s.pile):
        return "a red three was turned up to start it"
    return "it holds a black three"


def discard_freezes(config: RuleConfig, card: Card) -> bool:
    """A wild discard freezes the pile, and so does a black three under ``black3_freezes``
    (§1.8.1; D5); nothing freezes it in Hand and Foot (§3.8a). (The upcard's own freezing
    rules are ``dealing``'s, §1.5 H3.)"""
    return (IS_WILD[card] and config.pile_freezes) or (IS_BLACK3[card] and config.black3_freezes)


class TakeStart(NamedTuple):
    """What every ruleset's take of the pile starts from (``take_prologue``)."""

    side: int
    top: Card
    rank: int
    hand: tuple[Card, ...]
    """The hand without the support cards."""
    opened: bool
    naturals: int
    """Support cards of the top card's rank."""
    wilds: int


def take_prologue(
    s: GameState,
    seat: int,
    action: TakePile,
    *,
    refuse_black_top: bool,
    onto: bool = False,
    listed: bool = False,
) -> TakeStart:
    """The checks that open every ruleset's take of the pile, in order (§1.8.2): a pile to
    take, no wild card (nor, with ``refuse_black_top``, a black three) on top, the
    one-card rule (D15), a meld named with ``onto`` only where a side may have several of a
    rank, an opening by the pile allowed (D21), the support cards in hand, and every one
    of them of the top card's rank or wild. ``listed`` (a take the engine listed): only
    what building the take needs, a pile to take and the support cards held."""
    if not s.pile:
        raise IllegalMoveError("the discard pile is empty: draw from the stock", "1.8.2")
    config = s.config
    side = s.side_of[seat]
    top = s.pile[-1]
    rank = RANK[top]
    support = action.cards
    if listed:
        hand = remove_cards(s.hands[seat], support, "to take the pile with")
        naturals = sum(1 for c in support if not IS_WILD[c])  # (listed: of the top's rank)
        return TakeStart(side, top, rank, hand, s.opened(side), naturals, len(support) - naturals)
    if IS_WILD[top]:
        raise IllegalMoveError(
            f"a wild card ({card_text(top)}) is on top of the pile, so it cannot be taken", "1.8.2"
        )
    if refuse_black_top and IS_BLACK3[top]:
        raise IllegalMoveError(
            "a black three is on top of the pile, so it cannot be taken this turn", "1.8.2"
        )
    hand = s.hands[seat]
    if config.one_card_pile_rule and len(hand) == 1 and len(s.pile) == 1:
        raise IllegalMoveError(
            "with one card in your hand you may not take a pile of one card", "1.8.2"
        )
    if action.onto is not None and not onto:
        raise IllegalMoveError(
            "in this game the top card joins your side's one meld of its rank: leave out 'to'"
        )
    opened = s.opened(side)
    if not opened:
        check_opening_by_take_allowed(config)
    hand = remove_cards(hand, support, "to take the pile with")
    naturals = sum(1 for c in support if RANK[c] == rank and not IS_WILD[c] and not IS_RED3[c])
    wilds = sum(1 for c in support if IS_WILD[c])
    if naturals + wilds != len(support):
        raise IllegalMoveError(
            f"the cards you take the pile with must be {rank_name(rank)} or wild cards "
            f"(the top card is {card_text(top)})",
            "1.8.2",
        )
    return TakeStart(side, top, rank, hand, opened, naturals, wilds)


def frozen_take_allowed(
    config: RuleConfig, naturals: int, opened: bool, existing: bool, pile_frozen: bool
) -> bool:
    """§1.8.2: whether a frozen pile may be taken with this support: two naturals of the top
    card's rank, or (``frozen_allows_layoff``) an opened side's meld of that rank to lay the
    top card on while the pile itself is frozen. ``plan_take`` and ``take_verdict`` both ask."""
    return naturals >= 2 or (config.frozen_allows_layoff and opened and existing and pile_frozen)


def take_method(naturals: int, wilds: int, existing: bool) -> str | None:
    """§1.8.2 and D8: how an unfrozen pile would be taken with this support, named as
    ``unfrozen_take_methods`` names it (a natural pair, a natural and a wild card, or the top
    card laid on the side's meld of its rank); ``None`` when it cannot be taken at all."""
    if naturals >= 2:
        return "pair"
    if naturals == 1 and wilds >= 1:
        return "natural_plus_wild"
    if existing:
        return "layoff"
    return None


def plan_take(s: GameState, seat: int, action: TakePile, listed: bool = False) -> Plan:
    """§1.8.2: every check on taking the pile, in order, without changing anything.

    ``listed``: the take was listed as legal here (``engine.apply_listed``), so the same plan
    is built without the checks of the support, the freeze, the melds and the minimum; what
    building needs (a pile to take, the cards held) is still asked. A ruleset's own plan
    (``Ruleset.plan_take``) is told ``listed`` too."""
    planned = rules(s).plan_take(s, seat, action, listed)
    if planned is not None:
        return planned
    config = s.config
    naturals = wilds = 0
    if listed:  # (take_prologue's listed path, without counting the support: not needed here)
        if not s.pile:
            raise IllegalMoveError("the discard pile is empty: draw from the stock", "1.8.2")
        side = s.side_of[seat]
        top = s.pile[-1]
        rank = RANK[top]
        hand = remove_cards(s.hands[seat], action.cards, "to take the pile with")
        opened = s.opened(side)
    else:
        side, top, rank, hand, opened, naturals, wilds = take_prologue(
            s, seat, action, refuse_black_top=not config.black3_top_takeable_to_go_out
        )
    black_top = IS_BLACK3[top]
    support = action.cards
    melds = list(s.melds[side])
    existing = melds[rank]
    merged = (*existing, top, *support)
    if not listed:
        _check_support(s, side, top, naturals, wilds, opened, bool(existing))
        check_meld(config, rank, merged, new=not existing, old_wilds=wild_count(existing))
    melds[rank] = merged
    touched = [(rank, bool(existing))]
    extra = group_melds(action.melds)
    if extra:
        hand = remove_cards(hand, [c for g in action.melds for c in g], "to meld")
    if not opened and not listed:
        value = VALUE[top] + sum(VALUE[c] for c in support)
        value += sum(VALUE[c] for g in extra.values() for c in g)
        require_minimum(s, seat, value, with_pile=True)
    for r, cards in extra.items():
        if not listed:
            if r == THREE:
                check_black_threes(s, cards, len(melds[THREE]))
            old = melds[r]
            check_meld(config, r, (*old, *cards), new=not old, old_wilds=wild_count(old))
        touched.append((r, bool(melds[r]) and r != rank))
        melds[r] = (*melds[r], *cards)
    taken = sum(1 for c in pile_cards_taken(s) if not IS_RED3[c])
    return Plan(
        side, hand, tuple(melds), tuple(touched), len(hand) + taken, black_top or THREE in extra
    )


def _check_support(
    s: GameState, side: int, top: Card, naturals: int, wilds: int, opened: bool, existing: bool
) -> None:
    """§1.8.2, D6, D8: whether the support cards (``naturals`` of the top card's rank and
    ``wilds``) may take the pile, frozen for ``side`` or not, with the top card ``top``."""
    config = s.config
    rank = RANK[top]
    frozen_why = frozen_reason(s, side)
    if frozen_why:
        if not frozen_take_allowed(config, naturals, opened, existing, s.pile_frozen):
            raise IllegalMoveError(
                f"the pile is frozen ({frozen_why}): to take it you need two natural "
                f"{rank_name(rank)} from your hand to meld with the {card_text(top)}",
                "1.8.2",
            )
    else:
        method = take_method(naturals, wilds, existing)
        if method is None:
            raise IllegalMoveError(
                f"to take the pile you need two natural {rank_name(rank)}, one natural "
                f"{rank_name(rank)[:-1]} and a wild card, or a meld of {rank_name(rank)} "
                "to add the top card to",
                "1.8.2",
            )
        if method not in config.unfrozen_take_methods:
            raise IllegalMoveError(
                f"these rules do not allow taking the pile that way ({method.replace('_', ' ')})",
                "D8",
            )
    if rank == THREE and wilds:
        raise IllegalMoveError("black threes may not be melded with wild cards", "1.9")
    if IS_BLACK3[top] and naturals < 2:
        raise IllegalMoveError(
            "a black three on top may only be taken with two more black threes, to go out",
            "D6",
        )


def pile_cards_taken(s: GameState) -> tuple[Card, ...]:
    """The cards under the top card that taking the pile takes: all of them, or with
    ``pile_take_count`` (Hand and Foot, §3.7, §3.8a) only so many from the top, the top card
    counted."""
    count = s.config.pile_take_count
    if count is None:
        return s.pile[:-1]
    return s.pile[max(0, len(s.pile) - count) : -1]


def take_pile(s: GameState, seat: int, action: TakePile, listed: bool = False) -> None:
    """§1.6 T1 TAKE_PILE: validate (§1.8.2), then meld the top card, take the rest (in Hand
    and Foot only the top seven cards, the top card counted, §3.7); ``listed``: a take the
    engine listed, executed without its checks (``plan_take``, the dead-end guard)."""
    plan = plan_take(s, seat, action, listed)
    ruleset = rules(s)
    opening = not s.opened(plan.side)
    put_down(s, plan)
    if opening:
        cards = (*action.cards, *(c for g in action.melds for c in g))
        ruleset.side_opened(s, seat, cards, True)
    rest = pile_cards_taken(s)
    left = s.pile[: len(s.pile) - 1 - len(rest)]
    threes = [c for c in rest if IS_RED3[c]]
    set_hand(s, seat, plan.hand)
    give(s, seat, [c for c in rest if not IS_RED3[c]])
    if threes:
        add_red_threes(s, seat, threes)
    s.events = (
        *s.events,
        Event(
            seat, "take", (s.pile[-1], *action.cards, *rest), text=f"{len(action.cards)} from hand"
        ),
    )
    s.pile = left
    s.pile_frozen = any(discard_freezes(s.config, c) for c in left)
    s.phase = Phase.PLAY
    if plan.obliges_out:
        s.must_go_out = True
    form_sides(s, seat)
    after_put_down(s, seat, listed)


def take_is_legal(s: GameState, seat: int, take: TakePile) -> bool:
    """Whether ``seat``, to move at the start of its turn, may take the pile with ``take``.

    ``engine.is_legal`` gives the same answer there: it is this validation, decided by the
    plan alone when the dead-end guard cannot object, else by a trial take on a clone.
    """
    try:
        plan = plan_take(s, seat, take)
        if plan.hand_left >= 2 and not plan.obliges_out and not s.must_go_out and not s.no_discard:
            return True
        take_pile(s._clone(), seat, take)
    except IllegalMoveError:
        return False
    return True


def pile_takes(state: GameState, seat: int) -> list[TakePile]:
    """Candidate ways to take the pile: the support cards, and an opening if one is needed.

    An opened side is offered the smallest supports (more cards can be laid off after the
    take). An unopened side must reach its minimum (§1.10 rule 4): for a pair and for all
    its naturals of the top card's rank, wild cards join the support one at a time (jokers
    first) until the support alone, or the support plus the best opening from the rest of
    the hand, reaches the minimum.
    """
    if not state.pile:
        return []
    listed = rules(state).take_candidates(state, seat)
    if listed is not None:
        return listed
    return classic_takes(state, seat)


def classic_takes(state: GameState, seat: int) -> list[TakePile]:
    """``pile_takes`` under classic's rules, for a ruleset that keeps its ``take_candidates``
    (the move lists call it straight, having checked that once per ruleset)."""
    if not state.pile:
        return []
    top = state.pile[-1]
    config = state.config
    if IS_WILD[top] or (IS_BLACK3[top] and not config.black3_top_takeable_to_go_out):
        return []
    rank = RANK[top]
    hand = state.hands[seat]
    naturals = [c for c in hand if RANK[c] == rank and not IS_WILD[c] and not IS_RED3[c]]
    side = state.side_of[seat]
    melds = state.melds[side]
    extra = state.extra[side] if state.extra else ()  # (``extra_of``, without the call)
    opened = any(melds) or bool(extra)
    frozen = state.pile_frozen or not opened
    if frozen and len(naturals) < 2 and not config.frozen_allows_layoff:
        return []
    if opened:  # the smallest supports: more cards can be laid off after the take
        # (a way of taking that the rules forbid is not offered: D8's methods, D7's lay-off
        # onto a frozen pile)
        methods = config.unfrozen_take_methods
        by_layoff = "layoff" in methods or config.frozen_allows_layoff
        supports: list[tuple[Card, ...]] = [()] if by_layoff and (melds[rank] or extra) else []
        if naturals:  # (the wild cards matter only with a natural: most turns have none)
            if len(naturals) >= 2:
                supports.append(tuple(naturals[:2]))
            if "natural_plus_wild" in methods or config.frozen_allows_layoff:
                cheapest = _cheapest_wild(hand)
                if cheapest >= 0:
                    supports.append((naturals[0], cheapest))
        return [take_of(support) for support in supports]
    wilds = sorted((c for c in hand if IS_WILD[c]), key=VALUE.__getitem__, reverse=True)
    minimum = opening_target(state, seat)
    takes: list[TakePile] = []
    for natural_part in dict.fromkeys((tuple(naturals[:2]), tuple(naturals))):
        for count in range(min(len(wilds), 3) + 1):
            support = (*natural_part, *wilds[:count])
            value = VALUE[top] + sum(VALUE[c] for c in support)
            if value >= minimum:
                takes.append(take_of(support))
                break
            rest = list(hand)
            for card in support:
                rest.remove(card)
            opening = best_opening(config, rest, exclude_rank=rank)
            if value + sum(VALUE[c] for group in opening for c in group) >= minimum:
                takes.append(take_of(support, opening))
                break
    return takes


def take_verdict(s: GameState, seat: int, take: TakePile) -> bool | None:
    """Whether ``seat``, to move at the start of its turn, may take the pile with ``take``, a
    candidate ``pile_takes`` built, decided without a plan or a trial take: ``None`` when only
    the engine's check can tell (the dead-end guard may object, §1.11.3).

    ``plan_take``'s checks, in its order, less those ``pile_takes`` meets by construction (a
    pile to take, no wild card on top nor a black three the rules refuse, support cards held
    and of the top card's rank or wild, no meld named with ``onto``, opening melds of
    naturals held twice or more from the rest of the hand); then ``engine.check``'s quick
    verdict: two cards left in hand and nothing obliging the player to go out. Only for a
    ruleset that keeps classic's ``plan_take``, ``take_candidates`` and ``frozen_reason``
    (``legal`` asks); tests/shared/rules/test_listing.py holds it to ``is_legal``.
    """
    config = s.config
    pile = s.pile
    hand = s.hands[seat]
    if config.one_card_pile_rule and len(hand) == 1 and len(pile) == 1:
        return False
    side = s.side_of[seat]
    melds = s.melds[side]
    opened = any(melds) or bool(s.extra and s.extra[side])
    if not opened and config.open_via_pile == "forbidden":
        return False
    top = pile[-1]
    rank = RANK[top]
    support = take.cards
    wilds = 0
    for card in support:
        if IS_WILD[card]:
            wilds += 1
    naturals = len(support) - wilds
    existing = melds[rank]
    if s.pile_frozen or (not opened and config.pile_freezes):
        if not frozen_take_allowed(config, naturals, opened, bool(existing), s.pile_frozen):
            return False
    else:
        method = take_method(naturals, wilds, bool(existing))
        if method is None or method not in config.unfrozen_take_methods:
            return False
    black_top = IS_BLACK3[top]
    if (rank == THREE and wilds) or (black_top and naturals < 2):
        return False
    old_wilds = wild_count(existing)
    merged = (*existing, top, *support)
    if meld_fault(config, rank, merged, new=not existing, old_wilds=old_wilds) is not None:
        return False
    if opened and take.melds:
        return None  # (never built: an opened side is offered no melds with a take)
    put = len(support)
    value = VALUE[top]
    for group in take.melds:
        if meld_fault(config, RANK[group[0]], group, new=True) is not None:
            return False
        put += len(group)
        if not opened:
            value += sum(VALUE[c] for c in group)
    if not opened:
        value += sum(VALUE[c] for c in support)
        if value < opening_target(s, seat):
            return False
    taken = sum(1 for c in pile_cards_taken(s) if not IS_RED3[c])
    if len(hand) - put + taken >= 2 and not black_top and not s.must_go_out and not s.no_discard:
        return True
    return None


def _cheapest_wild(hand: tuple[Card, ...]) -> Card:
    """The last of the hand's wild cards in order of falling value (a stable sort: the last
    held of the cheapest), or -1 when it holds none."""
    found = -1
    for card in hand:
        if IS_WILD[card] and (found < 0 or VALUE[card] <= VALUE[found]):
            found = card
    return found


def take_ruled_out(state: GameState, seat: int) -> bool:
    """True only when ``seat`` certainly cannot take the pile now (cheap necessary conditions).

    The engine ends a hand at the end of the stock without asking the player only when this
    holds, so a legal take the candidate list happens to miss can never be lost (§1.12).
    """
    if not state.pile:
        return True
    top = state.pile[-1]
    config = state.config
    if IS_WILD[top] or (IS_BLACK3[top] and not config.black3_top_takeable_to_go_out):
        return True
    hand = state.hands[seat]
    if config.one_card_pile_rule and len(hand) == 1 and len(state.pile) == 1:
        return True
    rank = RANK[top]
    naturals = sum(1 for c in hand if RANK[c] == rank and not IS_WILD[c] and not IS_RED3[c])
    wilds = sum(1 for c in hand if IS_WILD[c])
    melds = state.melds[state.side_of[seat]]
    extra = state.extra_of(state.side_of[seat])
    if not any(melds) and not extra:  # frozen for the side: a natural pair, enough points
        if naturals < 2:
            return True
        counts: dict[int, int] = {}
        for card in hand:
            if IS_NATURAL[card]:
                counts[RANK[card]] = counts.get(RANK[card], 0) + 1
        reach = VALUE[top] + sum(VALUE[c] for c in hand if IS_WILD[c])
        reach += sum(VALUE[c] for c in hand if IS_NATURAL[c] and counts[RANK[c]] >= 2)
        return reach < opening_target(state, seat)
    if state.pile_frozen:
        return naturals < 2 and not (config.frozen_allows_layoff and melds[rank])
    return naturals < 2 and not (naturals and wilds) and not melds[rank] and not extra
