"""Verifiable transcripts (issue 13): a match's record, exported as the client does it
(``shared.protocol.transcript_of`` over GetHistory), verifies offline with
``shared.transcript.verify``; any change to the file, or to the rules it commits to, fails.

Matches are played by the server's own bots (the human seat asks a bot to cover it), on a real
server, so every entry is signed, chained and receipted as in real play."""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Callable
from pathlib import Path

import pytest

from server.app import App
from server.service.people import admin
from shared import protocol
from shared.crypto.chain import entry_hash, sign_end
from shared.pb import canasta_pb2 as pb
from shared.rules import PRESETS, Phase
from shared.transcript import (
    Header,
    LoggedMove,
    MatchEnd,
    Transcript,
    TranscriptError,
    canonical_json,
    header_hash,
    verify,
)
from tests.testkit import PlayerClient

VECTORS = Path(__file__).resolve().parents[1] / "vectors"


def _bots_play(
    app: App,
    client: PlayerClient,
    preset: str = "classic",
    target: int = 100,
    options: dict[str, str] | None = None,
) -> pb.MatchView:
    """A match of ``preset`` played to its end by bots (the creator's seat covered)."""
    players = int(PRESETS[preset].get("players", 4))
    created = client.create_match(
        preset, target=target, bot_seats=list(range(1, players)), options=options
    )
    match_id = created.match.match_id
    client.stub.SetCover(
        pb.SetCoverRequest(match_id=match_id, covered=True), metadata=client.metadata
    )
    for _ in range(200):
        app.bots.drain()
        view = client.view(match_id)
        if view.match.status == pb.MATCH_STATUS_FINISHED:
            return view
    raise AssertionError("the bots did not finish the match")


def _export(client: PlayerClient, match_id: str) -> Transcript:
    entries, history = client.full_history(match_id)
    return protocol.transcript_of(history.header, entries, history.hands, history.end)


@pytest.fixture
def recorded() -> Transcript:
    """A real transcript (tests/vectors/transcript-v1.json: Ann and three bots, 17 entries)
    for the tests that change one and need no server."""
    return Transcript.from_bytes((VECTORS / "transcript-v1.json").read_bytes())


@pytest.fixture
def finished(app: App, players: Callable[..., PlayerClient]) -> tuple[pb.MatchView, Transcript]:
    client = players("ann")
    view = _bots_play(app, client)
    return view, _export(client, view.match.match_id)


@pytest.mark.parametrize(
    "preset",  # classic in the inner loop; every other preset in make test
    [p if p == "classic" else pytest.param(p, marks=pytest.mark.slow) for p in PRESETS],
)
def test_an_honest_match_of_every_preset_verifies(
    app: App, players: Callable[..., PlayerClient], preset: str
) -> None:
    client = players("ann")
    # One hand: a match of bots may never reach even a low target where scores can sink
    # (Modern American's penalties), and one hand exercises every part of the record.
    one_hand = None if preset == "classic" else {"hands_per_match": "1"}
    view = _bots_play(app, client, preset, options=one_hand)
    transcript = _export(client, view.match.match_id)
    report = verify(Transcript.from_bytes(transcript.to_bytes()))
    assert report.finished
    assert report.state.phase is Phase.MATCH_OVER
    assert list(report.state.scores) == list(view.view.scores)
    assert list(report.state.winners) == list(view.match.winners)
    assert report.entries == view.version
    assert report.header.config.preset == preset
    assert report.header.server_key == client.server_key
    entries = client.full_history(view.match.match_id)[0]
    assert report.by_bot == len([e for e in entries if e.seat == 0])  # all by the bot key
    # Ann (covered) cuts every hand, so the bot cut for her: the report names those hands.
    cuts = tuple(e.hand_number for e in entries if list(e.actions) == ["deal"])
    assert cuts
    assert report.server_cuts == cuts


@pytest.mark.slow  # several hands of bots: in make test
def test_a_running_match_exports_the_hands_already_over(
    app: App, players: Callable[..., PlayerClient]
) -> None:
    client = players("ann")
    # Exactly three hands: to a target, one lucky hand could end the match alone.
    view = _bots_play(app, client, options={"hands_per_match": "3"})
    entries, history = client.full_history(view.match.match_id)
    cut_of_hand_2 = next(e.seq for e in entries if e.actions == ["deal"] and e.hand_number == 2)
    # As a player saw it during hand 2: its secret not yet revealed.
    running = [e for e in entries if e.seq <= cut_of_hand_2 + 5]
    hands = [h for h in history.hands if h.hand_number <= 2]
    hidden = pb.HandRecord(hand_number=2, commitment=hands[1].commitment, deal_seq=cut_of_hand_2)
    transcript = protocol.transcript_of(history.header, running, [hands[0], hidden])
    report = verify(transcript)
    assert report.entries == cut_of_hand_2 - 1  # up to the cut of the hand in play
    assert [h.hand_number for h in report.hands] == [1]
    assert not report.finished


# -- tampering ---------------------------------------------------------------------------------


def _rejected(transcript: Transcript) -> str:
    with pytest.raises(TranscriptError) as refused:
        verify(Transcript.from_bytes(transcript.to_bytes()))
    return str(refused.value)


def _with_header(transcript: Transcript, change: Callable[[dict[str, object]], None]) -> Transcript:
    """The transcript with its header re-encoded after ``change``: canonical, and well
    formed, but not the header the players' moves committed to."""
    value = json.loads(transcript.header)
    change(value)
    return dataclasses.replace(transcript, header=canonical_json(value))


@pytest.mark.parametrize(
    "change",
    [
        lambda h: h["rules"].update(going_out_bonus=105),
        lambda h: h["rules"].update(target=100000),
        lambda h: h["rules"].update(preset="two_player"),
        lambda h: h["seats"][1].update(name="mallory"),
        lambda h: h["seats"][0].update(bot=True),
        lambda h: h.update(server_key="00" * 32),
        lambda h: h.update(started_ms=h["started_ms"] + 1),
        lambda h: h.update(clock={"bank_days": 0, "days_per_move": 1, "on_timeout": "forfeit",
                                  "weekends_off": False}),
        lambda h: h.update(match_id="f" * 32),
        lambda h: h.update(first_dealer=(h["first_dealer"] + 1) % 4),
        lambda h: h.update(attest_key="11" * 32),  # a key the header never named
    ],
)  # fmt: skip
def test_every_header_field_is_bound_into_the_chain(
    recorded: Transcript, change: Callable[[dict[str, object]], None]
) -> None:
    transcript = recorded
    problem = _rejected(_with_header(transcript, change))
    assert problem.startswith(("entry 1:", "header:")), problem


def test_removing_reordering_or_duplicating_an_entry_is_detected(
    recorded: Transcript,
) -> None:
    transcript = recorded
    entries = list(transcript.entries)
    assert len(entries) > 10
    for changed in (
        entries[:5] + entries[6:],  # one removed
        [*entries[:5], entries[6], entries[5], *entries[7:]],  # two swapped
        [*entries[:5], entries[5], *entries[5:]],  # one twice
        entries[:-1],  # the last one dropped: the match would not be over
    ):
        moved = dataclasses.replace(transcript, entries=tuple(changed))
        if changed == entries[:-1]:
            assert not verify(moved).finished  # a prefix is an honest record of less
        else:
            assert "entry 6" in _rejected(moved) or "entry 7" in _rejected(moved)
    renumbered = [dataclasses.replace(e, seq=e.seq + 1) for e in entries]
    assert _rejected(dataclasses.replace(transcript, entries=tuple(renumbered)))


@pytest.mark.slow  # several hands of bots: in make test
def test_a_changed_secret_or_swapped_deals_are_detected(
    app: App, players: Callable[..., PlayerClient]
) -> None:
    client = players("ann")
    # Exactly two hands (to a target, a lucky first hand could end the match alone).
    view = _bots_play(app, client, options={"hands_per_match": "2"})
    transcript = _export(client, view.match.match_id)
    hands = list(transcript.hands)
    assert len(hands) >= 2
    flipped = dataclasses.replace(
        hands[0], secret=bytes([hands[0].secret[0] ^ 1]) + hands[0].secret[1:]
    )
    problem = _rejected(dataclasses.replace(transcript, hands=(flipped, *hands[1:])))
    assert "hand 1's secret does not match its commitment" in problem
    swapped = [
        dataclasses.replace(hands[0], secret=hands[1].secret, commitment=hands[1].commitment),
        dataclasses.replace(hands[1], secret=hands[0].secret, commitment=hands[0].commitment),
    ]
    assert "commitment" in _rejected(dataclasses.replace(transcript, hands=(*swapped, *hands[2:])))
    assert _rejected(dataclasses.replace(transcript, hands=tuple(hands[1:])))  # one missing


def test_a_forged_signature_or_receipt_is_detected(
    recorded: Transcript,
) -> None:
    transcript = recorded
    entries = list(transcript.entries)
    seventh = entries[6]
    for forged in (
        dataclasses.replace(seventh, signature=bytes(64)),
        dataclasses.replace(seventh, receipt=entries[5].receipt),
        LoggedMove(7, entries[5].payload, entries[5].signature, entries[5].receipt),
    ):
        entries[6] = forged
        assert "entry 7" in _rejected(dataclasses.replace(transcript, entries=tuple(entries)))


def _flip_positions(transcript: Transcript, count: int, seed: int) -> int:
    """Change one byte at each of ``count`` random positions (each to a random other value);
    every changed file must fail to verify. Returns how many were tried."""
    data = transcript.to_bytes()
    chooser = random.Random(seed)
    for _ in range(count):
        at = chooser.randrange(len(data))
        value = chooser.choice([b for b in range(256) if b != data[at]])
        changed = data[:at] + bytes([value]) + data[at + 1 :]
        try:
            verify(Transcript.from_bytes(changed))
        except TranscriptError:
            continue
        raise AssertionError(f"changing byte {at} to {value:#x} went unnoticed")
    return count


@pytest.mark.slow  # 1,200 verifications of a whole match: in make test
@pytest.mark.parametrize("engine", ["sqlite"])  # the verifier reads bytes: no database
def test_a_thousand_single_byte_changes_are_all_detected(
    finished: tuple[pb.MatchView, Transcript],
) -> None:
    _, transcript = finished
    assert _flip_positions(transcript, 1200, seed=2026) == 1200


def test_the_header_is_canonical_and_read_back_exactly(
    recorded: Transcript,
) -> None:
    transcript = recorded
    header = Header.from_bytes(transcript.header)
    assert header.to_bytes() == transcript.header
    spaced = json.dumps(json.loads(transcript.header), sort_keys=True).encode()
    with pytest.raises(TranscriptError, match="canonical"):
        Header.from_bytes(spaced)


def test_a_cut_that_carries_a_time_is_refused_by_the_server(
    app: App, players: Callable[..., PlayerClient]
) -> None:
    """A cut's payload is fixed (``client_time_ms`` 0): signing it again gives the same
    signature, so a server that refuses a cut cannot wait for another deal."""
    import grpc

    client = players("ann")
    match_id = client.create_match(bot_seats=[1, 2, 3]).match.match_id
    view = client.view(match_id)
    timed = client.envelope(view, ["deal"], deal_commitment=view.deal_commitment, client_time_ms=1)
    with pytest.raises(grpc.RpcError) as refused:
        client.stub.Submit(timed, metadata=client.metadata)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "client_time_ms 0" in (refused.value.details() or "")
    first = client.envelope(view, ["deal"], deal_commitment=view.deal_commitment)
    again = client.envelope(view, ["deal"], deal_commitment=view.deal_commitment)
    assert first.signature == again.signature  # one cut, one deal


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda h: [s.update(bot=True) for s in h["seats"]], "no human seat"),
        (lambda h: h["seats"][0].update(key=h["bot_key"]), "bot's key"),
        (lambda h: h["seats"][0].update(name="Ann\x1b[2Kall verified"), "do not print"),
        (lambda h: h["seats"][0].update(seat=False), "malformed"),
        (lambda h: h["rules"].update(decks=400_000), "cannot be used"),
        (lambda h: h.update(clock={"bank_days": 0, "days_per_move": 1, "on_timeout": "x",
                                   "weekends_off": False}), "substitute or forfeit"),
        (lambda h: h.update(started_ms=2**63 - 1), "started_ms"),
    ],
)  # fmt: skip
def test_malformed_headers_are_refused_with_a_reason(
    recorded: Transcript,
    change: Callable[[dict[str, object]], None],
    problem: str,
) -> None:
    transcript = recorded
    value = json.loads(transcript.header)
    change(value)
    with pytest.raises(TranscriptError, match=problem):
        Header.from_bytes(canonical_json(value))


# -- the end -----------------------------------------------------------------------------------


def _last_hash(transcript: Transcript) -> bytes:
    """The hash of the file's last entry (the header's for none), as a verifier computes it."""
    digest = header_hash(transcript.header)
    for entry in transcript.entries:
        digest = entry_hash(digest, entry.payload, entry.signature)
    return digest


def test_a_finished_match_ends_with_the_servers_signed_end(
    finished: tuple[pb.MatchView, Transcript],
) -> None:
    view, transcript = finished
    end = transcript.end
    assert end is not None
    assert end.seq == len(transcript.entries) == view.version
    assert json.loads(end.outcome) == {
        "result": "finished",
        "scores": list(view.view.scores),
        "winners": list(view.match.winners),
    }
    report = verify(Transcript.from_bytes(transcript.to_bytes()))
    assert (report.result, report.end_signed, report.finished) == ("finished", True, True)


def test_a_finished_match_cut_short_is_refused_or_reads_as_in_progress(
    finished: tuple[pb.MatchView, Transcript],
) -> None:
    """With its end kept, a file cut short is refused: the end names the last entry. With
    its end dropped too, it reads as in progress: that proves only what the entries show."""
    _, transcript = finished
    last = len(transcript.entries)
    cut = dataclasses.replace(transcript, entries=transcript.entries[:-1])
    assert _rejected(cut) == (
        f"end: it names entry {last} as the match's last, but the file's last entry is "
        f"{last - 1}: entries are missing (or added)"
    )
    report = verify(dataclasses.replace(cut, end=None))
    assert (report.result, report.end_signed, report.finished) == ("", False, False)


def test_a_changed_end_is_refused(app: App, finished: tuple[pb.MatchView, Transcript]) -> None:
    _, transcript = finished
    end = transcript.end
    assert end is not None
    header = Header.from_bytes(transcript.header)
    server_key = app.service.ctx.keys.server
    outcome = json.loads(end.outcome)

    def signed(outcome: dict[str, object]) -> MatchEnd:
        """An end the server's key really signed, of an outcome the replay does not reach."""
        data = canonical_json(outcome)
        signature = sign_end(server_key, header.match_id, end.seq, _last_hash(transcript), data)
        return MatchEnd(end.seq, data, signature)

    scores = [outcome["scores"][0] + 5, *outcome["scores"][1:]]
    for changed, problem in [
        (dataclasses.replace(end, seq=end.seq + 1), "end: it names entry"),
        (dataclasses.replace(end, signature=bytes(64)), "end: it is not the server's signature"),
        (
            dataclasses.replace(end, outcome=canonical_json({**outcome, "scores": scores})),
            "end: it is not the server's signature",
        ),
        (signed({**outcome, "scores": scores}), "end: the server's end says"),
        (signed({**outcome, "result": "abandoned", "winners": []}), "end: the server's end says"),
        (signed({**outcome, "result": "won"}), "end: the result must be one of"),
        (signed({**outcome, "extra": 1}), "end: the outcome has unknown fields"),
    ]:
        assert _rejected(dataclasses.replace(transcript, end=changed)).startswith(problem)


def test_an_abandoned_match_exports_with_its_end(
    app: App, players: Callable[..., PlayerClient]
) -> None:
    """Abandoned before the first deal (here by the operator): the end names entry 0 and the
    header's hash, and says abandoned, with no winner."""
    client = players("ann")
    match_id = client.create_match(bot_seats=[1, 2, 3]).match.match_id
    admin.abort_match(app.service.ctx, match_id)
    transcript = _export(client, match_id)
    assert transcript.end is not None
    assert (transcript.end.seq, len(transcript.entries)) == (0, 0)
    report = verify(Transcript.from_bytes(transcript.to_bytes()))
    assert (report.result, report.end_signed, report.finished) == ("abandoned", True, False)
    assert json.loads(transcript.end.outcome) == {
        "result": "abandoned",
        "scores": [0, 0],
        "winners": [],
    }


def test_a_match_abandoned_in_a_hand_exports_without_its_end(
    app: App, players: Callable[..., PlayerClient]
) -> None:
    """The operator abandoned it mid-hand: that hand's deal is never revealed, so the file
    stops before its cut, short of the entry the end names; the end is left out and the file
    reads as in progress (docs/transcript.md)."""
    client = players("ann")
    match_id = client.create_match(bot_seats=[1, 2, 3]).match.match_id
    view = client.view(match_id)
    client.deal(view)
    app.bots.drain()  # the bots' moves first: an abort racing one is refused "try again"
    admin.abort_match(app.service.ctx, match_id)
    entries, history = client.full_history(match_id)
    assert history.end.seq == len(entries) >= 1  # the server states its end...
    transcript = _export(client, match_id)
    assert (transcript.end, transcript.entries) == (None, ())  # ...which the file cannot reach
    assert verify(transcript).result == ""
