"""Bots in levels: ``easy``, ``normal`` and ``strong`` (docs/playing.md, "Bots").

* ``normal`` is the heuristic bot of the rules engine (``shared.rules.bot``).
* ``easy`` is the same with deliberate, seeded mistakes (``shared.bots.easy``).
* ``strong`` searches over worlds consistent with what its seat knows
  (``shared.bots.search``, ``shared.bots.knowledge``).

``chooser(level, ...)`` returns a callable ``(state, seat) -> Action`` for a level. These
modules use the engine's public entry points only and live outside ``shared.rules``: they
are players, not rules, and every variant preset plays through the same hooks.
"""

from __future__ import annotations

from collections.abc import Callable

from shared.rules import Action, GameState
from shared.rules.bot import choose_action

from .easy import EasyBot
from .search import Budget, StrongBot

Chooser = Callable[[GameState, int], Action]

LEVELS = ("easy", "normal", "strong")
DEFAULT_LEVEL = "normal"


def normal(state: GameState, seat: int) -> Action:
    """The heuristic bot (deterministic)."""
    return choose_action(state, seat)


def check_level(level: str) -> str:
    """``level`` if it names a level (``""`` means the default), else ``ValueError``."""
    if not level:
        return DEFAULT_LEVEL
    if level not in LEVELS:
        raise ValueError(f"unknown bot level {level!r}; choose one of {', '.join(LEVELS)}")
    return level


def plan(bot: Chooser, state: GameState, seat: int) -> tuple[Action, ...]:
    """What ``bot`` plays from here in one move: the strong bot's plan for this part of the
    turn (a start, or its melds and discard), another level's one action."""
    if isinstance(bot, StrongBot):
        return bot.plan(state, seat)
    return (bot(state, seat),)


def chooser(
    level: str, seconds: float | None = 1.0, playouts: int = 100_000, seed: int = 0
) -> Chooser:
    """A chooser for ``level``; ``seconds`` and ``playouts`` bound ``strong``'s thinking."""
    level = check_level(level)
    if level == "easy":
        return EasyBot(seed=seed)
    if level == "strong":
        return StrongBot(Budget(playouts=playouts, seconds=seconds), seed=seed)
    return normal


__all__ = [
    "DEFAULT_LEVEL",
    "LEVELS",
    "Budget",
    "Chooser",
    "EasyBot",
    "StrongBot",
    "check_level",
    "chooser",
    "normal",
    "plan",
]
