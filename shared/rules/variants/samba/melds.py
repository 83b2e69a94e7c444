"""Samba and Bolivia melds: sequences, several melds of a rank, wild-card melds, combining
melds, taking the pile onto them, and their special canastas (docs/rules.md §3.4, §3.5, §3.8a).

The first group meld of each rank stays where classic keeps it (``GameState.melds``, indexed
by rank); everything else a side lays down in these games is a further meld in table order
(``GameState.extra``): a sequence, a second (third...) group meld of a rank, a wild-card
meld. A meld's kind is read from its cards, so nothing else is stored: naturals of two or
more ranks are a sequence, wild cards only are a wild meld, otherwise a group of one rank.

The functions here validate a move into a ``Plan`` (``edits``) without changing anything,
like ``melding`` and ``pile`` do for classic; those modules hand a move over here when the
config has these melds (``RuleConfig.variant_melds``), so the classic paths run unchanged.
A move the engine listed itself (``listed``, ``engine.apply_listed``) builds the same plan
without the validations the listing made; what building needs (the cards held, the meld
named, where a card goes) is still asked.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from functools import lru_cache

from ...actions import Action, Combine, LayOff, Meld, MeldRef, TakePile
from ...cards import (
    ACE,
    FOUR,
    IS_BLACK3,
    IS_NATURAL,
    IS_RED3,
    IS_WILD,
    JOKER_RANK,
    RANK,
    SUIT,
    SUIT_LETTERS,
    THREE,
    VALUE,
    Card,
    card_text,
    rank_name,
    rank_text,
)
from ...config import RuleConfig, wild_cap
from ...edits import EXTRA_BIT, Plan, remove_cards
from ...errors import IllegalMoveError
from ...goingout import can_go_out
from ...melding import plan_lay_off, plan_meld
from ...melds import (
    CANASTA_SIZE,
    GROUP,
    SEQUENCE,
    WILD,
    check_meld,
    check_wild_meld,
    meld_facts,
    meld_fault,
    meld_kind,
    meld_rank,
)
from ...opening import check_opening_meld, opening_target, require_minimum
from ...pile import pile_cards_taken, take_prologue
from ...ruleset import Ruleset, Verdict, rules
from ...state import GameState, Phase, out_forbidden
from ...threes import check_black_threes

SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")

Where = tuple[bool, int]
"""A meld's place: ``(False, rank)`` in the rank-indexed melds, ``(True, i)`` further meld i."""


# -- what a meld is --------------------------------------------------------------------------------


def sequence_span(cards: Sequence[Card]) -> tuple[int, int, int]:
    """(suit, lowest rank, highest rank) of a sequence's cards."""
    ranks = [RANK[c] for c in cards]
    return SUIT[cards[0]], min(ranks), max(ranks)


def sequence_name(config: RuleConfig) -> str:
    """A seven-card sequence is a samba (§3.4), in Bolivia an escalera (§3.5)."""
    return "escalera" if config.allow_wild_melds else "samba"


def canasta_kind(config: RuleConfig, cards: Sequence[Card]) -> str:
    """``""`` (not a canasta), ``"natural"``, ``"mixed"``, ``"samba"``/``"escalera"`` or
    ``"bolivia"`` (§1.9, §3.4, §3.5)."""
    if len(cards) < CANASTA_SIZE:
        return ""
    kind = meld_kind(cards)
    if kind == SEQUENCE:
        return sequence_name(config)
    if kind == WILD:
        return "bolivia"
    return "mixed" if any(IS_WILD[c] for c in cards) else "natural"


def meld_label(cards: Sequence[Card], which: int) -> str:
    """How a meld is named at the table and in ``MeldRef`` text: ``9``, ``9#2``, ``4h-6h``,
    ``wild``. ``which`` is its place among the side's melds of its rank (from 1)."""
    kind = meld_kind(cards)
    if kind == SEQUENCE:
        suit, low, high = sequence_span(cards)
        return f"{rank_text(low)}{SUIT_LETTERS[suit]}-{rank_text(high)}{SUIT_LETTERS[suit]}"
    name = "wild" if kind == WILD else rank_text(meld_rank(cards))
    return name if which == 1 else f"{name}#{which}"


def check_sequence(cards: Sequence[Card]) -> None:
    """§3.4: three to seven cards of one suit in sequence, 4 (low) to ace; no wild cards, no
    threes; a seven-card sequence (samba, escalera) takes nothing more."""
    fault = sequence_fault(cards)
    if fault is not None:
        raise IllegalMoveError(fault, "3.4")


def sequence_fault(cards: Sequence[Card]) -> str | None:
    """Why ``cards`` are no valid sequence (``check_sequence``'s refusal), or ``None``."""
    if any(IS_WILD[c] for c in cards):
        return "a sequence may not hold wild cards"
    if not all(IS_NATURAL[c] for c in cards):
        return "a sequence runs from 4 to ace: threes cannot join one"
    if len({SUIT[c] for c in cards}) != 1:
        return "a sequence is of one suit"
    ranks = sorted(RANK[c] for c in cards)
    if len(set(ranks)) != len(ranks) or ranks[-1] - ranks[0] != len(ranks) - 1:
        return "a sequence's cards follow one another in rank, each rank once"
    if len(cards) < 3:
        return "a new sequence needs at least three cards"
    if len(cards) > CANASTA_SIZE:
        return "a sequence holds at most seven cards: a complete one takes nothing more"
    return None


def sequence_ok(cards: Sequence[Card]) -> bool:
    """``sequence_fault(cards) is None``, in one pass over the cards (the move lists ask it of
    every listed sequence): three to seven naturals of one suit, each rank once, in a row."""
    count = len(cards)
    if count < 3 or count > CANASTA_SIZE:
        return False
    suit = SUIT[cards[0]]
    ranks = 0
    for card in cards:
        if not IS_NATURAL[card] or SUIT[card] != suit:
            return False
        bit = 1 << RANK[card]
        if ranks & bit:
            return False
        ranks |= bit
    lowest = (ranks & -ranks).bit_length() - 1
    return ranks >> lowest == (1 << count) - 1


