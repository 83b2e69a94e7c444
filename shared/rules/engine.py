"""The rules engine: ``check`` and ``apply`` an action for a seat (RULES.md Part 1).

``apply(state, seat, action)`` returns a new state; the given one is never changed, and a
refused action raises a ``CanastaError`` naming the rule instead. ``check`` is ``apply``
without keeping the result, so the two can never disagree. Each handler below validates and
builds the new position on a private clone of the state.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from .actions import (
    Action,
    Answer,
    AskPartner,
    Discard,
    Draw,
    LayOff,
    Meld,
    Pass,
    TakePile,
)
from .cards import (
    IS_BLACK3,
    IS_RED3,
    IS_WILD,
    RANK,
    SORT_KEY,
    THREE,
    VALUE,
    Card,
    card_text,
    rank_name,
)
from .dealing import lay_out_red_threes, reset_turn
from .errors import IllegalMoveError, NotYourTurnError, WrongPhaseError
from .goingout import can_go_out
from .melds import CANASTA_SIZE, check_meld, meld_rank, wild_count
from .scoring import match_winners, score_hand
from .state import EMPTY_MELDS, EndReason, Event, GameState, Melds, Phase


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
    phase = s.phase
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
        _answer(s, action)
        return
    if isinstance(action, Answer):
        raise WrongPhaseError("nobody has asked you anything", "1.11.2")
    if isinstance(action, AskPartner):
        _ask(s, seat)
    elif phase is Phase.DRAW:
        if isinstance(action, Draw):
            _draw(s, seat)
        elif isinstance(action, TakePile):
            _take_pile(s, seat, action)
        elif isinstance(action, Pass):
            _pass_at_stock_end(s, seat)
        else:
            raise WrongPhaseError(
                "you must draw first: draw from the stock or take the pile", "1.6"
            )
    elif isinstance(action, Meld):
        _meld(s, seat, action)
    elif isinstance(action, LayOff):
        _lay_off(s, seat, action)
    elif isinstance(action, Discard):
        _discard(s, seat, action.card)
    elif isinstance(action, Pass):
        if not s.no_discard:
            raise WrongPhaseError("you cannot pass now: end your turn with a discard", "1.6")
        _end_hand(s, EndReason.RED3_LAST_CARD)
    else:
        raise WrongPhaseError("you have already drawn this turn", "1.6")


# -- drawing -----------------------------------------------------------------------------------


def _draw(s: GameState, seat: int) -> None:
    """§1.6 T1 DRAW_STOCK, with red threes laid out and replaced, and the last-card rules."""
    if not s.stock:
        raise IllegalMoveError(
            "the stock is empty: take the discard pile, or pass to end the hand", "1.12"
        )
    need = s.config.draw_count
    got: list[Card] = []
    threes: list[Card] = []
    while need and s.stock:
        card = s.stock[0]
        s.stock = s.stock[1:]
        if IS_RED3[card]:
            threes.append(card)
            continue
        got.append(card)
        need -= 1
    _give(s, seat, got)
    if threes:
        _add_red3(s, seat, threes)
    s.events = (
        *s.events,
        Event(seat, "draw", tuple(threes), tuple(got)),
    )
    s.drew_from_stock = True
    s.phase = Phase.PLAY
    if threes and not got and not s.stock:  # §1.7: a red three was the last stock card
        if s.config.last_card_red3 == "end_no_play":
            _end_hand(s, EndReason.RED3_LAST_CARD)
        else:
            s.no_discard = True


def _pass_at_stock_end(s: GameState, seat: int) -> None:
    """§1.12: with the stock gone, declining the pile ends the hand unless taking is compulsory."""
    if s.stock:
        raise IllegalMoveError("you may only pass once the stock is empty; draw instead", "1.12")
    forced = _compulsory_take(s, seat)
    if forced is not None:
        raise IllegalMoveError(
            f"the stock is empty and the pile can be added to your side's meld, so you must take "
            f"it (for example: {forced})",
            "1.12",
        )
    _end_hand(s, EndReason.STOCK_OUT_NO_TAKE)


def _compulsory_take(s: GameState, seat: int) -> TakePile | None:
    """A take that the player must make now that the stock is gone, if any (§1.12; D14)."""
    from .legal import pile_takes  # the candidate generator lives with the other helpers

    if s.config.stock_out_forced_take == "layoff_only":
        side = s.side_of[seat]
        if not s.pile or s.pile_frozen or not s.opened(side):
            return None
        if IS_WILD[s.pile[-1]] or IS_BLACK3[s.pile[-1]] or not s.melds[side][RANK[s.pile[-1]]]:
            return None
        candidates: list[TakePile] = [TakePile()]
    else:
        candidates = pile_takes(s, seat)
    for take in candidates:
        trial = s._clone()
        try:
            _take_pile(trial, seat, take)
        except IllegalMoveError:
            continue
        return take
    return None


def _may_take(s: GameState, seat: int) -> bool:
    """Whether the player to move might take the pile once the stock is gone (§1.12).

    Answered with the legal candidates first, then with cheap necessary conditions, so the
    hand ends by itself only when no take is possible; in a doubtful case the player decides
    (take, or pass).
    """
    from .legal import pile_takes, take_ruled_out

    for take in pile_takes(s, seat):
        if is_legal(s, seat, take):
            return True
    return not take_ruled_out(s, seat)


# -- taking the pile ------------------------------------------------------------------------------


class _Plan(NamedTuple):
    """A validated meld, lay-off or pile take, ready to execute.

    Validation never changes the state, so ``check`` can stop after it whenever the
    dead-end guard obviously passes (``hand_left >= 2`` and no obligation to go out).
    """

    side: int
    hand: tuple[Card, ...]
    """The acting hand without the cards put down (before any pile cards join it)."""
    melds: Melds
    """The side's melds after the move."""
    touched: tuple[tuple[int, bool], ...]
    """(rank, meld existed before) for every meld the move adds to or starts."""
    hand_left: int
    """Cards in hand once the move is complete."""
    obliges_out: bool
    """The move can only be made when going out this turn (black threes)."""


