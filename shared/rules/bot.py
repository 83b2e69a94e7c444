"""A heuristic Canasta bot: one cheap, explainable decision at a time (used to fill seats).

``choose_action(state, seat)`` returns one legal action for ``seat``. The bot plays the way a
sensible club player is taught to:

* **Draw or take.** Take the pile when it is worth more than a stock card: its card points plus
  a little for every card gained (material for melds), less a charge for each wild card the
  take would tie up. A one-card pile taken by laying the top card off is worth taking; one
  taken by spending a wild is not.
* **Open.** An unopened side opens as soon as the bot can reach the minimum, using natural
  melds first and adding wild cards (to pairs first) only as far as the minimum needs them.
* **Meld.** Lay naturals off on the side's melds and meld natural triples at once: every card
  on the table scores and builds toward a canasta. Wild cards are kept for closing canastas
  (a meld of five or six cards) and are spent freely only late in the hand, when holding them
  risks their 20 or 50 points.
* **Discard.** Throw the card with the lowest *keep value* (pairs and triples are worth
  keeping, singletons are not) plus *feeding risk*: the chance that the next opponent takes the
  pile with it times what the pile is worth. A rank the next opponent's side has melded feeds
  them when the pile is open to them; a rank they have just discarded is unlikely to be paired
  in their hand; a rank they picked up with the pile probably is. A black three (which blocks
  the next player) or, for a very large pile, a two (which freezes it) is the discard that pays
  when the pile is big and the next opponent could take it.
* **Go out** when the side may and going out now leaves it ahead in this hand (its table points
  plus the bonus against the opponents' table points less an estimate of their hands), or when
  the hand is nearly over anyway (the stock is short or an opponent is about to go out).
  Otherwise keep two cards so that the hand goes on. Partner's "may I go out?" gets the same
  test: yes when going out leaves the side ahead, or when waiting is risky.

**Information.** The bot uses only what the seat could know at a real table: its own hand
(``state.hands[seat]``), every side's melds and red threes, the discard pile (its top, size and
freeze; its other cards were each turned up or discarded face up, so they are the public
discard history), the stock's size, the hand sizes, the scores and the rule configuration,
the current turn's flags, and the public part of the hand's events (``Event.cards``, never
``Event.private``). It never reads another seat's hand or the stock's order; a test checks
that two positions differing only in that hidden information get the same decision. Legality
checks (``is_legal``) do run on the full state, but whether an action is legal depends only
on public information and the acting seat's own hand.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from .actions import DISCARDS, DRAW, NO, PASS, YES, Action, AskPartner, LayOff, Meld, TakePile
from .cards import ACE, FOUR, IS_BLACK3, IS_RED3, IS_WILD, JOKER, RANK, SEVEN, THREE, VALUE, Card
from .config import RuleConfig
from .engine import is_legal
from .legal import legal_actions
from .melds import CANASTA_SIZE
from .opening import best_opening
from .pile import pile_takes
from .ruleset import rules
from .state import GameState, Phase

# -- tuning knobs ----------------------------------------------------------------------------------

LATE_STOCK_DRAWS = 8
"""The hand is "late" once the stock holds fewer than this many draws."""
NEAR_OUT_CARDS = 3
"""An opponent holding this many cards or fewer may go out soon if its side has the canastas."""
GUESS_CARD_POINTS = 8
"""What an unseen card in someone's hand is guessed to count against its side."""
CARD_MATERIAL = 8
"""What one more card in hand is worth when taking the pile (beyond its points)."""
WILD_TAKE_COST = 30
"""What tying up one wild card in a pile take costs (wilds close canastas later)."""
KEEP_WILD = {20: 90, 50: 160}
"""Keep value of a two (20 points) and a joker (50 points), by card value."""
OUT_MARGIN = 0
"""Go out (or let partner) when that leaves the side at least this far ahead in the hand."""


