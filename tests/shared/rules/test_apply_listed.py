"""``apply_listed``, the engine's entry point for a move it listed itself (issue 27), against
the public ``apply`` (docs/rules.md §1.4: every action a player sends is checked).

``apply_listed`` executes a listed move without checking it again, so it must reach exactly
the position ``apply`` reaches, in every preset and for every kind of move: seeded random
play (uniform and eager) and bot play of each preset in ``rules.PRESETS`` are played with it,
and at sampled positions every listed action is applied both ways and the positions' JSON
compared. Moves near the listed ones, which the listing left out, are tried too: the public
``apply`` refuses each one ``check`` refuses, with the same message, and one that ``check``
accepts (as the bot's choices are) comes out the same both ways.

The rules ``apply_listed`` skips are the costly ones (the dead-end guard's search, §1.11.3;
the discard of one obliged to go out, §1.11.2; the compulsory take, §1.12; the validation of
melds, lay-offs and takes, §1.9, §1.8.2, §1.10): the tests at the end pin that ``apply``
still refuses such moves, and that the cheap guards ``apply_listed`` keeps (whose turn, the
cards held, going out only when the side may, §1.11.1) still refuse.
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter
from collections.abc import Callable

import pytest

from shared import rules
from shared.rules import Action, GameState, LayOff, Meld, TakePile
from shared.rules.actions import ASK, DISCARDS, DRAW, NO, PASS, YES
from shared.rules.bot import choose_action
from shared.rules.cards import parse_cards
from tests.shared.rules import playout
from tests.testkit import inner_loop

SAMPLE_EVERY = 4
"""Every fourth decision, every listed action is applied both ways (and the rarer positions
below, whenever they come)."""
HANDS = 1 if inner_loop() else 2
"""Hands of each kind of play per preset (one in the inner loop, where each kind of move and
a hand's end still come in each preset's)."""
MAX_DECISIONS = 5_000

Chooser = Callable[[GameState, int, random.Random, list[Action]], Action]


def _uniform(state: GameState, seat: int, rng: random.Random, listed: list[Action]) -> Action:
    return playout.uniform(rng, listed)


def _eager(state: GameState, seat: int, rng: random.Random, listed: list[Action]) -> Action:
    return playout.eager(rng, listed)


def _bot(state: GameState, seat: int, rng: random.Random, listed: list[Action]) -> Action:
    return choose_action(state, seat, rng)


CHOOSERS: dict[str, Chooser] = {"uniform": _uniform, "eager": _eager, "bot": _bot}


def _rare(state: GameState, seat: int) -> bool:
    """Positions where the skipped checks matter most: a question to answer, an obligation
    to go out, the stock gone, a hand of two cards or fewer."""
    return (
        state.phase is rules.Phase.ANSWER
        or state.must_go_out
        or not state.stock
        or len(state.hands[seat]) <= 2
    )


def _same_both_ways(state: GameState, seat: int, action: Action, seen: Counter[str]) -> None:
    """``apply_listed`` and ``apply`` of an accepted action reach the same position, and
    neither changes the one given."""
    before = state.to_json()
    public = rules.apply(state, seat, action).to_json()
    listed = rules.apply_listed(state, seat, action).to_json()
    assert listed == public, f"{state.config.preset}: {action} differs from apply"
    assert state.to_json() == before, f"{action} changed the position it was applied to"
    seen[type(action).__name__] += 1
    if public["phase"] != state.phase.value and public["phase"] in ("deal", "match_over"):
        seen["hand end"] += 1


def _near_misses(state: GameState, seat: int, listed: list[Action]) -> list[Action]:
    """Actions near the listed ones: a card more or fewer in each meld, lay-off and take,
    a discard of every card held and of one not held, and the moves of other phases."""
    hand = state.hands[seat]
    unheld = next(c for c in range(1, 53) if c not in hand)
    out: list[Action] = [DRAW, PASS, ASK, YES, NO, DISCARDS[unheld]]
    out += [DISCARDS[c] for c in dict.fromkeys(hand)]
    for action in listed:
        if isinstance(action, Meld) and action.melds:
            *first, last = action.melds
            spare = [c for c in hand if c not in last]
            if len(last) > 1:
                out.append(Meld((*first, last[:-1])))
            if spare:
                out.append(Meld((*first, (*last, spare[0]))))
        elif isinstance(action, LayOff | TakePile):
            spare = [c for c in hand if c not in action.cards]
            if action.cards:
                out.append(dataclasses.replace(action, cards=action.cards[:-1]))
            if spare:
                out.append(dataclasses.replace(action, cards=(*action.cards, spare[-1])))
    return [a for a in dict.fromkeys(out) if a not in listed]


def _play(preset: str, chooser: str, seed: int) -> Counter[str]:
    """Play ``HANDS`` hands of ``preset`` with ``apply_listed``, comparing at sampled
    positions; what was compared, by kind."""
    config = rules.make_config(preset)
    rng = random.Random(seed)
    choose = CHOOSERS[chooser]
    seen: Counter[str] = Counter()
    state = playout.start_match(config, seed)
    for number in range(HANDS):
        decisions = 0
        while state.phase in playout.HAND_PHASES:
            seat = state.actor()
            assert seat is not None
            listed = rules.legal_actions(state, seat)
            if decisions % SAMPLE_EVERY == 0 or _rare(state, seat):
                for action in listed:
                    _same_both_ways(state, seat, action, seen)
            if decisions % (4 * SAMPLE_EVERY) == 0:
                for action in _near_misses(state, seat, listed):
                    _refused_alike(state, seat, action, seen)
            action = choose(state, seat, rng, listed)
            after = rules.apply_listed(state, seat, action)
            assert after.to_json() == rules.apply(state, seat, action).to_json(), (
                f"{preset} {chooser} seed {seed}: the chosen {action} differs from apply"
            )
            state = after
            decisions += 1
            assert decisions < MAX_DECISIONS, "the hand never ends"
        if state.phase is rules.Phase.MATCH_OVER or number == HANDS - 1:
            break
        state = playout.deal_next(state, seed)
    return seen


def _refused_alike(state: GameState, seat: int, action: Action, seen: Counter[str]) -> None:
    """An action the listing left out: ``apply`` refuses it exactly when ``check`` does, with
    the same error; one ``check`` accepts reaches the same position both ways."""
    refusal: rules.CanastaError | None = None
    try:
        rules.check(state, seat, action)
    except rules.CanastaError as exc:
        refusal = exc
    if refusal is None:
        _same_both_ways(state, seat, action, seen)
        seen["accepted unlisted"] += 1
        return
    with pytest.raises(type(refusal)) as applied:
        rules.apply(state, seat, action)
    assert applied.value.message == refusal.message
    seen["refused"] += 1


@pytest.mark.parametrize("preset", playout.preset_params())
def test_apply_listed_reaches_the_position_apply_reaches(preset: str) -> None:
    """§1.4, §1.6: in seeded uniform, eager and bot play of every preset, each listed action
    sampled, and each action played, gives the same position with ``apply_listed`` as with
    ``apply``; every kind of move is among them, and so are hands ending."""
    seen: Counter[str] = Counter()
    for number, chooser in enumerate(CHOOSERS):
        seen += _play(preset, chooser, 100 + number)
    for kind in ("Draw", "Discard", "Meld", "LayOff", "TakePile", "hand end", "refused"):
        assert seen[kind] > 0, f"{preset}: no {kind} compared ({dict(seen)})"


# -- positions where the skipped checks refuse ---------------------------------------------------


def _position(
    hands: list[str],
    *,
    melds: list[str] | None = None,
    pile: str = "",
    stock: str = "10c 10d 10h 10s 9c 9d",
    preset: str = "classic",
    fill: str = "stock",
) -> GameState:
    config = rules.make_config(preset)
    return rules.deal_position(
        rules.new_match(config, seed=0),
        [parse_cards(h) for h in hands],
        parse_cards(stock),
        pile=parse_cards(pile),
        melds=[[parse_cards(m) for m in side.split("|") if m.strip()] for side in melds or []],
        turn=0,
        fill=fill,
    )


OTHERS = ["5c 5d 6c 6d 7c", "8c 8d 4c 4d 4h", "5h 5s 6h 6s 7d"]


def test_apply_still_runs_the_dead_end_guard_that_listing_ran() -> None:
    """§1.11.3: a meld that leaves one card the side may not discard (no canasta) is refused
    by ``apply``, as before; the listing does not offer it."""
    state = _position(["7h 7d 7c", *OTHERS], melds=["qc qd qh", ""], pile="4s")
    state = rules.apply(state, 0, DRAW)
    meld = rules.parse_action("meld 7h 7d 7c")
    assert meld not in rules.legal_actions(state, 0)
    with pytest.raises(rules.IllegalMoveError) as refused:
        rules.apply(state, 0, meld)
    assert refused.value.rule == "1.11.3"


def test_apply_still_checks_the_minimum_and_the_frozen_pile() -> None:
    """§1.10: an unopened side's meld below the minimum; §1.8.2: a pile frozen for an
    unopened side is taken only with a natural pair. ``apply`` refuses both, as before."""
    state = _position(["4c 4d 4h 9s 9h kc", *OTHERS], pile="9d")
    with pytest.raises(rules.IllegalMoveError) as frozen:
        rules.apply(state, 0, rules.parse_action("pickup 9s"))
    assert frozen.value.rule == "1.8.2"
    state = rules.apply(state, 0, DRAW)
    with pytest.raises(rules.IllegalMoveError) as short:
        rules.apply(state, 0, rules.parse_action("meld 4c 4d 4h"))
    assert short.value.rule == "1.10"


def test_apply_still_refuses_a_pass_when_the_take_is_compulsory() -> None:
    """§1.12 (D14): with the stock gone, a player whose side can lay the top card off must
    take the pile; ``apply`` refuses the pass, and the listing offers only the take."""
    state = _position(
        ["9s 5h 6h", *OTHERS], melds=["9c 9d 9h", ""], pile="4d 9d", stock="", fill="box"
    )
    assert state.actor() == 0
    assert not state.stock
    assert PASS not in rules.legal_actions(state, 0)
    with pytest.raises(rules.IllegalMoveError) as refused:
        rules.apply(state, 0, PASS)
    assert refused.value.rule == "1.12"


def test_apply_listed_keeps_the_cheap_guards() -> None:
    """What ``apply_listed`` still refuses of a move that was not listed, because letting it
    through would break the position: another seat's move (§1.4), a card not held, and
    emptying the hand when the side may not go out (§1.11.1: no canasta yet)."""
    state = _position(["7h 7d 7c", *OTHERS], melds=["qc qd qh", ""], pile="4s", stock="qs 9c")
    with pytest.raises(rules.NotYourTurnError):
        rules.apply_listed(state, 1, DRAW)
    state = rules.apply_listed(state, 0, DRAW)
    with pytest.raises(rules.IllegalMoveError, match="do not hold"):
        rules.apply_listed(state, 0, DISCARDS[parse_cards("ks")[0]])
    state = rules.apply_listed(state, 0, rules.parse_action("lay q qs"))
    assert sorted(state.hands[0]) == sorted(parse_cards("7h 7d 7c"))
    with pytest.raises(rules.IllegalMoveError) as refused:
        rules.apply_listed(state, 0, rules.parse_action("meld 7h 7d 7c"))
    assert refused.value.rule == "1.11.1"


def test_a_take_onto_a_named_meld_reaches_the_position_apply_reaches() -> None:
    """§3.4: the move lists never name the meld a take joins (``pickup to 9#2``), but a take
    a player names and ``check`` accepts may be applied with ``apply_listed`` (the bot's
    choices are): a pair onto a rank's second meld, and the top card alone onto a named
    sequence or group, reach the same position both ways; a named meld that is not there
    is still refused (finding it is part of building the take)."""
    config = rules.make_config("samba")

    def table(pile: str) -> GameState:
        return rules.deal_position(
            rules.new_match(config, seed=0),
            [parse_cards(h) for h in ("9d 9s 5c kd", "10c 10d", "4c 6d", "jc")],
            parse_cards("7c 8c"),
            pile=parse_cards(pile),
            melds=[
                [parse_cards(m) for m in ("9c 9d 2c", "9c 9h 9s", "4s 5s 6s")],
                [],
            ],
            turn=0,
        )

    seen: Counter[str] = Counter()
    for pile, text in (
        ("4c 9h", "pickup to 9#2 9d 9s"),
        ("4c 9h", "pickup to 9 9d 9s"),
        ("4c 7s", "pickup to 4s-6s"),
        ("4c 9h", "pickup to 9#2"),
    ):
        state = table(pile)
        action = rules.parse_action(text)
        assert isinstance(action, TakePile)
        assert action.onto is not None
        rules.check(state, 0, action)
        _same_both_ways(state, 0, action, seen)
    assert seen["TakePile"] == 4
    with pytest.raises(rules.IllegalMoveError):
        rules.apply_listed(table("4c 9h"), 0, rules.parse_action("pickup to 9#3 9d 9s"))