def _plan_take(s: GameState, seat: int, action: TakePile) -> _Plan:
    """§1.8.2: every check on taking the pile, in order, without changing anything."""
    config = s.config
    side = s.side_of[seat]
    if not s.pile:
        raise IllegalMoveError("the discard pile is empty: draw from the stock", "1.8.2")
    top = s.pile[-1]
    rank = RANK[top]
    if IS_WILD[top]:
        raise IllegalMoveError(
            f"a wild card ({card_text(top)}) is on top of the pile, so it cannot be taken", "1.8.2"
        )
    black_top = IS_BLACK3[top]
    if black_top and not config.black3_top_takeable_to_go_out:
        raise IllegalMoveError(
            "a black three is on top of the pile, so it cannot be taken this turn", "1.8.2"
        )
    hand = s.hands[seat]
    if config.one_card_pile_rule and len(hand) == 1 and len(s.pile) == 1:
        raise IllegalMoveError(
            "with one card in your hand you may not take a pile of one card", "1.8.2"
        )
    opened = s.opened(side)
    if not opened and config.open_via_pile == "forbidden":
        raise IllegalMoveError(
            "under these rules a side may not open by taking the pile: meld from your hand first",
            "D21",
        )
    support = action.cards
    hand = _remove(hand, support, "to take the pile with")
    naturals = sum(1 for c in support if RANK[c] == rank and not IS_WILD[c] and not IS_RED3[c])
    wilds = sum(1 for c in support if IS_WILD[c])
    if naturals + wilds != len(support):
        raise IllegalMoveError(
            f"the cards you take the pile with must be {rank_name(rank)} or wild cards "
            f"(the top card is {card_text(top)})",
            "1.8.2",
        )
    melds = list(s.melds[side])
    existing = melds[rank]
    frozen_why = _frozen_reason(s, side)
    if frozen_why:
        allowed = naturals >= 2 or (
            config.frozen_allows_layoff and opened and bool(existing) and s.pile_frozen
        )
        if not allowed:
            raise IllegalMoveError(
                f"the pile is frozen ({frozen_why}): to take it you need two natural "
                f"{rank_name(rank)} from your hand to meld with the {card_text(top)}",
                "1.8.2",
            )
    else:
        if naturals >= 2:
            method = "pair"
        elif naturals == 1 and wilds >= 1:
            method = "natural_plus_wild"
        elif existing:
            method = "layoff"
        else:
            raise IllegalMoveError(
                f"to take the pile you need two natural {rank_name(rank)}, one natural "
                f"{rank_name(rank)[:-1]} and a wild card, or a meld of {rank_name(rank)} "
                "to add the top card to",
                "1.8.2",
            )
        if method not in config.unfrozen_take_methods:
            raise IllegalMoveError(
                f"these rules do not allow taking the pile that way ({method.replace('_', ' ')})",
                "D8",
            )
    if rank == THREE and wilds:
        raise IllegalMoveError("black threes may not be melded with wild cards", "1.9")
    if black_top and naturals < 2:
        raise IllegalMoveError(
            "a black three on top may only be taken with two more black threes, to go out",
            "D6",
        )
    merged = (*existing, top, *support)
    check_meld(config, rank, merged, new=not existing, old_wilds=wild_count(existing))
    melds[rank] = merged
    touched = [(rank, bool(existing))]
    extra = _group_melds(action.melds)
    if extra:
        hand = _remove(hand, [c for g in action.melds for c in g], "to meld")
    if not opened:
        value = VALUE[top] + sum(VALUE[c] for c in support)
        value += sum(VALUE[c] for g in extra.values() for c in g)
        _require_minimum(s, seat, value, with_pile=True)
    for r, cards in extra.items():
        if r == THREE:
            _check_black_threes(s, cards, len(melds[THREE]))
        check_meld(config, r, (*melds[r], *cards), new=not melds[r], old_wilds=wild_count(melds[r]))
        touched.append((r, bool(melds[r]) and r != rank))
        melds[r] = (*melds[r], *cards)
    taken = sum(1 for c in s.pile[:-1] if not IS_RED3[c])
    return _Plan(
        side, hand, tuple(melds), tuple(touched), len(hand) + taken, black_top or THREE in extra
    )


