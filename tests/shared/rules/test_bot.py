"""The heuristic bot (shared/rules/bot.py): always legal, blind to hidden cards, sensible.

Positions come from seeded random legal play, so a failure names its preset and seed.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import pytest

from shared import rules
from shared.rules import (
    Action,
    Answer,
    Discard,
    Draw,
    Event,
    GameState,
    Meld,
    Phase,
    TakePile,
    apply,
    deal_position,
    is_legal,
    legal_actions,
    make_config,
    new_match,
)
from shared.rules.bot import choose_action
from shared.rules.cards import SORT_KEY, Card, parse_card, parse_cards

PRESETS = tuple(rules.PRESETS)
MAX_DECISIONS = 20_000
"""A hand longer than this is taken to be an endless loop."""
Policy = Callable[[GameState, int, random.Random], Action]
HAND_PHASES = (Phase.DRAW, Phase.PLAY, Phase.ANSWER)


def random_legal(state: GameState, seat: int, rng: random.Random) -> Action:
    """A uniform choice among the listed actions the engine accepts."""
    return rng.choice([a for a in legal_actions(state, seat) if is_legal(state, seat, a)])


def bot(state: GameState, seat: int, rng: random.Random) -> Action:
    return choose_action(state, seat, rng)


def deal(config: rules.RuleConfig, seed: int) -> GameState:
    return rules.deal_hand(new_match(config, seed=seed), rules.shuffled_deck(config, seed))


def positions(
    state: GameState, policies: Sequence[Policy], rng: random.Random
) -> Iterator[GameState]:
    """Every decision position of one hand, playing it out with ``policies`` per seat."""
    for _ in range(MAX_DECISIONS):
        if state.phase not in HAND_PHASES:
            return
        yield state
        seat = state.actor()
        assert seat is not None
        state = apply(state, seat, policies[seat](state, seat, rng))
    raise AssertionError(f"the hand did not end within {MAX_DECISIONS} decisions")


def play_out(state: GameState, policies: Sequence[Policy], rng: random.Random) -> GameState:
    """The state after the dealt hand ``state`` is played to its end."""
    for _ in range(MAX_DECISIONS):
        if state.phase not in HAND_PHASES:
            return state
        seat = state.actor()
        assert seat is not None
        state = apply(state, seat, policies[seat](state, seat, rng))
    raise AssertionError(f"the hand did not end within {MAX_DECISIONS} decisions")


# -- always legal ---------------------------------------------------------------------------------


@pytest.mark.parametrize("preset", PRESETS)
def test_bot_action_is_legal_in_random_positions(preset: str) -> None:
    config = make_config(preset)
    checked = 0
    for seed in range(6):
        rng = random.Random(seed)
        # Even seeds: random play everywhere; odd seeds: bots in the first side's seats, so
        # that the positions include ones that bots lead to.
        bots = set(config.partnerships[0]) if seed % 2 else set()
        policies = [bot if s in bots else random_legal for s in range(config.players)]
        for state in positions(deal(config, seed), policies, rng):
            seat = state.actor()
            assert seat is not None
            action = choose_action(state, seat, random.Random(seed))
            assert is_legal(state, seat, action), f"{preset} seed {seed}: {action}"
            checked += 1
    assert checked > 100


OPTION_SETS: tuple[Mapping[str, Any], ...] = (
    {"black3_freezes": True, "frozen_allows_layoff": True},
    {"open_via_pile": "required", "wild_limit": "not_more_than_naturals"},
    {"open_via_pile": "forbidden", "stock_out_forced_take": "any_legal"},
    {"red3_deal_timing": "first_turn", "last_card_red3": "meld_no_discard"},
    {"ask_timing": "before_or_after_draw", "black3_top_takeable_to_go_out": True},
)


@pytest.mark.parametrize("options", OPTION_SETS, ids=lambda o: ",".join(o))
def test_bots_finish_hands_under_rule_options(options: Mapping[str, Any]) -> None:
    config = make_config("classic", options)
    rng = random.Random(3)
    for seed in range(2):
        policies = [bot if s % 2 else random_legal for s in range(config.players)]
        for state in positions(deal(config, seed), policies, rng):
            seat = state.actor()
            assert seat is not None
            assert is_legal(state, seat, choose_action(state, seat, rng))


@pytest.mark.parametrize("preset", PRESETS)
def test_bots_complete_full_hands(preset: str) -> None:
    config = make_config(preset)
    for seed in range(3):
        end = play_out(deal(config, seed), [bot] * config.players, random.Random(seed))
        assert end.phase in (Phase.DEAL, Phase.MATCH_OVER)
        assert end.last_hand is not None
        assert end.last_hand.hand_number == 1


def test_choose_action_refuses_a_seat_that_is_not_to_move() -> None:
    state = deal(make_config("classic"), 0)
    seat = state.actor()
    assert seat is not None
    with pytest.raises(ValueError, match="not seat"):
        choose_action(state, (seat + 1) % 4)


# -- hidden information ---------------------------------------------------------------------------


def rehide(state: GameState, seat: int, rng: random.Random) -> GameState:
    """``state`` with everything ``seat`` cannot see changed: the other hands and the stock
    dealt afresh from their pooled cards (same sizes), with every face-down foot of Hand and
    Foot, the seat's own too (§3.7); other seats' private event cards gone."""
    others = [s for s in range(state.players) if s != seat]
    pool = [*state.stock, *(c for s in others for c in state.hands[s])]
    pool += [c for foot in state.feet for c in foot]
    rng.shuffle(pool)
    hands = list(state.hands)
    at = 0
    for s in others:
        size = len(hands[s])
        hands[s] = tuple(sorted(pool[at : at + size], key=SORT_KEY.__getitem__))
        at += size
    feet = list(state.feet)
    for s, foot in enumerate(feet):
        feet[s] = tuple(sorted(pool[at : at + len(foot)], key=SORT_KEY.__getitem__))
        at += len(foot)
    events = tuple(
        e if e.seat == seat or not e.private else Event(e.seat, e.kind, e.cards, (), e.text)
        for e in state.events
    )
    return dataclasses.replace(
        state, hands=tuple(hands), stock=tuple(pool[at:]), events=events, feet=tuple(feet)
    )


@pytest.mark.parametrize("preset", PRESETS)
def test_bot_ignores_hidden_cards_in_played_positions(preset: str) -> None:
    config = make_config(preset)
    rng = random.Random(11)
    compared = 0
    policies = [bot if s % 2 else random_legal for s in range(config.players)]
    for number, state in enumerate(positions(deal(config, 5), policies, rng)):
        if number % 3:
            continue
        seat = state.actor()
        assert seat is not None
        other = rehide(state, seat, random.Random(number))
        assert other.hands[seat] == state.hands[seat]
        mine = choose_action(state, seat, random.Random(number))
        assert choose_action(other, seat, random.Random(number)) == mine, (preset, number)
        compared += (other.hands, other.stock, other.feet) != (state.hands, state.stock, state.feet)
    assert compared > 10  # positions whose hidden cards really differed


RED_THREES = parse_cards("3d 3h")


def deal_classic(
    hands: Mapping[int, str],
    *,
    pile: str,
    melds: Sequence[Sequence[str]] = ((), ()),
    stock: str = "",
    seed: int = 0,
    size: int = 11,
    turn: int = 0,
    scores: tuple[int, int] = (0, 0),
) -> GameState:
    """A classic position with ``turn`` to draw: the given hands, pile, melds and stock top;
    the other hands (``size`` cards) and the rest of the stock come from the remaining cards
    in an order drawn from ``seed``. Red threes go to the bottom of the stock."""
    config = make_config("classic")
    given = {seat: list(parse_cards(text)) for seat, text in hands.items()}
    side_melds = [[list(parse_cards(m)) for m in side] for side in melds]
    top = list(parse_cards(stock))
    rest = list(rules.deck(config.decks, config.jokers_per_deck))
    for card in [*(c for h in given.values() for c in h), *parse_cards(pile), *top]:
        rest.remove(card)
    for card in (c for side in side_melds for m in side for c in m):
        rest.remove(card)
    rest = [c for c in rest if c not in RED_THREES]
    random.Random(seed).shuffle(rest)
    all_hands: list[list[Card]] = []
    for seat in range(config.players):
        if seat in given:
            all_hands.append(given[seat])
        else:
            all_hands.append(rest[:size])
            rest = rest[size:]
    start = dataclasses.replace(new_match(config), scores=scores)
    return deal_position(
        start, all_hands, [*top, *rest], pile=parse_cards(pile), melds=side_melds, turn=turn
    )


def play_turn(state: GameState, seat: int) -> tuple[GameState, list[Action]]:
    """Let the bot play ``seat``'s whole turn; the state after it and the actions taken."""
    actions: list[Action] = []
    while state.actor() == seat and state.turn == seat:
        action = choose_action(state, seat)
        actions.append(action)
        state = apply(state, seat, action)
    return state, actions


