"""Benchmark: a move and a look late in a long match cost what they cost early in it.

    .venv/bin/python -m bench.bench_long [--moves 10000] [--window 200]

One four-seat classic match on a real ``canasta-server`` process (durable SQLite, as
``bench_server``), played by one client holding the four players' keys, one move at a time:
before each move the client asks for the acting seat's view (``GetView``), then submits the
plainest legal move (``bench.kit.plain_turn``: draw, discard the last card, pass once the
stock is gone, the cut between hands) as one signed ``Submit``. Nobody melds, so nobody
reaches the target and the match goes on for as many moves as asked (about 90 a hand).

It prints the wall-clock latency of both calls (p50, p99, mean) over ``--window`` moves from
move 10 and over the last ``--window`` moves, and the late window's median over the early
one's. The two windows are measured interleaved, a move of each in turn (ABBA): the long match
is first played to ``--moves`` less the window, unmeasured, and a second, fresh match to move
10; then the windows alternate, so the box's load (it swings by half from minute to minute)
falls on both alike. Issue 11's target: at move 10,000 within 1.2x of move 10. What a call
costs must not grow with the match's length: a view carries the events of the hand in play,
never the match's whole log, and the server reads a match's state from its last snapshot.
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

from bench.kit import PlayerClient, plain_turn, seated_match, start_server_process
from shared.pb import canasta_pb2 as pb


def _summary(name: str, samples: list[float]) -> str:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return (
        f"{name:<8} p50 {statistics.median(ordered) * 1000:6.2f} ms   p99 {p99 * 1000:6.2f} ms"
        f"   mean {statistics.fmean(ordered) * 1000:6.2f} ms"
    )


class _Table:
    """One match and the four keys that play it, one plain move at a time."""

    def __init__(self, seats: list[PlayerClient], match_id: str) -> None:
        self.seats, self.match_id = seats, match_id
        self.actor = seats[0].view(match_id).match.to_act
        self.moves = 0
        self.hands = 0

    def move(self) -> tuple[float, float, int]:
        """Look (the actor's GetView), then move (Submit): both latencies and the view's size."""
        player = self.seats[self.actor]
        asked = time.perf_counter()
        view = player.view(self.match_id)
        looked = time.perf_counter()
        if view.match.status != pb.MATCH_STATUS_PLAYING:
            raise SystemExit(f"the match ended at move {self.moves}: raise its target")
        if view.HasField("dealing_seat"):
            sent = time.perf_counter()
            answer = player.deal(view)
        else:
            request = player.envelope(view, plain_turn(view))
            sent = time.perf_counter()
            answer = player.stub.Submit(request, metadata=player.metadata)
        done = time.perf_counter()
        self.actor = answer.view.match.to_act
        self.hands = answer.view.view.hand_number
        self.moves += 1
        return looked - asked, done - sent, view.ByteSize()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=10_000, help="moves to play")
    parser.add_argument("--window", type=int, default=200, help="moves in each measured window")
    parser.add_argument("--log-level", default="INFO", help="the server's log level")
    args = parser.parse_args(argv)
    if args.moves < 10 + 2 * args.window:
        parser.error("--moves must leave room for two windows after move 10")
    env = {
        **os.environ,
        "CANASTA_SERVER_LOG_LEVEL": args.log_level,
        "CANASTA_SERVER_LIMIT_ANONYMOUS_PER_MINUTE": "0",
        "CANASTA_SERVER_LIMIT_WRITES_PER_MINUTE": "0",
        "CANASTA_SERVER_LIMIT_READS_PER_MINUTE": "0",
    }
    submits: dict[str, list[float]] = {"early": [], "late": []}
    views: dict[str, list[float]] = {"early": [], "late": []}
    sizes: dict[str, list[int]] = {"early": [], "late": []}
    with tempfile.TemporaryDirectory(prefix="canasta-bench-long-") as tmp:
        server, port = start_server_process(Path(tmp), env=env)
        started = time.perf_counter()
        try:
            with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
                seats = [PlayerClient(channel).join_server(f"p{i}") for i in range(4)]
                long = _Table(seats, seated_match(seats))
                while long.moves < args.moves - args.window:  # unmeasured: the long road
                    long.move()
                fresh = _Table(seats, seated_match(seats))
                while fresh.moves < 10:
                    fresh.move()
                # The windows interleaved, early and late in turn (ABBA), so the box's load
                # falls on both alike.
                for index in range(args.window):
                    order = ("early", "late") if index % 2 == 0 else ("late", "early")
                    for window in order:
                        looked, moved, size = (fresh if window == "early" else long).move()
                        views[window].append(looked)
                        submits[window].append(moved)
                        sizes[window].append(size)
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(30)
        elapsed = time.perf_counter() - started
    print(
        f"two classic matches, one to {long.moves:,} moves ({long.hands} hands), one to "
        f"{fresh.moves} moves, in {elapsed:.0f} s; durable SQLite, log {args.log_level}"
    )
    ranges = {
        "early": (11, 10 + args.window),
        "late": (args.moves - args.window + 1, args.moves),
    }
    for window, (first, last) in ranges.items():
        mean_size = statistics.fmean(sizes[window])
        print(f"moves {first:,}-{last:,} (a view {mean_size:,.0f} bytes on average)")
        print("  " + _summary("Submit", submits[window]))
        print("  " + _summary("GetView", views[window]))
    for name, samples in (("Submit", submits), ("GetView", views)):
        ratio = statistics.median(samples["late"]) / statistics.median(samples["early"])
        print(f"late / early median  {name:<8} {ratio:.2f}x   (target: at most 1.2x)")


if __name__ == "__main__":
    main()
