"""Racing submissions and restarts: exactly one move wins per seq; a restarted server carries on."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable

import grpc

from server.app import App
from server.bots import default_chooser
from server.testkit import PlayerClient, authoritative_state, replay_history
from shared.pb import canasta_pb2 as pb

from .conftest import AppFactory

THREADS = 16


def _race(requests: list[pb.SubmitRequest], stub_for: Callable[[int], object]) -> list[object]:
    results: list[object] = [None] * len(requests)
    start = threading.Barrier(len(requests))

    def run(index: int) -> None:
        start.wait()
        try:
            results[index] = stub_for(index).Submit(requests[index])  # type: ignore[attr-defined]
        except grpc.RpcError as error:
            results[index] = error.code()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(requests))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return results


def test_racing_different_moves_exactly_one_wins(
    app: App, players: Callable[..., PlayerClient]
) -> None:
    alice = players("alice")
    match_id = alice.create_match(bot_seats=[1, 2, 3]).match.match_id
    channels = [grpc.insecure_channel(f"127.0.0.1:{app.port}") for _ in range(THREADS)]
    try:
        stubs = [PlayerClient(c, key=alice.key).stub for c in channels]
        for _round in range(5):
            app.bots.drain()
            view = alice.view(match_id)
            if view.match.status != pb.MATCH_STATUS_PLAYING:
                break
            if view.HasField("dealing_seat"):
                requests = [
                    alice.envelope(
                        view, ["deal"], deal_commitment=view.deal_commitment, client_time_ms=i
                    )
                    for i in range(THREADS)
                ]
            else:
                requests = [
                    alice.envelope(view, ["draw"], client_time_ms=i) for i in range(THREADS)
                ]
            results = _race(requests, lambda i: stubs[i])
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
    results = _race([request] * THREADS, lambda i: alice.stub)
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