def test_bot_turn_is_identical_for_positions_differing_only_in_hidden_cards() -> None:
    """Seat 0's turn (take the pile, meld, discard) from two ``deal_position`` deals with the
    same hand, pile and melds but different other hands and stock order."""
    hand = {0: "9c 9d 5c 5d 5h kc kd ks 7s 8h jk"}
    pile = "4c 6d 9h qs 10c 9s"
    melds = (("ac ad ah",), ("qh qd 2c",))
    one = deal_classic(hand, pile=pile, melds=melds, seed=1)
    two = deal_classic(hand, pile=pile, melds=melds, seed=2)
    assert one.hands[0] == two.hands[0]
    assert (one.pile, one.melds) == (two.pile, two.melds)
    assert one.hands[1:] != two.hands[1:]
    assert one.stock != two.stock
    turns = []
    for state in (one, two):
        actions: list[Action] = []
        while state.turn == 0 and state.phase in HAND_PHASES:
            action = choose_action(state, 0)
            actions.append(action)
            if isinstance(action, Draw):
                break  # what comes next depends on the card drawn
            state = apply(state, 0, action)
        turns.append(actions)
    assert turns[0] == turns[1]
    assert isinstance(turns[0][0], TakePile)  # a six-card pile and a natural pair: take it
    assert isinstance(turns[0][-1], Discard)


