"""What one seat knows, and worlds consistent with it (determinization for the search).

A seat sees its own hand, the table (melds, red threes, the discard pile, which every player
saw go down face up), the sizes of the hidden zones (other hands, the stock, the feet of Hand
and Foot, the talon packets of Modern American) and the hand's events as ``redact_event``
shows them to it. From the events it also knows some cards in other hands: the pile cards a
seat took, until that seat melds, lays off or discards them.

``Knowledge.of(state, seat)`` reads exactly that from a position and nothing else: the hidden
zones' contents are never looked at, only their lengths, so two positions that differ only in
hidden cards give the same ``Knowledge`` (tests/shared/bots check it). ``Knowledge.world(rng)``
deals the unseen cards into the hidden zones at random, respecting the sizes, the cards known
to be in a hand and the cards no hand can hold (threes that are laid out when held), and
returns a full position the engine can play on.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass

from shared.rules import Event, GameState, Phase, redact_event
from shared.rules.cards import Card, deck, sort_cards
from shared.rules.ruleset import rules


@dataclass(frozen=True, slots=True)
class Knowledge:
    """The public position as ``seat`` sees it, plus what is unseen and where it may go."""

    seat: int
    public: GameState
    """The position with the events redacted for ``seat`` and the unseen cards dealt into
    the hidden zones in a fixed order (a world of its own, but a function of what the seat
    knows alone: legality checks and the heuristic may read it)."""
    hand_sizes: tuple[int, ...]
    stock_size: int
    foot_sizes: tuple[int, ...]
    talon_sizes: tuple[int, ...]
    unseen: tuple[Card, ...]
    """The cards in no zone the seat can see, sorted (a multiset)."""
    known: tuple[tuple[Card, ...], ...]
    """Per seat, cards known to be in its hand (pile cards it took and still holds)."""

    @classmethod
    def of(cls, state: GameState, seat: int) -> Knowledge:
        hand_sizes = tuple(len(h) for h in state.hands)
        events = tuple(redact_event(e, seat) for e in state.events)
        public = state._clone()
        public.hands = tuple(h if s == seat else () for s, h in enumerate(state.hands))
        public.stock = ()
        public.feet = tuple(() for _ in state.feet)
        public.talon = tuple(() for _ in state.talon)
        public.events = events
        config = state.config
        pool = Counter(deck(config.decks, config.jokers_per_deck))
        pool.subtract(public.all_cards())
        unseen = sort_cards(pool.elements())
        known = _known_in_hands(events, config.players, seat)
        knowledge = cls(
            seat=seat,
            public=public,
            hand_sizes=hand_sizes,
            stock_size=len(state.stock),
            foot_sizes=tuple(len(f) for f in state.feet),
            talon_sizes=tuple(len(p) for p in state.talon),
            unseen=unseen,
            known=known,
        )
        canonical = knowledge.world(None)
        return cls(
            seat=seat,
            public=canonical,
            hand_sizes=hand_sizes,
            stock_size=len(state.stock),
            foot_sizes=knowledge.foot_sizes,
            talon_sizes=knowledge.talon_sizes,
            unseen=unseen,
            known=known,
        )

    def world(self, rng: random.Random | None) -> GameState:
        """A full position: the unseen cards dealt at random into the hidden zones (in a
        fixed order without ``rng``)."""
        public = self.public
        pool = Counter(self.unseen)
        hands: list[list[Card]] = [[] for _ in self.hand_sizes]
        for other, cards in enumerate(self.known):
            if other == self.seat:
                continue
            for card in cards:
                if pool[card] > 0 and len(hands[other]) < self.hand_sizes[other]:
                    hands[other].append(card)
                    pool[card] -= 1
        rest = sorted(pool.elements())
        if rng is not None:
            rng.shuffle(rest)
        laid_out = rules(public).laid_out_threes()
        pending = public.pending_red3 or (False,) * len(hands)
        keepable = [c for c in rest if not laid_out[c]]
        threes = [c for c in rest if laid_out[c]]
        for other, size in enumerate(self.hand_sizes):
            if other == self.seat:
                continue
            source = threes if pending[other] else keepable
            while len(hands[other]) < size and (source or keepable or threes):
                hands[other].append((source or keepable or threes).pop())
        rest = keepable + threes
        if rng is not None:
            rng.shuffle(rest)
        world = public._clone()
        world.hands = tuple(
            public.hands[s] if s == self.seat else sort_cards(h) for s, h in enumerate(hands)
        )
        feet = []
        for size in self.foot_sizes:
            feet.append(tuple(rest[:size]))
            rest = rest[size:]
        talon = []
        for size in self.talon_sizes:
            talon.append(tuple(rest[:size]))
            rest = rest[size:]
        world.feet = tuple(feet)
        world.talon = tuple(talon)
        world.stock = tuple(rest)
        return world


def _known_in_hands(
    events: tuple[Event, ...], players: int, seat: int
) -> tuple[tuple[Card, ...], ...]:
    """Per seat, the pile cards it took this hand and has not put down or discarded since."""
    known: list[Counter[Card]] = [Counter() for _ in range(players)]
    for event in events:
        kind = event.kind
        who = event.seat
        if not 0 <= who < players:
            continue
        if kind == "take":
            cards = event.cards
            from_hand = _leading_number(event.text)
            known[who].update(cards[1 + from_hand :])
        elif kind in ("meld", "layoff", "discard"):
            known[who].subtract(event.cards)
            known[who] = +known[who]
    return tuple(tuple(sorted(c.elements())) if s != seat else () for s, c in enumerate(known))


def _leading_number(text: str) -> int:
    word = text.split(" ", 1)[0]
    return int(word) if word.isdigit() else 0


def in_hand(state: GameState) -> bool:
    """Whether a hand is being played (someone is to draw, play or answer)."""
    return state.phase in (Phase.DRAW, Phase.PLAY, Phase.ANSWER)
