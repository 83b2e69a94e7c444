"""Benchmark: a Submit's server CPU against a health Check's, in the same server process.

    .venv/bin/python -m bench.bench_submit [--calls 400] [--rounds 4] [--baseline PATH]
        [--postgres]

Starts ``canasta-server serve`` (durable SQLite, log INFO as in production) and, over one
blocking channel, makes blocks of ``--calls`` calls one after another: health ``Check``
calls, and signed ``Submit`` calls of the plainest moves of one four-seat match (draw, then
discard the last card in hand; the cut between hands), each built from the previous reply.
The server process's CPU time (its threads' run time, from ``/proc``) over the calls of each
kind, divided by their number, is the figure. Within a round the kinds alternate in slices of
25 calls, ABBA (Check, Submit, Submit, Check, ...), so that the box's swings touch both alike;
the ratio Submit/Check is taken in each round, and the median and range over the rounds
printed. A GetView is made (and its CPU counted in the Submit block)
only when the last reply was another seat's and the next move needs a hand (the start of a
hand, partner's question): their number is printed.

With ``--baseline PATH`` (another checkout of this project, e.g. ``git worktree add --detach
../before <commit>``) a second server runs that checkout's code, and every round measures both
servers in turn (the order reversed from one round to the next), so a change's effect is read
as two ratios from one run; both servers get the same requests.

With ``--postgres`` each checkout also runs a server on PostgreSQL (a throwaway cluster started
as the tests start theirs, ``bench.postgres``: fsync off, so its own disk waits are out of the
picture; the figure is the server process's CPU), measured in the same rounds, and the
Submit's CPU on PostgreSQL over the same checkout's on SQLite is printed round by round.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from bench.kit import PlayerClient, plain_turn, seated_match, start_server_process
from bench.postgres import start_postgres
from shared.pb import canasta_pb2 as pb

SLICE = 25
"""Calls of one kind in a row: the kinds alternate this often (ABBA), so a swing of the
box's speed falls on both."""


def _cpu_seconds(pid: int) -> float:
    """The process's CPU time: the sum of its threads' run time (``/proc/PID/task/*/schedstat``,
    in nanoseconds, where ``/proc/PID/stat`` counts in 10 ms ticks)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (FileNotFoundError, ProcessLookupError):  # the thread ended meanwhile
            continue
    return total / 1e9


@dataclass
class Server:
    """One server process and a client of it holding the four seats of one match."""

    label: str
    process: subprocess.Popen[str]
    channel: grpc.Channel
    seats: list[PlayerClient]
    match_id: str
    view: pb.MatchView
    since: bool
    health: health_pb2_grpc.HealthStub
    views_fetched: int = 0
    checks: list[float] = field(default_factory=list)
    submits: list[float] = field(default_factory=list)

    def _refresh(self) -> None:
        self.view = self.seats[0].view(self.match_id)
        self.view = self.seats[self.view.match.to_act].view(self.match_id)
        self.views_fetched += 2

    def submit(self) -> None:
        view = self.view
        seat = view.match.to_act
        while view.view.seat != seat and not (
            view.view.phase == pb.PHASE_DRAW or view.HasField("dealing_seat")
        ):
            self._refresh()
            view = self.view
            seat = view.match.to_act
        client = self.seats[seat]
        if view.HasField("dealing_seat"):
            request = client.envelope(
                view, ["deal"], seat=seat, deal_commitment=view.deal_commitment
            )
        else:
            request = client.envelope(view, plain_turn(view), seat=seat)
        if self.since:  # the bench needs no event: only what the move adds comes back
            request.since_version = view.version
        response = cast(pb.SubmitResponse, client.stub.Submit(request, metadata=client.metadata))
        self.view = response.view

    def check(self) -> None:
        self.health.Check(health_pb2.HealthCheckRequest())

    def round(self, calls: int, first: str) -> None:
        """``calls`` calls of each kind, in slices of ``SLICE`` that alternate (``first``
        first), each slice's server CPU counted for its kind; ms per call of each kind."""
        spent = {"Check": 0.0, "Submit": 0.0}
        kinds = ("Check", "Submit") if first == "Check" else ("Submit", "Check")
        for start in range(0, calls, SLICE):
            count = min(SLICE, calls - start)
            for kind in kinds:
                call = self.check if kind == "Check" else self.submit
                before = _cpu_seconds(self.process.pid)
                for _ in range(count):
                    call()
                spent[kind] += _cpu_seconds(self.process.pid) - before
            kinds = kinds[::-1]
        self.checks.append(spent["Check"] / calls * 1000)
        self.submits.append(spent["Submit"] / calls * 1000)

    def close(self) -> None:
        self.channel.close()
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(30)


