"""What a match's log entry must be: the one acceptance rule, for the server and the verifier.

A match's log starts from its header (the rules, the seats and their keys, the server's keys),
whose hash is the ``prev_hash`` of the first entry. An entry is a signed move; it is accepted
when

* its seat exists and its signer may sign for that seat: the seat's own key; the server's bot
  key (a bot seat's moves, or a human seat's while a bot covers it); or the server's attest key,
  for a human seat only and only in a match whose header names that key (a move the player made
  by replying to a mail, signed on their behalf);
* a cut (a ``deal`` move) carries ``client_time_ms`` 0 (signing it again gives the same
  signature, so the same deal), comes between hands, is signed for the cutting seat
  (``cutting_seat``), and names the commitment of the hand it deals, whose secret matches it;
  any other move names no commitment;
* the engine accepts the move; the state after it is ``next_state``: the engine's for a move,
  and for a cut the hand dealt from the deck (``dealt_deck``) that the hand's secret and the
  cut's signature shuffle.

``accept_entry`` checks all of it and returns the move, who signed it and the state after, or
raises ``EntryRefusedError`` naming the reason (a ``Refusal``). Its two halves, ``signer_of`` and
``apply_entry``, are what the server calls when it stores a move (``server.service.play``:
the server's own conditions, the seq and the chain's head among them, sit between the two so
that a move whose signature fails learns nothing about the match); ``canasta verify``
(``shared.transcript.verify``) calls ``accept_entry`` for each entry of a transcript, so the
server stores exactly what the verifier accepts. The transcript's file format, its chain and
receipts stay in ``shared.transcript``.

The header's bytes are canonical JSON (keys sorted, no spaces, ASCII only, byte strings as
lowercase hex), specified in ``docs/transcript.md``: ``Header.from_bytes`` refuses any other
spelling of the same content.
"""

from __future__ import annotations

import enum
import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Protocol

from shared.crypto.fairdeal import deal_seed, shuffle, verify_commitment
from shared.rules import (
    CanastaError,
    Card,
    GameState,
    Phase,
    RuleConfig,
    apply_turn,
    deal_hand,
    deck,
    make_config,
)
from shared.rules.config import stored_options
from shared.rules.notation import parse_actions
from shared.wire import Move, move_from_bytes

HEADER_FORMAT = "canasta-header/1"
HEADER_TAG = b"canasta.v1/header\x00"
MAX_HEADER_BYTES = 64 * 1024
"""A header larger than this is refused unparsed (six seats and every option: about 3 KiB)."""
MAX_DEPTH = 16
"""The deepest nesting of a well-formed header is 4 (``rules``, ``min_meld_table``, a row,
counting the header's own braces); anything past this is refused before parsing, so that no
header can exhaust the parser's recursion."""


class MatchLogError(ValueError):
    """The first problem found, and the log entry (its seq) where it was found, if any
    (``shared.transcript.TranscriptError`` is this class)."""

    def __init__(self, message: str, seq: int | None = None) -> None:
        super().__init__(f"entry {seq}: {message}" if seq is not None else message)
        self.seq = seq


