"""Benchmark: N concurrent bot clients against a real ``canasta-server`` process.

    .venv/bin/python -m bench.bench_server [--clients 64] [--seconds 10] [--rate 1000]

The server runs as its own process (``canasta-server serve``) on a fresh durable SQLite file
(WAL, ``synchronous=FULL``) in a temporary directory, with its normal request log (one info
line per request) going to a file.
Each client drives one four-seat match, holding the four players' keys: it signs and submits
every move with the seat's key (``draw`` then ``discard``, ``pass`` when the stock is gone,
``answer no``, the cut between hands), learning everything it needs from the previous
``Submit`` response, so each move is exactly one signed ``Submit`` round trip (plus two
``GetView`` calls in the rare case where the next seat needs its hand and the last response
showed another seat's).

Each client has a TCP connection of its own, as 64 real players would. The clients are
``grpc.aio`` tasks, one asyncio event loop in each of ``--processes`` client
processes (default 1), rather than a thread each; the players' registration and match set-up,
which is not measured, uses the blocking ``bench.kit.PlayerClient``. The load generator
shares the machine's cores with the server, so its CPU time per move is printed: it is what
the server did not get. (A gRPC call costs the client about as much with ``grpc.aio`` in one
process as with blocking calls from 32 threads in each of two; with 32 clients per event loop
it costs about 15% more, hence the default of one process.)

Two runs, one server: first closed-loop (every client submits its next move as soon as the
last is answered: the saturation throughput, where by Little's law the mean latency is simply
clients / throughput), then open-loop at ``--rate`` moves per second spread over the clients
(each client sends on a fixed schedule, the clients' schedules staggered evenly; latency counts
from the scheduled send time, so a server that falls behind is charged for the queueing it
causes). Each run has a ``--warmup`` before its ``--seconds`` window, and counts the moves
answered inside the window. Printed for each: signed moves per second, p50/p99 Submit latency,
the server's CPU time per move (all its processes, from ``/proc``) and the client processes'
CPU time per move (what the load generator takes from the server's cores); then the rate of a
trivial RPC (health ``Check``) on the same server as a ceiling.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import queue
import signal
import statistics
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import grpc
import grpc.aio
from grpc_health.v1 import health_pb2, health_pb2_grpc

from bench.kit import PlayerClient, plain_turn, seated_match, start_server_process
from shared.pb import canasta_pb2 as pb
from shared.pb import canasta_pb2_grpc as pb_grpc

OWN_CONNECTION = (("grpc.use_local_subchannel_pool", 1),)
"""Channel option: by default gRPC shares one subchannel (one TCP connection) between all the
channels of a process to the same address; with a local pool each channel connects alone."""


@dataclass
class Result:
    moves: int
    errors: int
    latencies: list[float]
    client_cpu: float = 0.0
    """CPU seconds the client processes spent in the measured window."""


class MatchDriver:
    """One client: its own connection, four seat keys, one match, one move in flight at a time.

    It is set up (four players registered and logged in, the match created and joined) over
    ``setup``, a blocking channel, because that part is not measured; it plays over a
    ``grpc.aio`` channel of its own, opened by ``connect`` in the event loop that will use it.
    """

    def __init__(self, setup: grpc.Channel, port: int) -> None:
        self.port = port
        self.seats = [PlayerClient(setup) for _ in range(4)]
        for number, client in enumerate(self.seats):
            client.join_server(f"bench {number}")
        self.match_id = seated_match(self.seats)
        self.view = self.seats[0].view(self.match_id)
        self.channel: grpc.aio.Channel | None = None
        self.stub: pb_grpc.CanastaAsyncStub | None = None

    async def connect(self) -> None:
        """Open this client's connection now, so that no run pays for connecting."""
        self.channel = grpc.aio.insecure_channel(f"127.0.0.1:{self.port}", options=OWN_CONNECTION)
        # The generated stub is typed by overload, which grpc's untyped aio Channel cannot pick.
        self.stub = cast("pb_grpc.CanastaAsyncStub", pb_grpc.CanastaStub(self.channel))
        await self.channel.channel_ready()

    async def close(self) -> None:
        if self.channel is not None:
            await self.channel.close()

    async def _view(self, seat: int) -> pb.MatchView:
        assert self.stub is not None
        request = pb.GetViewRequest(match_id=self.match_id)
        response = await self.stub.GetView(request, metadata=self.seats[seat].metadata)
        return cast(pb.MatchView, response.view)

    async def _refresh(self) -> None:
        """Fetch the view of the seat to act (whose turn it is comes from any seat's view)."""
        self.view = await self._view(0)
        self.view = await self._view(self.view.match.to_act)

    async def _next(self) -> tuple[PlayerClient, pb.SubmitRequest]:
        """The seat's client to act and its next signed move."""
        view = self.view
        seat = view.match.to_act
        # The last response was another seat's view: a draw, a pass or the cut needs no hand;
        # anything else needs the acting seat's own view.
        while view.view.seat != seat and not (
            view.view.phase == pb.PHASE_DRAW or view.HasField("dealing_seat")
        ):
            await self._refresh()
            view = self.view
            seat = view.match.to_act
        client = self.seats[seat]
        if view.HasField("dealing_seat"):
            commitment = view.deal_commitment
            return client, client.envelope(view, ["deal"], seat=seat, deal_commitment=commitment)
        return client, client.envelope(view, plain_turn(view), seat=seat)

    async def step(self, scheduled: float | None = None) -> float | None:
        """Submit the next move; its latency (from ``scheduled`` when given), None if refused."""
        assert self.stub is not None
        mover, request = await self._next()
        if scheduled is None:
            scheduled = time.perf_counter()
        try:
            # The mover's token: the server sends the new view only to the seat's player.
            response = await self.stub.Submit(request, metadata=mover.metadata)
        except grpc.RpcError:  # grpc.aio.AioRpcError is one
            await self._refresh()
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


