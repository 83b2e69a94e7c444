"""Going out: when a player may, asking partner, and the search behind both (docs/rules.md §1.11).

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
several melds of a rank, wild melds, the escalera: ``variants.samba``); Modern
American and Hand and Foot have their own searches (each ruleset's ``can_place_out``).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Final

from .actions import Answer
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
from .edits import EXTRA_BIT
from .errors import CanastaError, IllegalMoveError, WrongPhaseError
from .melds import CANASTA_SIZE
from .opening import minimum_to_go_out
from .ruleset import form_sides, rules, rules_of
from .scoring import end_hand
from .state import EndReason, Event, Extra, GameState, Melds, Phase, out_forbidden

# -- going out (§1.11.1, §1.11.4) -----------------------------------------------------------------


def check_discard_allowed(s: GameState, seat: int, *, search: bool = True) -> None:
    """The rules on discarding that do not depend on which card (§1.11): raise the refusal
    (``search``: as ``discard_refusal``)."""
    refusal = discard_refusal(s, seat, search=search)
    if refusal is not None:
        raise refusal


def discard_refusal(s: GameState, seat: int, *, search: bool = True) -> CanastaError | None:
    """The rules on discarding that do not depend on which card (§1.11): the last card only
    when going out is allowed, and no discard that keeps cards when one must go out. The
    refusal is returned, not raised, so that the move lists ask without an exception.

    Without ``search`` the second rule, which needs the going-out search, is taken as met:
    the engine's execute-only path (``engine.apply_listed``) asks so of a listed discard,
    whose listing asked the whole question. The first rule is cheap, and going out when the
    side may not would corrupt the hand's result, so it is always asked."""
    side = s.side_of[seat]
    if rules(s).holds_reserve(s, seat):
        return None  # the last card of the hand brings up the reserve (Hand and Foot's foot)
    if len(s.hands[seat]) == 1:
        if out_forbidden(s) or not enough_canastas(s, side):
            return IllegalMoveError(_no_going_out_reason(s, side), "1.11.1")
    elif search and s.must_go_out and _can_go_out(s, seat, s.hands[seat]):
        return IllegalMoveError(
            "you must go out this turn (your partner said yes, or you melded black threes)",
            "1.11.2",
        )
    return None


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
    form_sides(s, seat)
    s.events = (
        *s.events,
        Event(seat, "out", text="went out concealed" if concealed else "went out"),
    )
    end_hand(s, EndReason.WENT_OUT, seat, concealed)


def enough_canastas(s: GameState, side: int) -> bool:
    """Whether ``side`` has the canastas going out needs (§1.11.1; §3.5: in Bolivia one of
    them a sequence, an escalera)."""
    reason = rules(s).why_melds_keep_in(s, side)
    if reason is not None:
        return not reason
    return s.canastas(side) >= s.config.canastas_to_go_out


def _no_going_out_reason(s: GameState, side: int) -> str:
    return "you cannot go out: " + why_not_out(s, side)


def why_not_out(s: GameState, side: int) -> str:
    """Why the side may not go out now, as a clause that completes any sentence before it
    (a ruleset's own dead-end guard words its refusals with it too)."""
    if s.permission == "no":
        return "your partner said no this turn"
    if out_forbidden(s) and enough_canastas(s, side):  # (else the melds are the reason)
        return (
            "under these rules you go out only after asking your partner (after you draw, "
            "before you meld) and hearing yes"
        )
    reason = rules(s).why_melds_keep_in(s, side)
    if reason is not None:
        return reason or "your side may not go out now"
    need = s.config.canastas_to_go_out
    total = s.canastas(side)
    return f"your side needs {need} canasta{'s' if need > 1 else ''} and has {total}"


# -- the dead-end guard (§1.11.3) ------------------------------------------------------------------


