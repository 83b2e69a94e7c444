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
from .engine import check_discard_allowed, is_legal
from .errors import IllegalMoveError
from .state import GameState, Phase


def legal_actions(state: GameState, seat: int) -> list[Action]:
    """Legal actions for ``seat`` now (empty when it is not that seat's move)."""
    if state.actor() != seat:
        return []
    if state.phase is Phase.ANSWER:
        return [YES, NO]
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
        if may_ask:
            candidates.append(ASK)
        sure, unsure = _meld_candidates(state, seat)
        known.extend(sure)
        candidates.extend(unsure)
        if state.no_discard:
            candidates.append(PASS)
        else:
            try:
                check_discard_allowed(state, seat)
            except IllegalMoveError:
                pass
            else:
                known.extend(DISCARDS[c] for c in dict.fromkeys(state.hands[seat]))
    return known + [a for a in dict.fromkeys(candidates) if is_legal(state, seat, a)]


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
    frozen = state.pile_frozen or not opened
    if frozen and len(naturals) < 2 and not state.config.frozen_allows_layoff:
        return []
    if not state.melds[side][rank]:
        supports.remove(())
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


def _may_open(state: GameState, seat: int, opening: tuple[tuple[Card, ...], ...]) -> bool:
    """Whether an opening is worth a trial: it meets the minimum, or could go out concealed."""
    config = state.config
    value = sum(VALUE[c] for group in opening for c in group)
    if config.red3_counts_toward_minimum:
        side = state.side_of[seat]
        value += config.red3_value * sum(len(state.red3[x]) for x in state.side_seats(side))
    if value >= config.initial_minimum(state.scores[state.column_of(seat)]):
        return True
    left = len(state.hands[seat]) - sum(len(g) for g in opening)
    return config.concealed_min_exempt and state.drew_from_stock and left <= 1


def _meld_candidates(state: GameState, seat: int) -> tuple[list[Action], list[Action]]:
    """Melds and lay-offs worth listing: ``(known_legal, to_check)``.

    A play is legal by construction when the side has opened, nothing obliges the player to
    go out, at least two cards stay in hand (so the turn can end with a discard, §1.11.3) and
    the meld stays valid (naturals never break a meld; a wild needs room under the limit).
    Everything else goes through the engine's check.
    """
    hand = state.hands[seat]
    side = state.side_of[seat]
    melds = state.melds[side]
    config = state.config
    known: list[Action] = []
    check: list[Action] = []
    by_rank: dict[int, list[Card]] = {}
    wilds: list[Card] = []
    for card in hand:
        if IS_WILD[card]:
            wilds.append(card)
        elif not IS_RED3[card]:
            by_rank.setdefault(RANK[card], []).append(card)
    opened = state.opened(side)
    simple = opened and not state.must_go_out and not state.no_discard
    room = len(hand)
    if not opened:
        opening = best_opening(config, hand)
        if opening and _may_open(state, seat, opening):
            check.append(Meld(opening))
    for rank, cards in by_rank.items():
        if rank == THREE:
            if melds[THREE]:
                check.append(LayOff(THREE, tuple(cards)))
            elif len(cards) >= 3:
                check.append(Meld((tuple(cards),)))
            continue
        if melds[rank]:
            action: Action = LayOff(rank, tuple(cards))
        elif len(cards) >= 3:
            action = Meld((tuple(cards),))
        elif len(cards) == 2 and wilds:
            action = Meld(((*cards, wilds[0]),))
        else:
            continue
        used = len(cards) + (0 if melds[rank] or len(cards) >= 3 else 1)
        (known if simple and room - used >= 2 else check).append(action)
    if wilds:
        wild = min(wilds, key=VALUE.__getitem__)
        for rank in NATURAL_RANKS:
            meld = melds[rank]
            if not meld:
                continue
            action = LayOff(rank, (wild,))
            in_meld = sum(1 for c in meld if IS_WILD[c])
            fits = in_meld < config.max_wilds(len(meld) - in_meld)
            if simple and room > 2 and fits:
                known.append(action)
            elif fits:
                check.append(action)
    return known, check
