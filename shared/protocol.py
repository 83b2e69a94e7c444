"""The client's half of the protocol, written once for the ``canasta`` CLI and ``tests.testkit``.

Everything a client signs or checks is built here from the definitions in ``shared.wire`` and
``shared.crypto``, so the command-line client, the test kit and the benchmarks cannot drift
apart on a byte:

* ``register_request`` / ``auth_request``: the signed registration and challenge answer;
* ``move_request``: a signed ``MovePayload`` envelope built from the last ``MatchView`` seen
  (``seq = version + 1``, ``prev_hash = head_hash``), and ``deal_request``, the cut between
  hands, which names the published ``deal_commitment``;
* ``receipt_matches``: the server's receipt covers exactly the envelope that was sent (the
  entry hash recomputed locally) and is signed by the pinned server key;
* ``say_request``: a signed table talk entry (``shared.talk``), following the talk chain's
  head and naming the log's head where it is said; ``talk_receipt_matches`` checks its receipt;
* ``transcript_of``: a match's history, as shown, as a transcript ``shared.transcript``
  verifies offline (the hands that are over, and the talk said by then).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from shared.crypto.chain import entry_hash, verify_receipt
from shared.crypto.keys import PrivateKey, public_key_raw, sign
from shared.pb import canasta_pb2 as pb
from shared.talk import TalkLine, talk_hash, talk_message, verify_talk_receipt
from shared.transcript import HandSecret, LoggedMove, MatchEnd, Transcript
from shared.wire import (
    DEAL_ACTION,
    Move,
    Registration,
    auth_message,
    move_to_bytes,
    register_message,
    registration_to_bytes,
)


def now_ms() -> int:
    """Milliseconds since the epoch, the unit of every ``client_time_ms``."""
    return time.time_ns() // 1_000_000


def register_request(
    key: PrivateKey,
    server_key: bytes,
    name: str,
    *,
    email: str = "",
    invitation: str = "",
    client_time_ms: int | None = None,
) -> pb.RegisterRequest:
    """A registration of ``key`` for the server whose public key is ``server_key``."""
    payload = registration_to_bytes(
        Registration(
            public_key=public_key_raw(key),
            display_name=name,
            email=email,
            invitation_code=invitation,
            server_public_key=server_key,
            client_time_ms=now_ms() if client_time_ms is None else client_time_ms,
        )
    )
    return pb.RegisterRequest(payload=payload, signature=sign(key, register_message(payload)))


def auth_request(key: PrivateKey, server_key: bytes, challenge: bytes) -> pb.AuthenticateRequest:
    """The answer to a read-authentication challenge, bound to the pinned server key."""
    public = public_key_raw(key)
    return pb.AuthenticateRequest(
        public_key=public,
        challenge=challenge,
        signature=sign(key, auth_message(server_key, public, challenge)),
    )


def move_request(
    key: PrivateKey,
    match_id: str,
    seat: int,
    version: int,
    head_hash: bytes,
    actions: Sequence[str],
    *,
    deal_commitment: bytes = b"",
    client_time_ms: int | None = None,
) -> pb.SubmitRequest:
    """A signed move that follows entry ``version`` (whose hash is ``head_hash``).

    The client only needs these four facts from the last view it saw, so a player can act
    without fetching the view again; a stale ``version`` is refused by the server, unchanged.
    """
    if client_time_ms is None:  # a cut carries none: see deal_request
        client_time_ms = 0 if list(actions) == [DEAL_ACTION] else now_ms()
    payload = move_to_bytes(
        Move(
            match_id=match_id,
            seat=seat,
            seq=version + 1,
            prev_hash=head_hash,
            client_time_ms=client_time_ms,
            actions=tuple(actions),
            deal_commitment=deal_commitment,
        )
    )
    return pb.SubmitRequest(payload=payload, signature=sign(key, payload))


def view_move_request(
    key: PrivateKey, view: pb.MatchView, actions: Sequence[str]
) -> pb.SubmitRequest:
    """A signed move for the viewing seat, following the view's last entry."""
    return move_request(
        key, view.match.match_id, view.view.seat, view.version, view.head_hash, actions
    )


def deal_request(
    key: PrivateKey, match_id: str, seat: int, version: int, head_hash: bytes, commitment: bytes
) -> pb.SubmitRequest:
    """The cut that deals the next hand: ``["deal"]`` naming the server's published commitment.

    Signing the commitment proves the cut came after the server fixed its secret. The cut
    carries no time (``client_time_ms`` 0): its payload, and so its Ed25519 signature (which
    seeds the deal), is the same however often it is signed, so a server that refuses a cut
    and waits for another cannot get another deal (docs/fair-deal.md).
    """
    return move_request(
        key, match_id, seat, version, head_hash, [DEAL_ACTION], deal_commitment=commitment,
        client_time_ms=0,
    )  # fmt: skip