@dataclass(slots=True)
class _Seen:
    """What the seat knows, read once per decision, and two judgements made on demand."""

    state: GameState
    config: RuleConfig
    seat: int
    hand: tuple[Card, ...]
    side: int
    melds: tuple[tuple[Card, ...], ...]
    opened: bool
    canastas: int
    next_seat: int
    next_side: int
    _late: bool | None = None
    _want_out: bool | None = None

    def late(self) -> bool:
        """Late in the hand: the stock is short, or an opponent may go out at any moment."""
        if self._late is None:
            state = self.state
            self._late = len(state.stock) < LATE_STOCK_DRAWS * self.config.draw_count or any(
                state.side_of[s] != self.side and _may_go_out_soon(state, s)
                for s in range(self.config.players)
            )
        return self._late

    def want_out(self) -> bool:
        """Going out now pays: it leaves the side ahead in this hand, or the hand is late."""
        if self._want_out is None:
            self._want_out = (
                self.late() or _out_margin(self.state, self.seat, self.seat) >= OUT_MARGIN
            )
        return self._want_out


def choose_action(state: GameState, seat: int, rng: random.Random | None = None) -> Action:
    """A legal action for ``seat`` now, chosen by the heuristics in the module docstring.

    Candidates are produced best first and the first one the engine accepts is returned, so
    the answer is always legal; when none of them is (a rare corner of the rules), the bot
    falls back to the listed legal actions. Either way the engine has checked the answer
    already, so ``engine.apply_listed`` may apply it (as playouts and benches do). ``rng``
    only breaks ties between equally good discards; without it the bot is deterministic.
    Raises ``ValueError`` when it is not ``seat``'s move.
    """
    if state.actor() != seat:
        raise ValueError(f"it is not seat {seat}'s move")
    if state.phase is Phase.ANSWER:
        return YES if _answer_yes(state, seat) else NO
    seen = _read(state, seat)
    if state.phase is Phase.DRAW:
        candidates = _draw_candidates(state, seen)
    else:
        candidates = _play_candidates(state, seen, rng)
    for action in candidates:
        if is_legal(state, seat, action):
            return action
    return _fallback(state, seat)


def _fallback(state: GameState, seat: int) -> Action:
    """The first listed legal action that is not a question to partner (asking binds us)."""
    legal = legal_actions(state, seat)
    if not legal:
        raise ValueError(f"seat {seat} has no legal action")
    for action in legal:
        if not isinstance(action, AskPartner):
            return action
    return legal[0]


# -- reading the table -----------------------------------------------------------------------------


def _read(state: GameState, seat: int) -> _Seen:
    side = state.side_of[seat]
    melds = state.melds[side]
    next_seat = (seat + 1) % state.config.players
    return _Seen(
        state=state,
        config=state.config,
        seat=seat,
        hand=state.hands[seat],
        side=side,
        melds=melds,
        opened=any(melds),
        canastas=sum(1 for m in melds if len(m) >= CANASTA_SIZE),
        next_seat=next_seat,
        next_side=state.side_of[next_seat],
    )


def _may_go_out_soon(state: GameState, seat: int) -> bool:
    """An opponent who holds few cards and whose side has (nearly) the canastas to go out."""
    if len(state.hands[seat]) > NEAR_OUT_CARDS:
        return False
    melds = state.melds[state.side_of[seat]]
    short = state.config.canastas_to_go_out - sum(1 for m in melds if len(m) >= CANASTA_SIZE)
    return short <= 0 or (short == 1 and any(5 <= len(m) < CANASTA_SIZE for m in melds))


def _table_points(state: GameState, side: int) -> int:
    """A side's points on the table: meld cards, canasta bonuses and red threes (public)."""
    config = state.config
    if config.modern_american:
        return _american_table_points(state, side)
    points = 0
    for meld in state.melds[side]:
        if meld:
            points += sum(VALUE[c] for c in meld)
            if len(meld) >= CANASTA_SIZE:
                natural = not any(IS_WILD[c] for c in meld)
                points += config.natural_canasta_bonus if natural else config.mixed_canasta_bonus
    threes = sum(len(state.red3[s]) for s in range(config.players) if state.side_of[s] == side)
    if threes:
        points += config.red3_total(threes) * (1 if any(state.melds[side]) else -1)
    return points