def _take_pile(s: GameState, seat: int, action: TakePile) -> None:
    """§1.6 T1 TAKE_PILE: validate (§1.8.2), then meld the top card, take the rest."""
    plan = _plan_take(s, seat, action)
    _put_down(s, plan)
    rest = s.pile[:-1]
    threes = [c for c in rest if IS_RED3[c]]
    _set_hand(s, seat, plan.hand)
    _give(s, seat, [c for c in rest if not IS_RED3[c]])
    if threes:
        _add_red3(s, seat, threes)
    s.events = (
        *s.events,
        Event(
            seat, "take", (s.pile[-1], *action.cards, *rest), text=f"{len(action.cards)} from hand"
        ),
    )
    s.pile = ()
    s.pile_frozen = False
    s.phase = Phase.PLAY
    if plan.obliges_out:
        s.must_go_out = True
    if s.config.cutthroat and s.lone_seat is None:
        _form_cutthroat_sides(s, seat)
    _after_put_down(s, seat)


def _frozen_reason(s: GameState, side: int) -> str:
    """Why the pile is frozen for ``side`` (§1.8.1), or ``""`` when it is not."""
    if s.pile_frozen:
        if any(IS_WILD[c] for c in s.pile):
            return "it holds a wild card"
        if any(IS_RED3[c] for c in s.pile):
            return "a red three was turned up to start it"
        return "it holds a black three"
    if not s.opened(side):
        return "your side has not made its first meld yet"
    return ""


# -- melding -------------------------------------------------------------------------------------


def _group_melds(groups: Sequence[Sequence[Card]]) -> dict[int, tuple[Card, ...]]:
    """Sort meld groups by rank, joining groups of one rank (one meld per rank, §1.9)."""
    by_rank: dict[int, tuple[Card, ...]] = {}
    for group in groups:
        if not group:
            raise IllegalMoveError("a meld needs cards", "1.9")
        rank = meld_rank(group)
        by_rank[rank] = (*by_rank.get(rank, ()), *group)
    return by_rank