async def _run_phase(drivers: list[MatchDriver], phase: Phase) -> Result:
    """Run every driver as a task of this event loop through one phase; the process's CPU time
    (all its threads, gRPC's own included) is taken over the measured window only."""
    results = [Result(0, 0, []) for _ in drivers]
    # Open loop: each client sends every `interval` seconds, clients staggered evenly.
    interval = 1 / phase.client_rate if phase.client_rate else 0.0
    await asyncio.sleep(max(0.0, phase.start_at - time.time()))
    begin = time.perf_counter()
    measure_from = begin + phase.warmup
    stop_at = measure_from + phase.seconds

    async def run(index: int) -> None:
        driver, result = drivers[index], results[index]
        next_send = begin + interval * index / len(drivers)
        while (now := time.perf_counter()) < stop_at:
            scheduled = None
            if interval:
                if next_send >= stop_at:  # the next move is due after the window: done
                    break
                if now < next_send:
                    await asyncio.sleep(next_send - now)
                scheduled, next_send = next_send, next_send + interval
            elapsed = await driver.step(scheduled)
            if not measure_from <= time.perf_counter() < stop_at:
                continue  # count only what completes inside the window
            if elapsed is None:
                result.errors += 1
            else:
                result.moves += 1
                result.latencies.append(elapsed)

    tasks = [asyncio.create_task(run(i)) for i in range(len(drivers))]
    await asyncio.sleep(max(0.0, measure_from - time.perf_counter()))
    cpu = time.process_time()
    await asyncio.sleep(max(0.0, stop_at - time.perf_counter()))
    cpu = time.process_time() - cpu
    await asyncio.gather(*tasks)
    return Result(
        sum(r.moves for r in results),
        sum(r.errors for r in results),
        [x for r in results for x in r.latencies],
        cpu,
    )


async def _play(drivers: list[MatchDriver], pipe: _Channel) -> None:
    await asyncio.gather(*(driver.connect() for driver in drivers))
    pipe.put(("ready", len(drivers)))
    while (phase := await asyncio.to_thread(pipe.get_phase)) is not None:
        pipe.put(("done", await _run_phase(drivers, phase)))
    await asyncio.gather(*(driver.close() for driver in drivers))


