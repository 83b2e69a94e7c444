"""Table talk: what a match's players say to the whole table, signed and chained beside its log.

A match has one talk channel, which every seat reads: there is no private channel between
partners (partners who can phone each other are the game's old problem; what is said is said to
the whole table and kept in the record). A side may also publish its agreements, a talk entry of
the kind ``conventions``.

Talk lives in a side log with its own hash chain, never in the move log: saying something never
makes a player's pending move stale. Each talk entry is bound to the move log at the position
where it was said (the seq and hash of the log's head then), and signed by the seat's own key
(never the bot key or the attest key: bots and the server do not talk). All encodings are fixed
here, byte for byte (``docs/transcript.md``, "Table talk"); ``lp(x) = uint32_be(len(x)) || x``:

* ``talk_message = b"canasta.v1/talk\\x00" || lp(utf8(match_id)) || uint64_be(seq) ||
  prev_hash || uint64_be(at_seq) || at_hash || uint32_be(seat) || uint64_be(client_time_ms) ||
  lp(utf8(kind)) || lp(utf8(text))``: what the seat's key signs. ``seq`` counts talk entries
  from 1; ``prev_hash`` is the previous talk entry's hash (the match header's hash for the
  first); ``at_seq`` and ``at_hash`` name the move log's entry that was its head when it was
  said (0 and the header's hash before the first move).
* ``talk_hash = SHA-256(b"canasta.v1/talk-entry\\x00" || lp(talk_message) || lp(signature))``.
* ``talk_receipt = Ed25519(server key, b"canasta.v1/talk-receipt\\x00" || lp(utf8(match_id)) ||
  uint64_be(seq) || talk_hash)``: the server's word that it stored talk entry ``seq``.

The server's signed end of a match that has talk names the talk chain's count and head hash in
its outcome (``shared.transcript.end_outcome``), so a file cannot lose its last talk entries
unnoticed either. The chain, the signatures, the positions and the receipts are checked by
``verify_talk`` (the verifier's, through ``shared.transcript.verify``).

What may be said is bounded here too (``text_problem``): printable text only, so that nothing
said can alter how a table, a mail, a web page or a calendar shows it.
"""

from __future__ import annotations

import hashlib
import struct
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from shared.crypto.chain import HASH_SIZE
from shared.matchlog import MatchLogError

if TYPE_CHECKING:
    from shared.crypto.keys import PrivateKey
    from shared.matchlog import Header

TALK_TAG = b"canasta.v1/talk\x00"
TALK_ENTRY_TAG = b"canasta.v1/talk-entry\x00"
TALK_RECEIPT_TAG = b"canasta.v1/talk-receipt\x00"

SAY = "say"
CONVENTIONS = "conventions"
KINDS = (SAY, CONVENTIONS)
"""What a talk entry is: something said, or a side's declared conventions."""

MAX_SAY = 280
"""The most characters (code points) one message may have."""
MAX_CONVENTIONS = 1000
"""The most characters a side's conventions may have."""
MAX_COMBINING = 3
"""The most combining marks one character may carry (more stacks over the lines around it)."""
MAX_TIME_MS = 2**53
"""The largest client time a talk entry may name."""
MAX_TALK = 100_000
"""The most talk entries a file may hold (50 a day per player stays far below it)."""

_MAX_U64 = 2**64 - 1
_MAX_FIELD = 2**32 - 1


def limit_of(kind: str) -> int:
    return MAX_CONVENTIONS if kind == CONVENTIONS else MAX_SAY


def _lp(data: bytes) -> bytes:
    if len(data) > _MAX_FIELD:
        raise ValueError("field too long to length-prefix")
    return struct.pack(">I", len(data)) + data


def _hash32(value: bytes, what: str) -> bytes:
    if len(value) != HASH_SIZE:
        raise ValueError(f"{what} must be {HASH_SIZE} bytes, got {len(value)}")
    return value


