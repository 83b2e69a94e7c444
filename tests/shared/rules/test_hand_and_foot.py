"""Hand and Foot's deal and the options of docs/rules.md §3.7 that no scenario file plays.

The rules in play are in the scenario files (tests/scenarios/hand_and_foot_*.json); the random
playouts, leak audits and bot tests run over the preset with every other one.
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter
from collections.abc import Callable

import pytest

from shared import rules
from shared.rules import (
    ConfigError,
    Discard,
    Draw,
    GameState,
    IllegalMoveError,
    Phase,
    RuleConfig,
    make_config,
    parse_cards,
)
from shared.rules.actions import LayOff
from shared.rules.cards import IS_RED3, IS_WILD, JOKER, VALUE
from shared.rules.dealing import deal_position, new_match
from shared.rules.edits import Plan
from shared.rules.goingout import can_go_out
from tests.shared.rules.playout import random_positions


def test_the_deck_and_the_deal_3_7() -> None:
    """§3.7: players + 1 packs (five for four players: 270 cards with ten jokers); each
    player gets an 11-card hand and an 11-card foot, dealt one card at a time like the hands;
    270 - 88 = 182 cards are left, one of them turned to start the pile."""
    config = make_config("hand_and_foot")
    cards = rules.deck(config.decks, config.jokers_per_deck)
    assert len(cards) == config.deck_size == 270
    assert Counter(cards)[JOKER] == 10
    assert sum(VALUE[c] for c in cards if not IS_RED3[c]) == 5 * 1180 // 2
    order = tuple(sorted(cards, key=lambda c: (IS_WILD[c] or IS_RED3[c], c)))  # naturals first
    state = rules.deal_hand(new_match(config, first_dealer=3), order)
    assert [len(h) for h in state.hands] == [11] * 4
    assert [len(f) for f in state.feet] == [11] * 4
    assert state.hands[0] == rules.sort_cards(order[0:44:4])  # seat 0 is left of the dealer
    assert state.feet[0] == rules.sort_cards(order[44:88:4])
    assert len(state.pile) == 1
    assert len(state.stock) == 270 - 88 - 1
    assert Counter(state.all_cards()) == Counter(cards)


def test_no_upcard_option_3_7() -> None:
    """§3.7 (HF-ED): with ``upcard_mode = "none"`` the pile starts empty; the first player
    draws."""
    config = make_config("hand_and_foot", {"upcard_mode": "none"})
    state = rules.deal_hand(new_match(config, seed=2), rules.shuffled_deck(config, 2))
    assert state.pile == ()
    assert len(state.stock) == 270 - 88
    assert rules.legal_action_kinds(state, state.turn) == ["draw"]


def _position(preset_options: dict[str, object] | None = None) -> GameState:
    config = make_config("hand_and_foot", preset_options)
    return deal_position(
        new_match(config),
        [parse_cards(h) for h in ("2h 9c 9d 5c", "4c 6d", "5s 8s", "jd")],
        parse_cards("7c 8c 9h 10h"),
        pile=parse_cards("4c 9s"),
        melds=[[parse_cards("qc qd qh")], []],
        turn=0,
    )


def test_a_wild_discard_does_not_freeze_the_pile_3_8a() -> None:
    """§3.8a: Hand and Foot has no freezing; ``pile_freezes = True`` brings it back."""
    for freezes in (False, True):
        state = _position({"pile_freezes": freezes})
        state = rules.apply(state, 0, Draw())
        state = rules.apply(state, 0, Discard(parse_cards("2h")[0]))
        assert state.pile_frozen is freezes
        assert rules.player_view(state, 1).pile_frozen is freezes


def test_going_out_needs_the_foot_and_its_books_3_7() -> None:
    """§3.7: the going-out search behind asking partner counts clean and dirty books, and
    never offers a book of more than seven cards."""
    config = make_config("hand_and_foot")
    clean = parse_cards("kc kd kh ks kc kd kh")
    melds: list[tuple[int, ...]] = [()] * 13
    melds[11] = clean
    queens = parse_cards("qc qd qh 2c 2d")
    melds[10] = queens
    table = tuple(melds)
    # Two queens make the dirty book and three fives a new meld: out (without a discard).
    assert can_go_out(config, parse_cards("qs qs 5c 5d 5h"), table, allow_discard=False)
    # Three queens would make an eight-card meld: not a way out.
    assert not can_go_out(config, parse_cards("qs qs qs 5c 5d 5h"), table, allow_discard=False)
    # With the spare queen discarded it is.
    assert can_go_out(config, parse_cards("qs qs qs 5c 5d 5h"), table)
    # One queen leaves the meld at five: no dirty book, no way out.
    assert not can_go_out(config, parse_cards("qs 5c 5d 5h 9c"), table)
    # Under HF-DW's two dirty books the first position is not enough.
    strict = make_config("hand_and_foot", {"dirty_books_to_go_out": 2})
    assert not can_go_out(strict, parse_cards("qs qs 5c 5d 5h"), table, allow_discard=False)


@pytest.mark.parametrize("hands", [4, 2])
def test_the_match_ends_after_its_hands_3_7(hands: int) -> None:
    """§3.7: the match is ``hands_per_match`` hands (4 by default), however high the scores."""
    config = make_config("hand_and_foot", {"hands_per_match": hands})
    state = new_match(config, seed=1)
    played = 0
    while state.phase is not Phase.MATCH_OVER:
        state = rules.deal_hand(state, rules.shuffled_deck(config, played))
        while state.phase not in (Phase.DEAL, Phase.MATCH_OVER):
            seat = state.actor()
            assert seat is not None
            state = rules.apply(state, seat, rules.legal_actions(state, seat)[0])
        played += 1
        assert played <= hands + 3, "the match did not end"
    assert state.hand_number >= hands
    best = max(state.scores)
    assert state.winners == tuple(i for i, s in enumerate(state.scores) if s == best)


def _goes_out(state: GameState, seen: set[str], budget: list[int]) -> bool:
    """Whether seat 0 can end this turn out, trying every listed action (depth first)."""
    key = repr((state.hands[0], state.melds[0], state.extra))
    if key in seen or budget[0] <= 0:
        return False
    seen.add(key)
    budget[0] -= 1
    for action in rules.legal_actions(state, 0):
        after = rules.apply(state, 0, action)
        if after.phase in (Phase.DEAL, Phase.MATCH_OVER):
            if after.last_hand is not None and after.last_hand.went_out == 0:
                return True
            continue
        if after.turn == 0 and after.phase is Phase.PLAY and _goes_out(after, seen, budget):
            return True
    return False


def test_a_last_card_that_goes_out_is_listed_3_7() -> None:
    """§1.9, §1.11.3, §3.7: a player left with one card after melding black threes must go
    out, and the dead-end guard lets the meld stand only when the going-out search finds the
    way; the listed moves then hold that way, so a bot (which plays listed moves when its
    own fail) is never stuck (random small positions: a side with books, open melds, among
    them a second open meld of a rank, and one card). Every way out the search finds, at
    any length, is checked against the engine's moves in test_going_out_hand_and_foot."""
    config = make_config("hand_and_foot")
    rng = random.Random(7)
    pool = parse_cards("5c 5d 5h 6c 6d 6h 8s 8s 8d 9c 2c 2d jk 3s")
    books = [parse_cards("kc kd kh ks kc kd kh"), parse_cards("qc qd qh qs 2h 2s qc")]
    opens = [parse_cards("5s 5s 5c"), parse_cards("6s 6s 2h"), parse_cards("8c 8c 8h 8h 8c 2s")]
    opens.append(parse_cards("5h 5h 5d 5d 5c 2d"))
    found = checked = 0
    for _ in range(150):
        melds = [m for m in books if rng.random() < 0.7] + [m for m in opens if rng.random() < 0.5]
        hand = rng.sample(pool, 1)
        state = deal_position(
            new_match(config),
            [hand, parse_cards("4c 6d"), parse_cards("5s 8s"), parse_cards("jd")],
            parse_cards("10c 10d"),
            pile=parse_cards("4c 9d"),
            melds=[melds, []],
            turn=0,
        )
        state = dataclasses.replace(state, phase=Phase.PLAY, drew_from_stock=True)
        side = state.melds[0]
        if not can_go_out(config, state.hands[0], side, extra=state.extra[0]):
            continue
        checked += 1
        found += _goes_out(state, set(), [400])
    assert checked > 10
    assert found == checked


