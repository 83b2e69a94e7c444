"""Hand and Foot: the foot, closed books, the partial pile take, book requirements to go out,
scoring an unplayed foot, and a match of a fixed number of hands (RULES.md §3.7, §3.8a).

Hand and Foot has no standard rules; RULES.md recommends a preset (``config.PRESETS``,
``hand_and_foot``) and every row of its table is an option of ``RuleConfig``. Most rows reuse
what the other games already have: the draw of two, the bonuses, the wild limit of a meld
(``melds``), several melds of a rank (Samba's machinery in ``samba``, for the second book of a
rank once the first is closed). What only this game has is here, and the rule modules call in
with one line each where the game differs:

* the deal gives every seat a second packet, the foot, face down (``deal_feet``); nobody sees
  it, its owner included, until the hand is used up, and then it is picked up at once, in the
  same turn (§3.8a; ``pick_up_foot``). Emptying the hand is not going out: only a player
  playing the foot may go out;
* taking the pile takes its top cards only, the top card among them (``pile_cards_taken``);
* a seven-card meld is a closed book (``melds.check_meld`` refuses an eighth card);
* going out needs books of each kind (``books_missing``), and the search that tells whether a
  player could go out this turn (``foot_can_go_out``) knows that books close at seven;
* cards of an unplayed foot count against the side like cards in hand (``unplayed_foot_penalty``);
* the match is a fixed number of hands, the highest total winning (``hand_count_winners``).
"""

from __future__ import annotations

from collections.abc import Sequence

from .actions import Action, LayOff, Meld
from .cards import IS_BLACK3, IS_NATURAL, IS_RED3, IS_WILD, RANK, SEVEN, SORT_KEY, VALUE, Card
from .config import RuleConfig
from .edits import set_hand
from .melds import CANASTA_SIZE
from .state import Event, Extra, GameState, Melds
from .threes import lay_out_red_threes

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


