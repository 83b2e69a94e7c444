"""Modern American Canasta: its own ruleset (docs/rules.md §3.6, §3.8a; SC39).

The rules research recommends a module of its own rather than flags on classic: the game keeps the
classic table (one meld per rank per side, laid out in ``GameState.melds``) but changes most
rules around it, and its scoring depends on how many canastas a side made. The classic
modules ask the ruleset's hooks (``shared.rules.ruleset``) at one line each; ``ModernAmerican``
at the end answers them with the rules here:

* the deal (``dealing``): no upcard; seven bonus cards (the *talon*) are set aside in packets
  of four and three; every three, red or black, is laid out and replaced (``threes``);
* the start of a turn (``engine``): a player whose side opened from hand in the previous
  turn draws its packet, if the stock still holds nine cards (§3.8a);
* melds (``melding``): at least two natural cards, at most two wild cards and seven cards;
  a canasta is closed; sevens never take wild cards; aces take them only when the side's
  initial meld held a wild card; wild cards alone form a wild meld (kept at the twos'
  index of the rank-indexed melds, which no other meld uses); the initial meld needs the
  score-dependent minimum and a natural triple (three naturals of a rank, no wild card);
* the pile (``pile``): always frozen, taken only with a natural pair of the top card's
  rank, never when the side already has five or more cards of that rank down; the top
  card does not count toward the minimum, and an opening by taking the pile earns no talon;
* going out (``goingout``): two canastas and a final discard (a hand is never melded out);
* scoring (``scoring``): the special canastas and penalties, both colours of threes (plus,
  zero or minus by the side's canastas), melded cards subtracted without a canasta.

The Canasta League rules that docs/rules.md §3.8a lists as options (the rule of five, dead
ranks, the empty-pile discard limit, no going out with an unfinished special meld) are
here too, off by default. The fourteen-card special hands are not implemented.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..actions import Action, LayOff, Meld, TakePile
from ..cards import (
    ACE,
    FOUR,
    IS_BLACK3,
    IS_RED3,
    IS_THREE,
    IS_WILD,
    JOKER,
    JOKER_RANK,
    RANK,
    SEVEN,
    THREE,
    TWO,
    VALUE,
    Card,
    card_text,
    rank_name,
    rank_text,
    sort_cards,
)
from ..config import RuleConfig
from ..edits import Plan, give, remove_cards
from ..errors import IllegalMoveError
from ..goingout import enough_canastas, why_not_out
from ..melds import CANASTA_SIZE, WILD, check_wild_meld, meld_kind, meld_rank
from ..opening import opening_target, require_minimum
from ..pile import take_prologue
from ..ruleset import MeldShown, Ruleset, register
from ..state import Event, GameState, Melds, out_forbidden
from ..threes import lay_out_red_threes

WILD_MELD = TWO
"""Where a side's wild-card meld lies in its rank-indexed melds (no meld of twos exists)."""
TALON_PACKETS = (4, 3)
"""§3.6: the first side to open draws four bonus cards, the second three."""
TALON_MIN_STOCK = 9
"""§3.6, §3.8a: the talon is drawn only while the stock holds at least nine cards."""
MAX_WILDS = 2
THREES_TOTALS = (0, 100, 300, 500, 1000)
"""§3.6: one to four threes of one colour are worth 100, 300, 500, 1000."""
NATURAL_SPECIAL_BONUS = 2500
"""§3.6: a natural canasta of aces, or of sevens."""
WILD_CANASTA_BONUS = 2000
"""§3.6: a wild canasta with one to three jokers."""
FOUR_JOKERS_BONUS = 2500
"""§3.6: a wild canasta of all four jokers and three twos."""
TWOS_CANASTA_BONUS = 3000
"""§3.6: a wild canasta of twos only."""
UNFINISHED_SPECIAL_PENALTY = 2500
"""§3.6: an unfinished natural meld of aces or sevens."""
UNFINISHED_WILD_PENALTY = 2000
"""§3.6: an unfinished wild meld (the four-joker case is ``wild_meld_four_jokers_penalty``)."""
HELD_PENALTY = 1500
"""§3.6: three or more aces, or three or more sevens, left in one player's hand."""


# -- what a meld is --------------------------------------------------------------------------------


def canasta_kind(rank: int, cards: Sequence[Card]) -> str:
    """The kind of a completed meld (``""`` below seven cards), as views and scoring name it:
    ``natural``, ``mixed``, ``natural_aces``, ``natural_sevens``, ``wild``, ``wild_jokers``
    (all four jokers) or ``wild_twos`` (§3.6)."""
    if len(cards) < CANASTA_SIZE:
        return ""
    if rank == WILD_MELD:
        jokers = sum(1 for c in cards if c == JOKER)
        return "wild_twos" if not jokers else "wild_jokers" if jokers >= 4 else "wild"
    if any(IS_WILD[c] for c in cards):
        return "mixed"
    return "natural_aces" if rank == ACE else "natural_sevens" if rank == SEVEN else "natural"


CANASTA_BONUS = {
    "natural": 500,
    "mixed": 300,
    "natural_aces": NATURAL_SPECIAL_BONUS,
    "natural_sevens": NATURAL_SPECIAL_BONUS,
    "wild": WILD_CANASTA_BONUS,
    "wild_jokers": FOUR_JOKERS_BONUS,
    "wild_twos": TWOS_CANASTA_BONUS,
}
"""§3.6: every canasta's bonus by its kind."""


def meld_label(rank: int) -> str:
    """How a meld is named at the table and in ``lay``: its rank, or ``wild``."""
    return "wild" if rank == WILD_MELD else rank_text(rank)


