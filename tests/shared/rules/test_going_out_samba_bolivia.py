"""§1.11.2 and §1.11.3 in Samba and Bolivia (docs/rules.md §3.4, §3.5, §3.8a): the going-out
search behind asking partner, the dead-end guard and black threes finds every way out: new
sequences, grown sequences, a second meld of a rank, Bolivia's wild melds, and the escalera
Bolivia asks for. The randomized check plays the engine's own moves to decide each small
position, and the search must agree both ways.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Sequence
from typing import NamedTuple

import pytest

from shared import rules
from shared.rules import GameState, Phase, make_config, parse_cards
from shared.rules.actions import YES, AskPartner, Combine, Discard, Draw, LayOff, Meld, MeldRef
from shared.rules.cards import FIVE, IS_RED3, JOKER_RANK, NINE, RANK, Card
from shared.rules.dealing import deal_position, new_match
from shared.rules.errors import CanastaError, ConfigError, IllegalMoveError
from shared.rules.goingout import _can_go_out, can_go_out
from shared.rules.melds import GROUP, SEQUENCE, meld_kind, meld_rank
from shared.rules.opening import minimum_to_go_out
from shared.rules.state import EMPTY_MELDS, EndReason, Extra, Melds
from shared.rules.variants.samba import going_out
from shared.rules.variants.samba.melds import sequence_span
from tests.testkit import inner_loop

from .asking import engine_goes_out, may_ask

TWO_CANASTAS = ["8h 9h 10h jh qh kh ah", "5c 5d 5h 5s 5c 5d 2c"]
OTHERS = ["4c 6d 8s", "jc qd", "kc 7d"]


def _position(preset: str, hand: str, melds: Sequence[str]) -> GameState:
    """Seat 0 to play after drawing, holding ``hand`` (its last two cards drawn), its side
    holding ``melds``."""
    cards = parse_cards(hand)
    state = deal_position(
        new_match(make_config(preset)),
        [cards[:-2], *(parse_cards(h) for h in OTHERS)],
        cards[-2:],
        pile=parse_cards("9c"),
        melds=[[parse_cards(m) for m in melds], []],
        turn=0,
    )
    return rules.apply(state, 0, Draw())


@pytest.mark.parametrize(
    ("preset", "hand", "melds", "allowed"),
    [
        # §3.4: a new sequence of three takes the last cards (and not with a gap in it)
        ("samba", "4d 5d 6d 9s", TWO_CANASTAS, True),
        ("samba", "4d 5d 7d 9s", TWO_CANASTAS, False),
        # §3.4: hand cards grow an existing sequence at both ends
        ("samba", "8s 9s 4s kc", [*TWO_CANASTAS, "5s 6s 7s"], True),
        ("samba", "8s 10s 4s kc", [*TWO_CANASTAS, "5s 6s 7s"], False),
        # §3.8a: a new sequence may not touch one of its suit, and a samba takes no more
        ("samba", "qs ks as kc", [*TWO_CANASTAS, "4s 5s 6s 7s 8s 9s 10s"], True),
        ("samba", "js qs ks kc", [*TWO_CANASTAS, "4s 5s 6s 7s 8s 9s 10s"], False),
        # §3.4: a second meld of a rank beside the first
        ("samba", "9c 9d 9h kc", [*TWO_CANASTAS, "9s 9s 9d"], True),
        ("samba", "9c 9d kh kc", [*TWO_CANASTAS, "9s 9s 9d"], False),
        # §3.4: two melds of a rank combined make the second canasta
        ("samba", "9c kc", ["8h 9h 10h jh qh kh ah", "9s 9s 9d", "9h 9d 9c"], True),
        ("samba", "9c kc", ["8h 9h 10h jh qh kh ah", "9s 9s 9d", "qh qd qc"], False),
        # §3.4: no wild card onto a completed canasta: 2d has nowhere to go
        ("samba", "2d 7c kc", [*TWO_CANASTAS, "7h 7d 7s"], True),
        ("samba", "2d jo kc", TWO_CANASTAS, False),
        # §3.5 Bolivia: three wild cards make a wild meld; two do not
        ("bolivia", "2c 2d jo 9c", TWO_CANASTAS, True),
        ("bolivia", "2c jo 9c", TWO_CANASTAS, False),
        # §3.5 Bolivia: one of the two canastas must be an escalera, made this turn
        ("bolivia", "4d 5d 6d 7d 8d 9d 10d 9c", ["5c 5d 5h 5s 5c 5d 2c"], True),
        ("bolivia", "4d 5d 6d 7d 8d 9d 9c kc", ["5c 5d 5h 5s 5c 5d 2c"], False),
        ("bolivia", "4d 5d 6d 9c", ["5c 5d 5h 5s 5c 5d 2c", "7d 8d 9d 10d"], True),
        ("bolivia", "4d 5d 6d 9c", ["5c 5d 5h 5s 5c 5d 2c", "6h 6h 6d 6s 6c 6s 2d"], False),
    ],
)
def test_1_11_2_ask_in_samba_and_bolivia_finds_every_way_out(
    preset: str, hand: str, melds: list[str], allowed: bool
) -> None:
    """§1.11.2 with §3.4, §3.5, §3.8a: asking partner is allowed exactly when some way out
    exists, whatever melds it needs."""
    state = _position(preset, hand, melds)
    assert may_ask(state) is allowed
    assert _engine_goes_out(state, 0, {}) is allowed


def test_1_11_3_a_big_awkward_hand_is_decided_in_few_steps() -> None:
    """The search stays small on long hands full of runs, pairs and wild cards that pass
    the cheap checks but cannot go out (Bolivia: a canasta of nines, and the hearts and
    diamonds break before seven, so no escalera): a counted bound on its work."""
    config = make_config("bolivia")
    melds = list(EMPTY_MELDS)
    melds[NINE] = parse_cards("9s 9s 9d 9d 9h 9h 9c")
    for hand, bound in (
        ("4h 5h 6h 7h 8h 9h jh qh kh ah 4h 5h 6h 7h 8h 9h 4d 5d 6d 9s 9c 2c 2d jo", 100),
        ("4h 5h 6h 7h 8h 9h jh qh kh ah 4d 5d 6d 7d 8d 9d 2c 2d", 100),
        ("4h 5h 6h 7h 8h 9h jh qh kh ah 4d 5d 6d 7d 8d 9d jd qd kd ad 2c jo", 100),
    ):
        _clear_steps()
        assert not can_go_out(config, parse_cards(hand), tuple(melds))
        assert _steps() < bound, hand
    _clear_steps()
    way_out = parse_cards("4h 5h 6h 7h 8h 9h 10h jh qh kh ah 4d 5d 6d 7d 8d 9d 2c jo")
    # 8h-ah an escalera, 4h-6h and 4d-6d, 7h 7d 2c jo, 9d onto the nines, 8d discarded
    assert can_go_out(config, way_out, tuple(melds))
    assert _steps() < 200


def test_3_4_several_melds_of_a_rank_come_with_at_most_three_packs() -> None:
    """The search weighs every grouping of a rank's open melds (they may be combined, §3.4),
    so Samba and Bolivia take at most three packs, where a rank has at most six such melds:
    six of them with ten wild cards in hand stay within a counted bound. With more packs the
    groupings grow as Bell numbers (ten melds of fives: a minute), so more are refused."""
    for preset in ("samba", "bolivia"):
        with pytest.raises(ConfigError, match="at most 3 packs"):
            make_config(preset, {"decks": 4})
    with pytest.raises(ConfigError, match="at most 3 packs"):
        make_config("classic", {"multiple_melds_per_rank": True, "decks": 4})
    config = make_config("samba")
    groups = [parse_cards("5c 5d 2c" if i % 2 else "5h 5s 2d jo") for i in range(6)]
    melds = list(EMPTY_MELDS)
    melds[FIVE] = groups[0]
    _clear_steps()
    hand = parse_cards("2c 2d 2h 2s jo 2c 2d 2h 2s jo 9c 9d")
    assert not can_go_out(config, hand, tuple(melds), extra=tuple(groups[1:]))
    assert _steps() < 5_000  # about 1,500


# -- the engine's own moves decide: can seat 0 empty its hand this turn? ------------------------


def _refs(state: GameState, side: int) -> list[MeldRef]:
    """A name for each of the side's melds, as the notation gives them."""
    out = [MeldRef(rank) for rank, cards in enumerate(state.melds[side]) if cards]
    counts: dict[int, int] = {}
    wilds = 0
    for cards in state.extra_of(side):
        kind = meld_kind(cards)
        if kind == SEQUENCE:
            suit, low, high = sequence_span(cards)
            out.append(MeldRef(low, 1, suit, high))
        elif kind == GROUP:
            rank = meld_rank(cards)
            counts[rank] = counts.get(rank, 1 if state.melds[side][rank] else 0) + 1
            out.append(MeldRef(rank, counts[rank]))
        else:
            wilds += 1
            out.append(MeldRef(JOKER_RANK, wilds))
    return out


