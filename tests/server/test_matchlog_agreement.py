"""The server and ``canasta verify`` hold a log entry to one rule (``shared.matchlog``, issue 29).

Each crafted entry below is offered to the server (a Submit) and, as the first entry of a
transcript, to the verifier (``shared.transcript.verify``); both refuse it for the same reason
(``Refusal``), the server in its own words and status. The one exception is a condition the
verifier cannot see: whether a bot covers a seat when the bot key signs for it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import grpc
import pytest

from server.app import App
from shared.crypto.keys import PrivateKey
from shared.matchlog import EntryRefusedError, Refusal, Signer, accept_entry, header_hash
from shared.pb import canasta_pb2 as pb
from shared.rules import new_match
from shared.transcript import (
    HandSecret,
    Header,
    LoggedMove,
    Transcript,
    TranscriptError,
    verify,
)
from tests.testkit import PlayerClient, partners_and_bots


@dataclass
class Cut:
    """Before the first deal: ``cutter`` is to cut; ``other`` is the other person; bots sit
    in seats 1 and 3."""

    app: App
    cutter: PlayerClient
    other: PlayerClient
    view: pb.MatchView
    header: bytes
    hand: HandSecret
    """Hand 1's commitment and secret (what the file holds once the hand is over)."""

    def cut(
        self,
        *,
        seat: int | None = None,
        signer: PrivateKey | None = None,
        client_time_ms: int = 0,
        commitment: bytes | None = None,
    ) -> pb.SubmitRequest:
        """The cutter's cut, or one changed as named."""
        return self.cutter.envelope(
            self.view,
            ["deal"],
            seat=seat,
            signer=signer,
            client_time_ms=client_time_ms,
            deal_commitment=self.view.deal_commitment if commitment is None else commitment,
        )

    def key(self, which: str) -> PrivateKey:
        keys = self.app.service.ctx.keys
        return {"bot": keys.bot, "attest": keys.attest}[which]


@pytest.fixture
def table(app: App, players: Callable[..., PlayerClient]) -> Cut:
    alice, bob = players("alice"), players("bob")
    match_id = partners_and_bots(alice, bob)
    view = alice.view(match_id)
    cutter, other = (alice, bob) if view.dealing_seat == 0 else (bob, alice)
    ctx = app.service.ctx
    with ctx.db.read() as session:
        hand = ctx.repo(session).hand(match_id, 1)
    assert hand is not None
    header = alice.history(match_id).header
    secret = HandSecret(1, hand.commitment, hand.secret, 1)
    return Cut(app, cutter, other, cutter.view(match_id), header, secret)


CASES: dict[str, tuple[Callable[[Cut], pb.SubmitRequest], Refusal, grpc.StatusCode, str]] = {
    "no such seat": (
        lambda t: t.cut(seat=9),
        Refusal.NO_SEAT,
        grpc.StatusCode.INVALID_ARGUMENT,
        "there is no seat 9 in this match",
    ),
    "the other person signs the cutter's cut": (
        lambda t: t.cut(signer=t.other.key),
        Refusal.SIGNATURE,
        grpc.StatusCode.UNAUTHENTICATED,
        "does not verify with the key of seat",
    ),
    "the attest key signs for a bot seat": (
        lambda t: t.cut(seat=1, signer=t.key("attest")),
        Refusal.SIGNATURE,
        grpc.StatusCode.UNAUTHENTICATED,
        "does not verify with the key of seat 1",
    ),
    "the server's receipt key signs": (
        lambda t: t.cut(signer=t.app.service.ctx.keys.server),
        Refusal.SIGNATURE,
        grpc.StatusCode.UNAUTHENTICATED,
        "does not verify with the key of seat",
    ),
    "a cut with a client time": (
        lambda t: t.cut(client_time_ms=1),
        Refusal.CUT_TIME,
        grpc.StatusCode.INVALID_ARGUMENT,
        "a cut carries client_time_ms 0",
    ),
    "a cut by the seat that does not cut": (
        lambda t: t.other.envelope(
            t.other.view(t.view.match.match_id),
            ["deal"],
            deal_commitment=t.view.deal_commitment,
            client_time_ms=0,
        ),
        Refusal.CUTTER,
        grpc.StatusCode.FAILED_PRECONDITION,
        "cuts the deck for this deal",
    ),
    "a cut naming another commitment": (
        lambda t: t.cut(commitment=bytes(32)),
        Refusal.COMMITMENT,
        grpc.StatusCode.FAILED_PRECONDITION,
        "a deal names the published commitment of hand 1",
    ),
    "a move that is not a cut names a commitment": (
        lambda t: t.cutter.envelope(t.view, ["draw"], deal_commitment=bytes(32)),
        Refusal.NOT_A_CUT,
        grpc.StatusCode.INVALID_ARGUMENT,
        "only a deal move names a commitment",
    ),
    "a draw before the deal": (
        lambda t: t.cutter.envelope(t.view, ["draw"]),
        Refusal.ILLEGAL,
        grpc.StatusCode.FAILED_PRECONDITION,
        "",  # the engine's own message: compared with the verifier's below
    ),
}


