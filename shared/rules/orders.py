"""Standing orders: what a seat asked in advance to have done for it (docs/playing.md,
"Standing orders"), decided here so that no rule of the game lives in the server.

A correspondence player who cannot take the pile has one way to begin a turn, drawing, and
must otherwise send ``draw``, wait for the card and write again. A standing order lets the
server make such a move for them at once. An order never makes a choice the player had:

* ``draw``: draw for the seat at the start of its turn when taking the pile is certainly
  impossible (``pile.take_ruled_out``, the same necessary conditions the engine trusts at the
  end of the stock, §1.12) and the listed moves are exactly one draw (§1.6 T1), so no take,
  pass or other start of the turn was open to it;
* ``answer``: answer partner's "may I go out?" (§1.11.2) with the ``yes`` or ``no`` the
  player gave in advance: the one question they answered before it was asked.

Anywhere else an order does nothing and the player is asked as always.
"""

from __future__ import annotations

from .actions import DRAW, NO, YES, Action, Draw
from .legal import legal_actions
from .pile import take_ruled_out
from .state import GameState, Phase

ANSWERS = ("", "yes", "no")
"""A seat's answer order: ``""`` asks the player, else the answer given in advance."""


def standing_action(state: GameState, seat: int, *, draw: bool, answer: str) -> Action | None:
    """The move ``seat``'s standing orders make now, or ``None`` if they make none here."""
    if state.actor() != seat:
        return None
    if state.phase is Phase.DRAW:
        if not draw or not take_ruled_out(state, seat):
            return None
        listed = legal_actions(state, seat)
        return DRAW if len(listed) == 1 and isinstance(listed[0], Draw) else None
    if state.phase is Phase.ANSWER and answer in ("yes", "no"):
        return YES if answer == "yes" else NO
    return None