def talk_message(
    match_id: str,
    seq: int,
    prev_hash: bytes,
    at_seq: int,
    at_hash: bytes,
    seat: int,
    client_time_ms: int,
    kind: str,
    text: str,
) -> bytes:
    """The exact bytes a seat's key signs for one talk entry (see the module docstring)."""
    for value, what in ((seq, "seq"), (at_seq, "at_seq"), (client_time_ms, "client_time_ms")):
        if not 0 <= value <= _MAX_U64:
            raise ValueError(f"{what} must fit in an unsigned 64-bit integer, got {value}")
    if not 0 <= seat <= _MAX_FIELD:
        raise ValueError(f"seat must fit in an unsigned 32-bit integer, got {seat}")
    return (
        TALK_TAG
        + _lp(match_id.encode("utf-8"))
        + struct.pack(">Q", seq)
        + _hash32(prev_hash, "prev_hash")
        + struct.pack(">Q", at_seq)
        + _hash32(at_hash, "at_hash")
        + struct.pack(">I", seat)
        + struct.pack(">Q", client_time_ms)
        + _lp(kind.encode("utf-8"))
        + _lp(text.encode("utf-8"))
    )


def talk_hash(message: bytes, signature: bytes) -> bytes:
    """The hash of one talk entry: its signed bytes and their signature (the next one's
    ``prev_hash``)."""
    return hashlib.sha256(TALK_ENTRY_TAG + _lp(message) + _lp(signature)).digest()


def talk_receipt_message(match_id: str, seq: int, digest: bytes) -> bytes:
    """The exact bytes the server signs to acknowledge that talk entry ``seq`` is stored."""
    if not 0 <= seq <= _MAX_U64:
        raise ValueError(f"seq must fit in an unsigned 64-bit integer, got {seq}")
    return (
        TALK_RECEIPT_TAG
        + _lp(match_id.encode("utf-8"))
        + struct.pack(">Q", seq)
        + _hash32(digest, "talk_hash")
    )


def sign_talk(key: PrivateKey, message: bytes) -> bytes:
    from shared.crypto.keys import sign

    return sign(key, message)


def sign_talk_receipt(server_key: PrivateKey, match_id: str, seq: int, digest: bytes) -> bytes:
    from shared.crypto.keys import sign

    return sign(server_key, talk_receipt_message(match_id, seq, digest))


def verify_talk_receipt(
    server_public_key_raw: bytes, match_id: str, seq: int, digest: bytes, signature: bytes
) -> bool:
    """Check a talk receipt, answering False (never raising) for anything malformed."""
    from shared.crypto.keys import verify

    try:
        message = talk_receipt_message(match_id, seq, digest)
    except (ValueError, TypeError):
        return False
    return verify(server_public_key_raw, message, signature)


def verify_talk_signature(public_key_raw: bytes, message: bytes, signature: bytes) -> bool:
    from shared.crypto.keys import verify

    return verify(public_key_raw, message, signature)


# -- what may be said ----------------------------------------------------------------------------


def text_problem(text: str, kind: str = SAY) -> str | None:
    """Why ``text`` may not be said (None: it may). Printable text only: no control
    characters (newlines, tabs, terminal escapes), no format characters (bidirectional
    overrides and isolates, zero-width joiners, the byte order mark), no line or paragraph
    separators, no private-use, surrogate or unassigned code points (Python's
    ``str.isprintable``, the rule for player names too), and at most ``MAX_COMBINING``
    combining marks on a character (none at the start): nothing said can reorder, break or
    overdraw the lines around it in a terminal, a mail, a web page or a calendar."""
    limit = limit_of(kind)
    if kind not in KINDS:
        return f"the kind of a talk entry is one of {', '.join(KINDS)}"
    if not text.strip(" "):
        return "the text is empty"
    if len(text) > limit:
        return f"the text has {len(text)} characters; at most {limit} may be said at once"
    marks = 0
    for index, char in enumerate(text):
        if not char.isprintable():
            name = unicodedata.name(char, "unnamed")
            return (
                f"character {index + 1} (U+{ord(char):04X} {name}) is not printable text: "
                "control, format (bidirectional), separator and unassigned characters are refused"
            )
        if unicodedata.category(char) in ("Mn", "Me"):
            marks += 1
            if index == 0:
                return "the text may not start with a combining mark"
            if marks > MAX_COMBINING:
                return (
                    f"character {index + 1}: more than {MAX_COMBINING} combining marks on one "
                    "character"
                )
        else:
            marks = 0
    return None


