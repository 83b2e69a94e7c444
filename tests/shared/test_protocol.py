"""shared.protocol: the envelope a client signs and the receipt it accepts."""

from __future__ import annotations

from shared import protocol
from shared.crypto.chain import entry_hash, genesis_hash, sign_receipt
from shared.crypto.keys import generate_private_key, public_key_raw, verify
from shared.pb import canasta_pb2 as pb
from shared.wire import move_from_bytes


def _receipt(
    server: object, request: pb.SubmitRequest, head: bytes, seq: int, match_id: str = "m"
) -> pb.Receipt:
    from shared.crypto.keys import PrivateKey

    assert isinstance(server, PrivateKey)
    digest = entry_hash(head, request.payload, request.signature)
    return pb.Receipt(
        match_id=match_id,
        seq=seq,
        entry_hash=digest,
        server_signature=sign_receipt(server, match_id, seq, digest),
    )


def test_a_move_follows_the_version_seen_and_is_signed() -> None:
    key = generate_private_key()
    head = genesis_hash("m")
    request = protocol.move_request(key, "m", 2, 4, head, ["draw", "discard kd"])
    move = move_from_bytes(request.payload)
    assert (move.match_id, move.seat, move.seq, move.prev_hash) == ("m", 2, 5, head)
    assert move.actions == ("draw", "discard kd")
    assert verify(public_key_raw(key), request.payload, request.signature)
    cut = protocol.deal_request(key, "m", 2, 4, head, b"c" * 32)
    assert move_from_bytes(cut.payload).is_deal
    assert move_from_bytes(cut.payload).deal_commitment == b"c" * 32


def test_a_receipt_must_cover_this_envelope_and_the_pinned_key() -> None:
    player, server, impostor = (generate_private_key() for _ in range(3))
    head = genesis_hash("m")
    request = protocol.move_request(player, "m", 0, 0, head, ["draw"])
    good = _receipt(server, request, head, 1)
    assert protocol.receipt_matches(public_key_raw(server), request, head, good)
    assert not protocol.receipt_matches(public_key_raw(impostor), request, head, good)
    forged = _receipt(impostor, request, head, 1)
    assert not protocol.receipt_matches(public_key_raw(server), request, head, forged)
    other = protocol.move_request(player, "m", 0, 0, head, ["pass"])
    assert not protocol.receipt_matches(public_key_raw(server), other, head, good)
    assert not protocol.receipt_matches(public_key_raw(server), request, b"short", good)
    # Signed by the right key over the right entry, but naming another match or place.
    assert not protocol.receipt_matches(
        public_key_raw(server), request, head, _receipt(server, request, head, 2)
    )
    assert not protocol.receipt_matches(
        public_key_raw(server), request, head, _receipt(server, request, head, 1, "other")
    )
