"""Benchmark: the server's memory with many matches in play, and after they end.

    .venv/bin/python -m bench.bench_memory [--matches 2000] [--idle 30]

Starts ``canasta-server serve`` (durable SQLite), registers four players, and has them sit at
``--matches`` classic matches (created by one, joined by the others), each cut and played for
two moves so that the server holds its copy of the match, its state and its hand. Then every
match ends (seat 0 resigns). It prints the server process's resident memory (``VmRSS`` from
``/proc``) when idle after start-up, after the matches are in play, right after they all
ended, and after ``--idle`` seconds more with nothing to do (the issue's figure: within 20%
of where it started). ``--baseline PATH`` runs another checkout's server instead (see
``bench_submit``).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import cast

import grpc

from bench.kit import PlayerClient, plain_turn, seated_match, start_server_process
from shared.pb import canasta_pb2 as pb


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def _move(seats: list[PlayerClient], match_id: str) -> None:
    view = seats[0].view(match_id)
    seat = view.match.to_act
    client = seats[seat]
    view = client.view(match_id)
    if view.HasField("dealing_seat"):
        client.deal(view)
    else:
        client.stub.Submit(
            client.envelope(view, plain_turn(view), seat=seat), metadata=client.metadata
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=2000)
    parser.add_argument("--idle", type=float, default=30.0)
    parser.add_argument("--baseline", type=Path, help="run this other checkout's server instead")
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
    }
    with tempfile.TemporaryDirectory(prefix="canasta-bench-memory-") as tmp:
        server, port = start_server_process(Path(tmp), env=env, command=command)
        try:
            with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
                seats = [PlayerClient(channel).join_server(f"bench {n}") for n in range(4)]
                time.sleep(2)
                idle = _rss_mib(server.pid)
                print(f"idle after start-up             {idle:6.1f} MiB", flush=True)
                started = time.perf_counter()
                ids = []
                for _ in range(args.matches):
                    match_id = seated_match(seats)
                    for _ in range(3):  # the cut, a draw and a discard
                        _move(seats, match_id)
                    ids.append(match_id)
                playing = _rss_mib(server.pid)
                print(
                    f"{args.matches:,} matches in play          {playing:6.1f} MiB"
                    f"  ({time.perf_counter() - started:.0f} s to set up)",
                    flush=True,
                )
                for match_id in ids:
                    view = seats[0].view(match_id)
                    cast(
                        pb.SubmitResponse,
                        seats[0].stub.Submit(
                            seats[0].envelope(view, ["resign"], seat=0),
                            metadata=seats[0].metadata,
                        ),
                    )
                ended = _rss_mib(server.pid)
                print(f"all ended                       {ended:6.1f} MiB", flush=True)
                time.sleep(args.idle)
                after = _rss_mib(server.pid)
                print(
                    f"and {args.idle:.0f} s idle                  {after:6.1f} MiB"
                    f"  ({after / idle:.2f}x idle)"
                )
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(60)


if __name__ == "__main__":
    main()
