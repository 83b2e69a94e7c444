"""Modern American Canasta (docs/rules.md §3.6, §3.8a; SC39): the preset's table, its state in a
fresh deal, the Canasta League options that no scenario file shows, and the views.

The rules in play are in the scenario files (tests/scenarios/sc39*, modern_american_*); the
random playouts, leak audits and bot tests run over this preset with every other one.
"""

from __future__ import annotations

import random

import pytest

from shared import rules
from shared.rules import (
    ConfigError,
    GameState,
    IllegalMoveError,
    RuleConfig,
    make_config,
    parse_cards,
)
from shared.rules.cards import ACE, FIVE, IS_THREE, KING, SEVEN, TWO
from shared.rules.config import LATER_OPTIONS
from shared.rules.dealing import deal_position, new_match
from shared.rules.variants.modern_american import canasta_kind, threes_points
from tests.shared.rules import playout


def test_preset_table_3_6() -> None:
    """§3.6: 108 cards, four players in two partnerships, 13 each, draw one, two canastas to
    go out, going out 100 and no concealed bonus, ask partner once a hand, target 8500."""
    config = make_config("modern_american")
    assert config.deck_size == 108
    assert config.partnerships == ((0, 2), (1, 3))
    assert (config.hand_size, config.draw_count, config.canastas_to_go_out) == (13, 1, 2)
    assert (config.going_out_bonus, config.concealed_bonus_total) == (100, 100)
    assert config.ask_limit_per_hand == 1
    assert config.target == 8500
    assert config.wild_meld_four_jokers_penalty == 2000  # CLA; P says 2500
    extras = ("rule_of_five", "dead_ranks", "swad_empty_pile", "no_out_with_unfinished_special")
    assert not any(getattr(config, name) for name in extras)  # §3.8a: off by default


@pytest.mark.parametrize(
    ("score", "minimum"),
    [(-2000, 125), (0, 125), (2995, 125), (3000, 155), (4995, 155), (5000, 180), (9000, 180)],
)
def test_minimum_table_3_6(score: int, minimum: int) -> None:
    """§3.6: 125 below 3000 (negative scores included), 155 to 4995, 180 from 5000."""
    assert make_config("modern_american").initial_minimum(score) == minimum


def test_fresh_deal_sets_the_talon_aside_and_lays_out_every_three_3_6() -> None:
    """§3.6: 13 cards each, seven bonus cards aside (4 + 3), no upcard, no three in any
    hand: 108 - 52 - 7 = 49 cards in the stock, less one for each three replaced."""
    state = playout.start_match(make_config("modern_american"), 3)
    assert [len(p) for p in state.talon] == [4, 3]
    assert state.pile == ()
    assert all(len(h) == 13 for h in state.hands)
    assert not any(IS_THREE[c] for h in state.hands for c in h)
    laid = sum(len(r) for r in state.red3)
    assert len(state.stock) == 49 - laid


def test_config_refuses_what_the_ruleset_cannot_play() -> None:
    """§3.6 is a four-player, two-pack partnership game: no cutthroat, no Samba melds, no
    third pack; and classic keeps playing without any of it."""
    with pytest.raises(ConfigError):
        make_config("modern_american", {"decks": 3})
    with pytest.raises(ConfigError):
        make_config("modern_american", {"allow_sequences": True})
    with pytest.raises(ConfigError):
        make_config("three_cutthroat", {"modern_american": True})
    assert not make_config("classic").modern_american


@pytest.mark.parametrize(
    ("count", "canastas", "points"),
    [(1, 0, -100), (2, 0, -300), (3, 2, 500), (4, 3, 1000), (4, 1, 0), (2, 1, 0)],
)
def test_threes_scoring_sign_rule_3_6(count: int, canastas: int, points: int) -> None:
    """§3.6: per colour 100/300/500/1000; minus with no canasta, nothing with one, plus
    with two or more."""
    assert threes_points(count, canastas) == points


@pytest.mark.parametrize(
    ("rank", "cards", "kind"),
    [
        (ACE, "ac ac ad ad ah ah as", "natural_aces"),
        (SEVEN, "7c 7c 7d 7d 7h 7h 7s", "natural_sevens"),
        (ACE, "ac ac ad ad ah 2s 2c", "mixed"),
        (KING, "kc kc kd kd kh kh ks", "natural"),
        (TWO, "2c 2c 2d 2d 2h 2h 2s", "wild_twos"),
        (TWO, "2c 2c 2d 2d 2h jk jk", "wild"),
        (TWO, "jk jk jk jk 2c 2d 2h", "wild_jokers"),
        (TWO, "jk jk jk", ""),
    ],
)
def test_canasta_kinds_3_6(rank: int, cards: str, kind: str) -> None:
    """§3.6's canasta kinds, each with its own bonus; an aces canasta with a wild card (after
    a wild opening) is an ordinary mixed one."""
    assert canasta_kind(rank, parse_cards(cards)) == kind