def _american_table_points(state: GameState, side: int) -> int:
    """Modern American's table score of a side (§3.6), from public facts only: its canastas
    (special ones included), its melds (subtracted without a canasta), its threes (plus,
    zero or minus by its canastas) and the penalties for unfinished aces, sevens and wild
    melds. The hands are left out (the caller counts them), so the scoring runs on a copy
    with empty hands and no one out."""
    public = state._clone()
    public.hands = tuple(() for _ in state.hands)
    parts = rules(state).score_side(public, side, None)
    assert parts is not None  # (called for Modern American only, which scores its own way)
    return parts["hand_total"]


def _out_margin(state: GameState, seat: int, out_seat: int) -> int:
    """How far ``seat``'s side would be ahead in this hand if ``out_seat`` went out now.

    Table points plus the going-out bonus, less what is left in the side's hands (``seat``'s
    own hand exactly, a partner's guessed from its size), against the best opposing side's
    table points less a guess for its hands. Only public facts and ``seat``'s hand are used.
    """
    side = state.side_of[seat]
    ours = _table_points(state, side) + state.config.going_out_bonus
    theirs: dict[int, int] = {}
    for other in range(state.players):
        other_side = state.side_of[other]
        if other_side == side:
            if other == seat and other != out_seat:
                ours -= sum(VALUE[c] for c in state.hands[seat])
            elif other != out_seat:
                ours -= GUESS_CARD_POINTS * len(state.hands[other])
        else:
            if other_side not in theirs:
                theirs[other_side] = _table_points(state, other_side)
            theirs[other_side] -= GUESS_CARD_POINTS * len(state.hands[other])
    return ours - max(theirs.values(), default=0)


def _minimum(state: GameState, seat: int) -> int:
    """The initial-meld minimum still to reach for ``seat``'s side (§1.10)."""
    config = state.config
    minimum = config.initial_minimum(state.scores[state.column_of(seat)])
    if config.red3_counts_toward_minimum:
        side = state.side_of[seat]
        threes = sum(len(state.red3[s]) for s in range(config.players) if state.side_of[s] == side)
        minimum -= config.red3_value * threes
    return minimum


def _naturals(hand: Sequence[Card]) -> dict[int, list[Card]]:
    """Natural cards (4..A) of a hand grouped by rank."""
    by_rank: dict[int, list[Card]] = {}
    for card in hand:
        if FOUR <= RANK[card] <= ACE:
            by_rank.setdefault(RANK[card], []).append(card)
    return by_rank


def _wilds(hand: Sequence[Card]) -> list[Card]:
    """The hand's wild cards, cheapest first (twos before jokers)."""
    return sorted((c for c in hand if IS_WILD[c]), key=VALUE.__getitem__)


def _risky(rank: int, count: int) -> bool:
    """Modern American (§3.6): a new meld of natural aces or sevens that would not be a
    canasta yet. Left unfinished it costs 2500, and sevens never take a wild card to make
    them safe; the bot melds them only seven at a time, or onto a meld already down."""
    return rank in (ACE, SEVEN) and count < CANASTA_SIZE


def _has_wild(meld: Sequence[Card]) -> bool:
    return any(IS_WILD[c] for c in meld)


def _without(hand: Sequence[Card], cards: Sequence[Card]) -> list[Card]:
    rest = list(hand)
    for card in cards:
        rest.remove(card)
    return rest


# -- answering partner -----------------------------------------------------------------------------


def _answer_yes(state: GameState, seat: int) -> bool:
    """Yes when partner going out leaves the side ahead in this hand, or waiting is risky.

    Waiting is risky late in the hand: an opponent near going out would catch our cards in
    hand, and a short stock leaves little time to catch up anyway.
    """
    return _read(state, seat).late() or _out_margin(state, seat, state.turn) >= OUT_MARGIN


# -- drawing ---------------------------------------------------------------------------------------


