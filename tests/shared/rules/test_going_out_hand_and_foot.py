"""§1.11.2 and §1.11.3 in Hand and Foot (docs/rules.md §3.7, §3.8a): the going-out search behind
asking partner, the dead-end guard and black threes finds every way out the engine allows
and no other: a rank's naturals split over two books, several open melds of a rank grown or
combined, wild cards spread within the limit of fewer wild cards than naturals (or the other
limits), wild books (``allow_wild_melds``), black threes melded to go out, books closed at
seven, and the clean and dirty books going out needs.

The brute force is independent of the search: it plays the engine's own moves (every meld,
lay-off and combination of the hand's cards, then perhaps a discard) with the dead-end
guard's look-ahead replaced by "yes", so only the rules of the moves themselves decide, and
a way out is found exactly when some sequence of moves ends the hand with seat 0 out.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from shared import rules
from shared.rules import GameState, goingout, make_config, parse_cards
from shared.rules.actions import Action, Combine, Discard, Draw, LayOff, Meld, MeldRef
from shared.rules.cards import IS_RED3, IS_WILD, JOKER_RANK, RANK
from shared.rules.dealing import deal_position, new_match
from shared.rules.errors import CanastaError
from shared.rules.goingout import _can_go_out, can_go_out
from shared.rules.opening import minimum_to_go_out
from shared.rules.state import EMPTY_MELDS
from shared.rules.variants import hand_and_foot as handfoot
from tests.testkit import examples

from .asking import engine_goes_out, may_ask

OTHERS = ["4c 6d", "jc qd", "kc 7d"]
CLEAN_KINGS = "kc kd kh ks kc kd kh"
DIRTY_QUEENS = "qc qd qh qs qc 2h jk"


def _position(hand: str, melds: Sequence[str], options: dict[str, Any] | None = None) -> GameState:
    """Seat 0, on its foot, to play after drawing: it holds ``hand`` (its last two cards the
    two it drew), its side holding ``melds``."""
    cards = parse_cards(hand)
    state = deal_position(
        new_match(make_config("hand_and_foot", options)),
        [cards[:-2], *(parse_cards(h) for h in OTHERS)],
        cards[-2:],
        pile=parse_cards("9c"),
        melds=[[parse_cards(m) for m in melds], []],
        turn=0,
    )
    return rules.apply(state, 0, Draw())


def _search(state: GameState) -> bool:
    return _can_go_out(state, 0, state.hands[0], minimum_to_go_out(state, 0))


# -- the brute force: the engine's own moves decide ---------------------------------------------


def _refs(state: GameState, side: int) -> list[MeldRef]:
    """A name for each of the side's melds, as the notation gives them."""
    out = [MeldRef(rank) for rank, cards in enumerate(state.melds[side]) if cards]
    counts: dict[int, int] = {}
    wild = 0
    for cards in state.extra_of(side):
        ranks = {RANK[c] for c in cards if not IS_WILD[c]}
        if not ranks:
            wild += 1
            out.append(MeldRef(JOKER_RANK, wild))
            continue
        rank = ranks.pop()
        counts[rank] = counts.get(rank, 1 if state.melds[side][rank] else 0) + 1
        out.append(MeldRef(rank, counts[rank]))
    return out


def _moves(state: GameState, seat: int) -> Iterator[Action]:
    """Every discard, and every meld, lay-off and combination of the hand's cards that could
    be legal: a subset of the hand mixing two natural ranks is never one (no sequences with
    closed books, §3.7), so those are skipped unasked."""
    side = state.side_of[seat]
    hand = tuple(sorted(state.hands[seat]))
    for card in dict.fromkeys(hand):
        yield Discard(card)
    refs = _refs(state, side)
    subsets = {
        cards
        for size in range(1, len(hand) + 1)
        for cards in itertools.combinations(hand, size)
        if len({RANK[c] for c in cards if not IS_WILD[c]}) <= 1
    }
    for cards in sorted(subsets):
        if len(cards) >= 3:
            yield Meld((cards,))
        for ref in refs:
            yield LayOff(ref.rank, cards, ref.which)
    for first, second in itertools.combinations(refs, 2):
        if first.rank == second.rank:
            yield Combine(first, second)


def _memo_key(state: GameState, seat: int) -> object:
    side = state.side_of[seat]
    hand = tuple(sorted(state.hands[seat]))
    return (hand, state.melds[side], tuple(sorted(state.extra_of(side))), state.must_go_out)