def dead(s: GameState, rank: int) -> bool:
    """Whether ``rank`` is dead under ``dead_ranks`` (§3.8a): either side completed a
    canasta of it."""
    return s.config.dead_ranks and any(len(melds[rank]) >= CANASTA_SIZE for melds in s.melds)


def aces_take_wilds(s: GameState, side: int, opening: Sequence[Card] = ()) -> bool:
    """§3.6, §3.8a: aces may hold wild cards only when the side's initial meld held one
    (``opening`` is that meld's cards when it is being made now)."""
    return s.wild_opening[side] or any(IS_WILD[c] for c in opening)


def _aces_may_hold_wilds(s: GameState, old: Sequence[Card], aces_wild: bool) -> bool:
    """§3.6 "aces stay natural unless a wild was included in the opening meld": by default
    (§3.8a) the side's initial meld (``aces_wild``, from ``aces_take_wilds``); under
    ``aces_wild_rule = "aces_meld"`` the aces meld's own first laying, so a new aces meld may
    hold wild cards and an old one only if it already does."""
    if s.config.aces_wild_rule == "aces_meld":
        return not old or _has_wild(old)
    return aces_wild


def aces_meld_takes_wilds(s: GameState, side: int) -> bool:
    """Whether the side's aces meld on the table may take a wild card now (§3.6, §3.8a,
    either ``aces_wild_rule``), for the bot."""
    return _aces_may_hold_wilds(s, s.melds[side][ACE], aces_take_wilds(s, side))


def check_addition(
    s: GameState, rank: int, old: Sequence[Card], added: Sequence[Card], aces_wild: bool
) -> tuple[Card, ...]:
    """The meld of ``rank`` after ``added`` joins ``old`` (``old`` empty: a new meld), or
    the rule it breaks (§3.6 meld limits; §3.8a options)."""
    merged = (*old, *added)
    if len(old) >= CANASTA_SIZE:
        raise IllegalMoveError(
            f"the {meld_label(rank)} canasta is complete: in Modern American nothing more "
            "joins a canasta",
            "3.6",
        )
    if len(merged) > CANASTA_SIZE:
        raise IllegalMoveError(
            f"a meld holds at most seven cards; this one would hold {len(merged)}", "3.6"
        )
    if not old and len(merged) < 3:
        raise IllegalMoveError(
            f"a new meld needs at least three cards; {len(merged)} are not enough", "1.9"
        )
    if rank == WILD_MELD:
        if not all(IS_WILD[c] for c in added):
            raise IllegalMoveError("a wild meld holds only twos and jokers", "3.6")
        return merged
    if rank == THREE:
        raise IllegalMoveError("threes are laid out beside you, never melded", "3.6")
    for card in added:
        if not IS_WILD[card] and RANK[card] != rank:
            raise IllegalMoveError(
                f"{card_text(card)} does not fit a meld of {rank_name(rank)}", "1.9"
            )
    if dead(s, rank):
        raise IllegalMoveError(
            f"{rank_name(rank)} are dead: a canasta of them is complete (dead ranks)", "3.8a"
        )
    wilds = sum(1 for c in merged if IS_WILD[c])
    naturals = len(merged) - wilds
    if naturals < 2:
        raise IllegalMoveError("a meld needs at least two natural cards", "1.9")
    if not wilds:
        return merged
    if rank == SEVEN:
        raise IllegalMoveError("sevens never take wild cards", "3.6")
    if rank == ACE and not _aces_may_hold_wilds(s, old, aces_wild):
        why = (
            "the aces were first melded without one"
            if s.config.aces_wild_rule == "aces_meld"
            else "your side's initial meld held no wild card"
        )
        raise IllegalMoveError(f"aces stay natural: {why}", "3.6")
    if wilds > MAX_WILDS:
        raise IllegalMoveError(
            f"a meld may hold at most two wild cards; this one would hold {wilds}", "3.6"
        )
    config = s.config
    if config.rule_of_five and old and any(IS_WILD[c] for c in added) and naturals < 5:
        raise IllegalMoveError(
            "a wild card joins a meld only once it holds five natural cards (rule of five)",
            "3.8a",
        )
    return merged


def group_by_meld(groups: Sequence[Sequence[Card]]) -> dict[int, tuple[Card, ...]]:
    """Meld groups joined by the meld they go to: their rank, or ``WILD_MELD`` for wild
    cards alone (one meld per rank, and one wild meld, per side)."""
    by_rank: dict[int, tuple[Card, ...]] = {}
    for group in groups:
        if not group:
            raise IllegalMoveError("a meld needs cards", "1.9")
        rank = WILD_MELD if all(IS_WILD[c] for c in group) else meld_rank(group)
        by_rank[rank] = (*by_rank.get(rank, ()), *group)
    return by_rank


def _has_natural_triple(groups: Sequence[Sequence[Card]]) -> bool:
    return any(
        len(g) >= 3 and not any(IS_WILD[c] for c in g) and RANK[g[0]] != THREE for g in groups
    )


def check_opening(s: GameState, seat: int, from_hand: Sequence[Sequence[Card]], value: int) -> None:
    """§3.6, SC39: the initial meld reaches the minimum for the side's score (125, 155,
    180) in cards from the hand (never the pile's top card) and holds a natural triple of
    those cards."""
    if not _has_natural_triple(from_hand):
        raise IllegalMoveError(
            "your side's initial meld must include three natural cards of one rank without a "
            "wild card, from your hand (the pile's top card does not count)",
            "3.6",
        )
    require_minimum(s, seat, value, with_pile=False)


# -- the moves -------------------------------------------------------------------------------------