@lru_cache(maxsize=4096)
def further_facts(cards: tuple[Card, ...]) -> tuple[str, int, int, int, int, int]:
    """What the move lists and the going-out search read of a further meld, memoised (a meld
    outlives many positions): its kind, rank and wild cards (``melds.meld_facts``), and a
    sequence's suit, lowest and highest rank (else -1 each)."""
    kind, rank, wilds = meld_facts(cards)
    if kind == SEQUENCE:
        suit, low, high = sequence_span(cards)
        return kind, rank, wilds, suit, low, high
    return kind, rank, wilds, -1, -1, -1


def _check_apart(extra: Sequence[tuple[Card, ...]], cards: Sequence[Card], skip: int) -> None:
    """§3.8a: sequences of one suit may coexist only if they neither overlap nor touch."""
    other = _touching(extra, cards, skip)
    if other is not None:
        raise IllegalMoveError(
            f"your side's sequence {meld_label(other, 1)} would overlap or touch this one: "
            "touching sequences of one suit must be one sequence (add to it instead)",
            "3.8a",
        )


def _touching(
    extra: Sequence[tuple[Card, ...]], cards: Sequence[Card], skip: int
) -> Sequence[Card] | None:
    """The side's first sequence but ``extra[skip]`` that ``cards`` would overlap or touch."""
    found = _touching_span(_spans(extra), sequence_span(cards), skip)
    return None if found < 0 else extra[found]


Span = tuple[int, int, int]
"""A sequence's suit, lowest rank and highest rank (``sequence_span``)."""


def _spans(extra: Sequence[tuple[Card, ...]]) -> list[tuple[int, Span]]:
    """The side's sequences among its further melds: (place, span)."""
    found: list[tuple[int, Span]] = []
    for i, cards in enumerate(extra):
        kind, _, _, suit, low, high = further_facts(cards)
        if kind == SEQUENCE:
            found.append((i, (suit, low, high)))
    return found


def _touching_span(spans: list[tuple[int, Span]], span: Span, skip: int) -> int:
    """The place of the first sequence but ``skip`` that ``span`` would overlap or touch
    (§3.8a), or -1."""
    suit, low, high = span
    for i, (o_suit, o_low, o_high) in spans:
        if i != skip and o_suit == suit and low <= o_high + 1 and o_low <= high + 1:
            return i
    return -1


def check_group(
    config: RuleConfig, rank: int, old: tuple[Card, ...], added: Sequence[Card], *, new: bool
) -> None:
    """A group meld after ``added`` joins ``old`` (§1.9 with Samba's limits, §3.4): at most
    two wilds, and no wild card onto a completed canasta (naturals may still join it)."""
    fault = group_fault(config, rank, old, added, new=new)
    if fault is not None:
        raise IllegalMoveError(*fault)


def group_fault(
    config: RuleConfig, rank: int, old: tuple[Card, ...], added: Sequence[Card], *, new: bool
) -> tuple[str, str] | None:
    """``check_group``'s refusal (the message and the rule's section), or ``None``."""
    wilds = 0
    for card in added:
        if IS_WILD[card] and rank != THREE:
            wilds += 1
        elif RANK[card] != rank or IS_RED3[card] or IS_WILD[card]:
            return f"{card_text(card)} does not fit a meld of {rank_name(rank)}", "1.9"
    old_wilds = meld_facts(old)[2]
    fault = meld_fault(
        config, rank, (*old, *added), new=new, old_wilds=old_wilds, wilds=old_wilds + wilds
    )
    if fault is not None:
        return fault
    if not config.wild_onto_canasta and len(old) >= CANASTA_SIZE and wilds:
        return "no wild card may be added to a completed canasta (naturals may)", "3.4"
    return None


def lay_off_fits(
    config: RuleConfig, rank: int, size: int, old_wilds: int, added: Sequence[Card]
) -> bool:
    """Whether ``group_fault`` lets ``added`` join a group meld of ``rank`` that holds
    ``size`` cards, ``old_wilds`` of them wild (``new=False``), asked of those counts alone:
    the move lists ask it of every listed lay-off, and a meld's counts are read once per
    table. The same tests (``melds.meld_fault``'s book size, two naturals and wild limit,
    and §3.4's no wild card onto a completed canasta), without a message to build."""
    wilds = 0
    for card in added:
        if IS_WILD[card] and rank != THREE:
            wilds += 1
        elif RANK[card] != rank or IS_RED3[card] or IS_WILD[card]:
            return False
    total = size + len(added)
    if config.closed_books and total > CANASTA_SIZE:
        return False
    if rank == THREE:
        return True
    held = old_wilds + wilds
    naturals = total - held
    if naturals < 2:
        return False
    if held > wild_cap(config.wild_limit, naturals) and held > old_wilds:
        return False
    return config.wild_onto_canasta or size < CANASTA_SIZE or not wilds


def combine_fault(
    config: RuleConfig, rank: int, keep: Sequence[Card], gone: Sequence[Card]
) -> tuple[str, str] | None:
    """Why two group melds of ``rank`` may not become one (§3.4, §3.8a: the wild limit, and
    a meld with a wild card never joins a completed canasta where no wild card may be added
    to one), as the refusal's message and section; ``None`` when they may."""
    fault = meld_fault(config, rank, (*keep, *gone), new=False)
    if fault is not None:
        return fault
    if not config.wild_onto_canasta and (
        (len(keep) >= CANASTA_SIZE and any(IS_WILD[c] for c in gone))
        or (len(gone) >= CANASTA_SIZE and any(IS_WILD[c] for c in keep))
    ):
        return (
            "joining a meld with a wild card to a completed canasta would add a wild card to "
            "the canasta, which is not allowed",
            "3.8a",
        )
    return None


# -- finding a named meld --------------------------------------------------------------------------


