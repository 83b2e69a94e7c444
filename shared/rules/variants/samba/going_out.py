"""Samba and Bolivia's going-out search: can this hand be melded out (docs/rules.md §3.4, §3.5)?

``goingout.can_go_out`` hands over here through the Samba ruleset's ``can_place_out``. The search is
exact for the final layout: one optional discard is set aside, and every other card must
end on the table in a layout the moves can reach this turn. Any such layout can be reached
(naturals may join a meld at any time, so only the wild cards' order matters), so the search
looks at final layouts, in three steps:

* sequences, suit by suit: each existing sequence may grow within four to ace and seven
  cards, new sequences of three to seven cards may start, and sequences of one suit never
  overlap or touch (§3.8a), so an existing one never joins another;
* the group melds of each rank: the hand's remaining naturals and some wild cards go onto
  the side's melds of that rank (which may be combined), or into new melds of two or more
  naturals, within the wild limit, and with no wild card onto a completed canasta, directly
  or by combining, where the rules forbid it (§3.4);
* Bolivia's wild-card melds: wild cards onto a wild meld up to seven, or new ones of three
  to seven (§3.5).

The wild limit is checked on each finished meld: exact for the fixed limits (two in the
presets, or three); under a limit that grows with the naturals together with no wild card
onto a canasta (no preset), an order of lay-offs that keeps every step within the limit is
assumed.

Every step is memoised on small integer keys, and the sequences of each suit are few, so
a hand of twenty cards is decided in some thousands of steps (the memos' ``cache_info``
counts them).

Cheap necessary conditions come first (``_might_go_out``), each exact (it refuses only
hands that cannot go out; tests/shared/rules/test_going_out_samba_bolivia.py holds the
answer to the whole search over every discard), and most questions stop there (five in
six in random play): at most one card with no meld to join (a lone natural needs a group
of its rank on the table, a run of three of its suit, or a sequence to grow), a wild card
for each pair with no meld, and enough cards and wild cards for the canastas and
escaleras still missing. They
read the hand once, by rank and by suit as bits, and the side's melds once per table
(``TableFacts``, kept by the melds' identity: the move lists ask at each turn of a side
whose melds have not changed). The move lists ask of one hand again and again, so the
whole search is memoised too, on the hand and the table's serial.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import NamedTuple

from ...cards import (
    ACE,
    FOUR,
    IS_BLACK3,
    IS_NATURAL,
    IS_WILD,
    JOKER,
    JOKER_RANK,
    RANK,
    SUIT,
    THREE,
    TWO,
    VALUE,
    Card,
    make_card,
)
from ...config import RuleConfig, wild_cap
from ...goingout import useful_discards
from ...melds import CANASTA_SIZE, SEQUENCE, WILD, meld_facts
from ...memo import remember
from ...state import Extra, Melds
from .melds import further_facts, sequence_span

Part = tuple[int, int]
"""A group meld already on the table: (size, wild cards)."""

Rules = tuple[str, int, bool, bool, bool, bool, int]
"""(wild limit; canastas needed; wild card onto a completed canasta allowed; sequences;
several melds of a rank; wild melds; sequence canastas needed): what the search needs of
the config, cheap to hash."""


def variant_can_go_out(
    config: RuleConfig,
    hand: Sequence[Card],
    melds: Melds,
    extra: Extra,
    minimum: int | None,
    allow_discard: bool,
) -> bool:
    """``goingout.can_go_out`` for configs with ``variant_melds`` (Samba, Bolivia)."""
    least = -1 if minimum is None else minimum
    return _decide(search_rules(config), tuple(hand), melds, extra, least, allow_discard)


def search_rules(config: RuleConfig) -> Rules:
    """What the search needs of ``config`` (``Rules``), read once per config."""
    known = _RULES_OF.get(id(config))
    if known is not None and known[0] is config:
        return known[1]
    rules: Rules = (
        config.wild_limit,
        config.canastas_to_go_out,
        config.wild_onto_canasta,
        config.allow_sequences,
        config.multiple_melds_per_rank,
        config.allow_wild_melds,
        config.sequence_canastas_to_go_out,
    )
    remember(_RULES_OF, id(config), (config, rules), 64)
    return rules


_RULES_OF: dict[int, tuple[RuleConfig, Rules]] = {}
"""``search_rules`` by the config's identity (each entry holds its config, so the id stays
its own; hashing a config would read all its fields)."""


def _decide(
    rules: Rules,
    hand: tuple[Card, ...],
    melds: Melds,
    extra: Extra,
    minimum: int,
    allow_discard: bool,
) -> bool:
    """``variant_can_go_out``: the cheap necessary conditions (``_might_go_out``), which
    most positions fail, then the search, memoised (the move lists ask it of one hand again,
    and of hands that differ by the candidate played). The question asked last is kept by
    the identity of its hand and melds: after the draw the listing asks it of the very
    same hand and melds twice, whether partner may be asked (§1.11.2) and whether black
    threes may meld (``melds.black_threes_verdict``), and most answers are refusals, which
    the memo of searches does not keep."""
    last = _LAST_ASKED[0]
    if (
        last is not None
        and last[1] is hand
        and last[2] is melds
        and last[3] is extra
        and last[0] is rules
        and last[4] == minimum
        and last[5] is allow_discard
    ):
        return last[6]
    answer = _answer(rules, hand, melds, extra, minimum, allow_discard)
    _LAST_ASKED[0] = (rules, hand, melds, extra, minimum, allow_discard, answer)
    return answer


_LAST_ASKED: list[tuple[Rules, tuple[Card, ...], Melds, Extra, int, bool, bool] | None] = [None]
"""``_decide``'s last question and answer (holding its tuples, so their ids stay theirs)."""


