"""Rules-engine benchmark: hands per second and the bot's strength. Prints figures only.

Run ``.venv/bin/python -m bench.bench_engine`` (or ``python bench/bench_engine.py``) with
``--hands N`` (hands per speed figure), ``--matches M`` (bot-vs-random matches) and
``--seed S``. It prints, in one process:

* for every preset in the registry (``shared.rules.PRESETS``, so a new preset is measured as
  soon as it exists; ``--presets`` picks some), full hands per second (deal to hand end) for
  random legal play: at each decision, a uniform choice among the actions ``legal_actions``
  lists;
* the same for bot-vs-bot play (``shared.rules.bot.choose_action`` in every seat);
* every move of that play applied with ``apply_listed`` (the engine's entry point for a move
  it listed or checked itself, which does not check it again), or with ``--apply public``
  with the public ``apply``, which does; the output says which;
* for classic four-player Canasta, the bot's results against random legal play over whole
  matches to the target (the bots
  hold one side, random players the other, alternating sides between matches): wins, draws,
  losses and the mean final score difference. ``--hand-cap H`` stops a match after ``H``
  hands and decides it by the higher total (the output says so); the default plays whole
  matches;
* for Modern American, ``--ma-matches K`` seeded bot-only matches (bots in every seat),
  each stopped after ``--ma-hand-cap C`` hands (30): how many reach the target of 8500 within
  the cap, and the mean hands per match. Its penalties can sink every score when bots play
  it badly, and then a match never ends; ``--ma-matches 0`` skips it.

``--compare`` runs instead an interleaved comparison, each timed block in a fresh process
(``bench/engine_worker.py``), the blocks of every round in one order and the next round's in
the reverse order (ABBA), over ``--rounds`` rounds of ``--compare-hands`` hands each:

* this engine, every preset of ``--presets`` (default: all) with random legal play, the
  share of that play's time spent listing legal actions, one listing's mean wall
  microseconds, the mean actions a listing offers and the decisions a hand;
* ``--baseline PATH``: another checkout of this project (an older engine, from ``git
  worktree add``), the same presets;
* ``--apply listed`` (the default) applies each move with ``apply_listed`` where the timed
  checkout has it (else ``apply``), ``--apply public`` always with ``apply``, and ``--apply
  both`` times this engine both ways (the blocks with ``apply`` labelled ``new-apply``,
  with ratios of each preset ``new`` against ``new-apply``); the table says which entry
  point each block used;
* ``--compiled PATH``: a checkout of this project where ``make engine-compiled`` has built
  the compiled engine (labelled ``compiled``; the ratios add each of its presets against its
  classic, its classic against the peer, and each preset against the pure ``new``);
* ``--peer PATH``: a checkout of jhtschultz/canasta-openspiel (it needs the ``open_spiel``
  package in this Python; it is no dependency of the project), its four-player classic
  game with random legal play, and its listing share read the same way; then one listing's
  mean wall time, the peer's over this engine's (and the compiled one's).

It prints per engine and preset the median hands per CPU second and their range, and the
ratios (each round's pair, then the median and range of those): classic against the peer
and against the baseline, and each preset against classic.

Nothing here asserts a time: the figures are for people (bench/README.md).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from shared.rules import (
    PRESETS,
    Action,
    GameState,
    Phase,
    RuleConfig,
    apply,
    apply_listed,
    deal_hand,
    legal_actions,
    make_config,
    new_match,
    shuffled_deck,
)
from shared.rules.bot import choose_action

Policy = Callable[[GameState, int, random.Random], Action]
Apply = Callable[[GameState, int, Action], GameState]
MAX_DECISIONS_PER_HAND = 50_000
"""A hand longer than this is reported as an endless loop rather than timed forever."""
SPEED_TARGET = 400
SPEED_AIM = 1_000


def random_policy(state: GameState, seat: int, rng: random.Random) -> Action:
    """Random legal play: a uniform choice among the listed legal actions."""
    return rng.choice(legal_actions(state, seat))


def bot_policy(state: GameState, seat: int, rng: random.Random) -> Action:
    return choose_action(state, seat, rng)


def play_hand(
    state: GameState,
    policies: Sequence[Policy],
    rng: random.Random,
    apply_move: Apply = apply_listed,
) -> tuple[GameState, int]:
    """Play a dealt hand to its end; the state after it and the number of decisions. Every
    policy plays a listed or checked move, so ``apply_listed`` may apply it (``apply_move``:
    ``apply`` to time the public entry point)."""
    decisions = 0
    while state.phase is not Phase.DEAL and state.phase is not Phase.MATCH_OVER:
        seat = state.actor()
        assert seat is not None
        state = apply_move(state, seat, policies[seat](state, seat, rng))
        decisions += 1
        if decisions > MAX_DECISIONS_PER_HAND:
            raise RuntimeError(f"a hand ran past {MAX_DECISIONS_PER_HAND} decisions")
    return state, decisions


@dataclass(frozen=True, slots=True)
class Speed:
    label: str
    hands: int
    decisions: int
    seconds: float

    @property
    def per_second(self) -> float:
        return self.hands / self.seconds if self.seconds else float("inf")


def time_hands(
    label: str,
    config: RuleConfig,
    policy: Policy,
    hands: int,
    seed: int,
    apply_move: Apply = apply_listed,
) -> Speed:
    """Deal and play ``hands`` full hands (consecutive hands of matches) with one policy."""
    rng = random.Random(seed)
    policies = [policy] * config.players
    match = new_match(config, seed=seed)
    decisions = 0
    start = time.process_time()
    for _ in range(hands):
        if match.phase is Phase.MATCH_OVER:
            match = new_match(config, seed=rng.getrandbits(32))
        match = deal_hand(match, shuffled_deck(config, rng.getrandbits(64)))
        match, made = play_hand(match, policies, rng, apply_move)
        decisions += made
    return Speed(label, hands, decisions, time.process_time() - start)


def best_and_median(
    label: str,
    config: RuleConfig,
    policy: Policy,
    hands: int,
    seed: int,
    repeat: int,
    apply_move: Apply = apply_listed,
) -> tuple[Speed, Speed]:
    """The same hands timed ``repeat`` times: the fastest run and the median run.

    The time is this process's CPU time, and the best run is the figure (as ``timeit``
    reports it): on a shared two-core machine other processes only ever slow a run down.
    """
    runs = sorted(
        (time_hands(label, config, policy, hands, seed, apply_move) for _ in range(repeat)),
        key=lambda sp: sp.seconds,
    )
    return runs[0], runs[len(runs) // 2]


@dataclass(slots=True)
class MatchTally:
    matches: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    score_diff: int = 0
    hands: int = 0
    capped: int = 0
    seconds: float = 0.0


def bot_vs_random(config: RuleConfig, matches: int, seed: int, hand_cap: int) -> MatchTally:
    """Whole matches, bots on side ``m % 2`` of match ``m``, random legal play on the other."""
    rng = random.Random(seed)
    tally = MatchTally()
    start = time.perf_counter()
    for number in range(matches):
        bot_side = number % config.sides
        policies: list[Policy] = [
            bot_policy if config.initial_side(s) == bot_side else random_policy
            for s in range(config.players)
        ]
        state = new_match(config, seed=rng.getrandbits(32))
        hands = 0
        while state.phase is not Phase.MATCH_OVER:
            if hand_cap and hands >= hand_cap:
                tally.capped += 1
                break
            state = deal_hand(state, shuffled_deck(config, rng.getrandbits(64)))
            state, _ = play_hand(state, policies, rng)
            hands += 1
        ours = state.scores[bot_side]
        theirs = max(s for side, s in enumerate(state.scores) if side != bot_side)
        tally.matches += 1
        tally.hands += hands
        tally.score_diff += ours - theirs
        if ours > theirs:
            tally.wins += 1
        elif ours == theirs:
            tally.draws += 1
        else:
            tally.losses += 1
    tally.seconds = time.perf_counter() - start
    return tally


@dataclass(slots=True)
class BotOnlyTally:
    matches: int = 0
    finished: int = 0
    hands: int = 0
    finished_hands: int = 0
    seconds: float = 0.0


def bot_only_matches(config: RuleConfig, matches: int, seed: int, hand_cap: int) -> BotOnlyTally:
    """Seeded bot-only matches (every seat ``choose_action``), each stopped after
    ``hand_cap`` hands: how many reach the target within the cap, and in how many hands.
    Modern American's penalties can sink every score while bots play it badly, and then a
    match never ends: this is the figure that watches it."""
    rng = random.Random(seed)
    tally = BotOnlyTally()
    start = time.perf_counter()
    policies = [bot_policy] * config.players
    for _ in range(matches):
        state = new_match(config, seed=rng.getrandbits(32))
        hands = 0
        while state.phase is not Phase.MATCH_OVER and hands < hand_cap:
            state = deal_hand(state, shuffled_deck(config, rng.getrandbits(64)))
            state, _ = play_hand(state, policies, rng)
            hands += 1
        tally.matches += 1
        tally.hands += hands
        if state.phase is Phase.MATCH_OVER:
            tally.finished += 1
            tally.finished_hands += hands
    tally.seconds = time.perf_counter() - start
    return tally


WORKER = Path(__file__).resolve().with_name("engine_worker.py")
REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True, slots=True)
class Block:
    """One timed block of the comparison: an engine (``rules`` at a checkout, or the peer)
    and a preset."""

    label: str
    kind: str
    root: Path
    preset: str
    entry: str = "listed"
    """``listed``: moves applied with ``apply_listed`` where the checkout has it; ``public``:
    with ``apply`` (``engine_worker``'s ``APPLY``)."""


def run_block(block: Block, hands: int, seed: int) -> dict[str, float | str]:
    """Time ``block`` in a fresh process: its hands per CPU second, listing share and the
    entry point that applied the moves."""
    out = subprocess.run(
        [
            sys.executable,
            str(WORKER),
            block.kind,
            str(block.root),
            block.preset,
            str(hands),
            str(seed),
            *([block.entry] if block.kind == "rules" else []),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    result = json.loads(out.stdout)
    rate = result["hands"] / result["seconds"]
    share = result["listing"] if result["listing"] is not None else -1.0
    cost = result.get("listing_us", -1.0)  # (a baseline checkout's worker may not say)
    return {
        "rate": rate,
        "share": share,
        "cost": cost,
        "offered": result.get("listed", -1.0),
        "per_hand": result["decisions"] / result["hands"],
        "apply": result.get("apply") or "-",
    }


def compare(blocks: Sequence[Block], rounds: int, hands: int, seed: int) -> None:
    """Run ``blocks`` interleaved (ABBA) and print medians, ranges and paired ratios."""
    rates: dict[Block, list[float]] = {b: [] for b in blocks}
    shares: dict[Block, list[float]] = {b: [] for b in blocks}
    costs: dict[Block, list[float]] = {b: [] for b in blocks}
    offered: dict[Block, list[float]] = {b: [] for b in blocks}
    per_hand: dict[Block, list[float]] = {b: [] for b in blocks}
    entries: dict[Block, str] = {}
    for number in range(rounds):
        order = blocks if number % 2 == 0 else list(reversed(blocks))
        for block in order:
            timed = run_block(block, hands, seed + number)
            rates[block].append(float(timed["rate"]))
            shares[block].append(float(timed["share"]))
            costs[block].append(float(timed["cost"]))
            offered[block].append(float(timed["offered"]))
            per_hand[block].append(float(timed["per_hand"]))
            entries[block] = str(timed["apply"])
        print(f"round {number + 1}/{rounds} done", file=sys.stderr)
    print(
        f"interleaved comparison: {rounds} rounds (ABBA), {hands} hands per block, random legal "
        f"play, CPU time, seed {seed}"
    )
    print(
        f"{'engine':<10} {'preset':<16} {'median h/s':>11} {'range':>17} {'listing':>9}"
        f" {'us/listing':>10} {'offered':>7} {'dec/hand':>8}  {'moves applied with'}"
    )
    for block in blocks:
        found = rates[block]
        share = statistics.median(shares[block])
        listed = f"{100 * share:>8.0f}%" if share >= 0 else f"{'-':>9}"
        cost = statistics.median(costs[block])
        each = f"{cost:>10.1f}" if cost >= 0 else f"{'-':>10}"
        offers = statistics.median(offered[block])
        offer = f"{offers:>7.1f}" if offers >= 0 else f"{'-':>7}"
        print(
            f"{block.label:<10} {block.preset:<16} {statistics.median(found):>11.1f} "
            f"{min(found):>8.1f}-{max(found):<8.1f} {listed} {each} {offer} "
            f"{statistics.median(per_hand[block]):>8.0f}  {entries[block]}"
        )
    by_key = {(b.label, b.preset): b for b in blocks}
    classic = by_key.get(("new", "classic"))
    if classic is None:
        return
    print("\nratios (each round's pair; median and range over the rounds)")
    pairs = [(b, classic) for b in blocks if b.label == "new" and b is not classic]
    pairs += [
        (classic, b) for b in blocks if b.label not in ("new", "compiled") and b.preset == "classic"
    ]
    pairs += [
        (by_key[("new", b.preset)], b)
        for b in blocks
        if b.label == "before" and b.preset != "classic" and ("new", b.preset) in by_key
    ]
    public = by_key.get(("new-apply", "classic"))
    if public is not None:  # --apply both: each preset's apply_listed against its apply
        pairs.remove((classic, public))  # (listed again below, with the other presets)
        pairs += [(b, public) for b in blocks if b.label == "new-apply" and b is not public]
        pairs += [
            (by_key[("new", b.preset)], b)
            for b in blocks
            if b.label == "new-apply" and ("new", b.preset) in by_key
        ]
    built = by_key.get(("compiled", "classic"))
    if built is not None:  # the compiled engine: each preset against its classic, and the peer
        pairs += [(b, built) for b in blocks if b.label == "compiled" and b is not built]
        pairs.append((built, classic))
        pairs += [(built, b) for b in blocks if b.label == "openspiel"]
        pairs += [
            (b, by_key[("new", b.preset)])
            for b in blocks
            if b.label == "compiled" and b.preset != "classic" and ("new", b.preset) in by_key
        ]
    for top, bottom in pairs:
        ratios = [x / y for x, y in zip(rates[top], rates[bottom], strict=True)]
        print(
            f"{top.label} {top.preset} / {bottom.label} {bottom.preset}: "
            f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"
        )
    peer = by_key.get(("openspiel", "classic"))
    if peer is not None:  # one listing's cost, the peer's over ours: how many times cheaper
        print("\none listing's wall time, the peer's over ours (each round's pair)")
        for ours in (classic, built):
            if ours is None:
                continue
            ratios = [x / y for x, y in zip(costs[peer], costs[ours], strict=True)]
            print(
                f"listing {peer.label} / {ours.label} classic: "
                f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"
            )


def nproc() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--hands", type=int, default=300, help="hands per speed figure")
    parser.add_argument("--matches", type=int, default=200, help="bot-vs-random matches")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per speed figure")
    parser.add_argument(
        "--hand-cap", type=int, default=0, help="stop a match after H hands (0: no cap)"
    )
    parser.add_argument(
        "--ma-matches", type=int, default=50, help="bot-only Modern American matches (0: skip)"
    )
    parser.add_argument(
        "--ma-hand-cap", type=int, default=30, help="hands after which such a match stops"
    )
    parser.add_argument(
        "--presets",
        nargs="+",
        choices=sorted(PRESETS),
        metavar="PRESET",
        help="time only these presets (default: every preset in the registry)",
    )
    parser.add_argument(
        "--compare", action="store_true", help="only the interleaved comparison (see above)"
    )
    parser.add_argument("--peer", type=Path, help="a checkout of canasta-openspiel")
    parser.add_argument("--baseline", type=Path, help="another checkout of this project")
    parser.add_argument(
        "--compiled",
        type=Path,
        help="a checkout of this project with the compiled engine built (make engine-compiled)",
    )
    parser.add_argument(
        "--apply",
        choices=("listed", "public", "both"),
        default="listed",
        help="apply each move with apply_listed (listed), apply (public), or time both",
    )
    parser.add_argument("--rounds", type=int, default=6, help="ABBA rounds of the comparison")
    parser.add_argument(
        "--compare-hands", type=int, default=200, help="hands per block of the comparison"
    )
    args = parser.parse_args(argv)
    if args.compare or args.peer or args.baseline or args.compiled:
        presets = args.presets or list(PRESETS)
        if "classic" not in presets:
            presets = ["classic", *presets]
        entry = "public" if args.apply == "public" else "listed"
        blocks = [Block("new", "rules", REPO, name, entry) for name in presets]
        if args.apply == "both":
            blocks += [Block("new-apply", "rules", REPO, name, "public") for name in presets]
        if args.baseline:
            root = args.baseline.resolve()
            blocks += [Block("before", "rules", root, name, entry) for name in presets]
        if args.compiled:
            root = args.compiled.resolve()
            blocks += [Block("compiled", "rules", root, name, entry) for name in presets]
        if args.peer:
            blocks.append(Block("openspiel", "openspiel", args.peer.resolve(), "classic"))
        compare(blocks, max(args.rounds, 1), args.compare_hands, args.seed)
        return 0
    config = make_config("classic")
    repeat = max(args.repeat, 1)
    apply_move: Apply = apply if args.apply == "public" else apply_listed

    print(
        f"Canasta rules-engine benchmark: Python {platform.python_version()} "
        f"({platform.python_implementation()}), nproc {nproc()}, one process, seed {args.seed}"
    )
    print(
        "hands per second for each preset, a hand = deal to hand end, every move applied "
        f"with {'apply' if apply_move is apply else 'apply_listed'}\n"
    )
    print(
        f"{'preset':<16} {'play':<18} {'hands':>6} {'decisions/hand':>15} {'best s':>7} "
        f"{'hands/s':>8} {'median':>7}   (CPU time, best and median of {repeat} runs)"
    )
    speeds: list[Speed] = []
    for name in args.presets or PRESETS:
        for label, policy in (("random legal play", random_policy), ("bot vs bot", bot_policy)):
            best, median = best_and_median(
                label, make_config(name), policy, args.hands, args.seed, repeat, apply_move
            )
            if name == "classic":
                speeds.append(best)
            print(
                f"{name:<16} {best.label:<18} {best.hands:>6} "
                f"{best.decisions / best.hands:>15.1f} {best.seconds:>7.2f} "
                f"{best.per_second:>8.1f} {median.per_second:>7.1f}"
            )
    if len(speeds) < 2:  # classic was not among the presets: the summary needs its figures
        speeds = [
            best_and_median(label, config, policy, args.hands, args.seed, repeat, apply_move)[0]
            for label, policy in (("random legal play", random_policy), ("bot vs bot", bot_policy))
        ]

    tally = bot_vs_random(config, args.matches, args.seed, args.hand_cap)
    if args.hand_cap:
        cap = f"capped at {args.hand_cap} hands"
        detail = f"{cap}: {tally.capped} matches stopped by the cap, decided by the higher total"
    else:
        cap = detail = "whole matches, no hand cap"
    print(
        f"\nbot vs random legal play, classic: {tally.matches} matches to {config.target} "
        f"({detail}); "
        "bots hold side 0 in even matches, side 1 in odd ones"
    )
    print(
        f"{'wins':>6} {'draws':>6} {'losses':>7} {'win rate':>9} {'mean score diff':>16} "
        f"{'hands/match':>12} {'seconds':>9}"
    )
    n = max(tally.matches, 1)
    win_rate = 100 * tally.wins / n
    print(
        f"{tally.wins:>6} {tally.draws:>6} {tally.losses:>7} {win_rate:>8.1f}% "
        f"{tally.score_diff / n:>+16.1f} {tally.hands / n:>12.2f} {tally.seconds:>9.2f}"
    )
    if args.ma_matches > 0:
        american = make_config("modern_american")
        only = bot_only_matches(american, args.ma_matches, args.seed, args.ma_hand_cap)
        print(
            f"\nbot-only Modern American: {only.matches} matches to {american.target}, each "
            f"stopped after {args.ma_hand_cap} hands"
        )
        print(
            f"{'finished':>9} {'share':>7} {'hands/match':>12} {'hands/finished':>15} "
            f"{'seconds':>9}"
        )
        print(
            f"{only.finished:>9} {100 * only.finished / only.matches:>6.1f}% "
            f"{only.hands / only.matches:>12.2f} "
            f"{only.finished_hands / max(only.finished, 1):>15.2f} {only.seconds:>9.2f}"
        )
    print(
        f"\nsummary: random legal play {speeds[0].per_second:.0f} hands/s "
        f"(need >= {SPEED_TARGET}, aim {SPEED_AIM:,}), bot vs bot "
        f"{speeds[1].per_second:.0f} hands/s, bot win rate {win_rate:.1f}% "
        f"against random legal play over {tally.matches} matches ({cap})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
