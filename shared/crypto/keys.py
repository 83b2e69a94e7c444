"""Ed25519 identities: generation, storage formats, fingerprints, signing and verification.

A player *is* an Ed25519 key (there are no passwords), and the server has one too. This module is
the only place that touches the `cryptography` key API, so the rest of the project deals in plain
bytes (raw 32-byte public keys, 64-byte signatures) and a handful of functions.

Formats:

* Private keys are stored as PKCS#8 PEM (unencrypted: the server's keys), or in the OpenSSH
  private-key format when a passphrase protects them (players' keys): its bcrypt KDF with many
  rounds makes guessing a passphrase far costlier than PKCS#8 with cryptography's default
  PBKDF2 (2048 rounds). `private_key_from_pem` reads both.
* Public keys travel as their raw 32 bytes; for humans and config files they are written as
  ``ed25519:`` followed by the unpadded base64url encoding of those bytes.
* A fingerprint is the first 16 hex digits of SHA-256(raw public key), grouped in fours with
  hyphens (``3f2a-91bc-07de-44a1``): short enough to read aloud when pinning the server's key.
"""

import base64
import binascii
import functools
import hashlib

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from shared.crypto.errors import CryptoError, KeyFileError

PrivateKey = Ed25519PrivateKey
PublicKey = Ed25519PublicKey

PUBLIC_KEY_SIZE = 32
SIGNATURE_SIZE = 64
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
_ENCRYPTED_PEM_MARKER = b"-----BEGIN ENCRYPTED PRIVATE KEY-----"
_OPENSSH_MARKER = b"-----BEGIN OPENSSH PRIVATE KEY-----"
_OPENSSH_MAGIC = b"openssh-key-v1\x00"
OPENSSH_KDF_ROUNDS = 16
"""bcrypt KDF rounds for passphrase-protected keys (ssh-keygen's default; about 0.1 s)."""


def generate_private_key() -> PrivateKey:
    """Create a fresh identity key from the operating system's CSPRNG."""
    return Ed25519PrivateKey.generate()


def _passphrase_bytes(passphrase: str | bytes) -> bytes:
    """Accept text passphrases (as typed by a player) as UTF-8, and refuse empty ones."""
    data = passphrase.encode("utf-8") if isinstance(passphrase, str) else passphrase
    if not data:
        raise KeyFileError(
            "An empty passphrase cannot protect a key. Choose a passphrase, or save the key "
            "without one."
        )
    return data


def private_key_to_pem(key: PrivateKey, passphrase: str | bytes | None = None) -> bytes:
    """Serialise a private key to PKCS#8 PEM, encrypted when a passphrase is given."""
    encryption: serialization.KeySerializationEncryption
    if passphrase is None:
        encryption = serialization.NoEncryption()
    else:
        encryption = serialization.BestAvailableEncryption(_passphrase_bytes(passphrase))
    return key.private_bytes(
        encoding=serialization.Encoding.PEM,
        format=serialization.PrivateFormat.PKCS8,
        encryption_algorithm=encryption,
    )


def private_key_to_openssh(
    key: PrivateKey, passphrase: str | bytes | None = None, rounds: int = OPENSSH_KDF_ROUNDS
) -> bytes:
    """Serialise a private key in the OpenSSH format, bcrypt-KDF encrypted with a passphrase."""
    encryption: serialization.KeySerializationEncryption
    if passphrase is None:
        encryption = serialization.NoEncryption()
    else:
        builder = serialization.PrivateFormat.OpenSSH.encryption_builder().kdf_rounds(rounds)
        encryption = builder.build(_passphrase_bytes(passphrase))
    return key.private_bytes(
        encoding=serialization.Encoding.PEM,
        format=serialization.PrivateFormat.OpenSSH,
        encryption_algorithm=encryption,
    )