def _memo_key(state: GameState, seat: int) -> object:
    side = state.side_of[seat]
    hand = tuple(sorted(state.hands[seat]))
    return (hand, state.melds[side], tuple(sorted(state.extra_of(side))))


def _moves(state: GameState, seat: int) -> list[object]:
    """Every discard, meld of a subset of the hand, lay-off onto one of the side's melds and
    combination of two of its group melds."""
    side = state.side_of[seat]
    hand = tuple(sorted(state.hands[seat]))
    subsets = {
        tuple(sorted(c))
        for size in range(1, len(hand) + 1)
        for c in itertools.combinations(hand, size)
    }
    refs = _refs(state, side)
    moves: list[object] = [Discard(c) for c in set(hand)]
    for cards in subsets:
        if len(cards) >= 3:
            moves.append(Meld((cards,)))
        moves.extend(LayOff(r.rank, cards, r.which, r.suit, r.high) for r in refs)
    moves.extend(Combine(a, b) for a, b in itertools.combinations(refs, 2) if a.suit < 0)
    return moves


def _engine_goes_out(state: GameState, seat: int, seen: dict[object, bool]) -> bool:
    """Whether some sequence of melds, lay-offs and combinations the engine accepts, and
    perhaps a final discard, takes ``seat`` out this turn (a bounded exhaustive search)."""
    return engine_goes_out(state, seat, seen, _memo_key, _moves)


