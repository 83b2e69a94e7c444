"""Public keys as bytes and as text, and the check that a key is a sound identity.

Pure Python on purpose: comparing a server's presented key with the pinned one, showing a
fingerprint or reading a key from a config file needs no curve arithmetic, so the client's
everyday commands (``canasta show``) need not load the ``cryptography`` library (about 25 ms of
start-up). Signing and verifying live in ``shared.crypto.keys``.

* Public keys travel as their raw 32 bytes; for humans and config files they are written as
  ``ed25519:`` followed by the unpadded base64url encoding of those bytes.
* A fingerprint is the first 16 hex digits of SHA-256(raw public key), grouped in fours with
  hyphens (``3f2a-91bc-07de-44a1``): short enough to read aloud when pinning the server's key.
"""

import base64
import binascii
import hashlib

from shared.crypto.errors import CryptoError

PUBLIC_KEY_SIZE = 32
PUBLIC_KEY_TEXT_PREFIX = "ed25519:"

_FIELD_PRIME = 2**255 - 19
_SMALL_ORDER_Y = frozenset(
    {
        0,  # order 4: (+-sqrt(-1), 0)
        1,  # order 1: the identity (0, 1)
        _FIELD_PRIME - 1,  # order 2: (0, -1)
        # order 8: two y values, each with both signs of x
        0x05FC536D880238B13933C6D305ACDFD5F098EFF289F4C345B027B2C28F95E826,
        0x7A03AC9277FDC74EC6CC392CFA53202A0F67100D760B3CBA4FD84D3D706A17C7,
    }
)
"""The y coordinates of the eight points of small order (the curve's torsion subgroup); each
y here, with either sign bit, encodes one of them."""

_FINGERPRINT_HEX_DIGITS = 16
_FINGERPRINT_GROUP = 4


def check_public_key(raw: bytes) -> None:
    """Refuse bytes that are no sound identity: the wrong length, a non-canonical encoding
    (y not reduced modulo p), or one of the eight points of small order.

    A small-order key is a key anyone can act as: with the identity point (``01 00..00``) the
    "signature" ``01 00..00`` then verifies over every message, and a signature that anyone
    can make is no longer an unpredictable contribution to a fair deal. RFC 8032 leaves the
    check to the application; libsodium makes it too. It needs no curve arithmetic: the eight
    points are known by their y coordinate (``_SMALL_ORDER_Y``, both signs of x each).
    """
    if len(raw) != PUBLIC_KEY_SIZE:
        raise CryptoError(
            f"A public key must be {PUBLIC_KEY_SIZE} bytes long, not {len(raw)} bytes."
        )
    y = int.from_bytes(raw, "little") & ((1 << 255) - 1)
    if y >= _FIELD_PRIME:
        raise CryptoError("These bytes are not a canonical Ed25519 public key encoding.")
    if y in _SMALL_ORDER_Y:
        raise CryptoError(
            "This Ed25519 public key is a point of small order, which anyone could sign for; "
            "generate a real key."
        )


def public_key_to_text(raw: bytes) -> str:
    """Render a raw public key as ``ed25519:<base64url, no padding>`` for people and config."""
    if len(raw) != PUBLIC_KEY_SIZE:
        raise CryptoError(
            f"A public key must be {PUBLIC_KEY_SIZE} bytes long, not {len(raw)} bytes."
        )
    return PUBLIC_KEY_TEXT_PREFIX + base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def public_key_from_text(text: str) -> bytes:
    """Parse the text form back to raw bytes.

    Only the canonical spelling is accepted (exact prefix, no padding, no stray bits in the last
    character), so each key has exactly one text form and text comparisons are key comparisons.
    """
    invalid = CryptoError(
        f"Not a public key: expected '{PUBLIC_KEY_TEXT_PREFIX}' followed by "
        "43 base64url characters."
    )
    if not text.startswith(PUBLIC_KEY_TEXT_PREFIX):
        raise invalid
    body = text[len(PUBLIC_KEY_TEXT_PREFIX) :]
    if not body.isascii():
        raise invalid
    try:
        raw = base64.b64decode(body + "=" * (-len(body) % 4), altchars=b"-_", validate=True)
    except (binascii.Error, ValueError) as exc:
        raise invalid from exc
    if len(raw) != PUBLIC_KEY_SIZE or public_key_to_text(raw) != text:
        raise invalid
    check_public_key(raw)
    return raw


def fingerprint(raw: bytes) -> str:
    """A short, human-comparable digest of a public key for pinning prompts and displays.

    It is for eyeballs, not for security decisions: code must compare full raw keys.
    """
    digest = hashlib.sha256(raw).hexdigest()[:_FINGERPRINT_HEX_DIGITS]
    groups = (digest[i : i + _FINGERPRINT_GROUP] for i in range(0, len(digest), _FINGERPRINT_GROUP))
    return "-".join(groups)
