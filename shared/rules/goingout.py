"""Going out: when a player may, asking partner, and the search behind both (RULES.md §1.11).

A player goes out by emptying the hand, melding every card or discarding the last one, and
only once the side has the canastas ``canastas_to_go_out`` asks for and partner has not said
no (§1.11.1). Going out concealed earns the larger bonus (§1.11.4). A player of a
partnership may ask partner "may I go out?", once per turn, and the answer binds (§1.11.2,
D22). The dead-end guard (§1.11.3, an engine policy) refuses any meld, lay-off or take after
which the turn could not end legally, so a player is never stuck.

``can_go_out`` is the feasibility search behind three of these rules: asking partner is
allowed only when going out is possible (so a "yes" never creates an impossible obligation),
a player obliged to go out may not make a play that rules it out, and a black-three meld is
legal only in a going-out turn. The search is exact and small: one optional discard is set
aside, every other card must be placed. Naturals of a rank join the side's meld of that rank
or form a new meld (two or more naturals); black threes form one meld of three or more; wild
cards are spread over the melds within the wild limit; and enough melds must reach seven
cards for the canastas required. Samba and Bolivia search their own melds too (sequences,
several melds of a rank, wild melds, the escalera: ``sambaout``); Modern American and Hand
and Foot have their own searches.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from .actions import Answer
from .american import can_go_out as american_can_go_out
from .american import unfinished_special
from .cards import (
    ACE,
    FOUR,
    IS_BLACK3,
    IS_WILD,
    JOKER_RANK,
    NATURAL_RANKS,
    RANK,
    THREE,
    TWO,
    VALUE,
    Card,
)
from .config import RuleConfig
from .cutthroat import form_cutthroat_sides
from .edits import EXTRA_BIT
from .errors import IllegalMoveError, WrongPhaseError
from .handfoot import books_missing, foot_can_go_out, foot_waiting, pick_up_foot
from .melds import CANASTA_SIZE
from .opening import minimum_to_go_out
from .samba import side_canastas
from .sambaout import useful_discards, variant_can_go_out
from .scoring import end_hand
from .state import EndReason, Event, Extra, GameState, Melds, Phase, out_forbidden

# -- going out (§1.11.1, §1.11.4) -----------------------------------------------------------------


def check_discard_allowed(s: GameState, seat: int) -> None:
    """The rules on discarding that do not depend on which card (§1.11): the last card only
    when going out is allowed, and no discard that keeps cards when one must go out."""
    side = s.side_of[seat]
    if s.feet and foot_waiting(s, seat):  # (``s.feet`` first: no call on classic's hot path)
        return  # Hand and Foot: the last card of the hand brings up the foot (§3.8a)
    if len(s.hands[seat]) == 1:
        if out_forbidden(s) or not enough_canastas(s, side):
            raise IllegalMoveError(_no_going_out_reason(s, side), "1.11.1")
    elif s.must_go_out and _can_go_out(s, seat, s.hands[seat]):
        raise IllegalMoveError(
            "you must go out this turn (your partner said yes, or you melded black threes)",
            "1.11.2",
        )


def go_out(s: GameState, seat: int) -> None:
    """The hand is empty: end the hand, concealed if this turn melded the whole hand (§1.11.4).

    Concealed means no meld or lay-off in an earlier turn of this hand, none onto a meld the
    side had before this turn, and (D11) a canasta among the melds started this turn.
    """
    concealed = (
        not s.melded_seats[seat]
        and not s.touched_old_meld
        and (
            not s.config.concealed_requires_own_canasta
            or any(
                len(m) >= CANASTA_SIZE and s.turn_new_ranks & (1 << r)
                for r, m in enumerate(s.melds[s.side_of[seat]])
            )
            or any(
                len(m) >= CANASTA_SIZE and s.turn_new_ranks & (1 << (EXTRA_BIT + i))
                for i, m in enumerate(s.extra_of(s.side_of[seat]))
            )
        )
    )
    if s.config.cutthroat and s.lone_seat is None:
        form_cutthroat_sides(s, seat)
    s.events = (
        *s.events,
        Event(seat, "out", text="went out concealed" if concealed else "went out"),
    )
    end_hand(s, EndReason.WENT_OUT, seat, concealed)


def enough_canastas(s: GameState, side: int) -> bool:
    """Whether ``side`` has the canastas going out needs (§1.11.1; §3.5: in Bolivia one of
    them a sequence, an escalera)."""
    config = s.config
    if s.talon and unfinished_special(s, side):  # a Modern American option (§3.8a)
        return False
    if config.clean_books_to_go_out or config.dirty_books_to_go_out:
        return not books_missing(s, side)  # §3.7 Hand and Foot
    if not s.extra or not config.sequence_canastas_to_go_out:
        return s.canastas(side) >= config.canastas_to_go_out
    total, sequences = side_canastas(config, s, side)
    return total >= config.canastas_to_go_out and sequences >= config.sequence_canastas_to_go_out


def _no_going_out_reason(s: GameState, side: int) -> str:
    return "you cannot go out: " + _why_not_out(s, side)


def _why_not_out(s: GameState, side: int) -> str:
    """Why the side may not go out now, as a clause that completes any sentence before it."""
    if s.permission == "no":
        return "your partner said no this turn"
    if out_forbidden(s) and enough_canastas(s, side):  # (else the melds are the reason)
        return (
            "under these rules you go out only after asking your partner (after you draw, "
            "before you meld) and hearing yes"
        )
    if s.talon and unfinished_special(s, side):
        return unfinished_special(s, side) + " (no going out with it, §3.8a)"
    config = s.config
    if config.clean_books_to_go_out or config.dirty_books_to_go_out:  # §3.7 Hand and Foot
        return books_missing(s, side) or "your side may not go out now"
    need = config.canastas_to_go_out
    total, sequences = side_canastas(config, s, side)
    if total >= need and config.sequence_canastas_to_go_out:  # not of the kind asked (§3.5)
        wanted = config.sequence_canastas_to_go_out
        return (
            f"your side needs {wanted} escalera{'s' if wanted > 1 else ''} (a seven-card "
            f"sequence) among its canastas and has {sequences}"
        )
    return f"your side needs {need} canasta{'s' if need > 1 else ''} and has {total}"


# -- the dead-end guard (§1.11.3) ------------------------------------------------------------------


def after_put_down(s: GameState, seat: int) -> None:
    """§1.11.3: refuse a play that leaves no legal way to finish the turn; go out on empty."""
    hand = s.hands[seat]
    side = s.side_of[seat]
    if s.feet and foot_waiting(s, seat):  # Hand and Foot, still on the hand (§3.7, §3.8a)
        if s.must_go_out or s.melds[side][THREE]:  # (even one that empties the hand)
            raise IllegalMoveError(
                "black threes are melded only when going out, and you are still playing "
                "your hand, not your foot",
                "3.7",
            )
        if not hand:
            pick_up_foot(s, seat)
        return
    may_go_out = enough_canastas(s, side) and not out_forbidden(s)
    if s.talon:  # Modern American: a final discard is required (§3.6)
        if not hand:
            raise IllegalMoveError(
                "in Modern American you go out by discarding your last card: keep one", "3.6"
            )
        if s.no_discard:
            return  # the turn ends with a pass, not a discard (D13 option)
        if len(hand) == 1 and not may_go_out:
            raise IllegalMoveError(
                "that would leave you one card, and discarding it would take you out, which "
                f"you may not do: {_why_not_out(s, side)}",
                "1.11.3",
            )
        if s.must_go_out and not american_can_go_out(s, seat, hand, None):
            raise IllegalMoveError(
                "your partner said yes, so you must go out this turn, and after that play you "
                "could not",
                "1.11.2",
            )
        return
    if not hand:
        if not may_go_out:
            raise IllegalMoveError(_no_going_out_reason(s, side), "1.11.1")
        go_out(s, seat)
        return
    if s.no_discard:
        return  # the turn ends with a pass, not a discard (D13 option)
    if (
        len(hand) == 1
        and not may_go_out
        and (
            out_forbidden(s)
            or not can_go_out(
                s.config, hand, s.melds[side], allow_discard=False, extra=s.extra_of(side)
            )
        )
    ):
        raise IllegalMoveError(
            "that would leave you one card, and discarding it would take you out, which you "
            f"may not do: {_why_not_out(s, side)}",
            "1.11.3",
        )
    if s.must_go_out and (
        out_forbidden(s)
        or not can_go_out(
            s.config, hand, s.melds[side], allow_discard=not s.no_discard, extra=s.extra_of(side)
        )
    ):
        if s.permission == "yes":
            raise IllegalMoveError(
                "your partner said yes, so you must go out this turn, and after that play you "
                "could not",
                "1.11.2",
            )
        # Otherwise the obligation comes from black threes melded this turn (or taken).
        raise IllegalMoveError(
            "black threes may be melded only in the turn you go out, and after that play you "
            "could not go out this turn",
            "1.9",
        )


# -- asking partner (§1.11.2) ----------------------------------------------------------------------


def ask(s: GameState, seat: int) -> None:
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
    if foot_waiting(s, seat):
        raise IllegalMoveError(
            "you are still playing your hand: only a player on the foot may go out", "3.7"
        )
    if len(s.hands[seat]) < 2:
        raise IllegalMoveError(
            "with one card in hand you could not obey a 'no' (discarding it would take you "
            "out), so you may not ask; go out or play on",
            "1.11.3",
        )
    if not _can_go_out(s, seat, s.hands[seat], minimum_to_go_out(s, seat)):
        raise IllegalMoveError(
            "you could not go out this turn, so there is nothing to ask", "1.11.2"
        )


def answer(s: GameState, action: Answer) -> None:
    """§1.11.2: partner's answer binds: "no" forbids going out this turn, "yes" demands it."""
    s.permission = "yes" if action.yes else "no"
    s.must_go_out = s.must_go_out or action.yes
    s.phase = s.answer_phase
    answerer = s.config.partner_to_ask(s.turn)
    s.events = (*s.events, Event(answerer, "answer", text=str(action)))