# -- sensible play ----------------------------------------------------------------------------


def test_takes_a_valuable_pile() -> None:
    state = deal_classic(
        {0: "9c 9d 5c 6d 7h 8s 10c jd qs kh 4c"},
        pile="4d 6h 10h kc ac 8d 9h",
        melds=(("ac ad ah",), ()),
    )
    action = choose_action(state, 0)
    assert isinstance(action, TakePile)
    assert sorted(action.cards) == sorted(parse_cards("9c 9d"))


def test_draws_rather_than_spend_a_wild_on_a_one_card_pile() -> None:
    state = deal_classic(
        {0: "9c 5c 6d 7h 8s 10c jd qs kh 4c jk"}, pile="9h", melds=(("ac ad ah",), ())
    )
    assert choose_action(state, 0) == Draw()


def test_opens_with_naturals_and_keeps_the_wild() -> None:
    state = deal_classic({0: "ac ad ah kc kd ks 5c 6d 7h 8s 2c"}, pile="4h", stock="9h")
    state, actions = play_turn(state, 0)
    assert actions[0] == Draw()
    opening = actions[1]
    assert isinstance(opening, Meld)
    assert sorted(c for m in opening.melds for c in m) == sorted(parse_cards("ac ad ah kc kd ks"))
    assert parse_card("2c") in state.hands[0]