def find_meld(s: GameState, side: int, ref: MeldRef) -> Where:
    """The place of the meld ``ref`` names on ``side``; refused when there is none."""
    extra = s.extra_of(side)
    if ref.suit >= 0:
        for i, cards in enumerate(extra):
            if meld_kind(cards) == SEQUENCE:
                suit, low, high = sequence_span(cards)
                if suit == ref.suit and low <= ref.rank <= high:
                    return True, i
        raise IllegalMoveError(
            f"your side has no sequence of {SUIT_NAMES[ref.suit]} holding "
            f"{rank_text(ref.rank)}{SUIT_LETTERS[ref.suit]}",
            "3.4",
        )
    if ref.rank == JOKER_RANK:
        found = [i for i, cards in enumerate(extra) if meld_kind(cards) == WILD]
        if ref.which <= len(found):
            return True, found[ref.which - 1]
        raise IllegalMoveError(f"your side has no wild-card meld number {ref.which}", "3.5")
    if not THREE <= ref.rank <= JOKER_RANK - 1:
        raise IllegalMoveError("name the meld to add to, for example: lay 9 9d", "1.6")
    melds = s.melds[side]
    if melds[ref.rank]:
        if ref.which == 1:
            return False, ref.rank
        others = [
            i
            for i, cards in enumerate(extra)
            if meld_kind(cards) == GROUP and meld_rank(cards) == ref.rank
        ]
        if ref.which - 1 <= len(others):
            return True, others[ref.which - 2]
    count = sum(
        1 for cards in extra if meld_kind(cards) == GROUP and meld_rank(cards) == ref.rank
    ) + bool(melds[ref.rank])
    raise IllegalMoveError(
        f"your side has {count or 'no'} meld{'s' if count != 1 else ''} of {rank_name(ref.rank)}"
        + (f", so there is no {ref}" if count else " to add to"),
        "3.4" if ref.which > 1 else "1.6",
    )


class _Table:
    """One side's melds being changed by a plan: the rank-indexed ones and the further ones."""

    def __init__(self, s: GameState, side: int) -> None:
        self.melds = list(s.melds[side])
        self.extra = list(s.extra_of(side))
        self.touched: list[tuple[int, bool]] = []

    def get(self, where: Where) -> tuple[Card, ...]:
        return self.extra[where[1]] if where[0] else self.melds[where[1]]

    def put(self, where: Where, cards: tuple[Card, ...], existed: bool) -> None:
        if where[0]:
            self.extra[where[1]] = cards
            self.touched.append((EXTRA_BIT + where[1], existed))
        else:
            self.melds[where[1]] = cards
            self.touched.append((where[1], existed))

    def add_new(self, cards: tuple[Card, ...]) -> None:
        self.extra.append(cards)
        self.touched.append((EXTRA_BIT + len(self.extra) - 1, False))

    def plan(self, side: int, hand: tuple[Card, ...], left: int, obliges: bool) -> Plan:
        return Plan(
            side,
            hand,
            tuple(self.melds),
            tuple(self.touched),
            left,
            obliges,
            tuple(self.extra),
        )


def _add_to(
    config: RuleConfig, table: _Table, where: Where, added: Sequence[Card], listed: bool
) -> None:
    """Validate ``added`` joining the meld at ``where`` (``listed``: it was) and put the
    result on ``table``."""
    old = table.get(where)
    merged = (*old, *added)
    if listed:
        table.put(where, merged, True)
        return
    kind = meld_kind(old)
    if kind == SEQUENCE:
        if len(old) >= CANASTA_SIZE:
            raise IllegalMoveError(
                f"a {sequence_name(config)} is complete: nothing may be added to it", "3.4"
            )
        check_sequence(merged)
        _check_apart(table.extra, merged, where[1])
    elif kind == WILD:
        check_wild_meld(merged, len(old), config.closed_books)
    else:
        check_group(config, meld_rank(old), old, added, new=False)
    table.put(where, merged, True)


def _meld_group(s: GameState, table: _Table, group: tuple[Card, ...], listed: bool) -> bool:
    """Lay one new group from hand onto ``table`` (§3.4, §3.5; ``listed``: unchecked, it
    was); True for black threes."""
    config = s.config
    if not group:
        raise IllegalMoveError("a meld needs cards", "1.9")
    if listed:
        return _place_group(config, table, group)
    if any(IS_RED3[c] for c in group):
        raise IllegalMoveError(
            "red threes cannot be melded: they are laid out by themselves", "1.7"
        )
    kind = meld_kind(group)
    if kind == SEQUENCE:
        if not config.allow_sequences:
            meld_rank(group)  # raises the classic refusal
        check_sequence(group)
        _check_apart(table.extra, group, -1)
        table.add_new(group)
        return False
    if kind == WILD:
        if not config.allow_wild_melds:
            meld_rank(group)  # raises: wild cards alone cannot be melded
        check_wild_meld(group, 0, config.closed_books)
        table.add_new(group)
        return False
    rank = meld_rank(group)
    old = table.melds[rank]
    if rank == THREE:
        check_black_threes(s, group, len(old))
        check_meld(config, rank, (*old, *group), new=not old)
        table.put((False, rank), (*old, *group), bool(old))
        return True
    if old and config.multiple_melds_per_rank:
        check_group(config, rank, (), group, new=True)
        table.add_new(group)
    else:
        check_group(config, rank, old, group, new=not old)
        table.put((False, rank), (*old, *group), bool(old))
    return False


def _place_group(config: RuleConfig, table: _Table, group: tuple[Card, ...]) -> bool:
    """Put a listed new group on ``table`` where ``_meld_group`` puts it once validated (a
    sequence or wild meld, or a group beside its rank's first meld where a side may have
    several, as a further meld; else onto the rank's first meld); True for black threes."""
    kind, rank, _ = meld_facts(group)
    if kind != GROUP:
        table.add_new(group)
        return False
    old = table.melds[rank]
    if old and rank != THREE and config.multiple_melds_per_rank:
        table.add_new(group)
    else:
        table.put((False, rank), (*old, *group), bool(old))
    return rank == THREE


# -- the moves -------------------------------------------------------------------------------------


def plan_variant_meld(s: GameState, seat: int, action: Meld, listed: bool) -> Plan:
    """§3.4, §3.5: new melds from hand (each group its own meld), or the side's opening
    (``listed``: the melds and the opening's minimum are not checked again)."""
    side = s.side_of[seat]
    if not action.melds:
        raise IllegalMoveError("name the cards to meld, for example: meld 7h 7c 2s", "1.9")
    hand = remove_cards(s.hands[seat], [c for g in action.melds for c in g], "to meld")
    table = _Table(s, side)
    threes = False
    for group in action.melds:
        threes = _meld_group(s, table, group, listed) or threes
    if not listed and not s.opened(side):
        check_opening_meld(s, seat, hand, dict(enumerate(action.melds)))
    return table.plan(side, hand, len(hand), threes and bool(hand))


