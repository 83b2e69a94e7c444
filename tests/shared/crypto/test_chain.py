"""Tests for the match-log hash chain and receipts: every byte and boundary must matter."""

import pytest

from shared.crypto.chain import (
    HASH_SIZE,
    chain_hashes,
    entry_hash,
    genesis_hash,
    receipt_message,
    sign_receipt,
    verify_receipt,
)
from shared.crypto.keys import generate_private_key, public_key_raw


def _flip(data: bytes, index: int) -> bytes:
    """Return ``data`` with one bit changed at ``index``."""
    changed = bytearray(data)
    changed[index] ^= 0x01
    return bytes(changed)


PREV = genesis_hash("match-1")
PAYLOAD = b"seat=0;seq=1;action=draw"
SIGNATURE = bytes(range(64))


def test_known_answer_vectors() -> None:
    """Pinned outputs: an accidental change of encoding would orphan every stored transcript."""
    assert genesis_hash("match-1").hex() == (
        "a482801b2d68a9c0a072f62c7782fe110219133572e2364c416052c5b33bdebd"
    )
    assert entry_hash(genesis_hash("match-1"), b"payload", b"sig").hex() == (
        "c4723893ca49d9ea7b6d8094136cdb60383c2870c7532ff898486b79bed7b1aa"
    )
    assert receipt_message("m", 3, bytes(32)) == (
        b"canasta.v1/receipt\x00" + b"\x00\x00\x00\x01m" + (3).to_bytes(8, "big") + bytes(32)
    )


def test_genesis_depends_on_match_id() -> None:
    assert len(genesis_hash("a")) == HASH_SIZE
    assert genesis_hash("a") != genesis_hash("b")
    assert genesis_hash("a") == genesis_hash("a")


def test_entry_hash_changes_with_every_byte() -> None:
    base = entry_hash(PREV, PAYLOAD, SIGNATURE)
    seen = {base}
    for i in range(len(PREV)):
        seen.add(entry_hash(_flip(PREV, i), PAYLOAD, SIGNATURE))
    for i in range(len(PAYLOAD)):
        seen.add(entry_hash(PREV, _flip(PAYLOAD, i), SIGNATURE))
    for i in range(len(SIGNATURE)):
        seen.add(entry_hash(PREV, PAYLOAD, _flip(SIGNATURE, i)))
    assert len(seen) == 1 + len(PREV) + len(PAYLOAD) + len(SIGNATURE)


def test_entry_hash_boundary_is_unambiguous() -> None:
    joined = PAYLOAD + SIGNATURE
    hashes = {entry_hash(PREV, joined[:cut], joined[cut:]) for cut in range(len(joined) + 1)}
    assert len(hashes) == len(joined) + 1


def test_entry_hash_rejects_bad_prev_hash() -> None:
    with pytest.raises(ValueError, match="prev_hash"):
        entry_hash(b"short", PAYLOAD, SIGNATURE)


def test_chain_hashes_links_entries() -> None:
    entries = [(b"p1", b"s1"), (b"p2", b"s2"), (b"p3", b"s3")]
    hashes = chain_hashes("match-1", entries)
    prev = genesis_hash("match-1")
    for (payload, signature), got in zip(entries, hashes, strict=True):
        prev = entry_hash(prev, payload, signature)
        assert got == prev
    tampered = chain_hashes("match-1", [(b"p1", b"s1"), (b"pX", b"s2"), (b"p3", b"s3")])
    assert tampered[0] == hashes[0]
    assert tampered[1] != hashes[1]
    assert tampered[2] != hashes[2]
    assert chain_hashes("match-2", entries)[0] != hashes[0]
    assert chain_hashes("match-1", []) == []


def test_receipt_sign_and_verify() -> None:
    server = generate_private_key()
    raw = public_key_raw(server)
    digest = entry_hash(PREV, PAYLOAD, SIGNATURE)
    receipt = sign_receipt(server, "match-1", 7, digest)
    assert verify_receipt(raw, "match-1", 7, digest, receipt)
    assert not verify_receipt(raw, "match-2", 7, digest, receipt)
    assert not verify_receipt(raw, "match-1", 8, digest, receipt)
    assert not verify_receipt(raw, "match-1", 7, _flip(digest, 0), receipt)
    assert not verify_receipt(raw, "match-1", 7, digest, _flip(receipt, 3))
    assert not verify_receipt(public_key_raw(generate_private_key()), "match-1", 7, digest, receipt)


def test_verify_receipt_never_raises_on_garbage() -> None:
    raw = public_key_raw(generate_private_key())
    assert not verify_receipt(raw, "m", -1, bytes(32), bytes(64))
    assert not verify_receipt(raw, "m", 2**64, bytes(32), bytes(64))
    assert not verify_receipt(raw, "m", 1, b"short", bytes(64))
    assert not verify_receipt(raw, "\ud800", 1, bytes(32), bytes(64))
    assert not verify_receipt(b"", "m", 1, bytes(32), b"")


def test_receipt_message_validates_inputs() -> None:
    assert len(receipt_message("m", 2**64 - 1, bytes(32))) == 19 + 4 + 1 + 8 + 32
    with pytest.raises(ValueError, match="seq"):
        receipt_message("m", -1, bytes(32))
    with pytest.raises(ValueError, match="entry_hash"):
        receipt_message("m", 0, bytes(31))
