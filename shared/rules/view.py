"""What one seat may see: the only way state leaves the engine toward a player (DESIGN.md).

A ``PlayerView`` holds what the seat could see at a real table: its own hand, the other hand
sizes, every meld and red three, the pile's top, size and freeze, the stock's size, the
scores, whose move it is, and the hand's events with other players' stock draws hidden.
It never contains another player's cards, the stock order or anything that reveals them.

A spectator (issue 32) gets a ``spectator_view``: the same table, built by the same code, but
for no seat: no hand, no legal actions, every private card of the events hidden. It is built
from the state, never by trimming some player's view, so no seat's secrets pass through it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .cards import IS_BLACK3, Card, card_text, sort_cards
from .legal import legal_action_kinds
from .pile import frozen_for_every_side, frozen_reason
from .ruleset import rules
from .state import Event, GameState, HandResult, Phase


@dataclass(frozen=True, slots=True)
class MeldView:
    rank: str
    """The meld's name as the notation reads it: ``9``; in Samba and Bolivia also ``9#2``
    (the second meld of nines), ``4h-6h`` (a sequence), ``wild`` (§3.4, §3.5)."""
    cards: tuple[Card, ...]
    canasta: str
    """``"natural"``, ``"mixed"``, ``"samba"``, ``"escalera"``, ``"bolivia"`` or ``""``
    (not yet a canasta); in Modern American also ``"natural_aces"``, ``"natural_sevens"``,
    ``"wild"``, ``"wild_jokers"`` (all four jokers) and ``"wild_twos"`` (§3.6)."""
    kind: str = "group"
    """``"group"`` (one rank), ``"sequence"`` (Samba, Bolivia) or ``"wild"`` (wild cards
    only: Bolivia, Modern American), so that nobody need guess it from the cards."""


@dataclass(frozen=True, slots=True)
class SideView:
    side: int
    seats: tuple[int, ...]
    melds: tuple[MeldView, ...]
    red_threes: tuple[Card, ...]
    opened: bool
    canastas: int


NO_SEAT = -1
"""The ``seat`` and ``my_side`` of a spectator's view: it sits nowhere."""


@dataclass(frozen=True, slots=True)
class PlayerView:
    """Everything ``seat`` may know now (``seat`` ``NO_SEAT``: a spectator, who holds no
    hand and may know only the table)."""

    seat: int
    preset: str
    players: int
    phase: str
    actor: int | None
    turn: int
    dealer: int
    hand_number: int
    hand: tuple[Card, ...]
    hand_counts: tuple[int, ...]
    sides: tuple[SideView, ...]
    my_side: int
    pile_top: Card | None
    pile_size: int
    pile_frozen: bool
    frozen_reason: str
    """Why the pile is frozen for this seat's side (``""`` when it is not)."""
    pile_blocked: bool
    """A black three is on top: nobody may take the pile this turn."""
    stock_size: int
    scores: tuple[int, ...]
    minimums: tuple[int, ...]
    """The initial-meld minimum of every score column this hand (§1.10)."""
    target: int
    canastas_to_go_out: int
    permission: str | None
    must_go_out: bool
    legal: tuple[str, ...]
    events: tuple[Event, ...]
    last_hand: HandResult | None
    winners: tuple[int, ...]
    talon: tuple[int, ...] = ()
    """Modern American (§3.6): how many bonus cards each talon packet still holds (first
    opener's first); their faces stay hidden until a player draws them."""
    foot_sizes: tuple[int, ...] = ()
    """Hand and Foot (§3.7): per seat, the size of its foot still face down (0 once picked
    up); only the size, for its owner too. Empty in games without feet."""
    hands_per_match: int = 0
    """The match's length in hands (Hand and Foot 4, §3.7); 0: it is played to ``target``."""
    books_to_go_out: tuple[int, int] = (0, 0)
    """Hand and Foot (§3.7): the clean and the dirty books going out needs among the
    ``canastas_to_go_out``; ``(0, 0)`` in the other games."""

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict with cards as text."""
        return {
            "seat": self.seat,
            "preset": self.preset,
            "players": self.players,
            "phase": self.phase,
            "actor": self.actor,
            "turn": self.turn,
            "dealer": self.dealer,
            "hand_number": self.hand_number,
            "hand": [card_text(c) for c in self.hand],
            "hand_counts": list(self.hand_counts),
            "sides": [
                {
                    "side": sv.side,
                    "seats": list(sv.seats),
                    "opened": sv.opened,
                    "canastas": sv.canastas,
                    "red_threes": [card_text(c) for c in sv.red_threes],
                    "melds": [
                        {
                            "rank": m.rank,
                            "cards": [card_text(c) for c in m.cards],
                            "canasta": m.canasta,
                            "kind": m.kind,
                        }
                        for m in sv.melds
                    ],
                }
                for sv in self.sides
            ],
            "my_side": self.my_side,
            "pile_top": card_text(self.pile_top) if self.pile_top is not None else None,
            "pile_size": self.pile_size,
            "pile_frozen": self.pile_frozen,
            "frozen_reason": self.frozen_reason,
            "pile_blocked": self.pile_blocked,
            "stock_size": self.stock_size,
            "scores": list(self.scores),
            "minimums": list(self.minimums),
            "target": self.target,
            "canastas_to_go_out": self.canastas_to_go_out,
            "permission": self.permission,
            "must_go_out": self.must_go_out,
            "legal": list(self.legal),
            "events": [e.to_json() for e in self.events],
            "last_hand": self.last_hand.to_json() if self.last_hand else None,
            "winners": list(self.winners),
            "talon": list(self.talon),
        } | (
            {
                "foot_sizes": list(self.foot_sizes),
                "hands_per_match": self.hands_per_match,
                "books_to_go_out": list(self.books_to_go_out),
            }
            if self.foot_sizes or self.hands_per_match or any(self.books_to_go_out)
            else {}
        )


def redact_event(event: Event, seat: int) -> Event:
    """The event as ``seat`` may see it: private cards only for the seat they belong to."""
    if event.private and event.seat != seat:
        return Event(event.seat, event.kind, event.cards, (), event.text)
    return event


def player_view(state: GameState, seat: int, events_from: int = 0) -> PlayerView:
    """The redacted view of ``state`` for ``seat`` (DESIGN.md "The engine"); with
    ``events_from``, only the hand's events from that index on (a client that holds the
    earlier ones, or needs none of them, is sent only what is new)."""
    return _view(state, seat, events_from)


def spectator_view(state: GameState) -> PlayerView:
    """What a spectator may see of ``state``: the table as every seat sees it (melds, red
    threes, the pile's top and size, hand sizes, scores, whose move it is, the hand's public
    events) and nothing any one seat alone sees: no hand, no legal actions, no private card
    of any event (dealt cards, stock draws). The pile shows as frozen only when it is frozen
    for every side: a side's own freeze (not yet opened) shows in its ``opened``."""
    return _view(state, None)


