"""``grouped_moves``: what a seat may do now, grouped for the ``canasta moves`` command."""

from __future__ import annotations

from shared import rules
from shared.rules.cards import VALUE, parse_cards


def _dealt(seed: int = 7) -> rules.GameState:
    config = rules.make_config("classic")
    return rules.deal_hand(rules.new_match(config, seed=seed), rules.shuffled_deck(config, seed))


def test_every_listed_move_is_legal_and_an_opening_reaches_the_minimum() -> None:
    for seed in range(1, 30):
        state = _dealt(seed)
        seat = state.actor()
        assert seat is not None
        start = rules.grouped_moves(state, seat)
        assert start[0].kind == "start"
        assert "draw" in start[0].actions
        state = rules.apply(state, seat, rules.parse_action("draw"))
        groups = rules.grouped_moves(state, seat)
        for group in groups:
            assert group.kind in rules.MOVE_GROUPS
            for text in group.actions:
                rules.check(state, seat, rules.parse_action(text))  # raises if illegal
        for group in groups:
            if group.kind == "open":
                for text in group.actions:
                    cards = parse_cards(text.removeprefix("meld ").replace(",", " "))
                    assert sum(VALUE[c] for c in cards) >= state.config.initial_minimum(0)
        assert {"meld", "lay"}.isdisjoint(g.kind for g in groups)  # nobody has opened yet
        for other in range(4):
            if other != seat:
                assert rules.grouped_moves(state, other) == ()


def test_groups_are_capped_and_say_how_many_were_left_out() -> None:
    state = _dealt()
    seat = state.actor()
    assert seat is not None
    state = rules.apply(state, seat, rules.parse_action("draw"))
    full = {g.kind: g for g in rules.grouped_moves(state, seat)}
    capped = {g.kind: g for g in rules.grouped_moves(state, seat, cap=2)}
    assert len(full["discard"].actions) > 2
    assert capped["discard"].actions == full["discard"].actions[:2]
    assert capped["discard"].left_out == len(full["discard"].actions) - 2
