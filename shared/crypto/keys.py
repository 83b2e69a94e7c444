"""Ed25519 identities: generation, storage formats, fingerprints, signing and verification.

A player *is* an Ed25519 key (there are no passwords), and the server has one too. This module is
the only place that touches the `cryptography` key API, so the rest of the project deals in plain
bytes (raw 32-byte public keys, 64-byte signatures) and a handful of functions.

Formats:

* Private keys are stored as PKCS#8 PEM (unencrypted: the server's keys), or in the OpenSSH
  private-key format when a passphrase protects them (players' keys): its bcrypt KDF with many
  rounds makes guessing a passphrase far costlier than PKCS#8 with cryptography's default
  PBKDF2 (2048 rounds). `private_key_from_pem` reads both.
* Public keys travel as their raw 32 bytes; their text form, fingerprints and the weak-key
  check are in ``shared.crypto.keytext``, which needs no ``cryptography``.
"""

import base64
import binascii
import functools

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from shared.crypto.errors import CryptoError, KeyFileError
from shared.crypto.keytext import PUBLIC_KEY_SIZE, check_public_key

PrivateKey = Ed25519PrivateKey
PublicKey = Ed25519PublicKey

SIGNATURE_SIZE = 64

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


def public_key_from_raw(raw: bytes) -> PublicKey:
    """Turn raw bytes back into a key object, refusing anything that ``check_public_key``
    refuses."""
    check_public_key(raw)
    try:
        return Ed25519PublicKey.from_public_bytes(raw)
    except ValueError as exc:
        raise CryptoError("These bytes are not a valid Ed25519 public key.") from exc


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
