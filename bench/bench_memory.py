"""Benchmark: the server's memory with many matches in play, and after they end.

    .venv/bin/python -m bench.bench_memory [--matches 2000] [--idle 30] [--clients 4]

Starts ``canasta-server serve`` (durable SQLite); ``--clients`` threads, each with a channel
and four players of its own, have their players sit at a share of ``--matches`` classic
matches (created by one, joined by the others), each cut and played for two moves so that the
server holds its copy of the match, its state and its hand. Then every match ends (seat 0
resigns). It prints the server process's resident memory (``VmRSS`` from ``/proc``) when idle
after start-up, after the matches are in play, right after they all ended, and after
``--idle`` seconds more with nothing to do (the issue's figure: within 20% of where it
started), and the server's CPU time while the matches were set up (several client threads
keep the one server process busy while each of them signs its next move). ``--baseline PATH``
runs another checkout's server instead (see ``bench_submit``); ``--env NAME=VALUE`` (any
number) sets the server's environment (a trial of a setting).
"""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar, cast

import grpc

from bench.kit import PlayerClient, plain_turn, seated_match, start_server_process
from shared import protocol
from shared.pb import canasta_pb2 as pb

T = TypeVar("T")
PER_PLAYERS = 100
"""Matches four players sit at together (``_set_up``)."""


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def _by_kind(pid: int) -> str:
    """Where the process's resident memory is (``/proc/PID/smaps``), in MiB: the main heap
    (``brk``: the allocator's main arena, Python's small objects beside it), other anonymous
    mappings (threads' allocator arenas, Python's and gRPC's large blocks, thread stacks) and
    files (libraries, SQLite's memory map if any); and the threads."""
    sizes = {"heap": 0, "anon": 0, "file": 0}
    kind = "anon"
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        head = line.split()
        if head and "-" in head[0] and not head[0].endswith(":"):
            name = head[5] if len(head) > 5 else ""
            kind = "heap" if name == "[heap]" else "file" if name.startswith("/") else "anon"
        elif head and head[0] == "Rss:":
            sizes[kind] += int(head[1])
    threads = len(list(Path(f"/proc/{pid}/task").iterdir()))
    return " ".join(f"{k} {v / 1024:.1f}" for k, v in sizes.items()) + f"; {threads} threads"