def after_put_down(s: GameState, seat: int, listed: bool = False) -> None:
    """§1.11.3: refuse a play that leaves no legal way to finish the turn; go out on empty.

    A ``listed`` play (``engine.apply_listed``) passed the guard when it was listed, so the
    guard's questions are not asked again while cards stay in hand (they need the going-out
    search). An emptied hand is still asked whether it may go out, which costs no search
    and is all that stands between an unlisted play and a wrongly scored hand. A ruleset's
    own guard (``guard_turn_end``) runs either way: it also executes (Hand and Foot's foot
    comes up), and the variants' guards are cheap."""
    if rules(s).guard_turn_end(s, seat):
        return
    hand = s.hands[seat]
    if listed and hand:
        return
    side = s.side_of[seat]
    may_go_out = enough_canastas(s, side) and not out_forbidden(s)
    fault = _guard_fault(s, hand, s.melds[side], s.extra_of(side), may_go_out, s.must_go_out)
    if fault is None:
        if not hand:
            go_out(s, seat)
        return
    if fault == "empty":
        raise IllegalMoveError(_no_going_out_reason(s, side), "1.11.1")
    if fault == "one card":
        raise IllegalMoveError(
            "that would leave you one card, and discarding it would take you out, which you "
            f"may not do: {why_not_out(s, side)}",
            "1.11.3",
        )
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


def _guard_fault(
    s: GameState,
    hand: tuple[Card, ...],
    melds: Melds,
    extra: Extra,
    may_go_out: bool,
    must_go_out: bool,
) -> str | None:
    """The dead-end guard's objection (§1.11.3) to a play that leaves ``hand`` and the side's
    ``melds`` (and ``extra``), or ``None``: ``"empty"`` (the hand went out and may not),
    ``"one card"`` (its discard would go out, which it may not), ``"stuck"`` (obliged to go
    out, it no longer can). Returned, not raised, so that the move lists ask it too
    (``put_down_verdict``)."""
    if not hand:
        return None if may_go_out else "empty"
    if s.no_discard:
        return None  # the turn ends with a pass, not a discard (D13 option)
    if (
        len(hand) == 1
        and not may_go_out
        and (
            out_forbidden(s)
            or not can_go_out(s.config, hand, melds, allow_discard=False, extra=extra)
        )
    ):
        return "one card"
    if must_go_out and (
        out_forbidden(s)
        or not can_go_out(s.config, hand, melds, allow_discard=not s.no_discard, extra=extra)
    ):
        return "stuck"
    return None


def put_down_verdict(
    s: GameState, hand: tuple[Card, ...], melds: Melds, obliges_out: bool = False
) -> bool:
    """Whether classic's dead-end guard (``after_put_down``) lets a valid meld or lay-off stand
    that leaves ``hand`` and the side's ``melds`` (``obliges_out``: a black-three meld, after
    which the turn must end with the player out), asked before the play (by the move lists,
    which need no trial play for it). Only for a position without further melds (``extra``)
    whose ruleset keeps classic's ``guard_turn_end`` and ``why_melds_keep_in``."""
    need = s.config.canastas_to_go_out
    may_go_out = not out_forbidden(s) and sum(1 for m in melds if len(m) >= CANASTA_SIZE) >= need
    must_go_out = s.must_go_out or (obliges_out and bool(hand))
    return _guard_fault(s, hand, melds, (), may_go_out, must_go_out) is None


# -- asking partner (§1.11.2) ----------------------------------------------------------------------


def ask(s: GameState, seat: int, listed: bool = False) -> None:
    """§1.11.2: ask partner, who must answer before the turn goes on. A ``listed`` question
    (``engine.apply_listed``) is not checked again: whether going out is possible, its last
    check, is a search, and the listing asked it."""
    if not listed:
        check_ask_allowed(s, seat)
    elif not s.config.has_partners or s.asked:
        raise IllegalMoveError("asking partner was not listed here", "1.11.2")
    s.asked = True
    s.asks = tuple(n + 1 if i == seat else n for i, n in enumerate(s.asks))
    s.answer_phase = s.phase
    s.phase = Phase.ANSWER
    s.events = (*s.events, Event(seat, "ask", text="asked: may I go out?"))


def check_ask_allowed(s: GameState, seat: int) -> None:
    """§1.11.2: raise the refusal of asking partner now, if any (``ask_refusal``)."""
    refusal = ask_refusal(s, seat)
    if refusal is not None:
        raise refusal