def _plan_meld(s: GameState, seat: int, action: Meld) -> _Plan:
    """§1.9, §1.10: validate new melds (or cards joining melds of their rank)."""
    config = s.config
    side = s.side_of[seat]
    if not action.melds:
        raise IllegalMoveError("name the cards to meld, for example: meld 7h 7c 2s", "1.9")
    hand = _remove(s.hands[seat], [c for g in action.melds for c in g], "to meld")
    by_rank = _group_melds(action.melds)
    melds = list(s.melds[side])
    for rank, cards in by_rank.items():
        if rank == THREE:
            _check_black_threes(s, cards, len(melds[THREE]))
        old = melds[rank]
        check_meld(config, rank, (*old, *cards), new=not old, old_wilds=wild_count(old))
    if not s.opened(side):
        if config.open_via_pile == "required":
            raise IllegalMoveError(
                "under these rules a side opens only by taking the discard pile", "D21"
            )
        value = sum(VALUE[c] for g in by_rank.values() for c in g)
        if not _exempt_concealed(s, hand, by_rank):
            _require_minimum(s, seat, value, with_pile=False)
    touched = tuple((rank, bool(melds[rank])) for rank in by_rank)
    for rank, cards in by_rank.items():
        melds[rank] = (*melds[rank], *cards)
    return _Plan(side, hand, tuple(melds), touched, len(hand), THREE in by_rank and bool(hand))


def _meld(s: GameState, seat: int, action: Meld) -> None:
    """§1.6 T2 MELD."""
    plan = _plan_meld(s, seat, action)
    _put_down(s, plan)
    _set_hand(s, seat, plan.hand)
    s.turn_melded = True
    cards_down = tuple(c for g in action.melds for c in g)
    s.events = (*s.events, Event(seat, "meld", cards_down))
    if plan.obliges_out:
        s.must_go_out = True
    _after_put_down(s, seat)


def _plan_lay_off(s: GameState, seat: int, action: LayOff) -> _Plan:
    """§1.6 T2 LAY_OFF: naturals of the meld's rank and/or wild cards onto a side meld."""
    side = s.side_of[seat]
    rank = action.rank
    if not THREE <= rank <= 12:
        raise IllegalMoveError("name the rank of the meld to lay off to, for example: lay 9 9d")
    if not action.cards:
        raise IllegalMoveError("name the cards to lay off, for example: lay 9 9d 2c", "1.6")
    existing = s.melds[side][rank]
    if not existing:
        raise IllegalMoveError(f"your side has no meld of {rank_name(rank)} to add to", "1.6")
    hand = _remove(s.hands[seat], action.cards, "to lay off")
    for card in action.cards:
        fits = RANK[card] == rank and not IS_RED3[card]
        if rank != THREE and IS_WILD[card]:
            fits = True
        if not fits:
            raise IllegalMoveError(
                f"{card_text(card)} does not fit a meld of {rank_name(rank)}", "1.9"
            )
    merged = (*existing, *action.cards)
    check_meld(s.config, rank, merged, new=False, old_wilds=wild_count(existing))
    melds = list(s.melds[side])
    melds[rank] = merged
    return _Plan(side, hand, tuple(melds), ((rank, True),), len(hand), False)


def _lay_off(s: GameState, seat: int, action: LayOff) -> None:
    """§1.6 T2 LAY_OFF."""
    plan = _plan_lay_off(s, seat, action)
    _put_down(s, plan)
    _set_hand(s, seat, plan.hand)
    s.turn_melded = True
    s.events = (*s.events, Event(seat, "layoff", action.cards))
    _after_put_down(s, seat)


def _put_down(s: GameState, plan: _Plan) -> None:
    """Place a validated plan's melds, tracking what this turn put down (§1.11.4)."""
    _set_melds(s, plan.side, plan.melds)
    s.turn_put_down = True
    for rank, existed in plan.touched:
        bit = 1 << rank
        if not existed:
            s.turn_new_ranks |= bit
        elif not s.turn_new_ranks & bit:
            s.touched_old_meld = True


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
            plan = _plan_lay_off(s, seat, action)  # type: ignore[arg-type]
        elif kind is Meld:
            plan = _plan_meld(s, seat, action)  # type: ignore[arg-type]
        else:
            return False
    elif s.phase is Phase.DRAW and kind is TakePile:
        plan = _plan_take(s, seat, action)  # type: ignore[arg-type]
    else:
        return False
    return plan.hand_left >= 2 and not plan.obliges_out