def _draw_candidates(state: GameState, seen: _Seen) -> Iterator[Action]:
    """Worthwhile pile takes (best first), then the stock (or pass), then any take at all."""
    scored = sorted(
        ((-_take_score(state, t), i, t) for i, t in enumerate(_take_candidates(state, seen)))
    )
    yield from (t for cost, _, t in scored if cost < 0)
    yield DRAW if state.stock else PASS
    yield from (t for cost, _, t in scored if cost >= 0)
    if not state.stock:  # a compulsory take the candidates above missed
        yield from pile_takes(state, seen.seat)


def _take_candidates(state: GameState, seen: _Seen) -> list[TakePile]:
    """Ways to take the pile: naturals of the top rank, a natural and the cheapest wild, or a
    lay-off on the side's meld; an unopened side adds the smallest opening it can afford."""
    if not state.pile:
        return []
    top = state.pile[-1]
    if IS_WILD[top] or IS_BLACK3[top]:
        return []
    rank = RANK[top]
    naturals = _naturals(seen.hand).get(rank, [])
    wilds = _wilds(seen.hand)
    if seen.config.modern_american:
        return _american_takes(state, seen, rank, naturals)
    supports: list[tuple[Card, ...]] = []
    if len(naturals) >= 2:
        supports.append(tuple(naturals))
        if not seen.opened and wilds:
            supports.append((*naturals, wilds[-1]))
    if (
        seen.opened
        and seen.melds[rank]
        and (not state.pile_frozen or seen.config.frozen_allows_layoff)
    ):
        supports.append(())
    if seen.opened and not state.pile_frozen and len(naturals) == 1 and wilds:
        supports.append((naturals[0], wilds[0]))
    if seen.opened:
        return [TakePile(s) for s in supports]
    takes = []
    minimum = _minimum(state, seen.seat)
    for support in supports:
        need = minimum - VALUE[top] - sum(VALUE[c] for c in support)
        opening = _plan_opening(seen.config, _without(seen.hand, support), need, rank)
        if opening is not None:
            takes.append(TakePile(support, opening))
    return takes


def _american_takes(
    state: GameState, seen: _Seen, rank: int, naturals: list[Card]
) -> list[TakePile]:
    """Modern American's takes (§3.6): a natural pair, always (the pile is frozen), and
    never one that starts an unfinished meld of aces or sevens. An unopened side adds its
    natural triples and what else reaches the minimum, which counts only the cards from
    its hand."""
    meld = seen.melds[rank]
    if len(naturals) < 2 or len(meld) >= 5:
        return []
    pair = tuple(naturals[: CANASTA_SIZE - len(meld) - 1])
    if not meld and _risky(rank, len(pair) + 1):
        return []
    if seen.opened:
        return [TakePile(pair)]
    need = _minimum(state, seen.seat) - sum(VALUE[c] for c in pair)
    opening = _plan_opening(seen.config, _without(seen.hand, pair), need, rank)
    return [TakePile(pair, opening)] if opening else []


def _take_score(state: GameState, take: TakePile) -> int:
    """What taking the pile this way is worth compared with drawing a stock card.

    The pile's points (a red three in it comes to the side: 100), plus ``CARD_MATERIAL`` for
    each card that joins the hand, less ``WILD_TAKE_COST`` per wild card the take melds.
    """
    score = 0
    for card in state.pile:
        score += 100 if IS_RED3[card] else VALUE[card] + CARD_MATERIAL
    score -= CARD_MATERIAL  # the top card goes to a meld, not the hand
    used = [*take.cards, *(c for group in take.melds for c in group)]
    score -= WILD_TAKE_COST * sum(1 for c in used if IS_WILD[c])
    return score


# -- melding ---------------------------------------------------------------------------------------


