"""Random play and the engine invariants of docs/rules.md §1.15, shared by the randomized tests.

``play_hand`` plays one hand by picking among ``legal_actions`` and checks, after every
action, everything §1.15 promises (card conservation, no red three in a hand, valid melds,
``opened`` never reverting, one end reason, scores adding up) plus a few structural facts
(whose move it is, hand sizes, the pile's freeze). Failures carry the seed and the actions
played so far, so every failure is a reproduction.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import strategies as st

from shared import rules
from shared.rules import (
    Action,
    AskPartner,
    Discard,
    Draw,
    EndReason,
    GameState,
    Meld,
    Pass,
    Phase,
    RuleConfig,
)
from shared.rules.actions import ASK
from shared.rules.cards import (
    IS_BLACK3,
    IS_NATURAL,
    IS_RED3,
    IS_WILD,
    RANK,
    THREE,
    VALUE,
    deck,
    sort_cards,
)

HAND_PHASES = (Phase.DRAW, Phase.PLAY, Phase.ANSWER)
PRESET_NAMES = tuple(rules.PRESETS)
INNER_LOOP_PRESETS = frozenset({"classic", "two_player", "three_cutthroat"})
"""The presets that per-preset tests run in ``make test-fast``; the others (the same rules on
more cards or seats, and the variants, whose own rules the scenario files check in the inner
loop too) run in ``make test``."""


def preset_params() -> list[Any]:
    """``PRESET_NAMES`` for ``parametrize``, those outside the inner loop marked slow."""
    return [
        name if name in INNER_LOOP_PRESETS else pytest.param(name, marks=pytest.mark.slow)
        for name in PRESET_NAMES
    ]


CHECK_ALL_EVERY = 5
"""Every fifth decision, every listed action is applied, not only the one played."""
MAX_ACTIONS_PER_HAND = 20_000
"""A hand longer than this is taken to be an endless loop."""

OPTION_SETS: tuple[Mapping[str, Any], ...] = (
    {"red3_deal_timing": "first_turn"},
    {"last_card_red3": "meld_no_discard"},
    {"upcard_mode": "bury_and_redraw"},
    {"upcard_mode": "cover_no_freeze"},
    {"black3_freezes": True},
    {"black3_top_takeable_to_go_out": True},
    {"frozen_allows_layoff": True},
    {"stock_out_forced_take": "any_legal"},
    {"stock_out_rule": "end_after_last_discard"},
    {"ask_timing": "before_or_after_draw", "ask_limit_per_hand": 1},
    {"wild_limit": "not_more_than_naturals"},
    {"open_via_pile": "forbidden"},
    {"open_via_pile": "required"},
    {"jokers_per_deck": 3, "one_card_pile_rule": False},
    {"unfrozen_take_methods": ["pair"], "red3_counts_toward_minimum": True},
    {"concealed_min_exempt": False, "concealed_requires_own_canasta": False},
    {"red3_negative_if": "no_canasta", "tie_policy": "draw"},
    {"draw_count": 2, "canastas_to_go_out": 2},
)
"""House-rule options (docs/rules.md §2) played on top of the presets."""

TOLERATED: frozenset[str] = frozenset()
"""Known engine bugs that the random-play checks step over, so that the rest of a playout
is still checked. Each has a strict ``xfail`` test in ``test_playouts.py``; when the engine is
fixed that test starts to pass (an XPASS failure): delete the test's mark and the entry here."""

Policy = Callable[[random.Random, Sequence[Action]], Action]


def uniform(rng: random.Random, actions: Sequence[Action]) -> Action:
    """Any listed action, all equally likely."""
    return rng.choice(actions)


def eager(rng: random.Random, actions: Sequence[Action]) -> Action:
    """Usually put cards down (take the pile, meld, lay off) when the helpers list a way.

    Uniform play discards far more often than it melds, so it rarely builds canastas or goes
    out; this policy goes out far more often, and asks partner whenever it may.
    """
    if ASK in actions and rng.random() < 0.5:
        return ASK
    plays = [a for a in actions if not isinstance(a, Discard | Draw | Pass | AskPartner)]
    if plays and rng.random() < 0.8:
        return rng.choice(plays)
    return rng.choice(actions)


