"""Tests for Ed25519 identities: formats must round-trip and verification must never raise."""

import re

import pytest

from shared.crypto.errors import CryptoError, KeyFileError
from shared.crypto.keys import (
    generate_private_key,
    private_key_from_pem,
    private_key_to_pem,
    public_key_from_raw,
    public_key_raw,
    sign,
    verify,
)
from shared.crypto.keytext import fingerprint, public_key_from_text, public_key_to_text


def _flip(data: bytes, index: int) -> bytes:
    """Return ``data`` with one bit changed at ``index``."""
    changed = bytearray(data)
    changed[index] ^= 0x01
    return bytes(changed)


def test_sign_verify_round_trip() -> None:
    key = generate_private_key()
    raw = public_key_raw(key)
    signature = sign(key, b"move payload")
    assert len(raw) == 32
    assert len(signature) == 64
    assert verify(raw, b"move payload", signature)
    assert sign(key, b"move payload") == signature  # Ed25519 is deterministic


def test_public_key_raw_accepts_public_key_object() -> None:
    key = generate_private_key()
    assert public_key_raw(key.public_key()) == public_key_raw(key)
    assert public_key_raw(public_key_from_raw(public_key_raw(key))) == public_key_raw(key)


@pytest.mark.parametrize("index", [0, 5, -1])
def test_verify_rejects_any_changed_byte(index: int) -> None:
    key = generate_private_key()
    raw = public_key_raw(key)
    data = b"draw from stock"
    signature = sign(key, data)
    assert not verify(raw, _flip(data, index), signature)
    assert not verify(raw, data, _flip(signature, index))
    assert not verify(_flip(raw, index), data, signature)


def test_verify_rejects_other_key() -> None:
    data = b"meld"
    signature = sign(generate_private_key(), data)
    assert not verify(public_key_raw(generate_private_key()), data, signature)


@pytest.mark.parametrize(
    ("key_len", "sig_len"), [(0, 64), (31, 64), (33, 64), (32, 0), (32, 63), (32, 65)]
)
def test_verify_returns_false_for_garbage_lengths(key_len: int, sig_len: int) -> None:
    assert not verify(b"\x01" * key_len, b"data", b"\x02" * sig_len)


def test_verify_returns_false_for_garbage_of_right_length() -> None:
    assert not verify(b"\xff" * 32, b"data", b"\xff" * 64)
    assert not verify(bytes(32), b"", bytes(64))


def test_pem_round_trip_without_passphrase() -> None:
    key = generate_private_key()
    pem = private_key_to_pem(key)
    assert pem.startswith(b"-----BEGIN PRIVATE KEY-----")
    assert public_key_raw(private_key_from_pem(pem)) == public_key_raw(key)


@pytest.mark.parametrize("passphrase", ["correct horse ♞", b"raw bytes"])
def test_pem_round_trip_with_passphrase(passphrase: str | bytes) -> None:
    key = generate_private_key()
    pem = private_key_to_pem(key, passphrase)
    assert pem.startswith(b"-----BEGIN ENCRYPTED PRIVATE KEY-----")
    assert public_key_raw(private_key_from_pem(pem, passphrase)) == public_key_raw(key)


def test_wrong_passphrase_raises_key_file_error() -> None:
    pem = private_key_to_pem(generate_private_key(), "right")
    with pytest.raises(KeyFileError, match="passphrase is wrong"):
        private_key_from_pem(pem, "wrong")


def test_missing_passphrase_raises_key_file_error() -> None:
    pem = private_key_to_pem(generate_private_key(), "right")
    with pytest.raises(KeyFileError, match="protected by a passphrase"):
        private_key_from_pem(pem)


def test_unneeded_passphrase_raises_key_file_error() -> None:
    pem = private_key_to_pem(generate_private_key())
    with pytest.raises(KeyFileError, match="not protected"):
        private_key_from_pem(pem, "anything")


def test_empty_passphrase_is_refused() -> None:
    with pytest.raises(KeyFileError, match="empty passphrase"):
        private_key_to_pem(generate_private_key(), "")


def test_garbage_pem_raises_key_file_error() -> None:
    with pytest.raises(KeyFileError):
        private_key_from_pem(b"not a key at all")
    with pytest.raises(CryptoError):
        private_key_from_pem(b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")


def test_text_form_round_trip() -> None:
    raw = public_key_raw(generate_private_key())
    text = public_key_to_text(raw)
    assert re.fullmatch(r"ed25519:[A-Za-z0-9_-]{43}", text)
    assert public_key_from_text(text) == raw


@pytest.mark.parametrize(
    "text",
    [
        "",
        "ed25519:",
        "ED25519:" + "A" * 43,
        "ed25519:" + "A" * 42,
        "ed25519:" + "A" * 44,
        "ed25519:" + "A" * 43 + "=",
        "ed25519:" + "A" * 42 + "B",  # stray low bits: not the canonical spelling
        "ed25519:" + "+" * 43,
        "ed25519:" + "é" * 43,
    ],
)
def test_text_form_rejects_malformed(text: str) -> None:
    with pytest.raises(CryptoError):
        public_key_from_text(text)


def test_raw_key_length_is_checked() -> None:
    with pytest.raises(CryptoError):
        public_key_from_raw(b"\x00" * 31)
    with pytest.raises(CryptoError):
        public_key_to_text(b"\x00" * 33)


def test_fingerprint_is_short_grouped_and_stable() -> None:
    assert fingerprint(bytes(32)) == "6668-7aad-f862-bd77"  # SHA-256 of 32 zero bytes
    raw = public_key_raw(generate_private_key())
    assert re.fullmatch(r"[0-9a-f]{4}(-[0-9a-f]{4}){3}", fingerprint(raw))
    assert fingerprint(raw) != fingerprint(_flip(raw, 0))