def _random_position(rng: random.Random, cards_in_hand: int) -> GameState:
    """A small Samba or Bolivia position: seat 0's side has opened, with a few canastas,
    sequences and melds, and a hand of cards close to one another."""
    preset = rng.choice(("samba", "bolivia"))
    suits = rng.sample("cdhs", 2)
    low = rng.randrange(2, 8)
    pool = [
        f"{rank}{suit}"
        for suit in suits
        for rank in ["4", "5", "6", "7", "8", "9", "10", "j", "q", "k", "a"]
    ]
    pool = pool[low - 2 : low + 5] + pool[11 + low - 2 : 11 + low + 5] + ["2c", "2d", "jo"]
    melds = []
    if rng.random() < 0.8:
        melds.append("5c 5d 5h 5s 5c 5d 2c")
    if rng.random() < 0.4 or (preset == "bolivia" and rng.random() < 0.5):
        melds.append("8h 9h 10h jh qh kh ah")
    if rng.random() < 0.5:
        rank = rng.choice(["4", "6", "7", "9", "10", "j", "q", "k", "a"])
        melds.append(f"{rank}c {rank}d {rank}s" + (" 2h" if rng.random() < 0.3 else ""))
        if rng.random() < 0.4:  # a second meld of the rank (§3.4), to grow or combine
            melds.append(f"{rank}h {rank}h {rank}c")
            pool += [f"{rank}d", "jo"]
    if rng.random() < 0.5:
        start = rng.randrange(4, 9)
        names = ["4", "5", "6", "7", "8", "9", "10", "j", "q", "k", "a"]
        melds.append(" ".join(f"{n}{suits[0]}" for n in names[start - 4 : start - 1]))
    if preset == "bolivia" and rng.random() < 0.3:
        melds.append("2s 2h jo")
    if not melds:
        melds.append("kc kd ks")
    hand = " ".join(rng.choice(pool) for _ in range(cards_in_hand))
    return _position(preset, hand, melds)