# -- can this hand still go out this turn? (§1.11.3) -----------------------------------------------


def _can_go_out(s: GameState, seat: int, hand: Sequence[Card], minimum: int | None = None) -> bool:
    """``can_go_out`` for the seat's side in ``s``; Modern American searches its own rules
    (a final discard, seven-card melds, §3.6)."""
    if s.talon:
        return american_can_go_out(s, seat, hand, minimum)
    side = s.side_of[seat]
    return can_go_out(s.config, hand, s.melds[side], minimum=minimum, extra=s.extra_of(side))


def can_go_out(
    config: RuleConfig,
    hand: Sequence[Card],
    melds: Melds,
    *,
    minimum: int | None = None,
    allow_discard: bool = True,
    extra: Extra = (),
) -> bool:
    """Whether ``hand`` can be melded out this turn onto ``melds`` (a side's melds).

    ``minimum`` is the initial-meld minimum the melded cards must reach when the side has not
    opened and no exemption applies; ``None`` when none applies. ``allow_discard`` is false
    for a player who may not discard (a red three drawn as the last card, D13 option).

    ``extra`` are the side's further melds in Samba and Bolivia (§3.4, §3.5), whose search
    (``sambaout``) also builds and grows sequences, several melds of a rank and wild melds.
    """
    if config.closed_books:  # §3.7: books close at seven, and may need to be of each kind
        return foot_can_go_out(config, hand, melds, extra, minimum, allow_discard)
    # The search below knows fixed wild limits only (§1.9, D9); a limit that depends on the
    # naturals (§3.7's, as an option outside Hand and Foot) goes to the general search.
    if (
        config.sequence_canastas_to_go_out
        or config.variant_melds
        or config.wild_limit == "fewer_than_naturals_max3"
    ):
        return variant_can_go_out(config, hand, melds, extra, minimum, allow_discard)
    need = config.canastas_to_go_out
    limit = config.wild_limit
    cap = 3 if limit == "max3" else 2 if limit == "max2" else -1
    if not _might_go_out(cap, need, hand, melds, allow_discard):
        return False
    rules = (cap, need, config.wild_onto_canasta)
    return _search(rules, tuple(hand), melds, minimum, allow_discard)