def pile_cards_taken(s: GameState) -> tuple[Card, ...]:
    """The cards under the top card that taking the pile takes (§3.7, §3.8a): all of them,
    or with ``pile_take_count`` only so many from the top, the top card counted."""
    count = s.config.pile_take_count
    if count is None:
        return s.pile[:-1]
    return s.pile[max(0, len(s.pile) - count) : -1]


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
    obeyable, §1.11.2; the dead-end guard, §1.11.3), so every way found is a real one: cards
    go onto the first open meld of their rank or form one new meld, wild cards onto melds
    with room under the wild limit, and the books made must meet the going-out requirement.
    It can miss a way out that splits a rank over two new melds [engine policy].
    """
    candidates: list[Card | None] = [None]
    if allow_discard:
        candidates.extend(dict.fromkeys(hand))
    for discard in candidates:
        rest = list(hand)
        if discard is not None:
            rest.remove(discard)
        if _place_all(config, rest, melds, extra, minimum):
            return True
    return False


def _place_all(
    config: RuleConfig,
    cards: Sequence[Card],
    melds: Melds,
    extra: Extra,
    minimum: int | None,
) -> bool:
    """Whether every card can be put down (see ``foot_can_go_out``), leaving enough books."""
    if any(IS_BLACK3[c] for c in cards):
        return False  # never counted on: the one discard may take a black three
    if minimum is not None and sum(VALUE[c] for c in cards) < minimum:
        return False
    table: list[list[int]] = []  # [naturals, wilds] of every group meld of the side
    first_open: dict[int, int] = {}  # rank -> index in ``table`` of its first open meld
    for meld in (*melds, *extra):
        if not meld or any(IS_BLACK3[c] for c in meld):
            continue
        wilds = sum(1 for c in meld if IS_WILD[c])
        if len(meld) < CANASTA_SIZE:
            rank = next(RANK[c] for c in meld if not IS_WILD[c])
            first_open.setdefault(rank, len(table))
        table.append([len(meld) - wilds, wilds])
    by_rank: dict[int, int] = {}
    wild_cards = 0
    for card in cards:
        if IS_WILD[card]:
            wild_cards += 1
        elif IS_NATURAL[card]:
            by_rank[RANK[card]] = by_rank.get(RANK[card], 0) + 1
    for rank, count in by_rank.items():
        place = first_open.get(rank)
        if place is not None:
            if sum(table[place]) + count > CANASTA_SIZE:
                return False
            table[place][0] += count
        elif 2 <= count <= CANASTA_SIZE:
            table.append([count, 0])
        else:
            return False
    for entry in table:  # a new meld of two naturals needs its wild card first
        if entry == [2, 0]:
            if not wild_cards:
                return False
            entry[1] = 1
            wild_cards -= 1
    for entry in sorted(table, key=lambda e: CANASTA_SIZE - sum(e)):
        while wild_cards and sum(entry) < CANASTA_SIZE and entry[1] < config.max_wilds(entry[0]):
            entry[1] += 1
            wild_cards -= 1
    if wild_cards:
        return False
    clean = sum(1 for n, w in table if n + w >= CANASTA_SIZE and not w)
    dirty = sum(1 for n, w in table if n + w >= CANASTA_SIZE and w)
    return (
        clean >= config.clean_books_to_go_out
        and dirty >= config.dirty_books_to_go_out
        and clean + dirty >= config.canastas_to_go_out
    )


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


def sevens_bonus(config: RuleConfig, melds: Sequence[Sequence[Card]]) -> int:
    """What clean books of sevens earn beyond a clean book's bonus (HF-DW's 1500 option)."""
    if config.clean_sevens_bonus is None:
        return 0
    books = sum(
        1
        for m in melds
        if len(m) >= CANASTA_SIZE and all(RANK[c] == SEVEN and not IS_WILD[c] for c in m)
    )
    return books * (config.clean_sevens_bonus - config.natural_canasta_bonus)


def hand_count_winners(state: GameState) -> tuple[int, ...]:
    """§3.7: once the match's last hand is scored, the columns with the highest total (two or
    more: a tie, which ``tie_policy`` settles); empty before that."""
    limit = state.config.hands_per_match
    if limit is None or state.hand_number < limit:
        return ()
    best = max(state.scores)
    return tuple(i for i, score in enumerate(state.scores) if score == best)


# -- candidates for the move lists (``legal``, bots) ----------------------------------------------


def foot_candidates(state: GameState, side: int, hand: Sequence[Card]) -> list[Action]:
    """Moves worth listing once books close at seven (each still checked by the engine): the
    cards of a rank onto the first open meld of that rank (as many as fit), or a new meld of
    them when every meld of the rank is closed, and the cheapest wild card onto each open
    meld."""
    melds = state.melds[side]
    extra = state.extra_of(side)
    open_melds: dict[int, tuple[int, int]] = {}  # rank -> (which, size) of its first open meld
    closed: set[int] = set()
    counts: dict[int, int] = {}
    for rank, meld in enumerate(melds):
        if meld:
            counts[rank] = 1
            if len(meld) < CANASTA_SIZE:
                open_melds[rank] = (1, len(meld))
            else:
                closed.add(rank)
    for meld in extra:
        rank = next(RANK[c] for c in meld if not IS_WILD[c])
        counts[rank] = counts.get(rank, 0) + 1
        if len(meld) < CANASTA_SIZE and rank not in open_melds:
            open_melds[rank] = (counts[rank], len(meld))
    by_rank: dict[int, list[Card]] = {}
    wilds = sorted((c for c in hand if IS_WILD[c]), key=VALUE.__getitem__)
    for card in hand:
        if IS_NATURAL[card]:
            by_rank.setdefault(RANK[card], []).append(card)
    out: list[Action] = []
    for rank, cards in by_rank.items():
        if rank in open_melds:
            which, size = open_melds[rank]
            room = CANASTA_SIZE - size
            out.append(LayOff(rank, tuple(cards[:room]), which))
        elif rank in closed:
            if len(cards) >= 3:
                out.append(Meld((tuple(cards[:CANASTA_SIZE]),)))
            elif len(cards) == 2 and wilds:
                out.append(Meld(((*cards, wilds[0]),)))
    if wilds:
        for rank, (which, _size) in open_melds.items():
            out.append(LayOff(rank, (wilds[0],), which))
    return out
