"""What a seat may do now: lists of legal actions for bots, the CLI and random play.

Canasta's melds are combinatorial, so these helpers do not enumerate every legal action;
they list a bounded, useful set (each discard, each natural lay-off, a wild on each meld,
new melds per rank, a strong opening, the ways to take the pile) and keep only those the
engine accepts, so everything listed is legal by construction.
"""

from __future__ import annotations

from collections.abc import Sequence

from .actions import ASK, DISCARDS, DRAW, NO, PASS, YES, Action, LayOff, Meld, TakePile
from .cards import (
    IS_BLACK3,
    IS_RED3,
    IS_WILD,
    NATURAL_RANKS,
    RANK,
    THREE,
    VALUE,
    Card,
)
from .config import RuleConfig
from .engine import is_legal
from .state import GameState, Phase


def legal_actions(state: GameState, seat: int) -> list[Action]:
    """Legal actions for ``seat`` now (empty when it is not that seat's move)."""
    if state.actor() != seat:
        return []
    if state.phase is Phase.ANSWER:
        return [YES, NO]
    candidates: list[Action] = []
    if state.phase is Phase.DRAW:
        if state.stock:
            candidates.append(DRAW)
        else:
            candidates.append(PASS)
        candidates.extend(pile_takes(state, seat))
        candidates.append(ASK)
    else:
        candidates.append(ASK)
        candidates.extend(_meld_candidates(state, seat))
        candidates.extend(DISCARDS[c] for c in dict.fromkeys(state.hands[seat]))
        if state.no_discard:
            candidates.append(PASS)
    return [a for a in dict.fromkeys(candidates) if is_legal(state, seat, a)]


def legal_action_kinds(state: GameState, seat: int) -> list[str]:
    """The kinds of action ``seat`` may take now, e.g. ``["meld", "lay", "discard"]``.

    A kind is listed when at least one listed action of that kind is legal; players may of
    course find other legal melds than the listed ones.
    """
    kinds = {_kind(a) for a in legal_actions(state, seat)}
    order = ("draw", "pickup", "meld", "lay", "discard", "ask", "answer", "pass")
    return [k for k in order if k in kinds]


def _kind(action: Action) -> str:
    return str(action).split(" ", 1)[0]


def pile_takes(state: GameState, seat: int) -> list[TakePile]:
    """Candidate ways to take the pile: the support cards, and an opening if one is needed."""
    if not state.pile:
        return []
    top = state.pile[-1]
    if IS_WILD[top]:
        return []
    rank = RANK[top]
    hand = state.hands[seat]
    naturals = [c for c in hand if RANK[c] == rank and not IS_WILD[c] and not IS_RED3[c]]
    wilds = sorted((c for c in hand if IS_WILD[c]), key=VALUE.__getitem__)
    supports: list[tuple[Card, ...]] = [()]
    if len(naturals) >= 2:
        supports.append(tuple(naturals[:2]))
        if len(naturals) > 2:
            supports.append(tuple(naturals))
        if wilds:
            supports.append((*naturals, wilds[-1]))
    if naturals and wilds:
        supports.append((naturals[0], wilds[0]))
    side = state.side_of[seat]
    opened = state.opened(side)
    takes: list[TakePile] = []
    for support in supports:
        takes.append(TakePile(support))
        if not opened:
            rest = list(hand)
            for card in support:
                rest.remove(card)
            opening = best_opening(state.config, rest, exclude_rank=rank)
            if opening:
                takes.append(TakePile(support, opening))
    return takes


def best_opening(
    config: RuleConfig, cards: Sequence[Card], exclude_rank: int = -1
) -> tuple[tuple[Card, ...], ...]:
    """A high-value set of new melds from ``cards`` (greedy: every rank that can meld, wilds
    spread within the limit, jokers first). Used for openings and by the bots."""
    by_rank: dict[int, list[Card]] = {}
    for card in cards:
        natural = not IS_WILD[card] and not IS_BLACK3[card] and not IS_RED3[card]
        if natural and RANK[card] != exclude_rank:
            by_rank.setdefault(RANK[card], []).append(card)
    wilds = sorted((c for c in cards if IS_WILD[c]), key=VALUE.__getitem__, reverse=True)
    groups = {r: list(v) for r, v in by_rank.items() if len(v) >= 2}
    for rank in sorted(groups, key=lambda r: -sum(VALUE[c] for c in groups[r])):
        if len(groups[rank]) == 2:
            if wilds:
                groups[rank].append(wilds.pop(0))
            else:
                del groups[rank]
    for rank in sorted(groups, key=lambda r: -len(groups[r])):
        group = groups[rank]
        naturals = sum(1 for c in group if not IS_WILD[c])
        while wilds and sum(1 for c in group if IS_WILD[c]) < config.max_wilds(naturals):
            group.append(wilds.pop(0))
    return tuple(tuple(groups[r]) for r in sorted(groups))


def _meld_candidates(state: GameState, seat: int) -> list[Action]:
    hand = state.hands[seat]
    side = state.side_of[seat]
    melds = state.melds[side]
    config = state.config
    out: list[Action] = []
    by_rank: dict[int, list[Card]] = {}
    wilds: list[Card] = []
    for card in hand:
        if IS_WILD[card]:
            wilds.append(card)
        elif not IS_RED3[card]:
            by_rank.setdefault(RANK[card], []).append(card)
    distinct_wilds = list(dict.fromkeys(wilds))
    if not state.opened(side):
        opening = best_opening(config, hand)
        if opening:
            out.append(Meld(opening))
    for rank, cards in by_rank.items():
        if rank == THREE:
            if len(cards) >= 3 or (cards and melds[THREE]):
                out.append(
                    Meld((tuple(cards),)) if not melds[THREE] else LayOff(THREE, tuple(cards))
                )
            continue
        if melds[rank]:
            out.append(LayOff(rank, tuple(cards)))
        elif len(cards) >= 3:
            out.append(Meld((tuple(cards),)))
        elif len(cards) == 2 and wilds:
            out.append(Meld(((*cards, wilds[0]),)))
    for rank in NATURAL_RANKS:
        if melds[rank]:
            out.extend(LayOff(rank, (w,)) for w in distinct_wilds)
    return out