def plan_variant_lay_off(s: GameState, seat: int, action: LayOff, listed: bool) -> Plan:
    """§1.6 T2, §3.4, §3.5: cards from hand onto the named meld of the side (``listed``:
    the cards' fit is not checked again); a rank's first meld planned the short way."""
    plan = plan_first_lay_off(s, seat, action, listed)
    return plan if plan is not None else plan_lay_off_on_table(s, seat, action, listed)


def plan_first_lay_off(s: GameState, seat: int, action: LayOff, listed: bool) -> Plan | None:
    """The plan of a lay-off onto a rank's first meld (the rank-indexed one, four to ace),
    the most made move after the discard: validated as ``plan_lay_off_on_table`` validates
    it (the cards held, then ``check_group`` on the meld, raising the same refusals in the
    same order; ``lay_off_fits`` is its verdict from the meld's counts, so a refusal is
    built only where there is one), without finding the meld by a ``MeldRef`` or copying
    the side's further melds, which the move leaves as they are (``Plan.extra`` ``None``).
    ``None`` for any other lay-off. ``listed``: the fit is not checked again."""
    rank = action.rank
    if action.which != 1 or action.suit >= 0 or not FOUR <= rank <= ACE or not action.cards:
        return None
    side = s.side_of[seat]
    melds = s.melds[side]
    old = melds[rank]
    if not old:
        return None
    kind, old_rank, wilds = meld_facts(old)
    if kind != GROUP or old_rank != rank:
        return None
    hand = remove_cards(s.hands[seat], action.cards, "to lay off")
    config = s.config
    if not listed and not lay_off_fits(config, rank, len(old), wilds, action.cards):
        check_group(config, rank, old, action.cards, new=False)  # (raises the refusal)
    after = list(melds)
    after[rank] = (*old, *action.cards)
    return Plan(side, hand, tuple(after), ((rank, True),), len(hand), False)


def plan_lay_off_on_table(s: GameState, seat: int, action: LayOff, listed: bool) -> Plan:
    """``plan_variant_lay_off`` onto any meld, found by its ``MeldRef``."""
    side = s.side_of[seat]
    if not action.cards:
        raise IllegalMoveError("name the cards to lay off, for example: lay 9 9d", "1.6")
    where = find_meld(s, side, action.ref)
    hand = remove_cards(s.hands[seat], action.cards, "to lay off")
    table = _Table(s, side)
    _add_to(s.config, table, where, action.cards, listed)
    return table.plan(side, hand, len(hand), False)


def plan_combine(s: GameState, seat: int, action: Combine, listed: bool) -> Plan:
    """§3.4, §3.8a: two group melds of one rank become one, within the wild limit; joining
    a meld that holds a wild card to a completed canasta adds a wild to it (refused).
    ``listed``: the two melds are found, their union not checked again."""
    config = s.config
    if not config.multiple_melds_per_rank:
        raise IllegalMoveError("in this game a side has one meld per rank: nothing to combine")
    side = s.side_of[seat]
    first = find_meld(s, side, action.first)
    second = find_meld(s, side, action.second)
    if first == second:
        raise IllegalMoveError("name two different melds to combine", "3.4")
    table = _Table(s, side)
    if (second[0], second[1]) < (first[0], first[1]):
        first, second = second, first  # the combined meld keeps the earlier place
    keep, gone = table.get(first), table.get(second)
    if not listed:
        if (
            meld_kind(keep) != GROUP
            or meld_kind(gone) != GROUP
            or (meld_rank(keep) != meld_rank(gone))
        ):
            raise IllegalMoveError("only group melds of one rank can be combined", "3.4")
        fault = combine_fault(config, meld_rank(keep), keep, gone)
        if fault is not None:
            raise IllegalMoveError(*fault)
    table.put(first, (*keep, *gone), True)
    del table.extra[second[1]]
    hand = s.hands[seat]
    return table.plan(side, hand, len(hand), False)


def plan_variant_take(s: GameState, seat: int, action: TakePile, listed: bool) -> Plan:
    """§3.4 taking the pile in Samba and Bolivia, every check in order.

    A natural pair from hand always takes it (with the top card, a new group meld, or the
    named one); an unfrozen pile may also be taken by adding the top card alone to a group
    or sequence meld that is not yet a canasta; natural + wild never takes it (D8 option
    ``unfrozen_take_methods``). Only the top card joins a sequence during the take (§3.8a).
    ``listed``: the take is built where the checks would put it, without the checks.
    """
    config = s.config
    side, top, rank, hand, opened, naturals, wilds = take_prologue(
        s, seat, action, refuse_black_top=True, onto=True, listed=listed
    )
    support = action.cards
    frozen = s.pile_frozen or not opened
    pair = naturals >= 2 or (naturals == 1 and wilds > 0 and not frozen)
    if not listed:
        _check_take_way(s, rank, top, naturals, pair, frozen, support)
    table = _Table(s, side)
    if pair:
        cards = (top, *support)
        if action.onto is not None:
            where = find_meld(s, side, action.onto)
            if not listed and meld_kind(table.get(where)) != GROUP:
                raise IllegalMoveError("a pair taking the pile joins a group meld", "3.4")
            _add_to(config, table, where, cards, listed)
        elif table.melds[rank] and config.multiple_melds_per_rank:
            if not listed:
                check_group(config, rank, (), cards, new=True)
            table.add_new(cards)
        else:
            old = table.melds[rank]
            if not listed:
                check_group(config, rank, old, cards, new=not old)
            table.put((False, rank), (*old, *cards), bool(old))
    else:
        where = _layoff_target(s, side, table, top, action.onto, listed)
        _add_to(config, table, where, (top,), listed)
    if action.melds:
        hand = remove_cards(hand, [c for g in action.melds for c in g], "to meld")
        for group in action.melds:
            if _meld_group(s, table, group, listed) and not listed:
                raise IllegalMoveError("black threes are melded only when going out", "1.9")
    if not opened and not listed:
        value = VALUE[top] + sum(VALUE[c] for c in support)
        value += sum(VALUE[c] for g in action.melds for c in g)
        require_minimum(s, seat, value, with_pile=True)
    taken = sum(1 for c in pile_cards_taken(s) if not IS_RED3[c])
    return table.plan(side, hand, len(hand) + taken, False)


