"""The rules engine's entry points: ``check`` and ``apply`` an action for a seat (docs/rules.md §1).

``apply(state, seat, action)`` returns a new state; the given one is never changed, and a
refused action raises a ``CanastaError`` naming the rule instead. ``check`` is ``apply``
without keeping the result, so the two can never disagree. Every move is made on a private
clone of the state.

This module holds only the entry points, the dispatch by phase and action kind (§1.4, §1.6),
and the turn sequence: the discard that ends a turn (§1.6 T3) and the start of the next one
(§1.6 T0). Each rule family has its own module; the package docstring (``shared.rules``)
maps every rule to its module.
"""

from __future__ import annotations

from collections.abc import Sequence

from .actions import (
    Action,
    Answer,
    AskPartner,
    Combine,
    Discard,
    Draw,
    LayOff,
    Meld,
    Pass,
    Resign,
    TakePile,
)
from .cards import Card
from .concede import concede
from .dealing import reset_turn
from .edits import remove_cards, set_hand
from .errors import IllegalMoveError, NotYourTurnError, WrongPhaseError
from .goingout import answer, ask, check_discard_allowed, go_out
from .melding import combine, lay_off, meld, plan_lay_off, plan_meld
from .pile import discard_freezes, plan_take, take_pile
from .ruleset import rules
from .scoring import end_hand
from .state import EndReason, Event, GameState, Phase
from .stock import draw, pass_at_stock_end, start_turn_without_stock
from .threes import lay_out_red_threes


def apply(state: GameState, seat: int, action: Action) -> GameState:
    """The state after ``seat`` plays ``action``; raises ``CanastaError`` if it is refused."""
    s = state._clone()
    _dispatch(s, seat, action)
    return s


def check(state: GameState, seat: int, action: Action) -> None:
    """Raise the precise ``CanastaError`` if ``seat`` may not play ``action`` now."""
    if not _quick_check(state, seat, action):
        _dispatch(state._clone(), seat, action)


def is_legal(state: GameState, seat: int, action: Action) -> bool:
    """``check`` as a yes/no question: whether ``seat`` may play ``action`` now."""
    try:
        check(state, seat, action)
    except IllegalMoveError:
        return False
    return True


def apply_turn(state: GameState, seat: int, actions: Sequence[Action]) -> GameState:
    """Apply several actions of one seat atomically: all of them, or none (DESIGN.md).

    Consecutive ``Meld`` actions are joined into one, so "meld a; meld b" may open together.
    A refused step raises its error with the step number and action prepended.
    """
    joined: list[Action] = []
    for action in actions:
        if isinstance(action, Meld) and joined and isinstance(joined[-1], Meld):
            joined[-1] = Meld(joined[-1].melds + action.melds)
        else:
            joined.append(action)
    s = state._clone()
    for number, action in enumerate(joined, 1):
        try:
            _dispatch(s, seat, action)
        except IllegalMoveError as exc:
            if len(joined) > 1:
                exc.message = f"step {number} ({action}): {exc.message}"
                exc.args = (exc.message,)
            raise
    return s


# -- dispatch ----------------------------------------------------------------------------------


