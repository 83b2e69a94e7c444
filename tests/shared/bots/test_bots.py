"""The bot levels (shared.bots): worlds consistent with a seat's knowledge, no peeking, seeded
determinism, legality in every preset, and the levels' choosers."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from shared.bots import LEVELS, Budget, EasyBot, StrongBot, check_level, chooser, plan
from shared.bots.knowledge import Knowledge
from shared.bots.search import candidate_plans
from shared.rules import (
    PRESETS,
    GameState,
    Phase,
    apply,
    deal_hand,
    is_legal,
    make_config,
    new_match,
    shuffled_deck,
)
from shared.rules.bot import choose_action
from shared.rules.cards import deck, sort_cards
from shared.rules.ruleset import rules

TINY = Budget(playouts=12, seconds=None)


def _position(preset: str, seed: int, decisions: int) -> GameState:
    """A hand of ``preset`` dealt with ``seed`` and played ``decisions`` moves by the heuristic."""
    config = make_config(preset)
    state = deal_hand(new_match(config, seed=seed), shuffled_deck(config, seed))
    for _ in range(decisions):
        seat = state.actor()
        if seat is None:
            break
        state = apply(state, seat, choose_action(state, seat))
    return state


def _positions(preset: str = "classic") -> list[GameState]:
    """Positions of the seat to act, some with pile takes in the history."""
    found = []
    for seed in range(1, 40):
        for decisions in (3, 17, 40, 61):
            state = _position(preset, seed, decisions)
            if state.actor() is not None:
                found.append(state)
        if len(found) >= 12:
            break
    return found


def _reshuffled(state: GameState, seat: int, rng: random.Random) -> GameState:
    """The same position for ``seat`` with the hidden cards dealt again: other hands, stock,
    feet and talon swap cards among themselves, sizes kept, each hand keeping the pile cards
    it was seen to take (``Knowledge.known``) and no hand taking a card laid out when held."""
    known = Knowledge.of(state, seat).known
    laid_out = rules(state).laid_out_threes()
    fixed: list[Counter[int]] = [Counter(k) for k in known]
    hands: list[list[int]] = [[] for _ in state.hands]
    free_hand: list[int] = []
    for other, hand in enumerate(state.hands):
        if other == seat:
            continue
        keep = Counter(fixed[other])
        for card in hand:
            if keep[card] > 0:
                keep[card] -= 1
                hands[other].append(card)
            else:
                free_hand.append(card)
    others = list(state.stock) + [c for f in state.feet for c in f]
    others += [c for p in state.talon for c in p]
    movable = [c for c in free_hand + others if not laid_out[c]]
    stuck = [c for c in free_hand + others if laid_out[c]]
    rng.shuffle(movable)
    for other, hand in enumerate(state.hands):
        if other != seat:
            while len(hands[other]) < len(hand):
                hands[other].append(movable.pop())
    rest = movable + stuck
    rng.shuffle(rest)
    new = state._clone()
    new.hands = tuple(state.hands[s] if s == seat else sort_cards(h) for s, h in enumerate(hands))
    feet = []
    for foot in state.feet:
        feet.append(tuple(rest[: len(foot)]))
        rest = rest[len(foot) :]
    talon = []
    for packet in state.talon:
        talon.append(tuple(rest[: len(packet)]))
        rest = rest[len(packet) :]
    new.feet, new.talon, new.stock = tuple(feet), tuple(talon), tuple(rest)
    assert Counter(new.all_cards()) == Counter(state.all_cards())
    return new


def test_worlds_keep_every_card_size_and_known_card() -> None:
    rng = random.Random(5)
    for state in _positions():
        seat = state.actor()
        assert seat is not None
        knowledge = Knowledge.of(state, seat)
        full = Counter(deck(state.config.decks, state.config.jokers_per_deck))
        laid_out = rules(state).laid_out_threes()
        for _ in range(3):
            world = knowledge.world(rng)
            assert Counter(world.all_cards()) == full
            assert world.hands[seat] == state.hands[seat]
            assert [len(h) for h in world.hands] == [len(h) for h in state.hands]
            assert len(world.stock) == len(state.stock)
            assert world.pile == state.pile
            assert world.melds == state.melds
            for other, cards in enumerate(knowledge.known):
                assert not Counter(cards) - Counter(world.hands[other])
                if other != seat:
                    assert not any(laid_out[c] for c in world.hands[other])


def test_pile_cards_taken_are_known_in_the_takers_hand() -> None:
    found = 0
    for state in _positions():
        seat = state.actor()
        assert seat is not None
        known = Knowledge.of(state, seat).known
        for other, cards in enumerate(known):
            assert not Counter(cards) - Counter(state.hands[other])  # true of the real hands
            found += bool(cards) and other != seat
    assert found  # some position has a take in its history


@pytest.mark.parametrize(
    "preset",
    ["classic", "samba", "modern_american", pytest.param("hand_and_foot", marks=pytest.mark.slow)],
)
def test_strong_reads_nothing_hidden(preset: str) -> None:
    """The decision is the same when the hidden cards are reshuffled consistently."""
    rng = random.Random(11)
    for state in _positions(preset)[:6]:
        seat = state.actor()
        assert seat is not None
        expected = StrongBot(TINY, seed=3).plan(state, seat)
        for _ in range(2):
            other = _reshuffled(state, seat, rng)
            assert other.hands != state.hands or other.stock != state.stock
            assert Knowledge.of(other, seat) == Knowledge.of(state, seat)
            assert StrongBot(TINY, seed=3).plan(other, seat) == expected


def test_the_search_is_deterministic_for_a_seed() -> None:
    for state in _positions()[:6]:
        seat = state.actor()
        assert seat is not None
        first = StrongBot(TINY, seed=9)
        again = StrongBot(TINY, seed=9)
        assert first.plan(state, seat) == again.plan(state, seat)
        assert first.last.playouts == again.last.playouts <= TINY.playouts + 8


def test_plans_are_legal_and_start_with_the_heuristic() -> None:
    for state in _positions():
        seat = state.actor()
        assert seat is not None
        plans = candidate_plans(state, seat)
        assert plans[0][0] == choose_action(state, seat)
        for plan_ in plans:
            s = state
            for action in plan_:
                assert is_legal(s, seat, action), (plan_, action)
                s = apply(s, seat, action)


def test_a_plan_is_played_step_by_step_without_searching_again() -> None:
    for state in _positions():
        seat = state.actor()
        assert seat is not None
        if state.phase is not Phase.PLAY:
            continue
        bot = StrongBot(TINY, seed=1)
        whole = bot.plan(state, seat)
        if len(whole) < 2:
            continue
        s = apply(state, seat, whole[0])
        assert bot.choose(s, seat) == whole[1]
        assert not bot.last.searched
        return
    pytest.skip("no multi-step plan among the positions")


def _play_hand(preset: str, seed: int, bots: dict[int, object]) -> GameState:
    config = make_config(preset)
    state = deal_hand(new_match(config, seed=seed), shuffled_deck(config, seed))
    while state.phase not in (Phase.DEAL, Phase.MATCH_OVER):
        seat = state.actor()
        assert seat is not None
        bot = bots.get(config.initial_side(seat))
        if bot is None:
            action = choose_action(state, seat)
        else:
            assert callable(bot)
            action = bot(state, seat)
        state = apply(state, seat, action)  # raises if the bot chose an illegal action
    return state


@pytest.mark.slow
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_strong_plays_a_hand_of_every_preset(preset: str) -> None:
    state = _play_hand(preset, 4, {0: StrongBot(Budget(playouts=3, seconds=None), seed=2)})
    assert state.last_hand is not None


@pytest.mark.parametrize("preset", ["classic", "three_cutthroat"])
def test_strong_plays_a_hand(preset: str) -> None:
    state = _play_hand(preset, 6, {0: StrongBot(Budget(playouts=2, seconds=None), seed=2)})
    assert state.last_hand is not None


def test_easy_is_legal_seeded_and_makes_mistakes() -> None:
    first = _play_hand("classic", 8, {0: EasyBot(seed=1), 1: EasyBot(seed=1)})
    again = _play_hand("classic", 8, {0: EasyBot(seed=1), 1: EasyBot(seed=1)})
    assert first == again
    differs = 0
    for state in _positions():
        seat = state.actor()
        assert seat is not None
        differs += EasyBot(seed=4, slip=1.0)(state, seat) != choose_action(state, seat)
    assert differs


def test_levels() -> None:
    assert LEVELS == ("easy", "normal", "strong")
    assert check_level("") == "normal"
    with pytest.raises(ValueError, match="unknown bot level"):
        check_level("grandmaster")
    state = _positions()[0]
    seat = state.actor()
    assert seat is not None
    assert plan(chooser("normal"), state, seat) == (choose_action(state, seat),)
    assert isinstance(chooser("strong", seconds=0.01), StrongBot)
    assert isinstance(chooser("easy"), EasyBot)