def test_wild_books_are_an_option_3_7() -> None:
    """§3.7, the Wilds row: no all-wild melds in the preset; "wild books allowed in some
    groups" is ``allow_wild_melds``, closed at seven like every book and counted as a dirty
    book for going out, worth ``wild_canasta_bonus`` (1500 in the preset, no source giving
    a value). Sequences still do not go with closed books."""
    assert not make_config("hand_and_foot").allow_wild_melds
    config = make_config("hand_and_foot", {"allow_wild_melds": True})
    assert config.wild_canasta_bonus == 1500
    with pytest.raises(ConfigError, match="sequences"):
        make_config("hand_and_foot", {"allow_sequences": True})
    melds: list[tuple[int, ...]] = [()] * 13
    melds[11] = parse_cards("kc kd kh ks kc kd kh")
    wild_meld = (parse_cards("2c 2d jk 2h"),)
    # Three wild cards close the wild book, the dirty book going out needs; the 9 is discarded.
    hand = parse_cards("2s jk 2c 9c")
    assert can_go_out(config, hand, tuple(melds), extra=wild_meld)
    # A fourth would make an eight-card book: not a way out.
    assert not can_go_out(config, parse_cards("2s jk 2c 2h 9c"), tuple(melds), extra=wild_meld)
    # A new wild book of seven from the hand.
    assert can_go_out(config, parse_cards("2s jk 2c 2h 2d jk 2s 9c"), tuple(melds))
    # Under the preset the same hand has nowhere to put its wild cards.
    plain = make_config("hand_and_foot")
    assert not can_go_out(plain, parse_cards("2s jk 2c 2h 2d jk 2s 9c"), tuple(melds))
    # A wild book is dirty: it does not stand in for the clean book.
    melds[11] = parse_cards("kc kd kh ks kc 2d kh")
    assert not can_go_out(config, hand, tuple(melds), extra=wild_meld)