def threes_first(rng: random.Random, actions: Sequence[Action]) -> Action:
    """Eager play that melds black threes whenever a listed action does and never discards
    them while it may discard another card: it reaches the turns where black threes oblige a
    player to go out (§1.9) far more often than the other policies."""
    threes = [
        a for a in actions if isinstance(a, Meld) and any(IS_BLACK3[c] for g in a.melds for c in g)
    ]
    if threes:
        return rng.choice(threes)
    keep = [a for a in actions if not (isinstance(a, Discard) and IS_BLACK3[a.card])]
    return eager(rng, keep or actions)


POLICIES: dict[str, Policy] = {"uniform": uniform, "eager": eager}


def config_for(preset: str, options: Mapping[str, Any] | None = None) -> RuleConfig:
    return rules.make_config(preset, options)


def start_match(config: RuleConfig, seed: int | str) -> GameState:
    """A match with its first hand dealt from ``seed``."""
    return deal_next(rules.new_match(config, seed=seed), seed)


def deal_next(state: GameState, seed: int | str) -> GameState:
    """Deal the next hand of a match in ``DEAL`` phase, the order drawn from seed and hand."""
    order = rules.shuffled_deck(state.config, f"{seed}/{state.hand_number + 1}")
    dealt = rules.deal_hand(state, order)
    check_deal(state, dealt)
    check_state(dealt)
    return dealt


@dataclass
class Log:
    """What the randomized tests played, for the report and for reproducing failures."""

    hands: int = 0
    actions: int = 0
    matches: int = 0
    reasons: Counter[str] = field(default_factory=Counter)
    kinds: Counter[str] = field(default_factory=Counter)
    concealed: int = 0


def play(
    state: GameState,
    rng: random.Random,
    policy: Policy = uniform,
    *,
    log: Log | None = None,
    label: str = "",
    checked: bool = True,
) -> Iterator[GameState]:
    """Yield the position after each action until the hand ends, checking every step
    (only that the chosen listed action is accepted, when not ``checked``)."""
    history: list[str] = []
    turn_start = state
    while state.phase in HAND_PHASES:
        seat = state.actor()
        assert seat is not None
        if not checked:
            actions = _playable(state, rules.legal_actions(state, seat))
            while (after := _accepted(state, seat, action := policy(rng, actions))) is None:
                actions = [a for a in actions if a != action]
            state = after
            yield state
            continue
        try:
            actions = rules.legal_actions(state, seat)
            assert actions, f"seat {seat} has no legal action in phase {state.phase}"
            for other in range(state.players):
                if other != seat:
                    assert rules.legal_actions(state, other) == []
            if len(history) % CHECK_ALL_EVERY == 0:
                for listed in actions:
                    _accepted(state, seat, listed)
            actions = _playable(state, actions)
            while True:
                action = policy(rng, actions)
                after = _accepted(state, seat, action)
                if after is not None:
                    break
                actions = [a for a in actions if a != action]  # a tolerated engine bug
                assert actions, "every listed action was refused"
            history.append(f"{seat}:{action}")
            check_transition(state, after, turn_start)
            check_state(after)
        except AssertionError as exc:
            raise AssertionError(
                f"{label} hand {state.hand_number} action {len(history)}: {exc}\n"
                f"actions this hand: {'; '.join(history)}"
            ) from exc
        assert len(history) < MAX_ACTIONS_PER_HAND, f"{label}: the hand never ends"
        if log is not None:
            log.actions += 1
            log.kinds[str(action).split(" ", 1)[0]] += 1
            if after.phase not in HAND_PHASES and after.last_hand is not None:
                log.hands += 1
                log.reasons[after.last_hand.reason.value] += 1
                log.concealed += after.last_hand.concealed
        if after.turn != state.turn:
            turn_start = after
        state = after
        yield state


def _playable(state: GameState, actions: list[Action]) -> list[Action]:
    """The listed actions that random play may choose, stepping around known engine bugs."""
    if state.must_go_out and "ask_when_obliged_to_go_out" in TOLERATED:
        return [a for a in actions if a != ASK]
    return actions


def _accepted(state: GameState, seat: int, action: Action) -> GameState | None:
    """``apply`` of a listed action: it must be accepted (``None``: a tolerated refusal)."""
    try:
        return rules.apply(state, seat, action)
    except rules.CanastaError as exc:
        if "cutthroat_merge_wild_limit" in TOLERATED and joined_over_limit(state, seat):
            return None
        raise AssertionError(f"the listed action {action} was refused: {exc}") from exc


