"""Seeded random play over every preset and many house rules, checking docs/rules.md §1.15 after
every action (``playout.check_state`` / ``check_transition``), and whole matches to the end.

The default run plays about 2,000 hands (about 800 uniform, 400 eager, 800 under house rules,
plus a dozen whole matches); set ``CANASTA_LONG_PLAYOUTS=<hands per preset and policy>`` to
play many more (the ``slow`` test below). Failures name the seed and the hand's actions.
"""

from __future__ import annotations

import os
import random
from collections import Counter
from typing import Any

import pytest

from shared import rules
from shared.rules import (
    ConfigError,
    IllegalMoveError,
    Phase,
    TakePile,
    WrongPhaseError,
    parse_cards,
)
from shared.rules.actions import Meld
from shared.rules.bot import choose_action
from shared.rules.cards import IS_BLACK3, IS_NATURAL, IS_RED3, RANK, THREE
from shared.rules.dealing import deal_position
from shared.rules.state import GameState
from tests.shared.rules import playout
from tests.shared.rules.playout import Log

HANDS_PER_MATCH = 6
UNIFORM_SEEDS = 24
EAGER_SEEDS = 12
OPTION_SEEDS = 2


def _play(preset: str, seeds: range, policy: str, options: dict[str, Any] | None = None) -> Log:
    config = playout.config_for(preset, options)
    log = Log()
    for seed in seeds:
        playout.play_match(
            config, seed, playout.POLICIES[policy], max_hands=HANDS_PER_MATCH, log=log
        )
    assert log.hands >= len(seeds)
    return log


@pytest.mark.slow  # the longest engine test: out of the inner loop (make test-fast)
@pytest.mark.parametrize("preset", playout.preset_params())
def test_uniform_random_play(preset: str) -> None:
    """Each decision picks uniformly among ``legal_actions``."""
    log = _play(preset, range(UNIFORM_SEEDS), "uniform")
    assert log.reasons, "no hand ended"


@pytest.mark.parametrize("preset", playout.preset_params())
def test_eager_random_play(preset: str) -> None:
    """Random play that prefers putting cards down: canastas, going out, stock-end takes."""
    log = _play(preset, range(1000, 1000 + EAGER_SEEDS), "eager")
    assert log.reasons["went_out"] > 0
    assert log.kinds["meld"] > 0
    assert log.kinds["lay"] > 0
    assert log.kinds["pickup"] > 0


@pytest.mark.slow  # every house rule on two presets: 14 s of CPU, out of the inner loop
@pytest.mark.parametrize(
    ("preset", "options"),
    [
        (playout.PRESET_NAMES[1 + i % (len(playout.PRESET_NAMES) - 1)], options)
        for i, options in enumerate(playout.OPTION_SETS)
    ]
    + [("classic", options) for options in playout.OPTION_SETS],
    ids=lambda value: (
        "-".join(f"{k}={v}" for k, v in value.items()) if isinstance(value, dict) else value
    ),
)
def test_house_rules_random_play(preset: str, options: dict[str, Any]) -> None:
    _play(preset, range(2000, 2000 + OPTION_SEEDS), "eager", options)
    _play(preset, range(3000, 3000 + OPTION_SEEDS), "uniform", options)


HAND_AND_FOOT_OPTIONS: tuple[dict[str, Any], ...] = (
    {"decks": 4, "upcard_mode": "none"},
    {"hand_size": 13, "foot_size": 13, "pile_take_count": 5},
    {"pile_take_count": 3, "pile_freezes": True},
    {"min_meld_by_hand": [60, 90, 120, 150], "clean_sevens_bonus": 1500},
    {"min_meld_by_hand": [], "min_meld_table": [[None, 50], [2500, 90], [5000, 120], [7500, 150]]},
    {"dirty_books_to_go_out": 2, "canastas_to_go_out": 3, "red3_unplayed_value": 500},
    {"black3_went_out_value": 100, "hands_per_match": None, "target": 10000},
    {"allow_wild_melds": True, "must_ask_to_go_out": True},
)
"""The "variation seen" column of docs/rules.md §3.7 (and §3.8a's options), played on top of the
hand_and_foot preset."""