def _plan_opening(
    config: RuleConfig, cards: Sequence[Card], need: int, exclude_rank: int = -1
) -> tuple[tuple[Card, ...], ...] | None:
    """The cheapest set of new melds worth at least ``need`` points, or ``None``.

    Every natural triple is melded (no wilds); then, while short, a wild card turns the most
    valuable pair into a meld (or joins a meld with room). The smallest wild that closes the gap
    is used, else the biggest, so as few wilds as possible are spent. ``need <= 0`` asks for
    nothing.
    """
    american = config.modern_american
    if need <= 0 and not american:
        return ()
    by_rank = _naturals(cards)
    by_rank.pop(exclude_rank, None)
    if american:  # §3.6: no unfinished natural aces or sevens (2500 each), seven cards a meld
        by_rank = {r: v[:CANASTA_SIZE] for r, v in by_rank.items() if not _risky(r, len(v))}
    groups = {r: list(v) for r, v in by_rank.items() if len(v) >= 3}
    if american and not groups:
        return None  # §3.6: the opening needs a natural triple
    pairs = sorted(
        (r for r, v in by_rank.items() if len(v) == 2), key=lambda r: -2 * VALUE[by_rank[r][0]]
    )
    wilds = _wilds(cards)
    value = sum(VALUE[c] for g in groups.values() for c in g)
    while value < need and wilds:
        gap = need - value
        gain = 2 * VALUE[by_rank[pairs[0]][0]] if pairs else 0
        wild = next((w for w in wilds if VALUE[w] + gain >= gap), wilds[-1])
        if pairs:
            rank = pairs.pop(0)
            groups[rank] = [*by_rank[rank], wild]
        else:
            room = [
                r
                for r, g in groups.items()
                if sum(1 for c in g if IS_WILD[c]) < config.max_wilds(len(by_rank[r]))
                and not american  # keeps the natural triples natural (§3.6)
            ]
            if not room:
                break
            groups[room[0]].append(wild)
        wilds.remove(wild)
        value += VALUE[wild] + gain
    if value < need:
        return None
    return tuple(tuple(groups[r]) for r in sorted(groups))


def _play_candidates(state: GameState, seen: _Seen, rng: random.Random | None) -> Iterator[Action]:
    """Melds and lay-offs worth making now (best first), then discards (best first)."""
    if seen.config.must_ask_to_go_out and not state.asked and seen.want_out():
        yield AskPartner()  # §3.8a option: no going out unasked (tried only when legal)
    if not seen.opened:
        opening = _plan_opening(seen.config, seen.hand, _minimum(state, seen.seat))
        if opening:
            yield Meld(opening)
        fallback = () if seen.config.modern_american else best_opening(seen.config, seen.hand)
        if fallback and fallback != opening:
            yield Meld(fallback)
    elif seen.config.modern_american:
        yield from _american_meld_candidates(seen)
    else:
        yield from _meld_candidates(seen)
    yield from (DISCARDS[c] for c in _discard_order(state, seen, rng))
    if state.no_discard:
        yield PASS


def _meld_candidates(seen: _Seen) -> Iterator[Action]:
    """Lay-offs and new melds for an opened side, in order of preference.

    A play that would leave fewer than two cards is offered only when the bot wants to go out
    (with one card left, the next discard ends the hand).
    """
    hand = seen.hand
    size = len(hand)

    def keeps(n: int) -> bool:
        return size - n >= 2 or seen.want_out()

    by_rank = _naturals(hand)
    wilds = _wilds(hand)
    config = seen.config
    # Naturals onto the side's melds, then new natural melds: points down, canastas closer.
    for rank, cards in by_rank.items():
        if seen.melds[rank] and keeps(len(cards)):
            yield LayOff(rank, tuple(cards))
    for rank, cards in by_rank.items():
        if not seen.melds[rank] and len(cards) >= 3 and keeps(len(cards)):
            yield Meld((tuple(cards),))
    if wilds:
        # Close a canasta with wild cards: needed to go out, or the meld is mixed already, or
        # late in the hand (a natural canasta is worth 200 more, so do not spoil one early).
        for rank in sorted(range(FOUR, ACE + 1), key=lambda r: -len(seen.melds[r])):
            meld = seen.melds[rank]
            missing = CANASTA_SIZE - len(meld)
            if not meld or missing <= 0 or missing > len(wilds) or not keeps(missing):
                continue
            in_meld = sum(1 for c in meld if IS_WILD[c])
            room = config.max_wilds(len(meld) - in_meld) - in_meld
            if missing <= room and (
                in_meld or seen.canastas < config.canastas_to_go_out or seen.late()
            ):
                yield LayOff(rank, tuple(wilds[:missing]))
        if seen.late() or size <= 3:
            # Late or nearly out: a wild in hand is 20 or 50 points against us, so put it on
            # a meld, a mixed one first, never spoiling a natural canasta (worth 200 more).
            targets = [r for r in range(FOUR, ACE + 1) if seen.melds[r] and keeps(1)]
            for rank in sorted(targets, key=lambda r: not _has_wild(seen.melds[r])):
                if _has_wild(seen.melds[rank]) or len(seen.melds[rank]) < CANASTA_SIZE:
                    yield LayOff(rank, (wilds[-1],))
            for rank, cards in by_rank.items():
                if not seen.melds[rank] and len(cards) == 2 and keeps(3):
                    yield Meld(((*cards, wilds[-1]),))
    threes = [c for c in hand if IS_BLACK3[c]]
    if len(threes) >= 3 and size - len(threes) <= 1 and seen.want_out():
        yield Meld((tuple(threes),))  # black threes meld only in the going-out turn


