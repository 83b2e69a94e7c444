"""What tests share about a running server: the programmatic client and the server process
(``bench.kit``, which the benches use too, re-exported here), plus the helpers only tests use:
matches set up a common way, how many examples a property test draws, moving a match along,
checking a match's record as ``canasta verify`` does, and the server's own state as an oracle.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from bench.kit import (
    PlayerClient,
    banner_port,
    plain_turn,
    seated_match,
    serve_with_banner,
    start_server_process,
)
from shared import protocol
from shared.crypto.chain import entry_hash, verify_receipt
from shared.pb import canasta_pb2 as pb
from shared.rules import GameState
from shared.transcript import header_hash, verify

__all__ = [
    "PlayerClient",
    "authoritative_state",
    "banner_port",
    "examples",
    "inner_loop",
    "next_plain_move",
    "partners_and_bots",
    "plain_turn",
    "replay_history",
    "seated_match",
    "serve_with_banner",
    "start_server_process",
]


def partners_and_bots(alice: PlayerClient, bob: PlayerClient) -> str:
    """A classic match ``alice`` creates in seat 0, her partner ``bob`` joining in seat 2 and
    bots in seats 1 and 3 (so it starts); its id."""
    created = alice.create_match(seat=0, bot_seats=[1, 3])
    bob.join_match(created.invite_code, seat=2)
    return created.match.match_id


def examples(full: int) -> int:
    """How many examples a property test draws: ``full`` in ``make test``, a third in the
    inner loop (``make test-fast`` sets ``CANASTA_INNER_LOOP``), where the whole suite must
    stay under a minute. The examples are derandomized, so either run is repeatable."""
    return max(full // 3, 10) if inner_loop() else full


def inner_loop() -> bool:
    """Whether this run is the inner loop (``make test-fast`` sets ``CANASTA_INNER_LOOP``),
    for a test that asks fewer questions there (as ``examples`` does)."""
    return bool(os.environ.get("CANASTA_INNER_LOOP"))


def next_plain_move(
    seats: Sequence[PlayerClient], match_id: str, *, deal_hand_after: int | None = None
) -> pb.SubmitResponse | None:
    """Make the match's next move with ``plain_turn`` (a cut when one is due), signed by the
    seat to act (``seats[seat]``); None instead of cutting for a hand after
    ``deal_hand_after``."""
    player = seats[seats[0].view(match_id).match.to_act]
    view = player.view(match_id)  # the actor's own view
    if view.HasField("dealing_seat"):
        if deal_hand_after is not None and view.view.hand_number >= deal_hand_after:
            return None
        return player.deal(view)
    return player.submit(view, plain_turn(view))


# -- checking a server from outside -------------------------------------------------------------


def replay_history(
    match_id: str,
    history: pb.GetHistoryResponse,
    entries: Sequence[pb.HistoryEntry],
    server_key: bytes,
) -> GameState:
    """Check a match's record as ``canasta verify`` does (``shared.transcript.verify``): every
    signature, the chain from the header, every receipt, every revealed deal, every move
    replayed. Raises ``TranscriptError`` on the first problem; returns the engine's state after
    the hands that are over (in a running match, before the cut of the hand in play, whose
    secret is not revealed yet). Also checks that the header names ``server_key``, the key the
    client pinned, and that every entry after the transcript's end links to it."""
    transcript = protocol.transcript_of(history.header, entries, history.hands, history.end)
    report = verify(transcript)
    assert report.header.match_id == match_id
    assert report.header.server_key == server_key, "the header names another server key"
    rest = list(entries[len(transcript.entries) :])
    hashes = [e.entry_hash for e in entries[: len(transcript.entries)]]
    prev = hashes[-1] if hashes else header_hash(history.header)
    for entry in rest:  # the hand in play: no replay yet, but the chain and receipts hold
        digest = entry_hash(prev, entry.payload, entry.signature)
        assert digest == entry.entry_hash, f"entry {entry.seq}: chain broken"
        assert verify_receipt(server_key, match_id, entry.seq, digest, entry.receipt_signature)
        prev = digest
    return report.state


def authoritative_state(service: Any, match_id: str) -> GameState:
    """The server's own state of a match (tests use it as an oracle to choose moves)."""
    from server.service import matches

    ctx = service.ctx
    with ctx.db.read() as session:
        repo = ctx.repo(session)
        match = matches.require_match(repo, match_id)
        return matches.load_state(ctx, repo, match)
