"""The engine's errors: what a player reads when a move is refused.

Every error is a ``ValueError`` (so careless callers still catch it) with a ``kind`` that
callers map to transport statuses, and, for refused moves, the docs/rules.md section that the
move broke. Messages are written for players: they say what was wrong and what would work.
"""

from __future__ import annotations


class CanastaError(ValueError):
    """Base class of every error the rules engine raises on purpose."""

    kind = "error"

    def __init__(self, message: str, rule: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.rule = rule
        """The docs/rules.md section the move broke, e.g. ``"1.8.2"``; ``None`` if not a rule."""


class NotationError(CanastaError):
    """The text could not be read as a card or an action (a typo, an unknown word)."""

    kind = "notation"


class IllegalMoveError(CanastaError):
    """The move is well formed but the rules do not allow it now."""

    kind = "illegal"


class NotYourTurnError(IllegalMoveError):
    """Another seat is to act."""

    kind = "turn"


class WrongPhaseError(IllegalMoveError):
    """That kind of action does not fit the current phase (e.g. discarding before drawing)."""

    kind = "phase"


class ConfigError(CanastaError):
    """A preset or rule option is unknown or has an impossible value."""

    kind = "config"