def _engine_goes_out(state: GameState, seat: int, seen: dict[object, bool]) -> bool:
    """Whether some sequence of the engine's moves, perhaps ending with a discard, takes
    ``seat`` out this turn (exhaustive, memoised on the hand and the side's melds)."""
    return engine_goes_out(state, seat, seen, _memo_key, _moves)


def _brute_force(state: GameState, monkeypatch: pytest.MonkeyPatch) -> bool:
    """``_engine_goes_out`` with the dead-end guard's look-ahead answering "yes": a play it
    refuses could only be one after which no way out exists, so this finds the same ways
    out as the real guard would if its search is exact, without trusting that search."""
    with monkeypatch.context() as patch:
        patch.setattr(goingout, "can_go_out", lambda *args, **kwargs: True)
        return _engine_goes_out(state, 0, {})


# -- hand-built positions the earlier search decided wrongly -----------------------------------


@pytest.mark.parametrize(
    ("hand", "melds", "out", "way"),
    [
        # §3.7: eleven eights are a clean book of seven and a dirty book of four with three
        # wild cards (two melds of one rank); the earlier search put them all in one meld
        (
            "8c 8d 8h 8s 8c 8d 8h 8s 8c 8d 8h 2c 2d jk 5c",
            ["5d 5h 5s"],
            True,
            "meld 8c 8d 8h 8s 8c 8d 8h, 8s 8c 8d 8h 2c 2d jk; lay 5 5c",
        ),
        # §3.7: seven queens make a clean book beside the open meld of queens, which takes
        # the wild card; the earlier search put every queen on the open meld, past seven
        (
            "qh qh qs qs qd qd qc 2c 4c",
            ["qc qd qh 2d", "5c 5d 5h 5s 5c 2h jk"],
            True,
            "meld qh qh qs qs qd qd qc; lay q 2c; discard 4c",
        ),
        # §3.7: the nines' first meld has room for one, the second for the other; the
        # earlier search put both on the first, past seven cards
        ("9d 9h 4c", [CLEAN_KINGS, "9s 9s 9c 9d 2c 2d", "9c 9d 9h 9s 9h 9c"], True, None),
        # §3.4's combining under §3.7: two open melds of nines become one dirty book
        ("5c 5d 5h 4c", [CLEAN_KINGS, "9s 9c 2d", "9c 9d 9h 9s"], True, None),
        # §1.9: black threes melded in going out (three of them, the last card discarded);
        # the earlier search never counted on them
        ("3c 3s 3c 4c", [CLEAN_KINGS, DIRTY_QUEENS], True, None),
        # ... and no way out when one of the three is missing
        ("3c 3s 4c 5c", [CLEAN_KINGS, DIRTY_QUEENS], False, None),
        # §3.7: two wild cards onto four fives and a wild make the dirty book
        ("2c 2d 8c", [CLEAN_KINGS, "5c 5d 5h 5s 2h"], True, None),
        # ... but three fives take one wild card more, two eights one: one is left over
        ("2c 2d jk 8c 8d", [CLEAN_KINGS, "5c 5d 5h 2s"], False, None),
    ],
)
def test_3_7_search_finds_every_way_out(
    hand: str, melds: list[str], out: bool, way: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """§1.11.2, §1.11.3 with §3.7: asking partner is allowed exactly when the engine's moves
    can take the player out this turn (a hand too big for the brute force plays its way)."""
    state = _position(hand, melds)
    assert _search(state) is out
    assert may_ask(state) is out
    if way is None:
        assert _brute_force(state, monkeypatch) is out
    else:
        after = rules.apply_turn(state, 0, rules.parse_turn(way))
        assert after.last_hand is not None
        assert after.last_hand.went_out == 0


# -- small random positions: the search and the brute force agree ------------------------------

_OPTIONS: list[dict[str, Any]] = [
    {},
    {"dirty_books_to_go_out": 2, "canastas_to_go_out": 3},
    {"clean_books_to_go_out": 2, "dirty_books_to_go_out": 0},
    {"wild_limit": "max3"},
    {"wild_limit": "not_more_than_naturals", "allow_wild_melds": True},
    {"multiple_melds_per_rank": False},
    {"allow_wild_melds": True},
    {"allow_wild_melds": True, "dirty_books_to_go_out": 2, "canastas_to_go_out": 3},
]


def _random_position(rng: random.Random) -> GameState | None:
    """A small Hand and Foot table for seat 0's side (books, open melds, several of a rank)
    and a short hand of cards near them; ``None`` when the deck refused it."""
    options = rng.choice(_OPTIONS)
    several = options.get("multiple_melds_per_rank", True)
    ranks = rng.sample(["5", "6", "8", "9", "j"], 2)
    melds: list[str] = []
    if rng.random() < 0.6:
        melds.append(CLEAN_KINGS)
    if rng.random() < 0.5:
        melds.append(DIRTY_QUEENS)
    for rank in ranks:
        for _ in range(rng.choice([0, 1, 1, 2] if several else [0, 1])):
            size = rng.randrange(3, 7)
            wilds = rng.randrange(0, min(3, size - 3) + 1) if size > 3 else rng.randrange(0, 2)
            naturals = size - wilds
            if wilds >= naturals:
                wilds, naturals = 0, size
            suits = itertools.cycle("cdhs")
            cards = [f"{rank}{next(suits)}" for _ in range(naturals)]
            cards += rng.sample(["2c", "2d", "2h", "2s", "jk"], wilds)
            melds.append(" ".join(cards))
    pool = [f"{r}{s}" for r in ranks for s in "cdhs"] + ["2c", "2d", "jk", "3c", "3s", "4h"]
    if options.get("allow_wild_melds"):  # §3.7's variation: wild books
        if rng.random() < 0.5:
            melds.append(
                " ".join(rng.sample(["2c", "2d", "2h", "2s", "jk", "jk"], 3 + rng.randrange(4)))
            )
        pool += ["2h", "2s", "jk", "jk", "2c"]
    if not melds:
        melds.append(f"{ranks[0]}c {ranks[0]}d {ranks[0]}h")
    hand = " ".join(rng.choice(pool) for _ in range(rng.randrange(3, 8)))
    try:
        return _position(hand, melds, options)
    except CanastaError:
        return None


def _agree(seed: int, monkeypatch: pytest.MonkeyPatch) -> bool:
    rng = random.Random(seed)
    while True:
        state = _random_position(rng)
        if state is not None and not any(IS_RED3[c] for c in state.hands[0]):
            break
    found = _search(state)
    played = _brute_force(state, monkeypatch)
    hand = state.hands[0]
    assert found is played, (seed, rules.cards_text(hand), state.melds[0], state.extra)
    if len(hand) >= 2:
        assert may_ask(state) is found
    return found


@pytest.mark.parametrize("seed", range(examples(60)))
def test_3_7_search_agrees_with_playing_the_engine(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """§1.11.2, §1.11.3, §3.7: a way out the search finds is found again by playing the
    engine's moves, and a way out the engine's moves find, the search finds too."""
    _agree(seed, monkeypatch)


@pytest.mark.slow
def test_3_7_search_agrees_with_playing_the_engine_at_length(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    outs = sum(_agree(seed, monkeypatch) for seed in range(1000, 1400))
    assert outs > 40  # the check saw ways out, not only dead ends


@pytest.mark.parametrize(("options", "out"), [({}, True), ({"clean_books_to_go_out": 6}, False)])
def test_3_7_a_long_awkward_hand_is_decided_in_few_steps(
    options: dict[str, Any], out: bool
) -> None:
    """The search stays small (it runs behind many moves): a 34-card hand with eleven wild
    cards onto a table of 24 open melds, two or three of each rank, with wild books allowed,
    is decided in a counted number of memoised steps, whether a way out exists or, needing
    six clean books, none does."""
    config = make_config(
        "hand_and_foot", {"allow_wild_melds": True, "canastas_to_go_out": 6, **options}
    )
    melds = list(EMPTY_MELDS)
    extra = []
    for rank in ("5", "6", "7", "8", "9", "10", "j", "q"):
        melds[RANK[parse_cards(rank + "c")[0]]] = parse_cards(f"{rank}c {rank}d {rank}h")
        extra += [parse_cards(f"{rank}c {rank}d 2c"), parse_cards(f"{rank}s {rank}s {rank}h 2d")]
    hand = parse_cards(
        "5c 5d 5h 5s 6c 6d 6h 6s 7c 7d 7h 8c 8d 9c 9d 10c 10d jc jd qc qd "
        "2c 2d 2h 2s jk jk jk 2c 2d jk jk 2s 2h"
    )
    for cached in (handfoot._decide, *_STEPS):
        cached.cache_clear()
    assert can_go_out(config, hand, tuple(melds), extra=tuple(extra)) is out
    assert sum(cached.cache_info().misses for cached in _STEPS) < 5_000


_STEPS = (
    handfoot._rank_books,
    handfoot._grouped,
    handfoot._groups,
    handfoot._fill,
    handfoot._new_melds,
    handfoot._wild_books,
)
"""The memoised steps of the search: their misses count its work."""


def _reference_rank_books(
    limit: str, parts: tuple[tuple[int, int], ...], naturals: int, wilds: int
) -> frozenset[tuple[int, int]]:
    """What the search gave before it counted melds by kind: every grouping of the open
    melds (a Bell number of them), each filled by ``handfoot._fill``."""

    def partitions(
        parts: tuple[tuple[int, int], ...],
    ) -> Iterator[tuple[tuple[tuple[int, int], ...], ...]]:
        if not parts:
            yield ()
            return
        first, rest = parts[0], parts[1:]
        for sub in partitions(rest):
            yield ((first,), *sub)
            for i in range(len(sub)):
                yield (*sub[:i], (first, *sub[i]), *sub[i + 1 :])

    found: set[tuple[int, int]] = set()
    for blocks in partitions(parts):
        found |= handfoot._fill(limit, blocks, naturals, wilds, naturals)
    return handfoot._pareto(found)


@pytest.mark.parametrize("limit", ["fewer_than_naturals_max3", "max3", "not_more_than_naturals"])
def test_3_4_grouping_by_kind_gives_what_every_grouping_gives(limit: str) -> None:
    """§3.4's combining under §3.7's closed books: counting the open melds of a rank by kind
    (size, wild cards), and combining only melds that fit in one book, reaches exactly the
    books that trying every grouping of the melds reaches; also for melds smaller than the
    engine ever makes (one or two cards), where a group may hold more than two of them."""
    rng = random.Random(limit)
    rules_ = (limit, True, False, 1, 1, 2)
    for _ in range(examples(90)):
        parts = []
        for _ in range(rng.randrange(0, 7)):
            size = rng.choice([1, 2, 3, 3, 3, 4, 4, 5, 6])
            parts.append((size, rng.randrange(0, max(1, size - 1))))
        ordered = tuple(sorted(parts))
        naturals, wilds = rng.randrange(0, 7), rng.randrange(0, 7)
        want = _reference_rank_books(limit, ordered, naturals, wilds)
        assert handfoot._rank_books(rules_, ordered, True, naturals, wilds) == want, (
            ordered,
            naturals,
            wilds,
        )


@pytest.mark.slow  # about 0.5 s each, out of the inner loop
@pytest.mark.parametrize(("options", "out"), [({}, True), ({"clean_books_to_go_out": 6}, False)])
def test_3_7_sixteen_open_melds_of_a_rank_are_decided_in_few_steps(
    options: dict[str, Any], out: bool
) -> None:
    """The grouping of a rank's open melds stays small (a player could otherwise stall the
    server, the search running behind every move list and question): eight packs, sixteen
    open melds of fives of four kinds (three or four cards, with or without a wild card)
    and a hand of twenty wild cards and eight fives, decided in a counted number of
    memoised steps, whether a way out exists or, needing six clean books, none does
    (trying every grouping of sixteen melds would be about 10^10 groupings)."""
    config = make_config("hand_and_foot", {"decks": 8, **options})
    shapes = ("5c 5d 2c", "5c 5d 5h", "5c 5d 5h 2d", "5c 5d 5h 5s")
    groups = [parse_cards(shapes[i % len(shapes)]) for i in range(16)]
    melds = list(EMPTY_MELDS)
    melds[RANK[parse_cards("5c")[0]]] = groups[0]
    wilds = " ".join(["2c", "2d", "2h", "2s", "jk"] * 4)
    hand = parse_cards(f"{wilds} 5h 5s 5c 5d 5h 5s 5c 5d")
    for cached in (handfoot._decide, *_STEPS):
        cached.cache_clear()
    assert can_go_out(config, hand, tuple(melds), extra=tuple(groups[1:])) is out
    assert sum(cached.cache_info().misses for cached in _STEPS) < 30_000  # about 19,000