def _client_process(port: int, clients: int, pipe: _Channel) -> None:
    # The blocking set-up channel is closed before the event loop starts: the sync and aio
    # gRPC APIs are not meant to be used at the same time in one process.
    with grpc.insecure_channel(f"127.0.0.1:{port}") as setup:
        drivers = [MatchDriver(setup, port) for _ in range(clients)]
    asyncio.run(_play(drivers, pipe))


RESULT_TIMEOUT = 300


class _Channel:
    """Two queues: results to the parent, phases (then None: stop) to the children."""

    def __init__(self, context: Any) -> None:
        self.up = context.Queue()
        self.down = context.Queue()

    def put(self, item: object) -> None:
        self.up.put(item)

    def result(self) -> Any:
        """The next answer of a client process; a process that died (its traceback is above,
        e.g. refused by a server started without ``--port``'s relaxed limits) ends the run
        instead of leaving it waiting forever."""
        try:
            return self.up.get(timeout=RESULT_TIMEOUT)[1]
        except queue.Empty:
            raise SystemExit(f"no answer from a client process in {RESULT_TIMEOUT} s") from None

    def get_phase(self) -> Phase | None:
        """Wait for the next phase (sent once every process has set up its matches)."""
        phase: Phase | None = self.down.get()
        return phase


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time so far of a process and all its descendants (Linux ``/proc``)."""
    stats: dict[int, list[str]] = {}
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except OSError:  # it ended meanwhile
            continue
        stats[int(entry.name)] = fields
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    ticks, todo = 0, [pid]
    while todo:
        if (fields_of := stats.get(current := todo.pop())) is not None:
            ticks += int(fields_of[11]) + int(fields_of[12])
            todo.extend(children.get(current, []))
    return ticks / os.sysconf("SC_CLK_TCK")


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
    parts = [pipe.result() for _ in range(processes)]
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
    parser.add_argument("--processes", type=int, default=1, help="client processes")
    parser.add_argument("--log-level", default="INFO", help="the server's log level")
    parser.add_argument(
        "--port",
        type=int,
        default=0,
        help="use a server already running on 127.0.0.1:PORT (start it with "
        "CANASTA_SERVER_LIMIT_ANONYMOUS_PER_MINUTE=0, CANASTA_SERVER_LIMIT_WRITES_PER_MINUTE=0, "
        "CANASTA_SERVER_LIMIT_READS_PER_MINUTE=0 and CANASTA_SERVER_MAX_CONNECTIONS_PER_PEER=0, "
        "or its abuse limits stop the clients)",
    )
    args = parser.parse_args(argv)
    context = multiprocessing.get_context("spawn")
    with tempfile.TemporaryDirectory(prefix="canasta-bench-") as tmp:
        if args.port:
            server, port = None, args.port
        else:
            env = {
                **os.environ,
                "CANASTA_SERVER_LOG_LEVEL": args.log_level,
                # Hundreds of clients from one address: the abuse limits would stop them.
                "CANASTA_SERVER_LIMIT_ANONYMOUS_PER_MINUTE": "0",
                "CANASTA_SERVER_LIMIT_WRITES_PER_MINUTE": "0",
                "CANASTA_SERVER_LIMIT_READS_PER_MINUTE": "0",
            }
            # And more connections from it than the cap per address allows: no cap unless
            # the environment sets one (1000 measures the gate: bench/README.md).
            env.setdefault("CANASTA_SERVER_MAX_CONNECTIONS_PER_PEER", "0")
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
            ready = sum(pipe.result() for _ in processes)
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
    print(
        f"clients             {ready} (one connection each; {len(processes)} client processes, "
        f"asyncio), setup {setup:.1f} s"
    )
    print(
        f"server              one process, durable SQLite (WAL, synchronous=FULL), "
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
