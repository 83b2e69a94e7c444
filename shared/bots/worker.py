"""A bot decision in a worker process (the server's pool, ``server.service.bots``).

``think`` takes the position as JSON (``GameState.to_json``) and returns the move's action
texts, so that only plain data crosses between processes. Each process keeps one bot per
level and budget: the strong bot's remembered plans stay with it.
"""

from __future__ import annotations

from typing import Any

from shared.rules import GameState

from . import Chooser, chooser, plan

_BOTS: dict[tuple[str, float | None, int, int], Chooser] = {}


def think(
    state_json: dict[str, Any], seat: int, level: str, seconds: float | None, seed: int
) -> list[str]:
    """The actions (as text) that ``level`` plays in one move for ``seat``."""
    key = (level, seconds, 100_000, seed)
    bot = _BOTS.get(key)
    if bot is None:
        if len(_BOTS) > 64:
            _BOTS.clear()
        bot = _BOTS[key] = chooser(level, seconds, seed=seed)
    state = GameState.from_json(state_json)
    return [str(action) for action in plan(bot, state, seat)]


def warm_up() -> bool:
    """Nothing: submitted once so that a new worker process has imported the bots."""
    return True
