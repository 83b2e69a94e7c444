"""The hash chain of a match log and the server's receipts over it.

Each stored move is linked to everything before it, so rewriting history changes every later
hash and breaks every receipt the players already hold. All encodings are fixed here, byte for
byte, so an offline verifier can recompute them:

* ``genesis_hash(match_id) = SHA-256(b"canasta.v1/genesis\\x00" || utf8(match_id))``, the
  ``prev_hash`` of the first entry.
* ``entry_hash(prev, payload, sig) = SHA-256(b"canasta.v1/entry\\x00" || lp(prev) || lp(payload)
  || lp(sig))`` where ``lp(x) = uint32_be(len(x)) || x``. The length prefixes make the field
  boundaries unambiguous: moving a byte from payload to signature changes the hash.
* ``receipt_message(match_id, seq, entry_hash) = b"canasta.v1/receipt\\x00" || lp(utf8(match_id))
  || uint64_be(seq) || entry_hash`` is exactly what the server signs with Ed25519.
* ``end_message(match_id, seq, entry_hash, outcome) = b"canasta.v1/end\\x00" || lp(utf8(match_id))
  || uint64_be(seq) || entry_hash || lp(outcome)``: the server's word that the match ended
  with entry ``seq`` (whose hash is ``entry_hash``; seq 0 and the header's hash for a match
  abandoned before its first entry), and how (``outcome``, ``shared.transcript.end_outcome``).

Every tag ends in a NUL byte and names its purpose, so a signature or hash made for one purpose
can never be mistaken for another.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shared.crypto.keys import PrivateKey

# ``shared.crypto.keys`` (and with it the ``cryptography`` library) is imported only by the
# functions that sign or verify: a client that only follows the chain (``canasta show``
# checking that the history it is shown extends what it saw) does not pay for it.

HASH_SIZE = 32

_GENESIS_TAG = b"canasta.v1/genesis\x00"
_ENTRY_TAG = b"canasta.v1/entry\x00"
_RECEIPT_TAG = b"canasta.v1/receipt\x00"
_END_TAG = b"canasta.v1/end\x00"
_MAX_FIELD = 2**32 - 1
_MAX_SEQ = 2**64 - 1


def _lp(data: bytes) -> bytes:
    """Length-prefix one field (4-byte big-endian length) so concatenations stay unambiguous."""
    if len(data) > _MAX_FIELD:
        raise ValueError("field too long to length-prefix")
    return struct.pack(">I", len(data)) + data


def genesis_hash(match_id: str) -> bytes:
    """The virtual predecessor of a match's first entry; binds the chain to this match."""
    return hashlib.sha256(_GENESIS_TAG + match_id.encode("utf-8")).digest()


def entry_hash(prev_hash: bytes, payload: bytes, signature: bytes) -> bytes:
    """Hash of one log entry: the envelope bytes as sent, chained to the previous entry."""
    if len(prev_hash) != HASH_SIZE:
        raise ValueError(f"prev_hash must be {HASH_SIZE} bytes, got {len(prev_hash)}")
    return hashlib.sha256(_ENTRY_TAG + _lp(prev_hash) + _lp(payload) + _lp(signature)).digest()


def chain_hashes(match_id: str, entries: Iterable[tuple[bytes, bytes]]) -> list[bytes]:
    """Recompute the entry hashes of a whole log of ``(payload, signature)`` pairs, in order.

    This is the verifier's view: it trusts no stored hash and derives each one from the start.
    """
    hashes: list[bytes] = []
    prev = genesis_hash(match_id)
    for payload, signature in entries:
        prev = entry_hash(prev, payload, signature)
        hashes.append(prev)
    return hashes


def receipt_message(match_id: str, seq: int, entry_hash: bytes) -> bytes:
    """The exact bytes the server signs to acknowledge that entry ``seq`` is durably stored."""
    if not 0 <= seq <= _MAX_SEQ:
        raise ValueError(f"seq must fit in an unsigned 64-bit integer, got {seq}")
    if len(entry_hash) != HASH_SIZE:
        raise ValueError(f"entry_hash must be {HASH_SIZE} bytes, got {len(entry_hash)}")
    return _RECEIPT_TAG + _lp(match_id.encode("utf-8")) + struct.pack(">Q", seq) + entry_hash


def sign_receipt(server_key: PrivateKey, match_id: str, seq: int, entry_hash: bytes) -> bytes:
    """Produce the server's receipt signature for a stored entry."""
    from shared.crypto.keys import sign

    return sign(server_key, receipt_message(match_id, seq, entry_hash))


def verify_receipt(
    server_public_key_raw: bytes, match_id: str, seq: int, entry_hash: bytes, signature: bytes
) -> bool:
    """Check a receipt, answering False (never raising) for anything malformed or forged."""
    from shared.crypto.keys import verify

    try:
        message = receipt_message(match_id, seq, entry_hash)
    except (ValueError, TypeError):
        return False
    return verify(server_public_key_raw, message, signature)


def end_message(match_id: str, seq: int, entry_hash: bytes, outcome: bytes) -> bytes:
    """The exact bytes the server signs to state that a match ended with entry ``seq``."""
    return _END_TAG + receipt_message(match_id, seq, entry_hash)[len(_RECEIPT_TAG) :] + _lp(outcome)


def sign_end(
    server_key: PrivateKey, match_id: str, seq: int, entry_hash: bytes, outcome: bytes
) -> bytes:
    """The server's signature of a match's end (deterministic: one end, one signature)."""
    from shared.crypto.keys import sign

    return sign(server_key, end_message(match_id, seq, entry_hash, outcome))


def verify_end(
    server_public_key_raw: bytes,
    match_id: str,
    seq: int,
    entry_hash: bytes,
    outcome: bytes,
    signature: bytes,
) -> bool:
    """Check an end's signature, answering False (never raising) for anything malformed."""
    from shared.crypto.keys import verify

    try:
        message = end_message(match_id, seq, entry_hash, outcome)
    except (ValueError, TypeError):
        return False
    return verify(server_public_key_raw, message, signature)
