"""What ``apply_listed`` saves over ``apply``, move by move and in bot play. Prints figures only.

``.venv/bin/python -m bench.bench_apply --presets classic samba --hands 80 --rounds 6``

* **Per move.** Seeded random legal play of ``--hands`` hands is recorded (each position and
  the move played), then every recorded move is applied with ``apply`` and with
  ``apply_listed``, ``--rounds`` times in alternating order (ABBA); printed: the CPU
  microseconds a move of each entry point (the best round), and by kind of move, so that
  it shows which of the checks ``apply_listed`` skips matter (a meld's validation and the
  dead-end guard, a discard's must-go-out search, asking partner's search, the compulsory
  take at the stock's end). The listing's time is left out: this is ``apply`` alone.
* **Bot play** (``--bot-hands``, 0 to skip): bot-vs-bot hands per CPU second with each
  entry point applying the bot's choices, the two interleaved over the rounds, and the
  paired ratio's median and range.

Both entry points share their memoised going-out searches, as they do in real play (the
listing has asked the same questions just before), so the figure is what play would save.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_engine import bot_policy, time_hands
from shared.rules import (
    PRESETS,
    Action,
    GameState,
    Phase,
    apply,
    apply_listed,
    deal_hand,
    legal_actions,
    make_config,
    new_match,
    shuffled_deck,
)

Apply = Callable[[GameState, int, Action], GameState]
ENTRIES: dict[str, Apply] = {"apply": apply, "apply_listed": apply_listed}


def recorded_moves(preset: str, hands: int, seed: int) -> list[tuple[GameState, int, Action]]:
    """Every position of seeded random legal play, with its actor and the move played."""
    config = make_config(preset)
    rng = random.Random(seed)
    moves: list[tuple[GameState, int, Action]] = []
    match = new_match(config, seed=seed)
    for _ in range(hands):
        if match.phase is Phase.MATCH_OVER:
            match = new_match(config, seed=rng.getrandbits(32))
        state = deal_hand(match, shuffled_deck(config, rng.getrandbits(64)))
        while state.phase is not Phase.DEAL and state.phase is not Phase.MATCH_OVER:
            seat = state.actor()
            assert seat is not None
            action = rng.choice(legal_actions(state, seat))
            moves.append((state, seat, action))
            state = apply(state, seat, action)
        match = state
    return moves


def per_move(preset: str, hands: int, rounds: int, seed: int) -> None:
    """Print each entry point's CPU microseconds a move, overall and by kind of move."""
    moves = recorded_moves(preset, hands, seed)
    kinds = [type(action).__name__ for _, _, action in moves]
    never = float("inf")
    best: dict[str, dict[str, float]] = {name: defaultdict(lambda: never) for name in ENTRIES}
    totals: dict[str, list[float]] = {name: [] for name in ENTRIES}
    clock = time.perf_counter
    for number in range(rounds):
        names = list(ENTRIES) if number % 2 == 0 else list(reversed(ENTRIES))
        for name in names:
            entry = ENTRIES[name]
            spent: dict[str, float] = defaultdict(float)
            start = time.process_time()
            for (state, seat, action), kind in zip(moves, kinds, strict=True):
                before = clock()
                entry(state, seat, action)
                spent[kind] += clock() - before
            totals[name].append(time.process_time() - start)
            for kind, seconds in spent.items():
                best[name][kind] = min(best[name][kind], seconds)
    full, listed = min(totals["apply"]), min(totals["apply_listed"])
    print(
        f"{preset}: {len(moves)} moves; apply {1e6 * full / len(moves):.1f} us a move, "
        f"apply_listed {1e6 * listed / len(moves):.1f} ({100 * (1 - listed / full):.0f}% less)"
    )
    counts: dict[str, int] = defaultdict(int)
    for kind in kinds:
        counts[kind] += 1
    for kind in sorted(counts, key=lambda k: -best["apply"][k]):
        was, now = best["apply"][kind], best["apply_listed"][kind]
        print(
            f"  {kind:<11} {counts[kind]:>6} moves {1e6 * was / counts[kind]:>7.1f} -> "
            f"{1e6 * now / counts[kind]:>6.1f} us ({100 * (1 - now / was):>3.0f}% less)"
        )


def bot_play(preset: str, hands: int, rounds: int, seed: int) -> None:
    """Print bot-vs-bot hands per CPU second with each entry point, interleaved."""
    config = make_config(preset)
    rates: dict[str, list[float]] = {name: [] for name in ENTRIES}
    for number in range(rounds):
        names = list(ENTRIES) if number % 2 == 0 else list(reversed(ENTRIES))
        for name in names:
            speed = time_hands(name, config, bot_policy, hands, seed + number, ENTRIES[name])
            rates[name].append(speed.per_second)
    ratios = [x / y for x, y in zip(rates["apply_listed"], rates["apply"], strict=True)]
    print(
        f"{preset}: bot vs bot, apply {statistics.median(rates['apply']):.1f} h/s, "
        f"apply_listed {statistics.median(rates['apply_listed']):.1f} h/s; apply_listed/apply "
        f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--presets", nargs="+", choices=sorted(PRESETS), metavar="PRESET")
    parser.add_argument("--hands", type=int, default=80, help="hands of recorded moves")
    parser.add_argument("--bot-hands", type=int, default=60, help="bot hands a block (0: skip)")
    parser.add_argument("--rounds", type=int, default=6, help="alternating rounds (ABBA)")
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args(argv)
    presets = args.presets or list(PRESETS)
    rounds = max(args.rounds, 1)
    for preset in presets:
        per_move(preset, args.hands, rounds, args.seed)
    if args.bot_hands > 0:
        for preset in presets:
            bot_play(preset, args.bot_hands, rounds, args.seed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