@pytest.mark.slow  # Hand and Foot's hands are long (270 cards): out of the inner loop
@pytest.mark.parametrize(
    "options",
    HAND_AND_FOOT_OPTIONS,
    ids=lambda value: "-".join(f"{k}={v}" for k, v in value.items()),
)
def test_hand_and_foot_variations_random_play(options: dict[str, Any]) -> None:
    """§3.7: every alternative the sources show plays out under the invariants."""
    _play("hand_and_foot", range(4000, 4000 + OPTION_SEEDS), "eager", options)
    _play("hand_and_foot", range(5000, 5000 + OPTION_SEEDS), "uniform", options)


@pytest.mark.slow
@pytest.mark.skipif(
    not os.environ.get("CANASTA_LONG_PLAYOUTS"),
    reason="set CANASTA_LONG_PLAYOUTS=<hands per preset> for the long random run",
)
@pytest.mark.parametrize("preset", playout.preset_params())
@pytest.mark.parametrize("policy", sorted(playout.POLICIES))
def test_long_random_play(preset: str, policy: str) -> None:
    wanted = int(os.environ.get("CANASTA_LONG_PLAYOUTS", "0"))
    log = Log()
    config = playout.config_for(preset)
    seed = 10_000
    while log.hands < wanted:
        playout.play_match(config, seed, playout.POLICIES[policy], max_hands=20, log=log)
        seed += 1


# -- whole matches -----------------------------------------------------------------------------


@pytest.mark.parametrize("preset", playout.preset_params())
@pytest.mark.parametrize("seed", [1, 2])
def test_complete_match(preset: str, seed: int) -> None:
    """Deal hand after hand until the match ends: the deal passes clockwise, scores add up,
    the winner is the highest column at or above the target, and nothing more can be played.
    (Random play drives Modern American's scores down, by its penalties, so far that it
    never reaches 8500: that match is played to 500.)"""
    config = playout.config_for(preset, {"target": 500} if preset == "modern_american" else None)
    rng = random.Random(seed)
    state = rules.new_match(config, seed=seed)
    first_dealer = state.dealer
    assert state.phase is Phase.DEAL
    assert state.hand_number == 0
    assert state.actor() is None
    playout.check_state(state)
    totals = [0] * config.sides
    for number in range(1, 81):
        state = playout.deal_next(state, seed)
        assert state.hand_number == number
        assert state.dealer == (first_dealer + number - 1) % config.players
        state = playout.play_hand(state, rng, playout.eager, label=f"{preset} seed={seed}")
        assert state.last_hand is not None
        for column in state.last_hand.columns:
            totals[column.column] += column.hand_total
        assert list(state.scores) == totals
        if state.phase is Phase.MATCH_OVER:
            break
        assert state.phase is Phase.DEAL
        assert max(state.scores) < state.target or len(state.winners) == 0
    assert state.phase is Phase.MATCH_OVER, "the match did not end within 80 hands"
    best = max(state.scores)
    assert best >= config.target
    assert state.winners == tuple(i for i, s in enumerate(state.scores) if s == best)
    assert len(state.winners) == 1  # play_another_hand: a tie at the top plays on
    assert state.actor() is None
    playout.check_state(state)
    for seat in range(config.players):
        assert rules.legal_actions(state, seat) == []
        for action in (rules.Draw(), rules.TakePile(), rules.Discard(0), rules.Pass()):
            with pytest.raises(WrongPhaseError):
                rules.apply(state, seat, action)
    with pytest.raises(WrongPhaseError):
        rules.deal_hand(state, rules.shuffled_deck(config, seed))


def test_hands_between_deals_refuse_play() -> None:
    config = playout.config_for("classic")
    state = playout.play_hand(playout.start_match(config, 5), random.Random(5), playout.eager)
    assert state.phase is Phase.DEAL
    for seat in range(config.players):
        assert rules.legal_actions(state, seat) == []
        with pytest.raises(WrongPhaseError):
            rules.apply(state, seat, rules.Draw())


# -- known engine bugs, found by the random play above --------------------------------------