def _openssh_encrypted(pem: bytes) -> bool:
    """Whether an OpenSSH key file names a cipher other than "none" (read without the key)."""
    body = b"".join(line for line in pem.splitlines() if line and not line.startswith(b"-----"))
    try:
        blob = base64.b64decode(body)
    except (binascii.Error, ValueError):
        return False
    if not blob.startswith(_OPENSSH_MAGIC):
        return False
    rest = blob[len(_OPENSSH_MAGIC) :]
    length = int.from_bytes(rest[:4], "big")
    return rest[4 : 4 + length] != b"none"


def is_encrypted_key(pem: bytes) -> bool:
    """Whether a key file needs a passphrase (PKCS#8 or OpenSSH), known before asking for one."""
    if _OPENSSH_MARKER in pem:
        return _openssh_encrypted(pem)
    return _ENCRYPTED_PEM_MARKER in pem


def private_key_from_pem(pem: bytes, passphrase: str | bytes | None = None) -> PrivateKey:
    """Load a private key written by `private_key_to_pem` or `private_key_to_openssh`.

    Every failure becomes a `KeyFileError` whose message tells the player what to do, because the
    library's own errors (TypeError, ValueError with OpenSSL wording) are not fit to show them.
    """
    password = None if passphrase is None else _passphrase_bytes(passphrase)
    encrypted = is_encrypted_key(pem)
    if encrypted and password is None:
        raise KeyFileError("This key file is protected by a passphrase; please supply it.")
    if not encrypted and password is not None:
        raise KeyFileError(
            "This key file is not protected by a passphrase, but one was given. "
            "Load it without a passphrase."
        )
    try:
        if _OPENSSH_MARKER in pem:
            key: object = serialization.load_ssh_private_key(pem, password=password)
        else:
            key = serialization.load_pem_private_key(pem, password=password)
    except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
        if encrypted:
            raise KeyFileError(
                "Could not unlock the key file: the passphrase is wrong or the file is damaged."
            ) from exc
        raise KeyFileError("This is not a readable private key file (expected PEM).") from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise KeyFileError("This key file holds a key of the wrong type; an Ed25519 key is needed.")
    return key


def public_key_raw(key: PrivateKey | PublicKey) -> bytes:
    """Return the raw 32-byte public key, the form used on the wire and in transcripts."""
    public = key.public_key() if isinstance(key, Ed25519PrivateKey) else key
    return public.public_bytes(
        encoding=serialization.Encoding.Raw, format=serialization.PublicFormat.Raw
    )


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


def public_key_from_raw(raw: bytes) -> PublicKey:
    """Turn raw bytes back into a key object, refusing anything that ``check_public_key``
    refuses."""
    check_public_key(raw)
    try:
        return Ed25519PublicKey.from_public_bytes(raw)
    except ValueError as exc:
        raise CryptoError("These bytes are not a valid Ed25519 public key.") from exc


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


def sign(private_key: PrivateKey, data: bytes) -> bytes:
    """Sign exactly these bytes (Ed25519 is deterministic: same key and data, same signature)."""
    return private_key.sign(data)


def verify(public_key_raw: bytes, data: bytes, signature: bytes) -> bool:
    """Check a signature, answering False (never raising) for any bad or malformed input.

    Verification runs on untrusted input from the network and from transcripts, so callers want a
    plain yes/no rather than having to anticipate every exception the library might raise.
    """
    try:
        if len(public_key_raw) != PUBLIC_KEY_SIZE or len(signature) != SIGNATURE_SIZE:
            return False
        _verifier(public_key_raw).verify(signature, data)
    except (InvalidSignature, CryptoError, ValueError, TypeError):
        return False
    return True


@functools.lru_cache(maxsize=4096)
def _verifier(raw: bytes) -> PublicKey:
    """The key object for raw public-key bytes, kept: a server verifies the same few keys
    over and over, and building the object costs a fair part of a verification. A weak key
    (``check_public_key``) raises, and verifies nothing."""
    return public_key_from_raw(raw)