_ASK_REFUSALS: Final[dict[str, tuple[type[CanastaError], str, str]]] = {
    "no partner": (
        IllegalMoveError,
        "there is no partner to ask in this form of the game",
        "1.11.2",
    ),
    "before draw": (WrongPhaseError, "ask your partner after you draw, before you meld", "1.11.2"),
    "asked": (IllegalMoveError, "you have already asked your partner this turn", "1.11.2"),
    "must go out": (
        IllegalMoveError,
        "you must go out this turn anyway (you melded black threes), so there is nothing to ask",
        "1.11.2",
    ),
    "melded": (IllegalMoveError, "ask your partner before you meld or lay off this turn", "1.11.2"),
    "limit": (IllegalMoveError, "you may not ask your partner again this hand", "D22"),
    "reserve": (
        IllegalMoveError,
        "you are still playing your hand: only a player on the foot may go out",
        "3.7",
    ),
    "one card": (
        IllegalMoveError,
        "with one card in hand you could not obey a 'no' (discarding it would take you "
        "out), so you may not ask; go out or play on",
        "1.11.3",
    ),
    "cannot go out": (
        IllegalMoveError,
        "you could not go out this turn, so there is nothing to ask",
        "1.11.2",
    ),
}
"""Each refusal of asking partner (``ask_refused_why``'s answers): the error, its message and
rule."""


def ask_refusal(s: GameState, seat: int) -> CanastaError | None:
    """§1.11.2: once per turn, after the draw and before the first meld (D22), and only when
    either answer can be obeyed [engine policy]: going out must be possible (for a "yes")
    and at least two cards must be in hand, so that one can be discarded and one kept (for
    a "no"). Returned, not raised (``ask_refused_why`` says which, for the move lists)."""
    why = ask_refused_why(s, seat)
    if why is None:
        return None
    kind, message, rule = _ASK_REFUSALS[why]
    return kind(message, rule)


def ask_refused_why(s: GameState, seat: int, counts: Sequence[int] | None = None) -> str | None:
    """Which refusal of ``ask_refusal`` applies (a key of ``_ASK_REFUSALS``), or ``None``: the
    move lists ask this at every turn, and building the error they would not raise costs more
    than the question's cheap part. ``counts``: the seat's hand counted per rank index
    (``cards.hand_groups``), when the move list has counted it already."""
    config = s.config
    if not config.has_partners:
        return "no partner"
    if s.phase is Phase.DRAW and config.ask_timing != "before_or_after_draw":
        return "before draw"
    if s.asked:
        return "asked"
    if s.must_go_out:
        return "must go out"
    if s.turn_melded:
        return "melded"
    limit = config.ask_limit_per_hand
    if limit is not None and s.asks[seat] >= limit:
        return "limit"
    if rules(s).holds_reserve(s, seat):
        return "reserve"
    if len(s.hands[seat]) < 2:
        return "one card"
    if not _can_go_out(s, seat, s.hands[seat], minimum_to_go_out(s, seat), counts):
        return "cannot go out"
    return None


def answer(s: GameState, action: Answer) -> None:
    """§1.11.2: partner's answer binds: "no" forbids going out this turn, "yes" demands it."""
    s.permission = "yes" if action.yes else "no"
    s.must_go_out = s.must_go_out or action.yes
    s.phase = s.answer_phase
    answerer = s.config.partner_to_ask(s.turn)
    s.events = (*s.events, Event(answerer, "answer", text=str(action)))


# -- can this hand still go out this turn? (§1.11.3) -----------------------------------------------


def _can_go_out(
    s: GameState,
    seat: int,
    hand: Sequence[Card],
    minimum: int | None = None,
    counts: Sequence[int] | None = None,
) -> bool:
    """``can_go_out`` for the seat's side in ``s``, or the ruleset's own search where it needs
    the whole position (Modern American's final discard and seven-card melds, §3.6);
    ``counts``: ``hand`` counted per rank index, when the caller has counted it."""
    answer = rules(s).can_go_out(s, seat, hand, minimum)
    if answer is not None:
        return answer
    side = s.side_of[seat]
    return can_go_out(
        s.config, hand, s.melds[side], minimum=minimum, extra=s.extra_of(side), counts=counts
    )


