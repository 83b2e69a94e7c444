"""Hand and Foot: the foot, closed books, the partial pile take, book requirements to go out,
scoring an unplayed foot, and a match of a fixed number of hands (docs/rules.md §3.7, §3.8a).

Hand and Foot has no standard rules; the rules research recommends a preset (``config.PRESETS``,
``hand_and_foot``) and every row of its table is an option of ``RuleConfig``. Most rows reuse
what the other games already have: the draw of two, the bonuses, the wild limit of a meld
(``melds``), several melds of a rank (Samba's machinery in ``samba``, for a second meld of a
rank), Bolivia's wild melds for the wild books some groups allow (``allow_wild_melds``). What
only this game has is here, and the rule modules call in with one line each where the game
differs:

* the deal gives every seat a second packet, the foot, face down (``deal_feet``); nobody sees
  it, its owner included, until the hand is used up, and then it is picked up at once, in the
  same turn (§3.8a; ``pick_up_foot``). Emptying the hand is not going out: only a player
  playing the foot may go out;
* taking the pile takes its top cards only, the top card among them (``pile_cards_taken``);
* a seven-card meld is a closed book (``melds.check_meld`` refuses an eighth card);
* going out needs books of each kind (``books_missing``), and the search that tells whether a
  player could go out this turn (``foot_can_go_out``) is exact under these rules; a player
  who must go out is offered every step of a way out (``way_out_steps``). A player on the
  foot always belongs to a side that has opened: the hand grows by one card a turn unless
  its owner melds, so only melding (or the pile, which opens too) empties it;
* cards of an unplayed foot count against the side like cards in hand (``unplayed_foot_penalty``);
* the match is a fixed number of hands, the highest total winning (``hand_count_winners``).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Final

from ..actions import (
    ASK,
    DISCARDS,
    Action,
    Combine,
    LayOff,
    Meld,
    MeldRef,
    layoff_of,
    meld_of,
)
from ..cards import (
    ACE,
    FOUR,
    IS_NATURAL,
    IS_RED3,
    IS_WILD,
    JOKER_RANK,
    RANK,
    SORT_KEY,
    THREE,
    TWO,
    VALUE,
    Card,
)
from ..config import RuleConfig, wild_cap
from ..edits import set_hand
from ..errors import IllegalMoveError
from ..goingout import ask_refused_why, discard_refusal
from ..melds import CANASTA_SIZE, GROUP, meld_facts
from ..memo import remember
from ..opening import best_opening, opening_target
from ..ruleset import Trial, Verdict, register
from ..state import Event, Extra, GameState, Melds, Phase
from ..threes import lay_out_red_threes
from .samba import Samba
from .samba.melds import (
    combine_verdict,
    group_fault,
    lay_off_fits,
    sequence_candidates,
    way_out_steps,
)

# -- the foot --------------------------------------------------------------------------------------


def deal_feet(
    config: RuleConfig, order: Sequence[Card], start: int, dealer: int
) -> tuple[tuple[tuple[Card, ...], ...], int]:
    """The feet dealt from ``order[start:]``, one card at a time clockwise from the dealer's
    left like the hands (§3.7), and how many cards that took (0 in games without a foot)."""
    n = config.players
    count = n * config.foot_size
    if not count:
        return (), 0
    feet: list[list[Card]] = [[] for _ in range(n)]
    for i in range(count):
        feet[(dealer + 1 + i) % n].append(order[start + i])
    return tuple(tuple(sorted(f, key=SORT_KEY.__getitem__)) for f in feet), count


def foot_waiting(s: GameState, seat: int) -> bool:
    """Whether ``seat`` still plays its hand, its foot face down (always false without feet)."""
    return bool(s.feet) and bool(s.feet[seat])


def pick_up_foot(s: GameState, seat: int) -> None:
    """§3.8a: the hand is used up, so its owner picks up the foot at once and plays on.

    The foot's cards become the hand: only its owner sees them (a private event), the others
    see that the foot was picked up and how many cards it held. Red threes in it are laid out
    and replaced from the stock, as red threes in a dealt hand are (§1.5 H4) [engine policy].
    """
    foot = s.feet[seat]
    feet = list(s.feet)
    feet[seat] = ()
    s.feet = tuple(feet)
    set_hand(s, seat, foot)
    s.events = (
        *s.events,
        Event(seat, "foot", private=foot, text=f"picked up the foot ({len(foot)} cards)"),
    )
    if any(IS_RED3[c] for c in foot):
        lay_out_red_threes(s, seat)


# -- books and going out ---------------------------------------------------------------------------


def book_counts(s: GameState, side: int) -> tuple[int, int]:
    """(clean, dirty) books of a side: seven-card melds without and with wild cards."""
    clean = dirty = 0
    for meld in (*s.melds[side], *s.extra_of(side)):
        if len(meld) >= CANASTA_SIZE:
            if any(IS_WILD[c] for c in meld):
                dirty += 1
            else:
                clean += 1
    return clean, dirty


def books_missing(s: GameState, side: int) -> str:
    """Why ``side``'s books do not yet allow going out (§3.7: at least one clean and one dirty
    book by default), as a clause; ``""`` when they do."""
    config = s.config
    clean, dirty = book_counts(s, side)
    need_clean, need_dirty = config.clean_books_to_go_out, config.dirty_books_to_go_out
    total = max(config.canastas_to_go_out, need_clean + need_dirty)
    if clean >= need_clean and dirty >= need_dirty and clean + dirty >= total:
        return ""
    return (
        f"your side needs {total} books, at least {need_clean} clean and {need_dirty} dirty, "
        f"and has {clean} clean and {dirty} dirty"
    )


Book = tuple[int, int]
"""Books made: (clean, dirty)."""

Part = tuple[int, int]
"""An open meld of a rank already on the table: (size, wild cards)."""

FootRules = tuple[str, bool, bool, int, int, int]
"""(wild limit; several melds of a rank; wild books; clean and dirty books needed; books
needed in all): what the search needs of the config, cheap to hash."""

FootTable = tuple[tuple[tuple[Part, ...], ...], int, Book, int, tuple[int, ...]]
"""A side's melds as the search sees them: the open melds of each rank (indexed by rank),
the ranks holding a meld (bits), the books already made, the size of the black-three meld,
the sizes of the open wild melds."""


def foot_can_go_out(
    config: RuleConfig,
    hand: Sequence[Card],
    melds: Melds,
    extra: Extra,
    minimum: int | None,
    allow_discard: bool,
) -> bool:
    """Whether ``hand`` can be melded out this turn onto a side's melds when books close at
    seven cards (§3.7), with one final discard if ``allow_discard``.

    The answer is used where a wrong "yes" would trap a player (partner's "yes" must be
    obeyable, §1.11.2; the dead-end guard, §1.11.3) and a wrong "no" would refuse a legal
    play or a legal question, so the search is exact for the engine's rules: it looks at
    every final layout the moves can reach. Any layout is reachable in one turn when each
    finished meld is valid (lay the naturals first, combine, then add the wild cards: the
    wild limit only grows with the naturals), so per rank it tries every way to combine the
    open melds (``_grouped``: only melds that fit in one book together combine, so it pairs
    them by kind, a polynomial number of ways, not every grouping) and to spread the hand's
    naturals and wild cards over them and over new melds (two naturals or more, several of
    a rank where allowed), never past seven cards; wild
    books (``allow_wild_melds``) take wild cards alone; black threes make or grow the one
    black-three meld (at seven a clean book, as ``book_counts`` counts it). The books made
    must meet the going-out requirement (``books_missing``). The ranks are joined by the
    number of wild cards they take, keeping for each number only the (clean, dirty) pairs
    that no other pair beats, and every step is memoised, so a long hand is decided in
    milliseconds. A player still on the hand never gets here: only a player on the foot may
    go out, and its foot is no card of this search.
    """
    rules: FootRules = (
        config.wild_limit,
        config.multiple_melds_per_rank,
        config.allow_wild_melds,
        config.clean_books_to_go_out,
        config.dirty_books_to_go_out,
        max(config.canastas_to_go_out, config.clean_books_to_go_out + config.dirty_books_to_go_out),
    )
    least = -1 if minimum is None else minimum
    return _decide(rules, tuple(sorted(hand)), _foot_table(melds, extra), least, allow_discard)


def _foot_table(melds: Melds, extra: Extra) -> FootTable:
    parts: list[list[Part]] = [[] for _ in range(13)]
    held = 0
    clean = dirty = threes = 0
    wild_melds: list[int] = []
    for meld in (*melds, *extra):
        if not meld:
            continue
        rank = next((RANK[c] for c in meld if not IS_WILD[c]), -1)
        wilds = sum(1 for c in meld if IS_WILD[c])
        if len(meld) >= CANASTA_SIZE:  # a closed book (as ``book_counts`` counts it)
            clean += not wilds
            dirty += bool(wilds)
        if rank == THREE:
            threes = len(meld)
        elif rank < 0:
            if len(meld) < CANASTA_SIZE:
                wild_melds.append(len(meld))
        else:
            held |= 1 << rank
            if len(meld) < CANASTA_SIZE:
                parts[rank].append((len(meld), wilds))
    return (
        tuple(tuple(sorted(p)) for p in parts),
        held,
        (clean, dirty),
        threes,
        tuple(sorted(wild_melds)),
    )


@lru_cache(maxsize=4096)
def _decide(
    rules: FootRules, hand: tuple[Card, ...], table: FootTable, minimum: int, allow_discard: bool
) -> bool:
    """``foot_can_go_out``, memoised: the move lists and the dead-end guard ask it again and
    again of one position. Meld everything, or everything but one final discard: one card
    of each kind is tried (a natural of each rank, a black three, the cheapest wild card);
    which card of a kind goes makes no difference but its value toward ``minimum``."""
    if _place_all(rules, hand, table, minimum):
        return True
    if not allow_discard:
        return False
    kinds: dict[int, Card] = {}
    for card in hand:
        kind = TWO if IS_WILD[card] else RANK[card]
        if kind not in kinds or VALUE[card] < VALUE[kinds[kind]]:
            kinds[kind] = card
    for card in kinds.values():
        rest = list(hand)
        rest.remove(card)
        if _place_all(rules, tuple(rest), table, minimum):
            return True
    return False


def _place_all(rules: FootRules, cards: tuple[Card, ...], table: FootTable, minimum: int) -> bool:
    """Whether every card of ``cards`` can go onto the table (worth ``minimum`` or more when
    that is not -1), the side then having the books that going out needs."""
    if minimum >= 0 and sum(VALUE[c] for c in cards) < minimum:
        return False
    parts, held, (clean, dirty), threes, wild_melds = table
    counts = [0] * 13
    wilds = 0
    for card in cards:
        if IS_WILD[card]:
            wilds += 1
        else:
            counts[RANK[card]] += 1
    black = counts[THREE]
    if black:  # §1.9: three or more to start the meld; §3.7: it closes at seven
        if (not threes and black < 3) or threes + black > CANASTA_SIZE:
            return False
        if threes + black == CANASTA_SIZE:
            clean += 1
    best: dict[int, frozenset[Book]] = {0: frozenset({(clean, dirty)})}
    for rank in range(FOUR, ACE + 1):
        if not counts[rank] and not parts[rank]:
            continue
        row = [
            _rank_books(rules, parts[rank], bool(held >> rank & 1), counts[rank], z)
            for z in range(wilds + 1)
        ]
        best = _merge(best, row, wilds)
        if not best:
            return False
    if wild_melds or wilds:
        row = [_wild_books(rules[2], wild_melds, z) for z in range(wilds + 1)]
        best = _merge(best, row, wilds)
    need_clean, need_dirty, need = rules[3], rules[4], rules[5]
    return any(
        c >= need_clean and d >= need_dirty and c + d >= need for c, d in best.get(wilds, ())
    )


def _merge(
    best: dict[int, frozenset[Book]], row: list[frozenset[Book]], wilds: int
) -> dict[int, frozenset[Book]]:
    """Add one more group of melds to the books reachable with each number of wild cards
    used so far (``row[z]``: what the group makes with ``z`` more)."""
    out: dict[int, set[Book]] = {}
    for used, books in best.items():
        for z in range(wilds - used + 1):
            for c2, d2 in row[z]:
                out.setdefault(used + z, set()).update((c + c2, d + d2) for c, d in books)
    return {used: _pareto(books) for used, books in out.items()}


def _pareto(books: set[Book] | frozenset[Book]) -> frozenset[Book]:
    """The pairs no other pair beats in both kinds (more books never hurt going out): by
    clean books, most first, each pair kept when it has more dirty books than all before."""
    kept: list[Book] = []
    most = -1
    for c, d in sorted(books, reverse=True):
        if d > most:
            kept.append((c, d))
            most = d
    return frozenset(kept)


_NONE: frozenset[Book] = frozenset()
_NOTHING: frozenset[Book] = frozenset({(0, 0)})


@lru_cache(maxsize=8192)
def _rank_books(
    rules: FootRules, parts: tuple[Part, ...], held: bool, naturals: int, wilds: int
) -> frozenset[Book]:
    """The books one rank's melds can gain once ``naturals`` of it and ``wilds`` wild cards
    from hand are on them: its open melds (combined as the player likes where a side may
    hold several melds of a rank, §3.4's machinery) and new melds; empty if impossible."""
    limit, several = rules[0], rules[1]
    if several:
        kinds, counts, lonely = _kinds(parts)
        return _grouped(limit, kinds, counts, lonely, naturals, wilds)
    if parts:  # the rank's one meld, open
        return _fill(limit, (parts,), naturals, wilds, 0)
    if held:  # the rank's one meld is a closed book: nothing more of the rank
        return _NOTHING if not naturals and not wilds else _NONE
    return _fill(limit, (), naturals, wilds, 1)


def _kinds(parts: tuple[Part, ...]) -> tuple[tuple[Part, ...], tuple[int, ...], tuple[Part, ...]]:
    """The open melds of a rank as the grouping search sees them: the kinds of meld that
    may combine with another (each (size, wild cards) once), how many of each, and the
    melds too big to combine with any other (their size and the smallest other's over
    seven), which stay single. Melds of one kind are interchangeable, so the search counts
    them instead of telling them apart: the groupings are then polynomially many."""
    smallest = min((size for size, _ in parts), default=0)
    kinds: dict[Part, int] = {}
    lonely: list[Part] = []
    for part in parts:
        if part[0] + smallest > CANASTA_SIZE:
            lonely.append(part)
        else:
            kinds[part] = kinds.get(part, 0) + 1
    ordered = tuple(sorted(kinds, reverse=True))  # the largest first: see ``_grouped``
    return ordered, tuple(kinds[k] for k in ordered), tuple(lonely)


@lru_cache(maxsize=65536)
def _grouped(
    limit: str,
    kinds: tuple[Part, ...],
    counts: tuple[int, ...],
    lonely: tuple[Part, ...],
    naturals: int,
    wilds: int,
) -> frozenset[Book]:
    """Books from open melds of one rank combined as the player likes (§3.4, §3.8a), taking
    some of ``naturals`` and ``wilds``, the rest in new melds: ``counts[i]`` melds of kind
    ``kinds[i]`` still to place, then the ``lonely`` ones, single.

    Only melds that fit in one book together can be combined (the engine refuses a meld
    past seven cards, ``melds.check_meld``, so a closed book takes no more), so a group of
    combined melds is a handful of kinds whose sizes add up to seven at most: with every
    meld of three cards or more (a new meld needs three), two melds, 3 + 3 or 3 + 4. One
    meld of the first kind left opens a group, joined by none or some of the others; the
    group takes some naturals and wild cards, and the rest is decided for the melds left.
    The kinds come largest first (``_kinds``), so the counts left change one kind at a
    time until only melds of three, pairing among themselves, are left: fewer of them.
    Each step is remembered by the counts left, so the work grows as a polynomial in the
    number of melds, not as the number of ways to group them."""
    first = next((i for i, count in enumerate(counts) if count), -1)
    if first < 0:
        return _fill(limit, tuple((p,) for p in lonely), naturals, wilds, naturals)
    left = list(counts)
    left[first] -= 1
    found: set[Book] = set()
    for size, old_wilds, rest in _groups(kinds, first, tuple(left)):
        multi = rest != tuple(left)
        for x in range(min(naturals, CANASTA_SIZE - size) + 1):
            room = CANASTA_SIZE - size - x
            # The engine checks the wild limit when a wild card joins and when melds combine
            # (naturals alone may join any meld, ``melds.check_meld``): at most ``top`` wild
            # cards may join, none at all where combining already breaks the limit.
            top = wild_cap(limit, size - old_wilds + x) - old_wilds
            if multi and top < 0:
                continue
            for z in range(min(wilds, room, max(top, 0)) + 1):
                after = _grouped(limit, kinds, rest, lonely, naturals - x, wilds - z)
                if z < room:
                    found |= after  # still open: no book
                elif after:
                    book = (0, 1) if old_wilds + z else (1, 0)
                    found.update((c + book[0], d + book[1]) for c, d in after)
    return _pareto(found)


@lru_cache(maxsize=4096)
def _groups(
    kinds: tuple[Part, ...], first: int, counts: tuple[int, ...]
) -> tuple[tuple[int, int, tuple[int, ...]], ...]:
    """Every group a meld of ``kinds[first]`` can open: that meld alone or combined with
    melds of kinds ``first`` and after, still ``counts`` of each, within seven cards; as
    (size, wild cards, the counts left), each group once."""
    out: list[tuple[int, int, tuple[int, ...]]] = []

    def grow(size: int, wilds: int, start: int, left: list[int]) -> None:
        out.append((size, wilds, tuple(left)))
        for i in range(start, len(kinds)):
            if left[i] and size + kinds[i][0] <= CANASTA_SIZE:
                left[i] -= 1
                grow(size + kinds[i][0], wilds + kinds[i][1], i, left)
                left[i] += 1

    grow(kinds[first][0], kinds[first][1], first, list(counts))
    return tuple(out)


@lru_cache(maxsize=8192)
def _fill(
    limit: str, blocks: tuple[tuple[Part, ...], ...], naturals: int, wilds: int, new: int
) -> frozenset[Book]:
    """Books from open melds ``blocks`` (each block combined into one meld) taking some of
    ``naturals`` and ``wilds``, the rest in at most ``new`` new melds."""
    if not blocks:
        return _new_melds(limit, naturals, wilds, new)
    block, rest = blocks[0], blocks[1:]
    size = sum(p[0] for p in block)
    old_wilds = sum(p[1] for p in block)
    found: set[Book] = set()
    for x in range(min(naturals, CANASTA_SIZE - size) + 1):
        for z in range(min(wilds, CANASTA_SIZE - size - x) + 1):
            # The engine checks the wild limit when a wild card joins and when melds combine
            # (naturals alone may join any meld, ``melds.check_meld``).
            if (z or len(block) > 1) and old_wilds + z > wild_cap(limit, size - old_wilds + x):
                continue
            after = _fill(limit, rest, naturals - x, wilds - z, new)
            if not after:
                continue
            made = _book(size + x + z, old_wilds + z)
            found.update((c + made[0], d + made[1]) for c, d in after)
    return _pareto(found)


@lru_cache(maxsize=8192)
def _new_melds(limit: str, naturals: int, wilds: int, new: int) -> frozenset[Book]:
    """Books from at most ``new`` new melds holding exactly ``naturals`` and ``wilds``: two
    naturals or more and three cards or more each, within the wild limit, at most seven."""
    if not naturals and not wilds:
        return _NOTHING
    if new <= 0 or naturals < 2:
        return _NONE
    found: set[Book] = set()
    for x in range(2, min(naturals, CANASTA_SIZE) + 1):
        for z in range(min(wilds, wild_cap(limit, x), CANASTA_SIZE - x) + 1):
            if x + z < 3:
                continue
            after = _new_melds(limit, naturals - x, wilds - z, new - 1)
            made = _book(x + z, z)
            found.update((c + made[0], d + made[1]) for c, d in after)
    return _pareto(found)


@lru_cache(maxsize=4096)
def _wild_books(allowed: bool, sizes: tuple[int, ...], wilds: int) -> frozenset[Book]:
    """Books from wild melds (``allow_wild_melds``): ``wilds`` join the open ones up to seven
    or start new ones of three to seven; a wild book holds wild cards, so it is dirty."""
    if sizes:
        size, rest = sizes[0], sizes[1:]
        found: set[Book] = set()
        for z in range(min(wilds, CANASTA_SIZE - size) + 1):
            made = _book(size + z, 1)
            found.update((c, d + made[1]) for c, d in _wild_books(allowed, rest, wilds - z))
        return _pareto(found)
    if not wilds:
        return _NOTHING
    found = set()
    if allowed:
        for z in range(3, min(wilds, CANASTA_SIZE) + 1):
            made = _book(z, 1)
            found.update((c, d + made[1]) for c, d in _wild_books(allowed, (), wilds - z))
    return _pareto(found)


def _book(size: int, wilds: int) -> Book:
    """What a meld of ``size`` cards with ``wilds`` wild cards counts as: a clean or a dirty
    book at seven, nothing before."""
    if size < CANASTA_SIZE:
        return (0, 0)
    return (0, 1) if wilds else (1, 0)


# -- scoring and the end of the match -------------------------------------------------------------


def unplayed_foot_penalty(state: GameState, side: int) -> int:
    """§3.8a: the cards of a foot never picked up count against the side like cards in hand
    (a red three in it costs ``red3_unplayed_value``, by default nothing); 0 without feet."""
    if not state.feet:
        return 0
    red3 = state.config.red3_unplayed_value
    return sum(
        red3 if IS_RED3[c] else VALUE[c]
        for seat in state.side_seats(side)
        for c in state.feet[seat]
    )


# -- candidates for the move lists (``legal``, bots) ----------------------------------------------


class _Books:
    """One side's table as the move lists read it (§3.7): its open melds of each rank, the
    ranks with a closed book, each group meld by its place, and the verdicts already given
    on it. Read once per table (``_books_of``): a side's melds stay the same objects from one
    position to the next until the side melds, while its two seats list moves at every turn,
    so the facts and most verdicts are asked again and again of one table."""

    def __init__(self, config: RuleConfig, melds: Melds, extra: Extra) -> None:
        self.config = config
        self.melds = melds
        self.extra = extra
        self.open_melds: dict[int, list[tuple[int, int]]] = {}
        """rank -> (which, size) of its open melds, ranks in table order."""
        self.closed: set[int] = set()
        self.places: dict[tuple[int, int], tuple[int, int]] = {}
        """(rank, which) -> the meld's cards and wild cards, for the ranks with a
        rank-indexed meld (4 to ace)."""
        self.verdicts: dict[int, tuple[Action, int, bool | None]] = {}
        """id(action) -> (the action, the cards it takes from hand, its verdict): the room
        left in hand is the one fact of the position besides the table a verdict needs."""
        # (one pass over the rank-indexed melds and one over the further ones)
        open_melds = self.open_melds
        closed = self.closed
        places = self.places
        counts = [0] * 14
        room_for_wild = wild_bits = 0
        onto_canasta = config.wild_onto_canasta
        caps = _caps_of(config.wild_limit)
        regular = True
        index = -1
        for meld in melds:
            index += 1
            if not meld:
                continue
            _kind, rank, wilds = meld_facts(meld)  # (its first natural card's rank)
            size = len(meld)
            if rank != index:
                regular = False
            if rank >= 0:
                counts[rank] += 1
                if size < CANASTA_SIZE:
                    found = open_melds.get(rank)
                    if found is None:
                        open_melds[rank] = [(counts[rank], size)]
                    else:
                        found.append((counts[rank], size))
                else:
                    closed.add(rank)
            if FOUR <= index <= ACE:
                places[index, 1] = (size, wilds)
                if wilds < caps[size - wilds]:
                    if size < CANASTA_SIZE:
                        room_for_wild |= 1 << index
                    wild_bits |= 1 << index
        first_group = -1
        if extra:
            further: dict[int, int] = {}
            for cards in extra:
                kind, rank, wilds = meld_facts(cards)
                if kind == GROUP:
                    if first_group < 0:
                        first_group = rank
                    if melds[rank]:
                        further[rank] = which = further.get(rank, 1) + 1
                        places[rank, which] = (len(cards), wilds)
                    else:
                        regular = False
                if rank < 0:
                    continue  # (a wild meld, or no meld)
                counts[rank] += 1
                if len(cards) < CANASTA_SIZE:
                    found = open_melds.get(rank)
                    if found is None:
                        open_melds[rank] = [(counts[rank], len(cards))]
                    else:
                        found.append((counts[rank], len(cards)))
                else:
                    closed.add(rank)
        self.room_for_wild = room_for_wild
        """The ranks whose rank-indexed meld may take one more wild card (the wild limit,
        §1.9, §3.7, and under seven cards), as bits: where no wild card joins a canasta."""
        self.regular = regular
        """Whether the table is as the engine makes it: each rank-indexed meld of its own
        rank, and every further group meld's rank holding its rank-indexed meld (a second
        meld of a rank joins ``extra`` beside the first), so that a rank's first meld is the
        one ``melds`` holds (``book_listing`` relies on it)."""
        self.wild_bits = wild_bits if onto_canasta else room_for_wild
        """The ranks whose rank-indexed meld the classic lists offer a wild card
        (``legal.group_candidates``: under the wild limit, and under seven cards unless
        a wild card may join a canasta), as bits."""
        self.wild_places: dict[Card, _WildPlaces] = {}
        """Where each wild card asked of may go (``_wild_places``)."""
        self.first_group = first_group
        """The rank of the first further group meld (-1: none), whose two first melds are
        the ones Samba's list offers to combine (``samba.melds.sequence_candidates``)."""
        self.further: list[Action] | None = None
        """Samba's further moves (``sequence_candidates``) where they depend on the table
        alone (no sequences, no wild melds), listed once per table."""


@lru_cache(maxsize=8)  # (the config allows four wild limits)
def _caps_of(limit: str) -> tuple[int, ...]:
    """``wild_cap(limit, naturals)`` for every count of naturals a meld may hold (up to the
    cards of eight packs), read by index where a table's melds are read: the few wild limits
    there are each kept once."""
    return tuple(wild_cap(limit, n) for n in range(8 * 54 + 1))


_WildPlaces = tuple[
    list[tuple[int, int, "bool | None", LayOff]], list["tuple[bool, LayOff] | None"]
]
"""Where a wild card may go, each with its verdict and the lay-off (``_wild_places``)."""


def _wild_places(books: _Books, wild: Card) -> _WildPlaces:
    """The wild card ``wild`` onto each open meld of the side, in table order (rank, which,
    verdict, the lay-off), and onto each rank's rank-indexed meld where the classic lists
    offer one (the verdict and the lay-off, indexed by rank; ``None``: not offered), the
    verdicts those of ``group_verdicts`` when a card more stays in hand: ``lay_off_fits`` of
    the place's counts (``None``: no place the verdicts know, so the engine decides).
    Worked out once per table and wild card (the cheapest wild card in hand: a two or a
    joker, so a handful per table); ``lay_off_fits`` asks of a wild card only that it is
    one, so the verdicts are the same for every wild card.

    Each place's entry depends on the place's counts alone, and a new table keeps most
    places of the last one, so the entries are shared between tables (``_wild_spots_of``):
    a table finds them instead of deciding them again."""
    found = books.wild_places.get(wild)
    if found is not None:
        return found
    config = books.config
    places = books.places
    spots = _wild_spots_of(config)
    onto_open: list[tuple[int, int, bool | None, LayOff]] = []
    for rank, open_places in books.open_melds.items():
        for which, _size in open_places:
            place = places.get((rank, which))
            key = (wild, rank, which, place)
            spot = spots.get(key)
            if spot is None:
                fits = None if place is None else lay_off_fits(config, rank, *place, (wild,))
                spot = (rank, which, fits, layoff_of(rank, (wild,), which))
                remember(spots, key, spot, _SPOTS_LIMIT)
            onto_open.append(spot)
    onto_first: list[tuple[bool, LayOff] | None] = [None] * 13
    bits = books.wild_bits
    rank = FOUR
    while bits >> rank:
        if bits >> rank & 1:
            place = places[rank, 1]  # (a rank-indexed meld: ``wild_bits``)
            key = (wild, rank, 1, place)  # (the same entry as onto the open meld)
            first = spots.get(key)
            if first is None:
                fits = lay_off_fits(config, rank, *place, (wild,))
                first = (rank, 1, fits, layoff_of(rank, (wild,)))
                remember(spots, key, first, _SPOTS_LIMIT)
            onto_first[rank] = (bool(first[2]), first[3])
        rank += 1
    found = books.wild_places[wild] = (onto_open, onto_first)
    return found


_WildSpot = tuple[int, int, "bool | None", LayOff]
_WILD_SPOTS: dict[int, tuple[RuleConfig, dict[tuple[Card, int, int, object], _WildSpot]]] = {}


def _wild_spots_of(config: RuleConfig) -> dict[tuple[Card, int, int, object], _WildSpot]:
    """``_wild_places``' entries under ``config`` by (the wild card, the meld's rank and
    place among the rank's melds, its counts as ``_Books.places`` holds them): the same few
    melds are met table after table. Found by the config's identity
    (the entry holds it, so an id is never reused while its entry lives); bounded."""
    found = _WILD_SPOTS.get(id(config))
    if found is None or found[0] is not config:
        found = remember(_WILD_SPOTS, id(config), (config, {}), 64)
    return found[1]


_SPOTS_LIMIT = 65_536
"""Entries one config's ``_wild_spots_of`` keeps, the oldest going first (a bound on memory:
a handful of wild cards times the ranks, places and counts a table holds, a few thousand)."""


_BOOKS: dict[tuple[int, int, int], _Books] = {}
_BOOKS_LIMIT = 32
"""Tables ``_books_of`` keeps, the oldest going first (``memo.remember``). In one game only
each side's current table is asked again (a table lives until its side melds), so a few
suffice. A server's matches and the strong bot's search share them: a miss there costs
reading a table again, never a wrong answer. More would mostly hold dead tables, whose
thousands of small objects the garbage collector walks again and again (with 512, cleared
at once when full, a tenth of Hand and Foot's random play went there)."""


def _books_of(state: GameState, side: int) -> _Books:
    """The side's ``_Books``, found by the identity of its melds (a position's tuples are
    shared by the positions after it until they change; the entry holds them, so an id is
    never reused while its entry lives)."""
    config = state.config
    melds = state.melds[side]
    extra = state.extra_of(side)
    key = (id(config), id(melds), id(extra))
    found = _BOOKS.get(key)
    if (
        found is not None
        and found.melds is melds
        and found.extra is extra
        and found.config is config
    ):
        return found
    return remember(_BOOKS, key, _Books(config, melds, extra), _BOOKS_LIMIT)


def foot_candidates(
    state: GameState, side: int, hand: Sequence[Card]
) -> tuple[list[Action], list[Action]]:
    """Moves worth listing once books close at seven: the cards of a rank onto each open
    meld of that rank (as many as fit), or a new meld of them when every meld of the rank
    is closed, and the cheapest wild card onto each open meld. Every open meld is offered,
    not only the first of its rank, so that a player left with one card that must go out
    (black threes melded, §1.9) always finds its move listed. Wild melds
    (``allow_wild_melds``) are ``samba.sequence_candidates``' to list.

    ``(legal_by_construction, to_check)``: naturals onto an open book of their rank, within
    its seven cards, are legal by construction while nothing obliges the player to go out,
    no black-three meld is down (a player still on the hand may not have one, §3.7) and two
    cards stay in hand (§1.11.3): naturals never break a wild limit, and the book stays
    open or closes at seven. The rest goes to the engine's check."""
    books = _books_of(state, side)
    open_melds = books.open_melds
    closed = books.closed
    by_rank: dict[int, list[Card]] = {}
    cheapest = -1  # (the first of the least value, as a stable sort would put it first)
    for card in hand:
        if IS_NATURAL[card]:
            found = by_rank.get(RANK[card])
            if found is None:
                by_rank[RANK[card]] = [card]
            else:
                found.append(card)
        elif IS_WILD[card] and (cheapest < 0 or VALUE[card] < VALUE[cheapest]):
            cheapest = card
    out: list[Action] = []
    sure: list[Action] = []
    simple = not state.must_go_out and not state.no_discard and not state.melds[side][THREE]
    room = len(hand) - 2
    for rank, cards in by_rank.items():
        places = open_melds.get(rank)
        if places is not None:
            for which, size in places:
                added = tuple(cards[: CANASTA_SIZE - size])
                (sure if simple and len(added) <= room else out).append(
                    layoff_of(rank, added, which)
                )
        elif rank in closed:
            if len(cards) >= 3:
                out.append(meld_of((tuple(cards[:CANASTA_SIZE]),)))
            elif len(cards) == 2 and cheapest >= 0:
                out.append(meld_of(((*cards, cheapest),)))
    if cheapest >= 0:
        wild = (cheapest,)
        for rank, places in open_melds.items():
            out.extend(layoff_of(rank, wild, which) for which, _size in places)
    return sure, out


def book_candidates(state: GameState, seat: int) -> tuple[list[Action], list[Action]]:
    """The melds and lay-offs an opened side's player is offered once books close at seven
    (§3.7), in one pass over the hand and the side's table (``_Books``): exactly what the
    classic lists' group candidates (``legal.group_candidates``, where a lay-off past a
    book's seven cards is left out) followed by ``HandAndFoot.further_candidates`` give,
    in the same order, so a listing is the same action for action, only cheaper: the hand
    is sorted by rank once, the cheapest wild card found once, the table read once.

    ``(legal_by_construction, to_check)`` as ``Ruleset.meld_candidates`` has it; nothing
    from the classic group list is legal by construction here (a lay-off may fill a book
    past seven), so it all goes to the check, ahead of Samba's and the foot's moves."""
    config = state.config
    side = state.side_of[seat]
    hand = state.hands[seat]
    melds = state.melds[side]
    books = _books_of(state, side)
    by_rank: list[list[Card] | None] = [None] * 14
    order: list[int] = []  # the natural ranks in hand, in the order they first appear
    cheapest = -1  # (the first of the least value, as a stable sort would put it first)
    for card in hand:
        if IS_WILD[card]:
            if cheapest < 0 or VALUE[card] < VALUE[cheapest]:
                cheapest = card
            continue
        rank = RANK[card]
        found = by_rank[rank]
        if found is None:
            by_rank[rank] = [card]
            if IS_NATURAL[card]:
                order.append(rank)
        else:
            found.append(card)
    # The classic group candidates, every one to check (``legal.group_candidates``).
    check: list[Action] = []
    threes = by_rank[THREE]
    if threes is not None:
        if melds[THREE]:
            check.append(layoff_of(THREE, tuple(threes)))
        elif len(threes) >= 3:
            check.append(meld_of((tuple(threes),)))
    room_for_wild = None if config.wild_onto_canasta else books.room_for_wild
    for rank in range(FOUR, ACE + 1):
        cards = by_rank[rank]
        meld = melds[rank]
        if cards is None:
            if not meld or cheapest < 0:
                continue
        else:
            used = len(cards)
            if meld:
                if len(meld) + used > CANASTA_SIZE:
                    continue  # past a book's seven cards: the foot's moves have what fits
                check.append(layoff_of(rank, tuple(cards)))
            elif used >= 3:
                check.append(meld_of((tuple(cards),)))
            elif used == 2 and cheapest >= 0:
                check.append(meld_of(((*cards, cheapest),)))
            else:
                continue
        if meld and cheapest >= 0:
            if room_for_wild is not None:
                fits = room_for_wild >> rank & 1
            else:
                in_meld = meld_facts(meld)[2]
                fits = in_meld < config.max_wilds(len(meld) - in_meld)
            if fits:
                check.append(layoff_of(rank, (cheapest,)))
    # Samba's further moves, then the foot's (``HandAndFoot.further_candidates``).
    check += sequence_candidates(state, side, hand)
    sure: list[Action] = []
    simple = not state.must_go_out and not state.no_discard and not melds[THREE]
    room = len(hand) - 2
    open_melds = books.open_melds
    closed = books.closed
    for rank in order:
        cards = by_rank[rank]
        assert cards is not None
        places = open_melds.get(rank)
        if places is not None:
            for which, size in places:
                added = tuple(cards[: CANASTA_SIZE - size])
                (sure if simple and len(added) <= room else check).append(
                    layoff_of(rank, added, which)
                )
        elif rank in closed:
            if len(cards) >= 3:
                check.append(meld_of((tuple(cards[:CANASTA_SIZE]),)))
            elif len(cards) == 2 and cheapest >= 0:
                check.append(meld_of(((*cards, cheapest),)))
    if cheapest >= 0:
        wild = (cheapest,)
        for rank, places in open_melds.items():
            check.extend(layoff_of(rank, wild, which) for which, _size in places)
    if state.must_go_out:  # every step of a way out, so the list never runs dry
        check += way_out_steps(state, side, hand)
    return sure, check


def group_verdicts(state: GameState, seat: int) -> Verdict | None:
    """Verdicts on the listed moves onto a side's group melds and on new group melds, known
    without the engine's trial once books close at seven (§3.7), so that the move lists keep
    these candidates in their place unchecked: cards of a rank and wild cards onto one of
    its melds (named as ``samba.melds.find_meld`` numbers them), one new meld of a rank's
    naturals with or without wild cards, and two melds of a rank combined
    (``samba.melds.combine_verdict``); and a meld of black threes by a player still on the
    hand, which the dead-end guard always refuses (``HandAndFoot.guard_turn_end``, §3.7).

    Only where nothing but the melds themselves can refuse such a move (``None`` then: the
    engine decides): the side has opened, nothing obliges the player to go out, no
    black-three meld is down (a player still on the hand may have none, §3.7), and two
    cards stay in hand (§1.11.3). Then the engine's check comes down to the meld's own
    (the book's seven cards, its two natural cards, its wild limit: §1.9, §3.4, §3.7),
    asked here of the same test it raises from (``samba.melds.group_fault``). The
    candidates' cards come from the hand (the lists take them from it). Each verdict on a
    table is worked out once (``_Books.verdicts``) and only the room left in hand is
    asked again."""
    side = state.side_of[seat]
    melds = state.melds[side]
    if state.must_go_out or state.no_discard or melds[THREE] or not state.opened(side):
        return None
    books = _books_of(state, side)
    room = len(state.hands[seat]) - 2
    on_hand = foot_waiting(state, seat)

    def verdict(action: Action) -> bool | None:
        return _answer(state, side, books, room, on_hand, action)

    return verdict


def _answer(
    state: GameState, side: int, books: _Books, room: int, on_hand: bool, action: Action
) -> bool | None:
    """``group_verdicts``' verdict on ``action`` where ``room`` cards may leave the hand
    (two stay) and ``on_hand`` says whether the player's foot still waits: a lay-off onto a
    group meld from its counts at once (the most listed), the rest from the table's
    verdicts, each worked out once per table (``_Books.verdicts``)."""
    if type(action) is LayOff:
        assert isinstance(action, LayOff)
        place = books.places.get((action.rank, action.which))
        cards = action.cards
        if place is None or action.suit >= 0 or not cards or len(cards) > room:
            return None
        return lay_off_fits(books.config, action.rank, place[0], place[1], cards)
    memo = books.verdicts
    found = memo.get(id(action))
    if found is None or found[0] is not action:
        found = memo[id(action)] = (action, *_table_verdict(state, side, books, action))
    if found[1] > room:
        return None
    answer = found[2]
    if answer is None and on_hand and found[1] >= 0 and type(action) is Meld:
        assert isinstance(action, Meld)
        if meld_facts(action.melds[0])[:2] == (GROUP, THREE):
            return False  # black threes, while the foot waits (§3.7)
    return answer


def _table_verdict(
    state: GameState, side: int, books: _Books, action: Action
) -> tuple[int, bool | None]:
    """``group_verdicts``' answer on ``action`` from the side's table alone: the cards it
    takes from hand (the answer is ``None`` when fewer than two would stay; -1: any room)
    and the verdict, ``None`` where the engine decides."""
    config = books.config
    kind = type(action)
    if kind is LayOff:
        assert isinstance(action, LayOff)
        place = books.places.get((action.rank, action.which))
        if place is None or action.suit >= 0 or not action.cards:
            return -1, None
        size, wilds = place
        return len(action.cards), lay_off_fits(config, action.rank, size, wilds, action.cards)
    if kind is Meld:
        assert isinstance(action, Meld)
        if len(action.melds) != 1:
            return -1, None
        group = action.melds[0]
        kind_of, rank, _ = meld_facts(group)
        if kind_of != GROUP or not FOUR <= rank <= ACE or any(IS_RED3[c] for c in group):
            return len(group), None  # (a sequence, a wild meld, threes: the engine decides)
        old = books.melds[rank]
        if old and config.multiple_melds_per_rank:  # a further meld of the rank
            return len(group), group_fault(config, rank, (), group, new=True) is None
        return len(group), group_fault(config, rank, old, group, new=not old) is None
    if kind is Combine:
        assert isinstance(action, Combine)
        first, second = action.first, action.second
        rank = first.rank
        keep = books.places.get((rank, 1))
        gone = books.places.get((rank, 2))
        if (
            keep is None
            or gone is None
            or first != MeldRef(rank)
            or second != MeldRef(rank, 2)
            or not config.multiple_melds_per_rank
        ):
            return 0, combine_verdict(state, side, action)
        return 0, combine_fits(config, keep[0], keep[1], gone[0], gone[1])
    return -1, None


def combine_fits(config: RuleConfig, size: int, wilds: int, other: int, other_wilds: int) -> bool:
    """Whether ``samba.melds.combine_fault`` lets two group melds of one rank (four to ace)
    become one, asked of their counts alone (``size`` cards, ``wilds`` of them wild, and
    ``other`` cards, ``other_wilds`` wild): the book's seven cards (§3.7), two naturals and
    the wild limit of the joined meld (§1.9, §3.4), and no wild card joining a completed
    canasta where none may be added to one (§3.8a). ``_Books.places`` holds these counts,
    so the verdict needs no card read again."""
    total = size + other
    if config.closed_books and total > CANASTA_SIZE:
        return False
    held = wilds + other_wilds
    naturals = total - held
    if naturals < 2:
        return False
    if held and held > wild_cap(config.wild_limit, naturals):
        return False
    return config.wild_onto_canasta or not (
        (size >= CANASTA_SIZE and other_wilds) or (other >= CANASTA_SIZE and wilds)
    )


def book_listing(state: GameState, seat: int, may_ask: bool, trial: Trial) -> list[Action] | None:
    """The listing after the draw of an opened side's player once books close at seven
    (§3.7), every candidate decided in place (``Ruleset.play_listing``): the same actions
    in the same order as ``legal``'s lists give from ``book_candidates`` and
    ``group_verdicts`` (asking partner, the moves legal by construction, the discards, then
    each candidate the engine accepts), each candidate made once and decided once.
    ``trial`` is the engine's check (``engine.is_legal``), asked only where
    ``group_verdicts`` leaves the engine to decide.

    Only where ``group_verdicts`` answers (nothing obliges the player to go out, no
    black-three meld is down; ``None`` otherwise, and ``legal``'s lists decide), on a
    ``_Books.regular`` table, with the hand in ``cards.SORT_KEY`` order as the engine keeps
    it (the naturals rank by rank, then jokers, twos and threes), so that the naturals of a
    rank are one slice of it.

    Which candidates of those lists are the same action is known from how they are made,
    so none is made twice and nothing is hashed to find the repeats: the classic lay-off of
    a rank's naturals onto its rank-indexed meld is the foot's onto that meld (its first,
    ``which`` 1), legal by construction when two cards stay, else checked in the classic
    list's place; the classic wild card onto that meld is the foot's wild card onto it,
    listed in the classic place. A new meld of a rank, a further meld of a rank whose books
    are closed, black threes and Samba's moves are each of a kind no other candidate is."""
    if state.must_go_out or state.no_discard:
        return None
    side = state.side_of[seat]
    melds = state.melds[side]
    if melds[THREE] or not state.opened(side):
        return None
    books = _books_of(state, side)
    if not books.regular:
        return None
    hand = state.hands[seat]
    count = len(hand)
    room = count - 2  # (the cards a move may take and leave two in hand, §1.11.3)
    # The hand's tail: its threes, and before them its wild cards (jokers, then twos).
    end = count
    while end and RANK[hand[end - 1]] == THREE:
        end -= 1
    threes = hand[end:]
    cheapest = -1  # (the first of the least value, as a stable sort would put it first)
    while end and IS_WILD[hand[end - 1]]:
        end -= 1
        if cheapest < 0 or VALUE[hand[end]] <= VALUE[cheapest]:
            cheapest = hand[end]
    listed: list[Action] = []
    # (a player whose foot waits may not ask and may discard, both for the foot alone:
    # ``goingout.ask_refused_why`` and ``discard_refusal`` answer so at once)
    on_hand = foot_waiting(state, seat)
    if may_ask and not on_hand and ask_refused_why(state, seat) is None:
        listed.append(ASK)
    # Rank by rank, the naturals held (one slice of the hand) and the side's melds of the
    # rank: the foot's lay-offs legal by construction go straight to the list; the classic
    # list's candidates and the foot's others are kept, decided, for their places below.
    config = state.config
    open_melds = books.open_melds
    closed = books.closed
    wilds = _wild_places(books, cheapest) if cheapest >= 0 else None
    onto_first = wilds[1] if wilds is not None else None
    offered_first = 0  # the ranks whose first meld the classic list offers the wild card
    classic: list[Action] = []  # (decided: the legal ones)
    foot: list[tuple[Action, bool | None]] = []  # (to decide after Samba's moves)
    several = config.multiple_melds_per_rank
    start = 0
    for rank in range(FOUR, ACE + 1):
        stop = start
        while stop < end and RANK[hand[stop]] == rank:
            stop += 1
        meld = melds[rank]
        if stop > start:
            cards = hand[start:stop]
            start = stop
            used = len(cards)
            places = open_melds.get(rank)
            if places is not None:  # the foot's lay-offs onto each open meld of the rank
                for which, size in places:
                    added = cards[: CANASTA_SIZE - size]
                    if len(added) <= room:
                        listed.append(layoff_of(rank, added, which))
                    elif which != 1 or len(meld) + used > CANASTA_SIZE:
                        foot.append((layoff_of(rank, added, which), None))  # (else classic's)
            elif rank in closed:  # the foot's new meld beside closed books
                # (decided from its counts, ``new_group_fits``, as ``_table_verdict`` would
                # where a further meld of the rank may be made and two cards stay in hand)
                if used >= 3:
                    naturals = min(used, CANASTA_SIZE)
                    new = meld_of((cards[:CANASTA_SIZE],))
                    fits = new_group_fits(config, naturals, 0) if naturals <= room else None
                    foot.append((new, fits if several else None))
                elif used == 2 and cheapest >= 0:
                    new = meld_of(((*cards, cheapest),))
                    fits = new_group_fits(config, 2, 1) if room >= 3 else None
                    foot.append((new, fits if several else None))
            if meld:
                if len(meld) + used > CANASTA_SIZE:
                    continue  # past a book's seven cards: the foot's moves have what fits
                if used > room:  # (else the foot's lay-off onto it, listed above)
                    action: Action = layoff_of(rank, cards)
                    if trial(state, seat, action):
                        classic.append(action)
            else:
                if used >= 3:
                    action = meld_of((cards,))
                    fits = new_group_fits(config, used, 0)
                elif used == 2 and cheapest >= 0:
                    action = meld_of(((*cards, cheapest),))
                    used = 3
                    fits = new_group_fits(config, 2, 1)
                else:
                    continue
                if fits if used <= room else trial(state, seat, action):
                    classic.append(action)
                continue
        elif not meld:
            continue
        if onto_first is not None:  # the classic list's wild card onto the rank's meld
            offered = onto_first[rank]
            if offered is not None:
                offered_first |= 1 << rank
                fits_one, action = offered
                if fits_one if room >= 1 else trial(state, seat, action):
                    classic.append(action)
    if start != end:
        return None  # (not a hand in ``SORT_KEY`` order: the lists decide)
    if on_hand or discard_refusal(state, seat) is None:
        listed.extend(map(DISCARDS.__getitem__, dict.fromkeys(hand)))
    # The classic group candidates (``legal.group_candidates``): black threes first.
    if len(threes) >= 3:  # (no black-three meld is down)
        black = meld_of((threes,))
        # black threes are melded only when going out, never from the hand (§3.7)
        if (len(threes) > room or not on_hand) and trial(state, seat, black):
            listed.append(black)
    listed += classic
    # Samba's further moves, then the foot's (``HandAndFoot.further_candidates``).
    for action in _further(books, state, side, hand):
        answer = _answer(state, side, books, room, on_hand, action)
        if answer if answer is not None else trial(state, seat, action):
            listed.append(action)
    for action, answer in foot:
        if answer is None:
            answer = _answer(state, side, books, room, on_hand, action)
        if answer if answer is not None else trial(state, seat, action):
            listed.append(action)
    if wilds is not None:  # the foot's wild card onto each open meld
        for rank, which, onto, action in wilds[0]:
            if which == 1 and offered_first >> rank & 1:
                continue  # (listed in the classic list's place)
            if onto if room >= 1 and onto is not None else trial(state, seat, action):
                listed.append(action)
    return listed


def opening_listing(state: GameState, seat: int, trial: Trial) -> list[Action] | None:
    """The listing after the draw of an unopened side's player once books close at seven
    (§3.7), every candidate decided in place (``Ruleset.play_listing``): the same actions in
    the same order as ``legal``'s lists give (the discards, then the best opening where
    ``legal.opening_candidates`` offers it, if the engine accepts it). ``trial`` is the
    engine's check (``engine.is_legal``), asked only where the opening is not legal by
    construction.

    Only where those lists hold nothing else (``None`` otherwise, and they decide): nothing
    obliges the player to go out, the player may discard, and the game has no sequences
    and no wild melds (Samba's further moves: an unopened side has no meld to combine).
    The player's foot waits (a player on the foot belongs to a side that has opened: only
    melding empties a hand), so asking partner is refused and every discard allowed
    (``goingout.ask_refused_why`` and ``discard_refusal`` answer so for a waiting foot)."""
    config = state.config
    if (
        state.must_go_out
        or state.no_discard
        or config.allow_sequences
        or config.allow_wild_melds
        or not foot_waiting(state, seat)
    ):
        return None
    hand = state.hands[seat]
    listed: list[Action] = list(map(DISCARDS.__getitem__, dict.fromkeys(hand)))
    opening = best_opening(config, hand)  # (``legal.opening_candidates``' candidate)
    if not opening:
        return listed
    value = 0
    left = len(hand)
    fits = config.open_via_pile != "required"
    for group in opening:
        value += sum(map(VALUE.__getitem__, group))
        left -= len(group)
        wilds = sum(map(IS_WILD.__getitem__, group))
        fits = fits and new_group_fits(config, len(group) - wilds, wilds)
    if value < opening_target(state, seat) and not (
        config.concealed_min_exempt and state.drew_from_stock and left <= 1
    ):
        return listed  # (not offered: short of the minimum, §1.10; else a concealed
        # going-out, rule 6, which leaves fewer than two cards: the engine decides)
    # Legal by construction (``engine._quick_check``): Samba's plan of a new meld of each
    # rank's naturals with its wild cards is ``new_group_fits`` of its counts, the opening
    # reaches the minimum (``opening.check_opening_meld``), and two cards stay in hand.
    action = meld_of(opening)
    if (fits and left >= 2) or trial(state, seat, action):
        listed.append(action)
    return listed


def _further(books: _Books, state: GameState, side: int, hand: Sequence[Card]) -> list[Action]:
    """Samba's further moves (``samba.melds.sequence_candidates``), read from the table once
    where they depend on it alone (no sequences, no wild melds: only combining two melds)."""
    found = books.further
    if found is not None:
        return found
    config = books.config
    if config.allow_sequences or config.allow_wild_melds:
        return sequence_candidates(state, side, hand)
    # (``sequence_candidates`` without sequences and wild melds: combining the first two
    # melds of the first further group meld's rank, where several melds of a rank may be)
    rank = books.first_group
    found = [_COMBINES[rank]] if rank >= 0 and config.multiple_melds_per_rank else []
    books.further = found
    return found


_COMBINES: Final = tuple(Combine(MeldRef(rank), MeldRef(rank, 2)) for rank in range(JOKER_RANK))
"""The combination of a rank's first two melds, one shared instance per rank (the verdicts
of ``_Books.verdicts`` are found by the action's identity)."""


def new_group_fits(config: RuleConfig, naturals: int, wilds: int) -> bool:
    """Whether a new group meld of ``naturals`` natural cards of one rank (four to ace) and
    ``wilds`` wild cards is valid (``samba.melds.group_fault`` with ``new=True``), asked of
    the counts alone: the book's seven cards (§3.7), three cards and two naturals at least
    and the wild limit (§1.9, §3.4, §3.7)."""
    total = naturals + wilds
    if config.closed_books and total > CANASTA_SIZE:
        return False
    if total < 3 or naturals < 2:
        return False
    return wilds <= 0 or wilds <= wild_cap(config.wild_limit, naturals)


# -- the ruleset: classic's and Samba's hooks answered by the rules above ----------------------


class HandAndFoot(Samba):
    """Hand and Foot (§3.7, §3.8a): Samba's further melds (a second meld of a rank, wild
    books) with closed books, the foot and book requirements to go out."""

    name = "hand_and_foot"

    def deal_extras(
        self, config: RuleConfig, order: Sequence[Card], start: int, dealer: int
    ) -> tuple[tuple[tuple[Card, ...], ...], int]:
        return deal_feet(config, order, start, dealer)

    def holds_reserve(self, s: GameState, seat: int) -> bool:
        return foot_waiting(s, seat)

    def take_up_reserve(self, s: GameState, seat: int) -> None:
        pick_up_foot(s, seat)

    def guard_turn_end(self, s: GameState, seat: int) -> bool:
        """A player still on the hand may empty it (the foot comes up at once) but may not
        meld black threes, which are melded only when going out (§3.7, §3.8a)."""
        if not foot_waiting(s, seat):
            return False
        if s.must_go_out or s.melds[s.side_of[seat]][THREE]:  # (even one that empties the hand)
            raise IllegalMoveError(
                "black threes are melded only when going out, and you are still playing "
                "your hand, not your foot",
                "3.7",
            )
        if not s.hands[seat]:
            pick_up_foot(s, seat)
        return True

    def why_melds_keep_in(self, s: GameState, side: int) -> str | None:
        config = s.config
        if config.clean_books_to_go_out or config.dirty_books_to_go_out:
            return books_missing(s, side)
        return super().why_melds_keep_in(s, side)

    def can_place_out(
        self,
        config: RuleConfig,
        hand: Sequence[Card],
        melds: Melds,
        extra: tuple[tuple[Card, ...], ...],
        minimum: int | None,
        allow_discard: bool,
    ) -> bool | None:
        if config.closed_books:  # books close at seven, and may need to be of each kind
            return foot_can_go_out(config, hand, melds, extra, minimum, allow_discard)
        return super().can_place_out(config, hand, melds, extra, minimum, allow_discard)

    def meld_candidates(self, s: GameState, seat: int) -> tuple[list[Action], list[Action]] | None:
        """An opened side's moves once books close, listed in one pass (``book_candidates``);
        otherwise classic's lists with ``further_candidates`` below."""
        if s.config.closed_books and s.extra and s.opened(s.side_of[seat]):
            return book_candidates(s, seat)
        return super().meld_candidates(s, seat)

    def further_candidates(
        self, s: GameState, side: int, hand: Sequence[Card]
    ) -> tuple[list[Action], list[Action]]:
        known, check = super().further_candidates(s, side, hand)
        if s.config.closed_books:
            if s.extra and s.opened(side):  # (an unopened side has no meld to add to)
                sure, unsure = foot_candidates(s, side, hand)
                known += sure
                check += unsure
            if s.must_go_out:  # every step of a way out, so the list never runs dry
                check += way_out_steps(s, side, hand)
        return known, check

    def play_listing(
        self, s: GameState, seat: int, may_ask: bool, trial: Trial
    ) -> list[Action] | None:
        if s.config.closed_books and s.extra:
            if not s.opened(s.side_of[seat]):
                return opening_listing(s, seat, trial)
            return book_listing(s, seat, may_ask, trial)
        return None

    def candidate_verdicts(self, s: GameState, seat: int) -> Verdict | None:
        """The start of a turn lists takes of the pile only, which Samba's verdicts decide
        (Hand and Foot takes the pile by Samba's rules, §3.8a); after the draw, the books'."""
        if s.config.closed_books and s.extra and s.phase is not Phase.DRAW:
            return group_verdicts(s, seat)
        return super().candidate_verdicts(s, seat)

    def unplayed_penalty(self, s: GameState, side: int) -> int:
        return unplayed_foot_penalty(s, side)


register(HandAndFoot)  # (a call, not a decorator: a compiled build keeps the class native)