# -- one entry, and the chain ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TalkLine:
    """One talk entry as stored and as a transcript holds it: everything signed but the
    ``prev_hash`` (derived from the chain), the seat's signature, the server's receipt."""

    seq: int
    kind: str
    seat: int
    at_seq: int
    at_hash: bytes
    client_time_ms: int
    text: str
    signature: bytes
    receipt: bytes

    def message(self, match_id: str, prev_hash: bytes) -> bytes:
        return talk_message(
            match_id,
            self.seq,
            prev_hash,
            self.at_seq,
            self.at_hash,
            self.seat,
            self.client_time_ms,
            self.kind,
            self.text,
        )


def side_of(partnerships: Sequence[Sequence[int]], seat: int) -> int:
    """The side (its index in the rules' ``partnerships``) a seat sits on; one declaration of
    conventions per side. A seat no side names is a side of its own."""
    for index, seats in enumerate(partnerships):
        if seat in seats:
            return index
    return len(partnerships) + seat


@dataclass(frozen=True, slots=True)
class TalkHead:
    """The talk chain's length and the hash of its last entry (the header's hash: none)."""

    count: int
    head: bytes

    def outcome_field(self) -> list[object]:
        """How a match's signed end names it: ``[count, hex(head)]``."""
        return [self.count, self.head.hex()]


def verify_talk(
    header: Header,
    first_prev: bytes,
    lines: Sequence[TalkLine],
    entry_hashes: Sequence[bytes],
) -> TalkHead:
    """Check a match's talk: each entry's seq in order from 1, its kind and text, its seat a
    person's seat of the header, its signature by that seat's key over its bytes chained to
    the entry before (``first_prev``, the header's hash, for the first), the move log's
    position it names (``entry_hashes[n]`` is entry n's hash, ``entry_hashes[0]`` the
    header's), the positions never going back, and the server's receipt. Raises
    ``MatchLogError`` naming the first problem as ``talk N: ...``; returns the chain's head."""
    prev = first_prev
    at = 0
    declared: set[int] = set()
    if len(lines) > MAX_TALK:
        raise MatchLogError(f"the file holds more than {MAX_TALK} talk entries")
    for number, line in enumerate(lines, 1):

        def refuse(problem: str, number: int = number) -> MatchLogError:
            return MatchLogError(f"talk {number}: {problem}")

        if line.seq != number:
            raise refuse(
                f"it is numbered {line.seq}; talk entries are numbered 1, 2, ... in order, with "
                "none missing (talk entries missing or moved)"
            )
        problem = text_problem(line.text, line.kind)
        if problem is not None:
            raise refuse(problem)
        if not 0 <= line.seat < len(header.seats) or header.seats[line.seat].bot:
            raise refuse(f"seat {line.seat} is not a person's seat of this match")
        if line.at_seq >= len(entry_hashes):
            raise refuse(
                f"it names move {line.at_seq}, but the file's last entry is {len(entry_hashes) - 1}"
            )
        if line.at_seq < at:
            raise refuse(f"it names move {line.at_seq}, before the talk entry ahead of it ({at})")
        if line.at_hash != entry_hashes[line.at_seq]:
            raise refuse(f"the hash it names is not the hash of move {line.at_seq}")
        if line.kind == CONVENTIONS:
            key = side_of(header.config.partnerships, line.seat)
            if key in declared:
                raise refuse("this side declared its conventions already")
            declared.add(key)
        try:
            message = line.message(header.match_id, prev)
        except ValueError as exc:
            raise refuse(str(exc)) from None
        if not verify_talk_signature(header.seats[line.seat].public_key, message, line.signature):
            raise refuse(
                f"the signature does not verify with the key of seat {line.seat} "
                "(forged, or changed since it was signed, or moved in the chain)"
            )
        digest = talk_hash(message, line.signature)
        if not verify_talk_receipt(
            header.server_key, header.match_id, line.seq, digest, line.receipt
        ):
            raise refuse("the receipt is not the server's signature of this talk entry")
        prev, at = digest, line.at_seq
    return TalkHead(len(lines), prev)
