"""One timed block of random legal play, in a process of its own, for ``bench_engine --compare``.

Run by ``bench_engine`` (never by hand): ``python bench/engine_worker.py KIND ROOT PRESET
HANDS SEED [APPLY]``. ``KIND`` is ``rules`` (a checkout of this project at ``ROOT``: its
``shared.rules``, whichever version that checkout holds, so an older engine can be timed
against the new one) or ``openspiel`` (a checkout of jhtschultz/canasta-openspiel at
``ROOT``, which needs the ``open_spiel`` package). It plays ``HANDS`` whole hands, a uniform
choice among the listed legal actions at each decision, and prints one JSON line: the CPU
seconds of the play, the hands, the decisions, the share of the play's time spent listing
legal actions (by the wall clock, which costs far less a reading), the mean wall microseconds
of one listing, the mean actions a listing offers and (``rules`` only) which entry point
applied the moves.

``APPLY`` (``rules`` only) is ``listed`` (the default: ``apply_listed``, the engine's entry
point for a move it listed itself, where the checkout has it, else ``apply``) or ``public``
(always ``apply``, which checks every move again), so both can be timed side by side.

Nothing is imported at module level: the engine comes from ``ROOT``, put first on the path,
so the checkout running this file does not shadow the one being timed.
"""

from __future__ import annotations

import json
import random
import sys
import time
from typing import Any

MAX_DECISIONS_PER_HAND = 50_000


def time_rules(
    root: str, preset: str, hands: int, seed: int, entry: str = "listed"
) -> dict[str, Any]:
    """Random legal play of ``hands`` hands of ``preset`` with the engine at ``root``, each
    move applied with ``apply_listed`` (``entry`` ``listed``, where the checkout has it) or
    with the public ``apply``."""
    sys.path.insert(0, root)
    import shared.rules as engine  # (the checkout at ``root``)

    assert engine.__file__.startswith(root), f"imported {engine.__file__}, not {root}"
    if entry not in ("listed", "public"):
        raise SystemExit(f"unknown entry point {entry!r}: listed or public")
    listed_entry = getattr(engine, "apply_listed", None) if entry == "listed" else None
    apply = listed_entry if listed_entry is not None else engine.apply
    applied_with = "apply_listed" if listed_entry is not None else "apply"
    config = engine.make_config(preset)
    rng = random.Random(seed)
    listing = 0.0
    decisions = listed = 0
    clock = time.process_time
    wall = time.perf_counter  # (cheap: the CPU clock costs microseconds a call on some VMs)
    match = engine.new_match(config, seed=seed)
    start = clock()
    start_wall = wall()
    for _ in range(hands):
        if match.phase is engine.Phase.MATCH_OVER:
            match = engine.new_match(config, seed=rng.getrandbits(32))
        state = engine.deal_hand(match, engine.shuffled_deck(config, rng.getrandbits(64)))
        made = 0
        while state.phase is not engine.Phase.DEAL and state.phase is not engine.Phase.MATCH_OVER:
            seat = state.actor()
            assert seat is not None
            before = wall()
            actions = engine.legal_actions(state, seat)
            listing += wall() - before
            listed += len(actions)
            state = apply(state, seat, rng.choice(actions))
            made += 1
            if made > MAX_DECISIONS_PER_HAND:
                raise RuntimeError(f"a hand ran past {MAX_DECISIONS_PER_HAND} decisions")
        decisions += made
        match = state
    seconds = clock() - start
    share = listing / (wall() - start_wall)
    return {
        "seconds": seconds,
        "hands": hands,
        "decisions": decisions,
        "listing": share,
        "listing_us": 1e6 * listing / decisions,  # (one listing per decision)
        "listed": listed / decisions,
        "apply": applied_with,
    }


def time_openspiel(root: str, hands: int, seed: int) -> dict[str, Any]:
    """The peer's random play: whole games of its four-player classic Canasta, chance nodes
        sampled by their probabilities, a uniform choice among its legal actions otherwise,
        until ``hands`` hands have ended (a hand ends when the next one is dealt, or the game
        ends). Its ``legal_actions`` may itself end a hand at the end of the stock and deal the
        next, so each call is followed by a look at the phase, as its own tests do. Its listing
    share is read as this engine's is (the wall clock around ``legal_actions``); the rare
    call that ends a hand and deals the next counts that deal as listing too."""
    sys.path.insert(0, root)
    from canasta.canasta_game import CanastaGame  # type: ignore[import-not-found]  # (the peer)

    rng = random.Random(seed)
    game = CanastaGame()
    done = decisions = listings = listed = 0
    listing = 0.0
    clock = time.process_time
    wall = time.perf_counter
    start = clock()
    start_wall = wall()
    while done < hands:
        state = game.new_initial_state()
        number = state._hand_number  # the peer keeps it private; read only to count hands
        while not state.is_terminal() and done < hands:
            if state.is_chance_node():
                outcomes, weights = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(rng.choices(outcomes, weights)[0])
            else:
                before = wall()
                legal = state.legal_actions()  # (at the stock's end it may deal a new hand)
                listing += wall() - before
                listings += 1
                listed += len(legal)
                if legal and not state.is_chance_node() and not state.is_terminal():
                    state.apply_action(rng.choice(legal))
                    decisions += 1
            if state._hand_number != number:
                number = state._hand_number
                done += 1
        if state.is_terminal():
            done += 1
    seconds = clock() - start
    return {
        "seconds": seconds,
        "hands": done,
        "decisions": decisions,
        "listing": listing / (wall() - start_wall),
        "listing_us": 1e6 * listing / listings,
        "listed": listed / listings,
        "apply": None,
    }


def main(argv: list[str]) -> int:
    kind, root, preset, hands, seed, *rest = argv
    if kind == "rules":
        result = time_rules(root, preset, int(hands), int(seed), *rest)
    elif kind == "openspiel":
        result = time_openspiel(root, int(hands), int(seed))
    else:
        raise SystemExit(f"unknown kind {kind!r}: rules or openspiel")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