def test_going_out_only_after_asking_is_an_option_3_8a() -> None:
    """§3.8a: asking partner before going out is optional; ``must_ask_to_go_out`` (some
    groups) requires it: melding out unasked is refused with the reason, while the option
    is new enough to stay out of a header that leaves it off (LATER_OPTIONS), and it binds
    only a player who has a partner to ask."""
    options = {"must_ask_to_go_out": True}
    config = make_config("hand_and_foot", options)
    assert "must_ask_to_go_out" not in make_config("hand_and_foot").to_dict()
    data = config.to_dict()
    assert data["must_ask_to_go_out"] is True
    assert RuleConfig.from_dict(data) == config
    melds = [parse_cards("kc kd kh ks kc kd kh"), parse_cards("qc qd qh qs qc 2h jk")]
    state = deal_position(
        new_match(config),
        [parse_cards(h) for h in ("5c 5d 5h", "10c", "6c 6d", "jd jh")],
        parse_cards("5s 5c 9c 9d"),
        pile=parse_cards("4c 9d"),
        melds=[melds, []],
        turn=0,
    )
    state = rules.apply(state, 0, Draw())
    with pytest.raises(IllegalMoveError, match="only after asking your partner") as refused:
        rules.apply(state, 0, rules.parse_action("meld 5c 5d 5h 5s 5c"))
    assert refused.value.rule == "1.11.1"
    # The reason names the books first when they are what is missing.
    short = deal_position(
        new_match(config),
        [parse_cards(h) for h in ("5c 5d 5h", "10c", "6c 6d", "jd jh")],
        parse_cards("5s 5c 9c 9d"),
        pile=parse_cards("4c 9d"),
        melds=[melds[:1], []],
        turn=0,
    )
    short = rules.apply(short, 0, Draw())
    with pytest.raises(IllegalMoveError, match="needs 2 books"):
        rules.apply(short, 0, rules.parse_action("meld 5c 5d 5h 5s 5c"))
    # Two players, no partner: nobody to ask, and going out needs no question.
    alone = make_config("hand_and_foot", {**options, "players": 2, "partnerships": [[0], [1]]})
    state = deal_position(
        new_match(alone),
        [parse_cards(h) for h in ("5c 5d 5h", "10c")],
        parse_cards("5s 5c 9c 9d"),
        pile=parse_cards("4c 9d"),
        melds=[melds, []],
        turn=0,
    )
    state = rules.apply(state, 0, Draw())
    out = rules.apply(state, 0, rules.parse_action("meld 5c 5d 5h 5s 5c"))
    assert out.last_hand is not None
    assert out.last_hand.went_out == 0


