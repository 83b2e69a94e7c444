"""What a seat may do now: lists of legal actions for bots, the CLI and random play.

Canasta's melds are combinatorial, so these helpers do not enumerate every legal action;
they list a bounded, useful set (each discard, each natural lay-off, a wild on each meld,
new melds per rank, a strong opening, the ways to take the pile) and keep only those the
engine accepts, so everything listed is legal by construction.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .actions import (
    ASK,
    DISCARDS,
    DRAW,
    NO,
    PASS,
    YES,
    Action,
    Answer,
    AskPartner,
    Discard,
    Draw,
    LayOff,
    Meld,
    Pass,
    TakePile,
)
from .cards import (
    FOUR,
    IS_BLACK3,
    IS_NATURAL,
    IS_RED3,
    IS_WILD,
    NATURAL_RANKS,
    RANK,
    THREE,
    VALUE,
    Card,
)
from .config import RuleConfig
from .engine import check_ask_allowed, check_discard_allowed, is_legal
from .errors import IllegalMoveError
from .state import GameState, Phase


def legal_actions(state: GameState, seat: int) -> list[Action]:
    """Legal actions for ``seat`` now (empty when it is not that seat's move)."""
    known, candidates = _listing(state, seat)
    return known + [a for a in candidates if is_legal(state, seat, a)]


def legal_action_kinds(state: GameState, seat: int) -> list[str]:
    """The kinds of action ``seat`` may take now, e.g. ``["meld", "lay", "discard"]``.

    A kind is listed when at least one listed action of that kind is legal; players may of
    course find other legal melds than the listed ones. Every view of the player to move
    carries this list, so a kind already known is never tried again: one legal action of a
    kind is enough.
    """
    known, candidates = _listing(state, seat)
    kinds = {_KINDS[type(a)] for a in known}
    for action in candidates:
        kind = _KINDS[type(action)]
        if kind not in kinds and is_legal(state, seat, action):
            kinds.add(kind)
    return [k for k in _KIND_ORDER if k in kinds]


# The first word of each action's text (tests/rules/test_properties.py checks the two agree).
_KINDS: dict[type[Action], str] = {
    Draw: "draw",
    TakePile: "pickup",
    Meld: "meld",
    LayOff: "lay",
    Discard: "discard",
    AskPartner: "ask",
    Answer: "answer",
    Pass: "pass",
}
_KIND_ORDER = ("draw", "pickup", "meld", "lay", "discard", "ask", "answer", "pass")


def _listing(state: GameState, seat: int) -> tuple[list[Action], list[Action]]:
    """The listed actions: those legal without a trial run, and (deduplicated) candidates
    that the engine must try."""
    if state.actor() != seat:
        return [], []
    if state.phase is Phase.ANSWER:
        return [YES, NO], []
    candidates: list[Action] = []
    known: list[Action] = []  # legal without a trial run
    may_ask = state.config.has_partners and not state.asked and not state.turn_melded
    if state.phase is Phase.DRAW:
        if state.stock:
            known.append(DRAW)
        else:
            candidates.append(PASS)
        candidates.extend(pile_takes(state, seat))
        if may_ask and state.config.ask_timing == "before_or_after_draw":
            candidates.append(ASK)
    else:
        if may_ask and _allowed(check_ask_allowed, state, seat):
            known.append(ASK)
        sure, unsure = _meld_candidates(state, seat)
        known.extend(sure)
        candidates.extend(unsure)
        if state.no_discard:
            candidates.append(PASS)
        elif _allowed(check_discard_allowed, state, seat):
            known.extend(DISCARDS[c] for c in dict.fromkeys(state.hands[seat]))
    return known, list(dict.fromkeys(candidates))


def _allowed(rule: Callable[[GameState, int], None], state: GameState, seat: int) -> bool:
    """Run one of the engine's check functions as a yes/no question."""
    try:
        rule(state, seat)
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
    top = state.pile[-1]
    config = state.config
    if IS_WILD[top] or (IS_BLACK3[top] and not config.black3_top_takeable_to_go_out):
        return []
    rank = RANK[top]
    hand = state.hands[seat]
    naturals = [c for c in hand if RANK[c] == rank and not IS_WILD[c] and not IS_RED3[c]]
    side = state.side_of[seat]
    melds = state.melds[side]
    opened = any(melds)
    frozen = state.pile_frozen or not opened
    if frozen and len(naturals) < 2 and not config.frozen_allows_layoff:
        return []
    wilds = sorted((c for c in hand if IS_WILD[c]), key=VALUE.__getitem__, reverse=True)
    if opened:  # the smallest supports: more cards can be laid off after the take
        supports: list[tuple[Card, ...]] = [()] if melds[rank] else []
        if len(naturals) >= 2:
            supports.append(tuple(naturals[:2]))
        if naturals and wilds:
            supports.append((naturals[0], wilds[-1]))
        return [TakePile(support) for support in supports]
    minimum = _opening_target(state, seat)
    takes: list[TakePile] = []
    for natural_part in dict.fromkeys((tuple(naturals[:2]), tuple(naturals))):
        for count in range(min(len(wilds), 3) + 1):
            support = (*natural_part, *wilds[:count])
            value = VALUE[top] + sum(VALUE[c] for c in support)
            if value >= minimum:
                takes.append(TakePile(support))
                break
            rest = list(hand)
            for card in support:
                rest.remove(card)
            opening = best_opening(config, rest, exclude_rank=rank)
            if value + sum(VALUE[c] for group in opening for c in group) >= minimum:
                takes.append(TakePile(support, opening))
                break
    return takes


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
    if not any(melds):  # frozen for the side: a natural pair, and enough points in reach
        if naturals < 2:
            return True
        counts: dict[int, int] = {}
        for card in hand:
            if IS_NATURAL[card]:
                counts[RANK[card]] = counts.get(RANK[card], 0) + 1
        reach = VALUE[top] + sum(VALUE[c] for c in hand if IS_WILD[c])
        reach += sum(VALUE[c] for c in hand if IS_NATURAL[c] and counts[RANK[c]] >= 2)
        return reach < _opening_target(state, seat)
    if state.pile_frozen:
        return naturals < 2 and not (config.frozen_allows_layoff and melds[rank])
    return naturals < 2 and not (naturals and wilds) and not melds[rank]


def _opening_target(state: GameState, seat: int) -> int:
    """The points an unopened side's first meld must still find in cards (§1.10; D4)."""
    config = state.config
    minimum = config.initial_minimum(state.scores[state.column_of(seat)])
    if config.red3_counts_toward_minimum:
        side = state.side_of[seat]
        minimum -= config.red3_value * sum(len(state.red3[x]) for x in state.side_seats(side))
    return minimum


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


def _meld_candidates(state: GameState, seat: int) -> tuple[list[Action], list[Action]]:
    """Melds and lay-offs worth listing: ``(legal_by_construction, to_check)``.

    For an opened side: every natural rank in hand joins its meld or starts one (with the
    cheapest wild when only two naturals are held), the cheapest wild goes on each meld,
    black threes meld together. An unopened side is offered its best opening.

    Most of these are legal by construction (and so is a ``best_opening`` that meets the
    minimum), which spares the engine's check on the hot
    path of random play and bots: when the side has opened, nothing obliges the player to go
    out and at least two cards stay in hand, the turn can still end with a discard
    (§1.11.3), naturals never make a meld invalid, and a wild is safe while the meld has
    room under ``config.max_wilds`` (§1.9). Everything else goes through ``is_legal``.
    """
    hand = state.hands[seat]
    melds = state.melds[state.side_of[seat]]
    simple = not state.must_go_out and not state.no_discard
    if not any(melds):  # the side's first meld must reach the minimum: offer the best opening
        opening = best_opening(state.config, hand)
        if not opening:
            return [], []
        value = sum(VALUE[c] for group in opening for c in group)
        left = len(hand) - sum(len(g) for g in opening)
        if value >= _opening_target(state, seat):
            sure = simple and left >= 2 and state.config.open_via_pile != "required"
            return ([Meld(opening)], []) if sure else ([], [Meld(opening)])
        concealed = state.config.concealed_min_exempt and state.drew_from_stock and left <= 1
        return [], [Meld(opening)] if concealed else []
    by_rank: list[list[Card] | None] = [None] * 14
    cheapest_wild = -1
    for card in hand:
        if IS_WILD[card]:
            if cheapest_wild < 0 or VALUE[card] < VALUE[cheapest_wild]:
                cheapest_wild = card
            continue
        group = by_rank[RANK[card]]
        if group is None:
            by_rank[RANK[card]] = [card]
        else:
            group.append(card)
    known: list[Action] = []
    check: list[Action] = []
    threes = by_rank[THREE]
    if threes is not None:
        if melds[THREE]:
            check.append(LayOff(THREE, tuple(threes)))
        elif len(threes) >= 3:
            check.append(Meld((tuple(threes),)))
    room = len(hand)
    max_wilds = state.config.max_wilds
    for rank in NATURAL_RANKS:
        cards = by_rank[rank]
        meld = melds[rank]
        if cards is None and (not meld or cheapest_wild < 0):
            continue
        if cards is not None:
            used = len(cards)
            if meld:
                action: Action = LayOff(rank, tuple(cards))
            elif used >= 3:
                action = Meld((tuple(cards),))
            elif used == 2 and cheapest_wild >= 0:
                action = Meld(((*cards, cheapest_wild),))
                used = 3
            else:
                continue
            (known if simple and room - used >= 2 else check).append(action)
        if meld and cheapest_wild >= 0:
            in_meld = sum(map(IS_WILD.__getitem__, meld))
            if in_meld < max_wilds(len(meld) - in_meld):
                action = LayOff(rank, (cheapest_wild,))
                (known if simple and room > 2 else check).append(action)
    return known, check
