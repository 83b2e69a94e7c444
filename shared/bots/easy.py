"""The ``easy`` bot: the heuristic bot with deliberate, seeded mistakes.

At each decision a die (seeded by the bot's seed and the position as the seat sees it, so the
same position always gets the same answer) decides whether the bot slips:

* at the start of a turn it draws from the stock where the heuristic would take the pile;
* after drawing it forgets to lay off or meld, and goes straight to its discard;
* it throws a card chosen at random instead of the heuristic's discard.

Each slip happens with probability ``SLIP``; everything else is the heuristic's play, so the
bot stays legal and sensible, only weaker (bench/README.md measures by how much).
"""

from __future__ import annotations

import random
import zlib
from dataclasses import dataclass

from shared.rules import (
    Action,
    Discard,
    GameState,
    LayOff,
    Meld,
    Phase,
    TakePile,
    is_legal,
)
from shared.rules.actions import DISCARDS, DRAW
from shared.rules.bot import choose_action

SLIP = 0.3
"""The chance of each kind of mistake at a decision where it can be made."""


@dataclass(slots=True)
class EasyBot:
    """A chooser (``(state, seat) -> Action``): the heuristic, with seeded slips."""

    seed: int = 0
    slip: float = SLIP

    def __call__(self, state: GameState, seat: int) -> Action:
        return self.choose(state, seat)

    def choose(self, state: GameState, seat: int) -> Action:
        action = choose_action(state, seat)
        hand = state.hands[seat]
        rng = random.Random(
            zlib.crc32(repr((self.seed, seat, state.hand_number, len(state.events), hand)).encode())
        )
        slips = (rng.random(), rng.random(), rng.random())
        if isinstance(action, TakePile) and slips[0] < self.slip and is_legal(state, seat, DRAW):
            return DRAW
        forgets = state.phase is Phase.PLAY and isinstance(action, (Meld, LayOff))
        if (forgets and slips[1] < self.slip) or (
            isinstance(action, Discard) and slips[2] < self.slip
        ):
            return _discard_instead(state, seat, rng) or action
        return action


def _discard_instead(state: GameState, seat: int, rng: random.Random) -> Action | None:
    cards = sorted(set(state.hands[seat]))
    rng.shuffle(cards)
    for card in cards:
        if is_legal(state, seat, DISCARDS[card]):
            return DISCARDS[card]
    return None
