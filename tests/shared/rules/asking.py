"""Asking partner as the going-out searches' tests use it: the engine's own answer to
"may I go out?" (§1.11.2), which it gives only when the search finds a way out."""

from __future__ import annotations

from shared import rules
from shared.rules import GameState
from shared.rules.actions import AskPartner
from shared.rules.errors import IllegalMoveError


def may_ask(state: GameState) -> bool:
    """Whether seat 0 may ask partner now; a refusal must be for want of a way out."""
    try:
        rules.apply(state, 0, AskPartner())
    except IllegalMoveError as error:
        refusal = str(error)
    else:
        return True
    assert "could not go out" in refusal, refusal
    return False
