"""Benchmark: a move and a look late in a long match cost what they cost early in it.

    .venv/bin/python -m bench.bench_long [--moves 10000] [--window 200]

One four-seat classic match on a real ``canasta-server`` process (durable SQLite, as
``bench_server``), played by one client holding the four players' keys, one move at a time:
before each move the client asks for the acting seat's view (``GetView``), then submits the
plainest legal move (``tests.testkit.plain_turn``: draw, discard the last card, pass once the
stock is gone, the cut between hands) as one signed ``Submit``. Nobody melds, so nobody
reaches the target and the match goes on for as many moves as asked (about 90 a hand).

It prints the wall-clock latency of both calls (p50, p99, mean) over ``--window`` moves from
move 10 and over the last ``--window`` moves, and the late window's median over the early
one's. Issue 11's target: at move 10,000 within 1.2x of move 10. What a call costs must not
grow with the match's length: a view carries the events of the hand in play, never the
match's whole log, and the server reads a match's state from its last snapshot.
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

from shared.pb import canasta_pb2 as pb
from tests.testkit import PlayerClient, plain_turn, seated_match, start_server_process


def _summary(name: str, samples: list[float]) -> str:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return (
        f"{name:<8} p50 {statistics.median(ordered) * 1000:6.2f} ms   p99 {p99 * 1000:6.2f} ms"
        f"   mean {statistics.fmean(ordered) * 1000:6.2f} ms"
    )


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
    }
    early = range(10, 10 + args.window)
    late = range(args.moves - args.window + 1, args.moves + 1)
    submits: dict[str, list[float]] = {"early": [], "late": []}
    views: dict[str, list[float]] = {"early": [], "late": []}
    sizes: dict[str, list[int]] = {"early": [], "late": []}
    with tempfile.TemporaryDirectory(prefix="canasta-bench-long-") as tmp:
        server, port = start_server_process(Path(tmp), env=env)
        started = time.perf_counter()
        try:
            with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
                seats = [PlayerClient(channel).join_server(f"p{i}") for i in range(4)]
                match_id = seated_match(seats)
                actor = seats[0].view(match_id).match.to_act
                for move in range(1, args.moves + 1):
                    window = "early" if move in early else "late" if move in late else ""
                    player = seats[actor]
                    asked = time.perf_counter()
                    view = player.view(match_id)
                    looked = time.perf_counter()
                    if view.match.status != pb.MATCH_STATUS_PLAYING:
                        raise SystemExit(f"the match ended at move {move}: raise its target")
                    if view.HasField("dealing_seat"):
                        sent = time.perf_counter()
                        answer = player.deal(view)
                    else:
                        request = player.envelope(view, plain_turn(view))
                        sent = time.perf_counter()
                        answer = player.stub.Submit(request, metadata=player.metadata)
                    done = time.perf_counter()
                    if window:
                        views[window].append(looked - asked)
                        submits[window].append(done - sent)
                        sizes[window].append(view.ByteSize())
                    actor = answer.view.match.to_act
                hands = answer.view.view.hand_number
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(30)
        elapsed = time.perf_counter() - started
    print(
        f"one classic match, {args.moves:,} moves ({hands} hands) in {elapsed:.0f} s; "
        f"durable SQLite, log {args.log_level}"
    )
    for window, moves in (("early", early), ("late", late)):
        size = statistics.fmean(sizes[window])
        print(f"moves {moves.start:,}-{moves.stop - 1:,} (a view {size:,.0f} bytes on average)")
        print("  " + _summary("Submit", submits[window]))
        print("  " + _summary("GetView", views[window]))
    for name, samples in (("Submit", submits), ("GetView", views)):
        ratio = statistics.median(samples["late"]) / statistics.median(samples["early"])
        print(f"late / early median  {name:<8} {ratio:.2f}x   (target: at most 1.2x)")


if __name__ == "__main__":
    main()