def _black_three_top(support: str) -> Any:
    return _position(
        "classic",
        {"black3_top_takeable_to_go_out": True},
        hands=[
            parse_cards(f"{support} 9h"),
            parse_cards("4c 4d"),
            parse_cards("5c 5d"),
            parse_cards("6c 6d"),
        ],
        stock=parse_cards("7c 7d"),
        pile=parse_cards("3c"),
        melds=[[parse_cards("kc kd kh ks kc kd kh")], []],
        turn=0,
    )


def test_black_three_pile_take_to_go_out() -> None:
    """D6 option: a black-three top may be taken with two more black threes, to go out."""
    state = rules.apply(_black_three_top("3c 3s"), 0, TakePile(parse_cards("3c 3s")))
    assert state.must_go_out
    playout.check_state(state)
    state = rules.apply(state, 0, rules.Discard(parse_cards("9h")[0]))
    assert state.last_hand is not None
    assert state.last_hand.reason is rules.EndReason.WENT_OUT


def _position(preset: str, options: dict[str, Any] | None = None, **kwargs: Any) -> Any:
    config = playout.config_for(preset, options)
    return rules.deal_position(rules.new_match(config, seed=0), **kwargs)


def test_black_three_pile_take_refuses_wild_cards() -> None:
    state = _black_three_top("3c 3s 2s")
    with pytest.raises(IllegalMoveError):
        rules.apply(state, 0, TakePile(parse_cards("3c 3s 2s")))


def test_cutthroat_joined_melds_over_the_limit_take_no_more_wilds() -> None:
    """§3.2 "combine" [engine policy, §3.8a]: joined melds stay even over the wild limit; they
    take naturals but no further wild, and every listed action is accepted."""
    state = _position(
        "three_cutthroat",
        hands=[
            parse_cards("4c 4d 9c 2h"),
            parse_cards("6c 6d 9d"),
            parse_cards("5c 5d 9h 10h jh"),
        ],
        stock=parse_cards("7c 7d 7h"),
        pile=parse_cards("4h 5h"),
        melds=[
            [parse_cards("8c 8h 8s 2d 2s 2c")],
            [parse_cards("8d 8h 2h")],
            [parse_cards("kc kd kh")],
        ],
        turn=2,
    )
    state = rules.apply(state, 2, TakePile(parse_cards("5c 5d")))
    assert state.lone_seat == 2
    eights = state.melds[state.side_of[0]][parse_cards("8c")[0] % 13]
    assert sum(1 for c in eights if rules.cards.IS_WILD[c]) == 4
    state = rules.apply(state, 2, rules.parse_action("discard 9h"))
    state = rules.apply(state, 0, rules.parse_action("draw"))
    for action in rules.legal_actions(state, 0):
        rules.check(state, 0, action)
    with pytest.raises(rules.IllegalMoveError, match="at most three wild"):
        rules.check(state, 0, rules.LayOff(parse_cards("8c")[0] % 13, parse_cards("2h")))


@pytest.mark.parametrize("black_top", [False, True], ids=["classic", "black3_top_option"])
def test_asking_partner_never_leaves_the_player_stuck(black_top: bool) -> None:
    if black_top:
        options = {"black3_top_takeable_to_go_out": True}
        hand, pile, take = "3c 3s 9h 9d 9s 5h", "3c", TakePile(parse_cards("3c 3s"))
    else:
        options = {}
        hand, pile = "7c 7d 3c 3s 3c 9h 9d 9s 5h", "7s"
        take = TakePile(parse_cards("7c 7d"), (parse_cards("3c 3s 3c"),))
    state = _position(
        "classic",
        options,
        hands=[parse_cards(hand), parse_cards("4c 4d"), parse_cards("5c 5d"), parse_cards("6c 6d")],
        stock=parse_cards("8c 8d"),
        pile=parse_cards(pile),
        melds=[[parse_cards("kc kd kh ks kc kd kh")], []],
        turn=0,
    )
    state = rules.apply(state, 0, take)
    assert state.must_go_out
    try:
        state = rules.apply(state, 0, rules.AskPartner())
    except IllegalMoveError:
        return  # refusing the question is one way to fix it
    state = rules.apply(state, 2, rules.Answer(False))
    assert rules.legal_actions(state, 0), "no legal action after partner said no"


