"""Engine <-> protobuf: the one module that knows both ``shared.rules`` and ``shared.pb``.

Used by the server (views, events, decoding signed moves) and by the client (building and
signing moves, reading views). It also fixes the exact bytes that registration and read
authentication sign, so both sides build them from one definition:

* registration: ``b"canasta.v1/register\\x00" || payload`` (``payload`` = serialized
  ``RegisterPayload``);
* authentication: ``b"canasta.v1/auth\\x00" || lp(server_public_key) || lp(public_key) ||
  lp(challenge)`` with ``lp(x) = uint32_be(len(x)) || x``;
* moves: exactly the serialized ``MovePayload`` bytes (DESIGN.md: sign and store the bytes as
  sent, never re-encode).

The tags keep a signature made for one purpose from being accepted for another. Nothing here
decides a rule: views come from ``player_view``, actions from the engine's notation.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from google.protobuf.message import DecodeError

from shared.pb import canasta_pb2 as pb
from shared.rules import (
    Event,
    HandResult,
    PlayerView,
    card_text,
)
from shared.rules.notation import MAX_ACTION_TEXT, parse_actions

REGISTER_TAG = b"canasta.v1/register\x00"
AUTH_TAG = b"canasta.v1/auth\x00"
DEAL_ACTION = "deal"
"""The one move that is not an engine action: the cut that deals the next hand."""
MAX_ACTIONS_PER_MOVE = 64
"""A whole turn never needs more actions than this; longer lists are refused unread."""
MAX_PAYLOAD_BYTES = 16_384
"""A move payload larger than this is refused before it is decoded."""

_PHASES = {
    "deal": pb.PHASE_DEAL,
    "draw": pb.PHASE_DRAW,
    "play": pb.PHASE_PLAY,
    "answer": pb.PHASE_ANSWER,
    "match_over": pb.PHASE_MATCH_OVER,
}
_PHASE_NAMES = {number: name for name, number in _PHASES.items()}


class WireError(ValueError):
    """A message that cannot be read: malformed bytes, a missing or out-of-range field."""

    kind = "wire"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# -- signed messages ---------------------------------------------------------------------------


def _lp(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def register_message(payload: bytes) -> bytes:
    """The bytes a registering key signs for ``RegisterRequest.payload``."""
    return REGISTER_TAG + payload


def auth_message(server_public_key: bytes, public_key: bytes, challenge: bytes) -> bytes:
    """The bytes a player signs to answer an authentication challenge of this server."""
    return AUTH_TAG + _lp(server_public_key) + _lp(public_key) + _lp(challenge)


@dataclass(frozen=True, slots=True)
class Registration:
    """A decoded ``RegisterPayload``."""

    public_key: bytes
    display_name: str
    email: str
    invitation_code: str
    server_public_key: bytes
    client_time_ms: int


def registration_to_bytes(registration: Registration) -> bytes:
    """Serialize a registration for signing (clients)."""
    message = pb.RegisterPayload(
        public_key=registration.public_key,
        display_name=registration.display_name,
        email=registration.email,
        invitation_code=registration.invitation_code,
        server_public_key=registration.server_public_key,
        client_time_ms=registration.client_time_ms,
    )
    return message.SerializeToString(deterministic=True)


def registration_from_bytes(payload: bytes) -> Registration:
    """Decode the signed bytes of a registration; raises ``WireError`` if malformed."""
    if len(payload) > MAX_PAYLOAD_BYTES:
        raise WireError("the registration payload is far too large")
    message = pb.RegisterPayload()
    try:
        message.ParseFromString(payload)
    except DecodeError:
        raise WireError("the registration payload is not a serialized RegisterPayload") from None
    return Registration(
        public_key=bytes(message.public_key),
        display_name=message.display_name,
        email=message.email,
        invitation_code=message.invitation_code,
        server_public_key=bytes(message.server_public_key),
        client_time_ms=message.client_time_ms,
    )


@dataclass(frozen=True, slots=True)
class Move:
    """A decoded ``MovePayload``: what a signed envelope asks for."""

    match_id: str
    seat: int
    seq: int
    prev_hash: bytes
    client_time_ms: int
    actions: tuple[str, ...]
    deal_commitment: bytes = b""

    @property
    def is_deal(self) -> bool:
        return self.actions == (DEAL_ACTION,)


def move_to_bytes(move: Move) -> bytes:
    """Serialize a move for signing (clients; the server never re-encodes what it received)."""
    message = pb.MovePayload(
        match_id=move.match_id,
        seat=move.seat,
        seq=move.seq,
        prev_hash=move.prev_hash,
        client_time_ms=move.client_time_ms,
        actions=list(move.actions),
        deal_commitment=move.deal_commitment,
    )
    return message.SerializeToString(deterministic=True)


def move_from_bytes(payload: bytes) -> Move:
    """Decode the signed bytes of a move; raises ``WireError`` for anything malformed."""
    if len(payload) > MAX_PAYLOAD_BYTES:
        raise WireError(f"the move payload is {len(payload)} bytes; at most {MAX_PAYLOAD_BYTES}")
    message = pb.MovePayload()
    try:
        message.ParseFromString(payload)
    except DecodeError:
        raise WireError("the move payload is not a serialized MovePayload") from None
    if not message.match_id:
        raise WireError("the move payload names no match")
    if message.seq < 1:
        raise WireError("the move's seq must be 1 or more")
    if len(message.prev_hash) != 32:
        raise WireError("the move's prev_hash must be the 32-byte hash of the previous entry")
    if not message.actions:
        raise WireError("the move holds no action")
    if len(message.actions) > MAX_ACTIONS_PER_MOVE:
        raise WireError(f"a move holds at most {MAX_ACTIONS_PER_MOVE} actions")
    if any(len(text) > MAX_ACTION_TEXT for text in message.actions):
        raise WireError("an action text is far too long to be a Canasta move")
    return Move(
        match_id=message.match_id,
        seat=message.seat,
        seq=message.seq,
        prev_hash=bytes(message.prev_hash),
        client_time_ms=message.client_time_ms,
        actions=tuple(message.actions),
        deal_commitment=bytes(message.deal_commitment),
    )


# -- the view ----------------------------------------------------------------------------------


def phase_to_pb(phase: str) -> pb.Phase.ValueType:
    return _PHASES.get(phase, pb.PHASE_UNSPECIFIED)


def phase_from_pb(phase: pb.Phase.ValueType) -> str:
    return _PHASE_NAMES.get(phase, "")


def event_to_pb(event: Event) -> pb.Event:
    """An event as given; redact it first (``player_view`` and ``redact_event`` do)."""
    return pb.Event(
        seat=event.seat,
        kind=event.kind,
        cards=[card_text(c) for c in event.cards],
        private_cards=[card_text(c) for c in event.private],
        text=event.text,
    )


# A hand's events recur in every view of that hand (a view carries them all), and building an
# Event message costs several times more than copying one: keep the built ones, by value.
# Fields of repeated messages copy what they are given, so a kept message is never shared.
# Each costs about 1 KiB (a dealt hand's, 1.6), so they are few: the hands of the matches in
# play now (``keep_event_messages``), not every hand a busy process has shown since it started.
_EVENT_MESSAGES: dict[Event, pb.Event] = {}
_EVENT_MESSAGES_LIMIT = 1024


def keep_event_messages(limit: int) -> None:
    """Keep at most ``limit`` built Event messages (the server: twice its
    ``match_cache_size``); those kept now are dropped."""
    global _EVENT_MESSAGES_LIMIT
    _EVENT_MESSAGES_LIMIT = max(1, limit)
    _EVENT_MESSAGES.clear()


def _event_message(event: Event) -> pb.Event:
    message = _EVENT_MESSAGES.get(event)
    if message is None:
        if len(_EVENT_MESSAGES) >= _EVENT_MESSAGES_LIMIT:
            _EVENT_MESSAGES.clear()
        message = _EVENT_MESSAGES[event] = event_to_pb(event)
    return message


MELD_KINDS: dict[str, pb.MeldKind.ValueType] = {
    "group": pb.MELD_KIND_GROUP,
    "sequence": pb.MELD_KIND_SEQUENCE,
    "wild": pb.MELD_KIND_WILD,
}
"""The engine's meld kinds (``MeldView.kind``) on the wire."""
CANASTA_KINDS: dict[str, pb.CanastaKind.ValueType] = {
    "": pb.CANASTA_KIND_NONE,
    "natural": pb.CANASTA_KIND_NATURAL,
    "mixed": pb.CANASTA_KIND_MIXED,
    "samba": pb.CANASTA_KIND_SAMBA,
    "escalera": pb.CANASTA_KIND_ESCALERA,
    "bolivia": pb.CANASTA_KIND_BOLIVIA,
    "natural_aces": pb.CANASTA_KIND_NATURAL_ACES,
    "natural_sevens": pb.CANASTA_KIND_NATURAL_SEVENS,
    "wild": pb.CANASTA_KIND_WILD,
    "wild_jokers": pb.CANASTA_KIND_WILD_JOKERS,
    "wild_twos": pb.CANASTA_KIND_WILD_TWOS,
}
"""The engine's canasta kinds (``MeldView.canasta``, every preset's) on the wire."""


