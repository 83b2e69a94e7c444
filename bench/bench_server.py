"""Benchmark: N concurrent bot clients against a real ``canasta-server`` process.

    .venv/bin/python -m bench.bench_server [--clients 64] [--seconds 10] [--rate 1000]

The server runs as its own process (``canasta-server serve``) on a fresh durable SQLite file
(WAL, ``synchronous=FULL``) in a temporary directory, with its normal request log (one info
line per request) going to a file. Each client drives one four-seat match, holding the four
players' keys: it signs and submits every move with the seat's key (``draw`` then ``discard``,
``pass`` when the stock is gone, the cut between hands), learning everything it needs from the
previous ``Submit`` response, so each move is exactly one signed ``Submit`` round trip.
Clients run as threads in ``--processes`` client processes.

Two runs, one server: first closed-loop (every client submits its next move as soon as the
last is answered: the saturation throughput, where by Little's law the mean latency is simply
clients / throughput), then open-loop at ``--rate`` moves per second spread over the clients
(each client sends on a fixed schedule; latency counts from the scheduled send time, so a
server that falls behind is charged for the queueing it causes). Printed for each: signed
moves per second, p50/p99 Submit latency and the server's CPU time per move; then the rate of
a trivial RPC (health ``Check``) on the same server as a ceiling.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import signal
import statistics
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from server.testkit import PlayerClient, start_server_process
from shared.pb import canasta_pb2 as pb


@dataclass
class Result:
    moves: int
    errors: int
    latencies: list[float]
    client_cpu: float = 0.0
    """CPU seconds the client processes spent in the measured window."""


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

    def step(self, scheduled: float | None = None) -> float | None:
        """Submit the next move; its latency (from ``scheduled`` when given), None if refused."""
        client, request = self._next()
        if scheduled is None:
            scheduled = time.perf_counter()
        try:
            response = client.stub.Submit(request)
        except grpc.RpcError:
            self._refresh()
            return None
        elapsed = time.perf_counter() - scheduled
        self.view = response.view
        return elapsed


@dataclass(frozen=True)
class Phase:
    """One measured run: when to start (wall clock), warm-up, length, and the moves per second
    each client offers (0: as fast as answers come)."""

    start_at: float
    warmup: float
    seconds: float
    client_rate: float


def _run_phase(drivers: list[MatchDriver], phase: Phase) -> Result:
    results = [Result(0, 0, []) for _ in drivers]
    # Open loop: each client sends every `interval` seconds, clients staggered evenly.
    interval = 1 / phase.client_rate if phase.client_rate else 0.0

    def run(index: int) -> None:
        driver, result = drivers[index], results[index]
        while time.time() < phase.start_at:
            time.sleep(0.001)
        begin = time.perf_counter()
        measure_from = begin + phase.warmup
        stop_at = measure_from + phase.seconds
        next_send = begin + interval * index / len(drivers)
        while (now := time.perf_counter()) < stop_at:
            scheduled = None
            if interval:
                if now < next_send:
                    time.sleep(next_send - now)
                scheduled, next_send = next_send, next_send + interval
            elapsed = driver.step(scheduled)
            if time.perf_counter() < measure_from:  # count what completes in the window
                continue
            if elapsed is None:
                result.errors += 1
            else:
                result.moves += 1
                result.latencies.append(elapsed)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(drivers))]
    for thread in threads:
        thread.start()
    time.sleep(max(0.0, phase.start_at + phase.warmup - time.time()))
    cpu = time.process_time()
    time.sleep(max(0.0, phase.start_at + phase.warmup + phase.seconds - time.time()))
    cpu = time.process_time() - cpu
    for thread in threads:
        thread.join()
    return Result(
        sum(r.moves for r in results),
        sum(r.errors for r in results),
        [x for r in results for x in r.latencies],
        cpu,
    )


def _client_process(port: int, clients: int, pipe: Any) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        drivers = [MatchDriver(channel) for _ in range(clients)]
        pipe.put(("ready", len(drivers)))
        while (phase := pipe.get_phase()) is not None:
            pipe.put(("done", _run_phase(drivers, phase)))


class _Channel:
    """Two queues: results to the parent, phases (then None: stop) to the children."""

    def __init__(self, context: Any) -> None:
        self.up = context.Queue()
        self.down = context.Queue()

    def put(self, item: object) -> None:
        self.up.put(item)

    def get_phase(self) -> Phase | None:
        """Wait for the next phase (sent once every process has set up its matches)."""
        phase: Phase | None = self.down.get()
        return phase


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Measured:
    result: Result
    seconds: float
    server_cpu: float | None

    def report(self, title: str) -> None:
        moves, latencies = self.result.moves, sorted(self.result.latencies)
        p50 = statistics.median(latencies) * 1000 if latencies else float("nan")
        p99 = latencies[max(0, int(len(latencies) * 0.99) - 1)] * 1000 if latencies else 0.0
        cpu = f"{self.server_cpu / moves * 1000:.2f} ms" if self.server_cpu and moves else "n/a"
        print(title)
        print(f"  signed moves/s    {moves / self.seconds:,.0f}  ({moves} in "
              f"{self.seconds:.0f} s, {self.result.errors} refused)")  # fmt: skip
        print(f"  Submit latency    p50 {p50:.1f} ms   p99 {p99:.1f} ms")
        print(f"  server CPU/move   {cpu}")
        if moves:
            print(f"  client CPU/move   {self.result.client_cpu / moves * 1000:.2f} ms")


def _measure(pipe: _Channel, processes: int, phase: Phase, server_pid: int | None) -> Measured:
    for _ in range(processes):
        pipe.down.put(phase)
    cpu_before = cpu_after = 0.0
    if server_pid is not None:
        time.sleep(max(0.0, phase.start_at + phase.warmup - time.time()))
        cpu_before = _cpu_seconds(server_pid)
        time.sleep(max(0.0, phase.start_at + phase.warmup + phase.seconds - time.time()))
        cpu_after = _cpu_seconds(server_pid)
    parts = [pipe.up.get()[1] for _ in range(processes)]
    result = Result(
        sum(r.moves for r in parts),
        sum(r.errors for r in parts),
        [x for r in parts for x in r.latencies],
        sum(r.client_cpu for r in parts),
    )
    return Measured(result, phase.seconds, cpu_after - cpu_before if server_pid else None)


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
    parser.add_argument("--rate", type=float, default=1000.0, help="open-loop moves/s (0: skip)")
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
            env = {**os.environ, "CANASTA_SERVER_LOG_LEVEL": args.log_level}
            server, port = start_server_process(Path(tmp), env=env)
        server_pid = server.pid if server is not None else None
        try:
            pipe = _Channel(context)
            share = [args.clients // args.processes] * args.processes
            share[0] += args.clients - sum(share)
            processes = [
                context.Process(target=_client_process, args=(port, n, pipe)) for n in share if n
            ]
            setup = time.perf_counter()
            for process in processes:
                process.start()
            ready = sum(pipe.up.get()[1] for _ in processes)
            setup = time.perf_counter() - setup
            rates = [0.0] + ([args.rate] if args.rate else [])
            runs = [
                _measure(
                    pipe,
                    len(processes),
                    Phase(time.time() + 0.5, args.warmup, args.seconds, rate / ready),
                    server_pid,
                )
                for rate in rates
            ]
            for _ in processes:
                pipe.down.put(None)
            for process in processes:
                process.join()
            cpu_before = _cpu_seconds(server_pid) if server_pid else 0.0
            trivial = _trivial_rate(port, min(args.seconds, 5.0), threads=16)
            trivial_cpu = _cpu_seconds(server_pid) - cpu_before if server_pid else 0.0
        finally:
            if server is not None:
                server.send_signal(signal.SIGTERM)
                server.wait(30)
        log = Path(tmp) / "server.log"
        log_lines = sum(1 for _ in log.open()) if log.exists() else 0
    print(f"clients             {ready} ({len(processes)} client processes), setup {setup:.1f} s")
    print(
        f"server              1 process, durable SQLite (WAL, synchronous=FULL), "
        f"log {args.log_level}"
    )
    for rate, run in zip(rates, runs, strict=True):
        run.report(
            f"open loop, offered {rate:,.0f} moves/s" if rate else "closed loop (saturation)"
        )
    print(f"trivial RPC/s       {trivial:,.0f}  (health Check, 16 threads, 1 client process)")
    if trivial and server_pid:
        calls = trivial * min(args.seconds, 5.0)
        print(f"  server CPU/call   {trivial_cpu / calls * 1000:.2f} ms")
    print(f"server log lines    {log_lines}")


if __name__ == "__main__":
    main()