def _american_meld_candidates(seen: _Seen) -> Iterator[Action]:
    """``_meld_candidates`` under Modern American's rules and scoring (§3.6).

    Melds hold seven cards at most and close at seven, so lay-offs stop at the room left. A
    new meld of natural aces or sevens is made only seven at a time (``_risky``): left
    unfinished, either costs 2500. Wild cards close canastas (two are needed to go out, and
    a side without one scores its melds and threes against it), never onto sevens, onto
    aces only when the side's opening held one; late in the hand a wild card goes first onto
    an unfinished natural aces meld, which then costs nothing. No wild meld is started: an
    unfinished one costs 2000.
    """
    state = seen.state
    hand = seen.hand
    size = len(hand)

    def keeps(n: int) -> bool:
        return size - n >= 2 or seen.want_out()

    by_rank = _naturals(hand)
    wilds = _wilds(hand)
    melds = seen.melds
    for rank, cards in by_rank.items():
        room = CANASTA_SIZE - len(melds[rank])
        if melds[rank] and room > 0 and keeps(min(len(cards), room)):
            yield LayOff(rank, tuple(cards[:room]))
    for rank, cards in by_rank.items():
        fresh = not melds[rank] and len(cards) >= 3 and not _risky(rank, len(cards))
        if fresh and keeps(min(len(cards), CANASTA_SIZE)):
            yield Meld((tuple(cards[:CANASTA_SIZE]),))
    if not wilds:
        return
    aces_wild = rules(state).wilds_may_join(state, seen.side, ACE)
    late = seen.late() or size <= 3
    ace_meld = melds[ACE]
    natural_aces = ace_meld and not _has_wild(ace_meld) and len(ace_meld) < CANASTA_SIZE
    if late and aces_wild and natural_aces and keeps(1):
        yield LayOff(ACE, (wilds[0],))  # an unfinished natural aces meld costs 2500

    def takes(rank: int) -> int:
        """How many more wild cards the meld of ``rank`` may take."""
        meld = melds[rank]
        if not meld or rank == SEVEN or len(meld) >= CANASTA_SIZE:
            return 0
        if rank == ACE and not aces_wild:
            return 0
        return min(2 - sum(1 for c in meld if IS_WILD[c]), CANASTA_SIZE - len(meld))

    short = seen.canastas < seen.config.canastas_to_go_out
    for rank in sorted(range(FOUR, ACE + 1), key=lambda r: -len(melds[r])):
        missing = CANASTA_SIZE - len(melds[rank])
        if not takes(rank) or missing > min(takes(rank), len(wilds)) or not keeps(missing):
            continue
        special = rank == ACE and not _has_wild(melds[rank])  # natural aces: 2500 if closed
        if (_has_wild(melds[rank]) or short or late) and not (special and not late):
            yield LayOff(rank, tuple(wilds[:missing]))
    if late:
        targets = [r for r in range(FOUR, ACE + 1) if takes(r) and keeps(1)]
        for rank in sorted(targets, key=lambda r: not _has_wild(melds[r])):
            yield LayOff(rank, (wilds[-1],))
        for rank, cards in by_rank.items():
            if not melds[rank] and len(cards) == 2 and rank not in (SEVEN, ACE) and keeps(3):
                yield Meld(((*cards, wilds[-1]),))