@pytest.mark.parametrize("preset", ["hand_and_foot", "samba", "bolivia"])
def test_the_lay_off_verdict_on_counts_agrees_with_group_fault(preset: str) -> None:
    """The move lists' verdict on a lay-off from a meld's counts (``lay_off_fits``) is the
    engine's (``group_fault``) on the meld's cards, for melds of every size and wild count
    and one to three added cards of every kind (of the rank, another rank, wild, threes)."""
    from shared.rules.cards import make_card
    from shared.rules.variants.samba.melds import group_fault, lay_off_fits

    base = make_config(preset)
    configs = [base]
    for change in (
        {"closed_books": not base.closed_books},
        {"wild_onto_canasta": not base.wild_onto_canasta},
        {"wild_limit": "max3"},
    ):
        try:
            configs.append(dataclasses.replace(base, **change))
        except ConfigError:
            continue  # (closed books do not combine with sequences)
    rank = 9
    kinds = [make_card(rank, 0), make_card(rank, 1), make_card(8, 2), make_card(0, 3), JOKER]
    kinds += [make_card(1, 0), make_card(1, 1)]  # a black and a red three
    added_sets: list[tuple[int, ...]] = [(a,) for a in kinds]
    added_sets += [(a, b) for a in kinds for b in kinds]
    added_sets += [(kinds[0], kinds[1], kinds[3]), (kinds[3], kinds[4], kinds[0])]
    compared = 0
    for config in configs:
        for size in range(2, 10):
            for wilds in range(0, min(size, 5)):
                old = tuple([make_card(rank, 0)] * (size - wilds) + [JOKER] * wilds)
                for added in added_sets:
                    expected = group_fault(config, rank, old, added, new=False) is None
                    assert lay_off_fits(config, rank, size, wilds, added) is expected, (
                        config.preset,
                        old,
                        added,
                    )
                    compared += 1
    assert compared > 1000


def test_the_wild_meld_verdict_agrees_with_check_wild_meld() -> None:
    """The move lists' verdict on a wild meld begun or grown (``wild_meld_fits``) is the
    engine's (``melds.check_wild_meld``) for every size before and after, and a natural
    card among the wild ones."""
    from shared.rules.cards import make_card
    from shared.rules.melds import check_wild_meld
    from shared.rules.variants.samba.melds import wild_meld_fits

    for old in range(0, 9):
        for total in range(old, 11):
            for natural in (False, True):
                cards = [JOKER] * total
                if natural and cards:
                    cards[-1] = make_card(9, 0)
                try:
                    check_wild_meld(cards, old)
                    expected = True
                except IllegalMoveError:
                    expected = False
                assert wild_meld_fits(cards, old) is expected, (old, total, natural)


def _book_positions(
    config: RuleConfig, hands: int, seed: int, phase: Phase = Phase.PLAY
) -> list[tuple[GameState, int]]:
    """Every decision in ``phase`` (after the draw, unless named) of a few seeded random hands
    of ``config``."""
    return random_positions(config, hands, seed, (phase,))