def plan_meld(s: GameState, seat: int, action: Meld, listed: bool) -> Plan:
    """§3.6: new melds from the hand, or cards joining the side's melds of their rank
    (``listed``: a meld the engine listed, built without its checks)."""
    side = s.side_of[seat]
    if not action.melds:
        raise IllegalMoveError("name the cards to meld, for example: meld 7h 7c 7s", "1.9")
    hand = remove_cards(s.hands[seat], [c for g in action.melds for c in g], "to meld")
    by_rank = group_by_meld(action.melds)
    melds = list(s.melds[side])
    touched = tuple((rank, bool(melds[rank])) for rank in by_rank)
    if listed:
        for rank, cards in by_rank.items():
            melds[rank] = (*melds[rank], *cards)
        return Plan(side, hand, tuple(melds), touched, len(hand), False)
    opened = s.opened(side)
    opening = () if opened else tuple(c for g in action.melds for c in g)
    aces_wild = aces_take_wilds(s, side, opening)
    for rank, cards in by_rank.items():
        melds[rank] = check_addition(s, rank, melds[rank], cards, aces_wild)
    if not opened:
        if s.config.open_via_pile == "required":
            raise IllegalMoveError(
                "under these rules a side opens only by taking the discard pile", "D21"
            )
        check_opening(s, seat, action.melds, sum(VALUE[c] for c in opening))
    return Plan(side, hand, tuple(melds), touched, len(hand), False)


def plan_lay_off(s: GameState, seat: int, action: LayOff, listed: bool) -> Plan:
    """§1.6 T2, §3.6: cards from the hand onto the side's meld of a rank (``lay wild``: its
    wild meld; ``listed``: the cards' fit is not checked again)."""
    if action.which != 1 or action.suit >= 0:
        raise IllegalMoveError("in this game a side has one meld per rank: name it by its rank")
    side = s.side_of[seat]
    rank = WILD_MELD if action.rank == JOKER_RANK else action.rank
    if not 0 <= rank < 13:
        raise IllegalMoveError("name the rank of the meld to lay off to, for example: lay 9 9d")
    if not action.cards:
        raise IllegalMoveError("name the cards to lay off, for example: lay 9 9d", "1.6")
    existing = s.melds[side][rank]
    if not existing:
        what = "wild meld" if rank == WILD_MELD else f"meld of {rank_name(rank)}"
        raise IllegalMoveError(f"your side has no {what} to add to", "1.6")
    hand = remove_cards(s.hands[seat], action.cards, "to lay off")
    melds = list(s.melds[side])
    melds[rank] = (
        (*existing, *action.cards)
        if listed
        else check_addition(s, rank, existing, action.cards, aces_take_wilds(s, side))
    )
    return Plan(side, hand, tuple(melds), ((rank, True),), len(hand), False)


def plan_take(s: GameState, seat: int, action: TakePile, listed: bool) -> Plan:
    """§3.6 taking the pile, every check in order: it is always frozen, so a natural pair
    of the top card's rank from the hand takes it, never while the side has five or more
    cards of that rank down (the meld would pass seven); an unopened side's opening counts
    the cards from its hand only (SC39). ``listed``: a take the engine listed, built
    without its checks."""
    side, top, rank, hand, opened, naturals, _ = take_prologue(
        s, seat, action, refuse_black_top=False, listed=listed
    )
    if listed:
        return _listed_take(s, side, top, rank, hand, action)
    support = action.cards
    if naturals < 2:
        raise IllegalMoveError(
            f"the pile is always frozen in Modern American: to take it you need two natural "
            f"{rank_name(rank)} from your hand to meld with the {card_text(top)}",
            "3.6",
        )
    melds = list(s.melds[side])
    existing = melds[rank]
    if len(existing) >= 5:
        raise IllegalMoveError(
            f"your side already has {len(existing)} {rank_name(rank)} down: the pile is not "
            "taken onto a meld of five or more cards",
            "3.6",
        )
    from_hand = (*support, *(c for g in action.melds for c in g))
    aces_wild = aces_take_wilds(s, side, () if opened else from_hand)
    melds[rank] = check_addition(s, rank, existing, (top, *support), aces_wild)
    touched = [(rank, bool(existing))]
    if action.melds:
        hand = remove_cards(hand, [c for g in action.melds for c in g], "to meld")
        for r, cards in group_by_meld(action.melds).items():
            touched.append((r, bool(melds[r]) and r != rank))
            melds[r] = check_addition(s, r, melds[r], cards, aces_wild)
    if not opened:
        check_opening(s, seat, [support, *action.melds], sum(VALUE[c] for c in from_hand))
    return Plan(side, hand, tuple(melds), tuple(touched), len(hand) + len(s.pile) - 1, False)


def _listed_take(
    s: GameState, side: int, top: Card, rank: int, hand: tuple[Card, ...], action: TakePile
) -> Plan:
    """``plan_take``'s plan of a take the engine listed: the top card and the support join
    the meld of its rank, the further groups theirs, unchecked."""
    melds = list(s.melds[side])
    touched = [(rank, bool(melds[rank]))]
    melds[rank] = (*melds[rank], top, *action.cards)
    if action.melds:
        hand = remove_cards(hand, [c for g in action.melds for c in g], "to meld")
        for r, cards in group_by_meld(action.melds).items():
            touched.append((r, bool(melds[r]) and r != rank))
            melds[r] = (*melds[r], *cards)
    return Plan(side, hand, tuple(melds), tuple(touched), len(hand) + len(s.pile) - 1, False)