# -- discarding ------------------------------------------------------------------------------------


def _discard_order(state: GameState, seen: _Seen, rng: random.Random | None) -> list[Card]:
    """The distinct cards of the hand, best discard first (lowest keep value plus risk)."""
    hand = seen.hand
    counts: dict[int, int] = {}
    for card in hand:
        counts[RANK[card]] = counts.get(RANK[card], 0) + 1
    safe, picked = _next_opponent_ranks(state, seen)
    pile_worth = sum(VALUE[c] + 10 for c in state.pile)
    next_side = seen.next_side
    partner_next = next_side == seen.side
    next_opened = any(state.melds[next_side])
    open_to_next = next_opened and not state.pile_frozen
    american = seen.config.modern_american
    scored: list[tuple[float, float, Card]] = []
    for card in dict.fromkeys(hand):
        rank = RANK[card]
        if IS_WILD[card]:
            keep = float(KEEP_WILD[VALUE[card]])
            if card != JOKER and open_to_next and not partner_next:
                keep -= 0.3 * pile_worth  # freezing a big pile shuts the next opponent out
        elif IS_BLACK3[card]:
            keep = 5.0
            if open_to_next and not partner_next:
                keep -= 0.3 * pile_worth  # the next player cannot take a black three
        else:
            n = counts[rank]
            keep = 10.0 + (100 if n >= 3 else 40 if n == 2 else 0)
            keep += 60 if seen.melds[rank] else 0
            if american and rank in (SEVEN, ACE) and not seen.melds[rank]:
                keep -= 300 if n >= 3 else 60 if n == 2 else 0  # three held cost 1500 (§3.6)
            keep += VALUE[card] * (0.8 if not seen.opened else 0.3)
            chance = _take_chance(state, next_side, rank, open_to_next, safe, picked)
            worth = pile_worth + VALUE[card] + 10
            keep += chance * worth * (-0.3 if partner_next else 1.0)
        tie = rng.random() if rng is not None else 0.0
        scored.append((keep, tie, card))
    scored.sort()
    return [card for _, _, card in scored]


def _take_chance(
    state: GameState,
    next_side: int,
    rank: int,
    open_to_next: bool,
    safe: set[int],
    picked: set[int],
) -> float:
    """A rough chance that the next seat takes the pile if a card of ``rank`` tops it.

    With the pile open to them, a meld of the rank makes it almost certain (a lay-off);
    otherwise they need a pair, or one natural and a wild. A frozen pile needs a natural
    pair. Having just discarded the rank makes a pair unlikely; having picked it up with the
    pile makes one likely.
    """
    if open_to_next and state.melds[next_side][rank]:
        return 0.95
    chance = 0.3 if open_to_next else 0.1
    if rank in safe:
        chance *= 0.3
    elif rank in picked:
        chance = min(0.95, chance * 2.5)
    return chance


def _next_opponent_ranks(state: GameState, seen: _Seen) -> tuple[set[int], set[int]]:
    """Ranks the next seat discarded since it last took the pile (safe to give it), and ranks
    its side picked up with the pile and has not discarded since (it may hold pairs)."""
    safe: set[int] = set()
    picked: set[int] = set()
    for event in state.events:
        if event.kind == "discard" and event.seat == seen.next_seat:
            rank = RANK[event.cards[0]]
            safe.add(rank)
            picked.discard(rank)
        elif event.kind == "take" and state.side_of[event.seat] == seen.next_side:
            ranks = {RANK[c] for c in event.cards if FOUR <= RANK[c] <= ACE}
            picked |= ranks
            if event.seat == seen.next_seat:
                safe.clear()
            safe -= ranks
    picked.discard(THREE)
    return safe, picked
