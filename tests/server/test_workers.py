"""``serve --workers N``: several real server processes on one port and one database.

Each test starts ``canasta-server`` as a process (the supervisor) with two workers, on a
SQLite file and on a real PostgreSQL. Players connect with channels of their own, so the
kernel spreads their connections, and so their moves, over the workers: every worker's copy
of a match falls behind the others' moves and must notice. Exactly as with one process, every
move is applied once, in order, with a verifiable hash chain and the engine's scores.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

import grpc
import pytest

from server.testkit import PlayerClient, plain_turn, replay_history, start_server_process
from shared.pb import canasta_pb2 as pb

WORKERS = 2
CHANNELS = 8


def _workers_of(supervisor: int) -> list[int]:
    """The supervisor's child processes (Linux ``/proc``)."""
    children = Path(f"/proc/{supervisor}/task/{supervisor}/children").read_text().split()
    return [int(pid) for pid in children]


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except FileNotFoundError:
        return True
    return state == "Z"  # exited, not yet reaped


def _wait_until(condition: Callable[[], bool], seconds: float = 20.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


@pytest.fixture
def server(
    tmp_path: Path, database_url: Callable[[str], str]
) -> Iterator[tuple[subprocess.Popen[str], int]]:
    env = {
        **os.environ,
        "CANASTA_SERVER_WORKERS": str(WORKERS),
        "CANASTA_SERVER_DATABASE_URL": database_url("server"),
        "CANASTA_SERVER_CONFIG": str(tmp_path / "none.toml"),
    }
    (tmp_path / "none.toml").write_text("")
    process, port = start_server_process(tmp_path / "data", env=env)
    yield process, port
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        process.wait(30)


def _players(port: int, count: int) -> list[PlayerClient]:
    """Players with a connection each (a channel that shares no connection with the others)."""
    options = [("grpc.use_local_subchannel_pool", 1)]
    clients = []
    for number in range(count):
        channel = grpc.insecure_channel(f"127.0.0.1:{port}", options=options)
        clients.append(PlayerClient(channel).join_server(f"p{number}"))
    return clients


def test_workers_share_one_port_and_all_serve(
    server: tuple[subprocess.Popen[str], int],
) -> None:
    process, port = server
    workers = _workers_of(process.pid)
    assert len(workers) == WORKERS
    # Connections land on the workers the kernel picks: with enough of them, each worker
    # has served some (its request log names its process id).
    players = _players(port, 16)
    for player in players:
        player.my_matches()
    log = (Path(_data_dir(process)) / "server.log").read_text()
    assert all(f"[{pid}]" in log for pid in workers), log[-2000:]


def _data_dir(process: subprocess.Popen[str]) -> str:
    args = list(process.args)  # type: ignore[arg-type]
    return str(args[args.index("--data-dir") + 1])


def test_a_match_played_across_workers_keeps_one_chain(
    server: tuple[subprocess.Popen[str], int],
) -> None:
    """Four players on four connections play a whole hand through whichever worker holds
    each connection; every move is applied once and in order, and the signed record
    replays through the engine to the scores the server shows."""
    _, port = server
    seats = _players(port, 4)
    created = seats[0].create_match(seat=0)
    match_id = created.match.match_id
    for seat in (1, 2, 3):
        seats[seat].join_match(created.invite_code, seat=seat)
    moves = 0
    while moves < 1000:
        view = seats[0].view(match_id)
        player = seats[view.match.to_act]
        view = player.view(match_id)  # the actor's own view, from its own connection
        if view.HasField("dealing_seat"):
            if view.view.hand_number == 1:
                break  # hand 1 is over and scored; hand 2 is not dealt yet
            response = player.deal(view)
        else:
            response = player.submit(view, plain_turn(view))
        assert response.receipt.seq == view.version + 1
        moves += 1
    entries, history = seats[0].full_history(match_id)
    assert [e.seq for e in entries] == list(range(1, moves + 1))
    replayed = replay_history(match_id, history, entries, seats[0].server_key)
    shown = seats[0].view(match_id)
    assert replayed.hand_number == shown.view.hand_number == 1
    assert list(replayed.scores) == list(shown.view.scores)
    assert any(replayed.scores)


def test_racing_submissions_through_different_workers_apply_once(
    server: tuple[subprocess.Popen[str], int],
) -> None:
    """The same seat's next move, sent at once as different envelopes over several
    connections (so through both workers): exactly one is applied, the others are told the
    match moved on."""
    _, port = server
    (alice,) = _players(port, 1)
    match_id = alice.create_match(seat=0, bot_seats=[1, 2, 3]).match.match_id
    view = _my_turn(alice, match_id)
    options = [("grpc.use_local_subchannel_pool", 1)]
    racers = [
        PlayerClient(grpc.insecure_channel(f"127.0.0.1:{port}", options=options), key=alice.key)
        for _ in range(CHANNELS)
    ]
    requests = [alice.envelope(view, ["draw"], client_time_ms=1000 + i) for i in range(CHANNELS)]
    outcomes: list[object] = [None] * CHANNELS
    start = threading.Barrier(CHANNELS)

    def race(index: int) -> None:
        start.wait()
        try:
            outcomes[index] = racers[index].stub.Submit(requests[index]).receipt.seq
        except grpc.RpcError as error:
            outcomes[index] = error.code()

    threads = [threading.Thread(target=race, args=(i,)) for i in range(CHANNELS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert outcomes.count(view.version + 1) == 1, outcomes
    assert outcomes.count(grpc.StatusCode.ABORTED) == CHANNELS - 1, outcomes
    assert alice.view(match_id).version == view.version + 1


def _my_turn(player: PlayerClient, match_id: str) -> pb.MatchView:
    """Wait until the bots have played and seat 0 is to draw (dealing when asked)."""

    def ready() -> bool:
        view = player.view(match_id)
        if view.HasField("dealing_seat") and view.dealing_seat == 0:
            player.deal(view)
            return False
        return view.match.to_act == 0 and view.view.phase == pb.PHASE_DRAW

    assert _wait_until(ready)
    return player.view(match_id)


@pytest.mark.parametrize("engine", ["sqlite"])
def test_sigterm_stops_every_worker(server: tuple[subprocess.Popen[str], int]) -> None:
    process, _ = server
    workers = _workers_of(process.pid)
    process.send_signal(signal.SIGTERM)
    assert process.wait(30) == 0
    assert process.stdout is not None
    assert process.stdout.read().strip() == "canasta-server stopped"
    assert all(_wait_until(partial(_gone, pid)) for pid in workers)


@pytest.mark.parametrize("engine", ["sqlite"])
def test_a_dead_worker_stops_the_server(server: tuple[subprocess.Popen[str], int]) -> None:
    """A worker that dies takes the server down with status 1 (the service manager restarts
    it whole) rather than leaving a server that silently drops some connections."""
    process, _ = server
    first, second = _workers_of(process.pid)
    os.kill(first, signal.SIGKILL)
    assert process.wait(30) == 1
    assert _wait_until(lambda: _gone(second))
    log = (Path(_data_dir(process)) / "server.log").read_text()
    assert f"pid {first}) exited" in log


@pytest.mark.parametrize("engine", ["sqlite"])
def test_workers_stop_when_the_supervisor_is_killed(
    server: tuple[subprocess.Popen[str], int],
) -> None:
    process, _ = server
    workers = _workers_of(process.pid)
    process.kill()
    process.wait(30)
    assert all(_wait_until(partial(_gone, pid)) for pid in workers)


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_busy_port_is_one_clear_line(tmp_path: Path, workers: str) -> None:
    """Someone else has the port: exit 1 with a sentence, not a traceback (one process or a
    supervisor whose workers cannot bind)."""
    (tmp_path / "none.toml").write_text("")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "server", "--data-dir", str(tmp_path), "serve",
             "--listen", f"127.0.0.1:{port}", "--workers", workers],
            capture_output=True, text=True, timeout=120,
            env={**os.environ, "CANASTA_SERVER_CONFIG": str(tmp_path / "none.toml")},
        )  # fmt: skip
    assert done.returncode == 1
    assert f"canasta-server: cannot listen on 127.0.0.1:{port}: the port is in use" in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""