def _threes_position(preset: str, seed: int) -> GameState:
    """A random position of a must_ask_to_go_out hand in which seat 0 holds three black
    threes with a few other cards, and its side has what going out needs (a canasta; in
    Hand and Foot a clean and a dirty book); every other card is dealt or stocked at random."""
    config = playout.config_for(preset, {"must_ask_to_go_out": True})
    rng = random.Random(seed)
    books = "kc kd kh ks kc kd kh" + (", qc qd qh qs qc 2h jk" if config.foot_size else "")
    melds = [[parse_cards(m) for m in books.split(", ")], [parse_cards("ac ad ah")]]
    threes = parse_cards("3c 3c 3s")
    named = Counter(threes) + Counter(c for side in melds for m in side for c in m)
    rest = list((Counter(rules.deck(config.decks, config.jokers_per_deck)) - named).elements())
    rng.shuffle(rest)
    plain = [c for c in rest if not IS_RED3[c]]
    sizes = [rng.randint(1, 4)] + [rng.randint(1, 8) for _ in range(config.players - 1)]
    hands = [plain[sum(sizes[:i]) : sum(sizes[: i + 1])] for i in range(config.players)]
    stock = list((Counter(rest) - Counter(c for h in hands for c in h)).elements())
    rng.shuffle(stock)
    top = next(c for c in stock if IS_NATURAL[c] and RANK[c] != THREE)  # an ordinary upcard
    stock.remove(top)
    hands[0] = [*threes, *hands[0]]
    return deal_position(
        rules.new_match(config, seed=seed), hands, stock, pile=[top], melds=melds, turn=0
    )


@pytest.mark.parametrize(("preset", "seeds"), [("classic", 24), ("hand_and_foot", 20)])
def test_must_ask_to_go_out_never_leaves_a_turn_without_a_move(preset: str, seeds: int) -> None:
    """§3.8a ``must_ask_to_go_out`` with §1.9 and §1.11.3: from random positions where seat 0
    holds black threes and could go out, random play that melds black threes whenever a
    listed action does gives the seat to act a legal action in every position reached
    (``playout.play`` checks it after every action), and a black-three meld is listed only
    once partner has said yes (melded unasked, it obliged going out that was forbidden: a
    turn with no legal move)."""
    listed = 0
    for seed in range(7000, 7000 + seeds):
        state = _threes_position(preset, seed)
        rng = random.Random(seed)
        label = f"{preset} must_ask_to_go_out threes seed={seed}"
        for count, after in enumerate(playout.play(state, rng, playout.threes_first, label=label)):
            seat = after.actor()
            if seat is None or count > 80:
                break
            actions = rules.legal_actions(after, seat)
            if any(
                isinstance(a, Meld) and any(IS_BLACK3[c] for g in a.melds for c in g)
                for a in actions
            ):
                assert after.permission == "yes", f"{label}: black threes listed unasked"
                listed += 1
    assert listed > 0, "black threes were never listed: the test no longer reaches its case"


BOOK_REQUIREMENTS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("classic", {"clean_books_to_go_out": 2}),  # the server's fuzz test found these two
    ("classic", {"clean_books_to_go_out": 2, "concealed_requires_own_canasta": False}),
    ("classic", {"clean_books_to_go_out": 1}),
    ("classic", {"dirty_books_to_go_out": 2}),
    ("two_player", {"clean_books_to_go_out": 1}),
    ("three_cutthroat", {"clean_books_to_go_out": 1, "dirty_books_to_go_out": 1}),
    ("samba", {"clean_books_to_go_out": 1}),
    ("modern_american", {"clean_books_to_go_out": 1}),
    ("modern_american", {"closed_books": True, "clean_books_to_go_out": 1}),
    ("hand_and_foot", {"closed_books": False, "decks": 3}),
    ("classic", {"closed_books": True, "clean_books_to_go_out": 2}),
    ("two_player", {"closed_books": True, "dirty_books_to_go_out": 2}),
    ("three_simple", {"closed_books": True, "clean_books_to_go_out": 1}),
    ("hand_and_foot", {"dirty_books_to_go_out": 2, "canastas_to_go_out": 3}),
)
"""Going out on books of a kind (§3.7) under every preset's other rules, books closed at
seven (``closed_books``) or not."""


