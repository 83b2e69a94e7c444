"""Racing requests and restarts: exactly one move wins per seq, a key registers once, a
challenge or invitation is used once, racing joins all get seats; a restarted server carries on.

On SQLite one process serializes its writes; on PostgreSQL the requests really run at once,
so these tests are what shows that the database's locks and constraints do the job there.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from functools import partial

import grpc
import pytest

from server.app import App
from server.service.play.bots import default_chooser
from server.store.repository import Repository
from shared.pb import canasta_pb2 as pb
from tests.testkit import PlayerClient, authoritative_state, replay_history

from .conftest import AppFactory

THREADS = 16


def _race(calls: list[Callable[[], object]]) -> list[object]:
    """Start every call at once (one thread each); each result, or its status code."""
    results: list[object] = [None] * len(calls)
    start = threading.Barrier(len(calls))

    def run(index: int) -> None:
        start.wait()
        try:
            results[index] = calls[index]()
        except grpc.RpcError as error:
            results[index] = error.code()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return results


@pytest.mark.parametrize("servers", [1, 2])
def test_racing_different_moves_exactly_one_wins(
    app: App, make_app: AppFactory, players: Callable[..., PlayerClient], servers: int
) -> None:
    """With two servers on one database (replicas) the racers are split between them, so
    only the database, not a lock in one process, can keep all but one out."""
    apps = [app] + [make_app() for _ in range(servers - 1)]  # the same name: the same data
    alice = players("alice")
    match_id = alice.create_match(bot_seats=[1, 2, 3]).match.match_id
    channels = [
        grpc.insecure_channel(f"127.0.0.1:{apps[i % servers].port}") for i in range(THREADS)
    ]
    try:
        stubs = [PlayerClient(c, key=alice.key).stub for c in channels]
        for _round in range(5):
            for each in apps:
                each.bots.drain()
            view = alice.view(match_id)
            if view.match.status != pb.MATCH_STATUS_PLAYING:
                break
            if view.HasField("dealing_seat"):
                # A cut has one form (no time: docs/fair-deal.md), so racing cuts are one move
                # sent many times; the race is between draws.
                alice.deal(view)
                for each in apps:
                    each.bots.drain()
                view = alice.view(match_id)
            requests = [alice.envelope(view, ["draw"], client_time_ms=i) for i in range(THREADS)]
            results = _race([partial(stubs[i].Submit, r) for i, r in enumerate(requests)])
            wins = [r for r in results if isinstance(r, pb.SubmitResponse)]
            assert len(wins) == 1, results
            assert Counter(r for r in results if not isinstance(r, pb.SubmitResponse)) == {
                grpc.StatusCode.ABORTED: THREADS - 1
            }
            assert wins[0].receipt.seq == view.version + 1
            if view.view.phase == pb.PHASE_DRAW:  # finish the turn
                after = alice.view(match_id)
                alice.submit(after, [f"discard {after.view.hand[0]}"])
    finally:
        for channel in channels:
            channel.close()
    entries, history = alice.full_history(match_id)
    assert [e.seq for e in entries] == list(range(1, len(entries) + 1))
    replay_history(match_id, history, entries, alice.server_key)


def test_racing_the_same_envelope_applies_it_once(
    app: App, players: Callable[..., PlayerClient]
) -> None:
    alice = players("alice")
    match_id = alice.create_match(bot_seats=[1, 2, 3]).match.match_id
    view = alice.view(match_id)
    request = alice.envelope(view, ["deal"], deal_commitment=view.deal_commitment)
    results = _race([partial(alice.stub.Submit, request)] * THREADS)
    receipts = {r.receipt.SerializeToString() for r in results if isinstance(r, pb.SubmitResponse)}
    assert len(receipts) == 1
    assert all(isinstance(r, pb.SubmitResponse) for r in results)
    entries, _ = alice.full_history(match_id)
    assert sum(1 for e in entries if e.seq == view.version + 1) == 1


def test_restart_carries_on_every_match(make_app: AppFactory) -> None:
    first = make_app("data", bots=False)  # bots stopped: the restart must make them play
    with grpc.insecure_channel(f"127.0.0.1:{first.port}") as channel:
        alice = PlayerClient(channel).join_server("alice")
        created = alice.create_match(bot_seats=[1, 2, 3], target=800)
        match_id = created.match.match_id
        view = alice.view(match_id)
        alice.deal(view)
        view = alice.view(match_id)
        before = (view.version, view.head_hash, list(view.view.hand))
        to_act = view.match.to_act
    first.stop()

    second = make_app("data", bots=False)
    with grpc.insecure_channel(f"127.0.0.1:{second.port}") as channel:
        alice = PlayerClient(channel, key=alice.key)
        alice.login()
        view = alice.view(match_id)
        assert (view.version, view.head_hash, list(view.view.hand)) == before
        second.bots.start()  # finds the match where a bot is to move, and plays it
        second.bots.drain()
        if to_act != 0:
            assert alice.view(match_id).version > view.version
        for _ in range(5000):
            second.bots.drain()
            view = alice.view(match_id)
            if view.match.status == pb.MATCH_STATUS_FINISHED:
                break
            if not view.match.HasField("to_act") or view.match.to_act != 0:
                continue
            if view.HasField("dealing_seat"):
                alice.deal(view)
            else:
                state = authoritative_state(second.service, match_id)
                alice.submit(view, [str(default_chooser()(state, 0))])
        assert view.match.status == pb.MATCH_STATUS_FINISHED
        entries, history = alice.full_history(match_id)
        replayed = replay_history(match_id, history, entries, alice.server_key)
        assert list(replayed.scores) == list(view.view.scores)


def _codes(results: list[object]) -> Counter[object]:
    return Counter(r if isinstance(r, grpc.StatusCode) else "ok" for r in results)


def test_racing_registrations_of_one_key(channel: grpc.Channel) -> None:
    client = PlayerClient(channel)
    request = client.registration("alice")
    results = _race([partial(client.stub.Register, request)] * THREADS)
    assert _codes(results) == {"ok": 1, grpc.StatusCode.ALREADY_EXISTS: THREADS - 1}


def test_racing_answers_to_one_challenge_get_one_token(channel: grpc.Channel) -> None:
    client = PlayerClient(channel)
    client.register("alice")
    challenge = client.stub.Challenge(pb.ChallengeRequest(public_key=client.public_key))
    answer = client.answer(challenge.challenge)
    results = _race([partial(client.stub.Authenticate, answer)] * THREADS)
    assert _codes(results) == {"ok": 1, grpc.StatusCode.UNAUTHENTICATED: THREADS - 1}


def test_racing_registrations_with_one_invitation(make_app: AppFactory) -> None:
    app = make_app(registration="invite")
    now = app.service.ctx.clock()
    with app.db.write() as session:
        Repository(session, b"").add_invitation("only-one", now, now + 60_000)
    with grpc.insecure_channel(f"127.0.0.1:{app.port}") as channel:
        clients = [PlayerClient(channel) for _ in range(THREADS)]
        results = _race(
            [partial(c.stub.Register, c.registration("p", "only-one")) for c in clients]
        )
        assert _codes(results) == {"ok": 1, grpc.StatusCode.PERMISSION_DENIED: THREADS - 1}
    with app.db.read() as session:
        assert len(Repository(session, b"").players()) == 1


def test_racing_joins_all_get_a_seat(players: Callable[..., PlayerClient]) -> None:
    alice = players("alice")
    created = alice.create_match("six_2x3")
    others = [players(f"p{i}") for i in range(5)]
    results = _race([partial(p.join_match, created.invite_code) for p in others])
    assert _codes(results) == {"ok": 5}
    seats = sorted(r.seat for r in results if isinstance(r, pb.JoinMatchResponse))
    assert seats == [1, 2, 3, 4, 5]
    assert alice.view(created.match.match_id).match.status == pb.MATCH_STATUS_PLAYING
