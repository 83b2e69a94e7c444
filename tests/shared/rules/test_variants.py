"""Samba and Bolivia (docs/rules.md §3.4, §3.5, §3.8a, Appendix A.3): the presets' tables, the
notation for naming one meld among several, the views and JSON of their further melds.

The rules in play are in the scenario files (tests/scenarios/sc36..sc38, samba_*); the
random playouts, leak audits and bot tests run over these presets with every other one.
"""

from __future__ import annotations

import json
import random

import pytest

from shared import rules
from shared.rules import GameState, NotationError, Phase, make_config, parse_action, parse_cards
from shared.rules.actions import Combine, LayOff, MeldRef, TakePile
from shared.rules.cards import HEARTS, IS_RED3, JOKER_RANK, NINE, VALUE
from shared.rules.dealing import deal_position, new_match


def test_samba_deck_and_deal_sc02() -> None:
    """§3.4, SC02: 162 cards (three packs, six jokers), 15 each, 162 - 60 = 102 in the stock
    after the deal and 101 after a natural upcard; draw two."""
    config = make_config("samba")
    cards = rules.deck(config.decks, config.jokers_per_deck)
    assert len(cards) == config.deck_size == 162
    assert sum(1 for c in cards if c == 52) == 6
    assert sum(VALUE[c] for c in cards if not IS_RED3[c]) == 1770  # 1.5 x 1180
    hands = [
        parse_cards("4c 4d 4h 4s 5c 5d 5h 5s 6c 6d 6h 6s 7c 7d 7h"),
        parse_cards("8c 8d 8h 8s 9c 9d 9h 9s 10c 10d 10h 10s jc jd jh"),
        parse_cards("qc qd qh qs kc kd kh ks ac ad ah as 4c 4d 4h"),
        parse_cards("5c 5d 5h 5s 6c 6d 6h 6s 7c 7d 7h 8c 8d 8h 8s"),
    ]
    stock = parse_cards("9c")
    state = deal_position(new_match(config), hands, stock)
    assert len(state.pile) == 1
    assert len(state.stock) == 101
    assert config.draw_count == 2
    assert config.hand_size == 15
    after = rules.apply(state, state.turn, rules.parse_action("draw"))
    assert len(after.stock) == 99


@pytest.mark.parametrize(
    ("preset", "options", "score", "minimum"),
    [
        ("samba", None, -5, 15),
        ("samba", None, 6995, 120),
        ("samba", None, 7000, 160),
        ("samba", {"samba_min_7000": 150}, 7000, 150),
        ("bolivia", None, 7000, 150),
        ("bolivia", None, 2995, 90),
        ("classic", None, 7000, 120),
    ],
)
def test_minimum_tables_of_samba_and_bolivia(
    preset: str, options: dict[str, int] | None, score: int, minimum: int
) -> None:
    """§3.4 (160 from 7000, Bicycle and HowStuffWorks), §3.5 (150), Appendix A.3: the
    disagreement is the named option ``samba_min_7000``."""
    assert make_config(preset, options).initial_minimum(score) == minimum


def test_red_threes_and_bonuses_of_the_presets() -> None:
    """§3.4, §3.5: all six red threes 1000; going out 200 with no concealed extra; samba or
    escalera 1500, bolivia 2500; targets 10000 and 15000."""
    samba, bolivia = make_config("samba"), make_config("bolivia")
    assert samba.red3_total(6) == bolivia.red3_total(6) == 1000
    assert samba.red3_total(5) == 500
    assert samba.going_out_bonus == samba.concealed_bonus_total == 200
    assert samba.sequence_canasta_bonus == 1500
    assert bolivia.wild_canasta_bonus == 2500
    assert (samba.target, bolivia.target) == (10000, 15000)
    assert bolivia.sequence_canastas_to_go_out == 1
    assert samba.sequence_canastas_to_go_out == 0
    assert bolivia.black3_went_out_value == 100


@pytest.mark.parametrize(
    ("text", "action", "canonical"),
    [
        ("lay 9#2 9d", LayOff(NINE, parse_cards("9d"), 2), "lay 9#2 9d"),
        ("lay 4h-6h 7h", LayOff(2, parse_cards("7h"), 1, HEARTS, 4), "lay 4h-6h 7h"),
        ("lay 4h-5h-6h 7h", LayOff(2, parse_cards("7h"), 1, HEARTS, 4), "lay 4h-6h 7h"),
        ("lay wild 2c", LayOff(JOKER_RANK, parse_cards("2c")), "lay wild 2c"),
        ("combine 9", Combine(MeldRef(NINE), MeldRef(NINE, 2)), "combine 9 9#2"),
        ("join 9#2 9#3", Combine(MeldRef(NINE, 2), MeldRef(NINE, 3)), "combine 9#2 9#3"),
        ("pickup to 9#2", TakePile((), (), MeldRef(NINE, 2)), "pickup to 9#2"),
        (
            "pickup to 9#2 9c 9d",
            TakePile(parse_cards("9c 9d"), (), MeldRef(NINE, 2)),
            "pickup to 9#2 9c 9d",
        ),
        ("lay 9 9d", LayOff(NINE, parse_cards("9d")), "lay 9 9d"),
    ],
)
def test_notation_names_one_meld_among_several(
    text: str, action: rules.Action, canonical: str
) -> None:
    """§3.4: ``9#2``, ``4h-6h``, ``wild``; ``combine``; ``pickup to``. Canonical text reads
    back to the same action."""
    assert parse_action(text) == action
    assert str(action) == canonical
    assert parse_action(canonical) == action


