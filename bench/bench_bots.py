"""Bot levels against each other in duplicate matches, and the strong bot's decision time.

Duplicate: each *pair* plays the same deals twice, the levels swapping sides between the two
matches (match one: level A holds side 0; match two: side 1; the same dealer and, hand by
hand, the same shuffled deck), so the luck of the cards cancels out as far as it can.

    .venv/bin/python -m bench.bench_bots --a strong --b normal --pairs 100 --playouts 10
    .venv/bin/python -m bench.bench_bots --a normal --b easy --pairs 100
    .venv/bin/python -m bench.bench_bots --a strong --b normal --preset samba --pairs 25
    .venv/bin/python -m bench.bench_bots --hands 50 --a strong --b normal      # single hands
    .venv/bin/python -m bench.bench_bots --timing 200                           # decision time

``--playouts P`` bounds the strong bot's thinking by playouts (deterministic); ``--seconds
S`` by CPU seconds a decision (the server's default is 1 s); both may be given. ``--workers``
runs pairs in parallel processes. Every finished pair is appended to ``--out`` (JSON lines),
so a long run can be summarised while it goes or after it is stopped: ``--summarize FILE``.

Printed: level A's share of matches won (a draw counts half) and the mean score difference
per hand (A less B), each with a 95% confidence interval over pairs (a pair's two matches
are not independent, so the pair is the unit); the hands per match; the strong bot's mean
CPU milliseconds per searched decision. ``--hands N`` plays N duplicate single hands (from
the first deal of a match) and prints the mean hand score difference with its interval.
``--timing N`` plays the strong bot at the default budget in one seat of classic matches
against ``normal`` until it has made N searched decisions, and prints their median and p99.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from shared.bots import Budget, Chooser, StrongBot, chooser
from shared.rules import GameState, Phase, apply, deal_hand, make_config, new_match, shuffled_deck

HAND_CAP = 60
"""A match still going after this many hands is stopped and decided by the totals."""


def _choosers(
    a: str, b: str, seconds: float | None, playouts: int, seed: int
) -> tuple[Chooser, Chooser]:
    return chooser(a, seconds, playouts, seed), chooser(b, seconds, playouts, seed + 1)


def play_match(
    preset: str,
    levels: Sequence[Chooser],
    match_seed: int,
    single_hand: bool,
    thinking: list[float],
) -> dict[str, Any]:
    """One match (or its first hand); ``levels[side]`` plays every seat of that side."""
    config = make_config(preset)
    state = new_match(config, seed=match_seed)
    hands = 0
    while state.phase is not Phase.MATCH_OVER and hands < HAND_CAP:
        deck = shuffled_deck(config, f"{match_seed}:{state.hand_number + 1}")
        state = deal_hand(state, deck)
        state = _play_hand(state, levels, thinking)
        hands += 1
        if single_hand:
            break
    return {"scores": list(state.scores), "hands": hands, "over": state.phase is Phase.MATCH_OVER}


def _play_hand(state: GameState, levels: Sequence[Chooser], thinking: list[float]) -> GameState:
    config = state.config
    while state.phase is not Phase.DEAL and state.phase is not Phase.MATCH_OVER:
        seat = state.actor()
        assert seat is not None
        choose = levels[config.initial_side(seat) % len(levels)]
        start = time.thread_time()
        action = choose(state, seat)
        if isinstance(choose, StrongBot) and choose.last.searched:
            thinking.append(time.thread_time() - start)
        state = apply(state, seat, action)
    return state


def play_pair(
    preset: str,
    a: str,
    b: str,
    pair: int,
    seed: int,
    seconds: float | None,
    playouts: int,
    single_hand: bool,
) -> dict[str, Any]:
    """Both matches of a duplicate pair: A on side 0, then A on side 1."""
    match_seed = seed * 100_003 + pair
    results = []
    thinking: list[float] = []
    for a_side in (0, 1):
        bot_a, bot_b = _choosers(a, b, seconds, playouts, match_seed)
        levels = [bot_a, bot_b] if a_side == 0 else [bot_b, bot_a]
        result = play_match(preset, levels, match_seed, single_hand, thinking)
        scores = result["scores"]
        ours = scores[a_side]
        theirs = max(s for side, s in enumerate(scores) if side != a_side)
        results.append({"a_side": a_side, "diff": ours - theirs, **result})
    return {
        "preset": preset,
        "a": a,
        "b": b,
        "pair": pair,
        "seed": seed,
        "seconds": seconds,
        "playouts": playouts,
        "single_hand": single_hand,
        "matches": results,
        "thinking": [round(t, 5) for t in thinking],
    }


def _interval(values: Sequence[float]) -> tuple[float, float]:
    """Mean and the half-width of its 95% confidence interval (normal approximation)."""
    n = len(values)
    mean = statistics.fmean(values)
    if n < 2:
        return mean, math.inf
    return mean, 1.96 * statistics.stdev(values) / math.sqrt(n)


def summarize(rows: Sequence[dict[str, Any]]) -> str:
    if not rows:
        return "no pairs finished"
    first = rows[0]
    budget = (
        f", strong budget {first['playouts']} playouts / {first['seconds']} s a decision"
        if "strong" in (first["a"], first["b"])
        else ""
    )
    lines = [
        f"{first['a']} vs {first['b']}, preset {first['preset']}: {len(rows)} duplicate pairs "
        f"({2 * len(rows)} {'hands' if first['single_hand'] else 'matches'}){budget}"
    ]
    wins: list[float] = []
    per_hand: list[float] = []
    hands: list[int] = []
    capped = 0
    thinking: list[float] = []
    for row in rows:
        thinking += row["thinking"]
        pair_wins = 0.0
        pair_diff = 0.0
        for match in row["matches"]:
            diff = match["diff"]
            pair_wins += 1.0 if diff > 0 else 0.5 if diff == 0 else 0.0
            pair_diff += diff / max(match["hands"], 1)
            hands.append(match["hands"])
            capped += 0 if match["over"] or row["single_hand"] else 1
        wins.append(pair_wins / 2)
        per_hand.append(pair_diff / 2)
    win, win_ci = _interval(wins)
    diff, diff_ci = _interval(per_hand)
    if first["single_hand"]:
        lines.append(f"  mean hand score difference (A - B): {diff:+.1f} +/- {diff_ci:.1f}")
        lines.append(f"  hands won by A: {100 * win:.1f}% +/- {100 * win_ci:.1f}")
    else:
        lines.append(f"  matches won by A: {100 * win:.1f}% +/- {100 * win_ci:.1f} (95% CI)")
        lines.append(
            f"  mean score difference per hand (A - B): {diff:+.1f} +/- {diff_ci:.1f} (95% CI)"
        )
        lines.append(
            f"  hands per match: {statistics.fmean(hands):.2f}; stopped at {HAND_CAP} hands: "
            f"{capped}"
        )
    if thinking:
        ordered = sorted(thinking)
        p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
        lines.append(
            f"  strong decisions searched: {len(thinking)}, CPU ms mean "
            f"{1000 * statistics.fmean(thinking):.1f}, median "
            f"{1000 * statistics.median(thinking):.1f}, p99 {1000 * p99:.1f}"
        )
    return "\n".join(lines)


def timing(decisions: int, seconds: float, seed: int) -> str:
    """Searched decisions of the strong bot at ``seconds`` a decision: median and p99."""
    thinking: list[float] = []
    walls: list[float] = []
    match = 0
    while len(thinking) < decisions:
        strong = StrongBot(Budget(seconds=seconds), seed=seed + match)
        config = make_config("classic")
        state = deal_hand(
            new_match(config, seed=seed * 7919 + match), shuffled_deck(config, seed + match)
        )
        normal = chooser("normal")
        while state.phase is Phase.DRAW or state.phase is Phase.PLAY or state.phase is Phase.ANSWER:
            seat = state.actor()
            assert seat is not None
            if config.initial_side(seat) == 0:
                wall, cpu = time.perf_counter(), time.thread_time()
                action = strong(state, seat)
                if strong.last.searched:
                    thinking.append(time.thread_time() - cpu)
                    walls.append(time.perf_counter() - wall)
            else:
                action = normal(state, seat)
            state = apply(state, seat, action)
        match += 1
        print(f"timing: {len(thinking)} decisions so far", file=sys.stderr, flush=True)

    def median_p99(values: list[float]) -> str:
        ordered = sorted(values)
        p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
        return f"median {statistics.median(ordered):.3f}, p99 {p99:.3f}, max {ordered[-1]:.3f}"

    return (
        f"strong bot at {seconds} s a decision: {len(thinking)} searched decisions;\n"
        f"  CPU seconds {median_p99(thinking)}\n  wall seconds {median_p99(walls)}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--a", default="strong", help="level A (easy, normal, strong)")
    parser.add_argument("--b", default="normal", help="level B")
    parser.add_argument("--preset", default="classic")
    parser.add_argument("--pairs", type=int, default=100, help="duplicate pairs (2 matches each)")
    parser.add_argument("--hands", type=int, default=0, help="duplicate single hands instead")
    parser.add_argument("--playouts", type=int, default=10, help="strong: playouts a decision")
    parser.add_argument("--seconds", type=float, default=None, help="strong: CPU s a decision")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--first", type=int, default=0, help="first pair number (to resume)")
    parser.add_argument("--out", type=Path, help="append each pair as a JSON line")
    parser.add_argument("--summarize", type=Path, help="only summarise a --out file")
    parser.add_argument("--timing", type=int, default=0, help="decision-time run: N decisions")
    args = parser.parse_args(argv)
    if args.summarize:
        stored = [json.loads(line) for line in args.summarize.read_text().splitlines() if line]
        print(summarize(stored))
        return 0
    if args.timing:
        print(timing(args.timing, args.seconds or 1.0, args.seed))
        return 0
    single = args.hands > 0
    count = args.hands if single else args.pairs
    rows: list[dict[str, Any]] = []
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=max(1, args.workers)) as pool:
        futures = [
            pool.submit(
                play_pair,
                args.preset,
                args.a,
                args.b,
                pair,
                args.seed,
                args.seconds,
                args.playouts,
                single,
            )
            for pair in range(args.first, args.first + count)
        ]
        for done in as_completed(futures):
            row = done.result()
            rows.append(row)
            if args.out:
                with args.out.open("a") as out:
                    out.write(json.dumps(row) + "\n")
            print(
                f"pair {row['pair']} done ({len(rows)}/{count}, "
                f"{time.perf_counter() - started:.0f} s)",
                file=sys.stderr,
                flush=True,
            )
    print(summarize(rows))
    print(f"  wall time {time.perf_counter() - started:.0f} s, {args.workers} workers")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