def hand_result_to_pb(result: HandResult) -> pb.HandResult:
    message = pb.HandResult(
        hand_number=result.hand_number,
        reason=result.reason.value,
        concealed=result.concealed,
        columns=[
            pb.SideScore(
                column=c.column,
                seats=list(c.seats),
                meld_points=c.meld_points,
                natural_canastas=c.natural_canastas,
                mixed_canastas=c.mixed_canastas,
                canasta_bonus=c.canasta_bonus,
                red_threes=c.red_threes,
                red_three_points=c.red_three_points,
                going_out_bonus=c.going_out_bonus,
                hand_penalty=c.hand_penalty,
                hand_total=c.hand_total,
                cumulative=c.cumulative,
                sequence_canastas=c.sequence_canastas,
                wild_canastas=c.wild_canastas,
                special_canastas=c.special_canastas,
                black_threes=c.black_threes,
                black_three_points=c.black_three_points,
                special_penalty=c.special_penalty,
            )
            for c in result.columns
        ],
    )
    if result.went_out is not None:
        message.went_out = result.went_out
    return message


def view_to_pb(view: PlayerView) -> pb.PlayerView:
    """Mirror an engine ``PlayerView`` field for field, cards as text."""
    message = pb.PlayerView(
        seat=view.seat,
        preset=view.preset,
        players=view.players,
        phase=phase_to_pb(view.phase),
        turn=view.turn,
        dealer=view.dealer,
        hand_number=view.hand_number,
        hand=[card_text(c) for c in view.hand],
        hand_counts=list(view.hand_counts),
        my_side=view.my_side,
        pile_size=view.pile_size,
        pile_frozen=view.pile_frozen,
        frozen_reason=view.frozen_reason,
        pile_blocked=view.pile_blocked,
        stock_size=view.stock_size,
        scores=list(view.scores),
        minimums=list(view.minimums),
        target=view.target,
        canastas_to_go_out=view.canastas_to_go_out,
        must_go_out=view.must_go_out,
        legal=list(view.legal),
        winners=list(view.winners),
        talon=list(view.talon),
        foot_sizes=list(view.foot_sizes),
        hands_per_match=view.hands_per_match,
        clean_books_to_go_out=view.books_to_go_out[0],
        dirty_books_to_go_out=view.books_to_go_out[1],
    )
    # Nested messages are added in place: a message given to a constructor is copied in,
    # which costs about twice as much as building it there.
    for sv in view.sides:
        side = message.sides.add(
            side=sv.side,
            seats=list(sv.seats),
            red_threes=[card_text(c) for c in sv.red_threes],
            opened=sv.opened,
            canastas=sv.canastas,
        )
        for m in sv.melds:
            side.melds.add(
                rank=m.rank,
                cards=[card_text(c) for c in m.cards],
                canasta=m.canasta,
                kind=MELD_KINDS[m.kind],
                canasta_kind=CANASTA_KINDS[m.canasta],
            )
    message.events.extend([_event_message(e) for e in view.events])
    if view.actor is not None:
        message.actor = view.actor
    if view.pile_top is not None:
        message.pile_top = card_text(view.pile_top)
    if view.permission is not None:
        message.permission = view.permission
    if view.last_hand is not None:
        message.last_hand.CopyFrom(_hand_result_message(view.last_hand))
    return message