@lru_cache(maxsize=4096)
def _search(
    rules: tuple[int, int, bool],
    hand: tuple[Card, ...],
    melds: Melds,
    minimum: int | None,
    allow_discard: bool,
) -> bool:
    """The exact search, memoised: a player obliged to go out has every candidate play
    checked against it, and nearby positions repeat from one decision to the next. ``rules``
    is (wild cap: 3, 2 or -1 for "no more than the naturals"; canastas still needed; whether
    a wild may join a completed canasta): all the search needs of the config, cheap to hash."""
    if _can_place_all(rules, hand, melds, minimum):
        return True
    if not allow_discard:
        return False
    for card in useful_discards(hand, melds, 1):
        rest = list(hand)
        rest.remove(card)
        if _can_place_all(rules, rest, melds, minimum):
            return True
    return False


def _can_place_all(
    rules: tuple[int, int, bool], cards: Sequence[Card], melds: Melds, minimum: int | None
) -> bool:
    cap, need, onto_canasta = rules
    if not cards:
        return sum(1 for m in melds if len(m) >= CANASTA_SIZE) >= need and minimum is None
    naturals = [0] * 13
    wilds = 0
    black = 0
    for card in cards:
        if IS_WILD[card]:
            wilds += 1
        elif IS_BLACK3[card]:
            black += 1
        else:
            naturals[RANK[card]] += 1
    if 0 < black < 3 and not melds[THREE]:
        return False
    if minimum is not None and sum(VALUE[c] for c in cards) < minimum:
        return False
    complete = 0
    lows = 0
    highs = 0
    extra_costs: list[int] = []  # wilds beyond the minimum that would complete a canasta
    for rank in range(FOUR, ACE + 1):
        existing = melds[rank]
        added = naturals[rank]
        if not existing and not added:
            continue
        old_wilds = sum(1 for c in existing if IS_WILD[c])
        size = len(existing) + added
        nat = size - old_wilds
        if not existing and added < 2:
            return False
        low = 1 if not existing and added == 2 else 0
        high = max((cap if cap >= 0 else nat) - old_wilds, 0)
        if not onto_canasta and len(existing) >= CANASTA_SIZE:
            high = 0  # §3.4: no wild card onto a completed canasta
        if low > high:
            return False
        lows += low
        highs += high
        missing = CANASTA_SIZE - size
        if missing <= 0:
            complete += 1
        elif missing <= high:
            extra_costs.append(max(missing, low) - low)
    if not lows <= wilds <= highs:
        return False
    budget = wilds - lows
    for cost in sorted(extra_costs):
        if complete >= need or cost > budget:
            break
        budget -= cost
        complete += 1
    return complete >= need


