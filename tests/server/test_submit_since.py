"""A Submit that names the version the client holds (issue 29): the reply's view carries only
the events the move added, over real gRPC on SQLite, and stays the mover's own view."""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from server.app import App
from shared.pb import canasta_pb2 as pb
from tests.testkit import PlayerClient, plain_turn, seated_match

from .audit import LeakAudit


def _send(
    client: PlayerClient, view: pb.MatchView, seat: int, since: int | None
) -> pb.SubmitResponse:
    if view.HasField("dealing_seat"):
        request = client.envelope(view, ["deal"], seat=seat, deal_commitment=view.deal_commitment)
    else:
        request = client.envelope(view, plain_turn(view), seat=seat)
    if since is not None:
        request.since_version = since
    return cast(pb.SubmitResponse, client.stub.Submit(request, metadata=client.metadata))


def test_the_reply_carries_what_the_move_added(
    app: App, players: Callable[..., PlayerClient]
) -> None:
    seats = [players(f"player {n}") for n in range(4)]
    match_id = seated_match(seats)
    audit = LeakAudit(app, match_id)
    deltas = cuts = 0
    for number in range(260):  # past the end of the first hand (about 200 plain moves) and a cut
        seat = seats[0].view(match_id).match.to_act
        client = seats[seat]
        before = client.view(match_id)
        # Every third move names no version (an older client): the whole view comes back.
        since = None if number % 3 == 2 else before.version
        response = _send(client, before, seat, since)
        reply = response.view
        audit.check(seat, response)
        whole = client.view(match_id)  # the same version: nobody else moved
        assert whole.version == reply.version == before.version + 1
        if since is None or before.HasField("dealing_seat"):
            assert not reply.HasField("events_from")
            assert reply == whole
            cuts += before.HasField("dealing_seat")
            continue
        deltas += 1
        start = reply.events_from
        assert start == len(before.view.events)  # the events the client held
        assert list(whole.view.events[:start]) == list(before.view.events)
        assert list(reply.view.events) == list(whole.view.events[start:])
        assert reply.view.events  # a plain move always adds one
        rest = pb.MatchView()
        rest.CopyFrom(reply)
        rest.ClearField("events_from")
        del rest.view.events[:]
        rest.view.events.extend([*before.view.events, *reply.view.events])
        assert rest == whole
    assert deltas > 100
    assert cuts >= 1


def test_a_version_other_than_the_one_the_move_follows_gets_the_whole_view(
    app: App, players: Callable[..., PlayerClient]
) -> None:
    seats = [players(f"player {n}") for n in range(4)]
    match_id = seated_match(seats)
    view = seats[0].view(match_id)
    for _ in range(3):  # a few moves, so that an older version exists
        seat = view.match.to_act
        _send(seats[seat], seats[seat].view(match_id), seat, None)
        view = seats[0].view(match_id)
    seat = view.match.to_act
    before = seats[seat].view(match_id)
    reply = _send(seats[seat], before, seat, before.version - 2).view
    assert not reply.HasField("events_from")
    assert reply == seats[seat].view(match_id)


def test_a_replayed_envelope_gets_the_whole_view(
    app: App, players: Callable[..., PlayerClient]
) -> None:
    seats = [players(f"player {n}") for n in range(4)]
    match_id = seated_match(seats)
    view = seats[0].view(match_id)
    while view.HasField("dealing_seat") or view.view.phase != pb.PHASE_DRAW:
        seat = view.match.to_act
        _send(seats[seat], seats[seat].view(match_id), seat, None)
        view = seats[0].view(match_id)
    seat = view.match.to_act
    client = seats[seat]
    before = client.view(match_id)
    request = client.envelope(before, plain_turn(before), seat=seat)
    request.since_version = before.version
    first = cast(pb.SubmitResponse, client.stub.Submit(request, metadata=client.metadata))
    assert first.view.HasField("events_from")
    again = cast(pb.SubmitResponse, client.stub.Submit(request, metadata=client.metadata))
    assert again.receipt == first.receipt
    assert not again.view.HasField("events_from")
    assert again.view == client.view(match_id)