def note_opening(s: GameState, seat: int, cards: Sequence[Card], *, by_take: bool) -> None:
    """Record a side's initial meld just made (§3.6, §3.8a): whether it held a wild card
    (for its aces), and the talon packet its player draws at the next turn: the first
    opener's four cards, the second's three, none for an opening by taking the pile."""
    side = s.side_of[seat]
    s.wild_opening = tuple(
        any(IS_WILD[c] for c in cards) if i == side else w for i, w in enumerate(s.wild_opening)
    )
    if by_take:
        return
    earlier = sum(1 for other in range(len(s.melds)) if other != side and s.opened(other))
    if earlier < len(s.talon) and s.talon[earlier]:
        s.talon_owed = tuple(earlier + 1 if i == seat else n for i, n in enumerate(s.talon_owed))
        if s.config.talon_timing == "at_once":  # §3.8a's option: no wait for the next turn
            draw_talon(s, seat)


def draw_talon(s: GameState, seat: int) -> None:
    """§3.6, §3.8a: at the start of the turn after its side opened from hand (or at once,
    under ``talon_timing = "at_once"``), the player draws the side's talon packet (besides
    the normal draw) if the stock holds at least nine cards now; otherwise the packet stays
    aside. Threes in it are laid out and replaced."""
    packet = s.talon_owed[seat]
    s.talon_owed = tuple(0 if i == seat else n for i, n in enumerate(s.talon_owed))
    if len(s.stock) < TALON_MIN_STOCK:
        s.events = (
            *s.events,
            Event(seat, "talon", text="no bonus cards: the stock holds fewer than nine cards"),
        )
        return
    cards = s.talon[packet - 1]
    s.talon = tuple(() if i == packet - 1 else p for i, p in enumerate(s.talon))
    give(s, seat, cards)
    s.events = (
        *s.events,
        Event(seat, "talon", private=cards, text=f"drew {len(cards)} bonus cards"),
    )
    lay_out_red_threes(s, seat)


def set_aside_talon(s: GameState, talon: tuple[tuple[Card, ...], ...] | None = None) -> None:
    """§3.6: the deal sets seven bonus cards aside, in packets of four and three, from the
    top of the stock (or the packets a scenario names); no upcard is turned."""
    if talon is None:
        first, second = TALON_PACKETS
        talon = (s.stock[:first], s.stock[first : first + second])
        s.stock = s.stock[first + second :]
    s.talon = talon
    s.talon_owed = (0,) * s.config.players
    s.wild_opening = (False,) * s.config.sides


# -- discarding and going out ----------------------------------------------------------------------


def unfinished_special(s: GameState, side: int) -> str:
    """Under ``no_out_with_unfinished_special`` (§3.8a), the side's unfinished natural aces,
    sevens or wild meld that forbids going out (``""`` when none does)."""
    if not s.config.no_out_with_unfinished_special:
        return ""
    for rank in (ACE, SEVEN, WILD_MELD):
        if _penalised(rank, s.melds[side][rank]):
            return f"your side's {meld_label(rank)} meld is unfinished"
    return ""


def check_discard(s: GameState, seat: int, card: Card) -> None:
    """``swad_empty_pile`` (§3.8a): no seven, wild card, ace or card of a dead rank onto an
    empty pile, unless the hand holds nothing else."""
    if not s.config.swad_empty_pile or s.pile:
        return
    if _swad(s, card) and not all(_swad(s, c) for c in s.hands[seat]):
        raise IllegalMoveError(
            "sevens, wild cards, aces and dead cards may not be discarded onto an empty pile",
            "3.8a",
        )


def _swad(s: GameState, card: Card) -> bool:
    return IS_WILD[card] or RANK[card] in (SEVEN, ACE) or dead(s, RANK[card])


def _has_wild(cards: Sequence[Card]) -> bool:
    return any(IS_WILD[c] for c in cards)


def can_go_out(s: GameState, seat: int, hand: Sequence[Card], minimum: int | None) -> bool:
    """Whether ``hand`` can go out this turn: every card but one melded onto the side's melds
    and the last one discarded, with two canastas (§3.6).

    Exact both ways (``going_out_moves``): asking partner is allowed only when a "yes" can be
    obeyed, a player obliged to go out may make no play that rules it out, and the dead-end
    guard leans on the answer, so a missed way out refuses a legal play and an invented one
    strands a player. ``minimum`` is not used: Modern American has no exemption from the
    opening's minimum and natural triple (whatever D10 says), so an unopened side's target
    is read from the state.
    """
    return _way_out(s, seat, hand) is not None


def going_out_moves(
    s: GameState, seat: int, hand: Sequence[Card], minimum: int | None = None
) -> list[Action] | None:
    """The melds and lay-offs of one way out before the final discard (``None``: there is
    none), so that a player obliged to go out is always offered a move toward it."""
    way = _way_out(s, seat, hand)
    if way is None:
        return None
    discard, share = way
    rest = list(hand)
    rest.remove(discard)
    side = s.side_of[seat]
    return _moves(s.melds[side], rest, share, s.opened(side))


