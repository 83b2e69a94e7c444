"""What a seat may do now: lists of legal actions for bots, the CLI and random play.

Canasta's melds are combinatorial, so these helpers do not enumerate every legal action;
they list a bounded, useful set (each discard, each natural lay-off, a wild on each meld,
new melds per rank, a strong opening, the ways to take the pile) and keep only those the
engine accepts, so everything listed is legal by construction.

The move generator sits above the rules: it asks ``engine.is_legal`` and the rule modules'
own checks, and no rule module depends on it. (The candidate pile takes are ``pile``'s and
the best opening is ``opening``'s: the end of the stock and the bot use them too.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from .actions import (
    ASK,
    DISCARDS,
    DRAW,
    NO,
    PASS,
    YES,
    Action,
    Answer,
    AskPartner,
    Combine,
    Discard,
    Draw,
    LayOff,
    Meld,
    Pass,
    TakePile,
    layoff_of,
    meld_of,
)
from .cards import (
    IS_WILD,
    JOKER_RANK,
    NATURAL_RANKS,
    RANK,
    THREE,
    TWO,
    VALUE,
    Card,
    RankGroups,
    hand_groups,
)
from .engine import is_legal
from .goingout import ask_refused_why, discard_refusal, put_down_verdict, surely_stranded
from .melds import CANASTA_SIZE
from .opening import best_opening, opening_of_groups, opening_target
from .pile import classic_takes, pile_takes, take_verdict
from .ruleset import Ruleset, Verdict, rules
from .state import GameState, Melds, Phase, out_forbidden


def legal_actions(state: GameState, seat: int) -> list[Action]:
    """Legal actions for ``seat`` now (empty when it is not that seat's move)."""
    decided = _decided(state, seat)
    if decided is not None:
        return decided
    known, candidates, verdict = _listing(state, seat)
    if verdict is not None:
        listed = known + [a for a in candidates if _accepted(state, seat, a, verdict)]
    else:
        listed = known + [a for a in candidates if is_legal(state, seat, a)]
    return listed or _way_out(state, seat)


def _way_out(state: GameState, seat: int) -> list[Action]:
    """For a player who must go out (§1.11.2, §1.9) and whose usual candidates are all
    refused: the ruleset's every step of a way out that the engine accepts, so that the
    lists never run dry while a way out exists (asked only then: a step is checked by a
    going-out search, and the usual candidates nearly always hold one)."""
    if not state.must_go_out or state.actor() != seat or state.phase is not Phase.PLAY:
        return []
    steps = rules(state).way_out_steps(state, seat)
    verdict = rules(state).candidate_verdicts(state, seat) if steps else None
    return [a for a in dict.fromkeys(steps) if _accepted(state, seat, a, verdict)]


def _accepted(state: GameState, seat: int, action: Action, verdict: Verdict | None) -> bool:
    """A candidate's verdict known by the ruleset, else the engine's check."""
    known = verdict(action) if verdict is not None else None
    return is_legal(state, seat, action) if known is None else known


def legal_action_kinds(state: GameState, seat: int) -> list[str]:
    """The kinds of action ``seat`` may take now, e.g. ``["meld", "lay", "discard"]``.

    A kind is listed when at least one listed action of that kind is legal; players may of
    course find other legal melds than the listed ones. Every view of the player to move
    carries this list, so a kind already known is never tried again: one legal action of a
    kind is enough.
    """
    decided = _decided(state, seat)
    if decided is not None:
        found = {_KINDS[type(a)] for a in decided}
        return [k for k in _KIND_ORDER if k in found]
    known, candidates, verdict = _listing(state, seat)
    kinds = {_KINDS[type(a)] for a in known}
    for action in candidates:
        kind = _KINDS[type(action)]
        if kind not in kinds and _accepted(state, seat, action, verdict):
            kinds.add(kind)
    if not kinds:
        kinds = {_KINDS[type(a)] for a in _way_out(state, seat)}
    return [k for k in _KIND_ORDER if k in kinds]


# The first word of each action's text (tests/shared/rules/test_properties.py checks the two
# agree).
_KINDS: dict[type[Action], str] = {
    Draw: "draw",
    TakePile: "pickup",
    Meld: "meld",
    LayOff: "lay",
    Combine: "combine",
    Discard: "discard",
    AskPartner: "ask",
    Answer: "answer",
    Pass: "pass",
}
_KIND_ORDER = ("draw", "pickup", "meld", "lay", "combine", "discard", "ask", "answer", "pass")


def _listing(state: GameState, seat: int) -> tuple[list[Action], list[Action], Verdict | None]:
    """The listed actions: those legal without a trial run, (deduplicated) candidates that
    the engine must try, and the ruleset's verdict on some of those candidates (spared the
    trial, each kept in its place)."""
    if state.actor() != seat:
        return [], [], None
    if state.phase is Phase.ANSWER:
        return [YES, NO], [], None
    candidates: list[Action] = []
    known: list[Action] = []  # legal without a trial run
    discards: list[Action] = []  # (known too; never equal to another kind of action)
    verdict: Verdict | None = None
    may_ask = state.config.has_partners and not state.asked and not state.turn_melded
    if state.phase is Phase.DRAW:
        if state.stock:
            known.append(DRAW)
        else:
            candidates.append(PASS)
        candidates.extend(pile_takes(state, seat))
        if may_ask and state.config.ask_timing == "before_or_after_draw":
            candidates.append(ASK)
        if candidates:  # (a ruleset that knows its takes' verdicts spares their trials)
            verdict = rules(state).candidate_verdicts(state, seat)
    else:
        if may_ask and ask_refused_why(state, seat) is None:
            known.append(ASK)
        sure, unsure = _meld_candidates(state, seat)
        known.extend(sure)
        if unsure:
            candidates.extend(unsure)
            verdict = rules(state).candidate_verdicts(state, seat)
        if state.no_discard:
            candidates.append(PASS)
        elif discard_refusal(state, seat) is None:
            hand = state.hands[seat]
            discards = list(map(DISCARDS.__getitem__, dict.fromkeys(hand)))
            if rules(state).discards_need_check(state):  # a ruleset's limit on discards
                candidates.extend(discards)
                discards = []
    if not candidates:
        return (list(dict.fromkeys(known)) if len(known) > 1 else known) + discards, [], None
    # (one action may be offered twice: sure by one list, to check by another; each
    # candidate is hashed once: ``setdefault`` gives back its own index only when new)
    unique: dict[Action, int] = dict.fromkeys(known, -1)
    listed = list(unique)
    unchecked = [a for i, a in enumerate(candidates) if unique.setdefault(a, i) == i]
    return listed + discards, unchecked, verdict


def _decided(state: GameState, seat: int) -> list[Action] | None:
    """The listing with every candidate decided in place, where the ruleset keeps classic's
    hooks for the phase (``_draw_listing``, ``_play_listing``), keeps classic's candidate
    takes with its own verdicts on them (``_judged_draw_listing``) or lists its own moves
    after the draw (``Ruleset.play_listing``); ``None``: ``_listing``'s candidates and the
    engine's check decide."""
    phase = state.phase
    if state.turn != seat or not (phase is Phase.DRAW or phase is Phase.PLAY):
        return None  # (not this seat's move, or an answer: ``_listing`` says)
    ruleset = rules(state)
    fast = _FAST.get(ruleset)
    if fast is None:
        fast = _FAST[ruleset] = (
            (_CLASSIC_DRAW if _keeps_classic(ruleset, _TAKE_HOOKS) else 0)
            | (_CLASSIC_TAKES if _keeps_classic(ruleset, ("take_candidates",)) else 0)
            | (_CLASSIC_PLAY if _keeps_classic(ruleset, _PLAY_HOOKS) else 0)
            | (0 if _keeps_classic(ruleset, ("play_listing",)) else _OWN_PLAY)
            | (_CLASSIC_OUT if _keeps_classic(ruleset, _OUT_HOOKS) else 0)
        )
    may_ask = not state.asked and not state.turn_melded and state.config.has_partners
    if phase is Phase.DRAW:
        if fast & _CLASSIC_DRAW:
            return _draw_listing(state, seat, may_ask)
        return _judged_draw_listing(state, seat, may_ask) if fast & _CLASSIC_TAKES else None
    if fast & _CLASSIC_PLAY and not state.extra:
        return _play_listing(state, seat, may_ask, bool(fast & _CLASSIC_OUT))
    if fast & _OWN_PLAY:
        return ruleset.play_listing(state, seat, may_ask, is_legal)
    return None


_FAST: dict[Ruleset, int] = {}
"""Per ruleset, what ``_decided`` may decide in place (the flags below, or'ed)."""
_CLASSIC_DRAW: Final = 1
"""The ruleset keeps classic's take hooks: ``_draw_listing`` decides the start of a turn."""
_CLASSIC_PLAY: Final = 2
"""It keeps classic's meld hooks: ``_play_listing`` decides the play after the draw."""
_OWN_PLAY: Final = 4
"""It has its own ``play_listing``, which may decide the play after the draw."""
_CLASSIC_OUT: Final = 8
"""It keeps classic's going-out search (``_OUT_HOOKS``), whose quick refusal the listing
may ask first."""
_CLASSIC_TAKES: Final = 16
"""It keeps classic's candidate takes (``take_candidates``), none of which repeats another:
``_judged_draw_listing`` decides the start of a turn with the ruleset's verdicts."""


def _draw_listing(state: GameState, seat: int, may_ask: bool) -> list[Action]:
    """The start of a turn, every action decided in place (the order ``_listing`` gives the
    candidates): draw (or pass at the end of the stock), each candidate take (``pile_takes``
    under the classic hooks the ruleset keeps: ``classic_takes``) by ``take_verdict`` (the
    engine's check only where the dead-end guard may object), asking partner by its own
    refusal. ``pile_takes`` lists each take once, so nothing repeats."""
    listed: list[Action] = []
    if state.stock:
        listed.append(DRAW)
    elif is_legal(state, seat, PASS):
        listed.append(PASS)
    for take in classic_takes(state, seat):
        verdict = take_verdict(state, seat, take)
        if verdict is None:
            verdict = is_legal(state, seat, take)
        if verdict:
            listed.append(take)
    if (
        may_ask
        and state.config.ask_timing == "before_or_after_draw"
        and ask_refused_why(state, seat) is None
    ):
        listed.append(ASK)
    return listed


def _judged_draw_listing(state: GameState, seat: int, may_ask: bool) -> list[Action]:
    """The start of a turn for a ruleset that keeps classic's candidate takes but not its
    rules on taking (Samba's, §3.4): ``_listing``'s actions in its order, each candidate
    decided as it comes by the ruleset's verdict (``candidate_verdicts``), else the engine's
    check, with no pass to drop repeats: ``classic_takes`` lists each take once, and none
    is a draw, a pass or a question to partner."""
    listed: list[Action] = [DRAW] if state.stock else []
    candidates: list[Action] = [] if state.stock else [PASS]
    candidates.extend(classic_takes(state, seat))
    if may_ask and state.config.ask_timing == "before_or_after_draw":
        candidates.append(ASK)
    if candidates:
        verdict = rules(state).candidate_verdicts(state, seat)
        for action in candidates:
            if _accepted(state, seat, action, verdict):
                listed.append(action)
    return listed


def _play_listing(
    state: GameState, seat: int, may_ask: bool, classic_out: bool = False
) -> list[Action]:
    """After the draw, every action decided in place, in ``_listing``'s order: asking partner,
    the melds and lay-offs legal by construction, the discards, then the other candidates of
    ``_meld_candidates`` (each decided by the dead-end guard's own test, ``put_down_verdict``;
    black threes and an opening by the engine's check) and passing (D13). For a position
    without further melds whose ruleset keeps classic's hooks on melding, on the listing and
    on going out (``_PLAY_HOOKS``): there no candidate is listed twice.

    The hand is counted once (``cards.hand_groups``) and its facts handed to every question
    (issue 27): the groups to the melds, lay-offs and opening, the counts to asking partner.
    With ``classic_out`` (the ruleset keeps classic's going-out search, ``_OUT_HOOKS``) a hand
    the search's first quick test strands (``goingout.surely_stranded``) is known not to
    go out, so asking partner is left out without weighing it (§1.11.2)."""
    listed: list[Action] = []
    hand = state.hands[seat]
    groups, counts = hand_groups(hand)  # (the hand's facts, counted once for every question)
    melds = state.melds[state.side_of[seat]]
    if (
        may_ask
        # (a hand that surely cannot go out may not ask, §1.11.2: known without the search)
        and not (classic_out and surely_stranded(counts, melds, True))
        and ask_refused_why(state, seat, counts) is None
    ):
        listed.append(ASK)
    simple = not state.must_go_out and not state.no_discard and not state.config.closed_books
    opened = any(melds)
    if opened:
        sure, check = group_candidates(state, seat, hand, melds, simple, groups)
    else:
        sure, check = opening_candidates(state, seat, hand, simple, groups)
    listed.extend(sure)
    if not state.no_discard and discard_refusal(state, seat) is None:
        listed.extend([DISCARDS[card] for card in dict.fromkeys(hand)])
    for action in check:
        if _put_down_legal(state, seat, hand, melds, opened, action):
            listed.append(action)
    if state.no_discard and is_legal(state, seat, PASS):
        listed.append(PASS)
    return listed


def _put_down_legal(
    state: GameState,
    seat: int,
    hand: tuple[Card, ...],
    melds: Melds,
    opened: bool,
    action: Action,
) -> bool:
    """Whether a candidate of ``group_candidates`` that the dead-end guard may refuse is
    legal: a lay-off or new meld of naturals (with at most the one wild card the candidates
    add, within the wild limit) is valid by construction (§1.9), so only the guard can
    refuse it, and ``put_down_verdict`` asks the guard's own test of the hand and melds it
    would leave: a new meld of black threes (§1.9: three or more, none while going out is
    forbidden, ``threes.check_black_threes``) obliges the player to go out. Openings (§1.10)
    go through the engine's check."""
    if not opened:
        return is_legal(state, seat, action)
    if type(action) is LayOff:
        rank = action.rank
        cards = action.cards
    elif type(action) is Meld and len(action.melds) == 1:
        cards = action.melds[0]
        rank = RANK[cards[0]]
    else:
        return is_legal(state, seat, action)
    new_threes = rank == THREE and type(action) is Meld
    if new_threes and (len(cards) < 3 or out_forbidden(state)):
        return False  # black threes meld three or more, only when going out (§1.9)
    rest = list(hand)
    for card in cards:
        rest.remove(card)
    after = list(melds)
    after[rank] = (*melds[rank], *cards)
    return put_down_verdict(state, tuple(rest), tuple(after), new_threes)


_TAKE_HOOKS = ("plan_take", "take_candidates", "frozen_reason")
"""The hooks on taking the pile whose classic forms ``pile.take_verdict`` answers for."""
_PLAY_HOOKS = (
    "meld_candidates",
    "further_candidates",
    "candidate_verdicts",
    "discards_need_check",
    "plan_meld",
    "plan_lay_off",
    "guard_turn_end",
    "why_melds_keep_in",
    "holds_reserve",
)
"""The hooks on melding, listing and going out whose classic forms ``_play_listing``
answers for."""
_OUT_HOOKS = ("can_go_out", "can_place_out")
"""The hooks on the going-out search whose classic forms ``goingout.surely_stranded`` (the
search's first quick test) answers for."""
_CLASSIC: dict[tuple[type[Ruleset], tuple[str, ...]], bool] = {}
"""Per ruleset class and set of hooks, whether the class keeps all of them classic."""


def _keeps_classic(ruleset: Ruleset, hooks: tuple[str, ...]) -> bool:
    """Whether ``ruleset`` overrides none of ``hooks``, so that the listing may decide its
    candidates from classic's rules. Read from the class once."""
    key = (type(ruleset), hooks)
    found = _CLASSIC.get(key)
    if found is None:
        kind = type(ruleset)
        found = all(getattr(kind, hook) is getattr(Ruleset, hook) for hook in hooks)
        _CLASSIC[key] = found
    return found


def _meld_candidates(state: GameState, seat: int) -> tuple[list[Action], list[Action]]:
    """Melds and lay-offs worth listing: ``(legal_by_construction, to_check)``.

    For an opened side: every natural rank in hand joins its meld or starts one (with the
    cheapest wild when only two naturals are held), the cheapest wild goes on each meld,
    black threes meld together. An unopened side is offered its best opening.

    Most of these are legal by construction (and so is a ``best_opening`` that meets the
    minimum), which spares the engine's check on the hot
    path of random play and bots: when the side has opened, nothing obliges the player to go
    out and at least two cards stay in hand, the turn can still end with a discard
    (§1.11.3), naturals never make a meld invalid, and a wild is safe while the meld has
    room under ``config.max_wilds`` (§1.9). Everything else goes through ``is_legal``.
    """
    own = rules(state).meld_candidates(state, seat)
    if own is not None:  # a ruleset whose limits make nothing legal by construction
        return own
    hand = state.hands[seat]
    side = state.side_of[seat]
    # Hand and Foot's closed books (§3.7) make a lay-off of naturals fail when the book is
    # full, so there nothing is legal by construction: the engine checks every candidate.
    simple = not state.must_go_out and not state.no_discard and not state.config.closed_books
    if not state.opened(side):  # the first meld must reach the minimum: the best opening
        known, check = opening_candidates(state, seat, hand, simple)
    else:
        known, check = group_candidates(state, seat, hand, state.melds[side], simple)
    sure, unsure = rules(state).further_candidates(state, side, hand)
    return known + sure, check + unsure


def opening_candidates(
    state: GameState,
    seat: int,
    hand: tuple[Card, ...],
    simple: bool,
    groups: RankGroups | None = None,
) -> tuple[list[Action], list[Action]]:
    """The best opening, when it reaches the minimum (or could go out concealed); ``groups``:
    the hand's cards per rank (``cards.hand_groups``), when the caller has them."""
    if groups is None:
        opening = best_opening(state.config, hand)
    else:
        opening = opening_of_groups(state.config, groups)
    if not opening:
        return [], []
    value = 0
    left = len(hand)
    for group in opening:  # (a few groups: a loop over them, not a generator over each card)
        value += sum(map(VALUE.__getitem__, group))
        left -= len(group)
    if value >= opening_target(state, seat):
        sure = simple and left >= 2 and state.config.open_via_pile != "required"
        return ([meld_of(opening)], []) if sure else ([], [meld_of(opening)])
    concealed = state.config.concealed_min_exempt and state.drew_from_stock and left <= 1
    return [], [meld_of(opening)] if concealed else []


def group_candidates(
    state: GameState,
    seat: int,
    hand: tuple[Card, ...],
    melds: Melds,
    simple: bool,
    groups: RankGroups | None = None,
) -> tuple[list[Action], list[Action]]:
    """Lay-offs onto the side's group melds and new group melds (see ``_meld_candidates``);
    ``groups``: the hand's cards per rank (``cards.hand_groups``), when the caller has them."""
    by_rank = hand_groups(hand)[0] if groups is None else groups
    twos = by_rank[TWO]
    jokers = by_rank[JOKER_RANK]
    # (the first held of the cheapest wild cards: a two, worth less than a joker, §1.2)
    cheapest_wild = twos[0] if twos is not None else jokers[0] if jokers is not None else -1
    known: list[Action] = []
    check: list[Action] = []
    threes = by_rank[THREE]
    if threes is not None:
        if melds[THREE]:
            check.append(layoff_of(THREE, tuple(threes)))
        elif len(threes) >= 3:
            check.append(meld_of((tuple(threes),)))
    room = len(hand)
    max_wilds = state.config.max_wilds
    onto_canasta = state.config.wild_onto_canasta
    closed = state.config.closed_books
    for rank in NATURAL_RANKS:
        cards = by_rank[rank]
        meld = melds[rank]
        if cards is None and (not meld or cheapest_wild < 0):
            continue
        if cards is not None:
            used = len(cards)
            if meld:
                if closed and len(meld) + used > CANASTA_SIZE:
                    continue  # past a book's seven cards (§3.7): ``foot_candidates`` has what fits
                action: Action = layoff_of(rank, tuple(cards))
            elif used >= 3:
                action = meld_of((tuple(cards),))
            elif used == 2 and cheapest_wild >= 0:
                action = meld_of(((*cards, cheapest_wild),))
                used = 3
            else:
                continue
            (known if simple and room - used >= 2 else check).append(action)
        if meld and cheapest_wild >= 0:
            in_meld = sum(map(IS_WILD.__getitem__, meld))
            if in_meld < max_wilds(len(meld) - in_meld) and (
                onto_canasta or len(meld) < CANASTA_SIZE
            ):
                action = layoff_of(rank, (cheapest_wild,))
                (known if simple and room > 2 else check).append(action)
    return known, check


@dataclass(frozen=True, slots=True)
class MoveGroup:
    """Legal actions of one kind, as text a player can type: ``kind`` is one of
    ``MOVE_GROUPS``; ``left_out`` counts listed actions beyond the cap."""

    kind: str
    actions: tuple[str, ...]
    left_out: int = 0


MOVE_GROUPS = ("start", "open", "meld", "lay", "discard", "ask", "answer", "pass")
"""Group order: how the turn starts (draw, or a way to take the pile), melds that open the
side (they reach the minimum), other melds, lay-offs, discards, asking, answering, passing."""
MOVES_CAP = 12
"""At most this many actions per group (the listing is bounded already; the cap keeps a
player's screen short, and ``left_out`` says how many more there were)."""


def grouped_moves(state: GameState, seat: int, cap: int = MOVES_CAP) -> tuple[MoveGroup, ...]:
    """What ``seat`` may do now, grouped for a player: the engine's listed legal actions.

    The list is not every legal action (``legal_actions`` is bounded: melds are offered per
    rank, an unopened side its best opening), but every action in it is legal, so a player
    need not work out the initial minimum by hand: an ``open`` meld reaches it.
    """
    opened = state.opened(state.side_of[seat])
    found: dict[str, list[str]] = {}
    for action in legal_actions(state, seat):
        if isinstance(action, Draw | TakePile) or (
            isinstance(action, Pass) and state.phase is Phase.DRAW
        ):
            kind = "start"
        elif isinstance(action, Meld):
            kind = "meld" if opened else "open"
        else:
            kind = _KINDS[type(action)]
        found.setdefault(kind, []).append(str(action))
    return tuple(
        MoveGroup(kind, tuple(found[kind][:cap]), max(0, len(found[kind]) - cap))
        for kind in MOVE_GROUPS
        if kind in found
    )