def _books_position(config: rules.RuleConfig, seed: int) -> GameState:
    """A random position in which seat 0's side has a mixed canasta (a dirty book) and a
    meld of queens two cards short of one, and seat 0 holds a wild card, a queen and a few
    other cards: a lay-off can leave it one card that would complete the queens but not
    the books going out needs. Every other card is dealt or stocked at random."""
    rng = random.Random(seed)
    melds = [[parse_cards("kc kd kh ks kc 2h jk"), parse_cards("qc qd qh qs 2d")], []]
    own = parse_cards("jk qs")
    named = Counter(own) + Counter(c for side in melds for m in side for c in m)
    rest = list((Counter(rules.deck(config.decks, config.jokers_per_deck)) - named).elements())
    rng.shuffle(rest)
    plain = [c for c in rest if not IS_RED3[c] and RANK[c] != THREE]
    sizes = [rng.randint(0, 2)] + [rng.randint(2, 8) for _ in range(config.players - 1)]
    hands = [plain[sum(sizes[:i]) : sum(sizes[: i + 1])] for i in range(config.players)]
    hands[0] = [*own, *hands[0]]
    stock = list((Counter(rest) - Counter(c for h in hands for c in h)).elements())
    rng.shuffle(stock)
    top = next(c for c in stock if IS_NATURAL[c] and RANK[c] != THREE)  # an ordinary upcard
    stock.remove(top)
    if config.modern_american:
        del stock[:7]  # left unnamed: the talon (§3.6)
    return deal_position(
        rules.new_match(config, seed=seed), hands, stock, pile=[top], melds=melds, turn=0
    )


def _bot_hand(state: GameState, seed: int, label: str) -> GameState:
    """Bots (``shared.rules.bot``, which fill a server's seats) play the hand to its end;
    the seat to act has a legal action in every position."""
    rng = random.Random(seed)
    for _ in range(playout.MAX_ACTIONS_PER_HAND):
        if state.phase not in playout.HAND_PHASES:
            return state
        seat = state.actor()
        assert seat is not None
        assert rules.legal_actions(state, seat), f"{label}: seat {seat} has no legal action"
        state = rules.apply(state, seat, choose_action(state, seat, rng))
    raise AssertionError(f"{label}: the hand never ends")


@pytest.mark.parametrize(
    ("preset", "options"),
    BOOK_REQUIREMENTS,
    ids=[f"{p}-" + "-".join(f"{k}={v}" for k, v in o.items()) for p, o in BOOK_REQUIREMENTS],
)
def test_book_requirements_are_refused_or_never_leave_a_turn_without_a_move(
    preset: str, options: dict[str, Any]
) -> None:
    """§3.7's clean and dirty books to go out, with §1.11.1-§1.11.3: a configuration that
    asks for them is refused (``ConfigError``: without ``closed_books`` the canastas stay
    open and the going-out searches count canastas, not kinds; Modern American has its own
    search, §3.6) or the seat to act has a legal action in every position reached: from
    random positions where a lay-off could strand seat 0 on a last card that makes a canasta
    but not the books (eager random play, ``playout.play`` checking every step), and in
    whole hands the bots play (how the server fills seats). Before the refusal, classic with
    ``clean_books_to_go_out`` let seat 0 lay off down to a joker it could neither meld
    (going out without a clean book) nor discard (the same)."""
    try:
        config = playout.config_for(preset, options)
    except ConfigError as exc:
        refusal = str(exc)
    else:
        refusal = ""
    if refusal:  # (only after the config is refused: before, the play below met the dead end)
        assert "books_to_go_out" in refusal
        closed = options.get("closed_books", preset == "hand_and_foot")
        assert not closed or preset == "modern_american"
        return
    for seed in range(8000, 8012):
        label = f"{preset} {options} books seed={seed}"
        state = _books_position(config, seed)
        rng = random.Random(seed)
        for count, _after in enumerate(playout.play(state, rng, playout.eager, label=label)):
            if count > 120:
                break
        _bot_hand(_books_position(config, seed), seed, label)
    for seed in range(4):
        state = playout.start_match(config, seed)
        _bot_hand(state, seed, f"{preset} {options} bots seed={seed}")
