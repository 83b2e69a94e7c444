"""Resigning: a seat concedes the match for its side.

The rulebooks are silent on conceding (a table of friends just stops); a correspondence match needs
it, as chess and bridge clubs have it, so that a side that will not play on can end the match
without stalling the others. ``resign`` may be played by any seat at any moment before the
match is over, whether or not it is that seat's turn, between hands too. The match ends at
once: every score column but the resigning seat's wins (its partners lose with it; in
three-handed cutthroat, where a column is a player, the other two win). The scores stand as
they are, and the hand in play is not scored.

A server's timeout policy ``forfeit`` uses the same action, played for the absent seat.
"""

from __future__ import annotations

from .errors import NotYourTurnError, WrongPhaseError
from .state import Event, GameState, Phase


def concede(s: GameState, seat: int) -> None:
    """End the match now with ``seat``'s side losing."""
    if s.phase is Phase.MATCH_OVER:
        raise WrongPhaseError("the match is over")
    if not 0 <= seat < s.config.players:
        raise NotYourTurnError(f"there is no seat {seat} at this table")
    loser = s.config.initial_side(seat)
    s.winners = tuple(column for column in range(len(s.scores)) if column != loser)
    s.phase = Phase.MATCH_OVER
    s.events = (*s.events, Event(seat, "resign", text="resigned"))
