"""Signed moves as text: the ASCII "armor" that lets an envelope travel by any channel.

``canasta play --armor ...`` prints a block like this instead of sending the move::

    -----BEGIN CANASTA MOVE-----
    Match: 3f2a9c...
    Seat: 1
    Seq: 12
    Move: meld 7h 7c 2s; discard kd

    CgQzZjJh... (base64, 64 characters a line)
    -----END CANASTA MOVE-----

The base64 is a serialized ``SubmitRequest``: the payload bytes exactly as signed and the
signature, so the server checks the block exactly as it checks a ``Submit`` (it is one). The
lines above it are for people; ``dearmor`` refuses a block whose readable lines do not say
what its signed payload says, so a block can never show one move and carry another.

Everything here has a bound: a block is at most ``MAX_ARMOR_CHARS`` characters, the text it
is searched in at most ``MAX_TEXT_CHARS``, and a text holding more than one block is refused
(one mail, one move).
"""

from __future__ import annotations

import base64
import binascii
import textwrap

from shared.pb import canasta_pb2 as pb
from shared.wire import MAX_PAYLOAD_BYTES, Move, WireError, move_from_bytes

BEGIN = "-----BEGIN CANASTA MOVE-----"
END = "-----END CANASTA MOVE-----"
MAX_ARMOR_CHARS = 4 * (MAX_PAYLOAD_BYTES + 256) // 3 + 2_048
"""Room for the largest payload the server takes, its signature, the readable lines and the
line breaks of the base64."""
MAX_TEXT_CHARS = 262_144
"""Most characters of text searched for a block (a mail body is cut to this before)."""
_WIDTH = 64


class ArmorError(WireError):
    """Text that holds no block, more than one, or a block that is damaged or inconsistent."""

    kind = "wire"


def move_line(actions: tuple[str, ...] | list[str]) -> str:
    """The readable form of a move's actions, as a player types them."""
    return "; ".join(actions)


def armor(request: pb.SubmitRequest) -> str:
    """The block for a signed envelope (``shared.protocol.move_request``'s result)."""
    move = move_from_bytes(request.payload)
    body = base64.b64encode(request.SerializeToString()).decode("ascii")
    lines = [
        BEGIN,
        f"Match: {move.match_id}",
        f"Seat: {move.seat}",
        f"Seq: {move.seq}",
        f"Move: {move_line(move.actions)}",
        "",
        *textwrap.wrap(body, _WIDTH),
        END,
    ]
    return "\n".join(lines) + "\n"


def count_blocks(text: str) -> int:
    """How many blocks begin in ``text`` (on unquoted lines)."""
    return sum(1 for line in text[:MAX_TEXT_CHARS].splitlines() if line.strip() == BEGIN)


def dearmor(text: str) -> tuple[pb.SubmitRequest, Move]:
    """The envelope of the one block in ``text`` and its decoded payload.

    Lines are read with surrounding blanks stripped (mail clients indent or re-wrap), but a
    quoted line (``>``) never counts: a block in a quoted earlier mail is not this mail's move.
    Raises ``ArmorError`` for no block, several, a damaged one or one whose readable lines
    disagree with what is signed.
    """
    lines = [line.strip() for line in text[:MAX_TEXT_CHARS].splitlines()]
    starts = [i for i, line in enumerate(lines) if line == BEGIN]
    if not starts:
        raise ArmorError(f"no signed move found: it starts with the line {BEGIN}")
    if len(starts) > 1:
        raise ArmorError("more than one signed move: send one move at a time")
    start = starts[0]
    try:
        end = lines.index(END, start + 1)
    except ValueError:
        raise ArmorError(f"the signed move has no end line {END}") from None
    block = lines[start + 1 : end]
    if sum(len(line) + 1 for line in block) > MAX_ARMOR_CHARS:
        raise ArmorError("the signed move is longer than any move can be")
    fields: dict[str, str] = {}
    index = 0
    while index < len(block) and block[index]:
        name, colon, value = block[index].partition(":")
        if not colon or name not in ("Match", "Seat", "Seq", "Move") or name in fields:
            raise ArmorError(f"the signed move has an unknown line: {block[index][:40]!r}")
        fields[name] = value.strip()
        index += 1
    encoded = "".join(block[index:])
    try:
        raw = base64.b64decode(encoded, validate=True)
        request = pb.SubmitRequest.FromString(raw)
    except (binascii.Error, ValueError):
        raise ArmorError("the signed move is damaged (its base64 does not decode)") from None
    if request.SerializeToString() != raw or not request.payload or not request.signature:
        raise ArmorError("the signed move is damaged (it is not a signed envelope)")
    move = move_from_bytes(request.payload)
    said = {
        "Match": move.match_id,
        "Seat": str(move.seat),
        "Seq": str(move.seq),
        "Move": move_line(move.actions),
    }
    if fields != said:
        raise ArmorError(
            "the signed move's readable lines do not match what is signed: it was changed"
        )
    return request, move


__all__ = [
    "BEGIN",
    "END",
    "MAX_ARMOR_CHARS",
    "ArmorError",
    "armor",
    "count_blocks",
    "dearmor",
    "move_line",
]
