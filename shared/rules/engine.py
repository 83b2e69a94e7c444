"""The rules engine's entry points: ``check`` and ``apply`` an action for a seat (docs/rules.md §1).

``apply(state, seat, action)`` returns a new state; the given one is never changed, and a
refused action raises a ``CanastaError`` naming the rule instead. ``check`` is ``apply``
without keeping the result, so the two can never disagree. Every move is made on a private
clone of the state.

``apply_listed`` is ``apply`` for a move the engine itself found legal (listed by
``legal_actions``, or accepted by ``check`` as the bot's choices are): random play, the
bot's playouts and the benches apply every move they list, and checking it again costs as
much as the listing did. It runs the same dispatch and the same executing code, told that
the move was listed (``listed=True``), so each rule module skips its costly checks (the
plan validations, the dead-end guard's going-out search) but never executes differently.

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


def apply_listed(state: GameState, seat: int, action: Action) -> GameState:
    """The state after ``seat`` plays ``action``, an action ``legal_actions(state, seat)``
    listed (or one ``check`` accepted in ``state``): the very state ``apply`` returns, made
    without checking the move again.

    Skipped are the checks a listed move has passed already: the validation of a meld,
    lay-off or pile take, the dead-end guard's going-out search (§1.11.3), whether a discard
    or a question to partner is allowed (§1.11.1, §1.11.2) and the compulsory take at the
    stock's end (§1.12). Passing an action that was not listed is the caller's mistake, and
    this function does not detect it: the cheap checks that also keep the position whole
    (whose turn and phase it is, the cards named being held, going out only when the side
    may) still raise as in ``apply``, but a move that only a skipped rule refuses is made.
    Whatever comes from a player goes through ``apply``.
    """
    s = state._clone()
    _dispatch(s, seat, action, listed=True)
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


def _dispatch(s: GameState, seat: int, action: Action, listed: bool = False) -> None:
    """Refuse an action of the wrong seat or phase (§1.4, §1.6), else hand it to its rule
    (``listed``: the action was listed as legal here, so the rule skips its costly checks)."""
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
        ask(s, seat, listed)
    elif phase is Phase.DRAW:
        if isinstance(action, Draw):
            draw(s, seat)
        elif isinstance(action, TakePile):
            take_pile(s, seat, action, listed)
        elif isinstance(action, Pass):
            pass_at_stock_end(s, seat, listed)
        else:
            raise WrongPhaseError(
                "you must draw first: draw from the stock or take the pile", "1.6"
            )
    elif isinstance(action, Meld):
        meld(s, seat, action, listed)
    elif isinstance(action, LayOff):
        lay_off(s, seat, action, listed)
    elif isinstance(action, Discard):
        _discard(s, seat, action.card, listed)
    elif isinstance(action, Combine):
        combine(s, seat, action, listed)
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


def _discard(s: GameState, seat: int, card: Card, listed: bool = False) -> None:
    """§1.6 T3 DISCARD; an empty hand afterwards means going out (§1.11.1), unless the
    ruleset holds cards in reserve for the seat (Hand and Foot's foot, §3.8a). A ``listed``
    discard skips the question whether one obliged to go out could still do so (a search)
    and the ruleset's limit on which card, but not the cheap rule on the last card."""
    if s.no_discard:
        raise IllegalMoveError(
            "you drew a red three as the last card of the stock: you may meld but not "
            "discard; pass to end the hand",
            "1.6",
        )
    hand = remove_cards(s.hands[seat], (card,), "to discard")
    check_discard_allowed(s, seat, search=not listed)
    ruleset = rules(s)
    if not listed:
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


__all__ = ["apply", "apply_listed", "apply_turn", "check", "is_legal"]