def _touching(state: GameState) -> bool:
    """Whether two sequences of one suit overlap or touch (a table no play can make)."""
    spans = [sequence_span(m) for m in state.extra_of(0) if meld_kind(m) == SEQUENCE]
    return any(
        a[0] == b[0] and a[1] <= b[2] + 1 and b[1] <= a[2] + 1
        for a, b in itertools.combinations(spans, 2)
    )


def _agree(seed: int, most: int = 5) -> tuple[bool, bool]:
    rng = random.Random(seed)
    for _ in range(20):
        try:
            state = _random_position(rng, rng.randrange(3, most + 1))
        except CanastaError:
            continue  # a meld the dealer refused (two sequences touching): draw another
        if any(IS_RED3[c] for c in state.hands[0]) or _touching(state):
            continue
        hand = state.hands[0]
        found = _can_go_out(state, 0, hand, minimum_to_go_out(state, 0))
        played = _engine_goes_out(state, 0, {})
        assert found is played, (seed, [RANK[c] for c in hand], state.hands[0], state.extra)
        if len(hand) >= 2:
            assert may_ask(state) is found
        return found, played
    return False, False


@pytest.mark.parametrize("seed", range(12))
def test_1_11_2_search_agrees_with_playing_the_engine(seed: int) -> None:
    """§1.11.2, §1.11.3: a way out the search finds is found again by playing the engine's
    moves, and a way out the engine's moves find, the search finds too."""
    _agree(seed)


@pytest.mark.slow
def test_1_11_2_search_agrees_with_playing_the_engine_at_length() -> None:
    outs = sum(_agree(seed, 7)[0] for seed in range(1000, 1300))
    assert outs > 10  # the check saw ways out, not only dead ends


@pytest.mark.parametrize(
    ("hand", "allowed"),
    [
        ("4h 5h 6h 7h 8h 9h 10h kc kd ks kh kc kd ks 9c", True),
        ("4h 5h 6h 7h 8h 9h jh kc kd ks kh kc kd ks 9c", False),
    ],
)
def test_3_4_an_unopened_side_may_ask_to_go_out_with_a_samba_built_this_turn(
    hand: str, allowed: bool
) -> None:
    """§3.4, §1.11.4: a side with nothing on the table may go out concealed, a samba and a
    canasta of kings built from the hand (and not when the run breaks before seven)."""
    state = _position("samba", hand, [])
    assert not state.opened(0)
    assert may_ask(state) is allowed
    cards = parse_cards(hand)
    try:
        after = rules.apply(state, 0, Meld((tuple(cards[:7]), tuple(cards[7:14]))))
        after = rules.apply(after, 0, Discard(cards[14]))
    except IllegalMoveError:
        assert not allowed
    else:
        assert allowed
        assert after.last_hand is not None
        assert after.last_hand.concealed


def test_d9_a_wild_limit_by_naturals_outside_hand_and_foot_is_searched_exactly() -> None:
    """§3.7's wild limit (fewer wild cards than naturals, at most three) chosen as an option
    of classic: three fives and three twos are no meld under it, and the king canasta holds
    its three wild cards already, so with an 8 to discard there is no way out and nothing
    to ask (the fixed-limit search took three twos with three fives)."""
    config = make_config(
        "classic", {"wild_limit": "fewer_than_naturals_max3", "canastas_to_go_out": 1}
    )
    melds = (parse_cards("kh kh ks ks 2c 2c jk"),)
    hand = parse_cards("5h 5c 5d 2s 2h 2d 8c")  # the 8 drawn last
    state = deal_position(
        new_match(config),
        [hand[:-1], *(parse_cards(h) for h in OTHERS)],
        hand[-1:],
        pile=parse_cards("9c"),
        melds=[list(melds), []],
        turn=0,
    )
    state = rules.apply(state, 0, Draw())
    assert not _can_go_out(state, 0, state.hands[0])
    assert not may_ask(state)