_BOOK_OPTIONS: list[dict[str, object]] = [
    {},
    {"wild_onto_canasta": True},
    {"allow_wild_melds": True},
    {"wild_limit": "max3"},
    {"players": 2, "partnerships": [[0], [1]]},
    {"clean_books_to_go_out": 0, "dirty_books_to_go_out": 0, "canastas_to_go_out": 1},
]


@pytest.mark.parametrize(
    "options",
    [
        pytest.param(o, id=",".join(o) or "preset", marks=[pytest.mark.slow] if o else [])
        for o in _BOOK_OPTIONS
    ],
)
def test_the_listing_decided_in_place_is_the_engines_3_7(options: dict[str, object]) -> None:
    """§3.7: the listing after the draw that Hand and Foot decides in place (``book_listing``,
    each candidate made once, decided from the table's counts) is, action for action and in
    order, what the move lists give from its candidates with the engine's check of every
    one (``legal._listing`` without verdicts): nothing legal left out, nothing illegal
    listed, no repeat. Seeded random play of the preset and of options that change which
    candidates are legal (wild cards onto a book, wild books, the wild limit, two players,
    no book requirement to go out)."""
    from shared.rules import legal
    from shared.rules.engine import is_legal
    from shared.rules.variants.hand_and_foot import book_listing

    config = make_config("hand_and_foot", options)
    decided = 0
    for state, seat in _book_positions(config, 10, 5 + len(options)):
        may_ask = state.config.has_partners and not state.asked and not state.turn_melded
        listing = book_listing(state, seat, may_ask, is_legal)
        if listing is None:
            continue
        decided += 1
        known, candidates, _verdict = legal._listing(state, seat)
        expected = known + [a for a in candidates if is_legal(state, seat, a)]
        assert listing == expected, (options, state.hands[seat])
        assert rules.legal_actions(state, seat) == listing
    assert decided > 500


_OPENING_OPTIONS: list[dict[str, object]] = [
    {},
    {"open_via_pile": "required"},
    {"concealed_min_exempt": True},
    {"wild_limit": "max3"},
    {"allow_wild_melds": True},
    {"players": 2, "partnerships": [[0], [1]]},
]


@pytest.mark.parametrize(
    "options",
    [
        pytest.param(o, id=",".join(o) or "preset", marks=[pytest.mark.slow] if o else [])
        for o in _OPENING_OPTIONS
    ],
)
def test_the_opening_listing_decided_in_place_is_the_engines_3_7(
    options: dict[str, object],
) -> None:
    """§1.10, §3.7: the listing after the draw of an unopened side that Hand and Foot decides
    in place (``opening_listing``: the best opening legal by construction when it reaches
    the minimum, two cards stay and each meld's counts fit) is, action for action and in
    order, what the move lists give with the engine's check of every candidate. Seeded
    random play of the preset and of options that change which openings are legal
    (opening only by the pile, a concealed going-out exempt from the minimum, the wild
    limit, wild melds, two players)."""
    from shared.rules import legal
    from shared.rules.actions import Meld
    from shared.rules.engine import is_legal
    from shared.rules.variants.hand_and_foot import opening_listing

    config = make_config("hand_and_foot", options)
    decided: Counter[str] = Counter()
    for state, seat in _book_positions(config, 10, 9 + len(options)):
        if state.opened(state.side_of[seat]):
            continue
        listing = opening_listing(state, seat, is_legal)
        if listing is None:
            decided["left to the lists"] += 1
            continue
        known, candidates, _verdict = legal._listing(state, seat)
        expected = known + [a for a in candidates if is_legal(state, seat, a)]
        assert listing == expected, (options, state.hands[seat])
        assert rules.legal_actions(state, seat) == listing
        decided["opening" if any(type(a) is Meld for a in listing) else "no opening"] += 1
    if config.allow_wild_melds:
        # Wild melds open by ways the in-place listing does not build, so it leaves every
        # such listing to the move lists (and the engine's check), never a wrong answer.
        assert set(decided) == {"left to the lists"}, decided
        assert decided["left to the lists"] > 30, decided
    else:
        assert decided["no opening"] > 30, decided
        assert decided["opening"] > 10 or config.open_via_pile == "required", decided