def _check_take_way(
    s: GameState,
    rank: int,
    top: Card,
    naturals: int,
    pair: bool,
    frozen: bool,
    support: tuple[Card, ...],
) -> None:
    """§3.4, §1.8.2, D8: whether the pile may be taken the way the support says, a pair
    (``pair``: a natural pair, or a natural and a wild card on an unfrozen pile) or the top
    card alone laid onto a meld, before where the cards go is asked."""
    config = s.config
    if pair:
        if naturals < 2 and "natural_plus_wild" not in config.unfrozen_take_methods:
            raise IllegalMoveError(
                f"in this game the pile is taken with two natural {rank_name(rank)}, not with "
                "a natural card and a wild card",
                "3.4",
            )
        return
    if frozen:
        why = "it holds a wild card" if s.pile_frozen else "your side has not opened"
        raise IllegalMoveError(
            f"the pile is frozen ({why}): to take it you need two natural "
            f"{rank_name(rank)} from your hand to meld with the {card_text(top)}",
            "1.8.2",
        )
    if "layoff" not in config.unfrozen_take_methods:  # Hand and Foot (§3.7)
        raise IllegalMoveError(
            f"in this game the pile is taken only with two natural {rank_name(rank)} from "
            f"your hand to meld with the {card_text(top)}",
            "D8",
        )
    if support:
        raise IllegalMoveError(
            f"to take the pile you need two natural {rank_name(rank)}, or a meld that is "
            f"not yet a canasta to add the {card_text(top)} to (§3.4: a sequence is never "
            "started or extended by hand cards in the take)",
            "3.4",
        )


def _layoff_target(
    s: GameState, side: int, table: _Table, top: Card, onto: MeldRef | None, listed: bool
) -> Where:
    """The meld the top card alone joins (§3.4): the named one (``listed``: not checked
    again), else the first that takes it: the group of its rank, a further group of it, a
    sequence it extends."""
    config = s.config
    if onto is not None:
        where = find_meld(s, side, onto)
        if listed:
            return where
        if not config.pile_layoff_onto_canasta and len(table.get(where)) >= CANASTA_SIZE:
            raise IllegalMoveError(
                f"the {card_text(top)} may not be added to a completed canasta when taking "
                "the pile",
                "3.4",
            )
        return where
    rank = RANK[top]
    candidates: list[Where] = []
    if table.melds[rank]:
        candidates.append((False, rank))
    for i, cards in enumerate(table.extra):
        kind = meld_kind(cards)
        if kind == GROUP and meld_rank(cards) == rank:
            candidates.append((True, i))
        elif kind == SEQUENCE:
            suit, low, high = sequence_span(cards)
            if suit == SUIT[top] and rank in (low - 1, high + 1):
                candidates.append((True, i))
    for where in candidates:
        if config.pile_layoff_onto_canasta or len(table.get(where)) < CANASTA_SIZE:
            return where
    if candidates:
        raise IllegalMoveError(
            f"the {card_text(top)} may only be added to a meld that is not yet a canasta "
            "when taking the pile",
            "3.4",
        )
    raise IllegalMoveError(
        f"to take the pile you need two natural {rank_name(rank)}, or a meld that is not yet "
        f"a canasta to add the {card_text(top)} to",
        "3.4",
    )


# -- counting ----------------------------------------------------------------------------------


def side_canastas(config: RuleConfig, s: GameState, side: int) -> tuple[int, int]:
    """(all canastas, sequence canastas) of a side: what going out asks for (§3.4, §3.5)."""
    total = s.canastas(side)
    sequences = sum(
        1 for m in s.extra_of(side) if len(m) >= CANASTA_SIZE and further_facts(m)[0] == SEQUENCE
    )
    return total, sequences


def sequence_verdicts(state: GameState, seat: int) -> Verdict | None:
    """Verdicts on the listed Samba and Bolivia moves that only the melds can refuse, known
    without the engine's trial, so the move lists keep them in their place unchecked: a new
    sequence, cards growing a sequence (§3.4: one suit, in sequence, three to seven cards;
    §3.8a: touching no other sequence of its suit), two group melds of a rank combined
    (their wild limit, §3.4, and no wild card onto a completed canasta, §3.8a), and
    Bolivia's wild melds begun or grown (§3.5: wild cards only, three to seven).

    Only where nothing else can refuse them (``None`` then: the engine decides): the side
    has opened, nothing obliges the player to go out and two cards stay in hand
    (§1.11.3). The candidates' cards come from the hand (the lists take them from it). A
    side that has not opened gets ``opening_verdicts`` instead; a player obliged to go out,
    ``obliged_verdicts``; at the start of a turn the takes of the pile are decided
    (``take_verdict``), and after the draw a meld of black threes too
    (``black_threes_verdict``)."""
    side = state.side_of[seat]
    if not state.extra:
        return None
    if not state.opened(side):
        return opening_verdicts(state, seat)
    if state.no_discard:
        return None
    if state.must_go_out:
        return obliged_verdicts(state, seat)
    if state.phase is Phase.DRAW:  # (the start of a turn lists takes of the pile only)

        def take(action: Action) -> bool | None:
            if type(action) is TakePile:
                assert isinstance(action, TakePile)
                return take_verdict(state, seat, action)
            return None

        return take
    config = state.config
    room = len(state.hands[seat])
    extra = state.extra_of(side)
    spans = _spans(extra)

    def verdict(action: Action) -> bool | None:
        kind = type(action)
        if kind is Meld:
            assert isinstance(action, Meld)
            if len(action.melds) != 1 or room - len(action.melds[0]) < 2:
                return None
            cards = action.melds[0]
            shape = meld_kind(cards)
            if shape == WILD and config.allow_wild_melds:  # a bolivia begun (§3.5)
                return wild_meld_fits(cards, 0)
            if shape == GROUP and IS_BLACK3[cards[0]]:
                return black_threes_verdict(state, seat, cards)
            if not config.allow_sequences or shape != SEQUENCE:
                return None
            if not sequence_ok(cards):
                return False
            return _touching_span(spans, sequence_span(cards), -1) < 0
        if kind is LayOff:
            assert isinstance(action, LayOff)
            if not action.cards or room - len(action.cards) < 2:
                return None
            if action.suit < 0:
                if action.rank != JOKER_RANK or not config.allow_wild_melds:
                    return None
                # onto the side's wild meld of that number (``find_meld``), within seven
                wild_melds = [m for m in extra if meld_kind(m) == WILD]
                if action.which > len(wild_melds) or action.which < 1:
                    return None
                old = wild_melds[action.which - 1]
                return wild_meld_fits((*old, *action.cards), len(old))
            for i, (suit, low, high) in spans:
                if suit == action.suit and low <= action.rank <= high:
                    old = extra[i]
                    if len(old) >= CANASTA_SIZE:
                        return False
                    merged = (*old, *action.cards)
                    if not sequence_ok(merged):
                        return False
                    return _touching_span(spans, sequence_span(merged), i) < 0
            return None
        if kind is Combine:
            assert isinstance(action, Combine)
            return combine_verdict(state, side, action) if room >= 2 else None
        return None

    return verdict