def joined_over_limit(state: GameState, seat: int) -> bool:
    """Cutthroat partners whose joined melds broke the wild limit (a known engine bug)."""
    config = state.config
    side = state.side_of[seat]
    if not config.cutthroat or side != _partners_side(state):
        return False
    for meld in state.melds[side]:
        wilds = sum(1 for c in meld if IS_WILD[c])
        if wilds > (3 if config.wild_limit == "max3" else len(meld) - wilds):
            return True
    return False


def play_hand(
    state: GameState,
    rng: random.Random,
    policy: Policy = uniform,
    *,
    log: Log | None = None,
    label: str = "",
) -> GameState:
    """Play from ``state`` until the hand ends, checking every step; the final position."""
    final = state
    for final in play(state, rng, policy, log=log, label=label):  # noqa: B007
        pass
    return final


def play_match(
    config: RuleConfig,
    seed: int,
    policy: Policy = uniform,
    *,
    max_hands: int,
    log: Log | None = None,
) -> GameState:
    """Play up to ``max_hands`` hands of one match (fewer if the match ends)."""
    rng = random.Random(seed)
    state = start_match(config, seed)
    label = f"{config.preset} seed={seed} policy={policy.__name__}"
    for number in range(max_hands):
        state = play_hand(state, rng, policy, log=log, label=label)
        if state.phase is Phase.MATCH_OVER or number == max_hands - 1:
            break
        state = deal_next(state, seed)
    if log is not None and state.phase is Phase.MATCH_OVER:
        log.matches += 1
    return state


def random_position(
    config: RuleConfig, seed: int, steps: int, policy: Policy = uniform, *, checked: bool = True
) -> GameState:
    """The position after ``steps`` random actions of a match dealt from ``seed``.

    Hands that end are followed by the next deal, so positions of later hands (with scores
    and higher initial minimums) occur too. The result is a decision point of some seat,
    unless the match ended (``MATCH_OVER``).
    """
    rng = random.Random(seed)
    state = start_match(config, seed)
    label = f"{config.preset} seed={seed} steps={steps}"
    while steps > 0 and state.phase is not Phase.MATCH_OVER:
        if state.phase is Phase.DEAL:
            state = deal_next(state, seed)
        for position in play(state, rng, policy, label=label, checked=checked):
            state = position
            steps -= 1
            if steps == 0:
                break
    if state.phase is Phase.DEAL:
        state = deal_next(state, seed)
    return state


@dataclass(frozen=True)
class Spot:
    """How to reach a position: hypothesis prints this, so a failure is its own reproduction
    (``Spot(...).state()``)."""

    preset: str
    options: Mapping[str, Any] | None
    seed: int
    steps: int
    policy: str
    until_asked: bool = False
    """Play on (eagerly, within the hand) until someone asks partner, if anyone does."""

    def state(self) -> GameState:
        config = config_for(self.preset, self.options)
        policy = POLICIES[self.policy]
        state = random_position(config, self.seed, self.steps, policy, checked=False)
        if self.until_asked:
            rng = random.Random(self.seed)
            for position in play(state, rng, eager, checked=False):
                state = position
                if state.phase is Phase.ANSWER:
                    break
        return state


SPOT_PRESETS = tuple(name for name in PRESET_NAMES if name != "hand_and_foot")
"""The presets of ``spots``: Hand and Foot's hands are three times as long and each step
dearer, so its positions (``foot_spots``) have their own tests, out of the inner loop."""


def _spots(presets: st.SearchStrategy[str]) -> st.SearchStrategy[Spot]:
    return st.builds(
        Spot,
        preset=presets,
        options=st.one_of(st.none(), st.none(), st.sampled_from(OPTION_SETS)),
        seed=st.integers(min_value=0, max_value=2**32),
        steps=st.integers(min_value=0, max_value=700),
        policy=st.sampled_from(sorted(POLICIES)),
        until_asked=st.sampled_from([False, False, True]),
    )


spots = _spots(st.sampled_from(SPOT_PRESETS))
"""A position of a random match: any preset but Hand and Foot, sometimes a house rule, 0-700
random actions."""
foot_spots = _spots(st.just("hand_and_foot"))
"""A position of a random Hand and Foot match (§3.7), as ``spots`` draws the others."""