@pytest.mark.parametrize(
    "options",
    [
        pytest.param(o, id=",".join(o) or "preset", marks=[pytest.mark.slow] if o else [])
        for o in _BOOK_OPTIONS
    ],
)
def test_the_takes_decided_in_place_are_the_engines_3_8a(options: dict[str, object]) -> None:
    """§1.8.2, §3.8a: at the start of a turn Hand and Foot's listing keeps the takes of the
    pile that Samba's verdicts decide (Hand and Foot takes the pile by Samba's rules) without
    the engine's trial; each such verdict is the engine's check."""
    from shared.rules import legal
    from shared.rules.engine import is_legal

    config = make_config("hand_and_foot", options)
    decided: Counter[bool] = Counter()
    for state, seat in _book_positions(config, 10, 7 + len(options), Phase.DRAW):
        _known, candidates, verdict = legal._listing(state, seat)
        if verdict is None:
            continue
        for action in candidates:
            known = verdict(action)
            if known is not None:
                decided[known] += 1
                assert known is is_legal(state, seat, action), (options, str(action))
    assert decided[True] > 100, decided  # (refusals are rare: most listed takes are legal)


def test_the_new_meld_verdict_on_counts_agrees_with_group_fault_3_7() -> None:
    """§1.9, §3.4, §3.7: the listing's verdict on a new group meld from its counts
    (``new_group_fits``) is the engine's (``samba.melds.group_fault``, ``new=True``) for
    every number of naturals and wild cards up to ten, under each wild limit, with books
    closed at seven or not."""
    from shared.rules.cards import make_card
    from shared.rules.variants.hand_and_foot import new_group_fits
    from shared.rules.variants.samba.melds import group_fault

    base = make_config("hand_and_foot")
    compared = 0
    for limit in ("fewer_than_naturals_max3", "max3", "max2", "not_more_than_naturals"):
        for closed in (True, False):
            try:
                config = dataclasses.replace(base, wild_limit=limit, closed_books=closed)
            except ConfigError:
                config = dataclasses.replace(base, wild_limit=limit, closed_books=closed, decks=3)
            for naturals in range(0, 11):
                for wilds in range(0, 6):
                    cards = [make_card(9, n % 4) for n in range(naturals)] + [JOKER] * wilds
                    expected = group_fault(config, 9, (), cards, new=True) is None
                    assert new_group_fits(config, naturals, wilds) is expected, (
                        limit,
                        closed,
                        naturals,
                        wilds,
                    )
                    compared += 1
    assert compared > 500


def test_the_combine_verdict_on_counts_agrees_with_combine_fault_3_7() -> None:
    """§1.9, §3.4, §3.7, §3.8a: the listing's verdict on joining two group melds of a rank
    from their counts (``combine_fits``, what ``_Books.places`` holds) is the engine's
    (``samba.melds.combine_fault``) for every pair of melds of up to eight cards, none to
    three of them wild, under each wild limit, with books closed at seven or not and wild
    cards onto a completed canasta allowed or not."""
    from shared.rules.cards import TWO, make_card
    from shared.rules.variants.hand_and_foot import combine_fits
    from shared.rules.variants.samba.melds import combine_fault

    base = make_config("hand_and_foot")
    compared = Counter[bool]()
    for limit in ("fewer_than_naturals_max3", "max3", "max2", "not_more_than_naturals"):
        for closed in (True, False):
            for onto_canasta in (True, False):
                changes: dict[str, object] = {
                    "wild_limit": limit,
                    "closed_books": closed,
                    "wild_onto_canasta": onto_canasta,
                }
                try:
                    config = dataclasses.replace(base, **changes)  # type: ignore[arg-type]
                except ConfigError:
                    config = dataclasses.replace(base, decks=3, **changes)  # type: ignore[arg-type]
                for size in range(1, 9):
                    for wilds in range(0, min(size, 3) + 1):
                        keep = [make_card(9, n % 4) for n in range(size - wilds)]
                        keep += [JOKER if n % 2 else make_card(TWO, n % 4) for n in range(wilds)]
                        for other in range(1, 9):
                            for other_wilds in range(0, min(other, 3) + 1):
                                gone = [make_card(9, n % 4) for n in range(other - other_wilds)]
                                gone += [JOKER] * other_wilds
                                expected = combine_fault(config, 9, keep, gone) is None
                                found = combine_fits(config, size, wilds, other, other_wilds)
                                assert found is expected, (
                                    changes,
                                    (size, wilds),
                                    (other, other_wilds),
                                )
                                compared[expected] += 1
    assert compared[True] > 500, compared
    assert compared[False] > 500, compared