def obliged_verdicts(state: GameState, seat: int) -> Verdict | None:
    """Verdicts on the listed melds, lay-offs and combinations of a player who must go out
    this turn (partner said yes, or black threes went down, §1.11.2, §1.9), where two cards
    or more stay in hand: the move's own plan (``melding.plan_meld``, ``plan_lay_off``, the
    ruleset's ``plan_combine``: every check it makes), then the dead-end guard's question
    of the hand and melds the plan leaves, ``goingout.can_go_out`` (§1.11.3), without the
    trial's copy of the position. ``None`` (the engine decides) with fewer cards left, or
    where the ruleset keeps a guard of its own."""
    ruleset = rules(state)
    if (
        state.phase is not Phase.PLAY
        or state.no_discard
        or type(ruleset).guard_turn_end is not Ruleset.guard_turn_end
    ):
        return None
    config = state.config
    side = state.side_of[seat]
    forbidden = out_forbidden(state)

    def verdict(action: Action) -> bool | None:
        kind = type(action)
        try:
            if kind is Meld:
                assert isinstance(action, Meld)
                plan = plan_meld(state, seat, action)
            elif kind is LayOff:
                assert isinstance(action, LayOff)
                plan = plan_lay_off(state, seat, action)
            elif kind is Combine:
                assert isinstance(action, Combine)
                plan = ruleset.plan_combine(state, seat, action, listed=False)
            else:
                return None
        except IllegalMoveError:
            return False
        if len(plan.hand) < 2:
            return None
        if forbidden:
            return False
        extra = plan.extra if plan.extra is not None else state.extra_of(side)
        return can_go_out(config, plan.hand, plan.melds, extra=extra)

    return verdict


def black_threes_verdict(state: GameState, seat: int, cards: tuple[Card, ...]) -> bool | None:
    """The engine's verdict on melding black threes ``cards`` from hand, two or more cards
    staying in hand and nothing obliging the player to go out yet (``None`` otherwise):
    three or more of them (or onto the side's black-three meld), never while going out is
    forbidden, and, since they meld only in the turn the player goes out (§1.9), only where
    the hand left can still go out onto the melds after them (the dead-end guard, §1.11.3,
    asks ``goingout.can_go_out`` of the same).

    Where ``cards`` are all the black threes in hand (as the move lists offer them), that
    question is asked of the whole hand on the melds as they are, which has the same
    answer: black threes join nothing but the black-three meld, so a way out of the whole
    hand melds them (three or more; past three, one may instead be the discard) and
    places the rest as a way out of the hand left would, and a way out of the hand left
    is one of the whole hand with the threes melded first. The listing has asked it
    already when weighing a question to partner (§1.11.2), so its memo answers."""
    config = state.config
    hand = state.hands[seat]
    if (
        state.phase is not Phase.PLAY
        or state.must_go_out
        or state.no_discard
        or config.closed_books
        or len(hand) - len(cards) < 2
        or not all(IS_BLACK3[c] for c in cards)
        or type(rules(state)).guard_turn_end is not Ruleset.guard_turn_end
    ):
        return None
    side = state.side_of[seat]
    melds = list(state.melds[side])
    old = melds[THREE]
    if (not old and len(cards) < 3) or out_forbidden(state):
        return False
    if sum(map(IS_BLACK3.__getitem__, hand)) == len(cards):
        return can_go_out(config, hand, state.melds[side], extra=state.extra_of(side))
    melds[THREE] = (*old, *cards)
    rest = list(hand)
    for card in cards:
        rest.remove(card)
    return can_go_out(config, rest, tuple(melds), extra=state.extra_of(side))


def take_verdict(state: GameState, seat: int, take: TakePile) -> bool | None:
    """``plan_variant_take``'s verdict on a take of the pile the move lists offer an opened
    side (the top card alone onto a meld, or with a natural pair from hand), decided without
    a plan or a trial take, where two cards or more stay in hand and nothing obliges the
    player to go out (else ``None``: the engine decides, the dead-end guard may object,
    §1.11.3).

    Its checks in its order (§1.8.2, §3.4, §3.8a), less those the candidates meet by
    construction (a pile to take, support cards held and of the top card's rank): no wild
    card or black three on top, the one-card rule; with a pair, the group meld it makes
    or joins; with the top card alone, an unfrozen pile, the lay-off allowed as a way of
    taking it, and the first meld ``_layoff_target`` picks taking it."""
    config = state.config
    pile = state.pile
    hand = state.hands[seat]
    side = state.side_of[seat]
    if (
        state.phase is not Phase.DRAW
        or state.must_go_out
        or state.no_discard
        or not pile
        or take.onto is not None
        or take.melds
        or not state.opened(side)
    ):
        return None
    top = pile[-1]
    if IS_WILD[top] or IS_BLACK3[top]:
        return False
    rank = RANK[top]
    if not FOUR <= rank <= ACE:
        return None
    if config.one_card_pile_rule and len(hand) == 1 and len(pile) == 1:
        return False
    support = take.cards
    naturals = wilds = 0
    for card in support:
        if IS_WILD[card]:
            wilds += 1
        elif RANK[card] == rank and not IS_RED3[card]:
            naturals += 1
        else:
            return None
    melds = state.melds[side]
    if naturals >= 2 or (naturals == 1 and wilds and not state.pile_frozen):
        if naturals < 2 and "natural_plus_wild" not in config.unfrozen_take_methods:
            return False
        cards = (top, *support)
        old = melds[rank]
        if old and config.multiple_melds_per_rank:
            fault = group_fault(config, rank, (), cards, new=True)
        else:
            fault = group_fault(config, rank, old, cards, new=not old)
        if fault is not None:
            return False
    else:
        if state.pile_frozen or "layoff" not in config.unfrozen_take_methods or support:
            return False
        if not _layoff_fits(state, side, top):
            return False
    left = len(hand) - len(support)
    if left < 2:
        left += sum(1 for c in pile_cards_taken(state) if not IS_RED3[c])
    return True if left >= 2 else None


