"""The dynamic game: one mutable-by-the-engine-only record per match position.

``GameState`` is treated as an immutable value by everyone outside the engine: ``engine`` and
``dealing`` clone it (``_clone`` copies only the references, every container inside is a
tuple) and the rule modules they call change only that clone, so a refused move can never
leave a half-changed state behind. States
serialise to JSON and back exactly (``to_json`` / ``from_json``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final, NamedTuple

from .cards import Card, card_text, parse_card
from .config import RuleConfig


class Phase(StrEnum):
    """Where the match stands (docs/rules.md §1.4)."""

    DEAL = "deal"
    """Waiting for the next hand to be dealt (before the first hand and between hands)."""
    DRAW = "draw"
    """The seat to play must draw from the stock or take the pile (§1.6 T1)."""
    PLAY = "play"
    """The seat to play may meld, lay off, ask partner, and must end by discarding (T2, T3)."""
    ANSWER = "answer"
    """Partner must answer "may I go out?" (§1.11.2)."""
    MATCH_OVER = "match_over"


class EndReason(StrEnum):
    """Why a hand ended (§1.4 HAND_END, §3.2 cutthroat)."""

    WENT_OUT = "went_out"
    RED3_LAST_CARD = "red3_last_card"
    STOCK_OUT_NO_TAKE = "stock_out_no_take"
    STOCK_EXHAUSTED = "stock_exhausted"


class Event(NamedTuple):
    """One public happening of the hand, with the part only its seat may see kept apart.

    ``cards`` are visible to everyone (a meld, a discard, the pile taken). ``private`` cards
    are visible only to ``seat`` (the cards it drew from the stock, its dealt hand).
    """

    seat: int
    kind: str
    cards: tuple[Card, ...] = ()
    private: tuple[Card, ...] = ()
    text: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "kind": self.kind,
            "cards": [card_text(c) for c in self.cards],
            "private": [card_text(c) for c in self.private],
            "text": self.text,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Event:
        return cls(
            seat=data["seat"],
            kind=data["kind"],
            cards=tuple(parse_card(c) for c in data["cards"]),
            private=tuple(parse_card(c) for c in data["private"]),
            text=data["text"],
        )


@dataclass(frozen=True, slots=True)
class SideScore:
    """The score breakdown of one score column for one hand (§1.13)."""

    column: int
    seats: tuple[int, ...]
    meld_points: int
    natural_canastas: int
    mixed_canastas: int
    canasta_bonus: int
    red_threes: int
    red_three_points: int
    going_out_bonus: int
    hand_penalty: int
    hand_total: int
    cumulative: int
    sequence_canastas: int = 0
    """Samba / Bolivia: seven-card sequences (sambas, escaleras), §3.4, §3.5."""
    wild_canastas: int = 0
    """Bolivia: seven-card wild melds (bolivias), §3.5; Modern American: wild canastas."""
    special_canastas: int = 0
    """Modern American: canastas with a bonus of their own (natural aces, natural sevens and
    the wild canastas), §3.6; counted apart from ``natural_canastas``."""
    black_threes: int = 0
    """Modern American: black threes laid out (``red_threes`` then counts the red ones only;
    each colour scores apart, §3.6)."""
    black_three_points: int = 0
    special_penalty: int = 0
    """Modern American: unfinished aces, sevens or wild melds, and three or more aces or
    sevens left in one hand (§3.6); subtracted from ``hand_total``."""


@dataclass(frozen=True, slots=True)
class HandResult:
    """How a hand ended and what every score column made of it."""

    hand_number: int
    reason: EndReason
    went_out: int | None
    concealed: bool
    columns: tuple[SideScore, ...]

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (written out field by field: ``dataclasses.asdict`` is slow, and
        the server serialises a state after every move)."""
        return {
            "hand_number": self.hand_number,
            "reason": self.reason.value,
            "went_out": self.went_out,
            "concealed": self.concealed,
            "columns": [
                {name: getattr(col, name) for name in _SIDE_SCORE_FIELDS}
                | {"seats": list(col.seats)}
                for col in self.columns
            ],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> HandResult:
        return cls(
            hand_number=data["hand_number"],
            reason=EndReason(data["reason"]),
            went_out=data["went_out"],
            concealed=data["concealed"],
            columns=tuple(SideScore(**{**c, "seats": tuple(c["seats"])}) for c in data["columns"]),
        )


_SIDE_SCORE_FIELDS = tuple(f.name for f in dataclasses.fields(SideScore))

Melds = tuple[tuple[Card, ...], ...]
"""One side's melds indexed by rank (index 1 holds a black-three meld; index 0 is unused)."""
EMPTY_MELDS: Final[Melds] = ((),) * 13
Extra = tuple[tuple[Card, ...], ...]
"""One side's further melds in table order (Samba and Bolivia, §3.4, §3.5): sequences, group
melds of a rank beyond the first (which stays in ``Melds``) and wild-card melds."""


@dataclass(slots=True)
class GameState:
    """A whole match at one moment: hand in progress, cumulative scores, whose turn.

    Treat instances as immutable values; only the engine (``engine``, ``dealing`` and the rule
    modules they call, on a clone) builds new ones.
    """

    config: RuleConfig
    phase: Phase
    hand_number: int
    """1 for the first hand; 0 before any deal."""
    dealer: int
    """The dealer of the current hand (in ``DEAL`` phase: of the hand about to be dealt)."""
    turn: int
    """The seat whose turn it is (in ``ANSWER`` phase the partner answers for this turn)."""
    scores: tuple[int, ...]
    """Cumulative score per column (``config.partnerships``)."""
    target: int
    stock: tuple[Card, ...]
    """Top card first."""
    pile: tuple[Card, ...]
    """Bottom card first; ``pile[-1]`` is the top."""
    pile_frozen: bool
    """Frozen for everyone: a wild card (or upcard red three) is in the pile (§1.8.1)."""
    hands: tuple[tuple[Card, ...], ...]
    """Per seat, kept in ``cards.SORT_KEY`` order."""
    side_of: tuple[int, ...]
    """Seat -> side whose melds it plays to (changes only in cutthroat)."""
    melds: tuple[Melds, ...]
    """Per side: rank -> cards of that side's meld."""
    red3: tuple[tuple[Card, ...], ...]
    """Per seat: red threes laid out this hand."""
    box: tuple[Card, ...] = ()
    """Cards out of play; only scenario positions put cards here."""
    melded_seats: tuple[bool, ...] = ()
    """Seats that melded or laid off in an earlier turn of this hand (concealed going out)."""
    pending_red3: tuple[bool, ...] = ()
    """Seats still to lay out dealt red threes (``red3_deal_timing = "first_turn"``)."""
    lone_seat: int | None = None
    """Cutthroat: the seat playing alone this hand, once known."""
    drew_from_stock: bool = False
    turn_melded: bool = False
    """A MELD or LAY_OFF was made this turn (asking partner must come before, §1.11.2)."""
    turn_put_down: bool = False
    """The acting seat put cards on the table this turn (meld, lay-off or pile take)."""
    touched_old_meld: bool = False
    """This turn added to a meld the side had before the turn (spoils concealed, §1.11.4)."""
    turn_new_ranks: int = 0
    """Bit set of ranks whose meld was started this turn."""
    asked: bool = False
    permission: str | None = None
    """Partner's answer this turn: ``"yes"``, ``"no"`` or ``None``."""
    must_go_out: bool = False
    """This turn must end with the player out (partner said yes, or a black-three meld)."""
    answer_phase: Phase = Phase.PLAY
    """The phase to return to after partner answers."""
    no_discard: bool = False
    """The player drew a red three as the last card and may not discard (D13 option)."""
    asks: tuple[int, ...] = ()
    """Per seat: times asked this hand (``ask_limit_per_hand``)."""
    last_hand: HandResult | None = None
    winners: tuple[int, ...] = ()
    """Score columns that won the match (two or more: a drawn match)."""
    events: tuple[Event, ...] = ()
    """This hand's events in order."""
    extra: tuple[Extra, ...] = ()
    """Per side: the melds that are not the first group meld of a rank (§3.4, §3.5); empty
    (no entry at all) in the games that have none, so classic positions stay as they were."""
    feet: tuple[tuple[Card, ...], ...] = ()
    """Hand and Foot (§3.7): per seat, the foot still face down, ``()`` once picked up; empty
    (no entry at all) in the games without feet. Nobody sees it, its owner included."""

    talon: tuple[tuple[Card, ...], ...] = ()
    """Modern American (§3.6): the bonus packets set aside at the deal, the first opener's
    (four cards) then the second's (three); a packet empties when drawn, and one never drawn
    stays aside. Empty (no entry at all) in the other games."""
    talon_owed: tuple[int, ...] = ()
    """Modern American: per seat, the packet (1 or 2) it draws at the start of its next turn
    for opening its side from hand, or 0 (§3.8a)."""
    wild_opening: tuple[bool, ...] = ()
    """Modern American: per side, whether its initial meld held a wild card (only then may
    its aces take wild cards, §3.6, §3.8a)."""

    def _clone(self) -> GameState:
        """A shallow copy for the engine to change. This body is what a compiled build (``make
        engine-compiled``) runs: there each line is a store into the new object's struct, and
        the dataclass's ``__init__`` (generated, so interpreted) is not called. Pure Python
        replaces it below with the same lines generated from the fields, which cannot miss one
        (tests/shared/rules/test_compiled.py holds this body to them on every field)."""
        copy: GameState = GameState.__new__(GameState)
        copy.config = self.config
        copy.phase = self.phase
        copy.hand_number = self.hand_number
        copy.dealer = self.dealer
        copy.turn = self.turn
        copy.scores = self.scores
        copy.target = self.target
        copy.stock = self.stock
        copy.pile = self.pile
        copy.pile_frozen = self.pile_frozen
        copy.hands = self.hands
        copy.side_of = self.side_of
        copy.melds = self.melds
        copy.red3 = self.red3
        copy.box = self.box
        copy.melded_seats = self.melded_seats
        copy.pending_red3 = self.pending_red3
        copy.lone_seat = self.lone_seat
        copy.drew_from_stock = self.drew_from_stock
        copy.turn_melded = self.turn_melded
        copy.turn_put_down = self.turn_put_down
        copy.touched_old_meld = self.touched_old_meld
        copy.turn_new_ranks = self.turn_new_ranks
        copy.asked = self.asked
        copy.permission = self.permission
        copy.must_go_out = self.must_go_out
        copy.answer_phase = self.answer_phase
        copy.no_discard = self.no_discard
        copy.asks = self.asks
        copy.last_hand = self.last_hand
        copy.winners = self.winners
        copy.events = self.events
        copy.extra = self.extra
        copy.feet = self.feet
        copy.talon = self.talon
        copy.talon_owed = self.talon_owed
        copy.wild_opening = self.wild_opening
        return copy

    # -- small derived facts used everywhere ----------------------------------------------

    @property
    def players(self) -> int:
        return self.config.players

    def actor(self) -> int | None:
        """The seat that must act now, or ``None`` between hands and after the match."""
        phase = self.phase
        if phase is Phase.DRAW or phase is Phase.PLAY:
            return self.turn
        if phase is Phase.ANSWER:
            return self.config.partner_to_ask(self.turn)
        return None

    def side_seats(self, side: int) -> tuple[int, ...]:
        return tuple(s for s in range(self.players) if self.side_of[s] == side)

    def opened(self, side: int) -> bool:
        """A side is opened once it has any meld this hand (§1.1)."""
        return any(self.melds[side]) or bool(self.extra and self.extra[side])

    def canastas(self, side: int) -> int:
        if self.extra:
            return sum(1 for m in (*self.melds[side], *self.extra[side]) if len(m) >= 7)
        return sum(1 for m in self.melds[side] if len(m) >= 7)

    def extra_of(self, side: int) -> Extra:
        """A side's further melds (§3.4, §3.5); ``()`` in games without them."""
        return self.extra[side] if self.extra else ()

    def column_of(self, seat: int) -> int:
        """The cumulative score column of a seat (its side at the start of the hand)."""
        return self.config.initial_side(seat)

    def all_cards(self) -> list[Card]:
        """Every card in every zone (for the card-conservation invariant, §1.15)."""
        cards = list(self.stock) + list(self.pile) + list(self.box)
        for hand in self.hands:
            cards.extend(hand)
        for side in self.melds:
            for meld in side:
                cards.extend(meld)
        for threes in self.red3:
            cards.extend(threes)
        for side_extra in self.extra:
            for meld in side_extra:
                cards.extend(meld)
        for packet in self.talon:
            cards.extend(packet)
        for foot in self.feet:
            cards.extend(foot)
        return cards

    # -- JSON -------------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """Every field, cards as text, so that ``from_json(to_json(s)) == s`` (``extra`` and
        ``feet`` only where the game has them, so a classic position's JSON is unchanged)."""
        out: dict[str, Any] = {
            "config": self.config.to_dict(),
            "phase": self.phase.value,
            "hand_number": self.hand_number,
            "dealer": self.dealer,
            "turn": self.turn,
            "scores": list(self.scores),
            "target": self.target,
            "stock": _texts(self.stock),
            "pile": _texts(self.pile),
            "pile_frozen": self.pile_frozen,
            "hands": [_texts(h) for h in self.hands],
            "side_of": list(self.side_of),
            "melds": [[_texts(m) for m in side] for side in self.melds],
            "red3": [_texts(r) for r in self.red3],
            "box": _texts(self.box),
            "melded_seats": list(self.melded_seats),
            "pending_red3": list(self.pending_red3),
            "lone_seat": self.lone_seat,
            "drew_from_stock": self.drew_from_stock,
            "turn_melded": self.turn_melded,
            "turn_put_down": self.turn_put_down,
            "touched_old_meld": self.touched_old_meld,
            "turn_new_ranks": self.turn_new_ranks,
            "asked": self.asked,
            "permission": self.permission,
            "must_go_out": self.must_go_out,
            "answer_phase": self.answer_phase.value,
            "no_discard": self.no_discard,
            "asks": list(self.asks),
            "last_hand": self.last_hand.to_json() if self.last_hand else None,
            "winners": list(self.winners),
            "events": [e.to_json() for e in self.events],
        }
        if self.extra:
            out["extra"] = [[_texts(m) for m in side] for side in self.extra]
        if self.talon:  # Modern American only, so other positions' JSON is unchanged
            out["talon"] = [_texts(p) for p in self.talon]
            out["talon_owed"] = list(self.talon_owed)
            out["wild_opening"] = list(self.wild_opening)
        if self.feet:
            out["feet"] = [_texts(f) for f in self.feet]
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GameState:
        return cls(
            config=RuleConfig.from_dict(data["config"]),
            phase=Phase(data["phase"]),
            hand_number=data["hand_number"],
            dealer=data["dealer"],
            turn=data["turn"],
            scores=tuple(data["scores"]),
            target=data["target"],
            stock=_cards(data["stock"]),
            pile=_cards(data["pile"]),
            pile_frozen=data["pile_frozen"],
            hands=tuple(_cards(h) for h in data["hands"]),
            side_of=tuple(data["side_of"]),
            melds=tuple(tuple(_cards(m) for m in side) for side in data["melds"]),
            red3=tuple(_cards(r) for r in data["red3"]),
            box=_cards(data["box"]),
            melded_seats=tuple(data["melded_seats"]),
            pending_red3=tuple(data["pending_red3"]),
            lone_seat=data["lone_seat"],
            drew_from_stock=data["drew_from_stock"],
            turn_melded=data["turn_melded"],
            turn_put_down=data["turn_put_down"],
            touched_old_meld=data["touched_old_meld"],
            turn_new_ranks=data["turn_new_ranks"],
            asked=data["asked"],
            permission=data["permission"],
            must_go_out=data["must_go_out"],
            answer_phase=Phase(data["answer_phase"]),
            no_discard=data["no_discard"],
            asks=tuple(data["asks"]),
            last_hand=HandResult.from_json(data["last_hand"]) if data["last_hand"] else None,
            winners=tuple(data["winners"]),
            events=tuple(Event.from_json(e) for e in data["events"]),
            extra=tuple(tuple(_cards(m) for m in side) for side in data.get("extra", ())),
            talon=tuple(_cards(p) for p in data.get("talon", ())),
            talon_owed=tuple(data.get("talon_owed", ())),
            wild_opening=tuple(data.get("wild_opening", ())),
            feet=tuple(_cards(f) for f in data.get("feet", ())),
        )


_FIELD_NAMES = tuple(f.name for f in dataclasses.fields(GameState))


def out_forbidden(s: GameState) -> bool:
    """Whether going out is forbidden this turn whatever the melds: partner said no
    (§1.11.2), or, under ``must_ask_to_go_out`` (§3.8a), partner was not asked and said yes.
    Here, below the rule modules, so that every rule that depends on it (going out, black
    threes, the concealed exemption) reads the one definition without an import cycle."""
    if s.permission == "no":
        return True
    return s.config.must_ask_to_go_out and s.config.has_partners and s.permission != "yes"


def _make_clone() -> Any:
    """Build ``GameState._clone`` as straight-line code: the engine clones once per action and
    listing legal moves clones once per candidate, so a loop over fields would dominate."""
    lines = ["def _clone(self):", "    copy = _new(GameState)"]
    lines += [f"    copy.{name} = self.{name}" for name in _FIELD_NAMES]
    lines.append("    return copy")
    namespace: dict[str, Any] = {"_new": object.__new__, "GameState": GameState}
    exec("\n".join(lines), namespace)  # code built from our own field names only
    return namespace["_clone"]


COMPILED = not __file__.endswith(".py")
"""Whether this module runs compiled (``make engine-compiled``): a compiled class's methods
cannot be replaced, and need not be."""
WRITTEN_CLONE = GameState._clone
"""``_clone`` as written in the class, kept for the test that holds it to the generated one."""
if not COMPILED:
    GameState._clone = _make_clone()  # type: ignore[method-assign]


def _texts(cards: tuple[Card, ...]) -> list[str]:
    return [card_text(c) for c in cards]


def _cards(texts: list[str]) -> tuple[Card, ...]:
    return tuple(parse_card(t) for t in texts)