def _answer(
    rules: Rules,
    hand: tuple[Card, ...],
    melds: Melds,
    extra: Extra,
    minimum: int,
    allow_discard: bool,
) -> bool:
    """``_decide``'s answer, worked out."""
    known = _FACTS_OF.get((id(melds), id(extra)))
    if known is not None and known[0] is melds and known[1] is extra:
        facts = known[2]
    else:
        facts = _table_facts(melds, extra)
        remember(_FACTS_OF, (id(melds), id(extra)), (melds, extra, facts), _FACTS_MOST)
    homeless = _might_go_out(rules, hand, facts, allow_discard)
    if homeless is None:
        return False
    key = (rules, hand, facts.serial, minimum, allow_discard)
    found = _DECIDED.get(key)
    if found is None:
        table = _search_table(melds, extra)
        found = _search(rules, hand, table, facts, minimum, allow_discard, homeless)
        remember(_DECIDED, key, found, _DECIDED_MOST)
    return found


_FACTS_OF: dict[tuple[int, int], tuple[Melds, Extra, TableFacts]] = {}
"""``_table_facts`` by the identity of the melds asked about (the same tuples, passed from one
position to the next until the side melds, are asked about at each of its turns): no
hashing of their cards. Each entry holds its tuples, so their ids stay theirs."""
_FACTS_MOST = 32
_DECIDED: dict[tuple[Rules, tuple[Card, ...], int, int, bool], bool] = {}
"""``_decide``'s searches, by hand and table (``TableFacts.serial``); the oldest dropped when
full (``remember``): every hit is among the newest few dozen."""
_DECIDED_MOST = 64


Table = tuple[tuple[tuple[Part, ...], ...], tuple[tuple[int, int, int], ...], tuple[int, ...]]
"""A side's melds as the search sees them: the group melds of each rank (indexed by rank),
the sequences (suit, lowest rank, highest rank) and the sizes of the wild melds."""


_OPEN_WINDOWS: tuple[tuple[int, int], ...] = tuple(
    (((1 << CANASTA_SIZE) - 1) << start, CANASTA_SIZE)
    for start in range(FOUR, ACE - CANASTA_SIZE + 2)
)
"""``TableFacts.windows`` of a suit with no sequence on the table: any seven ranks in a row."""
_NO_SPANS: tuple[tuple[tuple[int, int], ...], ...] = ((), (), (), ())
_ALL_OPEN: tuple[tuple[tuple[int, int], ...], ...] = (_OPEN_WINDOWS,) * 4


class TableFacts(NamedTuple):
    """What the cheap conditions need of a side's melds, read once per table (a table is
    asked about at a seat's turn, and after each meld or lay-off of an obliged player)."""

    serial: int
    """Tells this table's facts from every other's (the search's memo keys on it, cheaper
    to hash than the melds)."""
    grouped: int
    """The ranks holding a group meld (rank-indexed or further), as bits."""
    canastas: int
    escaleras: int
    """Seven-card sequences."""
    spans: tuple[tuple[tuple[int, int], ...], ...]
    """Per suit, its sequences on the table (lowest rank, highest rank), complete or not."""
    loose: tuple[int, ...]
    """Cards on incomplete group melds, by rank (13: on incomplete wild melds)."""
    loose_wilds: tuple[int, ...]
    """Wild cards on incomplete group melds, by rank."""
    windows: tuple[tuple[tuple[int, int], ...], ...]
    """Per suit, each seven-card sequence it could still get: (the ranks the hand must
    supply, as bits; how many that is). A window of seven ranks qualifies when every
    sequence of the suit it overlaps or touches lies inside it, incomplete (sequences of a
    suit never overlap or touch, §3.8a, and a samba takes no more, §3.4)."""


_SERIALS = itertools.count()


@lru_cache(maxsize=32)
def _table_facts(melds: Melds, extra: Extra) -> TableFacts:
    grouped = canastas = escaleras = 0
    loose = [0] * 14
    loose_wilds = [0] * 14
    for rank in range(THREE, ACE + 1):  # (the rank-indexed melds are group melds)
        cards = melds[rank]
        size = len(cards)
        if size:
            grouped |= 1 << rank
            if size >= CANASTA_SIZE:
                canastas += 1
            else:
                loose[rank] += size
                loose_wilds[rank] += meld_facts(cards)[2]
    spans: tuple[tuple[tuple[int, int], ...], ...] = _NO_SPANS
    windows = _ALL_OPEN
    by_suit: list[list[tuple[int, int]]] | None = None
    for cards in extra:
        kind, rank, wilds, suit, low, high = further_facts(cards)
        size = len(cards)
        complete = size >= CANASTA_SIZE
        canastas += complete
        if kind == SEQUENCE:
            if by_suit is None:
                by_suit = [[], [], [], []]
            by_suit[suit].append((low, high))
            escaleras += complete
        elif kind == WILD:
            if not complete:
                loose[JOKER_RANK] += size
        else:
            grouped |= 1 << rank
            if not complete:
                loose[rank] += size
                loose_wilds[rank] += wilds
    if by_suit is not None:
        spans = tuple(tuple(sorted(own)) for own in by_suit)
        windows = tuple(_windows(own) if own else _OPEN_WINDOWS for own in spans)
    return TableFacts(
        next(_SERIALS),
        grouped,
        canastas,
        escaleras,
        spans,
        tuple(loose),
        tuple(loose_wilds),
        windows,
    )