# The last hand's result recurs in every view until the next hand ends: keep the built
# messages by the result's identity (each kept with its result, so that no other object takes
# its id); a kept message is only ever copied from.
_HAND_RESULTS: dict[int, tuple[HandResult, pb.HandResult]] = {}
_HAND_RESULTS_LIMIT = 1 << 12


def _hand_result_message(result: HandResult) -> pb.HandResult:
    kept = _HAND_RESULTS.get(id(result))
    if kept is not None and kept[0] is result:
        return kept[1]
    if len(_HAND_RESULTS) >= _HAND_RESULTS_LIMIT:
        _HAND_RESULTS.clear()
    message = hand_result_to_pb(result)
    _HAND_RESULTS[id(result)] = (result, message)
    return message


__all__ = [
    "AUTH_TAG",
    "CANASTA_KINDS",
    "DEAL_ACTION",
    "MAX_ACTIONS_PER_MOVE",
    "MAX_PAYLOAD_BYTES",
    "MELD_KINDS",
    "REGISTER_TAG",
    "Move",
    "Registration",
    "WireError",
    "auth_message",
    "event_to_pb",
    "hand_result_to_pb",
    "keep_event_messages",
    "move_from_bytes",
    "move_to_bytes",
    "parse_actions",
    "phase_from_pb",
    "phase_to_pb",
    "register_message",
    "registration_from_bytes",
    "registration_to_bytes",
    "view_to_pb",
]
