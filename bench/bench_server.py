"""Benchmark: N concurrent bot clients against a real ``canasta-server`` process.

    .venv/bin/python -m bench.bench_server [--clients 64] [--seconds 10] [--processes 2]

The server runs as its own process (``canasta-server serve``) on a fresh durable SQLite file
(WAL, ``synchronous=FULL``) in a temporary directory, with its normal request log (one info
line per request) going to a file. Each client drives one four-seat match, holding the four
players' keys: it signs and submits every move with the seat's key (``draw`` then ``discard``,
``pass`` when the stock is gone, the cut between hands), learning everything it needs from the
previous ``Submit`` response, so each move is exactly one signed ``Submit`` round trip.
Clients run as threads in ``--processes`` client processes. Printed: signed moves per second,
p50/p99 Submit latency, and the rate of a trivial RPC (health ``Check``) as a ceiling.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from server.testkit import PlayerClient
from shared.pb import canasta_pb2 as pb


@dataclass
class Result:
    moves: int
    errors: int
    latencies: list[float]


def _start_server(directory: Path, log_level: str) -> tuple[subprocess.Popen[str], int]:
    env = {**os.environ, "CANASTA_SERVER_LOG_LEVEL": log_level}
    log = (directory / "server.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "server", "--data-dir", str(directory), "serve",
         "--listen", "127.0.0.1:0"],
        stdout=subprocess.PIPE, stderr=log, text=True, env=env,
    )  # fmt: skip
    assert process.stdout is not None
    banner = process.stdout.readline()
    if "listening on" not in banner:
        raise SystemExit(f"the server did not start: {banner!r} (see {directory / 'server.log'})")
    port = int(banner.split("listening on ")[1].split()[0].rpartition(":")[2])
    return process, port


class MatchDriver:
    """One client: four seat keys, one match, one move in flight at a time."""

    def __init__(self, channel: grpc.Channel) -> None:
        self.seats = [PlayerClient(channel) for _ in range(4)]
        for number, client in enumerate(self.seats):
            client.join_server(f"bench {number}")
        created = self.seats[0].create_match(seat=0)
        for seat in (1, 2, 3):
            self.seats[seat].join_match(created.invite_code, seat=seat)
        self.match_id = created.match.match_id
        self.view = self.seats[0].view(self.match_id)

    def _refresh(self) -> None:
        self.view = self.seats[0].view(self.match_id)
        seat = self.view.match.to_act
        self.view = self.seats[seat].view(self.match_id)

    def _next(self) -> tuple[PlayerClient, pb.SubmitRequest]:
        view = self.view
        seat = view.match.to_act
        client = self.seats[seat]
        if view.view.seat != seat:  # the last response was another seat's view
            if view.view.phase == pb.PHASE_DRAW or view.HasField("dealing_seat"):
                pass  # what follows needs no hand: draw, pass or the cut
            else:
                self._refresh()
                return self._next()
        if view.HasField("dealing_seat"):
            actions = ["deal"]
            return client, client.envelope(
                view, actions, seat=seat, deal_commitment=view.deal_commitment
            )
        if view.view.phase == pb.PHASE_DRAW:
            stock = view.view.stock_size
            return client, client.envelope(view, ["draw" if stock else "pass"], seat=seat)
        if view.view.phase == pb.PHASE_ANSWER:
            return client, client.envelope(view, ["answer no"], seat=seat)
        return client, client.envelope(view, [f"discard {view.view.hand[-1]}"], seat=seat)

    def step(self) -> float | None:
        client, request = self._next()
        started = time.perf_counter()
        try:
            response = client.stub.Submit(request)
        except grpc.RpcError:
            self._refresh()
            return None
        elapsed = time.perf_counter() - started
        self.view = response.view
        return elapsed


def _client_process(port: int, clients: int, seconds: float, warmup: float, pipe: Any) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        drivers = [MatchDriver(channel) for _ in range(clients)]
        pipe.put(("ready", len(drivers)))
        start_at = pipe.get_start()
        results = [Result(0, 0, []) for _ in drivers]

        def run(index: int) -> None:
            driver, result = drivers[index], results[index]
            while time.time() < start_at:
                time.sleep(0.001)
            measure_from = start_at + warmup
            stop_at = measure_from + seconds
            while (now := time.time()) < stop_at:
                elapsed = driver.step()
                if now < measure_from:
                    continue
                if elapsed is None:
                    result.errors += 1
                else:
                    result.moves += 1
                    result.latencies.append(elapsed)

        threads = [threading.Thread(target=run, args=(i,)) for i in range(len(drivers))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    pipe.put(
        (
            "done",
            Result(
                sum(r.moves for r in results),
                sum(r.errors for r in results),
                [x for r in results for x in r.latencies],
            ),
        )
    )


class _Channel:
    """Two queues: results to the parent, the start time to the children."""

    def __init__(self, context: Any) -> None:
        self.up = context.Queue()
        self.down = context.Queue()

    def put(self, item: object) -> None:
        self.up.put(item)

    def get_start(self) -> float:
        """Wait for the shared start time (sent once every process has set up its matches)."""
        return float(self.down.get())


def _trivial_rate(port: int, seconds: float, threads: int) -> float:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        count = [0] * threads
        stop_at = time.time() + seconds

        def run(index: int) -> None:
            while time.time() < stop_at:
                stub.Check(health_pb2.HealthCheckRequest())
                count[index] += 1

        workers = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    return sum(count) / seconds


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--log-level", default="INFO", help="the server's log level")
    parser.add_argument(
        "--port", type=int, default=0, help="use a server already running on 127.0.0.1:PORT"
    )
    args = parser.parse_args(argv)
    context = multiprocessing.get_context("spawn")
    with tempfile.TemporaryDirectory(prefix="canasta-bench-") as tmp:
        if args.port:
            server, port = None, args.port
        else:
            server, port = _start_server(Path(tmp), args.log_level)
        try:
            pipe = _Channel(context)
            share = [args.clients // args.processes] * args.processes
            share[0] += args.clients - sum(share)
            processes = [
                context.Process(
                    target=_client_process, args=(port, n, args.seconds, args.warmup, pipe)
                )
                for n in share
                if n
            ]
            setup = time.perf_counter()
            for process in processes:
                process.start()
            ready = sum(pipe.up.get()[1] for _ in processes)
            setup = time.perf_counter() - setup
            start_at = time.time() + 0.5
            for _ in processes:
                pipe.down.put(start_at)
            results = [pipe.up.get()[1] for _ in processes]
            for process in processes:
                process.join()
            trivial = _trivial_rate(port, min(args.seconds, 5.0), threads=16)
        finally:
            if server is not None:
                server.send_signal(signal.SIGTERM)
                server.wait(30)
        log = Path(tmp) / "server.log"
        log_lines = sum(1 for _ in log.open()) if log.exists() else 0
    moves = sum(r.moves for r in results)
    errors = sum(r.errors for r in results)
    latencies = sorted(x for r in results for x in r.latencies)
    p50 = statistics.median(latencies) * 1000 if latencies else float("nan")
    p99 = latencies[int(len(latencies) * 0.99) - 1] * 1000 if latencies else float("nan")
    print(f"clients             {ready} ({len(processes)} client processes), setup {setup:.1f} s")
    print(
        f"server              1 process, durable SQLite (WAL, synchronous=FULL), "
        f"log {args.log_level}"
    )
    print(f"signed moves/s      {moves / args.seconds:,.0f}  ({moves} in {args.seconds:.0f} s, "
          f"{errors} refused)")  # fmt: skip
    print(f"Submit latency      p50 {p50:.1f} ms   p99 {p99:.1f} ms")
    print(f"trivial RPC/s       {trivial:,.0f}  (health Check, 16 threads, 1 client process)")
    print(f"server log lines    {log_lines}")


if __name__ == "__main__":
    main()