def _dispatch(s: GameState, seat: int, action: Action) -> None:
    """Refuse an action of the wrong seat or phase (§1.4, §1.6), else hand it to its rule."""
    phase = s.phase
    if isinstance(action, Resign):  # any seat, any time before the end
        concede(s, seat)
        return
    if phase is Phase.MATCH_OVER:
        raise WrongPhaseError("the match is over")
    if phase is Phase.DEAL:
        raise WrongPhaseError("the hand is over; the next hand has not been dealt yet")
    if not 0 <= seat < s.config.players:
        raise NotYourTurnError(f"there is no seat {seat} at this table")
    actor = s.actor()
    if seat != actor:
        if phase is Phase.ANSWER:
            raise NotYourTurnError(f"seat {actor} must first answer seat {s.turn}'s question")
        raise NotYourTurnError(f"it is not your turn: seat {actor} is to play")
    if phase is Phase.ANSWER:
        if not isinstance(action, Answer):
            raise WrongPhaseError(
                f"seat {s.turn} asked whether they may go out: answer yes or no", "1.11.2"
            )
        answer(s, action)
        return
    if isinstance(action, Answer):
        raise WrongPhaseError("nobody has asked you anything", "1.11.2")
    if isinstance(action, AskPartner):
        ask(s, seat)
    elif phase is Phase.DRAW:
        if isinstance(action, Draw):
            draw(s, seat)
        elif isinstance(action, TakePile):
            take_pile(s, seat, action)
        elif isinstance(action, Pass):
            pass_at_stock_end(s, seat)
        else:
            raise WrongPhaseError(
                "you must draw first: draw from the stock or take the pile", "1.6"
            )
    elif isinstance(action, Meld):
        meld(s, seat, action)
    elif isinstance(action, LayOff):
        lay_off(s, seat, action)
    elif isinstance(action, Discard):
        _discard(s, seat, action.card)
    elif isinstance(action, Combine):
        combine(s, seat, action)
    elif isinstance(action, Pass):
        if not s.no_discard:
            raise WrongPhaseError("you cannot pass now: end your turn with a discard", "1.6")
        end_hand(s, EndReason.RED3_LAST_CARD)  # a red three was the last stock card (D13)
    else:
        raise WrongPhaseError("you have already drawn this turn", "1.6")


def _quick_check(s: GameState, seat: int, action: Action) -> bool:
    """Validate a meld, lay-off or take without executing it, when that suffices.

    Returns True when the action is legal (validation passed and the dead-end guard
    cannot object: two or more cards stay in hand and nothing obliges going out); raises
    the rule's error when validation fails; returns False when only a full trial can tell.
    """
    if s.must_go_out or s.no_discard or s.turn != seat:
        return False
    kind = type(action)
    if s.phase is Phase.PLAY:
        if kind is LayOff:
            plan = plan_lay_off(s, seat, action)  # type: ignore[arg-type]
        elif kind is Meld:
            plan = plan_meld(s, seat, action)  # type: ignore[arg-type]
        else:
            return False
    elif s.phase is Phase.DRAW and kind is TakePile:
        plan = plan_take(s, seat, action)  # type: ignore[arg-type]
    else:
        return False
    return plan.hand_left >= 2 and not plan.obliges_out


# -- the turn sequence -------------------------------------------------------------------------


def _discard(s: GameState, seat: int, card: Card) -> None:
    """§1.6 T3 DISCARD; an empty hand afterwards means going out (§1.11.1), unless the
    ruleset holds cards in reserve for the seat (Hand and Foot's foot, §3.8a)."""
    if s.no_discard:
        raise IllegalMoveError(
            "you drew a red three as the last card of the stock: you may meld but not "
            "discard; pass to end the hand",
            "1.6",
        )
    hand = remove_cards(s.hands[seat], (card,), "to discard")
    check_discard_allowed(s, seat)
    ruleset = rules(s)
    ruleset.check_discard(s, seat, card)
    set_hand(s, seat, hand)
    s.pile = (*s.pile, card)
    if discard_freezes(s.config, card):
        s.pile_frozen = True
    s.events = (*s.events, Event(seat, "discard", (card,)))
    if not hand:
        if not ruleset.holds_reserve(s, seat):
            go_out(s, seat)
            return
        ruleset.take_up_reserve(s, seat)
    _next_turn(s)


def _next_turn(s: GameState) -> None:
    """Pass the turn clockwise and run the turn-start rules (§1.6 T0, §1.12)."""
    if s.turn_put_down:
        s.melded_seats = tuple(True if i == s.turn else m for i, m in enumerate(s.melded_seats))
    s.turn = (s.turn + 1) % s.config.players
    s.phase = Phase.DRAW
    reset_turn(s)
    if s.pending_red3[s.turn]:
        lay_out_red_threes(s, s.turn)
    rules(s).start_turn(s, s.turn)
    if not s.stock:
        start_turn_without_stock(s)


__all__ = ["apply", "apply_turn", "check", "is_legal"]