def _view(state: GameState, seat: int | None, events_from: int = 0) -> PlayerView:
    """The table, and for a seat (``seat`` not None) what that seat alone may see."""
    config = state.config
    in_hand = state.phase not in (Phase.DEAL, Phase.MATCH_OVER)
    ruleset = rules(state)
    sides = []
    for side in sorted(set(state.side_of)):
        seats = state.side_seats(side)
        melds = tuple(MeldView(*shown) for shown in ruleset.meld_views(state, side))
        threes = tuple(c for s in seats for c in state.red3[s])
        sides.append(SideView(side, seats, melds, threes, state.opened(side), state.canastas(side)))
    top = state.pile[-1] if state.pile else None
    if seat is None:
        my_side = NO_SEAT
        reason = frozen_for_every_side(state) if in_hand else ""
        pile_frozen, frozen = bool(reason), reason if state.pile else ""
        hand: tuple[Card, ...] = ()
        legal: tuple[str, ...] = ()
        events = tuple(redact_event(e, NO_SEAT) if e.private else e for e in state.events)
    else:
        my_side = state.side_of[seat]
        reason = frozen_reason(state, my_side) if in_hand else ""
        pile_frozen, frozen = bool(reason), reason if state.pile else ""
        hand = sort_cards(state.hands[seat])
        legal = tuple(legal_action_kinds(state, seat)) if state.actor() == seat else ()
        told = state.events[events_from:] if events_from else state.events
        events = tuple(
            e if not e.private or e.seat == seat else redact_event(e, seat) for e in told
        )
    return PlayerView(
        seat=NO_SEAT if seat is None else seat,
        preset=config.preset,
        players=config.players,
        phase=state.phase.value,
        actor=state.actor(),
        turn=state.turn,
        dealer=state.dealer,
        hand_number=state.hand_number,
        hand=hand,
        hand_counts=tuple(len(h) for h in state.hands),
        sides=tuple(sides),
        my_side=my_side,
        pile_top=top,
        pile_size=len(state.pile),
        pile_frozen=pile_frozen,
        frozen_reason=frozen,
        pile_blocked=top is not None and IS_BLACK3[top],
        stock_size=len(state.stock),
        scores=state.scores,
        minimums=tuple(config.initial_minimum(s, state.hand_number) for s in state.scores),
        target=state.target,
        canastas_to_go_out=config.canastas_to_go_out,
        permission=state.permission if in_hand else None,
        must_go_out=state.must_go_out if in_hand else False,
        legal=legal,
        events=events,
        last_hand=state.last_hand,
        winners=state.winners,
        talon=tuple(len(p) for p in state.talon) if in_hand else (),
        foot_sizes=tuple(len(f) for f in state.feet),
        hands_per_match=config.hands_per_match or 0,
        books_to_go_out=(config.clean_books_to_go_out, config.dirty_books_to_go_out),
    )