def test_does_not_feed_the_next_opponent_a_rank_it_has_melded() -> None:
    state = deal_classic(
        {0: "kh 6c 7d 7h 8s 8d 10c 10d jc jd"},
        pile="4d 6h 10h 5s",
        melds=(("ac ad ah",), ("kc kd ks",)),
        stock="qh",
    )
    state, actions = play_turn(state, 0)
    assert actions[0] == Draw()
    assert actions[-1] in (Discard(parse_card("6c")), Discard(parse_card("qh")))


def test_black_three_blocks_a_big_pile() -> None:
    state = deal_classic(
        {0: "3c 6c 7d 7h 8s 8d 10c 10d jc jd"},
        pile="4d 6h 10h 5s 9c qd kd 4h 8c 6s",
        melds=(("ac ad ah",), ("kc kh ks",)),
        stock="qh",
    )
    state, actions = play_turn(state, 0)
    assert actions[-1] == Discard(parse_card("3c"))


def test_freezes_a_very_large_pile_with_a_two() -> None:
    state = deal_classic(
        {0: "2c 6c 7d 8s 9d 10c jd qs kh 4c"},
        pile="4d 6h 10h 5s 9c qd kd 4h 8c 6s ah 7s 9s jh qc 5d",
        melds=(("ac ad ah",), ("kc kd ks",)),
        stock="5h",
    )
    state, actions = play_turn(state, 0)
    assert actions[-1] == Discard(parse_card("2c"))
    assert state.pile_frozen


CANASTA_SIDE = ("ac ad ah as ac ad ah", "7c 7s 7c")


def test_goes_out_when_ahead() -> None:
    state = deal_classic({0: "kc kd ks 7h"}, pile="4h", melds=(CANASTA_SIDE, ()), stock="7d")
    state, _ = play_turn(state, 0)
    assert state.last_hand is not None
    assert state.last_hand.went_out == 0


def test_plays_on_rather_than_go_out_when_behind() -> None:
    behind = ("qc qd qh qs qc qd qh", "jc jd jh js jc jd jh")
    state = deal_classic({0: "kc kd ks 7h"}, pile="4h", melds=(CANASTA_SIDE, behind), stock="7d")
    state, _ = play_turn(state, 0)
    assert state.phase is Phase.DRAW
    assert state.turn == 1
    assert len(state.hands[0]) >= 1


def test_answers_yes_when_ahead() -> None:
    state = deal_classic(
        {2: "kc kd ks 7h", 0: "5c 6d 8s"},
        pile="4h",
        melds=(CANASTA_SIDE, ("qc qd qh qs qc qd qh",)),
        stock="7d",
        turn=2,
    )
    state = apply(apply(state, 2, Draw()), 2, rules.AskPartner())
    assert state.phase is Phase.ANSWER
    assert state.actor() == 0
    assert choose_action(state, 0) == Answer(True)


def test_answers_no_when_far_behind() -> None:
    behind = ("qc qd qh qs qc qd qh", "jc jd jh js jc jd jh")
    state = deal_classic(
        {2: "kc kd ks 7h", 0: "5c 6d 8s 9s 10d"},
        pile="4h",
        melds=(CANASTA_SIDE, behind),
        stock="7d",
        turn=2,
    )
    state = apply(apply(state, 2, Draw()), 2, rules.AskPartner())
    assert choose_action(state, 0) == Answer(False)


# -- stronger than random -----------------------------------------------------------------------


@pytest.mark.parametrize("preset", ["classic", "two_player", "six_2x3"])
def test_bots_outscore_random_legal_play(preset: str) -> None:
    config = make_config(preset)
    rng = random.Random(7)
    difference = 0
    for seed in range(20):
        bot_side = seed % 2
        policies = [
            bot if config.initial_side(s) == bot_side else random_legal
            for s in range(config.players)
        ]
        end = play_out(deal(config, 100 + seed), policies, rng)
        assert end.last_hand is not None
        columns = end.last_hand.columns
        difference += columns[bot_side].hand_total - columns[1 - bot_side].hand_total
    assert difference > 0