def canonical_json(value: object) -> bytes:
    """The one byte form of a JSON value used for headers and files: sorted keys, no spaces,
    ASCII only (other characters as ``\\uXXXX``), no NaN or infinity."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return text.encode("ascii")


def parse_canonical(data: bytes, what: str) -> Any:
    """Parse canonical JSON; anything spelled otherwise (spaces, key order, escapes, numbers
    written differently) is refused, since those bytes would be covered by nothing. Only for
    small documents (a header, an end's outcome): the caller bounds their size first."""
    if _too_deep(data):
        raise MatchLogError(f"the {what} nests deeper than {MAX_DEPTH} levels")
    try:
        value = json.loads(data.decode("ascii"), parse_constant=_no_constant)
        canonical = canonical_json(value)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise MatchLogError(f"the {what} is not JSON: {type(exc).__name__}") from None
    if canonical != data:
        raise MatchLogError(f"the {what} is not in canonical form (docs/transcript.md)")
    return value


_STRUCTURE = re.compile(rb'[\[\]{}"]')


def _too_deep(data: bytes) -> bool:
    """Whether brackets outside strings nest deeper than ``MAX_DEPTH``: a ``[`` or ``{`` is
    at depth 1 plus the number of brackets open around it. One pass and no copy: a string is
    skipped by searching for the quote that closes it."""
    depth, at = 0, 0
    while (found := _STRUCTURE.search(data, at)) is not None:
        token, at = found.group(), found.end()
        if token == b'"':
            at = _string_end(data, at)
        elif token in (b"[", b"{"):
            depth += 1
            if depth > MAX_DEPTH:
                return True
        else:
            depth -= 1
    return False


def _string_end(data: bytes, at: int) -> int:
    """Just past the quote that closes the string whose text starts at ``at`` (the end of
    ``data`` when none does: the JSON parser then refuses it)."""
    while (quote := data.find(b'"', at)) >= 0:
        escaped = quote
        while escaped > at and data[escaped - 1] == 0x5C:  # backslashes before the quote
            escaped -= 1
        if (quote - escaped) % 2 == 0:  # an even number: the quote is not escaped
            return quote + 1
        at = quote + 1
    return len(data)


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not allowed")


def _hex(value: object, what: str, size: int | None = None) -> bytes:
    if not isinstance(value, str) or value != value.lower():
        raise MatchLogError(f"{what} must be lowercase hex")
    try:
        raw = bytes.fromhex(value)
    except ValueError:
        raise MatchLogError(f"{what} must be lowercase hex") from None
    if raw.hex() != value or (size is not None and len(raw) != size):
        raise MatchLogError(f"{what} must be {size} bytes of lowercase hex")
    return raw


def json_fields(value: object, what: str, names: set[str]) -> Mapping[str, Any]:
    """A JSON object with exactly the keys ``names``."""
    if not isinstance(value, dict):
        raise MatchLogError(f"the {what} must be a JSON object")
    if set(value) != names:
        extra, missing = sorted(set(value) - names), sorted(names - set(value))
        raise MatchLogError(f"the {what} has unknown fields {extra} or lacks {missing}")
    return value


def _int(value: object, what: str, low: int = 0, high: int = 2**63 - 1) -> int:
    if type(value) is not int or not low <= value <= high:
        raise MatchLogError(f"{what} must be an integer from {low} to {high}")
    return value


def _text(value: object, what: str, longest: int = 200) -> str:
    if not isinstance(value, str) or len(value) > longest:
        raise MatchLogError(f"{what} must be text of at most {longest} characters")
    return value


# -- the header --------------------------------------------------------------------------------


@dataclass(frozen=True)
class SeatKey:
    """One seat as the match began: who sat there, and the key that signs its moves."""

    seat: int
    name: str
    bot: bool
    public_key: bytes


@dataclass(frozen=True)
class Clock:
    """The match's time control, part of what the players agreed to (a bot may play for an
    absent player under ``substitute``, or resign for them under ``forfeit``)."""

    hours_per_move: int
    bank_hours: int
    weekends_off: bool
    on_timeout: str

    def to_json(self) -> dict[str, object]:
        """In days when both times are whole days (the bytes every header had before clocks
        in hours), else in hours: one canonical form for each clock."""
        if self.hours_per_move % 24 == 0 and self.bank_hours % 24 == 0:
            times = {"bank_days": self.bank_hours // 24, "days_per_move": self.hours_per_move // 24}
        else:
            times = {"bank_hours": self.bank_hours, "hours_per_move": self.hours_per_move}
        return {**times, "on_timeout": self.on_timeout, "weekends_off": self.weekends_off}


@dataclass(frozen=True)
class Header:
    """What every signed move of a match commits to (through the chain's first link)."""

    match_id: str
    config: RuleConfig
    seats: tuple[SeatKey, ...]
    server_key: bytes
    """Signs the receipts."""
    bot_key: bytes
    """Signs the moves of bot seats, and of human seats while a bot covers them."""
    clock: Clock | None
    started_ms: int
    first_dealer: int
    """Who deals the first hand (the engine draws it from the match id; written here so that
    a verifier need not reproduce that draw)."""
    attest_key: bytes = b""
    """Signs moves a player made by replying to a mail, on the player's behalf: such a move is
    *server-attested*, not the player's own signature. Empty (and absent from the bytes) in
    headers written before servers had the key."""

    @cached_property
    def seat_keys(self) -> tuple[bytes, ...]:
        """Each seat's key, in seat order."""
        return tuple(s.public_key for s in self.seats)

    @cached_property
    def bots(self) -> tuple[bool, ...]:
        """Whether each seat is a bot seat."""
        return tuple(s.bot for s in self.seats)

    def to_bytes(self) -> bytes:
        clock = None if self.clock is None else self.clock.to_json()
        attest = {"attest_key": self.attest_key.hex()} if self.attest_key else {}
        return canonical_json(
            {
                **attest,
                "format": HEADER_FORMAT,
                "match_id": self.match_id,
                "rules": self.config.to_dict(),
                "seats": [
                    {"bot": s.bot, "key": s.public_key.hex(), "name": s.name, "seat": s.seat}
                    for s in self.seats
                ],
                "server_key": self.server_key.hex(),
                "bot_key": self.bot_key.hex(),
                "clock": clock,
                "started_ms": self.started_ms,
                "first_dealer": self.first_dealer,
            }
        )

    @classmethod
    def from_bytes(cls, data: bytes) -> Header:
        """Read a header, refusing anything but the canonical bytes of a well-formed one."""
        if len(data) > MAX_HEADER_BYTES:
            raise MatchLogError(f"the header is larger than {MAX_HEADER_BYTES} bytes")
        parsed = parse_canonical(data, "header")
        names = {"format", "match_id", "rules", "seats", "server_key", "bot_key", "clock",
                 "started_ms", "first_dealer"}  # fmt: skip
        if isinstance(parsed, dict) and "attest_key" in parsed:  # headers from issue 16 on
            names.add("attest_key")
        value = json_fields(parsed, "header", names)
        if value["format"] != HEADER_FORMAT:
            raise MatchLogError(f"the header's format is not {HEADER_FORMAT!r}")
        # Options added to the engine after a header was written are absent from it and take
        # their defaults, which keep the game as it was before they existed: an old transcript
        # verifies with a newer release. Unknown options are refused.
        # Every option must also be within the range a server accepts (shared/rules/config.py),
        # which bounds the work a replay can be made to do.
        rules = value["rules"]
        if not isinstance(rules, dict) or not isinstance(rules.get("preset"), str):
            raise MatchLogError("the header's rules must be an object naming a preset")
        try:
            config = make_config(rules["preset"], stored_options(rules), limits=True)
        except (CanastaError, TypeError, ValueError, KeyError, RecursionError) as exc:
            problem = str(exc)[:200] if not isinstance(exc, RecursionError) else "too deep"
            raise MatchLogError(f"the header's rules cannot be used: {problem}") from None
        seats = value["seats"]
        if not isinstance(seats, list) or len(seats) != config.players:
            raise MatchLogError(f"the header must list {config.players} seats")
        keys = []
        for number, seat in enumerate(seats):
            seat = json_fields(seat, "seat", {"bot", "key", "name", "seat"})
            if type(seat["seat"]) is not int or seat["seat"] != number:
                raise MatchLogError(f"seat {number} of the header is malformed")
            if not isinstance(seat["bot"], bool):
                raise MatchLogError(f"seat {number}'s bot must be true or false")
            name = _text(seat["name"], "a seat's name", 40)
            if not name.isprintable():
                raise MatchLogError(f"seat {number}'s name holds characters that do not print")
            keys.append(SeatKey(number, name, seat["bot"], _hex(seat["key"], "a seat's key", 32)))
        clock = None
        if value["clock"] is not None:
            in_days = isinstance(value["clock"], dict) and "days_per_move" in value["clock"]
            unit = ("bank_days", "days_per_move") if in_days else ("bank_hours", "hours_per_move")
            fields = json_fields(value["clock"], "clock", {*unit, "on_timeout", "weekends_off"})
            if not isinstance(fields["weekends_off"], bool):
                raise MatchLogError("the clock's weekends_off must be true or false")
            if in_days:
                per_move = 24 * _int(fields["days_per_move"], "days_per_move", 1, 14)
                bank = 24 * _int(fields["bank_days"], "bank_days", 0, 30)
            else:
                per_move = _int(fields["hours_per_move"], "hours_per_move", 4, 14 * 24)
                bank = _int(fields["bank_hours"], "bank_hours", 0, 30 * 24)
            clock = Clock(per_move, bank, fields["weekends_off"], fields["on_timeout"])
            if clock.to_json().keys() != fields.keys():
                raise MatchLogError("the clock is not in its canonical form (days if whole)")
            if clock.on_timeout not in ("substitute", "forfeit"):
                raise MatchLogError("the clock's on_timeout must be substitute or forfeit")
        header = cls(
            match_id=_text(value["match_id"], "the match id", 64) or _no_match_id(),
            config=config,
            seats=tuple(keys),
            server_key=_hex(value["server_key"], "the server key", 32),
            bot_key=_hex(value["bot_key"], "the bot key", 32),
            clock=clock,
            started_ms=_int(value["started_ms"], "started_ms", 0, 2**53),
            first_dealer=_int(value["first_dealer"], "first_dealer", 0, config.players - 1),
            attest_key=_hex(value["attest_key"], "the attest key", 32)
            if "attest_key" in value
            else b"",
        )
        if all(s.bot for s in header.seats):
            raise MatchLogError("the header has no human seat")
        if any(
            not s.bot and s.public_key in (header.server_key, header.bot_key) for s in header.seats
        ):
            raise MatchLogError("a person's seat holds the server's or the bot's key")
        if any(not s.bot and s.public_key == header.attest_key for s in header.seats):
            raise MatchLogError("a person's seat holds the server's attest key")
        if header.attest_key in (header.server_key, header.bot_key):
            raise MatchLogError("the attest key must differ from the server's other keys")
        return header


def _no_match_id() -> str:
    raise MatchLogError("the match id must not be empty")


def header_hash(header: bytes) -> bytes:
    """The hash a match's chain starts from: the first entry's ``prev_hash``."""
    return hashlib.sha256(HEADER_TAG + header).digest()


# -- the protocol's rules beside the game's ----------------------------------------------------


def dealt_deck(
    config: RuleConfig, secret: bytes, match_id: str, hand_number: int, cut_signature: bytes
) -> list[Card]:
    """The deck order (top card first) of a hand: the fair-deal shuffle (``docs/fair-deal.md``)
    of the engine's canonical deck, seeded by the hand's secret and the cut's signature."""
    cards = deck(config.decks, config.jokers_per_deck)
    seed = deal_seed(secret, match_id, hand_number, [cut_signature])
    return [cards[i] for i in shuffle(len(cards), seed)]


def cutting_seat(bots: Sequence[bool], dealer: int) -> int:
    """Who cuts the deck before a hand: the dealer, or the next human clockwise from the
    dealer when the dealer is a bot (bots do not cut for humans who could). ``bots[s]`` says
    whether seat ``s`` is a bot seat; a match always has a human."""
    for step in range(len(bots)):
        seat = (dealer + step) % len(bots)
        if not bots[seat]:
            return seat
    raise ValueError("a match needs at least one human seat")


def next_state(
    state: GameState, match_id: str, move: Move, signature: bytes, secret: bytes | None
) -> GameState:
    """The state after one log entry: the engine applies a move; a cut deals the next hand
    from its secret (``secret`` is needed for cuts only). Raises the engine's error for an
    illegal move."""
    if move.is_deal:
        if secret is None:
            raise ValueError("a cut needs its hand's secret")
        order = dealt_deck(state.config, secret, match_id, state.hand_number + 1, signature)
        return deal_hand(state, order)
    return apply_turn(state, move.seat, parse_actions(move.actions))


# -- the acceptance rule -----------------------------------------------------------------------


class LogHeader(Protocol):
    """What the acceptance rule reads of a match's header. ``Header`` is one; the server reads
    the same facts from its stored match (``server.service.play``), where they were written
    from when the header was."""

    @property
    def match_id(self) -> str: ...

    @property
    def seat_keys(self) -> Sequence[bytes]:
        """Each seat's key (a bot seat's is the bot key)."""
        ...

    @property
    def bots(self) -> Sequence[bool]:
        """Whether each seat is a bot seat."""
        ...

    @property
    def bot_key(self) -> bytes: ...

    @property
    def attest_key(self) -> bytes:
        """Empty when the header names none: the match takes no attested moves."""
        ...


class CommittedHand(Protocol):
    """What is known of a hand before its cut: its commitment and the secret behind it."""

    @property
    def commitment(self) -> bytes: ...

    @property
    def secret(self) -> bytes: ...


class Signer(enum.Enum):
    """Whose key signed an entry."""

    SEAT = "seat"
    """The seat's own key (for a bot seat, the bot key)."""
    BOT = "bot"
    """The bot key for a human seat: a bot played for the absent player."""
    ATTEST = "attest"
    """The attest key: the server signed a person's move on their behalf (a mailed reply,
    a standing order)."""


@dataclass(frozen=True, slots=True)
class Signed:
    """Who signed an entry, and with which key."""

    by: Signer
    key: bytes

    @property
    def by_server(self) -> bool:
        """The server's bot or attest key signed it for a human seat."""
        return self.by is not Signer.SEAT


class Refusal(enum.Enum):
    """Why an entry is refused (``EntryRefusedError.reason``)."""

    NO_SEAT = "no seat"
    SIGNATURE = "signature"
    CUT_TIME = "cut time"
    CUT_MID_HAND = "cut mid hand"
    CUTTER = "cutter"
    NO_SECRET = "no secret"
    COMMITMENT = "commitment"
    SECRET = "secret"
    NOT_A_CUT = "commitment on a move"
    ILLEGAL = "illegal"


class EntryRefusedError(MatchLogError):
    """An entry the acceptance rule refuses: ``reason`` says why; the message is the
    verifier's (the server words each reason its own way, with its own status)."""

    def __init__(
        self,
        reason: Refusal,
        message: str,
        move: Move,
        *,
        hand: int = 0,
        cutter: int | None = None,
        error: Exception | None = None,
    ) -> None:
        super().__init__(message, move.seq)
        self.reason = reason
        self.seat = move.seat
        self.hand = hand
        """The hand a cut would deal (0 for a move that is not a cut)."""
        self.cutter = cutter
        """The seat that cuts (``Refusal.CUTTER``)."""
        self.error = error
        """The engine's own error (``Refusal.ILLEGAL``)."""


@dataclass(frozen=True, slots=True)
class Accepted:
    """An accepted entry: its move, who signed it, and the state after it."""

    move: Move
    signed: Signed
    state: GameState


def signer_of(header: LogHeader, move: Move, payload: bytes, signature: bytes) -> Signed:
    """Who signed ``payload`` for ``move.seat``: the seat's key, else the bot key, else (a
    human seat, in a match whose header names it) the attest key; ``EntryRefusedError`` for no seat
    or no key that may sign for it."""
    from shared.crypto.keys import verify  # cryptography: only to verify

    if not 0 <= move.seat < len(header.seat_keys):
        raise EntryRefusedError(Refusal.NO_SEAT, f"there is no seat {move.seat}", move)
    seat_key = header.seat_keys[move.seat]
    if verify(seat_key, payload, signature):
        return Signed(Signer.SEAT, seat_key)
    if verify(header.bot_key, payload, signature):
        return Signed(Signer.BOT, header.bot_key)
    if (
        not header.bots[move.seat]
        and header.attest_key
        and verify(header.attest_key, payload, signature)
    ):
        return Signed(Signer.ATTEST, header.attest_key)
    raise EntryRefusedError(
        Refusal.SIGNATURE,
        f"the signature is not seat {move.seat}'s (nor the bot's, nor attested by the server)",
        move,
    )


def apply_entry(
    header: LogHeader,
    state: GameState,
    move: Move,
    signature: bytes,
    hand_of: Callable[[int], CommittedHand | None],
) -> GameState:
    """The state after a signed move (its signer checked: ``signer_of``): a cut's rules, then
    the deal, or the engine's move. ``hand_of(number)`` is what is known of the hand a cut
    deals (None: nothing). ``EntryRefusedError`` says why the move may not follow ``state``."""
    secret = None
    if move.is_deal:
        secret = _cut_secret(header, state, move, hand_of)
    elif move.deal_commitment:
        raise EntryRefusedError(Refusal.NOT_A_CUT, "only a cut names a commitment", move)
    try:
        return next_state(state, header.match_id, move, signature, secret)
    except (CanastaError, ValueError, IndexError, KeyError) as exc:  # the engine refuses
        raise EntryRefusedError(
            Refusal.ILLEGAL, f"the move is not legal: {str(exc)[:300]}", move, error=exc
        ) from None


def accept_entry(
    header: LogHeader,
    state: GameState,
    payload: bytes,
    signature: bytes,
    hand_of: Callable[[int], CommittedHand | None],
) -> Accepted:
    """The whole rule for one entry after ``state``: the payload decodes (``WireError``
    otherwise), its signer may sign for its seat, and its move may follow. The position in the
    chain (match id, seq, ``prev_hash``) is the caller's to check."""
    move = move_from_bytes(payload)
    signed = signer_of(header, move, payload, signature)
    return Accepted(move, signed, apply_entry(header, state, move, signature, hand_of))


def _cut_secret(
    header: LogHeader,
    state: GameState,
    move: Move,
    hand_of: Callable[[int], CommittedHand | None],
) -> bytes:
    """A cut's rules: no time, between hands, the cutting seat, naming the commitment of the
    hand it deals, whose secret matches it. Returns the secret."""
    if move.client_time_ms != 0:
        raise EntryRefusedError(
            Refusal.CUT_TIME,
            "a cut carries a time: it could be signed again for another deal",
            move,
        )
    if state.phase is not Phase.DEAL:
        raise EntryRefusedError(Refusal.CUT_MID_HAND, "a cut in the middle of a hand", move)
    cutter = cutting_seat(header.bots, state.dealer)
    if move.seat != cutter:
        raise EntryRefusedError(
            Refusal.CUTTER, f"seat {move.seat} may not cut this hand", move, cutter=cutter
        )
    number = state.hand_number + 1
    hand = hand_of(number)
    if hand is None:
        message = f"hand {number}'s secret is not in the transcript"
        raise EntryRefusedError(Refusal.NO_SECRET, message, move, hand=number)
    if move.deal_commitment != hand.commitment:
        message = f"the cut names another commitment than hand {number}'s"
        raise EntryRefusedError(Refusal.COMMITMENT, message, move, hand=number)
    if not verify_commitment(hand.secret, header.match_id, number, hand.commitment):
        message = f"hand {number}'s secret does not match its commitment"
        raise EntryRefusedError(Refusal.SECRET, message, move, hand=number)
    return hand.secret