def can_go_out(
    config: RuleConfig,
    hand: Sequence[Card],
    melds: Melds,
    *,
    minimum: int | None = None,
    allow_discard: bool = True,
    extra: Extra = (),
    counts: Sequence[int] | None = None,
) -> bool:
    """Whether ``hand`` can be melded out this turn onto ``melds`` (a side's melds).

    ``minimum`` is the initial-meld minimum the melded cards must reach when the side has not
    opened and no exemption applies; ``None`` when none applies. ``allow_discard`` is false
    for a player who may not discard (a red three drawn as the last card, D13 option).

    ``extra`` are the side's further melds in Samba and Bolivia (§3.4, §3.5), whose search
    (``variants.samba``) also builds and grows sequences, several melds of a rank and
    wild melds.

    ``counts`` is ``hand`` counted per rank index (``cards.hand_groups``) when the caller
    has counted it already (the move lists), so that the quick test need not count again.
    """
    answer = rules_of(config).can_place_out(config, hand, melds, extra, minimum, allow_discard)
    if answer is not None:
        return answer
    need = config.canastas_to_go_out
    limit = config.wild_limit
    cap = 3 if limit == "max3" else 2 if limit == "max2" else -1
    if counts is None:
        counts = _rank_counts(hand)
    if not _might_go_out(cap, need, counts, melds, allow_discard):
        return False
    rules = (cap, need, config.wild_onto_canasta)
    return _search(rules, tuple(hand), melds, minimum, allow_discard)


@lru_cache(maxsize=32)
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
    a wild may join a completed canasta): all the search needs of the config, cheap to hash.

    Few entries: only the last dozen or so are ever asked again (random play of classic
    asks about one position in seventeen again, all of them among the sixteen newest), and
    each dead one would keep its position's melds alive for the garbage collector to walk."""
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


def _rank_counts(hand: Sequence[Card]) -> list[int]:
    """How many cards of each rank index ``hand`` holds."""
    counts = [0] * 14
    for card in hand:
        counts[RANK[card]] += 1
    return counts


def _might_go_out(
    cap: int, need: int, counts: Sequence[int], melds: Melds, allow_discard: bool
) -> bool:
    """Cheap necessary conditions, which most positions fail, sparing the exact search.

    Every card that cannot join any meld (the lone natural of a rank the side has no meld
    of, one or two black threes) must be the single final discard; and enough melds must be
    able to reach seven cards with the hand's wild cards, within their wild limits.
    (Red threes never stay in a hand, so every three in it is black.) ``counts``: the hand
    counted per rank index.
    """
    if surely_stranded(counts, melds, allow_discard):
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


def surely_stranded(counts: Sequence[int], melds: Melds, allow_discard: bool) -> bool:
    """Whether a hand (``counts``, per rank index) holds more cards that can join no meld
    than the one final discard can take away (§1.11.1): the lone natural of a rank the side
    has no meld of, one or two black threes without a meld of them. Such a hand cannot go
    out this turn under classic's search, whatever its wild cards: ``_might_go_out``'s first
    test, which the move lists ask on its own before asking partner is weighed (§1.11.2)."""
    black = counts[THREE]
    stranded = 0 if black == 0 or black >= 3 or melds[THREE] else black
    allowed = 1 if allow_discard else 0
    if stranded > allowed:
        return True
    for rank in NATURAL_RANKS:
        if counts[rank] == 1 and not melds[rank]:
            stranded += 1
            if stranded > allowed:
                return True
    return False


def useful_discards(hand: Sequence[Card], held: Sequence[object], most: int) -> list[Card]:
    """The only final discards worth trying when melding everything fails: the cheapest wild
    card (to keep the melded value high), a black three, or a natural of a rank held at most
    ``most`` times with nothing of its rank on the table (``held``, by rank). More naturals
    of a rank never make going out harder: they could join a meld of it (the side's, or a
    new one), which never stops the rest from going down. Classic's search asks for lone
    naturals; Samba's (``variants.samba_going_out``), where a new meld of a rank needs
    three, two."""
    counts = [0] * 14
    for card in hand:
        counts[RANK[card]] += 1
    out: list[Card] = []
    wilds = [c for c in hand if IS_WILD[c]]
    if wilds:
        out.append(min(wilds, key=VALUE.__getitem__))
    out.extend(dict.fromkeys(c for c in hand if IS_BLACK3[c]))
    out.extend(
        dict.fromkeys(
            c
            for c in hand
            if not IS_WILD[c] and not IS_BLACK3[c] and counts[RANK[c]] <= most and not held[RANK[c]]
        )
    )
    return out
