"""Benchmark: many idle Watch streams on one server process, and what they cost other calls.

    .venv/bin/python -m bench.bench_watch [--streams 1000] [--players 100] [--calls 300]

Starts ``canasta-server serve`` (durable SQLite, the abuse limits opened up for one address),
registers ``--players`` players with a match each against three bots, and measures GetView
latency (p50/p99 over ``--calls`` calls) and the server's threads and memory: first with no
stream open, then with ``--streams`` idle Watch streams open (spread over the players, each
stream watching its player's match and read up to its first message). A Watch stream waits on
the server's event loop and holds no thread, so the thread count should not move and the
latency should barely. It also prints the server's CPU per second while nobody calls it,
with and without the streams: a quiet stream sleeps until something happens to it.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import grpc

from bench.kit import PlayerClient, start_server_process
from shared.pb import canasta_pb2 as pb


def _status(pid: int) -> tuple[int, int]:
    """The server process's thread count and resident memory in KiB (Linux ``/proc``)."""
    fields = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    return int(fields["Threads"]), int(fields["VmRSS"].split()[0])


def _cpu_ms(pid: int) -> float:
    """The server process's CPU time so far (user + system, all its threads), in ms."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
    return ticks * 1000 / os.sysconf("SC_CLK_TCK")


def _idle_cpu(pid: int, seconds: float) -> float:
    """The server's CPU ms per second while nobody calls it."""
    before = _cpu_ms(pid)
    time.sleep(seconds)
    return (_cpu_ms(pid) - before) / seconds


def _latencies(players: list[PlayerClient], matches: list[str], calls: int) -> list[float]:
    found = []
    for n in range(calls):
        player, match_id = players[n % len(players)], matches[n % len(matches)]
        started = time.perf_counter()
        player.stub.GetView(pb.GetViewRequest(match_id=match_id), metadata=player.metadata)
        found.append((time.perf_counter() - started) * 1000)
    return found


def _report(label: str, latencies: list[float], pid: int) -> None:
    threads, rss = _status(pid)
    p99 = statistics.quantiles(latencies, n=100)[98]
    print(
        f"{label:<26} GetView p50 {statistics.median(latencies):5.2f} ms  p99 {p99:5.2f} ms"
        f"   server threads {threads}, RSS {rss / 1024:.0f} MiB"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=1000)
    parser.add_argument("--players", type=int, default=100)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--idle", type=float, default=10.0, help="seconds of idle CPU measured")
    args = parser.parse_args(argv)
    per_player = -(-args.streams // args.players)
    with tempfile.TemporaryDirectory(prefix="canasta-bench-watch-") as tmp:
        env = {
            **os.environ,
            "CANASTA_SERVER_LOG_LEVEL": "WARNING",
            # One address stands for every player here: open the abuse limits up.
            "CANASTA_SERVER_LIMIT_ANONYMOUS_PER_MINUTE": "0",
            "CANASTA_SERVER_LIMIT_WRITES_PER_MINUTE": "0",
            "CANASTA_SERVER_LIMIT_READS_PER_MINUTE": "0",
            "CANASTA_SERVER_LIMIT_WATCH_STREAMS": str(per_player),
        }
        server, port = start_server_process(Path(tmp), env=env)
        streams: list[Any] = []
        try:
            channels = [grpc.insecure_channel(f"127.0.0.1:{port}") for _ in range(8)]
            players = [
                PlayerClient(channels[n % len(channels)]).join_server(f"p{n}")
                for n in range(args.players)
            ]
            matches = [p.create_match(bot_seats=[1, 2, 3]).match.match_id for p in players]
            _latencies(players, matches, 50)  # warm-up
            _report("no stream open", _latencies(players, matches, args.calls), server.pid)
            quiet = _idle_cpu(server.pid, args.idle)
            started = time.perf_counter()
            for n in range(args.streams):
                player, match_id = players[n % len(players)], matches[n % len(players)]
                stream = player.watch([match_id])
                next(iter(stream))  # open, and its first message read
                streams.append(stream)
            opened = time.perf_counter() - started
            label = f"{len(streams)} idle streams open"
            _report(label, _latencies(players, matches, args.calls), server.pid)
            print(f"opening the streams took {opened:.1f} s")
            busy = _idle_cpu(server.pid, args.idle)
            print(
                f"server CPU while idle: {quiet:.1f} ms a second with no stream open, "
                f"{busy:.1f} ms with {len(streams)} (over {args.idle:.0f} s each)"
            )
        finally:
            for stream in streams:
                stream.cancel()
            server.send_signal(signal.SIGTERM)
            server.wait(30)


if __name__ == "__main__":
    main()