@pytest.mark.parametrize(
    "text", ["lay 4h-6d 7h", "lay 9#0 9d", "lay 9#x 9d", "combine 9 9 9", "pickup to", "lay 2c-"]
)
def test_bad_meld_names_are_notation_errors(text: str) -> None:
    with pytest.raises(NotationError):
        parse_action(text)


def _samba_table() -> GameState:
    config = make_config("samba")
    return deal_position(
        new_match(config),
        [parse_cards(h) for h in ("9d 9s 5c", "10c 10d", "4c 6d", "jc")],
        parse_cards("7c 8c"),
        pile=parse_cards("4c 8d"),
        melds=[
            [
                parse_cards("8h 9h 10h jh qh kh ah"),
                parse_cards("9c 9d 2c"),
                parse_cards("9c 9h 9s"),
                parse_cards("4s 5s 6s"),
            ],
            [],
        ],
        turn=0,
    )


def test_views_name_and_label_every_further_meld() -> None:
    """§3.4: the table shows a sequence in rank order with its range, the second meld of a
    rank as ``9#2``, and a seven-card sequence labelled as a samba."""
    view = rules.player_view(_samba_table(), 1)
    melds = {m.rank: (rules.cards_text(m.cards), m.canasta) for m in view.sides[0].melds}
    assert melds == {
        "9": ("9c 9d 2c", ""),
        "8h-ah": ("8h 9h 10h jh qh kh ah", "samba"),
        "9#2": ("9c 9h 9s", ""),
        "4s-6s": ("4s 5s 6s", ""),
    }
    assert view.sides[0].canastas == 1


def test_further_melds_survive_json_and_classic_json_has_none() -> None:
    """State JSON round-trips exactly with further melds; a classic position's JSON has no
    ``extra`` key (stored matches stay as they were)."""
    state = _samba_table()
    data = json.loads(json.dumps(state.to_json()))
    assert "extra" in data
    assert GameState.from_json(data) == state
    classic = rules.deal_hand(
        new_match(make_config("classic"), seed=1), rules.shuffled_deck(make_config("classic"), 1)
    )
    assert "extra" not in classic.to_json()
    assert GameState.from_json(classic.to_json()) == classic


def test_a_classic_side_cannot_name_a_second_meld() -> None:
    """§1.9: one meld per rank in classic, so ``9#2`` and a sequence name are refused."""
    config = make_config("classic")
    state = deal_position(
        new_match(config),
        [parse_cards(h) for h in ("9d 9s 5c 6c", "10c 10d", "4c 6d", "jc")],
        parse_cards("7c 8c"),
        pile=parse_cards("4c 8d"),
        melds=[[parse_cards("9c 9h 9s")], []],
        turn=0,
    )
    state = rules.apply(state, 0, parse_action("draw"))
    for text in ("lay 9#2 9d", "combine 9", "meld 4h 5h 6h"):
        with pytest.raises(rules.IllegalMoveError):
            rules.apply(state, 0, parse_action(text))
    assert not rules.is_legal(state, 0, parse_action("lay 4s-6s 7s"))


def test_3_2_a_cutthroat_form_of_a_game_plays_its_rules_and_cutthroat_sides() -> None:
    """§3.2: cutthroat played with Samba's going-out search (a wild limit by naturals) forms
    its sides as cutthroat does, while every config of that form, however often a server
    reads one from its store, plays the one registered Samba ruleset: what the move lists
    keep per ruleset (``legal._FAST``) does not grow with the configs read."""
    from shared.rules import legal
    from shared.rules.ruleset import rules_of

    first = make_config("three_cutthroat", {"wild_limit": "fewer_than_naturals_max3"})
    assert rules_of(first) is rules_of(make_config("samba"))
    state = rules.deal_hand(rules.new_match(first, seed=3), rules.shuffled_deck(first, 3))
    rules.legal_actions(state, state.turn)
    known = len(legal._FAST)
    for _ in range(20):
        loaded = GameState.from_json(json.loads(json.dumps(state.to_json())))
        assert loaded.config is not first
        assert rules_of(loaded.config) is rules_of(first)
        rules.legal_actions(loaded, loaded.turn)
    assert len(legal._FAST) == known
    # (the first seat to take the pile plays alone; the other two become partners)
    rng = random.Random(5)
    while state.lone_seat is None and state.phase is not Phase.DEAL:
        seat = state.actor()
        assert seat is not None
        listed = rules.legal_actions(state, seat)
        takes = [a for a in listed if isinstance(a, TakePile)]
        state = rules.apply(state, seat, takes[0] if takes else rng.choice(listed))
    assert state.lone_seat is not None
    others = [x for x in range(3) if x != state.lone_seat]
    assert state.side_of[others[0]] == state.side_of[others[1]] != state.side_of[state.lone_seat]