def _might_go_out(
    cap: int, need: int, hand: Sequence[Card], melds: Melds, allow_discard: bool
) -> bool:
    """Cheap necessary conditions, which most positions fail, sparing the exact search.

    Every card that cannot join any meld (the lone natural of a rank the side has no meld
    of, one or two black threes) must be the single final discard; and enough melds must be
    able to reach seven cards with the hand's wild cards, within their wild limits.
    (Red threes never stay in a hand, so every three in it is black.)
    """
    counts = [0] * 14
    for card in hand:
        counts[RANK[card]] += 1
    black = counts[THREE]
    stranded = 0 if black == 0 or black >= 3 or melds[THREE] else black
    allowed = 1 if allow_discard else 0
    for rank in NATURAL_RANKS:
        if counts[rank] == 1 and not melds[rank]:
            stranded += 1
            if stranded > allowed:
                return False
    if stranded > allowed:
        return False
    wilds = counts[TWO] + counts[JOKER_RANK]
    possible = 0
    for rank in NATURAL_RANKS:
        meld = melds[rank]
        added = counts[rank]
        if meld:
            size = len(meld) + added
            if size < CANASTA_SIZE:
                in_meld = sum(map(IS_WILD.__getitem__, meld))
                room = (cap if cap >= 0 else size - in_meld) - in_meld
                if size + min(wilds, room) < CANASTA_SIZE:
                    continue
        elif added < 2 or added + min(wilds, cap if cap >= 0 else added) < CANASTA_SIZE:
            continue
        possible += 1
    return possible >= need