def _position(
    options: dict[str, bool], pile: str, melds: list[list[str]], hand: str = "5c 5d 5h 7s kc 2d 9h"
) -> GameState:
    """Seat 0 to draw (the stock's top is jd) with ``hand``; an empty ``pile`` is the pile
    of a fresh Modern American deal."""
    config = make_config("modern_american", options)
    hands = [parse_cards(hand), parse_cards("4h 4d"), parse_cards("4s 6d"), parse_cards("8c 8h")]
    table = [[parse_cards(m) for m in side] for side in melds]
    return deal_position(
        new_match(config), hands, parse_cards("jd"), pile=parse_cards(pile), melds=table, turn=0
    )


def test_dead_ranks_option_3_8a() -> None:
    """§3.8a (Canasta League, off by default): once either side completed a canasta of a
    rank, nobody starts or adds to that rank. Side B's fives are a canasta: side A may meld
    fives only without the option."""
    melds = [["9c 9d 9s"], ["5c 5d 5h 5s 5s 2c 2h"]]
    turn = rules.parse_turn("draw; meld 5c 5d 5h; discard jd")
    played = rules.apply_turn(_position({}, "4c 10d", melds), 0, turn)
    assert played.melds[0][FIVE] == parse_cards("5c 5d 5h")
    with pytest.raises(IllegalMoveError, match="dead") as refused:
        rules.apply_turn(_position({"dead_ranks": True}, "4c 10d", melds), 0, turn)
    assert refused.value.rule == "3.8a"


@pytest.mark.parametrize(
    ("options", "hand", "discard", "legal"),
    [
        ({}, "5c 5d 5h 7s kc 2d 9h", "7s", True),
        ({"swad_empty_pile": True}, "5c 5d 5h 7s kc 2d 9h", "7s", False),
        ({"swad_empty_pile": True}, "5c 5d 5h 7s kc 2d 9h", "2d", False),
        ({"swad_empty_pile": True}, "5c 5d 5h 7s kc 2d 9h", "kc", True),
        ({"swad_empty_pile": True}, "7s ac 2d", "ac", False),  # jd drawn is not one of them
        ({"swad_empty_pile": True}, "7s ac 2d as", "ac", False),
    ],
)
def test_swad_option_on_an_empty_pile_3_8a(
    options: dict[str, bool], hand: str, discard: str, legal: bool
) -> None:
    """§3.8a (Canasta League, off by default): no seven, wild card, ace or dead card onto an
    empty pile while the hand holds another card (the draw here adds the jd)."""
    state = _position(options, "", [["9c 9d 9s"], []], hand)
    state = rules.apply(state, 0, rules.parse_action("draw"))
    assert rules.is_legal(state, 0, rules.parse_action(f"discard {discard}")) is legal


def test_swad_option_allows_a_hand_of_nothing_else_3_8a() -> None:
    """§3.8a [engine policy]: a hand holding only such cards may discard one of them."""
    config = make_config("modern_american", {"swad_empty_pile": True})
    hands = [parse_cards("7s ac 2d"), parse_cards("4h 4d"), parse_cards("4s 6d")]
    hands.append(parse_cards("8c 8h"))
    state = deal_position(new_match(config), hands, parse_cards("as"), turn=0)
    state = rules.apply(state, 0, rules.parse_action("draw"))
    assert rules.is_legal(state, 0, rules.parse_action("discard ac"))


def test_view_names_the_wild_meld_and_special_canastas_3_6() -> None:
    """The table shows the wild meld as ``wild`` (the name ``lay wild`` uses), each meld's
    kind, and each special canasta by its kind; the talon by its packets' sizes only."""
    melds = [["ac ac ad ad ah ah as", "jk jk 2c"], ["7c 7c 7d 7d 7h 7h 7s"]]
    state = _position({}, "4c 10d", melds)
    view = rules.player_view(state, 1).to_json()
    mine, theirs = view["sides"][0]["melds"], view["sides"][1]["melds"]
    assert {(m["rank"], m["kind"], m["canasta"]) for m in mine} == {
        ("a", "group", "natural_aces"),
        ("wild", "wild", ""),
    }
    assert [(m["rank"], m["canasta"]) for m in theirs] == [("7", "natural_sevens")]
    assert view["talon"] == [4, 3]
    assert view["frozen_reason"] == "it is always frozen in Modern American"