_STEPS = (
    going_out._table_facts,
    going_out._search_table,
    going_out._suit_options,
    going_out._groups_best,
    going_out._wild_best,
    going_out._rank_best,
    going_out._fill,
    going_out._new_melds,
)
"""The memoised steps of Samba's search: their misses count its work (with the searches
``going_out._decide`` remembers)."""


def _clear_steps() -> None:
    going_out._DECIDED.clear()
    for cached in _STEPS:
        cached.cache_clear()


def _steps() -> int:
    return len(going_out._DECIDED) + sum(cached.cache_info().misses for cached in _STEPS)


# -- the cheap conditions and the quick layout agree with the whole search -----------------------


class _Question(NamedTuple):
    """A going-out question: a hand against a side's melds, under a game's rules."""

    rules: going_out.Rules
    hand: tuple[Card, ...]
    melds: Melds
    extra: Extra


def _played_questions(
    preset: str, hands: int, seed: int, options: dict[str, object] | None = None
) -> list[_Question]:
    """The going-out questions seeded random play of ``preset`` (with house-rule ``options``)
    asks: at each decision after the draw, the seat's hand (and that hand less each card it
    holds, as a listed play would leave it) against its side's melds."""
    config = make_config(preset, options or {})
    searched = going_out.search_rules(config)
    rng = random.Random(seed)
    match = new_match(config, seed=seed)
    found: list[_Question] = []
    for _ in range(hands):
        state = rules.deal_hand(match, rules.shuffled_deck(config, rng.getrandbits(64)))
        while state.phase in (Phase.DRAW, Phase.PLAY, Phase.ANSWER):
            seat = state.actor()
            assert seat is not None
            if state.phase is Phase.PLAY:
                side = state.side_of[seat]
                hand = state.hands[seat]
                melds, extra = state.melds[side], state.extra_of(side)
                found.append(_Question(searched, hand, melds, extra))
                for card in dict.fromkeys(hand):
                    rest = list(hand)
                    rest.remove(card)
                    found.append(_Question(searched, tuple(rest), melds, extra))
            state = rules.apply(state, seat, rng.choice(rules.legal_actions(state, seat)))
        match = state
        if match.phase is Phase.MATCH_OVER:
            match = new_match(config, seed=rng.getrandbits(32))
    return found


def _placed_out(question: _Question, minimum: int, allow_discard: bool) -> bool:
    """The whole search alone (``_place_all``), with every final discard tried: the answer
    the cheap conditions, the quick layout and the discards worth trying must give."""
    table = going_out._search_table(question.melds, question.extra)
    hand = question.hand
    if going_out._place_all(question.rules, hand, table, minimum):
        return True
    if not allow_discard:
        return False
    for card in dict.fromkeys(hand):
        rest = list(hand)
        rest.remove(card)
        if going_out._place_all(question.rules, tuple(rest), table, minimum):
            return True
    return False