@pytest.mark.parametrize(
    ("preset", "options"),
    [
        pytest.param(
            "hand_and_foot", o, id=",".join(o) or "preset", marks=[pytest.mark.slow] if o else []
        )
        for o in _BOOK_OPTIONS
    ]
    + [pytest.param(preset, {}, id=preset) for preset in ("samba", "bolivia")],
)
def test_the_plan_of_a_lay_off_onto_a_first_meld_is_sambas_3_7(
    preset: str, options: dict[str, object]
) -> None:
    """§1.6 T2, §3.4, §3.7: the Samba family plans a lay-off onto a rank's first meld the
    short way (``samba.melds.plan_first_lay_off``, without copying the further melds); the
    plan, or the refusal, is the one found by the meld's name on the table
    (``plan_lay_off_on_table``) for every lay-off of each rank's cards held, of each wild
    card held, of a card of another rank and of a card not held, onto every first meld of
    the side, in seeded random play of Hand and Foot, of options that change which
    lay-offs are valid, of Samba and of Bolivia; a valid one planned as listed (unchecked)
    alike."""
    from shared.rules.cards import RANK
    from shared.rules.variants.samba.melds import plan_first_lay_off, plan_lay_off_on_table

    config = make_config(preset, options)
    outcomes: Counter[str] = Counter()
    for state, seat in _book_positions(config, 6, 3 + len(options)):
        melds = state.melds[state.side_of[seat]]
        hand = state.hands[seat]
        not_held = next(c for c in range(52) if c not in hand)  # (a hand holds few faces)
        for rank in range(2, 13):
            if not melds[rank]:
                continue
            natural = tuple(c for c in hand if RANK[c] == rank)
            other = tuple(c for c in hand if RANK[c] not in (rank, 0, 1))[:1]
            wild = tuple(c for c in hand if IS_WILD[c])[:1]
            tried = {natural, natural[:1], wild, (*natural[:2], *wild), other, (not_held,)}
            for cards in tried - {()}:  # (no cards at all: Samba's plan names the refusal)
                action = LayOff(rank, cards)
                expected, refusal = _planned(plan_lay_off_on_table, state, seat, action)
                plan, why = _planned(plan_first_lay_off, state, seat, action)
                assert why == refusal, action
                if expected is None:
                    outcomes["refused"] += 1
                    continue
                assert plan is not None
                assert plan._replace(extra=expected.extra) == expected
                assert plan_first_lay_off(state, seat, action, True) == plan  # (listed)
                assert expected.extra == state.extra_of(state.side_of[seat])
                outcomes["planned"] += 1
    assert outcomes["planned"] > 100, outcomes
    assert outcomes["refused"] > 100, outcomes


def _planned(
    plan: Callable[[GameState, int, LayOff, bool], Plan | None],
    state: GameState,
    seat: int,
    action: LayOff,
) -> tuple[Plan | None, tuple[str, str | None] | None]:
    """What ``plan`` makes of ``action``: the plan, or the refusal (message and section)."""
    try:
        return plan(state, seat, action, False), None
    except IllegalMoveError as refused:
        return None, (refused.message, refused.rule)
