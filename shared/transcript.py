"""Verifiable transcripts: a match's whole record in one file, checked offline.

A transcript holds the match header (the rules, every option, the seats and their keys, the
server's keys), every log entry exactly as it was signed and stored, the server's receipt of
each, and the revealed secret of every hand that is over. ``verify`` checks all of it with
nothing but the file: every signature against the header's keys, the hash chain from the
header, every receipt against the header's server key, every deal against its commitment and
the cut's signature, every move replayed through the engine with the header's rules. What each
entry must be is ``shared.matchlog``'s rule (``accept_entry``), the one the server stores moves
by; this module adds the file, the chain, the receipts and the server's signed end. The tests
and the ``canasta verify`` command check with ``verify``.

The format is specified byte for byte in ``docs/transcript.md``. In short:

* The header is canonical JSON (keys sorted, no spaces, ASCII only, byte strings as lowercase
  hex) and ``header_hash = SHA-256(b"canasta.v1/header\\x00" || header)`` is the ``prev_hash``
  of the match's first entry: every signed move commits to the exact rules and seating.
* The file is canonical JSON too, one line. ``Transcript.from_bytes`` refuses any other
  spelling of the same content, so that no byte of a file can change without verification
  failing: every field is either covered by a hash or signature, or derived and checked.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from shared.crypto.chain import entry_hash, verify_end, verify_receipt

# The header and the rules of an entry live in shared.matchlog; what this module named before it
# existed is named here still (``X as X``: re-exported).
from shared.matchlog import HEADER_FORMAT as HEADER_FORMAT
from shared.matchlog import HEADER_TAG as HEADER_TAG
from shared.matchlog import MAX_DEPTH as MAX_DEPTH
from shared.matchlog import MAX_HEADER_BYTES as MAX_HEADER_BYTES
from shared.matchlog import Clock as Clock
from shared.matchlog import Header as Header
from shared.matchlog import MatchLogError, Signer, accept_entry, json_fields, parse_canonical
from shared.matchlog import SeatKey as SeatKey
from shared.matchlog import canonical_json as canonical_json
from shared.matchlog import cutting_seat as cutting_seat
from shared.matchlog import dealt_deck as dealt_deck
from shared.matchlog import header_hash as header_hash
from shared.matchlog import next_state as next_state
from shared.rules import GameState, HandResult, Phase, new_match
from shared.talk import KINDS as TALK_KINDS
from shared.talk import MAX_CONVENTIONS, TalkHead, TalkLine, verify_talk
from shared.wire import MAX_PAYLOAD_BYTES, WireError, move_from_bytes

FORMAT = "canasta-transcript/1"
MAX_FILE_BYTES = 64 * 1024 * 1024
"""A transcript larger than this is refused unread (a long match is a few megabytes)."""
MAX_SEQ = 2**63 - 1
"""The largest seq or hand number a file may name (a signed 64-bit integer)."""


TranscriptError = MatchLogError
"""The first problem found, and the log entry (its seq) where it was found, if any: the one
error of the header (``shared.matchlog``), the file and ``verify``."""


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


def end_outcome(state: GameState, abandoned: bool, talk: TalkHead | None = None) -> bytes:
    """What a match's end states about it: how it ended, the score of every column, the
    winning columns (none when abandoned), and when the match has table talk, the talk
    chain's count and head hash (``talk``; absent without talk, so that no end of a match
    without talk changes). The server signs it; a verifier replays the file and must find
    the same."""
    talked = {} if talk is None or not talk.count else {"talk": talk.outcome_field()}
    return canonical_json(
        {
            "result": "abandoned" if abandoned else "finished",
            "scores": list(state.scores),
            **talked,
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
_HEADER = re.compile(rb'"header":"([0-9a-f]{0,%d})"(?=\}\n\Z|,"talk":)' % (2 * MAX_HEADER_BYTES))
_TALK = re.compile(
    rb"\["
    + _INT
    + rb',"(%s)",([0-9]),' % "|".join(TALK_KINDS).encode()
    + _INT
    + rb',"([0-9a-f]{64})",'
    + _INT
    + rb',"([0-9a-f]{0,%d})","([0-9a-f]{128})","([0-9a-f]{128})"\]' % (8 * MAX_CONVENTIONS)
)
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
    if what == "talk entries":
        return (
            f'talk row {number}: not [seq,"kind",seat,at_seq,"at_hash",client_time_ms,"text",'
            '"signature","receipt"] in canonical form (plain integers; the kind say or '
            "conventions; lowercase hex: a 32-byte hash, the text's UTF-8 bytes, signature and "
            "receipt of 64 bytes each)"
        )
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
    talk: tuple[TalkLine, ...] = ()
    """The match's table talk (``shared.talk``), in order; a file without talk has no
    ``talk`` key at all, so its bytes are those of a file written before talk existed."""

    def to_bytes(self) -> bytes:
        end = self.end
        ended = {} if end is None else {"end": [end.seq, end.outcome.hex(), end.signature.hex()]}
        talked = {"talk": [_talk_row(t) for t in self.talk]} if self.talk else {}
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
                    **talked,
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
                "lowercase hex, then } and one newline (or the talk, then })"
            )
        talk = []
        if reader.take(b',"talk":'):
            for number, row in enumerate(reader.rows(_TALK, "talk entries"), 1):
                talk.append(_talk_line(row, number))
            if not talk:
                raise TranscriptError('a file without talk has no "talk" key')
            reader.expect(b"}\n", "} and one newline")
            if reader.at != len(data):
                raise TranscriptError("the file must end after the talk with } and one newline")
        return cls(
            _even_hex(header[1], "the header"), tuple(logged), tuple(secrets), end, tuple(talk)
        )


def _talk_row(line: TalkLine) -> list[object]:
    return [
        line.seq,
        line.kind,
        line.seat,
        line.at_seq,
        line.at_hash.hex(),
        line.client_time_ms,
        line.text.encode("utf-8").hex(),
        line.signature.hex(),
        line.receipt.hex(),
    ]


def _talk_line(row: re.Match[bytes], number: int) -> TalkLine:
    try:
        seq = _number(row[1], "the seq")
        at_seq = _number(row[4], "at_seq", 0)
        client_ms = _number(row[6], "client_time_ms", 0)
        text = _even_hex(row[7], "the text").decode("utf-8")
    except TranscriptError as exc:
        raise TranscriptError(f"talk row {number}: {exc}") from None
    except UnicodeDecodeError:
        raise TranscriptError(f"talk row {number}: the text is not UTF-8") from None
    signature, receipt = (bytes.fromhex(row[i].decode("ascii")) for i in (8, 9))
    return TalkLine(
        seq,
        row[2].decode("ascii"),
        int(row[3]),
        at_seq,
        bytes.fromhex(row[5].decode("ascii")),
        client_ms,
        text,
        signature,
        receipt,
    )


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
    talk: int = 0
    """Talk entries verified (``shared.talk``): each signed by its seat, chained, bound to
    the move log where it was said, receipted; with a signed end, none missing at the end."""

    @property
    def finished(self) -> bool:
        return self.state.phase is Phase.MATCH_OVER


def verify(transcript: Transcript) -> Report:
    """Check everything in a transcript and replay it; raises ``TranscriptError`` naming the
    first problem and its entry. See the module docstring for what is checked."""
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
    prev = header_hash(transcript.header)
    hashes = [prev]  # entry n's hash at n; the header's at 0 (for the talk's positions)
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
        before = state
        hand_of = _revealed(hands, number)
        accepted = accept_entry(header, state, entry.payload, entry.signature, hand_of)
        state, signed = accepted.state, accepted.signed
        if signed.by is Signer.BOT and not header.bots[move.seat]:
            by_bot += 1  # a bot played for an absent player
        elif signed.by is Signer.ATTEST:
            attested.append(number)
        if move.is_deal and signed.by_server:  # the server knew the secret and signed the cut
            server_cuts.append(state.hand_number)
        digest = entry_hash(prev, entry.payload, entry.signature)
        if not verify_receipt(header.server_key, match_id, number, digest, entry.receipt):
            raise TranscriptError("the receipt is not the server's signature of this entry", number)
        if state.last_hand is not None and state.last_hand is not before.last_hand:
            results.append(state.last_hand)
        prev = digest
        hashes.append(digest)
    if len(hands) > state.hand_number:
        raise TranscriptError(
            f"hand row {state.hand_number + 1}: no entry deals hand {state.hand_number + 1}"
        )
    talk = verify_talk(header, hashes[0], transcript.talk, hashes)
    if transcript.end is not None:
        result = _check_end(header, transcript.end, len(transcript.entries), prev, state, talk)
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
        talk.count,
    )


def _check_end(
    header: Header,
    end: MatchEnd,
    count: int,
    last_hash: bytes,
    state: GameState,
    talk: TalkHead | None = None,
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
        parsed = parse_canonical(end.outcome, "outcome")
        fields = {"result", "scores", "winners"}
        if isinstance(parsed, dict) and "talk" in parsed:
            fields.add("talk")
        outcome = json_fields(parsed, "outcome", fields)
    except TranscriptError as exc:
        raise TranscriptError(f"end: {exc}") from None
    result = outcome["result"]
    if result not in RESULTS:
        raise TranscriptError(f"end: the result must be one of {', '.join(RESULTS)}")
    named = outcome.get("talk", [0, ""])
    mine = talk.outcome_field() if talk is not None and talk.count else [0, ""]
    if named != mine:
        raise TranscriptError(
            f"end: it names {_talk_count(named)} talk entries (ending with hash "
            f"{str(named[1] if isinstance(named, list) and len(named) > 1 else '')[:16]}...), "
            f"but the file's talk has {mine[0]} (ending with hash {str(mine[1])[:16]}...): "
            "talk entries are missing (or added)"
        )
    over = state.phase is Phase.MATCH_OVER
    if over != (result == "finished") or end.outcome != end_outcome(state, not over, talk):
        raise TranscriptError(
            f"end: the server's end says {end.outcome.decode('ascii', 'replace')[:200]}, "
            f"but the replay ends {end_outcome(state, not over, talk).decode()}"
        )
    return str(result)


def _revealed(hands: Mapping[int, HandSecret], seq: int) -> Callable[[int], HandSecret | None]:
    """What the file holds of the hand a cut at entry ``seq`` deals (``shared.matchlog``'s
    ``hand_of``): its row, which must name that entry as its cut."""

    def hand_of(number: int) -> HandSecret | None:
        hand = hands.get(number)
        if hand is not None and hand.deal_seq != seq:
            raise TranscriptError(
                f"hand {number}'s record names entry {hand.deal_seq} as its cut", seq
            )
        return hand

    return hand_of


def _talk_count(named: object) -> str:
    if isinstance(named, list) and named and type(named[0]) is int:
        return str(named[0])
    return "?"