def _verifier_refusal(table: Cut, request: pb.SubmitRequest) -> TranscriptError:
    """What ``canasta verify`` says of a transcript whose first entry is ``request`` (with a
    receipt of zeros: the rule is checked before the receipt)."""
    entry = LoggedMove(1, request.payload, request.signature, bytes(64))
    transcript = Transcript(table.header, (entry,), (table.hand,))
    with pytest.raises(TranscriptError) as refused:
        verify(transcript)
    return refused.value


@pytest.mark.parametrize("case", list(CASES))
def test_the_server_and_the_verifier_refuse_an_entry_for_the_same_reason(
    table: Cut, case: str
) -> None:
    build, reason, code, words = CASES[case]
    request = build(table)
    refused = _verifier_refusal(table, request)
    assert isinstance(refused, EntryRefusedError), refused
    assert refused.reason is reason, refused
    with pytest.raises(grpc.RpcError) as info:
        table.cutter.stub.Submit(request, metadata=table.cutter.metadata)
    assert info.value.code() == code, info.value.details()
    assert words in info.value.details()
    if reason is Refusal.ILLEGAL:  # the engine's error, word for word, on both sides
        assert refused.error is not None
        assert info.value.details() == getattr(refused.error, "message", None)
    assert table.cutter.view(table.view.match.match_id).version == 0


def test_a_right_cut_is_accepted_by_both(table: Cut) -> None:
    request = table.cut()
    header = Header.from_bytes(table.header)
    state = new_match(header.config, first_dealer=header.first_dealer)
    accepted = accept_entry(header, state, request.payload, request.signature, {1: table.hand}.get)
    assert accepted.signed.by is Signer.SEAT
    assert accepted.move.prev_hash == header_hash(table.header)
    response = table.cutter.stub.Submit(request, metadata=table.cutter.metadata)
    entry = LoggedMove(1, request.payload, request.signature, response.receipt.server_signature)
    report = verify(Transcript(table.header, (entry,), (table.hand,)))
    assert report.state == accepted.state
    assert report.server_cuts == ()


def test_the_bot_key_on_an_uncovered_seat_is_the_servers_own_refusal(table: Cut) -> None:
    """The verifier cannot know whether a bot covered the seat when the bot key signed for it
    (the file does not say): it accepts the cut and names it as the server's. The server
    knows, and refuses while no bot covers the seat (it reads the match afresh first)."""
    request = table.cut(signer=table.key("bot"))
    refused = _verifier_refusal(table, request)
    assert not isinstance(refused, EntryRefusedError)
    assert "receipt" in str(refused)  # past the rule: only the made-up receipt fails
    with pytest.raises(grpc.RpcError) as info:
        table.cutter.stub.Submit(request, metadata=table.cutter.metadata)
    assert info.value.code() == grpc.StatusCode.ABORTED
    assert "another move was stored first" in info.value.details()
