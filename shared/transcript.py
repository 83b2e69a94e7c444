"""Verifiable transcripts: a match's whole record in one file, checked offline.

A transcript holds the match header (the rules, every option, the seats and their keys, the
server's keys), every log entry exactly as it was signed and stored, the server's receipt of
each, and the revealed secret of every hand that is over. ``verify`` checks all of it with
nothing but the file: every signature against the header's keys, the hash chain from the
header, every receipt against the header's server key, every deal against its commitment and
the cut's signature, every move replayed through the engine with the header's rules. It is the
one replay of a match log: the server loads matches with ``next_state``, the tests and the
``canasta verify`` command check with ``verify``.

The format is specified byte for byte in ``docs/transcript.md``. In short:

* The header is canonical JSON (keys sorted, no spaces, ASCII only, byte strings as lowercase
  hex) and ``header_hash = SHA-256(b"canasta.v1/header\\x00" || header)`` is the ``prev_hash``
  of the match's first entry: every signed move commits to the exact rules and seating.
* The file is canonical JSON too, one line. ``Transcript.from_bytes`` refuses any other
  spelling of the same content, so that no byte of a file can change without verification
  failing: every field is either covered by a hash or signature, or derived and checked.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from shared.crypto.chain import entry_hash, verify_end, verify_receipt
from shared.crypto.fairdeal import deal_seed, shuffle, verify_commitment
from shared.rules import (
    CanastaError,
    Card,
    GameState,
    HandResult,
    Phase,
    RuleConfig,
    apply_turn,
    deal_hand,
    deck,
    make_config,
    new_match,
)
from shared.rules.config import stored_options
from shared.rules.notation import parse_actions
from shared.wire import MAX_PAYLOAD_BYTES, Move, WireError, move_from_bytes

FORMAT = "canasta-transcript/1"
HEADER_FORMAT = "canasta-header/1"
HEADER_TAG = b"canasta.v1/header\x00"
MAX_FILE_BYTES = 64 * 1024 * 1024
"""A transcript larger than this is refused unread (a long match is a few megabytes)."""
MAX_HEADER_BYTES = 64 * 1024
"""A header larger than this is refused unparsed (six seats and every option: about 3 KiB)."""
MAX_DEPTH = 16
"""The deepest nesting of a well-formed header is 4 (``rules``, ``min_meld_table``, a row,
counting the header's own braces); anything past this is refused before parsing, so that no
header can exhaust the parser's recursion."""
MAX_SEQ = 2**63 - 1
"""The largest seq or hand number a file may name (a signed 64-bit integer)."""


class TranscriptError(ValueError):
    """The first problem found, and the log entry (its seq) where it was found, if any."""

    def __init__(self, message: str, seq: int | None = None) -> None:
        super().__init__(f"entry {seq}: {message}" if seq is not None else message)
        self.seq = seq


def canonical_json(value: object) -> bytes:
    """The one byte form of a JSON value used for headers and files: sorted keys, no spaces,
    ASCII only (other characters as ``\\uXXXX``), no NaN or infinity."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return text.encode("ascii")


def _parse_canonical(data: bytes, what: str) -> Any:
    """Parse canonical JSON; anything spelled otherwise (spaces, key order, escapes, numbers
    written differently) is refused, since those bytes would be covered by nothing. Only for
    small documents (a header, an end's outcome): the caller bounds their size first."""
    if _too_deep(data):
        raise TranscriptError(f"the {what} nests deeper than {MAX_DEPTH} levels")
    try:
        value = json.loads(data.decode("ascii"), parse_constant=_no_constant)
        canonical = canonical_json(value)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise TranscriptError(f"the {what} is not JSON: {type(exc).__name__}") from None
    if canonical != data:
        raise TranscriptError(f"the {what} is not in canonical form (docs/transcript.md)")
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
        raise TranscriptError(f"{what} must be lowercase hex")
    try:
        raw = bytes.fromhex(value)
    except ValueError:
        raise TranscriptError(f"{what} must be lowercase hex") from None
    if raw.hex() != value or (size is not None and len(raw) != size):
        raise TranscriptError(f"{what} must be {size} bytes of lowercase hex")
    return raw


def _fields(value: object, what: str, names: set[str]) -> Mapping[str, Any]:
    """A JSON object with exactly the keys ``names``."""
    if not isinstance(value, dict):
        raise TranscriptError(f"the {what} must be a JSON object")
    if set(value) != names:
        extra, missing = sorted(set(value) - names), sorted(names - set(value))
        raise TranscriptError(f"the {what} has unknown fields {extra} or lacks {missing}")
    return value


def _int(value: object, what: str, low: int = 0, high: int = 2**63 - 1) -> int:
    if type(value) is not int or not low <= value <= high:
        raise TranscriptError(f"{what} must be an integer from {low} to {high}")
    return value


def _text(value: object, what: str, longest: int = 200) -> str:
    if not isinstance(value, str) or len(value) > longest:
        raise TranscriptError(f"{what} must be text of at most {longest} characters")
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
            raise TranscriptError(f"the header is larger than {MAX_HEADER_BYTES} bytes")
        parsed = _parse_canonical(data, "header")
        names = {"format", "match_id", "rules", "seats", "server_key", "bot_key", "clock",
                 "started_ms", "first_dealer"}  # fmt: skip
        if isinstance(parsed, dict) and "attest_key" in parsed:  # headers from issue 16 on
            names.add("attest_key")
        value = _fields(parsed, "header", names)
        if value["format"] != HEADER_FORMAT:
            raise TranscriptError(f"the header's format is not {HEADER_FORMAT!r}")
        # Options added to the engine after a header was written are absent from it and take
        # their defaults, which keep the game as it was before they existed: an old transcript
        # verifies with a newer release. Unknown options are refused.
        # Every option must also be within the range a server accepts (shared/rules/config.py),
        # which bounds the work a replay can be made to do.
        rules = value["rules"]
        if not isinstance(rules, dict) or not isinstance(rules.get("preset"), str):
            raise TranscriptError("the header's rules must be an object naming a preset")
        try:
            config = make_config(rules["preset"], stored_options(rules), limits=True)
        except (CanastaError, TypeError, ValueError, KeyError, RecursionError) as exc:
            problem = str(exc)[:200] if not isinstance(exc, RecursionError) else "too deep"
            raise TranscriptError(f"the header's rules cannot be used: {problem}") from None
        seats = value["seats"]
        if not isinstance(seats, list) or len(seats) != config.players:
            raise TranscriptError(f"the header must list {config.players} seats")
        keys = []
        for number, seat in enumerate(seats):
            seat = _fields(seat, "seat", {"bot", "key", "name", "seat"})
            if type(seat["seat"]) is not int or seat["seat"] != number:
                raise TranscriptError(f"seat {number} of the header is malformed")
            if not isinstance(seat["bot"], bool):
                raise TranscriptError(f"seat {number}'s bot must be true or false")
            name = _text(seat["name"], "a seat's name", 40)
            if not name.isprintable():
                raise TranscriptError(f"seat {number}'s name holds characters that do not print")
            keys.append(SeatKey(number, name, seat["bot"], _hex(seat["key"], "a seat's key", 32)))
        clock = None
        if value["clock"] is not None:
            in_days = isinstance(value["clock"], dict) and "days_per_move" in value["clock"]
            unit = ("bank_days", "days_per_move") if in_days else ("bank_hours", "hours_per_move")
            fields = _fields(value["clock"], "clock", {*unit, "on_timeout", "weekends_off"})
            if not isinstance(fields["weekends_off"], bool):
                raise TranscriptError("the clock's weekends_off must be true or false")
            if in_days:
                per_move = 24 * _int(fields["days_per_move"], "days_per_move", 1, 14)
                bank = 24 * _int(fields["bank_days"], "bank_days", 0, 30)
            else:
                per_move = _int(fields["hours_per_move"], "hours_per_move", 4, 14 * 24)
                bank = _int(fields["bank_hours"], "bank_hours", 0, 30 * 24)
            clock = Clock(per_move, bank, fields["weekends_off"], fields["on_timeout"])
            if clock.to_json().keys() != fields.keys():
                raise TranscriptError("the clock is not in its canonical form (days if whole)")
            if clock.on_timeout not in ("substitute", "forfeit"):
                raise TranscriptError("the clock's on_timeout must be substitute or forfeit")
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
            raise TranscriptError("the header has no human seat")
        if any(
            not s.bot and s.public_key in (header.server_key, header.bot_key) for s in header.seats
        ):
            raise TranscriptError("a person's seat holds the server's or the bot's key")
        if any(not s.bot and s.public_key == header.attest_key for s in header.seats):
            raise TranscriptError("a person's seat holds the server's attest key")
        if header.attest_key in (header.server_key, header.bot_key):
            raise TranscriptError("the attest key must differ from the server's other keys")
        return header


def _no_match_id() -> str:
    raise TranscriptError("the match id must not be empty")


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


# -- the file ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LoggedMove:
    """One log entry as stored: the signed payload bytes, their signature, the receipt."""

    seq: int
    payload: bytes
    signature: bytes
    receipt: bytes


@dataclass(frozen=True, slots=True)
class HandSecret:
    """A hand that is over: its commitment, the secret revealed, the seq of its cut."""

    hand_number: int
    commitment: bytes
    secret: bytes
    deal_seq: int


@dataclass(frozen=True, slots=True)
class MatchEnd:
    """The server's word that a match ended with its entry ``seq``: ``outcome`` (canonical
    JSON, ``end_outcome``) and the server key's signature over both
    (``shared.crypto.chain.end_message``). A file that holds it cannot lose its last entries
    unnoticed: the end names the last one."""

    seq: int
    outcome: bytes
    signature: bytes


RESULTS = ("finished", "abandoned")
"""How a match ends: its last move ended it, or it was abandoned (agreed before the first deal,
an overdue first cut, or the operator) and takes no more moves."""
MAX_OUTCOME_BYTES = 1024
"""An end's outcome larger than this is refused unparsed (six scores and winners: 100 bytes)."""


def end_outcome(state: GameState, abandoned: bool) -> bytes:
    """What a match's end states about it: how it ended, the score of every column, and the
    winning columns (none when abandoned). The server signs it; a verifier replays the file
    and must find the same."""
    return canonical_json(
        {
            "result": "abandoned" if abandoned else "finished",
            "scores": list(state.scores),
            "winners": [] if abandoned else list(state.winners),
        }
    )


_INT = rb"(0|[1-9][0-9]{0,18})"
_ENTRY = re.compile(
    rb"\["
    + _INT
    + rb',"([0-9a-f]{0,%d})","([0-9a-f]{128})","([0-9a-f]{128})"\]' % (2 * MAX_PAYLOAD_BYTES)
)
_HAND = re.compile(rb"\[" + _INT + rb',"([0-9a-f]{64})","([0-9a-f]{64})",' + _INT + rb"\]")
_END = re.compile(
    rb'"end":\[' + _INT + rb',"([0-9a-f]{0,%d})","([0-9a-f]{128})"\],' % (2 * MAX_OUTCOME_BYTES)
)
_HEADER = re.compile(rb'"header":"([0-9a-f]{0,%d})"\}\n\Z' % (2 * MAX_HEADER_BYTES))
_FILE_FORMAT = b'"format":"' + FORMAT.encode() + b'",'


class _Reader:
    """Reads a file in its one canonical spelling, field by field, without building a
    general JSON tree: each string is matched against its field's pattern, which bounds its
    length, so memory stays a small multiple of the file whatever the file holds."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def take(self, literal: bytes) -> bool:
        if self.data.startswith(literal, self.at):
            self.at += len(literal)
            return True
        return False

    def expect(self, literal: bytes, what: str) -> None:
        if not self.take(literal):
            raise TranscriptError(
                f"the file is not a canonical {FORMAT} file (docs/transcript.md): {what} "
                f"expected at byte {self.at}"
            )

    def match(self, pattern: re.Pattern[bytes]) -> re.Match[bytes] | None:
        found = pattern.match(self.data, self.at)
        if found is not None:
            self.at = found.end()
        return found

    def rows(self, pattern: re.Pattern[bytes], what: str) -> Iterator[re.Match[bytes]]:
        """The rows of a list, each matching ``pattern``: ``[]`` or ``[row,row,...]``
        (yielded one at a time: the caller keeps only what it decodes)."""
        self.expect(b"[", "a list of " + what)
        if self.take(b"]"):
            return
        number = 1
        while (row := self.match(pattern)) is not None:
            yield row
            if self.take(b"]"):
                return
            self.expect(b",", "a comma")
            number += 1
        raise TranscriptError(_row_problem(what, number))


def _row_problem(what: str, number: int) -> str:
    if what == "entries":
        return (
            f'entry {number}: not [seq,"payload","signature","receipt"] in canonical '
            f"form (a plain integer; lowercase hex: a payload of at most {MAX_PAYLOAD_BYTES} "
            "bytes, signature and receipt of 64 bytes each)"
        )
    return (
        f'hand row {number}: not [hand_number,"commitment","secret",deal_seq] in canonical '
        "form (plain integers; commitment and secret of 32 bytes each, as lowercase hex)"
    )


def _number(text: bytes, what: str, low: int = 1) -> int:
    value = int(text)
    if not low <= value <= MAX_SEQ:
        raise TranscriptError(f"{what} must be an integer from {low} to {MAX_SEQ}")
    return value


def _even_hex(text: bytes, what: str) -> bytes:
    if len(text) % 2:
        raise TranscriptError(f"{what} must be whole bytes of lowercase hex")
    return bytes.fromhex(text.decode("ascii"))


@dataclass(frozen=True)
class Transcript:
    header: bytes
    entries: tuple[LoggedMove, ...]
    hands: tuple[HandSecret, ...]
    end: MatchEnd | None = None
    """The server-signed end of a finished or abandoned match; None for a match in progress
    (and in files written before ends were recorded)."""

    def to_bytes(self) -> bytes:
        end = self.end
        ended = {} if end is None else {"end": [end.seq, end.outcome.hex(), end.signature.hex()]}
        return (
            canonical_json(
                {
                    **ended,
                    "format": FORMAT,
                    "header": self.header.hex(),
                    "entries": [
                        [e.seq, e.payload.hex(), e.signature.hex(), e.receipt.hex()]
                        for e in self.entries
                    ],
                    "hands": [
                        [h.hand_number, h.commitment.hex(), h.secret.hex(), h.deal_seq]
                        for h in self.hands
                    ],
                }
            )
            + b"\n"
        )

    @classmethod
    def from_bytes(cls, data: bytes) -> Transcript:
        """Read a file, refusing every spelling but the canonical one (``to_bytes``) and
        every string longer than its field allows, before anything is decoded."""
        if len(data) > MAX_FILE_BYTES:
            raise TranscriptError(f"the file is larger than {MAX_FILE_BYTES} bytes")
        if not data.endswith(b"\n"):
            raise TranscriptError("the file must end with one newline")
        reader = _Reader(data)
        reader.expect(b"{", "an object")
        end = None
        if (found := reader.match(_END)) is not None:
            try:
                ended = _number(found[1], "its seq", 0), _even_hex(found[2], "its outcome")
            except TranscriptError as exc:
                raise TranscriptError(f"end: {exc}") from None
            end = MatchEnd(*ended, bytes.fromhex(found[3].decode("ascii")))
        reader.expect(b'"entries":', '"entries" (or a canonical "end" before it)')
        logged = []
        for number, row in enumerate(reader.rows(_ENTRY, "entries"), 1):
            try:
                seq = _number(row[1], "the seq")
                payload = _even_hex(row[2], "the payload")
            except TranscriptError as exc:
                raise TranscriptError(str(exc), number) from None
            signature, receipt = (bytes.fromhex(row[i].decode("ascii")) for i in (3, 4))
            logged.append(LoggedMove(seq, payload, signature, receipt))
        reader.expect(b"," + _FILE_FORMAT, f'"format":"{FORMAT}"')
        reader.expect(b'"hands":', '"hands"')
        secrets = []
        for number, row in enumerate(reader.rows(_HAND, "hands"), 1):
            try:
                hand, deal_seq = _number(row[1], "the hand number"), _number(row[4], "deal_seq")
            except TranscriptError as exc:
                raise TranscriptError(f"hand row {number}: {exc}") from None
            commitment, secret = (bytes.fromhex(row[i].decode("ascii")) for i in (2, 3))
            secrets.append(HandSecret(hand, commitment, secret, deal_seq))
        reader.expect(b",", "a comma")
        header = reader.match(_HEADER)
        if header is None:
            raise TranscriptError(
                f"the file must end with the header: at most {MAX_HEADER_BYTES} bytes as "
                "lowercase hex, then } and one newline"
            )
        return cls(_even_hex(header[1], "the header"), tuple(logged), tuple(secrets), end)


# -- verification ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Report:
    """What a verified transcript shows."""

    header: Header
    state: GameState
    """The position after the last entry."""
    entries: int
    by_bot: int
    """Entries signed by the bot key for a human seat (a bot covered an absent player)."""
    hands: tuple[HandResult, ...]
    """The result of every hand that ended, in order."""
    server_cuts: tuple[int, ...] = ()
    """Hands whose cut the server signed (its bot for an absent player, or its attest key for
    a player's mailed reply): the server knew the secret and signed the cut, so it could have
    chosen that deal (docs/fair-deal.md)."""
    attested: tuple[int, ...] = ()
    """The seqs of the entries the server signed with its attest key on a player's behalf
    (moves made by replying to a mail): the player's mail, not the player's key, vouches for
    them."""
    result: str = ""
    """``"finished"`` (the last entry ends the match), ``"abandoned"`` (the server's signed
    end says so), or ``""``: in progress, or cut short (nothing in the file says which)."""
    end_signed: bool = False
    """The file holds the server's signed end (``MatchEnd``), checked: no entry can be missing
    from its end. A finished match's file written before ends were recorded has none."""

    @property
    def finished(self) -> bool:
        return self.state.phase is Phase.MATCH_OVER


def verify(transcript: Transcript) -> Report:
    """Check everything in a transcript and replay it; raises ``TranscriptError`` naming the
    first problem and its entry. See the module docstring for what is checked."""
    from shared.crypto.keys import verify as verify_signature  # cryptography: only to verify

    try:
        header = Header.from_bytes(transcript.header)
    except TranscriptError as exc:
        raise TranscriptError(f"header: {exc}") from None
    hands: dict[int, HandSecret] = {}
    for hand in transcript.hands:
        if hand.hand_number != len(hands) + 1:
            raise TranscriptError(
                f"hand row {len(hands) + 1}: it names hand {hand.hand_number}; the rows list "
                "hands 1, 2, ... in order, once each"
            )
        hands[hand.hand_number] = hand
    match_id = header.match_id
    bots = [s.bot for s in header.seats]
    prev = header_hash(transcript.header)
    state = new_match(header.config, first_dealer=header.first_dealer)
    by_bot = 0
    attested: list[int] = []
    server_cuts: list[int] = []
    results: list[HandResult] = []
    for number, entry in enumerate(transcript.entries, 1):
        if entry.seq != number:
            raise TranscriptError(
                f"expected entry {number} here (entries missing or moved)", entry.seq
            )
        try:
            move = move_from_bytes(entry.payload)
        except WireError as exc:
            raise TranscriptError(f"the payload cannot be read: {exc}", number) from None
        if move.match_id != match_id or move.seq != number:
            raise TranscriptError("the signed payload names another match or seq", number)
        if move.prev_hash != prev:
            raise TranscriptError("the signed payload does not follow the previous entry", number)
        if not 0 <= move.seat < len(bots):
            raise TranscriptError(f"there is no seat {move.seat}", number)
        seat_key = header.seats[move.seat].public_key
        server_signed = False  # by the bot key or the attest key: the server signed it
        if verify_signature(seat_key, entry.payload, entry.signature):
            server_signed = bots[move.seat]
        elif verify_signature(header.bot_key, entry.payload, entry.signature):
            server_signed = True
            by_bot += 0 if bots[move.seat] else 1  # a bot played for an absent player
        elif (
            header.attest_key
            and not bots[move.seat]
            and verify_signature(header.attest_key, entry.payload, entry.signature)
        ):
            server_signed = True
            attested.append(number)
        else:
            raise TranscriptError(
                f"the signature is not seat {move.seat}'s (nor the bot's, nor attested by "
                "the server)",
                number,
            )
        digest = entry_hash(prev, entry.payload, entry.signature)
        if not verify_receipt(header.server_key, match_id, number, digest, entry.receipt):
            raise TranscriptError("the receipt is not the server's signature of this entry", number)
        secret = None
        if move.is_deal:
            secret = _check_cut(header, state, hands, move, number, bots)
            if server_signed and not bots[move.seat]:
                server_cuts.append(state.hand_number + 1)
        elif move.deal_commitment:
            raise TranscriptError("only a cut names a commitment", number)
        before = state
        try:
            state = next_state(state, match_id, move, entry.signature, secret)
        except (CanastaError, ValueError, IndexError, KeyError) as exc:  # the engine refuses
            raise TranscriptError(f"the move is not legal: {str(exc)[:300]}", number) from None
        if state.last_hand is not None and state.last_hand is not before.last_hand:
            results.append(state.last_hand)
        prev = digest
    if len(hands) > state.hand_number:
        raise TranscriptError(
            f"hand row {state.hand_number + 1}: no entry deals hand {state.hand_number + 1}"
        )
    if transcript.end is not None:
        result = _check_end(header, transcript.end, len(transcript.entries), prev, state)
    else:
        result = "finished" if state.phase is Phase.MATCH_OVER else ""
    return Report(
        header,
        state,
        len(transcript.entries),
        by_bot,
        tuple(results),
        tuple(server_cuts),
        tuple(attested),
        result,
        transcript.end is not None,
    )


def _check_end(
    header: Header, end: MatchEnd, count: int, last_hash: bytes, state: GameState
) -> str:
    """The end's checks: it names the file's last entry (so none is missing), the server key
    signed it over that entry's hash, and its outcome is the replay's. Returns the result."""
    if end.seq != count:
        raise TranscriptError(
            f"end: it names entry {end.seq} as the match's last, but the file's last entry is "
            f"{count}: entries are missing (or added)"
        )
    if len(end.outcome) > MAX_OUTCOME_BYTES:
        raise TranscriptError(f"end: the outcome is larger than {MAX_OUTCOME_BYTES} bytes")
    if not verify_end(
        header.server_key, header.match_id, end.seq, last_hash, end.outcome, end.signature
    ):
        raise TranscriptError("end: it is not the server's signature of this match's end")
    try:
        outcome = _fields(
            _parse_canonical(end.outcome, "outcome"), "outcome", {"result", "scores", "winners"}
        )
    except TranscriptError as exc:
        raise TranscriptError(f"end: {exc}") from None
    result = outcome["result"]
    if result not in RESULTS:
        raise TranscriptError(f"end: the result must be one of {', '.join(RESULTS)}")
    over = state.phase is Phase.MATCH_OVER
    if over != (result == "finished") or end.outcome != end_outcome(state, not over):
        raise TranscriptError(
            f"end: the server's end says {end.outcome.decode('ascii', 'replace')[:200]}, "
            f"but the replay ends {end_outcome(state, not over).decode()}"
        )
    return str(result)


def _check_cut(
    header: Header,
    state: GameState,
    hands: Mapping[int, HandSecret],
    move: Move,
    seq: int,
    bots: Sequence[bool],
) -> bytes:
    """A cut's checks: the right seat cut, naming the hand's commitment, whose secret is
    revealed and matches it. Returns the secret."""
    if state.phase is not Phase.DEAL:
        raise TranscriptError("a cut in the middle of a hand", seq)
    if move.client_time_ms != 0:
        raise TranscriptError(
            "a cut carries a time: it could be signed again for another deal", seq
        )
    if move.seat != cutting_seat(bots, state.dealer):
        raise TranscriptError(f"seat {move.seat} may not cut this hand", seq)
    number = state.hand_number + 1
    hand = hands.get(number)
    if hand is None:
        raise TranscriptError(f"hand {number}'s secret is not in the transcript", seq)
    if hand.deal_seq != seq:
        raise TranscriptError(f"hand {number}'s record names entry {hand.deal_seq} as its cut", seq)
    if move.deal_commitment != hand.commitment:
        raise TranscriptError(f"the cut names another commitment than hand {number}'s", seq)
    if not verify_commitment(hand.secret, header.match_id, number, hand.commitment):
        raise TranscriptError(f"hand {number}'s secret does not match its commitment", seq)
    return hand.secret
