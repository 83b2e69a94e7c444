"""Samba and Bolivia's listing decided in place is the engine's (issue 27, §3.4, §3.5).

``variants.samba.listing.samba_listing`` makes each candidate after the draw once, in the
order ``legal``'s lists give, and decides it as it is made (no de-duplication pass: none
repeats another). It must list, action for action and in order, what ``legal``'s lists give
from the same hooks with the engine's check of every candidate: nothing legal left out,
nothing illegal listed, nothing twice. Seeded random play of the presets and of options
that change which candidates are legal asks both at every decision after the draw.
"""

from __future__ import annotations

import pytest

from shared import rules
from shared.rules import legal
from shared.rules.config import RuleConfig
from shared.rules.engine import is_legal
from shared.rules.ruleset import rules_of
from shared.rules.state import GameState, Phase
from shared.rules.variants.samba import Samba
from shared.rules.variants.samba.listing import samba_listing
from tests.shared.rules.playout import random_positions


def _play_positions(config: RuleConfig, hands: int, seed: int) -> list[tuple[GameState, int]]:
    """Every decision after the draw of a few seeded random hands of ``config``."""
    return random_positions(config, hands, seed, (Phase.PLAY,))


_CASES: list[tuple[str, dict[str, object]]] = [
    ("samba", {}),
    ("bolivia", {}),
    ("samba", {"wild_onto_canasta": True}),  # a wild card onto a canasta (§3.4 forbids it)
    ("samba", {"wild_limit": "max3"}),  # the wild limit on group melds (§1.9)
    ("bolivia", {"wild_limit": "not_more_than_naturals"}),
    ("samba", {"open_via_pile": "required"}),  # an opening never legal by construction
    ("samba", {"concealed_min_exempt": False}),  # (§1.10: going out concealed)
    ("samba", {"players": 2, "partnerships": [[0], [1]]}),  # no partner to ask
    ("bolivia", {"canastas_to_go_out": 1, "sequence_canastas_to_go_out": 0}),
    ("bolivia", {"allow_wild_melds": False}),
]


@pytest.mark.parametrize(
    ("preset", "options"),
    [
        pytest.param(
            preset,
            options,
            id=",".join([preset, *options]),
            marks=[pytest.mark.slow] if options else [],
        )
        for preset, options in _CASES
    ],
)
def test_3_4_the_listing_decided_in_place_is_the_engines(
    preset: str, options: dict[str, object]
) -> None:
    """§1.9, §1.10, §1.11.2, §1.11.3, §3.4, §3.5, §3.8a: after the draw Samba's listing in
    place is what ``legal``'s lists give with the engine's check of every candidate (no
    verdicts), and what ``legal_actions`` gives; it answers in most positions."""
    config = rules.make_config(preset, options)
    ruleset = rules_of(config)
    assert isinstance(ruleset, Samba)
    decided = offered = 0
    for state, seat in _play_positions(config, 8, 11 + len(options)):
        may_ask = state.config.has_partners and not state.asked and not state.turn_melded
        listing = samba_listing(ruleset, state, seat, may_ask, is_legal)
        offered += 1
        if listing is None:
            continue
        decided += 1
        known, candidates, _verdict = legal._listing(state, seat)
        expected = known + [a for a in candidates if is_legal(state, seat, a)]
        assert listing == expected, (preset, options, state.hands[seat])
        assert len(set(listing)) == len(listing)  # (nothing twice)
        assert rules.legal_actions(state, seat) == listing
    assert decided > 200, decided
    assert decided * 2 > offered, (decided, offered)


def test_3_4_the_listing_leaves_obliged_players_to_the_lists() -> None:
    """§1.11.2: a player obliged to go out (partner said yes) is left to ``legal``'s lists,
    whose verdicts weigh every step of a way out; the listing in place answers ``None``."""
    config = rules.make_config("samba")
    ruleset = rules_of(config)
    assert isinstance(ruleset, Samba)
    obliged = 0
    for state, seat in _play_positions(config, 20, 3):
        if state.must_go_out:
            obliged += 1
            assert samba_listing(ruleset, state, seat, False, is_legal) is None
    assert obliged > 0