# -- invariants ----------------------------------------------------------------------------


def deck_of(config: RuleConfig) -> Counter[int]:
    return Counter(deck(config.decks, config.jokers_per_deck))


def check_state(state: GameState) -> None:
    """Every invariant that a single position must satisfy (docs/rules.md §1.15 and more)."""
    config = state.config
    n = config.players
    in_hand = state.phase in HAND_PHASES

    # Card conservation: every card of the configured deck is in exactly one zone.
    if state.hand_number == 0:  # nothing dealt yet
        assert state.phase is Phase.DEAL
        assert not state.all_cards()
    else:
        assert Counter(state.all_cards()) == deck_of(config), "cards are not conserved"

    # Whose move it is follows from the phase.
    actor = state.actor()
    if in_hand:
        assert 0 <= state.turn < n
        if state.phase is Phase.ANSWER:
            assert config.has_partners
            assert actor == config.partner_to_ask(state.turn)
            assert actor != state.turn
            assert config.initial_side(actor) == config.initial_side(state.turn)
            assert state.asked
        else:
            assert actor == state.turn
    else:
        assert actor is None

    # Hands: sorted for display, non-empty during a hand, red threes only while still owed.
    for seat, hand in enumerate(state.hands):
        assert tuple(hand) == sort_cards(hand), f"seat {seat}'s hand is not in display order"
        if in_hand:
            assert hand, f"seat {seat} holds no cards, yet the hand goes on"
            if any(IS_RED3[c] for c in hand):
                assert config.red3_deal_timing == "first_turn", "a red three stayed in a hand"
                assert state.pending_red3[seat], f"seat {seat} holds a red three it does not owe"
                assert seat != state.turn, "the player to move still holds a red three"
    if config.modern_american:
        check_american(state)
        return
    for seat, threes in enumerate(state.red3):
        assert all(IS_RED3[c] for c in threes), f"seat {seat}'s red-three area holds {threes}"

    # Melds: one per rank (by construction), each valid (§1.9).
    assert len(state.melds) == config.sides
    for side, melds in enumerate(state.melds):
        assert len(melds) == 13, "melds are indexed by rank"
        assert not melds[0], "a meld of twos"
        for rank, meld in enumerate(melds):
            if meld:
                joined = config.cutthroat and side == _partners_side(state)
                check_meld(config, side, rank, meld, joined=joined)
        if melds[THREE] and in_hand:
            assert state.side_of[state.turn] == side, "a black-three meld outside its turn"
            assert state.must_go_out, "a black-three meld without the obligation to go out"
    # Samba and Bolivia's further melds (§3.4, §3.5): none elsewhere, each valid here.
    if not config.variant_melds:
        assert state.extra == (), "further melds in a game without them"
    else:
        assert len(state.extra) == config.sides
        for side, extra in enumerate(state.extra):
            spans = []
            for meld in extra:
                ranks = {RANK[c] for c in meld if not IS_WILD[c]}
                if len(ranks) > 1:
                    spans.append(check_sequence(config, side, meld))
                elif not ranks:
                    assert config.allow_wild_melds, f"a wild meld in {config.preset}"
                    assert 3 <= len(meld) <= 7, f"a wild meld of {len(meld)} cards"
                else:
                    rank = ranks.pop()
                    assert state.melds[side][rank], "a further meld of a rank with no first"
                    check_meld(config, side, rank, meld)
            for i, (suit, low, high) in enumerate(spans):
                for o_suit, o_low, o_high in spans[i + 1 :]:
                    apart = suit != o_suit or high + 1 < o_low or o_high + 1 < low
                    assert apart, "two sequences of one suit touch or overlap"
    if config.cutthroat and state.lone_seat is not None:
        lone = state.lone_seat
        partners = [s for s in range(n) if s != lone]
        assert state.side_of[partners[0]] == state.side_of[partners[1]] != state.side_of[lone]

    # The pile and its freeze (§1.8.1).
    if not state.pile:
        assert not state.pile_frozen, "an empty pile is frozen"
    if state.pile_frozen:
        assert any(IS_WILD[c] or IS_RED3[c] or IS_BLACK3[c] for c in state.pile)
    elif config.upcard_mode == "cover_and_freeze" and in_hand:
        assert not any(IS_WILD[c] or IS_RED3[c] for c in state.pile), "a wild in an open pile"

    # Hand and Foot's feet (§3.7): one per seat, dealt whole, face down until picked up.
    if config.foot_size:
        assert len(state.feet) == n, "a foot per seat"
        for seat, foot in enumerate(state.feet):
            assert len(foot) in (0, config.foot_size), f"seat {seat}'s foot has {len(foot)} cards"
            assert tuple(foot) == sort_cards(foot)
    else:
        assert state.feet == (), "feet in a game without them"

    assert len(state.scores) == config.sides
    if state.phase is Phase.MATCH_OVER:
        best = max(state.scores)
        if config.hands_per_match is None:
            assert best >= state.target
        else:
            assert state.hand_number >= config.hands_per_match
        assert state.winners == tuple(i for i, s in enumerate(state.scores) if s == best)
    else:
        assert state.winners == ()


