"""Benchmark: what the connection gate (``server.edge.gate``) costs a call.

    .venv/bin/python -m bench.bench_gate [--calls 2000] [--rounds 3]

Starts ``canasta-server serve`` twice per round (durable SQLite), once with the gate in front
(``max_connections_per_peer`` 32, the default) and once without (0), registers a player with a
match against three bots, and times ``--calls`` GetView calls one after another on one
channel: the latency (p50, p99) and the server process's CPU time per call (from ``/proc``).
The rounds alternate the two servers so that a busy machine hurts both alike.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import tempfile
import time
from pathlib import Path

import grpc

from bench.kit import PlayerClient, start_server_process
from shared.pb import canasta_pb2 as pb


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _measure(per_peer: str, calls: int) -> tuple[float, float, float]:
    """(p50 ms, p99 ms, server CPU ms per call) for ``calls`` GetView calls."""
    with tempfile.TemporaryDirectory(prefix="canasta-bench-gate-") as tmp:
        env = {
            **os.environ,
            "CANASTA_SERVER_LOG_LEVEL": "WARNING",
            "CANASTA_SERVER_LIMIT_READS_PER_MINUTE": "0",
            "CANASTA_SERVER_MAX_CONNECTIONS_PER_PEER": per_peer,
        }
        server, port = start_server_process(Path(tmp), env=env)
        try:
            with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
                player = PlayerClient(channel).join_server("bench")
                match_id = player.create_match(bot_seats=[1, 2, 3]).match.match_id
                request = pb.GetViewRequest(match_id=match_id)
                for _ in range(100):  # warm up
                    player.stub.GetView(request, metadata=player.metadata)
                latencies = []
                cpu_before = _cpu_seconds(server.pid)
                for _ in range(calls):
                    started = time.perf_counter()
                    player.stub.GetView(request, metadata=player.metadata)
                    latencies.append((time.perf_counter() - started) * 1000)
                cpu = _cpu_seconds(server.pid) - cpu_before
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(30)
    p99 = statistics.quantiles(latencies, n=100)[98]
    return statistics.median(latencies), p99, cpu / calls * 1000


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"nproc {os.cpu_count()}, {args.calls} GetView calls per run")
    for round_number in range(args.rounds):
        for label, per_peer in (("gate (32 per peer)", "32"), ("no gate (0)", "0")):
            p50, p99, cpu = _measure(per_peer, args.calls)
            print(
                f"round {round_number + 1}  {label:<19} p50 {p50:5.2f} ms  p99 {p99:5.2f} ms"
                f"  server CPU {cpu:5.3f} ms/call"
            )


if __name__ == "__main__":
    main()
