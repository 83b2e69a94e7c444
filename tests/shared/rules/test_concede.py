"""Resigning (``shared.rules.concede``): any seat, any moment before the end, ends the match
with its side losing. The rulebooks are silent on conceding; this is the server's convention."""

from __future__ import annotations

import pytest

from shared.rules import (
    GameState,
    NotationError,
    Phase,
    WrongPhaseError,
    apply,
    deal_hand,
    legal_actions,
    make_config,
    new_match,
    parse_action,
    player_view,
    shuffled_deck,
)
from shared.rules.actions import Resign


def _dealt(preset: str = "classic", seed: int = 3) -> GameState:
    config = make_config(preset)
    return deal_hand(new_match(config, seed=seed), shuffled_deck(config, seed))


def test_a_seat_resigns_out_of_turn_and_its_partnership_loses() -> None:
    state = _dealt()
    actor = state.actor()
    assert actor is not None
    resigner = (actor + 1) % 4  # not the seat to play
    ended = apply(state, resigner, parse_action("resign"))
    assert ended.phase is Phase.MATCH_OVER
    loser = state.config.initial_side(resigner)
    assert ended.winners == tuple(c for c in range(len(state.scores)) if c != loser)
    assert ended.scores == state.scores  # the hand in play is not scored
    assert ended.events[-1].kind == "resign"
    assert ended.events[-1].seat == resigner
    assert state.phase is not Phase.MATCH_OVER  # apply never changes its input
    assert player_view(ended, actor).phase == Phase.MATCH_OVER.value


def test_between_hands_and_in_cutthroat_the_others_win() -> None:
    config = make_config("three_cutthroat")
    before_deal = new_match(config, seed=1)
    ended = apply(before_deal, 2, Resign())
    assert ended.winners == (0, 1)


def test_nobody_resigns_a_finished_match_or_by_chance() -> None:
    state = _dealt()
    ended = apply(state, 0, Resign())
    with pytest.raises(WrongPhaseError, match="the match is over"):
        apply(ended, 1, Resign())
    for seat in range(4):
        assert all(not isinstance(a, Resign) for a in legal_actions(state, seat))
    with pytest.raises(NotationError, match="takes nothing"):
        parse_action("resign now")
    assert str(parse_action("RESIGN")) == "resign"