def _cpu_seconds(pid: int) -> float:
    """The process's user and system CPU time so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


Played = tuple[PlayerClient, str, pb.Receipt]
"""A match set up: the player in its seat 0, its id and its last receipt."""


def _player(channel: grpc.Channel) -> PlayerClient:
    return PlayerClient(channel).join_server(f"bench {secrets.token_hex(4)}")


def _set_up(seats: list[PlayerClient], count: int) -> list[Played]:
    """``count`` matches, each cut and played two moves, ``PER_PLAYERS`` of them by ``seats``
    and each next lot by four new players (the server counts a player's open matches when
    they sit down: with thousands each, the set-up would measure that). One view a match:
    each next move is built from the last reply's (the receipt names the head to follow), and
    a reply without what the next move needs (the mover's hand) is followed by a view."""
    played: list[Played] = []
    for number in range(count):
        if number and number % PER_PLAYERS == 0:
            channel = seats[0].channel
            seats = [_player(channel) for _ in range(4)]
        match_id = seated_match(seats)
        view = seats[0].view(match_id)
        dealer = view.dealing_seat
        reply = cast(
            pb.SubmitResponse,
            seats[dealer].stub.Submit(
                protocol.deal_request(
                    seats[dealer].key, match_id, dealer, view.version, view.head_hash,
                    view.deal_commitment,
                ),
                metadata=seats[dealer].metadata,
            ),
        )  # fmt: skip
        for _ in range(2):  # a draw and a discard, by the seat to act after the cut
            seat = reply.view.match.to_act if reply.HasField("view") else -1
            client = seats[seat] if seat >= 0 else seats[0]
            view = reply.view
            if seat < 0 or (view.view.phase != pb.PHASE_DRAW and not view.view.hand):
                view = client.view(match_id)
                seat = view.match.to_act
                client = seats[seat]
                if view.view.seat != seat:
                    view = client.view(match_id)
            request = client.envelope(
                view, plain_turn(view), seat=seat, seq=reply.receipt.seq + 1,
                prev_hash=reply.receipt.entry_hash,
            )  # fmt: skip
            reply = cast(pb.SubmitResponse, client.stub.Submit(request, metadata=client.metadata))
        played.append((seats[0], match_id, reply.receipt))
    return played


def _resign(played: Sequence[Played]) -> None:
    """Seat 0 resigns each match, following its last receipt."""
    for player, match_id, receipt in played:
        request = protocol.move_request(
            player.key, match_id, 0, receipt.seq, receipt.entry_hash, ["resign"]
        )
        player.stub.Submit(request, metadata=player.metadata)


def _on_each(
    clients: list[list[PlayerClient]], work: Callable[[int, list[PlayerClient]], T]
) -> list[T]:
    """``work(i, seats)`` for each client's seats, in a thread each."""
    with ThreadPoolExecutor(len(clients)) as pool:
        return list(pool.map(work, range(len(clients)), clients))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=2000)
    parser.add_argument("--idle", type=float, default=30.0)
    parser.add_argument("--clients", type=int, default=4, help="client threads (default 4)")
    parser.add_argument("--baseline", type=Path, help="run this other checkout's server instead")
    parser.add_argument(
        "--env", action="append", default=[], metavar="NAME=VALUE", help="the server's, too"
    )
    args = parser.parse_args(argv)
    command: tuple[str, ...] = (sys.executable, "-m", "server")
    if args.baseline is not None:
        code = (
            f"import sys, runpy; sys.path.insert(0, {str(args.baseline.resolve())!r}); "
            "runpy.run_module('server', run_name='__main__', alter_sys=True)"
        )
        command = (sys.executable, "-c", code)
    env = {
        **os.environ,
        "CANASTA_SERVER_LOG_LEVEL": "WARNING",
        "CANASTA_SERVER_LIMIT_ANONYMOUS_PER_MINUTE": "0",
        "CANASTA_SERVER_LIMIT_WRITES_PER_MINUTE": "0",
        "CANASTA_SERVER_LIMIT_READS_PER_MINUTE": "0",
        "CANASTA_SERVER_LIMIT_OPEN_MATCHES": "1000000",
        **dict(item.split("=", 1) for item in args.env),
    }
    shares = [
        args.matches // args.clients + (n < args.matches % args.clients)
        for n in range(args.clients)
    ]
    with tempfile.TemporaryDirectory(prefix="canasta-bench-memory-") as tmp:
        server, port = start_server_process(Path(tmp), env=env, command=command)
        channels = [grpc.insecure_channel(f"127.0.0.1:{port}") for _ in shares]
        try:
            clients = [[_player(channel) for _ in range(4)] for channel in channels]
            time.sleep(2)
            idle = _rss_mib(server.pid)
            print(
                f"idle after start-up             {idle:6.1f} MiB  ({_by_kind(server.pid)})",
                flush=True,
            )
            started, cpu = time.perf_counter(), _cpu_seconds(server.pid)
            ids = _on_each(clients, lambda n, seats: _set_up(seats, shares[n]))
            playing = _rss_mib(server.pid)
            print(
                f"{args.matches:,} matches in play          {playing:6.1f} MiB"
                f"  ({time.perf_counter() - started:.0f} s to set up,"
                f" {_cpu_seconds(server.pid) - cpu:.0f} s of the server's CPU;"
                f" {_by_kind(server.pid)})",
                flush=True,
            )
            _on_each(clients, lambda n, _: _resign(ids[n]))
            ended = _rss_mib(server.pid)
            print(
                f"all ended                       {ended:6.1f} MiB  ({_by_kind(server.pid)})",
                flush=True,
            )
            time.sleep(args.idle)
            after = _rss_mib(server.pid)
            print(
                f"and {args.idle:.0f} s idle                  {after:6.1f} MiB"
                f"  ({after / idle:.2f}x idle; {_by_kind(server.pid)})"
            )
        finally:
            for channel in channels:
                channel.close()
            server.send_signal(signal.SIGTERM)
            server.wait(60)


if __name__ == "__main__":
    main()
