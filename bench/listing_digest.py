"""A digest of every listing of seeded play, to show that two engines list identically.

``python bench/listing_digest.py ROOT [HANDS]`` imports ``shared.rules`` from the checkout at
``ROOT`` (put first on the path, as ``engine_worker.py`` does) and, for every preset of that
checkout, plays ``HANDS`` seeded hands of random legal play and ``HANDS`` of bot play. At
every decision it hashes the listed legal actions, in order, as text, and the state's JSON
after the move, and prints one line per preset and kind of play: the decisions and the
digest. Two checkouts (or the pure and the compiled engine) list identically, action for
action, exactly when their lines agree. A figure for people, like the other benches.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from typing import Any


def digest(engine: Any, bot: Any, preset: str, hands: int, use_bot: bool) -> tuple[int, str]:
    config = engine.make_config(preset)
    rng = random.Random(7)
    h = hashlib.sha256()
    decisions = 0
    match = engine.new_match(config, seed=7)
    for _ in range(hands):
        if match.phase is engine.Phase.MATCH_OVER:
            match = engine.new_match(config, seed=rng.getrandbits(32))
        state = engine.deal_hand(match, engine.shuffled_deck(config, rng.getrandbits(64)))
        while state.phase is not engine.Phase.DEAL and state.phase is not engine.Phase.MATCH_OVER:
            seat = state.actor()
            listed = engine.legal_actions(state, seat)
            h.update("|".join(map(str, listed)).encode())
            action = bot.choose_action(state, seat, rng) if use_bot else rng.choice(listed)
            state = engine.apply(state, seat, action)
            h.update(json.dumps(state.to_json(), sort_keys=True).encode())
            decisions += 1
        match = state
    return decisions, h.hexdigest()[:16]


def main(argv: list[str]) -> int:
    root = argv[0]
    hands = int(argv[1]) if len(argv) > 1 else 6
    sys.path.insert(0, root)
    import shared.rules as engine  # (the checkout at ``root``)
    from shared.rules import bot

    for preset in engine.PRESETS:
        for use_bot in (False, True):
            decisions, text = digest(engine, bot, preset, hands, use_bot)
            kind = "bot" if use_bot else "random"
            print(f"{preset:<16} {kind:<7} {decisions:>6} {text}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