def _way_out(s: GameState, seat: int, hand: Sequence[Card]) -> tuple[Card, list[int]] | None:
    """The search behind ``can_go_out``: the final discard and the wild cards each meld
    takes (index ``WILD_MELD``: the wild meld), or ``None``.

    Only the rank of a discarded natural matters (and of wild cards, the cheapest, which
    keeps the most value for an opening), so one card of each is tried, cheapest first: a
    bot following the way out keeps its best cards on the table.

    An unopened side opens with everything in one meld action (``_moves``): more never
    hurts an opening, and a wild card on its aces is then in it (§3.6, §3.8a). The minimum
    counts every card melded. The natural triple is almost always there: two canastas
    made from the hand hold a rank of five or more naturals (a meld holds two wild cards,
    and only one is a wild meld), three of which can be it. Only when fewer canastas are
    asked for is a rank of three naturals kept free of wild cards to be the triple (laying
    wild cards onto it after the opening, which that minimum would not count, is not
    searched).
    """
    side = s.side_of[seat]
    if not hand or s.no_discard:  # §3.6: a final discard is required
        return None
    opened = s.opened(side)
    if not opened and not _may_open_from_hand(s, seat):
        return None
    forced = _forced_discard(s, side, hand)
    if forced == -2:
        return None
    aces_wild = aces_take_wilds(s, side) or not opened
    target = 0 if opened else opening_target(s, seat)
    tried: dict[int, Card] = {}
    for card in sorted(hand, key=VALUE.__getitem__):
        kind = -1 if IS_WILD[card] else RANK[card]
        if forced < 0 or kind == forced:
            tried.setdefault(kind, card)
    for discard in tried.values():
        rest = list(hand)
        rest.remove(discard)
        if not opened and sum(VALUE[c] for c in rest) < target:
            continue
        share = _spread(s, side, rest, aces_wild)
        if share is not None and not opened and not _has_triple(rest, share):
            triples = [r for r in range(FOUR, ACE + 1) if sum(RANK[c] == r for c in rest) == 3]
            share = next(
                (w for r in triples if (w := _spread(s, side, rest, aces_wild, r)) is not None),
                None,
            )
        if share is not None:
            return discard, share
    return None


def _has_triple(cards: Sequence[Card], share: list[int]) -> bool:
    """Whether the melds of a way out hold a natural triple for an opening: a rank of four
    or more naturals (three split off), or of three with no wild card."""
    counts = [0] * 14
    for card in cards:
        counts[RANK[card]] += 1
    return any(counts[r] >= 4 or (counts[r] == 3 and not share[r]) for r in range(FOUR, ACE + 1))


def _forced_discard(s: GameState, side: int, hand: Sequence[Card]) -> int:
    """Cheap necessary conditions, which most positions fail, sparing the search: the rank
    of the one natural that has no place and so must be the discard (-1: none), or -2 when
    more than one card has none or too few melds could reach seven cards for the canastas
    asked for. A natural has no place when its rank has no meld and it is alone, when its
    meld is closed or would pass seven cards, or when the rank is a three or dead."""
    counts = [0] * 14
    wilds = 0
    for card in hand:
        if IS_WILD[card]:
            wilds += 1
        else:
            counts[RANK[card]] += 1
    melds = s.melds[side]
    stranded = 0
    forced = -1
    possible = 0
    for rank in range(THREE, ACE + 1):
        size = len(melds[rank])
        added = counts[rank]
        if size >= CANASTA_SIZE:
            possible += 1
            lost = added
        elif not added:
            lost = 0
        elif rank == THREE or dead(s, rank) or (not size and added == 1):
            lost = added
        else:
            lost = max(size + added - CANASTA_SIZE, 0)
        if lost:
            stranded += lost
            forced = rank
            if stranded > 1:
                return -2
        total = size + added - lost if size < CANASTA_SIZE else 0
        if total and total + min(wilds, MAX_WILDS) >= CANASTA_SIZE:
            possible += 1  # (an upper bound: sevens, and aces perhaps, take no wild card)
    if len(melds[WILD_MELD]) + wilds >= CANASTA_SIZE:
        possible += 1
    return forced if possible >= s.config.canastas_to_go_out else -2


def _may_open_from_hand(s: GameState, seat: int) -> bool:
    """Whether an unopened side may open from its hand this turn and the search sees the
    whole turn: not under ``open_via_pile = "required"``, and not when ``talon_timing =
    "at_once"`` would hand the player a talon packet in the middle of it (its cards, and
    the threes among them replaced from the stock, are not searched: no way out is claimed
    through them)."""
    config = s.config
    if config.open_via_pile == "required":
        return False
    if config.talon_timing != "at_once" or len(s.stock) < TALON_MIN_STOCK:
        return True
    earlier = sum(1 for other in range(len(s.melds)) if s.opened(other))
    return not (earlier < len(s.talon) and s.talon[earlier])


def _spread(
    s: GameState, side: int, cards: Sequence[Card], aces_wild: bool, natural: int = -1
) -> list[int] | None:
    """How many wild cards each meld takes when all of ``cards`` are placed and the side
    ends with the canastas it needs (``None``: no way).

    Naturals of a rank have only their rank's meld to go to; the wild cards are spread by
    a small knapsack over the melds, each offering the counts it may take
    (``_wild_counts``), keeping the most canastas for each number of wild cards used. It is
    exact where placing wild cards canasta-first was not: a wild card a pair needed went to
    a canasta, one that fitted an unfinished meld was left over, two went to two melds
    where both could finish one. The meld of rank ``natural`` takes none (an opening's
    natural triple).
    """
    counts = [0] * 14
    wilds = 0
    for card in cards:
        if IS_WILD[card]:
            wilds += 1
        else:
            counts[RANK[card]] += 1
    melds = s.melds[side]
    best: list[int] = [0] + [-1] * wilds  # the most canastas for each number of wilds used
    choices: list[list[int]] = [[0] * 13 for _ in range(wilds + 1)]
    for rank in range(13):
        options = _wild_counts(s, rank, melds[rank], counts[rank], aces_wild, wilds)
        if rank == natural:
            options = [(x, done) for x, done in options if not x]
        if not options:
            return None
        if options == [(0, False)]:
            continue
        new = [-1] * (wilds + 1)
        picks = list(choices)
        for used in range(wilds + 1):
            if best[used] < 0:
                continue
            for x, done in options:
                if used + x <= wilds and best[used] + done > new[used + x]:
                    new[used + x] = best[used] + done
                    picks[used + x] = [*choices[used][:rank], x, *choices[used][rank + 1 :]]
        best, choices = new, picks
    if best[wilds] < s.config.canastas_to_go_out:
        return None
    return choices[wilds]


