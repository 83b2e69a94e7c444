"""Can this hand still go out this turn? The feasibility search behind §1.11.3.

The engine uses it for three rules: asking partner is allowed only when going out is possible
(so a "yes" never creates an impossible obligation), a player obliged to go out may not make a
play that rules it out, and a black-three meld is legal only in a going-out turn.

The search is exact and small: one optional discard is set aside, every other card must be
placed. Naturals of a rank join the side's meld of that rank or form a new meld (two or more
naturals); black threes form one meld of three or more; wild cards are spread over the melds
within the wild limit; and enough melds must reach seven cards for the canastas required.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from .cards import (
    ACE,
    FOUR,
    IS_BLACK3,
    IS_WILD,
    JOKER_RANK,
    NATURAL_RANKS,
    RANK,
    THREE,
    TWO,
    VALUE,
    Card,
)
from .config import RuleConfig
from .melds import CANASTA_SIZE
from .state import Melds


def can_go_out(
    config: RuleConfig,
    hand: Sequence[Card],
    melds: Melds,
    *,
    minimum: int | None = None,
    allow_discard: bool = True,
) -> bool:
    """Whether ``hand`` can be melded out this turn onto ``melds`` (a side's melds).

    ``minimum`` is the initial-meld minimum the melded cards must reach when the side has not
    opened and no exemption applies; ``None`` when none applies. ``allow_discard`` is false
    for a player who may not discard (a red three drawn as the last card, D13 option).
    """
    if not _might_go_out(config, hand, melds, allow_discard):
        return False
    rules = (config.wild_limit == "max3", config.canastas_to_go_out)
    return _search(rules, tuple(hand), melds, minimum, allow_discard)


@lru_cache(maxsize=4096)
def _search(
    rules: tuple[bool, int],
    hand: tuple[Card, ...],
    melds: Melds,
    minimum: int | None,
    allow_discard: bool,
) -> bool:
    """The exact search, memoised: a player obliged to go out has every candidate play
    checked against it, and nearby positions repeat from one decision to the next. ``rules``
    is (wild limit is three, canastas needed): all the search needs of the config, and cheap
    to hash."""
    if _can_place_all(rules, hand, melds, minimum):
        return True
    if not allow_discard:
        return False
    for card in _useful_discards(hand, melds):
        rest = list(hand)
        rest.remove(card)
        if _can_place_all(rules, rest, melds, minimum):
            return True
    return False


def _useful_discards(hand: Sequence[Card], melds: Melds) -> list[Card]:
    """The only final discards worth trying when melding everything fails.

    More naturals never make going out harder (they only add size and, under the
    wild-limit option, capacity) and never lower the melded value, so setting a natural
    aside helps only when it is the lone card of a rank the side has no meld of. Otherwise
    only one wild card (the cheapest, to keep the melded value high) or a black three can
    be the card that must go.
    """
    counts = [0] * 14
    for card in hand:
        counts[RANK[card]] += 1
    out: list[Card] = []
    wilds = [c for c in hand if IS_WILD[c]]
    if wilds:
        out.append(min(wilds, key=VALUE.__getitem__))
    out.extend(dict.fromkeys(c for c in hand if IS_BLACK3[c]))
    out.extend(
        c
        for c in hand
        if not IS_WILD[c] and not IS_BLACK3[c] and counts[RANK[c]] == 1 and not melds[RANK[c]]
    )
    return out


def _can_place_all(
    rules: tuple[bool, int], cards: Sequence[Card], melds: Melds, minimum: int | None
) -> bool:
    max3, need = rules
    if not cards:
        return sum(1 for m in melds if len(m) >= CANASTA_SIZE) >= need and minimum is None
    naturals = [0] * 13
    wilds = 0
    black = 0
    for card in cards:
        if IS_WILD[card]:
            wilds += 1
        elif IS_BLACK3[card]:
            black += 1
        else:
            naturals[RANK[card]] += 1
    if 0 < black < 3 and not melds[THREE]:
        return False
    if minimum is not None and sum(VALUE[c] for c in cards) < minimum:
        return False
    complete = 0
    lows = 0
    highs = 0
    extra_costs: list[int] = []  # wilds beyond the minimum that would complete a canasta
    for rank in range(FOUR, ACE + 1):
        existing = melds[rank]
        added = naturals[rank]
        if not existing and not added:
            continue
        old_wilds = sum(1 for c in existing if IS_WILD[c])
        size = len(existing) + added
        nat = size - old_wilds
        if not existing and added < 2:
            return False
        low = 1 if not existing and added == 2 else 0
        high = max((3 if max3 else nat) - old_wilds, 0)
        if low > high:
            return False
        lows += low
        highs += high
        missing = CANASTA_SIZE - size
        if missing <= 0:
            complete += 1
        elif missing <= high:
            extra_costs.append(max(missing, low) - low)
    if not lows <= wilds <= highs:
        return False
    budget = wilds - lows
    for cost in sorted(extra_costs):
        if complete >= need or cost > budget:
            break
        budget -= cost
        complete += 1
    return complete >= need


def _might_go_out(
    config: RuleConfig, hand: Sequence[Card], melds: Melds, allow_discard: bool
) -> bool:
    """Cheap necessary conditions, which most positions fail, sparing the exact search.

    Every card that cannot join any meld (the lone natural of a rank the side has no meld
    of, one or two black threes) must be the single final discard; and enough melds must be
    able to reach seven cards with the hand's wild cards, within their wild limits.
    (Red threes never stay in a hand, so every three in it is black.)
    """
    counts = [0] * 14
    for card in hand:
        counts[RANK[card]] += 1
    black = counts[THREE]
    stranded = 0 if black == 0 or black >= 3 or melds[THREE] else black
    allowed = 1 if allow_discard else 0
    for rank in NATURAL_RANKS:
        if counts[rank] == 1 and not melds[rank]:
            stranded += 1
            if stranded > allowed:
                return False
    if stranded > allowed:
        return False
    wilds = counts[TWO] + counts[JOKER_RANK]
    max3 = config.wild_limit == "max3"
    possible = 0
    for rank in NATURAL_RANKS:
        meld = melds[rank]
        added = counts[rank]
        if meld:
            size = len(meld) + added
            if size < CANASTA_SIZE:
                in_meld = sum(map(IS_WILD.__getitem__, meld))
                room = (3 if max3 else size - in_meld) - in_meld
                if size + min(wilds, room) < CANASTA_SIZE:
                    continue
        elif added < 2 or added + min(wilds, 3 if max3 else added) < CANASTA_SIZE:
            continue
        possible += 1
    return possible >= config.canastas_to_go_out
