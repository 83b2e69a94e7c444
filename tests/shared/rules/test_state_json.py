"""States serialise to JSON and back exactly, at every point of play (DESIGN.md "The engine")."""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

import pytest

from shared import rules
from shared.rules import Draw, GameState, Phase, RuleConfig, parse_cards
from tests.shared.rules import playout


def round_trip(state: GameState) -> GameState:
    """JSON text and back; the copy must equal the original, field for field and as text."""
    data = state.to_json()
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, allow_nan=False)
    again = GameState.from_json(json.loads(text))
    assert again == state
    assert json.dumps(again.to_json(), sort_keys=True, ensure_ascii=False) == text
    assert again.actor() == state.actor()
    assert again.all_cards() == state.all_cards()
    return again


def describe(state: GameState) -> set[str]:
    """The features of a state worth having seen in a round trip."""
    seen = {f"phase={state.phase.value}"}
    flags = {
        "lone_seat": state.lone_seat is not None,
        "pending_red3": any(state.pending_red3),
        "permission": state.permission is not None,
        "must_go_out": state.must_go_out,
        "no_discard": state.no_discard,
        "box": bool(state.box),
        "last_hand": state.last_hand is not None,
        "winners": bool(state.winners),
        "frozen": state.pile_frozen,
        "red3": any(state.red3),
        "negative": min(state.scores) < 0,
    }
    seen.update(name for name, on in flags.items() if on)
    return seen


MATCHES: list[Any] = [  # whole matches; the biggest decks in make test only
    ("classic", None),
    ("two_player", None),
    pytest.param("three_cutthroat", None, marks=pytest.mark.slow),
    pytest.param("six_3x2", None, marks=pytest.mark.slow),
    pytest.param("samba", None, marks=pytest.mark.slow),
    pytest.param("bolivia", None, marks=pytest.mark.slow),
    ("classic", {"red3_deal_timing": "first_turn", "ask_limit_per_hand": 1}),
    pytest.param(
        "three_simple",
        {"last_card_red3": "meld_no_discard", "tie_policy": "raise_target_500"},
        marks=pytest.mark.slow,
    ),
]


@pytest.mark.parametrize(("preset", "options"), MATCHES)
def test_round_trip_through_whole_matches(preset: str, options: dict[str, Any] | None) -> None:
    """Every position of a whole match (each action, each deal, the end) survives JSON, and
    the copy plays on exactly like the original."""
    config = playout.config_for(preset, options)
    seen: Counter[str] = Counter()
    seed = 21
    rng = random.Random(seed)
    state = rules.new_match(config, seed=seed)
    for _ in range(60):
        seen.update(describe(round_trip(state)))
        state = playout.deal_next(state, seed)
        for position in playout.play(state, rng, playout.eager):
            copy = round_trip(position)
            seen.update(describe(copy))
            state = position
        if state.phase is Phase.MATCH_OVER:
            break
    assert state.phase is Phase.MATCH_OVER
    seen.update(describe(round_trip(state)))
    for phase in ("deal", "draw", "play", "match_over"):
        assert seen[f"phase={phase}"], f"no {phase} position"
    if config.has_partners and not config.sequence_canastas_to_go_out:
        # (Bolivia: going out needs an escalera, a seven-card sequence, which the eager
        # players rarely build, so they rarely may ask)
        assert seen["phase=answer"]
    if config.cutthroat:
        assert seen["lone_seat"]


def test_copy_plays_on_like_the_original() -> None:
    config = playout.config_for("classic")
    state = playout.start_match(config, 3)
    rng = random.Random(3)
    for position in playout.play(state, rng, playout.uniform):
        copy = round_trip(position)
        seat = position.actor()
        if seat is None:
            break
        listed = rules.legal_actions(position, seat)
        assert rules.legal_actions(copy, seat) == listed
        action = listed[rng.randrange(len(listed))]
        assert (
            rules.apply(copy, seat, action).to_json()
            == rules.apply(position, seat, action).to_json()
        )


def test_round_trip_of_special_positions() -> None:
    """Positions random play rarely reaches: cards out of play, a red three drawn as the last
    stock card under ``meld_no_discard`` (no discard allowed), pending dealt red threes."""
    config = playout.config_for("classic", {"last_card_red3": "meld_no_discard"})
    state = rules.deal_position(
        rules.new_match(config, seed=0),
        hands=[
            parse_cards("4c 4d 4h 9s"),
            parse_cards("5c 5d"),
            parse_cards("6c 6d"),
            parse_cards("7c 7d"),
        ],
        stock=parse_cards("3h"),
        pile=parse_cards("8c 2s 8d"),
        melds=[[parse_cards("kc kd kh")], [parse_cards("qc qd qh")]],
        turn=0,
        fill="box",
    )
    assert state.box
    assert state.pile_frozen
    round_trip(state)
    state = rules.apply(state, 0, Draw())
    assert state.no_discard
    assert not state.stock
    round_trip(state)

    first_turn = playout.config_for("classic", {"red3_deal_timing": "first_turn"})
    state = rules.deal_position(
        rules.new_match(first_turn, seed=0),
        hands=[
            parse_cards("4c 4d"),
            parse_cards("3h 5c"),
            parse_cards("3d 6c"),
            parse_cards("7c 7d"),
        ],
        stock=parse_cards("9c 9d 9h 9s"),
        pile=parse_cards("8c"),
        turn=0,
    )
    assert any(state.pending_red3)
    round_trip(state)


@pytest.mark.parametrize("preset", playout.preset_params())
def test_config_round_trip(preset: str) -> None:
    for options in (None, *playout.OPTION_SETS):
        config = playout.config_for(preset, options)
        data = json.loads(json.dumps(config.to_dict()))
        assert RuleConfig.from_dict(data) == config
        assert RuleConfig.from_dict(data).to_dict() == config.to_dict()


def test_new_match_round_trip() -> None:
    for preset in playout.PRESET_NAMES:
        state = rules.new_match(playout.config_for(preset), seed="some seed")
        assert state.phase is Phase.DEAL
        assert round_trip(state).hand_number == 0


def test_round_trip_through_modern_american_hands() -> None:
    """docs/rules.md §3.6: Modern American's own state (the talon packets, the packet a seat is
    owed, each side's wild opening) survives JSON at every step of three hands, while a
    classic position's JSON has none of it. (Random play rarely reaches Modern American's
    8500, so these are hands, not a whole match.)"""
    config = playout.config_for("modern_american")
    rng = random.Random(4)
    state = rules.new_match(config, seed=4)
    seen: set[str] = set()
    for _ in range(3):
        state = playout.deal_next(state, 4)
        for position in playout.play(state, rng, playout.eager):
            round_trip(position)
            seen.update(
                name
                for name, on in (
                    ("owed", any(position.talon_owed)),
                    ("wild_opening", any(position.wild_opening)),
                    ("drawn", not all(position.talon)),
                )
                if on
            )
            state = position
    assert seen == {"owed", "wild_opening", "drawn"}
    classic = playout.start_match(playout.config_for("classic"), 4).to_json()
    assert not {"talon", "talon_owed", "wild_opening"} & set(classic)