def _wild_counts(
    s: GameState, rank: int, old: Sequence[Card], added: int, aces_wild: bool, wilds: int
) -> list[tuple[int, bool]]:
    """The numbers of wild cards the meld of ``rank`` (index ``WILD_MELD``: the wild meld)
    may take along with ``added`` naturals of the hand, each with whether the meld then is
    a canasta: the engine's checks (``check_addition``) as counts, and under
    ``no_out_with_unfinished_special`` (§3.8a) no unfinished aces, sevens or wild meld."""
    size = len(old) + added
    if len(old) >= CANASTA_SIZE:
        return [(0, True)] if not added else []
    forbid_unfinished = s.config.no_out_with_unfinished_special
    if rank == WILD_MELD:
        out = [] if forbid_unfinished and old else [(0, False)]
        low = 1 if old else 3
        for x in range(low, min(wilds, CANASTA_SIZE - len(old)) + 1):
            done = len(old) + x >= CANASTA_SIZE
            if done or not forbid_unfinished:
                out.append((x, done))
        return out
    if not added and not old:
        return [(0, False)]
    old_wilds = sum(1 for c in old if IS_WILD[c])
    naturals = size - old_wilds
    out = []
    for x in range(min(wilds, CANASTA_SIZE - size) + 1):
        total_wilds = old_wilds + x
        unfinished = size + x < CANASTA_SIZE
        if forbid_unfinished and rank in (ACE, SEVEN) and unfinished and not total_wilds:
            continue
        if (added or x) and not _addition_allowed(s, rank, old, size + x, naturals, x, aces_wild):
            continue
        out.append((x, not unfinished))
    return out


def _addition_allowed(
    s: GameState, rank: int, old: Sequence[Card], size: int, naturals: int, x: int, aces: bool
) -> bool:
    """``check_addition``'s verdict on the meld of natural ``rank`` growing from ``old`` to
    ``size`` cards, ``naturals`` of them natural and ``x`` wild cards new (as counts)."""
    wilds = size - naturals
    if rank == THREE or dead(s, rank) or size > CANASTA_SIZE or naturals < 2:
        return False
    if not old and size < 3:
        return False
    if not wilds:
        return True
    if rank == SEVEN or wilds > MAX_WILDS:
        return False
    if rank == ACE and not _aces_may_hold_wilds(s, old, aces):
        return False
    return not (s.config.rule_of_five and old and x and naturals < 5)


def _moves(melds: Melds, cards: Sequence[Card], share: list[int], opened: bool) -> list[Action]:
    """The actions of a way out (``_spread``'s ``share``): a lay-off or a new meld per rank
    once the side has opened; otherwise one opening meld holding everything, three naturals
    of its largest rank kept apart as its natural triple (SC39)."""
    wilds = sorted((c for c in cards if IS_WILD[c]), key=VALUE.__getitem__, reverse=True)
    groups: list[tuple[Card, ...]] = []  # jokers to the group melds first: a wild meld of
    out: list[Action] = []  # twos alone is the best canasta (§3.6)
    for rank in range(13):
        naturals = [c for c in cards if not IS_WILD[c] and RANK[c] == rank]
        extra = tuple(wilds[: share[rank]])
        del wilds[: share[rank]]
        if not naturals and not extra:
            continue
        if not opened:
            groups.append((*naturals, *extra))
        elif melds[rank]:
            out.append(LayOff(JOKER_RANK if rank == WILD_MELD else rank, (*naturals, *extra)))
        else:
            out.append(Meld(((*naturals, *extra),)))
    if groups:
        largest = max(range(len(groups)), key=lambda i: sum(not IS_WILD[c] for c in groups[i]))
        group = groups[largest]
        if sum(not IS_WILD[c] for c in group) >= 4 and any(IS_WILD[c] for c in group):
            natural = tuple(c for c in group if not IS_WILD[c])
            groups[largest : largest + 1] = [natural[:3], (*natural[3:], *group[len(natural) :])]
        out.append(Meld(tuple(groups)))
    return out


# -- scoring ---------------------------------------------------------------------------------------


def _penalised(rank: int, cards: Sequence[Card]) -> bool:
    """§3.6: an unfinished natural meld of aces or sevens, or an unfinished wild meld."""
    if not cards or len(cards) >= CANASTA_SIZE:
        return False
    return rank == WILD_MELD or (rank in (ACE, SEVEN) and not _has_wild(cards))


def threes_points(count: int, canastas: int) -> int:
    """§3.6: one colour's threes, minus without a canasta, nothing with one, plus with two."""
    value = THREES_TOTALS[count]  # a 108-card deck holds four of each colour
    return -value if canastas == 0 else 0 if canastas == 1 else value


