"""Samba and Bolivia's listing after the draw, every candidate decided in place (§3.4, §3.5).

``legal``'s lists make the candidates of a Samba turn in two lists (classic's group melds
and lay-offs, then Samba's sequences, wild melds and combinations from
``melds.sequence_candidates``), hash every one to drop repeats, and ask a verdict of each
unsure one through a closure. None of them ever repeats another (see ``samba_listing``),
so here each is made once, in the same order, and decided as it is made: the listing's
content and order stay exactly ``legal``'s (issue 27: doing less, never cutting a rule).
"""

from __future__ import annotations

from ...actions import ASK, DISCARDS, Action
from ...cards import hand_groups
from ...goingout import ask_refused_why, discard_refusal
from ...legal import group_candidates, opening_candidates
from ...ruleset import Ruleset, Trial
from ...state import GameState, Phase


def samba_listing(
    ruleset: Ruleset, state: GameState, seat: int, may_ask: bool, trial: Trial
) -> list[Action] | None:
    """``Ruleset.play_listing`` for Samba and Bolivia: the listing after the draw of a
    position with further melds (``GameState.extra``) where nothing obliges the player to go
    out and a discard may end the turn (``None`` otherwise: ``legal``'s lists decide).

    The same actions in the same order as ``legal``'s lists: asking partner (§1.11.2), the
    group moves legal by construction, the discards, then each unsure candidate the engine
    accepts (classic's group moves, then ``sequence_candidates``), decided by
    ``sequence_verdicts`` where it knows, by ``trial`` (the engine's check) where not.

    Why nothing repeats, so that no action needs hashing: classic's candidates are one
    move of black threes, and per natural rank one move of its naturals and one wild card
    onto its meld, so they differ in rank or in kind; Samba's new sequences hold several
    ranks and its lay-offs onto a sequence name a suit (``LayOff.suit``), which no group
    lay-off does; a wild meld holds no natural, which every group meld here does; a wild
    card onto a wild meld names the joker rank, which no group lay-off does; a combination
    is a kind of its own; an opening of several groups is one ``Meld`` of them all, and
    Samba's melds are one group each, never of one rank of naturals."""
    if state.phase is not Phase.PLAY or state.must_go_out or state.no_discard:
        return None
    config = state.config
    if not state.extra or config.closed_books:
        return None
    side = state.side_of[seat]
    melds = state.melds[side]
    hand = state.hands[seat]
    groups, counts = hand_groups(hand)
    listed: list[Action] = []
    if may_ask and ask_refused_why(state, seat, counts) is None:
        listed.append(ASK)
    # (classic's group moves, or the best opening, with nothing to oblige or close a book:
    # ``legal``'s own candidates, sure ones listed now, unsure ones decided below)
    if state.opened(side):
        sure, unsure = group_candidates(state, seat, hand, melds, True, groups)
    else:  # the first meld must reach the minimum: the best opening (§1.10)
        sure, unsure = opening_candidates(state, seat, hand, True, groups)
    listed.extend(sure)
    sure_further, further = ruleset.further_candidates(state, side, hand)
    listed.extend(sure_further)
    if discard_refusal(state, seat) is None:
        listed.extend([DISCARDS[card] for card in dict.fromkeys(hand)])
    if further:
        unsure.extend(further)
    if unsure:
        verdict = ruleset.candidate_verdicts(state, seat)
        for action in unsure:
            known = verdict(action) if verdict is not None else None
            if known is None:
                known = trial(state, seat, action)
            if known:
                listed.append(action)
    return listed