def _check_black_threes(s: GameState, cards: Sequence[Card], already: int) -> None:
    """Black threes meld only as three or more, in the turn the player goes out (§1.9)."""
    if already == 0 and len(cards) < 3:
        raise IllegalMoveError("black threes can only be melded three or four together", "1.9")
    if s.permission == "no":
        raise IllegalMoveError(
            "black threes are melded only when going out, and your partner said no", "1.9"
        )


def _exempt_concealed(
    s: GameState, hand_after: tuple[Card, ...], by_rank: dict[int, tuple[Card, ...]]
) -> bool:
    """§1.10 rule 6 (D10): going out concealed after a stock draw needs no minimum."""
    config = s.config
    if not config.concealed_min_exempt or not s.drew_from_stock or s.permission == "no":
        return False
    if len(hand_after) > 1 or (s.no_discard and hand_after):
        return False
    canastas = sum(1 for cards in by_rank.values() if len(cards) >= CANASTA_SIZE)
    return canastas >= config.canastas_to_go_out


def _require_minimum(s: GameState, seat: int, value: int, *, with_pile: bool) -> None:
    """§1.10: the first meld of a side must reach the minimum for its cumulative score."""
    minimum = s.config.initial_minimum(s.scores[s.column_of(seat)])
    counted = value
    if s.config.red3_counts_toward_minimum:
        counted += s.config.red3_value * sum(len(s.red3[x]) for x in s.side_seats(s.side_of[seat]))
    if counted < minimum:
        what = "the top card and the cards you meld with it" if with_pile else "your melds"
        raise IllegalMoveError(
            f"your side's first meld must be worth at least {minimum} points; "
            f"{what} are worth {counted}",
            "1.10",
        )


# -- the dead-end guard, going out ---------------------------------------------------------------


def _after_put_down(s: GameState, seat: int) -> None:
    """§1.11.3: refuse a play that leaves no legal way to finish the turn; go out on empty."""
    hand = s.hands[seat]
    side = s.side_of[seat]
    may_go_out = s.canastas(side) >= s.config.canastas_to_go_out and s.permission != "no"
    if not hand:
        if not may_go_out:
            raise IllegalMoveError(_no_going_out_reason(s, side), "1.11.1")
        _go_out(s, seat)
        return
    if s.no_discard:
        return  # the turn ends with a pass, not a discard (D13 option)
    if (
        len(hand) == 1
        and not may_go_out
        and (
            s.permission == "no"
            or not can_go_out(s.config, hand, s.melds[side], allow_discard=False)
        )
    ):
        raise IllegalMoveError(
            "that would leave you one card, and discarding it would take you out, which "
            + _no_going_out_reason(s, side)[len("you cannot go out: ") :],
            "1.11.3",
        )
    if s.must_go_out and not can_go_out(
        s.config, hand, s.melds[side], allow_discard=not s.no_discard
    ):
        raise IllegalMoveError(
            "you must go out this turn, and after that play you could not", "1.11.2"
        )


def _no_going_out_reason(s: GameState, side: int) -> str:
    if s.permission == "no":
        return "you cannot go out: your partner said no this turn"
    need = s.config.canastas_to_go_out
    return (
        f"you cannot go out: your side needs {need} canasta{'s' if need > 1 else ''} "
        f"and has {s.canastas(side)}"
    )


def _discard(s: GameState, seat: int, card: Card) -> None:
    """§1.6 T3 DISCARD; an empty hand afterwards means going out (§1.11.1)."""
    if s.no_discard:
        raise IllegalMoveError(
            "you drew a red three as the last card of the stock: you may meld but not "
            "discard; pass to end the hand",
            "1.6",
        )
    hand = _remove(s.hands[seat], (card,), "to discard")
    check_discard_allowed(s, seat)
    _set_hand(s, seat, hand)
    s.pile = (*s.pile, card)
    if IS_WILD[card] or (IS_BLACK3[card] and s.config.black3_freezes):
        s.pile_frozen = True
    s.events = (*s.events, Event(seat, "discard", (card,)))
    if not hand:
        _go_out(s, seat)
        return
    _next_turn(s)