def check_american(state: GameState) -> None:
    """Modern American's own invariants (docs/rules.md §3.6), restated from the rules rather than
    from the engine: every three laid out (none held, none in the pile), the talon's two
    packets either whole or drawn, melds of at most seven cards and two wild cards, sevens
    without wild cards, aces with them only after a wild opening, one wild meld of wild
    cards only; the scores and the match end as in the other games."""
    in_hand = state.phase in HAND_PHASES
    for seat, threes in enumerate(state.red3):
        assert all(RANK[c] == THREE for c in threes), f"seat {seat}'s threes area: {threes}"
        if in_hand and any(RANK[c] == THREE for c in state.hands[seat]):
            assert state.pending_red3[seat], f"seat {seat} holds a three it does not owe"
            assert seat != state.turn, "the player to move still holds a three"
    assert not any(RANK[c] == THREE for c in state.pile), "a three in the pile"
    if state.hand_number == 0:
        assert state.talon == (), "a talon before the first deal"
        return
    assert len(state.talon) == 2, "the talon is two packets"
    assert len(state.talon[0]) in (0, 4)
    assert len(state.talon[1]) in (0, 3)
    assert all(n in (0, 1, 2) for n in state.talon_owed)
    for side, melds in enumerate(state.melds):
        assert len(melds) == 13
        for rank, meld in enumerate(melds):
            if not meld:
                continue
            where = f"side {side}'s meld {rules.cards_text(meld)}"
            assert 3 <= len(meld) <= 7, f"{len(meld)} cards in {where}"
            wilds = sum(1 for c in meld if IS_WILD[c])
            if rank == 0:
                assert wilds == len(meld), f"a natural card in the wild meld {where}"
                continue
            assert rank != THREE, f"a meld of threes: {where}"
            assert all(RANK[c] == rank for c in meld if not IS_WILD[c]), f"mixed {where}"
            assert len(meld) - wilds >= 2, f"fewer than two naturals in {where}"
            assert wilds <= 2, f"more than two wild cards in {where}"
            if rank == 5:  # sevens
                assert not wilds, f"wild sevens: {where}"
            if rank == 12 and wilds:
                assert state.wild_opening[side], f"wild aces without a wild opening: {where}"
    assert not state.pile_frozen or any(IS_WILD[c] for c in state.pile)
    assert len(state.scores) == state.config.sides
    if state.phase is Phase.MATCH_OVER:
        best = max(state.scores)
        assert state.winners == tuple(i for i, s in enumerate(state.scores) if s == best)


def expected_american(state: GameState, side: int, went_out: int | None) -> int:
    """A side's hand total by docs/rules.md §3.6, computed independently of ``american``."""
    melds = [m for m in state.melds[side] if m]
    seats = [s for s in range(state.players) if state.side_of[s] == side]
    total = 0
    canastas = 0
    melded = 0  # the card values that count (§3.8a option: not those of a penalised meld)
    for meld in melds:
        wild = all(IS_WILD[c] for c in meld)
        natural = not any(IS_WILD[c] for c in meld)
        rank = RANK[next(c for c in meld if not IS_WILD[c])] if not wild else None
        special_natural = natural and rank in (5, 12)  # sevens, aces
        penalised = len(meld) < 7 and (wild or special_natural)
        if state.config.unfinished_special_scores_cards or not penalised:
            melded += sum(VALUE[c] for c in meld)
        if len(meld) == 7:
            canastas += 1
            jokers = meld.count(52)
            if wild:
                total += 3000 if not jokers else 2500 if jokers == 4 else 2000
            elif special_natural:
                total += 2500
            else:
                total += 500 if natural else 300
        elif wild:
            total -= state.config.wild_meld_four_jokers_penalty if meld.count(52) == 4 else 2000
        elif special_natural:
            total -= 2500
    total += melded if canastas else -melded
    for colour in (IS_RED3, IS_BLACK3):
        count = sum(1 for s in seats for c in state.red3[s] if colour[c])
        value = (0, 100, 300, 500, 1000)[count]
        total += -value if canastas == 0 else 0 if canastas == 1 else value
    for s in seats:
        hand = state.hands[s]
        total -= sum(VALUE[c] for c in hand)
        total -= 1500 * sum(1 for rank in (5, 12) if sum(RANK[c] == rank for c in hand) >= 3)
    if went_out is not None and state.side_of[went_out] == side:
        total += state.config.going_out_bonus
    return total