MODERN_AMERICAN_OPTIONS = (
    {"rule_of_five": True, "dead_ranks": True},
    {"swad_empty_pile": True, "no_out_with_unfinished_special": True},
    {"talon_timing": "at_once", "unfinished_special_scores_cards": False},
    {"aces_wild_rule": "aces_meld", "open_via_pile": "forbidden"},
    {"wild_meld_four_jokers_penalty": 2500, "red3_deal_timing": "first_turn"},
)


@pytest.mark.slow  # a few seconds of random hands per option set: in make test
@pytest.mark.parametrize("options", MODERN_AMERICAN_OPTIONS, ids=lambda o: "+".join(o))
def test_random_play_under_the_options_3_8a(options: dict[str, object]) -> None:
    """§3.6 with §3.8a's options on: seeded random legal play keeps every invariant of the
    random-play checks (every listed action accepted, cards conserved, the scores as docs/rules.md
    computes them), and the hands end."""
    config = make_config("modern_american", options)
    log = playout.Log()
    for seed in range(12):
        state = playout.start_match(config, seed)
        policy = playout.eager if seed % 2 else playout.uniform
        playout.play_hand(state, random.Random(seed), policy, log=log)
    assert log.hands == 12


def test_config_json_keeps_older_records_byte_for_byte() -> None:
    """Options added for Modern American are written only when set: a classic configuration
    (a transcript header, a stored position) encodes as it did before they existed, and a
    Modern American one reads back equal."""
    classic = make_config("classic").to_dict()
    assert not LATER_OPTIONS & set(classic)
    assert set(make_config("classic").to_dict(every=True)) >= LATER_OPTIONS
    american = make_config("modern_american", {"rule_of_five": True})
    data = american.to_dict()
    assert data["modern_american"] is True
    assert data["rule_of_five"] is True
    assert "dead_ranks" not in data
    assert RuleConfig.from_dict(data) == american


@pytest.mark.parametrize(
    ("hand", "allowed"),
    [
        ("kc kd kh ks kc kd kh qc qd qh qs qc qd qh", True),
        ("5c 5d 5h 5s 5c 5d 5h 9c 9d 9h 9s 9c 9d 9h", False),  # 105 points: below 125
    ],
)
def test_unopened_side_may_ask_only_when_its_opening_goes_out_3_6(hand: str, allowed: bool) -> None:
    """§3.6, §1.11.2: the initial meld needs its minimum and a natural triple however the
    hand goes out, even with D10's concealed exemption switched on; the going-out search
    checks both, so an unopened side that can open and go out in one turn may ask (and a
    "yes" is obeyed), and one whose cards fall short of the minimum may not."""
    config = make_config("modern_american", {"concealed_min_exempt": True})
    hands = [parse_cards(hand), parse_cards("4h 4d")]
    hands += [parse_cards("4s 6d"), parse_cards("8c 8h")]
    state = deal_position(new_match(config), hands, parse_cards("jd"), turn=0)
    state = rules.apply(state, 0, rules.parse_action("draw"))
    assert rules.is_legal(state, 0, rules.parse_action("ask")) is allowed
    cards = hand.split()
    turn = f"meld {' '.join(cards[:7])}, {' '.join(cards[7:])}; discard jd"
    if not allowed:
        assert not rules.is_legal(state, 0, rules.parse_turn(turn)[0])
        return
    out = rules.apply_turn(state, 0, rules.parse_turn(turn))  # it may still go out unasked
    assert out.last_hand is not None
    assert out.last_hand.went_out == 0
    asked = rules.apply(state, 0, rules.parse_action("ask"))
    said_yes = rules.apply(asked, 2, rules.parse_action("answer yes"))
    out = rules.apply_turn(said_yes, 0, rules.parse_turn(turn))
    assert out.last_hand is not None
    assert out.last_hand.went_out == 0


@pytest.mark.parametrize("preset", playout.PRESET_NAMES)
def test_1_6_a_lay_off_naming_no_rank_is_refused_in_every_game(preset: str) -> None:
    """§1.6 T2: a lay-off must name the rank of a meld. A rank past the cards' ranks (or
    below them) is refused as an illegal move in every game, never a crash: Modern
    American's own plan once looked its name up past the end of the ranks (review)."""
    config = make_config(preset)
    for state, seat in playout.random_positions(config, 8, 3, (rules.Phase.PLAY,)):
        if not state.opened(state.side_of[seat]):
            continue
        card = state.hands[seat][0]
        for rank in (-1, 14, 15, 99):
            with pytest.raises(IllegalMoveError):
                rules.check(state, seat, rules.LayOff(rank, (card,)))
        return
    raise AssertionError("no opened side's turn to play")
