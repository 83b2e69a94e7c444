"""Small-order and non-canonical Ed25519 public keys are refused wherever a key enters.

The eight points of small order are derived here from the curve equation itself, with
affine Edwards arithmetic written for this test, so the test does not trust the production
table it checks (``shared.crypto.keytext._SMALL_ORDER_Y``).
"""

from __future__ import annotations

import pytest

from shared.crypto.errors import CryptoError
from shared.crypto.keys import (
    generate_private_key,
    public_key_from_raw,
    public_key_raw,
    sign,
    verify,
)
from shared.crypto.keytext import check_public_key, public_key_from_text, public_key_to_text

P = 2**255 - 19
D = -121665 * pow(121666, -1, P) % P
SQRT_M1 = pow(2, (P - 1) // 4, P)

Point = tuple[int, int]


def _add(a: Point, b: Point) -> Point:
    (x1, y1), (x2, y2) = a, b
    t = D * x1 * x2 * y1 * y2 % P
    x3 = (x1 * y2 + x2 * y1) * pow(1 + t, -1, P) % P
    y3 = (y1 * y2 + x1 * x2) * pow(1 - t, -1, P) % P
    return x3, y3


def _times8(point: Point) -> Point:
    for _ in range(3):
        point = _add(point, point)
    return point


def _x_of(y: int, sign: int) -> int | None:
    """The x with ``-x^2 + y^2 = 1 + d x^2 y^2`` and the given sign bit, or None."""
    u, v = (y * y - 1) % P, (D * y * y + 1) % P
    x2 = u * pow(v, -1, P) % P
    x = pow(x2, (P + 3) // 8, P)
    if x * x % P != x2:
        x = x * SQRT_M1 % P
    if x * x % P != x2 or (x == 0 and sign):
        return None
    return x if x % 2 == sign else P - x


def _encode(x: int, y: int) -> bytes:
    return (y | (x % 2) << 255).to_bytes(32, "little")


def _small_order_points() -> list[bytes]:
    """Every canonical encoding of a point P with 8P = identity: the identity, (0, -1), the
    two points (+-sqrt(-1), 0) of order 4, and the four of order 8. A point Q of order 8
    doubles to y = 0, so y1^2 + x1^2 = 0 (the doubling formula's numerator), i.e.
    x1^2 = -y1^2; put into the curve equation, d y^4 + 2 y^2 - 1 = 0."""
    found: set[bytes] = set()
    candidates = [(0, 1), (0, P - 1), (SQRT_M1, 0), (P - SQRT_M1, 0)]
    disc = (4 + 4 * D) % P
    root = _sqrt(disc)
    assert root is not None
    for r in (root, P - root):
        y2 = (-2 + r) * pow(2 * D, -1, P) % P
        y = _sqrt(y2)
        if y is None:
            continue
        for yy in (y, P - y):
            for s in (0, 1):
                x = _x_of(yy, s)
                if x is not None:
                    candidates.append((x, yy))
    for x, y in candidates:
        assert (-x * x + y * y - 1 - D * x * x * y * y) % P == 0, "not on the curve"
        assert _times8((x, y)) == (0, 1), "not of small order"
        found.add(_encode(x, y))
    return sorted(found)


def _sqrt(value: int) -> int | None:
    x = pow(value, (P + 3) // 8, P)
    if x * x % P != value % P:
        x = x * SQRT_M1 % P
    return x if x * x % P == value % P else None


SMALL_ORDER = _small_order_points()


def test_there_are_exactly_eight_small_order_points() -> None:
    assert len(SMALL_ORDER) == 8
    assert bytes([1]) + bytes(31) in SMALL_ORDER  # the identity, the one the attack used


@pytest.mark.parametrize("raw", SMALL_ORDER, ids=[r.hex()[:8] for r in SMALL_ORDER])
def test_each_small_order_point_is_refused(raw: bytes) -> None:
    with pytest.raises(CryptoError, match="small order"):
        check_public_key(raw)
    with pytest.raises(CryptoError):
        public_key_from_raw(raw)
    with pytest.raises(CryptoError):
        public_key_from_text(public_key_to_text(raw))
    # The universal "signature" of the identity key (R = identity, S = 0) verifies nothing.
    assert not verify(raw, b"any message", bytes([1]) + bytes(63))


@pytest.mark.parametrize("y", [P, P + 1, P + 18])
def test_non_canonical_encodings_are_refused(y: int) -> None:
    """y = p + k encodes the same point as y = k: only the reduced form is accepted."""
    for sign_bit in (0, 1):
        raw = (y | sign_bit << 255).to_bytes(32, "little")
        with pytest.raises(CryptoError, match="canonical"):
            check_public_key(raw)


def test_real_keys_pass() -> None:
    for _ in range(50):
        key = generate_private_key()
        raw = public_key_raw(key)
        check_public_key(raw)
        assert verify(raw, b"m", sign(key, b"m"))