@pytest.mark.parametrize(
    ("preset", "hands", "seed", "options"),
    [
        ("samba", 3, 5, {}),
        # (the inner loop plays Bolivia's first three hands, about 4,000 questions: its eight
        # ask about 10,000)
        ("bolivia", 3 if inner_loop() else 8, 3, {}),
        # (the wild limit and the canastas asked change the cheap conditions' answers)
        pytest.param("samba", 3, 5, {"wild_limit": "max2"}, marks=pytest.mark.slow),
        pytest.param(
            "samba", 3, 6, {"wild_limit": "not_more_than_naturals"}, marks=pytest.mark.slow
        ),
        pytest.param("samba", 3, 7, {"canastas_to_go_out": 1}, marks=pytest.mark.slow),
        pytest.param("bolivia", 8, 5, {"canastas_to_go_out": 3}, marks=pytest.mark.slow),
        pytest.param("bolivia", 8, 3, {"wild_limit": "max2"}, marks=pytest.mark.slow),
    ],
)
def test_1_11_3_the_cheap_conditions_refuse_only_hands_that_cannot_go_out(
    preset: str, hands: int, seed: int, options: dict[str, object]
) -> None:
    """§1.11.3 with §3.4, §3.5, §3.8a, D9: the going-out answer (cheap necessary conditions
    first, then a quick layout, then the search over the discards worth trying) is the
    whole search's over every discard, on the hands random play holds after its draws and
    on each of them less one card; with and without a final discard, and with an opening
    minimum to reach (§1.10, an unopened side going out); under the presets' rules and
    under other wild limits and numbers of canastas to go out."""
    refused = outs = 0
    for question in _played_questions(preset, hands, seed, options):
        facts = going_out._table_facts(question.melds, question.extra)
        for minimum, allow_discard in ((-1, True), (-1, False), (120, True)):
            going_out._DECIDED.clear()
            answer = going_out._decide(*question, minimum, allow_discard)
            refused += (
                going_out._might_go_out(question.rules, question.hand, facts, allow_discard) is None
            )
            outs += answer
            assert answer is _placed_out(question, minimum, allow_discard), question
    assert refused  # (both answers were asked for)
    assert outs


def _listed_way_out(state: GameState, seen: set[str]) -> bool:
    """Whether moves the move lists offer seat 0, one after another, take it out; every
    position on the way must list something (a bot or a search playout only plays listed
    moves). Exhaustive over the listed moves, memoised in ``seen`` on the position."""
    key = json.dumps(state.to_json(), sort_keys=True)
    if key in seen:
        return False
    seen.add(key)
    listed = rules.legal_actions(state, 0)
    assert listed, f"nothing listed for {rules.cards_text(state.hands[0])}"
    for action in listed:
        after = rules.apply(state, 0, action)
        if after.last_hand is not None and after.last_hand.reason is EndReason.WENT_OUT:
            return True
        if after.phase is Phase.PLAY and after.turn == 0 and _listed_way_out(after, seen):
            return True
    return False


@pytest.mark.parametrize(
    ("preset", "hand", "melds"),
    [
        # §3.4: two melds of eights combined past seven cards make the second canasta; the
        # side's first pair of melds of a rank (fives) may not combine (§3.8a: a wild card
        # onto a completed canasta)
        (
            "samba",
            "8s 9c 10d",
            [TWO_CANASTAS[1], "5h 5s jo", "8c 8c 8h 8d 8h", "8d 8c 8s", "9s 9d 9h"],
        ),
        # §3.4: a new meld of nines beside the first, with a wild card
        ("samba", "9c 9s jo kc", [*TWO_CANASTAS, "9h 9d 9h"]),
        # §3.4: a sequence begun and grown a card at a time
        ("samba", "4d 5d 6d 7d 8d kc", TWO_CANASTAS),
        # §3.5: a wild meld begun and grown
        ("bolivia", "2c 2d jo 2h kc", TWO_CANASTAS),
    ],
)
def test_1_11_2_told_to_go_out_the_move_lists_lead_out(
    preset: str, hand: str, melds: list[str]
) -> None:
    """§1.11.2, §3.4, §3.5: once partner says yes, the player must go out, and the move lists
    offer, position after position, the steps of a way out: they never run dry (a bot or a
    search playout plays only listed moves) and some path through them goes out."""
    state = _position(preset, hand, melds)
    state = rules.apply(state, 0, AskPartner())
    state = rules.apply(state, 2, YES)
    assert state.must_go_out
    assert _listed_way_out(state, set())