def check_discard_allowed(s: GameState, seat: int) -> None:
    """The rules on discarding that do not depend on which card (§1.11): the last card only
    when going out is allowed, and no discard that keeps cards when one must go out."""
    side = s.side_of[seat]
    if len(s.hands[seat]) == 1:
        if s.permission == "no" or s.canastas(side) < s.config.canastas_to_go_out:
            raise IllegalMoveError(_no_going_out_reason(s, side), "1.11.1")
    elif s.must_go_out and can_go_out(s.config, s.hands[seat], s.melds[side]):
        raise IllegalMoveError(
            "you must go out this turn (your partner said yes, or you melded black threes)",
            "1.11.2",
        )


def _go_out(s: GameState, seat: int) -> None:
    concealed = (
        not s.melded_seats[seat]
        and not s.touched_old_meld
        and (
            not s.config.concealed_requires_own_canasta
            or any(
                len(m) >= CANASTA_SIZE and s.turn_new_ranks & (1 << r)
                for r, m in enumerate(s.melds[s.side_of[seat]])
            )
        )
    )
    if s.config.cutthroat and s.lone_seat is None:
        _form_cutthroat_sides(s, seat)
    s.events = (
        *s.events,
        Event(seat, "out", text="went out concealed" if concealed else "went out"),
    )
    _end_hand(s, EndReason.WENT_OUT, seat, concealed)


# -- asking partner --------------------------------------------------------------------------------


def _ask(s: GameState, seat: int) -> None:
    """§1.11.2: ask partner, who must answer before the turn goes on."""
    check_ask_allowed(s, seat)
    s.asked = True
    s.asks = tuple(n + 1 if i == seat else n for i, n in enumerate(s.asks))
    s.answer_phase = s.phase
    s.phase = Phase.ANSWER
    s.events = (*s.events, Event(seat, "ask", text="asked: may I go out?"))


def check_ask_allowed(s: GameState, seat: int) -> None:
    """§1.11.2: once per turn, after the draw and before the first meld (D22), and only when
    either answer can be obeyed [engine policy]: going out must be possible (for a "yes")
    and at least two cards must be in hand, so that one can be discarded and one kept (for
    a "no")."""
    config = s.config
    if not config.has_partners:
        raise IllegalMoveError("there is no partner to ask in this form of the game", "1.11.2")
    if s.phase is Phase.DRAW and config.ask_timing != "before_or_after_draw":
        raise WrongPhaseError("ask your partner after you draw, before you meld", "1.11.2")
    if s.asked:
        raise IllegalMoveError("you have already asked your partner this turn", "1.11.2")
    if s.must_go_out:
        raise IllegalMoveError(
            "you must go out this turn anyway (you melded black threes), so there is nothing "
            "to ask",
            "1.11.2",
        )
    if s.turn_melded:
        raise IllegalMoveError("ask your partner before you meld or lay off this turn", "1.11.2")
    limit = config.ask_limit_per_hand
    if limit is not None and s.asks[seat] >= limit:
        raise IllegalMoveError("you may not ask your partner again this hand", "D22")
    if len(s.hands[seat]) < 2:
        raise IllegalMoveError(
            "with one card in hand you could not obey a 'no' (discarding it would take you "
            "out), so you may not ask; go out or play on",
            "1.11.3",
        )
    side = s.side_of[seat]
    minimum = None
    if not s.opened(side) and not (config.concealed_min_exempt and s.drew_from_stock):
        minimum = config.initial_minimum(s.scores[s.column_of(seat)])
    if not can_go_out(config, s.hands[seat], s.melds[side], minimum=minimum):
        raise IllegalMoveError(
            "you could not go out this turn, so there is nothing to ask", "1.11.2"
        )


def _answer(s: GameState, action: Answer) -> None:
    s.permission = "yes" if action.yes else "no"
    s.must_go_out = s.must_go_out or action.yes
    s.phase = s.answer_phase
    answerer = s.config.partner_to_ask(s.turn)
    s.events = (*s.events, Event(answerer, "answer", text=str(action)))