def _layoff_fits(state: GameState, side: int, top: Card) -> bool:
    """Whether the top card alone joins the meld ``_layoff_target`` picks for it (the first
    of its rank's group melds, then of the sequences it extends, that is not yet a canasta
    where the rules want one that is not) and ``_add_to`` lets it (§3.4, §3.8a)."""
    config = state.config
    rank = RANK[top]
    suit = SUIT[top]
    melds = state.melds[side]
    extra = state.extra_of(side)
    onto_canasta = config.pile_layoff_onto_canasta
    old = melds[rank]
    if old and (onto_canasta or len(old) < CANASTA_SIZE):
        return group_fault(config, rank, old, (top,), new=False) is None
    for i, cards in enumerate(extra):
        kind, meld_rank_of, _, o_suit, low, high = further_facts(cards)
        if kind == GROUP:
            if meld_rank_of != rank:
                continue
        elif kind == SEQUENCE:
            if o_suit != suit or rank not in (low - 1, high + 1):
                continue
        else:
            continue
        if not onto_canasta and len(cards) >= CANASTA_SIZE:
            continue
        if kind == GROUP:
            return group_fault(config, rank, cards, (top,), new=False) is None
        if len(cards) >= CANASTA_SIZE:
            return False  # a samba takes nothing more
        merged = (*cards, top)
        if not sequence_ok(merged):
            return False
        return _touching_span(_spans(extra), (suit, min(low, rank), max(high, rank)), i) < 0
    return False  # (no meld to take it, or only canastas)


def opening_verdicts(state: GameState, seat: int) -> Verdict:
    """For a side that has not opened: a listed meld from hand worth less than the minimum
    still to find (``opening.opening_target``), with two cards or more left in hand (so no
    concealed going-out spares it the minimum, §1.10 rule 6), is refused by the opening
    check at once (``check_opening_meld``, §1.10): known without the trial. Samba's lists
    offer every run of three as a sequence, so most of these are refused at the opening."""
    room = len(state.hands[seat])
    target = opening_target(state, seat)

    def verdict(action: Action) -> bool | None:
        if type(action) is not Meld:
            return None
        assert isinstance(action, Meld)
        if room - sum(len(group) for group in action.melds) < 2:
            return None
        if sum(VALUE[c] for group in action.melds for c in group) < target:
            return False
        return None

    return verdict


def wild_meld_fits(cards: Sequence[Card], old: int) -> bool:
    """Whether ``check_wild_meld`` lets ``cards`` be a wild meld that held ``old`` cards
    before (§3.5): wild cards only, three to seven of them, onto a meld not yet complete."""
    return all(IS_WILD[c] for c in cards) and old < CANASTA_SIZE and 3 <= len(cards) <= CANASTA_SIZE


def combine_verdict(s: GameState, side: int, action: Combine) -> bool | None:
    """``plan_combine``'s verdict on joining the side's first meld of a rank with its second
    (the move the lists offer), or ``None`` for any other pair; the caller has made sure
    nothing but the melds can refuse it (``sequence_verdicts``)."""
    first, second = action.first, action.second
    rank = first.rank
    if (  # (``MeldRef(rank)`` and ``MeldRef(rank, 2)``, field by field)
        first.which != 1
        or first.suit != -1
        or first.high != -1
        or second.rank != rank
        or second.which != 2
        or second.suit != -1
        or second.high != -1
        or not FOUR <= rank <= ACE
        or not s.config.multiple_melds_per_rank
        or not s.melds[side][rank]
    ):
        return None
    keep = s.melds[side][rank]
    for gone in s.extra_of(side):  # (the side's second meld of the rank, in table order)
        facts = further_facts(gone)
        if facts[0] == GROUP and facts[1] == rank:
            return combine_fault(s.config, rank, keep, gone) is None
    return None


# -- candidates for the move lists (``legal``, bots) ----------------------------------------------


def sequence_candidates(state: GameState, side: int, hand: Sequence[Card]) -> list[Action]:
    """Samba and Bolivia moves worth listing (each still checked by the engine): the longest
    run of each suit in hand as a new sequence (its lowest seven cards), hand cards that
    extend a sequence, a wild meld from three wild cards and a wild card onto a wild meld
    (Bolivia), and combining the first two group melds of a rank (§3.4, §3.5). The hand is
    read once, into the ranks held in each suit as bits: most suits hold no three ranks in
    a row, which one test of the bits tells."""
    config = state.config
    out: list[Action] = []
    extra = state.extra_of(side)
    sequences = config.allow_sequences
    wild_melds = config.allow_wild_melds
    ranks = [0, 0, 0, 0]  # per suit, the natural ranks held, as bits
    wilds: list[Card] = []
    if sequences or wild_melds:
        # (a game without sequences or wild melds, Hand and Foot's, reads the hand no further)
        for card in hand:
            if IS_NATURAL[card]:
                ranks[SUIT[card]] |= 1 << RANK[card]
            elif IS_WILD[card]:
                wilds.append(card)
    if sequences:
        for suit in range(4):
            held = ranks[suit]
            if held & held >> 1 & held >> 2:  # (three ranks in a row somewhere)
                out.extend(_runs(suit, held))
        for cards in extra:
            if len(cards) >= CANASTA_SIZE:
                continue
            kind, _, _, suit, low, high = further_facts(cards)
            if kind != SEQUENCE:
                continue
            held = ranks[suit]
            up: list[Card] = []
            rank = high + 1
            while held >> rank & 1 and len(cards) + len(up) < CANASTA_SIZE:
                up.append(suit * 13 + rank)
                rank += 1
            down: list[Card] = []
            rank = low - 1
            while held >> rank & 1 and len(cards) + len(up) + len(down) < CANASTA_SIZE:
                down.append(suit * 13 + rank)
                rank -= 1
            if up or down:
                out.append(LayOff(low, (*up, *down), 1, suit, high))
    if wilds and wild_melds:
        wilds.sort(key=VALUE.__getitem__)  # (stable: the cheapest first, in hand order)
        if len(wilds) >= 3:
            out.append(Meld((tuple(wilds[:3]),)))
        if any(len(m) < CANASTA_SIZE and further_facts(m)[0] == WILD for m in extra):
            out.append(LayOff(JOKER_RANK, (wilds[0],)))
    if config.multiple_melds_per_rank:
        for cards in extra:
            kind, rank, _, _, _, _ = further_facts(cards)
            if kind == GROUP:
                out.append(Combine(MeldRef(rank), MeldRef(rank, 2)))
                break
    return out


