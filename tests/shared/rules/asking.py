"""What the going-out searches' tests compare with: the engine's own answer to "may I go
out?" (§1.11.2), which it gives only when the search finds a way out, and a brute force over
the engine's own moves."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from shared import rules
from shared.rules import GameState
from shared.rules.actions import AskPartner, Discard
from shared.rules.errors import CanastaError, IllegalMoveError
from shared.rules.state import EndReason


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


def engine_goes_out(
    state: GameState,
    seat: int,
    seen: dict[object, bool],
    key: Callable[[GameState, int], object],
    moves: Callable[[GameState, int], Iterable[object]],
) -> bool:
    """Whether some sequence of ``moves`` the engine accepts, perhaps ending with a
    discard, takes ``seat`` out this turn: exhaustive, memoised in ``seen`` on ``key`` (what
    of the position can change within the turn)."""
    position = key(state, seat)
    if position in seen:
        return seen[position]
    seen[position] = False
    for move in moves(state, seat):
        try:
            after = rules.apply(state, seat, move)  # type: ignore[arg-type]
        except CanastaError:
            continue
        if after.last_hand is not None and after.last_hand.reason is EndReason.WENT_OUT:
            seen[position] = True
            return True
        if not isinstance(move, Discard) and engine_goes_out(after, seat, seen, key, moves):
            seen[position] = True
            return True
    return False