def _partners_side(state: GameState) -> int | None:
    """Cutthroat: the side whose melds were joined when the lone hand became known."""
    if state.lone_seat is None:
        return None
    return state.side_of[(state.lone_seat + 1) % state.players]


def check_sequence(config: RuleConfig, side: int, meld: Sequence[int]) -> tuple[int, int, int]:
    """A valid sequence (§3.4): 3 to 7 naturals of one suit, 4 to ace, consecutive."""
    where = f"side {side}'s sequence {rules.cards_text(meld)}"
    assert config.allow_sequences, f"a sequence in {config.preset}"
    assert 3 <= len(meld) <= 7, f"{len(meld)} cards in {where}"
    assert all(IS_NATURAL[c] for c in meld), f"a wild card or three in {where}"
    suits = {c // 13 for c in meld}
    assert len(suits) == 1, f"two suits in {where}"
    ranks = sorted(RANK[c] for c in meld)
    assert ranks == list(range(ranks[0], ranks[0] + len(meld))), f"a gap in {where}"
    return suits.pop(), ranks[0], ranks[-1]


def check_meld(
    config: RuleConfig, side: int, rank: int, meld: Sequence[int], *, joined: bool = False
) -> None:
    """A valid meld of ``rank`` (§1.9); ``joined``: two cutthroat partners' melds merged."""
    where = f"side {side}'s meld of rank {rank} {rules.cards_text(meld)}"
    assert not any(IS_RED3[c] for c in meld), f"a red three in {where}"
    assert all(RANK[c] == rank for c in meld if not IS_WILD[c]), f"mixed ranks in {where}"
    assert len(meld) >= 3, f"fewer than three cards in {where}"
    wilds = sum(1 for c in meld if IS_WILD[c])
    naturals = len(meld) - wilds
    if rank == THREE:
        assert wilds == 0, f"wild cards in {where}"
        assert all(IS_BLACK3[c] or IS_WILD[c] for c in meld)
        return
    assert naturals >= 2, f"fewer than two naturals in {where}"
    limit = {"max3": 3, "max2": 2, "fewer_than_naturals_max3": min(3, naturals - 1)}.get(
        config.wild_limit, naturals
    )
    if config.closed_books:
        assert len(meld) <= 7, f"a book of more than seven cards: {where}"
    if joined:
        return  # joined cutthroat melds may exceed the limit (docs/rules.md §3.8a)
    assert wilds <= limit, f"too many wild cards in {where}"


def check_deal(before: GameState, after: GameState) -> None:
    """A fresh deal: next hand number, full hands, first player left of the dealer."""
    config = before.config
    assert after.hand_number == before.hand_number + 1
    assert after.dealer == before.dealer
    assert after.turn == (before.dealer + 1) % config.players
    assert after.phase is Phase.DRAW
    assert after.scores == before.scores
    assert all(len(h) == config.hand_size for h in after.hands)
    assert all(len(f) == config.foot_size for f in after.feet)
    assert not any(any(m) for side in after.melds for m in side)
    assert not any(any(side) for side in after.extra)
    assert after.last_hand == before.last_hand


def check_transition(
    before: GameState, after: GameState, turn_start: GameState | None = None
) -> None:
    """What one accepted action may change: opened sides stay opened; a hand end scores.

    ``turn_start`` is the position when the acting seat's turn began, if known (to check
    whether going out was concealed)."""
    config = before.config
    n = config.players
    assert after.hand_number == before.hand_number
    for seat in range(n):
        if before.opened(before.side_of[seat]):
            assert after.opened(after.side_of[seat]), f"seat {seat}'s side is no longer opened"
    if after.phase in HAND_PHASES:
        assert after.scores == before.scores
        assert after.dealer == before.dealer
        assert after.last_hand == before.last_hand
        return
    check_hand_end(before, after)
    result = after.last_hand
    if turn_start is not None and result is not None and result.went_out is not None:
        expected = expected_concealed(turn_start, after, result.went_out)
        assert result.concealed == expected, f"concealed: scored {result.concealed}"


def expected_concealed(turn_start: GameState, end: GameState, seat: int) -> bool:
    """§1.11.4 from the positions alone: the seat put nothing down in an earlier turn, added
    nothing to a meld its side had before this turn, and (D11) made a canasta this turn."""
    earlier = {"meld", "layoff", "take"}
    if any(e.seat == seat and e.kind in earlier for e in turn_start.events):
        return False
    side = end.side_of[seat]
    old = turn_start.melds[turn_start.side_of[seat]]
    new = end.melds[side]
    if any(old[rank] and new[rank] != old[rank] for rank in range(13)):
        return False
    old_extra = turn_start.extra_of(turn_start.side_of[seat])
    new_extra = end.extra_of(side)
    if any(m not in new_extra for m in old_extra):  # an older further meld grew or was joined
        return False
    if end.config.concealed_requires_own_canasta:
        return any(len(new[rank]) >= 7 for rank in range(13) if not old[rank]) or any(
            len(m) >= 7 for m in new_extra if m not in old_extra
        )
    return True


def check_hand_end(before: GameState, after: GameState) -> None:
    """The hand just ended: one reason, columns that add up, the match decided or dealt on."""
    config = after.config
    result = after.last_hand
    assert result is not None
    assert result.hand_number == after.hand_number
    assert isinstance(result.reason, EndReason)
    ends = [e for e in after.events if e.kind == "end"]
    assert len(ends) == 1, f"{len(ends)} end events"
    assert after.events[-1].kind == "end"
    assert ends[0].text == result.reason.value
    if result.reason is EndReason.WENT_OUT:
        assert result.went_out is not None
        assert not after.hands[result.went_out], "the player who went out still holds cards"
        assert sum(1 for h in after.hands if not h) == 1
        if config.must_ask_to_go_out and config.has_partners:  # §3.8a option
            assert before.permission == "yes", "went out without asking partner"
    else:
        assert result.went_out is None
        assert not result.concealed
        assert not after.stock, f"the hand ended ({result.reason}) with cards in the stock"
        assert all(after.hands), "an empty hand, yet nobody went out"
    assert len(result.columns) == config.sides
    if config.modern_american:
        for column in result.columns:
            total = expected_american(after, column.column, result.went_out)
            assert column.hand_total == total, f"column {column.column}: {column} != {total}"
            assert column.cumulative == before.scores[column.column] + column.hand_total
    expected = (
        [] if config.modern_american else expected_columns(after, result.went_out, result.concealed)
    )
    for column, want in zip(result.columns if expected else (), expected, strict=True):
        got = (
            column.meld_points,
            column.natural_canastas,
            column.mixed_canastas,
            column.canasta_bonus,
            column.red_threes,
            column.red_three_points,
            column.going_out_bonus,
            column.hand_penalty,
        )
        assert got == want, f"column {column.column}: scored {got}, expected {want}"
        parts = (
            column.meld_points
            + column.canasta_bonus
            + column.red_three_points
            + column.going_out_bonus
            - column.hand_penalty
        )
        assert column.hand_total == parts, f"column {column.column}'s total is not its parts"
        assert column.cumulative == before.scores[column.column] + column.hand_total
    assert after.scores == tuple(c.cumulative for c in result.columns)
    assert all(s % 5 == 0 for s in after.scores)
    best = max(after.scores)
    leaders = tuple(i for i, s in enumerate(after.scores) if s == best)
    if config.hands_per_match is None:
        last = best >= before.target
    else:  # §3.7: a match of so many hands
        last = after.hand_number >= config.hands_per_match
    decided = last and (len(leaders) == 1 or config.tie_policy == "draw")
    if decided:
        assert after.phase is Phase.MATCH_OVER
        assert after.winners == leaders
        assert after.dealer == before.dealer
    else:
        assert after.phase is Phase.DEAL
        assert after.dealer == (before.dealer + 1) % config.players, "the deal did not pass"
        raised = last and config.tie_policy == "raise_target_500"
        assert after.target == before.target + (500 if raised else 0)


def expected_columns(
    state: GameState, went_out: int | None, concealed: bool
) -> list[tuple[int, ...]]:
    """Each score column's parts, recomputed from the final position (docs/rules.md §1.13)."""
    config = state.config
    out: list[tuple[int, ...]] = []
    for seats in config.partnerships:
        side = state.side_of[seats[0]]
        side_seats = [s for s in range(config.players) if state.side_of[s] == side]
        melds = [m for m in state.melds[side] if m] + list(state.extra_of(side))
        meld_points = sum(VALUE[c] for m in melds for c in m)
        groups = [m for m in melds if len({RANK[c] for c in m if not IS_WILD[c]}) == 1]
        natural = sum(1 for m in groups if len(m) >= 7 and not any(IS_WILD[c] for c in m))
        mixed = sum(1 for m in groups if len(m) >= 7 and any(IS_WILD[c] for c in m))
        runs = sum(
            1 for m in melds if len(m) >= 7 and len({RANK[c] for c in m if not IS_WILD[c]}) > 1
        )
        wild = sum(1 for m in melds if len(m) >= 7 and all(IS_WILD[c] for c in m))
        bonus = natural * config.natural_canasta_bonus + mixed * config.mixed_canasta_bonus
        bonus += runs * config.sequence_canasta_bonus + wild * config.wild_canasta_bonus
        owners = seats if config.red3_scoring == "individual" else side_seats
        threes = sum(len(state.red3[s]) for s in owners)
        special = dict(config.red3_special_totals)
        red3 = special.get(threes, config.red3_value * threes)
        canastas = natural + mixed + runs + wild
        minus = {
            "no_meld": not melds,
            "no_canasta": canastas == 0,
            "too_few_canastas": canastas < config.canastas_to_go_out,
            "never": False,
        }[config.red3_negative_if]
        red3_points = -red3 if minus else red3
        out_bonus = 0
        if went_out is not None and state.side_of[went_out] == side:
            out_bonus = config.concealed_bonus_total if concealed else config.going_out_bonus
        penalty = sum(
            config.black3_went_out_value if IS_BLACK3[c] and went_out is not None else VALUE[c]
            for s in side_seats
            for c in state.hands[s]
        )
        if state.feet:  # an unplayed foot counts like a hand (§3.8a)
            unplayed = [c for s in side_seats for c in state.feet[s]]
            penalty += sum(config.red3_unplayed_value if IS_RED3[c] else VALUE[c] for c in unplayed)
        if config.clean_sevens_bonus is not None:
            sevens = sum(
                1 for m in groups if len(m) >= 7 and all(RANK[c] == 5 and not IS_WILD[c] for c in m)
            )
            bonus += sevens * (config.clean_sevens_bonus - config.natural_canasta_bonus)
        out.append((meld_points, natural, mixed, bonus, threes, red3_points, out_bonus, penalty))
    return out


DECISION_PHASES = (Phase.DRAW, Phase.PLAY, Phase.ANSWER)


def random_positions(
    config: RuleConfig, hands: int, seed: int, phases: Sequence[Phase] = DECISION_PHASES
) -> list[tuple[GameState, int]]:
    """Every decision in ``phases`` (each position and the seat to act) of ``hands`` seeded
    hands of uniform random legal play of ``config``: consecutive hands of a match, a new
    match when one ends. The listing tests compare fast paths with the engine's check there."""
    rng = random.Random(seed)
    match = rules.new_match(config, seed=seed)
    found: list[tuple[GameState, int]] = []
    for _ in range(hands):
        if match.phase is Phase.MATCH_OVER:
            match = rules.new_match(config, seed=rng.getrandbits(32))
        state = rules.deal_hand(match, rules.shuffled_deck(config, rng.getrandbits(64)))
        while state.phase in DECISION_PHASES:
            seat = state.actor()
            assert seat is not None
            if state.phase in phases:
                found.append((state, seat))
            state = rules.apply(state, seat, rng.choice(rules.legal_actions(state, seat)))
        match = state
    return found