def _start(
    label: str, data_dir: Path, checkout: Path | None, since: bool, database_url: str = ""
) -> Server:
    env = {
        **os.environ,
        "CANASTA_SERVER_LOG_LEVEL": "INFO",
        "CANASTA_SERVER_LIMIT_ANONYMOUS_PER_MINUTE": "0",
        "CANASTA_SERVER_LIMIT_WRITES_PER_MINUTE": "0",
        "CANASTA_SERVER_LIMIT_READS_PER_MINUTE": "0",
        "CANASTA_SERVER_DATABASE_URL": database_url,
    }
    command: Sequence[str] = (sys.executable, "-m", "server")
    if checkout is not None:
        code = (
            f"import sys, runpy; sys.path.insert(0, {str(checkout.resolve())!r}); "
            "runpy.run_module('server', run_name='__main__', alter_sys=True)"
        )
        command = (sys.executable, "-c", code)
    process, port = start_server_process(data_dir, env=env, command=command)
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    seats = [PlayerClient(channel).join_server(f"bench {n}") for n in range(4)]
    match_id = seated_match(seats)
    server = Server(
        label, process, channel, seats, match_id, seats[0].view(match_id), since,
        health_pb2_grpc.HealthStub(channel),
    )  # fmt: skip
    for _ in range(200):  # warm up both kinds of call
        server.submit()
        server.check()
    server.views_fetched = 0
    return server


def _summary(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} ({min(values):.3f}-{max(values):.3f})"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=400, help="calls per block")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--baseline", type=Path, help="another checkout, measured in turn")
    parser.add_argument(
        "--postgres",
        action="store_true",
        help="also a server of each checkout on PostgreSQL (a cluster of its own, started "
        "as the tests start theirs), measured in turn",
    )
    parser.add_argument(
        "--no-since", action="store_true", help="name no version in Submit (an older client)"
    )
    args = parser.parse_args(argv)
    print(f"nproc {os.cpu_count()}, load {os.getloadavg()[0]:.1f}, {args.calls} calls a block")
    checkouts: list[tuple[str, Path | None]] = [("this", None)]
    if args.baseline is not None:
        checkouts.append(("baseline", args.baseline))
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="canasta-bench-")))
        cluster = None
        if args.postgres:
            cluster = start_postgres()
            stack.callback(cluster.stop)
        servers: list[Server] = []

        @stack.callback
        def close() -> None:
            for server in servers:
                server.close()

        for label, checkout in checkouts:
            since = not args.no_since  # a server that predates since_version ignores it
            servers.append(_start(label, tmp / label, checkout, since))
            if cluster is not None:
                url = stack.enter_context(cluster.database())  # migrated by the server
                servers.append(_start(f"{label}-pg", tmp / f"{label}-pg", checkout, since, url))
        for number in range(args.rounds):
            order = servers if number % 2 == 0 else servers[::-1]
            for server in order:
                server.round(args.calls, "Check" if number % 2 == 0 else "Submit")
                ratio = server.submits[-1] / server.checks[-1]
                print(
                    f"round {number + 1}  {server.label:<11}  Check {server.checks[-1]:.3f}"
                    f"  Submit {server.submits[-1]:.3f} ms/call  ratio {ratio:.2f}x",
                    flush=True,
                )
        print(f"load {os.getloadavg()[0]:.1f}")
        for server in servers:
            ratios = [s / c for s, c in zip(server.submits, server.checks, strict=True)]
            print(
                f"{server.label:<11}  Check {_summary(server.checks)} ms  Submit "
                f"{_summary(server.submits)} ms  Submit/Check {_summary(ratios)}x  "
                f"(GetView calls in the Submit blocks: {server.views_fetched})"
            )
        by_label = {server.label: server for server in servers}
        if args.baseline is not None:
            this, base = by_label["this"], by_label["baseline"]
            paired = [a / b for a, b in zip(this.submits, base.submits, strict=True)]
            print(f"Submit CPU, this over baseline, round by round: {_summary(paired)}x")
        if cluster is not None:
            for label, _ in checkouts:
                lite, pg = by_label[label], by_label[f"{label}-pg"]
                paired = [a / b for a, b in zip(pg.submits, lite.submits, strict=True)]
                print(
                    f"Submit CPU on PostgreSQL over SQLite ({label}), round by round: "
                    f"{_summary(paired)}x"
                )
    time.sleep(0)


if __name__ == "__main__":
    main()
