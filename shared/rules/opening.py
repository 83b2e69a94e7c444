"""The initial meld: a side's first meld of the hand and its minimum (docs/rules.md §1.10).

A side that has not melded this hand must open with melds worth at least the minimum for its
cumulative score (§1.10: 15, 50, 90 or 120 points; the table is ``RuleConfig.min_meld_table``,
D19, read by ``RuleConfig.initial_minimum``). Several melds of one turn add up (rule 2); only
card values count (rule 3), unless red threes are allowed to (D4); opening by taking the pile
counts the top card and the cards melded with it, never the rest of the pile (rule 4); a
concealed going-out after a stock draw needs no minimum (rule 6, D10). Whether a side may, or
must, open by taking the pile is D21.

``pile`` and ``melding`` call these checks at the point of their own validation where the
minimum applies, and ``goingout`` asks ``minimum_to_go_out`` before it lets a player ask
partner; ``legal`` and ``bot`` use ``opening_target`` and ``best_opening`` to offer openings
that reach it.
"""

from __future__ import annotations

from collections.abc import Sequence

from .cards import ACE, FOUR, IS_WILD, JOKER_RANK, RANK, TWO, VALUE, Card, RankGroups
from .config import RuleConfig
from .errors import IllegalMoveError
from .melds import CANASTA_SIZE
from .state import GameState, out_forbidden


def require_minimum(s: GameState, seat: int, value: int, *, with_pile: bool) -> None:
    """§1.10: the first meld of a side must reach the minimum for its cumulative score.

    ``value`` is what the opening's cards are worth (rules 2 to 4); ``with_pile`` says they
    include the pile's top card, which only changes the wording of the refusal.
    """
    minimum = s.config.initial_minimum(s.scores[s.column_of(seat)], s.hand_number)
    counted = value + _red_three_credit(s, seat)
    if counted < minimum:
        what = "the top card and the cards you meld with it" if with_pile else "your melds"
        raise IllegalMoveError(
            f"your side's first meld must be worth at least {minimum} points; "
            f"{what} are worth {counted}",
            "1.10",
        )


def check_opening_meld(
    s: GameState, seat: int, hand_after: tuple[Card, ...], by_rank: dict[int, tuple[Card, ...]]
) -> None:
    """§1.10, D21: may an unopened side open with these melds from hand (``by_rank``)?

    ``hand_after`` is the hand once they are down: a concealed going-out is exempt from the
    minimum (rule 6).
    """
    if s.config.open_via_pile == "required":
        raise IllegalMoveError(
            "under these rules a side opens only by taking the discard pile", "D21"
        )
    value = sum(VALUE[c] for g in by_rank.values() for c in g)
    if not _exempt_concealed(s, hand_after, by_rank):
        require_minimum(s, seat, value, with_pile=False)


def check_opening_by_take_allowed(config: RuleConfig) -> None:
    """D21: under ``open_via_pile = "forbidden"`` an unopened side may not take the pile."""
    if config.open_via_pile == "forbidden":
        raise IllegalMoveError(
            "under these rules a side may not open by taking the pile: meld from your hand first",
            "D21",
        )


def _exempt_concealed(
    s: GameState, hand_after: tuple[Card, ...], by_rank: dict[int, tuple[Card, ...]]
) -> bool:
    """§1.10 rule 6 (D10): going out concealed after a stock draw needs no minimum."""
    config = s.config
    if not config.concealed_min_exempt or not s.drew_from_stock or out_forbidden(s):
        return False
    if len(hand_after) > 1 or (s.no_discard and hand_after):
        return False
    canastas = sum(1 for cards in by_rank.values() if len(cards) >= CANASTA_SIZE)
    return canastas >= config.canastas_to_go_out


def _red_three_credit(s: GameState, seat: int) -> int:
    """What the side's red threes add toward its minimum: nothing unless D4's option says so."""
    config = s.config
    if not config.red3_counts_toward_minimum:
        return 0
    return config.red3_value * sum(len(s.red3[x]) for x in s.side_seats(s.side_of[seat]))


def opening_target(state: GameState, seat: int) -> int:
    """The points an unopened side's first meld must still find in cards (§1.10; D4)."""
    minimum = state.config.initial_minimum(state.scores[state.column_of(seat)], state.hand_number)
    return minimum - _red_three_credit(state, seat)


def minimum_to_go_out(s: GameState, seat: int) -> int | None:
    """The minimum the cards melded to go out this turn must reach (§1.10), for the going-out
    search behind asking partner: ``None`` once the side has opened, or when a concealed
    going-out after a stock draw would be exempt (rule 6, D10)."""
    config = s.config
    if s.opened(s.side_of[seat]) or (config.concealed_min_exempt and s.drew_from_stock):
        return None
    return config.initial_minimum(s.scores[s.column_of(seat)], s.hand_number)


def best_opening(
    config: RuleConfig, cards: Sequence[Card], exclude_rank: int = -1
) -> tuple[tuple[Card, ...], ...]:
    """A high-value set of new melds from ``cards``, for openings and bots.

    Greedy: every natural rank held twice or more melds; pairs get a wild card each (the
    most valuable pairs first, jokers first), the remaining wilds fill the largest melds up
    to the wild limit. Ranks equal to ``exclude_rank`` are left out (they go with the pile).
    """
    groups: list[list[Card] | None] = [None] * 14
    wilds: list[Card] = []
    for card in cards:
        if IS_WILD[card]:
            wilds.append(card)
            continue
        rank = RANK[card]
        if rank < FOUR or rank == exclude_rank:
            continue
        group = groups[rank]
        if group is None:
            groups[rank] = [card]
        else:
            group.append(card)
    melds = [g for g in groups if g is not None and len(g) >= 2]
    if not melds:
        return ()
    wilds.sort(key=VALUE.__getitem__, reverse=True)
    return _fill_opening(config, melds, wilds)


def opening_of_groups(config: RuleConfig, groups: RankGroups) -> tuple[tuple[Card, ...], ...]:
    """``best_opening`` of a hand given as its cards per rank (``cards.hand_groups``, which
    the move lists count once per listing), without going over the hand again."""
    melds = [list(g) for g in groups[FOUR : ACE + 1] if g is not None and len(g) >= 2]
    if not melds:
        return ()
    jokers = groups[JOKER_RANK]
    twos = groups[TWO]
    # (most valuable first, each value in hand order: jokers, then twos, §1.2)
    wilds = [*(jokers or ()), *(twos or ())]
    return _fill_opening(config, melds, wilds)


def _fill_opening(
    config: RuleConfig, melds: list[list[Card]], wilds: list[Card]
) -> tuple[tuple[Card, ...], ...]:
    """``best_opening``'s greedy part: ``melds`` are the natural groups held twice or more, in
    rank order (changed in place), ``wilds`` the wild cards, most valuable first."""
    pairs = [g for g in melds if len(g) == 2]
    if pairs:
        pairs.sort(key=lambda g: VALUE[g[0]], reverse=True)
        for pair in pairs:
            if wilds:
                pair.append(wilds.pop(0))
            else:
                melds.remove(pair)
    if wilds:
        for group in sorted(melds, key=len, reverse=True):
            limit = config.max_wilds(len(group) - sum(map(IS_WILD.__getitem__, group)))
            while wilds and sum(map(IS_WILD.__getitem__, group)) < limit:
                group.append(wilds.pop(0))
    return tuple(tuple(g) for g in melds)
