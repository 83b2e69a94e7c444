"""The move lists' verdicts in place agree with the engine's check (issue 27).

``legal`` decides most candidates without ``is_legal``: the takes by ``pile.take_verdict``,
the melds and lay-offs the dead-end guard may refuse by ``goingout.put_down_verdict``. Each
such verdict must be the engine's own answer, or the listing would drop a legal move or
offer an illegal one; seeded random play of every preset asks both at every candidate.
"""

from __future__ import annotations

import pytest

from shared import rules
from shared.rules import legal
from shared.rules.actions import ASK, DRAW, PASS, Action, Discard
from shared.rules.engine import is_legal
from shared.rules.pile import pile_takes, take_verdict
from shared.rules.ruleset import rules as ruleset_of
from shared.rules.state import GameState, Phase
from tests.shared.rules.playout import random_positions

HANDS = 4


def _positions(preset: str) -> list[tuple[GameState, int]]:
    """Every decision of a few seeded random hands of ``preset``."""
    return random_positions(rules.make_config(preset), HANDS, 11)


@pytest.mark.parametrize("preset", sorted(rules.PRESETS))
def test_verdicts_in_place_are_the_engines(preset: str) -> None:
    takes = puts = 0
    for state, seat in _positions(preset):
        ruleset = ruleset_of(state)
        if state.phase is Phase.DRAW and legal._keeps_classic(ruleset, legal._TAKE_HOOKS):
            for take in pile_takes(state, seat):
                verdict = take_verdict(state, seat, take)
                if verdict is not None:
                    takes += 1
                    assert verdict == is_legal(state, seat, take), f"{preset}: {take}"
        if (
            state.phase is Phase.PLAY
            and not state.extra
            and legal._keeps_classic(ruleset, legal._PLAY_HOOKS)
        ):
            hand = state.hands[seat]
            melds = state.melds[state.side_of[seat]]
            opened = any(melds)
            simple = not state.must_go_out and not state.no_discard
            if opened:
                sure, check = legal.group_candidates(state, seat, hand, melds, simple)
            else:
                sure, check = legal.opening_candidates(state, seat, hand, simple)
            assert all(is_legal(state, seat, a) for a in sure)
            for action in check:
                puts += 1
                verdict = legal._put_down_legal(state, seat, hand, melds, opened, action)
                assert verdict == is_legal(state, seat, action), f"{preset}: {action}"
    if preset == "classic":
        assert takes  # (the random hands do reach both kinds of verdict)
        assert puts


@pytest.mark.parametrize("preset", ["classic", "three_cutthroat", "six_3x2"])
def test_listing_is_every_candidate_the_engine_accepts(preset: str) -> None:
    """Asked of the whole listing: nothing the engine would accept among the candidates is
    left out, in the order the candidates come."""
    for state, seat in _positions(preset):
        listed = rules.legal_actions(state, seat)
        if state.phase is not Phase.PLAY or state.extra:
            continue
        hand = state.hands[seat]
        melds = state.melds[state.side_of[seat]]
        simple = not state.must_go_out and not state.no_discard
        if any(melds):
            sure, check = legal.group_candidates(state, seat, hand, melds, simple)
        else:
            sure, check = legal.opening_candidates(state, seat, hand, simple)
        discards: list[Action] = [Discard(c) for c in dict.fromkeys(hand)]
        candidates: list[Action] = [ASK, *sure, *discards, *check]
        if state.no_discard:
            candidates.append(PASS)
        assert listed == [a for a in candidates if is_legal(state, seat, a)]


@pytest.mark.parametrize(
    ("preset", "options"),
    [
        ("samba", {}),
        ("bolivia", {}),
        ("samba", {"ask_timing": "before_or_after_draw"}),
        ("bolivia", {"frozen_allows_layoff": True, "black3_top_takeable_to_go_out": True}),
        ("hand_and_foot", {}),
    ],
)
def test_1_6_a_turn_start_decided_in_place_is_every_candidate_the_engine_accepts(
    preset: str, options: dict[str, object]
) -> None:
    """§1.6, §1.8, §1.11.2, §3.4: at the start of a turn, for a ruleset that keeps classic's
    candidate takes but its own rules on taking (``legal._judged_draw_listing``), the
    listing is the draw (or, at the stock's end, the pass the engine accepts), then each
    candidate take and the question to partner the engine accepts, in that order."""
    config = rules.make_config(preset, options)
    takes = 0
    for state, seat in random_positions(config, HANDS, 13, (Phase.DRAW,)):
        ruleset = ruleset_of(state)
        assert legal._keeps_classic(ruleset, ("take_candidates",))
        assert not legal._keeps_classic(ruleset, legal._TAKE_HOOKS)
        listed = rules.legal_actions(state, seat)
        candidates: list[Action] = [DRAW] if state.stock else [PASS]
        candidates.extend(pile_takes(state, seat))
        takes += len(candidates) - 1
        candidates.append(ASK)
        assert listed == [a for a in candidates if is_legal(state, seat, a)], preset
    assert takes  # (the random hands reach takes of the pile)