# -- turn and hand ends -------------------------------------------------------------------------


def _next_turn(s: GameState) -> None:
    """Pass the turn clockwise and run the turn-start rules (§1.6 T0, §1.12)."""
    if s.turn_put_down:
        s.melded_seats = tuple(True if i == s.turn else m for i, m in enumerate(s.melded_seats))
    s.turn = (s.turn + 1) % s.config.players
    s.phase = Phase.DRAW
    reset_turn(s)
    if s.pending_red3[s.turn]:
        lay_out_red_threes(s, s.turn)
    if s.stock:
        return
    if s.config.stock_out_rule == "end_after_last_discard":
        _end_hand(s, EndReason.STOCK_EXHAUSTED)
    elif not _may_take(s, s.turn):
        _end_hand(s, EndReason.STOCK_OUT_NO_TAKE)


def _end_hand(
    s: GameState, reason: EndReason, went_out: int | None = None, concealed: bool = False
) -> None:
    """Score the hand (§1.13), then end the match or wait for the next deal (§1.14)."""
    for seat in range(s.config.players):
        if any(IS_RED3[c] for c in s.hands[seat]):  # first_turn option: still in hand
            threes = [c for c in s.hands[seat] if IS_RED3[c]]
            _set_hand(s, seat, tuple(c for c in s.hands[seat] if not IS_RED3[c]))
            _add_red3(s, seat, threes)
    result = score_hand(s, reason, went_out, concealed)
    s.last_hand = result
    s.scores = tuple(col.cumulative for col in result.columns)
    s.events = (
        *s.events,
        Event(went_out if went_out is not None else s.turn, "end", text=reason.value),
    )
    winners = match_winners(s.scores, s.target)
    policy = s.config.tie_policy
    if len(winners) == 1 or (winners and policy == "draw"):
        s.winners = winners
        s.phase = Phase.MATCH_OVER
        return
    if winners and policy == "raise_target_500":
        s.target += 500
    s.phase = Phase.DEAL
    s.dealer = (s.dealer + 1) % s.config.players


def _form_cutthroat_sides(s: GameState, lone: int) -> None:
    """§3.2 cutthroat: ``lone`` plays alone; the other two join their melds as partners."""
    s.lone_seat = lone
    first, second = (x for x in range(3) if x != lone)
    a, b = s.side_of[first], s.side_of[second]
    melds = list(s.melds)
    joined = [(*x, *y) for x, y in zip(melds[a], melds[b], strict=True)]
    melds[a] = tuple(joined)
    melds[b] = EMPTY_MELDS
    s.melds = tuple(melds)
    s.side_of = tuple(a if x in (first, second) else s.side_of[x] for x in range(3))


# -- small state edits ---------------------------------------------------------------------------


def _remove(hand: tuple[Card, ...], cards: Sequence[Card], purpose: str) -> tuple[Card, ...]:
    """``hand`` without ``cards``; a card the player does not hold is refused."""
    rest = list(hand)
    for card in cards:
        if not 0 <= card < 53:
            raise IllegalMoveError(f"{card!r} is not a card")
        try:
            rest.remove(card)
        except ValueError:
            held = hand.count(card)
            raise IllegalMoveError(
                f"you do not hold {'another' if held else 'the'} {card_text(card)} {purpose}"
            ) from None
    return tuple(rest)


def _set_hand(s: GameState, seat: int, hand: tuple[Card, ...]) -> None:
    hands = list(s.hands)
    hands[seat] = hand
    s.hands = tuple(hands)


def _give(s: GameState, seat: int, cards: Sequence[Card]) -> None:
    if cards:
        _set_hand(s, seat, tuple(sorted((*s.hands[seat], *cards), key=SORT_KEY.__getitem__)))


def _add_red3(s: GameState, seat: int, threes: Sequence[Card]) -> None:
    red3 = list(s.red3)
    red3[seat] = (*red3[seat], *threes)
    s.red3 = tuple(red3)


def _set_melds(s: GameState, side: int, melds: Melds) -> None:
    all_melds = list(s.melds)
    all_melds[side] = melds
    s.melds = tuple(all_melds)


__all__ = ["apply", "apply_turn", "check", "is_legal"]