@lru_cache(maxsize=1024)
def _windows(spans: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
    """``TableFacts.windows`` of a suit with sequences ``spans`` on the table."""
    found: list[tuple[int, int]] = []
    for start in range(FOUR, ACE - CANASTA_SIZE + 2):
        end = start + CANASTA_SIZE - 1
        needed = ((1 << CANASTA_SIZE) - 1) << start
        fits = True
        for low, high in spans:
            if high < start - 1 or low > end + 1:
                continue  # apart from the window
            if low < start or high > end or high - low + 1 >= CANASTA_SIZE:
                fits = False  # it would join the window's run and outgrow seven
                break
            needed &= ~(((1 << (high - low + 1)) - 1) << low)
        if fits:
            found.append((needed, needed.bit_count()))
    return tuple(found)


@lru_cache(maxsize=32)
def _search_table(melds: Melds, extra: Extra) -> Table:
    """A side's melds as the search sees them (``Table``)."""
    groups: list[list[Part]] = [[] for _ in range(13)]
    sequences: list[tuple[int, int, int]] = []
    wild_melds: list[int] = []
    for cards in (*melds, *extra):
        if not cards:
            continue
        kind, rank, wilds = meld_facts(cards)
        if kind == SEQUENCE:
            sequences.append(sequence_span(cards))
        elif kind == WILD:
            wild_melds.append(len(cards))
        else:
            groups[rank].append((len(cards), wilds))
    return (
        tuple(tuple(sorted(g)) if len(g) > 1 else tuple(g) for g in groups),
        tuple(sorted(sequences)),
        tuple(sorted(wild_melds)),
    )


_NATURAL_BIT = tuple(1 << RANK[card] if IS_NATURAL[card] else 0 for card in range(JOKER + 1))
"""Per card, its rank's bit if it is a natural (4 to ace), else 0."""
_SUIT_RANKS = (1 << 13) - 1
"""The rank bits of one suit in a hand's bits by card (``card = suit * 13 + rank``)."""


def _might_go_out(
    rules: Rules, hand: Sequence[Card], facts: TableFacts, allow_discard: bool
) -> int | None:
    """Cheap necessary conditions, which most positions fail, sparing the search: at most
    one card (the final discard) may have no meld to join, and the hand and the melds must
    hold the cards of enough canastas (and escaleras). ``None`` when they fail, else the card
    with no meld to join (which must be the discard), or -1.

    A natural has no meld to join when the side has no group meld of its rank, the hand
    cannot start one (a new meld needs three cards, two of them natural: a third card of
    the rank, or a pair and a wild card) and no sequence can take it (``_sequence_takes``;
    of two such cards of one suit and rank, a sequence takes one at most, since sequences
    of a suit never overlap). One or two black threes with no black-three meld have no
    meld to join either. A seven-card sequence needs seven ranks in a row of its suit, each
    in hand or on a sequence of the suit inside the window (``TableFacts.windows``)."""
    counts = [0] * 14
    suit_ranks = [0, 0, 0, 0]  # the natural ranks held in each suit, as bits
    for card in hand:
        counts[RANK[card]] += 1
        suit_ranks[SUIT[card]] |= _NATURAL_BIT[card]  # (a joker's suit, -1, gets no bit)
    grouped = facts.grouped
    threes = counts[THREE]
    stranded = 0
    homeless = -1
    if threes and threes < 3 and not grouped >> THREE & 1:
        stranded = threes
        for card in hand:
            if IS_BLACK3[card]:
                homeless = card
                break
    sequences = rules[3]
    wilds = counts[TWO] + counts[JOKER_RANK]
    alone = 2 if wilds else 3  # fewer of a rank than this cannot start a meld of it
    spans = facts.spans
    trios: list[int] | None = None  # per suit, bit r: ranks r, r + 1 and r + 2 held
    for rank in range(FOUR, ACE + 1):
        held_here = counts[rank]
        if not held_here or held_here >= alone or grouped >> rank & 1:
            continue
        if trios is None:
            trios = [ranks & ranks >> 1 & ranks >> 2 for ranks in suit_ranks]
        for suit in range(4):
            if not suit_ranks[suit] >> rank & 1:
                continue
            card = suit * 13 + rank
            copies = 2 if held_here == 2 and hand.count(card) == 2 else 1
            if sequences and (
                _sequence_takes(suit_ranks[suit], rank, spans[suit])
                if spans[suit]
                else trios[suit] >> (rank - 2) & 7  # (a run of three through it)
            ):
                copies -= 1
            if copies:
                stranded += copies
                homeless = card
        if stranded > 1:
            return None
    if stranded > (1 if allow_discard else 0):
        return None
    # A pair of a rank with no meld, which sequences cannot both take, melds with a wild card.
    paired = 0
    if wilds:
        for rank in range(FOUR, ACE + 1):
            if counts[rank] != 2 or grouped >> rank & 1:
                continue
            if sequences and _pair_in_sequences(hand, rank, suit_ranks, facts.spans):
                continue
            paired += 1
        if paired and allow_discard and homeless < 0:
            paired -= 1  # (the discard may break one pair)
        if paired > wilds:
            return None
    missing = rules[1] - facts.canastas
    if missing <= 0 and rules[6] <= facts.escaleras:
        return homeless  # (the canastas are there: no cost to weigh)
    sequence_costs: list[int] = []
    if sequences:  # at most one more seven-card sequence of each suit
        windows = facts.windows
        for suit in range(4):
            ranks = suit_ranks[suit]
            if windows[suit] is _OPEN_WINDOWS:  # no sequence of the suit on the table
                run = ranks & ranks >> 1  # (bit r: ranks r and r + 1 held; then four, seven)
                run &= run >> 2
                if run & run >> 3:
                    sequence_costs.append(CANASTA_SIZE)
                continue
            cheapest = CANASTA_SIZE + 1
            for needed, cost in windows[suit]:
                if ranks & needed == needed and cost < cheapest:
                    cheapest = cost
            if cheapest <= CANASTA_SIZE:
                sequence_costs.append(cheapest)
    room = len(hand)
    if missing > 0:
        # What each canasta still possible costs in hand cards at least: the cards on the
        # table's incomplete melds count toward it (combined, for groups of a rank).
        loose = facts.loose
        costs = sequence_costs[:]
        for rank in range(FOUR, ACE + 1):
            on_table = loose[rank]
            for _ in range((on_table + counts[rank] + wilds) // CANASTA_SIZE):
                costs.append(max(0, CANASTA_SIZE - on_table))
                on_table = max(0, on_table - CANASTA_SIZE)
        if rules[5]:
            on_table = loose[JOKER_RANK]
            for _ in range((on_table + wilds) // CANASTA_SIZE):
                costs.append(max(0, CANASTA_SIZE - on_table))
                on_table = max(0, on_table - CANASTA_SIZE)
        if len(costs) < missing:
            return None
        costs.sort()
        if sum(costs[:missing]) > room:
            return None
        if _wilds_short(rules, counts, facts, wilds - paired, missing, len(sequence_costs)):
            return None
    missing = rules[6] - facts.escaleras
    if missing > 0:
        if len(sequence_costs) < missing:
            return None
        sequence_costs.sort()
        if sum(sequence_costs[:missing]) > room:
            return None
    return homeless


def _pair_in_sequences(
    hand: Sequence[Card],
    rank: int,
    suit_ranks: list[int],
    spans: tuple[tuple[tuple[int, int], ...], ...],
) -> bool:
    """Whether sequences could take both cards of a pair of ``rank`` (of two suits: two
    sequences of one suit never share a rank, §3.8a)."""
    suits = [suit for suit in range(4) if suit_ranks[suit] >> rank & 1]
    if len(suits) != 2:
        return False  # (both of one suit)
    return all(_sequence_takes(suit_ranks[suit], rank, spans[suit]) for suit in suits)


_NATURALS_IN_CANASTA = {
    limit: min(n for n in range(CANASTA_SIZE + 1) if n + wild_cap(limit, n) >= CANASTA_SIZE)
    for limit in ("max2", "max3", "not_more_than_naturals", "fewer_than_naturals_max3")
}
"""The fewest natural cards a seven-card group meld holds under each wild limit."""


def _wilds_short(
    rules: Rules,
    counts: list[int],
    facts: TableFacts,
    wilds: int,
    missing: int,
    sequences: int,
) -> bool:
    """Whether ``wilds`` wild cards from hand are too few for ``missing`` more canastas
    (``sequences`` of them may be seven-card sequences, which take none). The ``k``
    canastas of a rank hold seven cards each and at most the wild limit's wild cards each
    (§1.9, §3.4), so the naturals on its incomplete melds and in hand, ``a``, and the wild
    cards already on those melds, ``b``, leave at least ``7k - a - min(b, cap k)`` to come
    from hand, and ``k`` is at most ``a`` over the fewest naturals a canasta holds; a wild
    meld's ``k`` canastas (§3.5) need ``7k`` wild cards less those on the table. Each such
    cost grows by at least as much with every further canasta, so the cheapest ``missing``
    steps over all of them are the least the hand must supply."""
    limit = rules[0]
    fewest = _NATURALS_IN_CANASTA.get(limit, 1)
    cap = wild_cap(limit, CANASTA_SIZE) if limit in ("max2", "max3") else CANASTA_SIZE
    loose = facts.loose
    loose_wilds = facts.loose_wilds
    steps = [0] * sequences
    for rank in range(FOUR, ACE + 1):
        held = loose_wilds[rank]
        naturals = loose[rank] - held + counts[rank]
        before = 0
        for k in range(1, naturals // fewest + 1):
            cost = max(0, CANASTA_SIZE * k - naturals - min(held, cap * k))
            steps.append(cost - before)
            before = cost
    if rules[5]:
        on_table = loose[JOKER_RANK]
        before = 0
        for k in range(1, (on_table + wilds) // CANASTA_SIZE + 1):
            cost = max(0, CANASTA_SIZE * k - on_table)
            steps.append(cost - before)
            before = cost
    if len(steps) < missing:
        return True
    steps.sort()
    return sum(steps[:missing]) > wilds


def _sequence_takes(ranks: int, rank: int, spans: tuple[tuple[int, int], ...]) -> bool:
    """Whether some sequence could take the natural of ``rank`` in a suit whose ranks in
    hand are ``ranks`` (bits) and whose sequences on the table are ``spans``: a run of three
    or more ranks in hand through it, or a run from it up to an incomplete sequence it
    would grow within seven cards. A rank inside a sequence of its suit joins none (a second
    sequence would overlap that one, §3.8a)."""
    for low, high in spans:
        if low <= rank <= high:
            return False
    low = high = rank
    while low > FOUR and ranks >> (low - 1) & 1:
        low -= 1
    while high < ACE and ranks >> (high + 1) & 1:
        high += 1
    if high - low >= 2:
        return True
    for first, last in spans:
        if last - first + 1 >= CANASTA_SIZE:
            continue
        if last < rank and low <= last + 1 and rank - first < CANASTA_SIZE:
            return True
        if rank < first and high >= first - 1 and last - rank < CANASTA_SIZE:
            return True
    return False


def _search(
    rules: Rules,
    hand: tuple[Card, ...],
    table: Table,
    facts: TableFacts,
    minimum: int,
    allow_discard: bool,
    homeless: int,
) -> bool:
    """Meld everything, or all but one final discard: the card with no meld to join when
    there is one, else any card (these games refuse no discard). Each try asks the quick
    layout first (``_plain_layout``), which finds most ways out, then the whole search
    (after a discard, only if the cheap conditions hold for the cards left)."""
    if homeless >= 0:
        rest = list(hand)
        rest.remove(homeless)
        return _plain_layout(rules, rest, table, minimum, False) or _place_all(
            rules, tuple(rest), table, minimum
        )
    if _plain_layout(rules, hand, table, minimum, False):
        return True
    if allow_discard and _plain_layout(rules, hand, table, minimum, True):
        return True
    if _place_all(rules, hand, table, minimum):
        return True
    if not allow_discard:
        return False
    # (with sequences, any card may be the one to discard: a natural of a rank held three
    # times may be left alone when its fellows go into sequences of their suits, §3.4, so
    # ``useful_discards``' argument, that more naturals of a rank never hurt, fails there)
    discards = dict.fromkeys(hand) if rules[3] else useful_discards(hand, table[0], 2)
    for card in discards:
        rest = list(hand)
        rest.remove(card)
        if _might_go_out(rules, rest, facts, False) is None:
            continue
        if _plain_layout(rules, rest, table, minimum, False) or _place_all(
            rules, tuple(rest), table, minimum
        ):
            return True
    return False


def _plain_layout(
    rules: Rules, cards: Sequence[Card], table: Table, minimum: int, discard: bool
) -> bool:
    """A quick sufficient test for ``_search``: True when one plain layout of ``cards``
    (with ``discard``, of all of them but one of ``useful_discards``'s kinds: a lone
    natural with no meld of its rank, a lone black three, the cheapest wild card) meets the
    going-out requirement; False when this one does not, and the whole search decides.

    The layout leaves the sequences and the wild melds as they are; the naturals of a rank
    join its largest group meld, or make one new meld of three or more (a pair takes a wild
    card); black threes make or join the black-three meld; then wild cards finish the melds
    closest to seven, within the wild limit (none onto a completed canasta where the rules
    forbid it, §3.4), and the rest go wherever the limit allows. Each step is one the
    search allows (``_rank_best``, ``_new_melds``, ``_block_ok``), so a layout found here is
    one ``_place_all`` finds too, for the cards left once that discard is set aside (which
    ``_search`` tries): the answer is the same, found sooner."""
    groups, sequences, wild_melds = table
    counts = [0] * 13
    wild_values: list[int] = []
    black = value = 0
    for card in cards:
        value += VALUE[card]
        if IS_WILD[card]:
            wild_values.append(VALUE[card])
        elif IS_BLACK3[card]:
            black += 1
        else:
            counts[RANK[card]] += 1
    if 0 < black < 3 and not groups[THREE]:
        if not discard or black > 1:
            return False
        discard = False
        value -= VALUE[cards[[IS_BLACK3[c] for c in cards].index(True)]]
    limit = rules[0]
    onto_canasta = rules[2]
    made = sum(1 for _, low, high in sequences if high - low + 1 >= CANASTA_SIZE)
    if made < rules[6]:
        return False
    made += sum(1 for size in wild_melds if size >= CANASTA_SIZE)
    wilds = len(wild_values)
    open_melds: list[tuple[int, int]] = []  # (cards, wild cards that may still join)
    for rank in range(FOUR, ACE + 1):
        parts = groups[rank]
        added = counts[rank]
        if parts:
            largest = len(parts) - 1  # (a table's parts are sorted: the largest comes last)
            for i, (size, held) in enumerate(parts):
                if i == largest:
                    size += added
                if size >= CANASTA_SIZE:
                    made += 1
                elif onto_canasta or parts[i][0] < CANASTA_SIZE:
                    room = wild_cap(limit, size - held) - held
                    if room > 0:
                        open_melds.append((size, room))
        elif added == 1:
            if not discard:
                return False
            discard = False
            value -= VALUE[make_card(rank, 0)]
        elif added == 2:
            if not wilds or wild_cap(limit, 2) < 1:
                return False
            wilds -= 1
            open_melds.append((3, wild_cap(limit, 2) - 1))
        elif added:
            if added >= CANASTA_SIZE:
                made += 1
            else:
                open_melds.append((added, wild_cap(limit, added)))
    if wilds:
        open_melds.sort(key=lambda meld: CANASTA_SIZE - meld[0])
        spare = 0
        for size, room in open_melds:
            missing = CANASTA_SIZE - size
            if missing <= room and missing <= wilds:
                wilds -= missing
                made += 1
                room -= missing
            spare += room
        if wilds > spare:
            if not discard or wilds > spare + 1:
                return False
            value -= min(wild_values)
    return made >= rules[1] and (minimum < 0 or value >= minimum)


def _place_all(rules: Rules, cards: tuple[Card, ...], table: Table, minimum: int) -> bool:
    """Whether every card of ``cards`` can go onto the table (worth ``minimum`` or more),
    the side then meeting the going-out requirement.

    The naturals left after each suit's sequences are one integer, a field of
    ``_FIELD`` bits per rank (``_packed``): a way of laying a suit takes one card of each
    rank it uses, which is one subtraction of that way's ``_spread`` (no field borrows: a
    way uses only ranks the suit holds, each card once), so the states of big hands, whose
    ways multiply from suit to suit, cost a subtraction each, not a list and a tuple."""
    if minimum >= 0 and sum(VALUE[c] for c in cards) < minimum:
        return False
    groups, sequences, wild_melds = table
    wilds = black = 0
    counts = [0] * 13
    by_suit = ([0] * 13, [0] * 13, [0] * 13, [0] * 13)
    held = [0, 0, 0, 0]  # the naturals' ranks in each suit, as bits
    for card in cards:
        if IS_WILD[card]:
            wilds += 1
        elif IS_BLACK3[card]:
            black += 1
        else:
            rank = RANK[card]
            suit = SUIT[card]
            counts[rank] += 1
            by_suit[suit][rank] += 1
            held[suit] |= 1 << rank
    if 0 < black < 3 and not groups[THREE]:
        return False
    homeless = [r for r in range(FOUR, ACE + 1) if not groups[r]]  # ranks with no group meld
    cap = max(rules[1], rules[6])  # more sequence canastas than that change nothing
    states = {(_packed(counts), 0)}
    to_come = (held[1] | held[2] | held[3], held[2] | held[3], held[3], 0)
    spans_of: list[list[tuple[int, int]]] = [[], [], [], []]
    for x, low, high in sequences:
        spans_of[x].append((low, high))
    active = [
        suit
        for suit in range(4)
        if spans_of[suit] or (rules[3] and held[suit] & held[suit] >> 1 & held[suit] >> 2)
    ]  # the others hold no sequence, nor three ranks in a row for one (``_suit_options``)
    for i, suit in enumerate(active):
        options = _suit_options(rules[3], tuple(by_suit[suit]), tuple(spans_of[suit]))
        if len(options) == 1 and not options[0][0]:
            made = options[0][1]
            if made:
                states = {(left, min(cap, seq + made)) for left, seq in states}
            continue
        ways = [(_spread(used), made) for used, made in options]
        after: set[tuple[int, int]] = set()
        for left, seq in states:
            for taken, made in ways:
                total = seq + made
                after.add((left - taken, total if total < cap else cap))
        states = after
        if i + 1 < len(active):
            # A natural left alone, of a rank with no meld and no card in the suits still
            # to come (which could take one more into a sequence), has nowhere to go (the
            # last suit's states meet the same test below).
            later = to_come[suit]
            settled = [r * _FIELD for r in homeless if not later >> r & 1]
            if settled:
                states = {
                    state
                    for state in after
                    if all(state[0] >> shift & _FIELD_MASK != 1 for shift in settled)
                }
    lone = [r * _FIELD for r in homeless]
    for left, seq in states:
        if seq < rules[6] or any(left >> shift & _FIELD_MASK == 1 for shift in lone):
            continue  # too few escaleras, or a lone natural with no meld to join
        rows = tuple(left >> (r * _FIELD) & _FIELD_MASK for r in range(13))
        best = _groups_best(rules, groups, rows, wilds, wild_melds)
        if best >= 0 and best + seq >= rules[1]:
            return True
    return False


_FIELD = 8
"""Bits per rank in ``_place_all``'s packed counts (a hand holds far fewer than 256 cards of
a rank)."""
_FIELD_MASK = (1 << _FIELD) - 1


def _packed(counts: Sequence[int]) -> int:
    """Counts per rank index as one integer, ``_FIELD`` bits per rank (``_place_all``)."""
    packed = 0
    for rank, count in enumerate(counts):
        packed |= count << (rank * _FIELD)
    return packed


@lru_cache(maxsize=8192)
def _spread(used: int) -> int:
    """One card of each rank in ``used`` (rank bits), packed as ``_packed`` packs counts;
    memoised (at most one entry per set of the thirteen ranks, 8192)."""
    found = 0
    while used:
        bit = used & -used
        found |= 1 << ((bit.bit_length() - 1) * _FIELD)
        used ^= bit
    return found


@lru_cache(maxsize=4096)
def _suit_options(
    allowed: bool, counts: tuple[int, ...], existing: tuple[tuple[int, int], ...]
) -> tuple[tuple[int, int], ...]:
    """The ways to lay one suit's hand naturals in sequences: (the ranks used, as bits; the
    suit's seven-card sequences after). Existing sequences stay, each may grow; none may
    touch another (§3.4, §3.8a)."""
    base = sum(1 for low, high in existing if high - low + 1 >= CANASTA_SIZE)
    if not allowed or (not existing and sum(counts) < 3):
        return ((0, base),)
    out: dict[tuple[int, int], None] = {}
    for used, made in _intervals(counts, existing, FOUR, 0):
        out[(used, made)] = None
    return tuple(out)


def _intervals(
    counts: tuple[int, ...], existing: tuple[tuple[int, int], ...], start: int, k: int
) -> Iterator[tuple[int, int]]:
    """Sets of runs, lowest first, from ``start`` up: disjoint and not touching, each
    growing the one existing sequence it holds (from ``existing[k]`` on, all kept) or new
    (three cards or more); (the ranks taken from hand, as bits; the seven-card runs)."""
    if k == len(existing):
        yield 0, 0
        ceiling = ACE
    else:
        ceiling = existing[k][0] - 2
        old_low, old_high = existing[k]
        top = existing[k + 1][0] - 2 if k + 1 < len(existing) else ACE
        full = old_high - old_low + 1 >= CANASTA_SIZE
        for low in range(old_low, max(start, old_low - CANASTA_SIZE + 1) - 1, -1):
            if low < old_low and counts[low] == 0:
                break
            if full and low < old_low:
                break
            for high in range(old_high, min(top, low + CANASTA_SIZE - 1) + 1):
                if high > old_high and counts[high] == 0:
                    break
                used = sum(1 << r for r in range(low, old_low))
                used |= sum(1 << r for r in range(old_high + 1, high + 1))
                made = 1 if high - low + 1 >= CANASTA_SIZE else 0
                for rest_used, rest_made in _intervals(counts, existing, high + 2, k + 1):
                    yield used | rest_used, made + rest_made
    for low in range(start, ceiling - 1):
        used = 0
        for high in range(low, min(ceiling, low + CANASTA_SIZE - 1) + 1):
            if counts[high] == 0:
                break
            used |= 1 << high
            if high - low + 1 < 3:
                continue
            made = 1 if high - low + 1 >= CANASTA_SIZE else 0
            for rest_used, rest_made in _intervals(counts, existing, high + 2, k):
                yield used | rest_used, made + rest_made


@lru_cache(maxsize=8192)
def _groups_best(
    rules: Rules,
    groups: tuple[tuple[Part, ...], ...],
    left: tuple[int, ...],
    wilds: int,
    wild_melds: tuple[int, ...],
) -> int:
    """The most canastas the group melds and wild melds can hold once every natural of
    ``left`` and all ``wilds`` are on them; -1 when they cannot all be placed."""
    for rank in range(FOUR, ACE + 1):
        if left[rank] == 1 and not groups[rank]:
            return -1
    best = [_wild_best(rules, wild_melds, y) for y in range(wilds + 1)]
    for rank in range(FOUR, ACE + 1):
        parts = groups[rank]
        if not parts and not left[rank]:
            continue
        row = [_rank_best(rules, parts, left[rank], y) for y in range(wilds + 1)]
        merged = [-1] * (wilds + 1)
        for used, value in enumerate(best):
            if value < 0:
                continue
            for y in range(wilds - used + 1):
                if row[y] >= 0 and value + row[y] > merged[used + y]:
                    merged[used + y] = value + row[y]
        best = merged
        if all(v < 0 for v in best):
            return -1
    return best[wilds]


@lru_cache(maxsize=4096)
def _wild_best(rules: Rules, sizes: tuple[int, ...], wilds: int) -> int:
    """Bolivia's wild melds (§3.5): the most seven-card wild melds once ``wilds`` join the
    existing ones (up to seven each) or start new ones (three to seven); -1 if impossible."""
    if not wilds:
        return sum(1 for s in sizes if s >= CANASTA_SIZE)
    if not rules[5]:
        return -1
    if sizes:
        size, rest = sizes[0], sizes[1:]
        best = -1
        for z in range(0, min(wilds, max(CANASTA_SIZE - size, 0)) + 1):
            sub = _wild_best(rules, rest, wilds - z)
            if sub >= 0:
                best = max(best, sub + (size + z >= CANASTA_SIZE))
        return best
    best = -1
    for z in range(3, min(wilds, CANASTA_SIZE) + 1):
        sub = _wild_best(rules, (), wilds - z)
        if sub >= 0:
            best = max(best, sub + (z >= CANASTA_SIZE))
    return best


def _limit(rules: Rules, naturals: int) -> int:
    """How many wild cards a meld with ``naturals`` may hold (``config.wild_cap``)."""
    return wild_cap(rules[0], naturals)


@lru_cache(maxsize=8192)
def _rank_best(rules: Rules, parts: tuple[Part, ...], naturals: int, wilds: int) -> int:
    """The most canastas of one rank once ``naturals`` and ``wilds`` from hand are on its
    melds: old ones (``parts``, which may be combined, §3.4) and new ones; -1 if impossible."""
    best = -1
    for blocks in _partitions(parts) if rules[4] else [tuple((p,) for p in parts)]:
        new_allowed = 99 if rules[4] else (0 if parts else 1)
        best = max(best, _fill(rules, blocks, naturals, wilds, new_allowed))
    return best


def _partitions(parts: tuple[Part, ...]) -> list[tuple[tuple[Part, ...], ...]]:
    if not parts:
        return [()]
    first, rest = parts[0], parts[1:]
    out: list[tuple[tuple[Part, ...], ...]] = []
    for sub in _partitions(rest):
        out.append(((first,), *sub))
        for i in range(len(sub)):
            out.append((*sub[:i], (first, *sub[i]), *sub[i + 1 :]))
    return out


@lru_cache(maxsize=8192)
def _fill(
    rules: Rules, blocks: tuple[tuple[Part, ...], ...], naturals: int, wilds: int, new: int
) -> int:
    if not blocks:
        return _new_melds(rules, naturals, wilds, new)
    block, rest = blocks[0], blocks[1:]
    size = sum(p[0] for p in block)
    best = -1
    for z in range(wilds + 1):
        for x in range(naturals + 1):
            if not _block_ok(rules, block, x, z):
                continue
            sub = _fill(rules, rest, naturals - x, wilds - z, new)
            if sub >= 0:
                best = max(best, sub + (size + x + z >= CANASTA_SIZE))
    return best


@lru_cache(maxsize=8192)
def _new_melds(rules: Rules, naturals: int, wilds: int, new: int) -> int:
    """New group melds of one rank from ``naturals`` and ``wilds`` (two naturals or more,
    three cards or more each, within the wild limit); at most ``new`` of them."""
    if not naturals and not wilds:
        return 0
    if new <= 0 or naturals < 2:
        return -1
    best = -1
    for x in range(2, naturals + 1):
        for z in range(0, min(wilds, _limit(rules, x)) + 1):
            if x + z < 3:
                continue
            sub = _new_melds(rules, naturals - x, wilds - z, new - 1)
            if sub >= 0:
                best = max(best, sub + (x + z >= CANASTA_SIZE))
    return best


def _block_ok(rules: Rules, block: tuple[Part, ...], naturals: int, added: int) -> bool:
    """Whether old melds ``block`` of one rank can end as one meld with ``naturals`` and
    ``added`` wild cards from hand: within the wild limit, and, where no wild card may join
    a completed canasta, with an order of lay-offs and combinations that never adds one."""
    size = sum(p[0] for p in block)
    old_wilds = sum(p[1] for p in block)
    total_wilds = old_wilds + added
    nat = size - old_wilds + naturals
    if len(block) == 1 and not added:
        return True  # naturals may join any group meld
    if total_wilds > _limit(rules, nat):
        return False
    if rules[2] or not total_wilds:
        return True
    if any(p[1] == 0 and p[0] >= CANASTA_SIZE for p in block):
        return False  # a natural canasta would take a wild card, by combining
    # The hand's wild cards go onto some melds still short of seven; then the melds holding
    # wild cards must come together two at a time, each side short of seven.
    return any(_wild_parts_join(holding) for holding in _with_hand_wilds(block, added))


def _with_hand_wilds(block: tuple[Part, ...], added: int) -> Iterator[list[int]]:
    """The sizes of the wild-holding melds, for each way the hand's wilds can join melds of
    fewer than seven cards."""
    if not added:
        yield [p[0] for p in block if p[1]]
        return
    for spread in _spreads(len(block), added):
        sizes: list[int] = []
        ok = True
        for part, z in zip(block, spread, strict=True):
            if z and part[0] >= CANASTA_SIZE:
                ok = False
                break
            if z or part[1]:
                sizes.append(part[0] + z)
        if ok:
            yield sizes


def _spreads(slots: int, total: int) -> Iterator[tuple[int, ...]]:
    if slots == 1:
        yield (total,)
        return
    for first in range(total + 1):
        for rest in _spreads(slots - 1, total - first):
            yield (first, *rest)


def _wild_parts_join(sizes: list[int]) -> bool:
    """Whether melds holding wild cards can be combined into one, no combination joining a
    meld of seven or more to another holding a wild card: two halves, each under seven."""
    if len(sizes) <= 1:
        return True
    total = sum(sizes)
    n = len(sizes)
    for mask in range(1, (1 << n) - 1):
        half = sum(sizes[i] for i in range(n) if mask >> i & 1)
        if half < CANASTA_SIZE and total - half < CANASTA_SIZE:
            return True
    return False