def receipt_matches(
    server_key: bytes, request: pb.SubmitRequest, head_hash: bytes, receipt: pb.Receipt
) -> bool:
    """True when ``receipt`` acknowledges exactly ``request`` appended after ``head_hash``.

    The entry hash is recomputed from what was sent, so a receipt for some other entry (or a
    server that rewrote the payload) does not pass; the signature must be the pinned key's.
    """
    if len(head_hash) != 32:
        return False
    sent = pb.MovePayload.FromString(request.payload)
    if receipt.match_id != sent.match_id or receipt.seq != sent.seq:
        return False
    expected = entry_hash(head_hash, request.payload, request.signature)
    if bytes(receipt.entry_hash) != expected:
        return False
    return verify_receipt(
        server_key, receipt.match_id, receipt.seq, expected, receipt.server_signature
    )


def say_request(
    key: PrivateKey,
    match_id: str,
    seat: int,
    talk: pb.GetTalkResponse,
    kind: str,
    text: str,
    *,
    client_time_ms: int | None = None,
) -> pb.SayRequest:
    """A signed talk entry that follows the talk chain as ``talk`` shows it (``count`` and
    ``head_hash``), said at the log's head it shows (``version`` and ``version_hash``)."""
    sent_ms = now_ms() if client_time_ms is None else client_time_ms
    message = talk_message(
        match_id,
        talk.count + 1,
        talk.head_hash,
        talk.version,
        talk.version_hash,
        seat,
        sent_ms,
        kind,
        text,
    )
    return pb.SayRequest(
        match_id=match_id,
        seat=seat,
        seq=talk.count + 1,
        prev_hash=talk.head_hash,
        at_seq=talk.version,
        at_hash=talk.version_hash,
        client_time_ms=sent_ms,
        kind=kind,
        text=text,
        signature=sign(key, message),
    )


def talk_receipt_matches(
    request: pb.SayRequest, entry: pb.TalkEntry, server_public_key: bytes
) -> bool:
    """The server stored exactly the talk entry sent, and its receipt is the pinned key's."""
    message = talk_message(
        request.match_id,
        request.seq,
        request.prev_hash,
        request.at_seq,
        request.at_hash,
        request.seat,
        request.client_time_ms,
        request.kind,
        request.text,
    )
    digest = talk_hash(message, request.signature)
    return (
        entry.seq == request.seq
        and entry.talk_hash == digest
        and verify_talk_receipt(
            server_public_key, request.match_id, request.seq, digest, entry.receipt_signature
        )
    )


def talk_line(entry: pb.TalkEntry) -> TalkLine:
    return TalkLine(
        entry.seq,
        entry.kind,
        entry.seat,
        entry.at_seq,
        entry.at_hash,
        entry.client_time_ms,
        entry.text,
        entry.signature,
        entry.receipt_signature,
    )


def transcript_of(
    header: bytes,
    entries: Sequence[pb.HistoryEntry],
    hands: Sequence[pb.HandRecord],
    end: pb.MatchEnd | None = None,
    talk: Sequence[pb.TalkEntry] = (),
) -> Transcript:
    """The verifiable transcript of a match's history as the server showed it: every entry
    up to the cut of the first hand whose secret is not revealed yet (in a running match, the
    hands already over; in a finished one, everything), the secrets of those hands, the talk
    said up to the last of those entries, and the server's signed end of a finished or
    abandoned match (``GetHistoryResponse.end``) when the transcript reaches the entry it
    names."""
    revealed = {h.hand_number: h for h in hands if h.secret}
    logged: list[LoggedMove] = []
    for entry in entries:
        if entry.actions == [DEAL_ACTION] and entry.hand_number not in revealed:
            break
        logged.append(
            LoggedMove(entry.seq, entry.payload, entry.signature, entry.receipt_signature)
        )
    dealt = {e.hand_number for e in entries[: len(logged)] if e.actions == [DEAL_ACTION]}
    secrets = tuple(
        HandSecret(h.hand_number, h.commitment, h.secret, h.deal_seq)
        for number, h in sorted(revealed.items())
        if number in dealt
    )
    ended = None
    if end is not None and end.signature and end.seq == len(logged):
        ended = MatchEnd(end.seq, end.outcome, end.signature)
    said: list[TalkLine] = []
    for item in talk:  # the talk's positions never go back: a prefix of it
        if item.at_seq > len(logged):
            break
        said.append(talk_line(item))
    return Transcript(header, tuple(logged), secrets, ended, tuple(said))


__all__ = [
    "auth_request",
    "deal_request",
    "move_request",
    "now_ms",
    "receipt_matches",
    "register_request",
    "say_request",
    "talk_line",
    "talk_receipt_matches",
    "transcript_of",
    "view_move_request",
]