def score_side(s: GameState, side: int, went_out: int | None) -> dict[str, int]:
    """One side's hand score (§3.6), as ``SideScore`` fields: its canastas' bonuses, its
    melded cards (subtracted without a canasta), each colour of its threes, the going-out
    bonus, less the cards in its hands and the penalties."""
    config = s.config
    melds = s.melds[side]
    seats = s.side_seats(side)
    kinds = [canasta_kind(rank, cards) for rank, cards in enumerate(melds)]
    canastas = sum(1 for k in kinds if k)
    bonus = sum(CANASTA_BONUS[k] for k in kinds if k)
    counted = [
        cards
        for rank, cards in enumerate(melds)
        if config.unfinished_special_scores_cards or not _penalised(rank, cards)
    ]
    points = sum(VALUE[c] for cards in counted for c in cards)
    if not canastas:
        points = -points
    penalty = 0
    for rank in (ACE, SEVEN):
        if _penalised(rank, melds[rank]):
            penalty += UNFINISHED_SPECIAL_PENALTY
    wild = melds[WILD_MELD]
    if _penalised(WILD_MELD, wild):
        jokers = sum(1 for c in wild if c == JOKER)
        penalty += config.wild_meld_four_jokers_penalty if jokers >= 4 else UNFINISHED_WILD_PENALTY
    for seat in seats:
        hand = s.hands[seat]
        for rank in (ACE, SEVEN):
            if sum(1 for c in hand if RANK[c] == rank) >= 3:
                penalty += HELD_PENALTY
    red = sum(1 for seat in seats for c in s.red3[seat] if IS_RED3[c])
    black = sum(1 for seat in seats for c in s.red3[seat] if IS_BLACK3[c])
    red_points = threes_points(red, canastas) if red else 0
    black_points = threes_points(black, canastas) if black else 0
    out = config.going_out_bonus if went_out is not None and s.side_of[went_out] == side else 0
    in_hands = sum(VALUE[c] for seat in seats for c in s.hands[seat])
    return {
        "meld_points": points,
        "natural_canastas": sum(1 for k in kinds if k == "natural"),
        "mixed_canastas": sum(1 for k in kinds if k == "mixed"),
        "wild_canastas": sum(1 for k in kinds if k.startswith("wild")),
        "special_canastas": sum(1 for k in kinds if k and k not in ("natural", "mixed")),
        "canasta_bonus": bonus,
        "red_threes": red,
        "red_three_points": red_points,
        "black_threes": black,
        "black_three_points": black_points,
        "going_out_bonus": out,
        "hand_penalty": in_hands,
        "special_penalty": penalty,
        "hand_total": points + bonus + red_points + black_points + out - in_hands - penalty,
    }


# -- candidates for the move lists (``legal``, bots) ----------------------------------------------


def meld_candidates(s: GameState, seat: int) -> list[Action]:
    """Modern American moves worth listing (each still checked by the engine, §3.6).

    An unopened side is offered its natural groups of three or more, then the same with a
    wild card on each pair of a rank that may take one (most valuable pairs first) until the
    minimum is reached. An opened side is offered naturals onto its melds (up to seven
    cards, and all of a rank but one, to keep a final discard), new natural groups, a wild
    card onto each meld with room, and a wild meld.
    """
    hand = s.hands[seat]
    side = s.side_of[seat]
    melds = s.melds[side]
    if s.must_go_out:  # partner said yes: offer the way out the search found
        return going_out_moves(s, seat, hand) or []
    by_rank: dict[int, list[Card]] = {}
    wilds: list[Card] = []
    for card in hand:
        if IS_WILD[card]:
            wilds.append(card)
        elif RANK[card] != THREE:
            by_rank.setdefault(RANK[card], []).append(card)
    wilds.sort(key=VALUE.__getitem__)
    out: list[Action] = []
    if not s.opened(side):
        groups = [tuple(g[:CANASTA_SIZE]) for g in by_rank.values() if len(g) >= 3]
        if not groups:
            return out
        out.append(Meld(tuple(groups)))
        spare = list(reversed(wilds))
        pairs = sorted(
            (g for r, g in by_rank.items() if len(g) == 2 and r not in (SEVEN, ACE)),
            key=lambda g: -VALUE[g[0]],
        )
        more = list(groups)
        for pair in pairs:
            if not spare:
                break
            more.append((*pair, spare.pop(0)))
            out.append(Meld(tuple(more)))
        return out
    for rank, cards in by_rank.items():  # all that fit, and one fewer (the final discard)
        meld = melds[rank]
        if meld:
            room = CANASTA_SIZE - len(meld)
            if room > 0:
                out.append(LayOff(rank, tuple(cards[:room])))
                if 1 < len(cards) <= room:
                    out.append(LayOff(rank, tuple(cards[:-1])))
        elif len(cards) >= 3:
            out.append(Meld((tuple(cards[:CANASTA_SIZE]),)))
            if 4 <= len(cards) <= CANASTA_SIZE:
                out.append(Meld((tuple(cards[:-1]),)))
        elif len(cards) == 2 and wilds and rank not in (SEVEN, ACE):
            out.append(Meld(((*cards, wilds[0]),)))
    if wilds:
        for rank, meld in enumerate(melds):
            if meld and rank not in (WILD_MELD, SEVEN) and len(meld) < CANASTA_SIZE:
                out.append(LayOff(rank, (wilds[0],)))
        if melds[WILD_MELD]:
            room = CANASTA_SIZE - len(melds[WILD_MELD])
            if room > 0:
                out.append(LayOff(JOKER_RANK, tuple(wilds[:room])))
                if 1 < len(wilds) <= room:
                    out.append(LayOff(JOKER_RANK, tuple(wilds[:-1])))
        elif len(wilds) >= 3:
            out.append(Meld((tuple(wilds[:CANASTA_SIZE]),)))
            if 4 <= len(wilds) <= CANASTA_SIZE:
                out.append(Meld((tuple(wilds[:-1]),)))
    return out