def _runs(suit: int, held: int) -> list[Action]:
    """Each run of three or more ranks in ``held`` (a suit's ranks in hand, as bits) as a
    new sequence of its lowest seven cards, lowest run first."""
    out: list[Action] = []
    start = -1
    for rank in range(FOUR, ACE + 2):  # (no card of rank ACE + 1: the last run ends there)
        if held >> rank & 1:
            if start < 0:
                start = rank
        elif start >= 0:
            if rank - start >= 3:
                end = min(rank, start + CANASTA_SIZE)
                out.append(Meld((tuple(suit * 13 + r for r in range(start, end)),)))
            start = -1
    return out


def way_out_steps(state: GameState, side: int, hand: Sequence[Card]) -> list[Action]:
    """Every single step of a way out, for a player who must go out (partner said yes, or
    black threes were melded, §1.11.2, §1.9), on a table of further melds (Samba, Bolivia,
    Hand and Foot): cards of a rank onto each open group meld of it, wild cards (one to
    three) onto each, new group melds of two to seven naturals with up to three wild cards,
    two open group melds of a rank combined, black threes, wild melds and a wild card onto
    each (§3.5), and, where sequences are played (§3.4), each run of three natural ranks of
    a suit as a new sequence and each card that extends an open sequence by one rank.

    Any way out the going-out search finds is a sequence of such steps (a sequence grows
    from three of its cards one rank at a time), and after a legal step the dead-end guard
    has checked that a way out is left, so the engine's check of these candidates always
    leaves the next step listed: the move lists never run dry for such a player. Where
    books close at seven (Hand and Foot) no step makes a meld longer; elsewhere a group
    meld grows, and two combine, past seven."""
    config = state.config
    closed = config.closed_books
    naturals: dict[int, list[Card]] = {}
    suits = [0, 0, 0, 0]  # per suit, the natural ranks held, as bits (for sequences)
    for card in hand:
        if not IS_WILD[card]:
            naturals.setdefault(RANK[card], []).append(card)
            if IS_NATURAL[card]:
                suits[SUIT[card]] |= 1 << RANK[card]
    wilds = sorted((c for c in hand if IS_WILD[c]), key=VALUE.__getitem__)
    out: list[Action] = []
    counts: dict[int, int] = {}
    groups: dict[int, list[tuple[int, int]]] = {}  # rank -> (which, size) of open melds
    wild_which = 0
    for meld in (*state.melds[side], *state.extra_of(side)):
        if not meld:
            continue
        kind, _, _, suit, low, high = further_facts(meld)
        if kind == SEQUENCE:  # (one rank up or down; no wild card in a sequence, §3.4)
            if len(meld) < CANASTA_SIZE:
                for rank in (high + 1, low - 1):
                    if FOUR <= rank <= ACE and suits[suit] >> rank & 1:
                        out.append(LayOff(low, (suit * 13 + rank,), 1, suit, high))
            continue
        rank = next((RANK[c] for c in meld if not IS_WILD[c]), JOKER_RANK)
        if rank == JOKER_RANK:
            wild_which += 1
            which = wild_which
        else:
            counts[rank] = which = counts.get(rank, 0) + 1
        room = CANASTA_SIZE - len(meld) if closed else len(hand)
        if room <= 0:
            continue
        groups.setdefault(rank, []).append((which, len(meld)))
        own = naturals.get(rank, []) if rank != JOKER_RANK else []
        out.extend(LayOff(rank, tuple(own[:k]), which) for k in range(1, min(len(own), room) + 1))
        if rank != THREE:
            top = min(len(wilds), room, 3 if rank != JOKER_RANK else room)
            out.extend(LayOff(rank, tuple(wilds[:z]), which) for z in range(1, top + 1))
    for rank, places in groups.items():
        if rank in (THREE, JOKER_RANK):
            continue
        for (one, size1), (two, size2) in itertools.combinations(places, 2):
            if size1 + size2 <= CANASTA_SIZE or not closed:
                out.append(Combine(MeldRef(rank, one), MeldRef(rank, two)))
    for rank, own in naturals.items():
        if rank == THREE:
            if rank not in groups and not counts.get(THREE):
                out.extend(Meld((tuple(own[:k]),)) for k in range(3, min(len(own), 7) + 1))
            continue
        for x in range(2, min(len(own), CANASTA_SIZE) + 1):
            for z in range(min(len(wilds), 3, CANASTA_SIZE - x) + 1):
                if x + z >= 3:
                    out.append(Meld(((*own[:x], *wilds[:z]),)))
    if config.allow_sequences:
        for suit, held in enumerate(suits):
            for low in range(FOUR, ACE - 1):
                if held >> low & 7 == 7:  # (three ranks in a row from ``low``)
                    out.append(Meld((tuple(suit * 13 + r for r in range(low, low + 3)),)))
    if config.allow_wild_melds:
        out.extend(Meld((tuple(wilds[:z]),)) for z in range(3, min(len(wilds), 7) + 1))
    return out
