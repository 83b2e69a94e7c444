"""Commit-reveal fair dealing: the server cannot rig a deal without being caught.

Before a hand starts, and before any player input that could steer it, the server draws a fresh
secret and publishes a commitment to it. The deck is then derived from that secret *and* the
players' entropy contributions (the signatures of their signed moves). When the hand ends the
secret is revealed, and anyone can recompute commitment, seed and deck. The server could not pick
a favourable secret after seeing the contributions (it is bound by the commitment), and players
could not aim for a deck (they do not know the secret). Which contributions go into a deal, and in
what order, must be fixed by the protocol, not chosen by the server at will.

The encodings and the shuffle below are normative: an independent implementation following this
text must reproduce every byte. Notation: ``||`` is concatenation, ``utf8(s)`` the UTF-8 bytes
of a string, ``uint32_be``/``uint64_be`` fixed-width unsigned big-endian integers, and
``lp(x) = uint32_be(len(x)) || x``.

Commitment::

    commitment = SHA-256(b"canasta.v1/deal-commit\\x00" || lp(secret) || lp(utf8(match_id))
                         || uint64_be(hand_number))

Deal seed, for contributions ``c_1 .. c_k`` in protocol order::

    seed = SHA-256(b"canasta.v1/deal-seed\\x00" || lp(secret) || lp(utf8(match_id))
                   || uint64_be(hand_number) || uint32_be(k) || lp(c_1) || ... || lp(c_k))

Shuffle ``shuffle(n, seed)``, an unbiased permutation of ``0 .. n-1``:

1. Byte stream: ``S = SHAKE-256(b"canasta.v1/shuffle\\x00" || seed)``, read as an unbounded
   output. Split ``S`` into consecutive 4-byte words ``w_0, w_1, ...``, each read as a
   big-endian unsigned 32-bit integer. Words are consumed strictly in order, each at most once.
2. Start with ``a = [0, 1, ..., n-1]``.
3. For ``i`` from ``n-1`` down to ``1`` (Fisher-Yates):

   - ``m = i + 1`` and ``limit = 2**32 - (2**32 mod m)``, the largest multiple of ``m`` that
     does not exceed ``2**32``;
   - take the next word ``w``; while ``w >= limit``, discard it and take the next (rejection
     sampling keeps every residue equally likely);
   - ``j = w mod m``; swap ``a[i]`` and ``a[j]``.

4. The result is ``a``. For ``n`` of 0 or 1 no words are consumed. ``a[k]`` is the index, in the
   caller's canonical unshuffled order, of the item placed at position ``k``; the rules engine
   defines the canonical deck order and which position is dealt first.
"""

import hashlib
import hmac
import secrets
import struct
from collections.abc import Iterator, Sequence

SECRET_SIZE = 32

_COMMIT_TAG = b"canasta.v1/deal-commit\x00"
_DERIVE_TAG = b"canasta.v1/deal-secret\x00"
_SEED_TAG = b"canasta.v1/deal-seed\x00"
_SHUFFLE_TAG = b"canasta.v1/shuffle\x00"
_WORD_SPACE = 2**32
_MAX_HAND = 2**64 - 1
_MAX_FIELD = 2**32 - 1
_SPARE_WORDS = 16


def _lp(data: bytes) -> bytes:
    """Length-prefix one field (4-byte big-endian length) so concatenations stay unambiguous."""
    if len(data) > _MAX_FIELD:
        raise ValueError("field too long to length-prefix")
    return struct.pack(">I", len(data)) + data


def _hand_context(secret: bytes, match_id: str, hand_number: int) -> bytes:
    """The fields shared by commitment and seed, binding both to one hand of one match."""
    if not 0 <= hand_number <= _MAX_HAND:
        raise ValueError(f"hand_number must fit in an unsigned 64-bit integer, got {hand_number}")
    return _lp(secret) + _lp(match_id.encode("utf-8")) + struct.pack(">Q", hand_number)


def new_secret() -> bytes:
    """Draw a fresh per-hand server secret from the operating system's CSPRNG."""
    return secrets.token_bytes(SECRET_SIZE)


def derived_secret(deal_key: bytes, match_id: str, hand_number: int) -> bytes:
    """The per-hand server secret derived from the server's deal key (HMAC-SHA256 as a
    pseudo-random function, HKDF's expand step in one block): unpredictable without the key,
    as a fresh draw is, and the same again for the same hand, so a server restored from a
    backup commits to, and reveals, the very deals it had dealt after the backup."""
    if len(deal_key) < SECRET_SIZE:
        raise ValueError(f"a deal key has at least {SECRET_SIZE} bytes")
    context = _hand_context(b"", match_id, hand_number)
    return hmac.new(deal_key, _DERIVE_TAG + context, "sha256").digest()


def commitment(secret: bytes, match_id: str, hand_number: int) -> bytes:
    """What the server publishes before the hand: binds it to ``secret`` without revealing it."""
    return hashlib.sha256(_COMMIT_TAG + _hand_context(secret, match_id, hand_number)).digest()


def verify_commitment(secret: bytes, match_id: str, hand_number: int, expected: bytes) -> bool:
    """Check a revealed secret against its earlier commitment; False for any malformed input."""
    try:
        actual = commitment(secret, match_id, hand_number)
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(actual, expected)


def deal_seed(
    secret: bytes, match_id: str, hand_number: int, contributions: Sequence[bytes]
) -> bytes:
    """Combine the server secret with the players' contributions into the 32-byte deck seed."""
    parts = [_SEED_TAG, _hand_context(secret, match_id, hand_number)]
    parts.append(struct.pack(">I", len(contributions)))
    parts.extend(_lp(c) for c in contributions)
    return hashlib.sha256(b"".join(parts)).digest()


def _words(seed: bytes, expected: int) -> Iterator[int]:
    """Yield the shuffle's 32-bit words, extending the SHAKE-256 output as it runs out.

    The first read covers the expected need plus a little slack, so in practice one digest call
    serves a whole deck; if rejections exhaust it, the output is re-read at double length and
    only the new tail is yielded, which keeps the stream identical to one unbounded read.
    """
    xof = hashlib.shake_256(_SHUFFLE_TAG + seed)
    consumed = 0
    size = 4 * (expected + _SPARE_WORDS)
    while True:
        block = xof.digest(size)[consumed:]
        yield from struct.unpack(f">{len(block) // 4}I", block)
        consumed = size
        size *= 2


def _uniform_below(words: Iterator[int], m: int) -> int:
    """Draw an unbiased integer in ``[0, m)`` from 32-bit words by rejection sampling."""
    limit = _WORD_SPACE - _WORD_SPACE % m
    for w in words:
        if w < limit:
            return w % m
    raise RuntimeError("word stream ended")  # pragma: no cover - the stream is unbounded


def shuffle(n: int, seed: bytes) -> list[int]:
    """Derive the permutation of ``range(n)`` fixed by ``seed`` (see the module docstring)."""
    if not 0 <= n <= _WORD_SPACE:
        raise ValueError(f"n must be between 0 and 2**32, got {n}")
    deck = list(range(n))
    if n < 2:
        return deck
    words = _words(seed, n - 1)
    for i in range(n - 1, 0, -1):
        j = _uniform_below(words, i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck
