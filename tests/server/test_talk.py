"""Table talk (issue 32) on a real server: said by seated players only, signed by the seat and
chained beside the log (a pending move stays good), bounded, refused without a change, read by
every seat, carried in the exported transcript and checked by ``verify``: a forged, dropped or
reordered talk entry is refused with a clear message."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

import grpc
import pytest

from server.app import App
from shared import protocol
from shared.crypto.keys import generate_private_key, sign
from shared.pb import canasta_pb2 as pb
from shared.talk import talk_hash
from shared.transcript import Transcript, TranscriptError, header_hash, verify
from tests.testkit import PlayerClient, partners_and_bots, plain_turn

from .conftest import AppFactory
from .mailkit import FakeClock

HOUR = 3_600_000


def talk_now(client: PlayerClient, match_id: str, after: int = 0) -> pb.GetTalkResponse:
    response: pb.GetTalkResponse = client.stub.GetTalk(
        pb.GetTalkRequest(match_id=match_id, after_seq=after), metadata=client.metadata
    )
    return response


def signed(
    client: PlayerClient, match_id: str, words: str, kind: str = "say", **change: Any
) -> pb.SayRequest:
    """A talk entry signed as the client signs it (``shared.protocol.say_request``); ``change``
    alters fields after signing (a forgery), or ``seat``/``key`` before."""
    seat = change.pop("seat", None)
    key = change.pop("key", client.key)
    now = talk_now(client, match_id, 2**62)
    if seat is None:
        seat = client.view(match_id).view.seat
    request = protocol.say_request(key, match_id, seat, now, kind, words)
    for name, value in change.items():
        setattr(request, name, value)
    return request


def say(
    client: PlayerClient, match_id: str, words: str, kind: str = "say", **change: Any
) -> pb.TalkEntry:
    request = signed(client, match_id, words, kind, **change)
    entry: pb.TalkEntry = client.stub.Say(request, metadata=client.metadata).entry
    assert protocol.talk_receipt_matches(request, entry, client.server_key)
    return entry


def refused(call: Callable[[], object]) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as caught:
        call()
    return caught.value


@pytest.fixture
def app(make_app: AppFactory) -> App:
    return make_app(token_ttl_seconds=365 * 86_400)  # the rate test moves the clock days on


@pytest.fixture
def table(app: App, players: Callable[..., PlayerClient]) -> tuple[str, PlayerClient, PlayerClient]:
    """Ann (seat 0) and her partner Bob (seat 2), bots in seats 1 and 3, the first hand dealt."""
    ann, bob = players("ann"), players("bob")
    match_id = partners_and_bots(ann, bob)
    app.bots.drain()
    for client in (ann, bob):
        view = client.view(match_id)
        if view.HasField("dealing_seat") and view.dealing_seat == view.view.seat:
            client.deal(view)
    app.bots.drain()
    return match_id, ann, bob


def test_every_seat_reads_what_is_said_and_a_pending_move_stays_good(
    app: App, table: tuple[str, PlayerClient, PlayerClient]
) -> None:
    match_id, ann, bob = table
    actor = ann.view(match_id).match.to_act
    assert actor in (0, 2)  # the bots have played: a person is to move
    mover = ann if actor == 0 else bob
    view = mover.view(match_id)
    envelope = mover.envelope(view, plain_turn(view))
    first = say(ann, match_id, "good luck, partner ♥")
    second = say(bob, match_id, "thanks — you too")
    assert (first.seq, second.seq) == (1, 2)
    for client in (ann, bob):
        read = talk_now(client, match_id)
        assert [e.text for e in read.entries] == ["good luck, partner ♥", "thanks — you too"]
        assert [e.display_name for e in read.entries] == ["ann", "bob"]
        assert read.count == 2
        assert read.head_hash == second.talk_hash
    assert mover.view(match_id).version == view.version  # talking is not a move
    mover.stub.Submit(envelope, metadata=mover.metadata)  # signed before the talk: still good
    last = talk_now(ann, match_id, 1)
    assert [e.seq for e in last.entries] == [2]
    only = ann.stub.GetTalk(pb.GetTalkRequest(match_id=match_id, last=1), metadata=ann.metadata)
    assert [e.seq for e in only.entries] == [2]


def test_bad_talk_is_refused_with_a_clear_status_and_changes_nothing(
    app: App, players: Callable[..., PlayerClient], table: tuple[str, PlayerClient, PlayerClient]
) -> None:
    match_id, ann, bob = table
    say(ann, match_id, "hello")
    bad = grpc.StatusCode.INVALID_ARGUMENT
    moved = grpc.StatusCode.FAILED_PRECONDITION
    cases: list[tuple[str, str, dict[str, Any], grpc.StatusCode, str]] = [
        ("hi", "say", {"text": "changed"}, grpc.StatusCode.UNAUTHENTICATED, "signature"),
        ("hi", "say", {"key": bob.key}, grpc.StatusCode.UNAUTHENTICATED, "key of seat 0"),
        ("hi", "say", {"seat": 2, "key": bob.key}, grpc.StatusCode.PERMISSION_DENIED, "not seat 2"),
        ("bad\x1b[2J", "say", {}, bad, "U+001B"),
        ("evil \u202e", "say", {}, bad, "U+202E"),
        ("x" * 281, "say", {}, bad, "at most 280"),
        ("", "say", {}, bad, "empty"),
        ("hi", "whisper", {}, bad, "kind"),
        ("hi", "say", {"seq": 1}, moved, "talk moved on"),
        ("hi", "say", {"prev_hash": bytes(32)}, moved, "talk moved on"),
        ("hi", "say", {"at_seq": 10_000}, moved, "log's head"),
        ("hi", "say", {"at_hash": bytes(32)}, bad, "at_hash"),
        ("hi", "say", {"client_time_ms": -5}, bad, "client_time_ms"),
    ]
    for text, kind, change, code, words in cases:
        error = refused(lambda: say(ann, match_id, text, kind, **change))  # noqa: B023
        assert error.code() == code, (words, error.details())
        assert words in (error.details() or ""), (words, error.details())
    error = refused(lambda: say(ann, "0" * 32, "hi", seat=0))
    assert error.code() == grpc.StatusCode.NOT_FOUND
    eve = players("eve")
    error = refused(
        lambda: eve.stub.GetTalk(pb.GetTalkRequest(match_id=match_id), metadata=eve.metadata)
    )
    assert error.code() == grpc.StatusCode.PERMISSION_DENIED
    assert talk_now(ann, match_id).count == 1  # nothing of it was stored


def test_the_rate_is_bounded_per_player_per_hour_and_day(
    app: App, table: tuple[str, PlayerClient, PlayerClient]
) -> None:
    match_id, ann, bob = table
    clock = FakeClock(app.service.ctx.clock())
    app.service.ctx.clock = clock
    for number in range(10):
        say(ann, match_id, f"message {number}")
    error = refused(lambda: say(ann, match_id, "one too many"))
    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "within an hour" in (error.details() or "")
    say(bob, match_id, "my own allowance")  # per player
    for _ in range(4):
        clock.now += HOUR + 1
        for number in range(10):
            say(ann, match_id, f"later {number}")
    clock.now += HOUR + 1
    error = refused(lambda: say(ann, match_id, "over the day"))
    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "within a day" in (error.details() or "")
    assert talk_now(ann, match_id).count == 51


def test_talk_needs_a_started_match_and_ends_with_it(
    app: App, players: Callable[..., PlayerClient]
) -> None:
    ann, bob = players("ann"), players("bob")
    created = ann.create_match(seat=0, bot_seats=[1, 3])
    match_id = created.match.match_id
    now = pb.GetTalkResponse(head_hash=bytes(32), version_hash=bytes(32))
    request = protocol.say_request(ann.key, match_id, 0, now, "say", "anyone?")
    error = refused(lambda: ann.stub.Say(request, metadata=ann.metadata))
    assert error.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "not started" in (error.details() or "")
    bob.join_match(created.invite_code, seat=2)
    say(ann, match_id, "now we play")
    ann.stub.Submit(_resign(ann, match_id), metadata=ann.metadata)
    error = refused(lambda: say(bob, match_id, "too late"))
    assert error.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "over" in (error.details() or "")


def _resign(client: PlayerClient, match_id: str) -> pb.SubmitRequest:
    view = client.view(match_id)
    return client.envelope(view, ["resign"])


def test_each_side_declares_its_conventions_once(
    app: App, players: Callable[..., PlayerClient]
) -> None:
    ann, bob, cat, dan = (players(n) for n in ("ann", "bob", "cat", "dan"))
    created = ann.create_match(seat=0)
    for seat, client in ((1, bob), (2, cat), (3, dan)):
        client.join_match(created.invite_code, seat=seat)
    match_id = created.match.match_id
    say(ann, match_id, "we open light; an ace discard asks for aces", "conventions")
    error = refused(lambda: say(cat, match_id, "and another thing", "conventions"))
    assert error.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "declared its conventions already" in (error.details() or "")
    say(bob, match_id, "standard", "conventions")
    read = talk_now(dan, match_id, 2**62)
    assert [(c.seat, c.text) for c in read.conventions] == [
        (0, "we open light; an ace discard asks for aces"),
        (1, "standard"),
    ]
    assert read.entries == []  # the page is empty; the conventions come whatever the page


def _finished_with_talk(
    app: App, ann: PlayerClient, bob: PlayerClient
) -> tuple[str, list[pb.TalkEntry]]:
    """Ann and Bob talk at a match the bots then play to its end (both covered)."""
    created = ann.create_match(seat=0, bot_seats=[1, 3], target=100)
    bob.join_match(created.invite_code, seat=2)
    match_id = created.match.match_id
    said = [say(ann, match_id, "we play clean", "conventions")]
    app.bots.drain()
    said.append(say(bob, match_id, "good luck"))
    said.append(say(ann, match_id, "you too ♣"))
    for client in (ann, bob):
        client.stub.SetCover(
            pb.SetCoverRequest(match_id=match_id, covered=True), metadata=client.metadata
        )
    for _ in range(400):
        app.bots.drain()
        if ann.view(match_id).match.status == pb.MATCH_STATUS_FINISHED:
            return match_id, said
    raise AssertionError("the bots did not finish the match")


def _export(client: PlayerClient, match_id: str) -> Transcript:
    entries, history = client.full_history(match_id)
    talk = talk_now(client, match_id).entries
    return protocol.transcript_of(history.header, entries, history.hands, history.end, talk)


def test_the_exported_transcript_carries_the_talk_and_verify_checks_it(
    app: App, players: Callable[..., PlayerClient]
) -> None:
    ann, bob = players("ann"), players("bob")
    match_id, said = _finished_with_talk(app, ann, bob)
    transcript = _export(ann, match_id)
    assert [t.text for t in transcript.talk] == ["we play clean", "good luck", "you too ♣"]
    assert transcript.end is not None
    outcome = json.loads(transcript.end.outcome)
    assert outcome["talk"] == [3, said[-1].talk_hash.hex()]
    data = transcript.to_bytes()
    assert Transcript.from_bytes(data) == transcript
    report = verify(Transcript.from_bytes(data))
    assert report.talk == 3
    assert report.end_signed

    def refused_file(changed: Transcript, words: str) -> None:
        with pytest.raises(TranscriptError) as caught:
            verify(Transcript.from_bytes(changed.to_bytes()))
        assert words in str(caught.value), str(caught.value)

    talk = list(transcript.talk)
    forged = dataclasses.replace(talk[1], text="bad luck")
    refused_file(
        dataclasses.replace(transcript, talk=(talk[0], forged, talk[2])),
        "talk 2: the signature does not verify with the key of seat 2",
    )
    # Signed by another key for Bob's seat (the operator's, say): refused the same way.
    prev = talk_hash(talk[0].message(match_id, header_hash(transcript.header)), talk[0].signature)
    other = generate_private_key()
    resigned = dataclasses.replace(talk[1], signature=sign(other, talk[1].message(match_id, prev)))
    refused_file(
        dataclasses.replace(transcript, talk=(talk[0], resigned, talk[2])),
        "talk 2: the signature does not verify with the key of seat 2",
    )
    refused_file(
        dataclasses.replace(transcript, talk=(talk[0], talk[2])),
        "talk 2: it is numbered 3",
    )
    refused_file(
        dataclasses.replace(transcript, talk=(talk[0], talk[2], talk[1])),
        "talk 2: it is numbered 3",
    )
    renumbered = dataclasses.replace(talk[2], seq=2)
    refused_file(
        dataclasses.replace(transcript, talk=(talk[0], renumbered)),
        "talk 2: the signature does not verify",
    )
    refused_file(
        dataclasses.replace(transcript, talk=tuple(talk[:2])),
        "end: it names 3 talk entries",
    )
    refused_file(dataclasses.replace(transcript, talk=()), "end: it names 3 talk entries")
    refused_file(
        dataclasses.replace(
            transcript, talk=(talk[0], talk[1], dataclasses.replace(talk[2], receipt=bytes(64)))
        ),
        "talk 3: the receipt is not the server's",
    )
    moved = dataclasses.replace(talk[2], at_seq=talk[2].at_seq + 1)
    refused_file(
        dataclasses.replace(transcript, talk=(talk[0], talk[1], moved)),
        "talk 3: the hash it names is not the hash of move",
    )


def test_a_file_without_talk_has_no_talk_key(
    app: App, players: Callable[..., PlayerClient]
) -> None:
    ann = players("ann")
    created = ann.create_match(seat=0, bot_seats=[1, 2, 3])
    match_id = created.match.match_id
    ann.stub.Submit(_resign(ann, match_id), metadata=ann.metadata)
    transcript = _export(ann, match_id)
    assert transcript.end is not None  # resigned: over, and signed
    assert transcript.talk == ()
    assert b'"talk"' not in transcript.to_bytes()
    assert b"talk" not in transcript.end.outcome


@pytest.mark.parametrize("policy", ["none", "table", "after-hand", "after-match"])
def test_spectators_read_the_talk_under_table_or_later_and_never_talk(
    app: App, players: Callable[..., PlayerClient], policy: str
) -> None:
    ann, bob, sue = players("ann"), players("bob"), players("sue")
    created = ann.stub.CreateMatch(
        pb.CreateMatchRequest(preset="classic", seat=0, bot_seats=[1, 3], spectators=policy),
        metadata=ann.metadata,
    )
    bob.join_match(created.invite_code, seat=2)
    match_id = created.match.match_id
    say(ann, match_id, "hello, whoever follows")
    ask = pb.GetTalkRequest(match_id=match_id)
    if policy == "none":
        error = refused(lambda: sue.stub.GetTalk(ask, metadata=sue.metadata))
        assert error.code() == grpc.StatusCode.PERMISSION_DENIED
        assert "allow no spectators" in (error.details() or "")
    else:
        read = sue.stub.GetTalk(ask, metadata=sue.metadata)
        assert [e.text for e in read.entries] == ["hello, whoever follows"]
    now = talk_now(ann, match_id, 2**62)
    request = protocol.say_request(sue.key, match_id, 0, now, "say", "may I?")
    error = refused(lambda: sue.stub.Say(request, metadata=sue.metadata))
    assert error.code() == grpc.StatusCode.PERMISSION_DENIED
    assert talk_now(ann, match_id).count == 1