def take_candidates(s: GameState, seat: int) -> list[TakePile]:
    """The ways worth listing to take the pile (§3.6): with a natural pair of the top
    card's rank, and for an unopened side with its natural groups of three or more from the
    rest of the hand, which must make the opening."""
    if not s.pile or IS_WILD[s.pile[-1]]:
        return []
    rank = RANK[s.pile[-1]]
    hand = s.hands[seat]
    pair = tuple(c for c in hand if RANK[c] == rank and not IS_WILD[c])[:2]
    if len(pair) < 2:
        return []
    if s.opened(s.side_of[seat]):
        return [TakePile(pair)]
    by_rank: dict[int, list[Card]] = {}
    for card in hand:
        if not IS_WILD[card] and RANK[card] not in (rank, THREE):
            by_rank.setdefault(RANK[card], []).append(card)
    groups = tuple(tuple(g[:CANASTA_SIZE]) for g in by_rank.values() if len(g) >= 3)
    return [TakePile(pair, groups)] if groups else []


# -- the ruleset: classic's hooks answered by the rules above ----------------------------------


class ModernAmerican(Ruleset):
    """Modern American Canasta (§3.6, §3.8a)."""

    name = "modern_american"
    packet_sizes = TALON_PACKETS

    def packets_aside(
        self, rest: tuple[Card, ...], named: Sequence[Sequence[Card]] | None
    ) -> tuple[tuple[tuple[Card, ...], ...] | None, tuple[Card, ...]]:
        if named is None:
            first, second = TALON_PACKETS
            return (rest[:first], rest[first : first + second]), rest[first + second :]
        return tuple(tuple(p) for p in named), rest

    def set_aside(self, s: GameState, packets: tuple[tuple[Card, ...], ...] | None) -> bool:
        set_aside_talon(s, packets)
        return True

    def wild_meld_slot(self) -> int | None:
        return WILD_MELD

    def laid_out_threes(self) -> Sequence[bool]:
        return IS_THREE

    def start_turn(self, s: GameState, seat: int) -> None:
        if s.talon_owed[seat]:
            draw_talon(s, seat)

    def frozen_reason(self, s: GameState, side: int) -> str | None:
        return "it is always frozen in Modern American" if s.pile else ""

    def plan_take(self, s: GameState, seat: int, action: TakePile, listed: bool) -> Plan | None:
        return plan_take(s, seat, action, listed)

    def take_candidates(self, s: GameState, seat: int) -> list[TakePile] | None:
        return take_candidates(s, seat)

    def plan_meld(self, s: GameState, seat: int, action: Meld, listed: bool) -> Plan | None:
        return plan_meld(s, seat, action, listed)

    def plan_lay_off(self, s: GameState, seat: int, action: LayOff, listed: bool) -> Plan | None:
        return plan_lay_off(s, seat, action, listed)

    def side_opened(self, s: GameState, seat: int, cards: Sequence[Card], by_take: bool) -> None:
        note_opening(s, seat, cards, by_take=by_take)

    def wilds_may_join(self, s: GameState, side: int, rank: int) -> bool:
        return rank != ACE or aces_meld_takes_wilds(s, side)

    def meld_candidates(self, s: GameState, seat: int) -> tuple[list[Action], list[Action]] | None:
        return [], meld_candidates(s, seat)  # its limits make nothing legal by construction

    def discards_need_check(self, s: GameState) -> bool:
        return s.config.swad_empty_pile

    def check_discard(self, s: GameState, seat: int, card: Card) -> None:
        check_discard(s, seat, card)

    def why_melds_keep_in(self, s: GameState, side: int) -> str | None:
        unfinished = unfinished_special(s, side)  # a Modern American option (§3.8a)
        return unfinished + " (no going out with it, §3.8a)" if unfinished else None

    def guard_turn_end(self, s: GameState, seat: int) -> bool:
        """§3.6: a final discard is required, so a play may never empty the hand."""
        hand = s.hands[seat]
        side = s.side_of[seat]
        if not hand:
            raise IllegalMoveError(
                "in Modern American you go out by discarding your last card: keep one", "3.6"
            )
        if s.no_discard:
            return True  # the turn ends with a pass, not a discard (D13 option)
        if len(hand) == 1 and not (enough_canastas(s, side) and not out_forbidden(s)):
            raise IllegalMoveError(
                "that would leave you one card, and discarding it would take you out, which "
                f"you may not do: {why_not_out(s, side)}",
                "1.11.3",
            )
        if s.must_go_out and not can_go_out(s, seat, hand, None):
            raise IllegalMoveError(
                "your partner said yes, so you must go out this turn, and after that play you "
                "could not",
                "1.11.2",
            )
        return True

    def can_go_out(
        self, s: GameState, seat: int, hand: Sequence[Card], minimum: int | None
    ) -> bool | None:
        return can_go_out(s, seat, hand, minimum)

    def score_side(self, s: GameState, side: int, went_out: int | None) -> dict[str, int] | None:
        return score_side(s, side, went_out)

    def check_position_meld(self, config: RuleConfig, cards: Sequence[Card]) -> bool:
        if meld_kind(cards) != WILD:
            return False
        check_wild_meld(cards, 0)
        return True

    def meld_views(self, s: GameState, side: int) -> tuple[MeldShown, ...]:
        """The wild meld is named ``wild``; special canastas have kinds of their own."""
        return tuple(
            MeldShown(
                "wild" if rank == WILD_MELD else rank_text(rank),
                sort_cards(cards),
                canasta_kind(rank, cards),
                "wild" if rank == WILD_MELD else "group",
            )
            for rank, cards in enumerate(s.melds[side])
            if cards
        )


register(ModernAmerican)  # (a call, not a decorator: a compiled build keeps the class native)
