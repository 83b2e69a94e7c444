"""Scale-out: two ``canasta-server`` processes on one PostgreSQL database.

Each test starts two real server processes, each on its own port, on one database of the
PostgreSQL the tests run. Players connect to one or the other, so every process's copy of a
match falls behind the other's moves and must notice. Exactly as with one process, every move
is applied once, in order, with a verifiable hash chain and the engine's scores, and a Watch
stream on one process hears the moves stored through the other (the change feed).
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest

from shared.pb import canasta_pb2 as pb
from tests.testkit import (
    PlayerClient,
    plain_turn,
    replay_history,
    seated_match,
    start_server_process,
)

RACERS = 8


def _wait_until(condition: Callable[[], bool], seconds: float = 20.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


@pytest.fixture
def ports(tmp_path: Path, database_url: Callable[[str], str]) -> Iterator[list[int]]:
    """Two server processes on one database (each its own data directory, the same keys)."""
    (tmp_path / "none.toml").write_text("")
    env = {
        **os.environ,
        "CANASTA_SERVER_DATABASE_URL": database_url("server"),
        "CANASTA_SERVER_CONFIG": str(tmp_path / "none.toml"),
        "CANASTA_SERVER_FEED_POLL_MS": "50",
    }
    processes: list[subprocess.Popen[str]] = []
    found: list[int] = []
    try:
        for _ in range(2):  # one data directory: both sign with the same server key
            process, port = start_server_process(tmp_path / "data", env=env)
            processes.append(process)
            found.append(port)
        yield found
    finally:
        for process in processes:
            process.send_signal(signal.SIGTERM)
        for process in processes:
            assert process.wait(30) == 0


def _player(port: int, name: str, key: object = None) -> PlayerClient:
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    client = PlayerClient(channel, key=key)  # type: ignore[arg-type]
    return client.join_server(name) if key is None else client


pytestmark = pytest.mark.parametrize(
    "engine", [pytest.param("postgres", marks=pytest.mark.postgres)]
)


def test_a_match_played_across_two_processes_keeps_one_chain(ports: list[int]) -> None:
    """Four players, two on each process, play a whole hand; every move is applied once and
    in order, and the signed record replays through the engine to the scores shown."""
    seats = [_player(ports[seat % 2], f"p{seat}") for seat in range(4)]
    match_id = seated_match(seats)
    moves = 0
    while moves < 1000:
        view = seats[0].view(match_id)
        player = seats[view.match.to_act]
        view = player.view(match_id)  # the actor's own view, from its own process
        if view.HasField("dealing_seat"):
            if view.view.hand_number == 1:
                break  # hand 1 is over and scored; hand 2 is not dealt yet
            response = player.deal(view)
        else:
            response = player.submit(view, plain_turn(view))
        assert response.receipt.seq == view.version + 1
        moves += 1
    entries, history = seats[1].full_history(match_id)
    assert [e.seq for e in entries] == list(range(1, moves + 1))
    replayed = replay_history(match_id, history, entries, seats[0].server_key)
    shown = seats[1].view(match_id)
    assert replayed.hand_number == shown.view.hand_number == 1
    assert list(replayed.scores) == list(shown.view.scores)


def test_racing_moves_through_both_processes_apply_once(ports: list[int]) -> None:
    """The same seat's next move, sent at once as different envelopes through both
    processes: exactly one is applied, the others are told the match moved on."""
    alice = _player(ports[0], "alice")
    match_id = alice.create_match(seat=0, bot_seats=[1, 2, 3]).match.match_id

    def ready() -> bool:
        view = alice.view(match_id)
        if view.HasField("dealing_seat") and view.dealing_seat == 0:
            alice.deal(view)
            return False
        return view.match.to_act == 0 and view.view.phase == pb.PHASE_DRAW

    assert _wait_until(ready)
    view = alice.view(match_id)
    racers = [_player(ports[i % 2], "alice", key=alice.key) for i in range(RACERS)]
    requests = [alice.envelope(view, ["draw"], client_time_ms=1000 + i) for i in range(RACERS)]
    outcomes: list[object] = [None] * RACERS
    start = threading.Barrier(RACERS)

    def race(index: int) -> None:
        start.wait()
        try:
            outcomes[index] = racers[index].stub.Submit(requests[index]).receipt.seq
        except grpc.RpcError as error:
            outcomes[index] = error.code()

    threads = [threading.Thread(target=race, args=(i,)) for i in range(RACERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert outcomes.count(view.version + 1) == 1, outcomes
    assert outcomes.count(grpc.StatusCode.ABORTED) == RACERS - 1, outcomes
    assert alice.view(match_id).version == view.version + 1


def test_a_watch_on_one_process_hears_moves_stored_by_the_other(ports: list[int]) -> None:
    alice = _player(ports[0], "alice")
    match_id = alice.create_match(seat=0, bot_seats=[1, 2, 3]).match.match_id
    elsewhere = _player(ports[1], "alice", key=alice.key)  # alice again, on the other process
    elsewhere.login()
    stream = alice.watch([match_id], timeout=30)
    try:
        changes = iter(stream)
        first = next(changes)
        view = elsewhere.view(match_id)
        assert view.HasField("dealing_seat")
        assert view.dealing_seat == 0  # the only human cuts
        stored = elsewhere.deal(view).receipt.seq
        while (change := next(changes)).version < stored:
            pass
    finally:
        stream.cancel()
    assert change.version >= stored > first.version
