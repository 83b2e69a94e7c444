"""The ``strong`` bot: perfect-information Monte Carlo over whole turn plans.

At each decision the bot lists a few *turn plans* for the seat, the heuristic's own first:

* at the start of a turn, the ways to start it: the heuristic's choice, drawing (or passing
  at the end of the stock) and a few ways of taking the pile;
* after the start, the rest of the turn: the melds and lay-offs the heuristic would make
  (or none of them) followed by each sensible discard, or by asking partner;
* asked by partner whether it may go out: yes or no.

It then samples *worlds*: full positions in which the cards the seat cannot see (other hands,
the stock, feet and talons) are dealt at random, consistently with what the seat knows
(``shared.bots.knowledge``). In each world every plan still in the running is played, then
the hand is played out to its end by the heuristic bot in every seat, and the plan scores
its side's hand total less the best opposing one. All plans meet the same worlds (paired
comparison). Plans are pruned by successive halving, and the heuristic's plan always stays:
another plan replaces it only when its mean paired gain exceeds ``MARGIN`` standard errors,
so a short budget falls back to the heuristic rather than to noise.

The budget is a number of playouts (``Budget.playouts``: deterministic for a given seed)
and a CPU-time cap for the thinking thread (``Budget.seconds``), whichever comes first. The
chosen plan is remembered, so the rest of the turn costs nothing: each later call returns
its next step (the plan is searched again if the position is not the one expected).

Only ``Knowledge.of(state, seat)`` reads the position given, and it reads nothing hidden:
the decision is the same when the hidden cards are reshuffled (tests/shared/bots).
"""

from __future__ import annotations

import math
import random
import time
import zlib
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

from shared.rules import (
    Action,
    AskPartner,
    CanastaError,
    Discard,
    Draw,
    GameState,
    Pass,
    Phase,
    TakePile,
    apply,
    apply_listed,
    is_legal,
    legal_actions,
)
from shared.rules.actions import DISCARDS, DRAW, NO, PASS, YES
from shared.rules.bot import choose_action
from shared.rules.cards import IS_WILD, RANK, VALUE

from .knowledge import Knowledge

Plan = tuple[Action, ...]

MAX_TAKES = 3
"""Ways of taking the pile tried besides the heuristic's choice and drawing."""
MAX_DISCARDS = 5
"""Discards tried after the heuristic's melds, besides the heuristic's own."""
MAX_HOLD_DISCARDS = 2
"""Discards tried without the heuristic's melds (holding them back)."""
MARGIN = 1.0
"""Standard errors by which a plan must beat the heuristic's plan to replace it."""
MIN_PAIRED = 4
"""Worlds a plan must have met before it may replace the heuristic's."""
ROLLOUT_CAP = 600
"""Decisions after which a playout stops and the position is judged as it stands."""
PLAN_CACHE = 512


@dataclass(frozen=True, slots=True)
class Budget:
    """How much one decision may think: playouts, and CPU seconds of the thinking thread."""

    playouts: int = 100_000
    seconds: float | None = 1.0


@dataclass(slots=True)
class SearchStats:
    """What the last search did (for the bench and the tests)."""

    plans: int = 0
    playouts: int = 0
    worlds: int = 0
    seconds: float = 0.0
    searched: bool = False


@dataclass(slots=True)
class StrongBot:
    """A chooser (``(state, seat) -> Action``) that searches; one per server or bench seat
    is enough (it keeps only the plans it is in the middle of)."""

    budget: Budget = field(default_factory=Budget)
    seed: int = 0
    last: SearchStats = field(default_factory=SearchStats)
    _plans: OrderedDict[int, Plan] = field(default_factory=OrderedDict)

    def __call__(self, state: GameState, seat: int) -> Action:
        return self.choose(state, seat)

    def choose(self, state: GameState, seat: int) -> Action:
        """The next action of the plan for this turn (searched if none is under way)."""
        return self.plan(state, seat)[0]

    def plan(self, state: GameState, seat: int) -> Plan:
        """The actions the bot means to play from here, to the end of this part of its turn
        (the start of a turn is a plan of its own: what follows depends on the card drawn)."""
        if state.actor() != seat:
            raise ValueError(f"it is not seat {seat}'s move")
        knowledge = Knowledge.of(state, seat)
        public = knowledge.public
        key = _key(public, seat)
        plan = self._plans.pop(key, None)
        if plan is None or not is_legal(public, seat, plan[0]):
            plan = self.search(knowledge)
        else:
            self.last = SearchStats()
        self._remember(public, seat, plan)
        return plan

    def _remember(self, public: GameState, seat: int, plan: Plan) -> None:
        """Keep the rest of ``plan`` for the position after its first step."""
        action = plan[0]
        if len(plan) > 1:
            try:
                after = apply(public, seat, action)
            except CanastaError:
                return
            if after.actor() == seat:
                self._plans[_key(after, seat)] = plan[1:]
                while len(self._plans) > PLAN_CACHE:
                    self._plans.popitem(last=False)

    def search(self, knowledge: Knowledge) -> Plan:
        """The best plan found for the seat within the budget."""
        started = time.thread_time()
        seat = knowledge.seat
        public = knowledge.public
        plans = candidate_plans(public, seat)
        stats = SearchStats(plans=len(plans))
        self.last = stats
        if len(plans) == 1:
            return plans[0]
        stats.searched = True
        rng = random.Random(self.seed * 1_000_003 + _key(public, seat))
        alive = list(range(len(plans)))
        totals = [0.0] * len(plans)
        gains: list[list[float]] = [[] for _ in plans]  # paired against plan 0
        budget = self.budget
        next_prune = 2
        while True:
            world = knowledge.world(rng)
            stats.worlds += 1
            base = _playout(world, seat, plans[0])
            stats.playouts += 1
            totals[0] += base
            for index in alive[1:]:
                value = _playout(world, seat, plans[index])
                stats.playouts += 1
                totals[index] += value
                gains[index].append(value - base)
            elapsed = time.thread_time() - started
            if stats.playouts >= budget.playouts or (
                budget.seconds is not None and elapsed >= budget.seconds
            ):
                break
            if len(alive) == 1:
                break
            if stats.worlds >= next_prune and len(alive) > 2:
                challengers = sorted(alive[1:], key=lambda i: -totals[i])
                alive = [0, *challengers[: max(1, len(challengers) // 2)]]
                next_prune *= 2
            elif len(alive) == 2 and stats.worlds >= next_prune:
                # One challenger left: stop once the verdict can no longer change much.
                mean, error = _mean_error(gains[alive[1]])
                if stats.worlds >= 8 and abs(mean) > 3 * MARGIN * error:
                    break
                next_prune *= 2
        stats.seconds = time.thread_time() - started
        best = 0
        best_score = 0.0
        for index in alive[1:]:
            mean, error = _mean_error(gains[index])
            if len(gains[index]) >= MIN_PAIRED and mean > MARGIN * error and mean > best_score:
                best, best_score = index, mean
        return plans[best]


def _mean_error(values: Sequence[float]) -> tuple[float, float]:
    n = len(values)
    if n == 0:
        return 0.0, math.inf
    mean = sum(values) / n
    if n == 1:
        return mean, math.inf
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, math.sqrt(var / n)


def _key(state: GameState, seat: int) -> int:
    """A fingerprint of the position as ``seat`` sees it (own hand, table, history)."""
    text = repr(
        (
            seat,
            state.hand_number,
            state.phase.value,
            state.turn,
            state.scores,
            state.hands[seat],
            state.pile,
            state.melds,
            state.extra,
            state.events,
        )
    )
    return zlib.crc32(text.encode())


# -- plans --------------------------------------------------------------------------------------


def candidate_plans(state: GameState, seat: int) -> list[Plan]:
    """The turn plans worth comparing now, the heuristic's first (at least one)."""
    heuristic = choose_action(state, seat)
    if state.phase is Phase.ANSWER:
        return [(heuristic,), (NO if heuristic == YES else YES,)]
    if state.phase is Phase.DRAW:
        return _start_plans(state, seat, heuristic)
    return _play_plans(state, seat, heuristic)


def _start_plans(state: GameState, seat: int, heuristic: Action) -> list[Plan]:
    plans: list[Plan] = [(heuristic,)]
    seen = {heuristic}
    legal = legal_actions(state, seat)
    basic = DRAW if any(isinstance(a, Draw) for a in legal) else PASS
    if basic not in seen and basic in legal:
        plans.append((basic,))
        seen.add(basic)
    takes = [a for a in legal if isinstance(a, TakePile) and a not in seen]
    # The cheapest takes first: fewest wild cards, then fewest cards from hand.
    takes.sort(key=lambda t: (_wilds_used(t), len(t.cards) + sum(len(m) for m in t.melds)))
    for take in takes[:MAX_TAKES]:
        plans.append((take,))
    return plans


def _wilds_used(take: TakePile) -> int:
    return sum(1 for c in (*take.cards, *(c for m in take.melds for c in m)) if IS_WILD[c])


def _play_plans(state: GameState, seat: int, heuristic: Action) -> list[Plan]:
    """The heuristic's melds then each sensible discard; the discards without the melds."""
    steps: list[Action] = []
    s = state
    action = heuristic
    while True:
        steps.append(action)
        if isinstance(action, (Discard, Pass, AskPartner)) or len(steps) > 40:
            break
        try:
            s = apply(s, seat, action)
        except CanastaError:
            break
        if s.actor() != seat or s.phase is not Phase.PLAY:
            break
        action = choose_action(s, seat)
    plans: list[Plan] = [tuple(steps)]
    final = steps[-1]
    if not isinstance(final, (Discard, AskPartner)):
        return plans
    melds = tuple(steps[:-1])
    after = s if not melds or s.phase is Phase.PLAY else state
    if isinstance(final, AskPartner):
        for card in _discard_order(after, seat)[:MAX_DISCARDS]:
            if is_legal(after, seat, DISCARDS[card]):
                plans.append((*melds, DISCARDS[card]))
        return plans
    for card in _discard_order(after, seat):
        if len(plans) > MAX_DISCARDS:
            break
        plan = (*melds, DISCARDS[card])
        if plan not in plans and is_legal(after, seat, DISCARDS[card]):
            plans.append(plan)
    if melds and state.opened(state.side_of[seat]):
        held = [final.card, *_discard_order(state, seat)]
        tried = 0
        for card in dict.fromkeys(held):
            if tried >= MAX_HOLD_DISCARDS:
                break
            if is_legal(state, seat, DISCARDS[card]):
                plans.append((DISCARDS[card],))
                tried += 1
    return plans


def _discard_order(state: GameState, seat: int) -> list[int]:
    """The hand's distinct cards, likeliest good discards first: cards of ranks held
    alone, then low values; wild cards last."""
    hand = state.hands[seat]
    counts: dict[int, int] = {}
    for card in hand:
        counts[RANK[card]] = counts.get(RANK[card], 0) + 1
    distinct = list(dict.fromkeys(hand))
    distinct.sort(key=lambda c: (IS_WILD[c], counts[RANK[c]], VALUE[c], c))
    return distinct


# -- playouts -----------------------------------------------------------------------------------


def _playout(world: GameState, seat: int, plan: Plan) -> float:
    """Play ``plan`` for ``seat`` in ``world``, then the heuristic everywhere to the hand's
    end; ``seat``'s column's hand total less the best other column's."""
    s = world
    try:
        for action in plan:
            s = apply(s, seat, action)
    except CanastaError:
        return -10_000.0  # (cannot happen: a plan is legal in every world)
    steps = 0
    while steps < ROLLOUT_CAP:
        actor = s.actor()
        if actor is None:
            break
        # (the heuristic's choice is a move the engine checked: no need to check it again)
        s = apply_listed(s, actor, choose_action(s, actor))
        steps += 1
    return _value(s, seat)


def _value(s: GameState, seat: int) -> float:
    result = s.last_hand
    if s.phase in (Phase.DEAL, Phase.MATCH_OVER) and result is not None:
        ours = 0
        theirs: list[int] = []
        for column in result.columns:
            if seat in column.seats:
                ours = column.hand_total
            else:
                theirs.append(column.hand_total)
        return float(ours - max(theirs, default=0))
    # A playout cut short: table cards for each side, hand cards against it.
    totals: dict[int, float] = {}
    for other in range(s.players):
        side = s.side_of[other]
        totals.setdefault(side, 0.0)
        totals[side] -= sum(VALUE[c] for c in s.hands[other])
    for side, melds in enumerate(s.melds):
        if side in totals:
            totals[side] += sum(VALUE[c] for m in melds for c in m)
            totals[side] += 300 * sum(1 for m in melds if len(m) >= 7)
    mine = s.side_of[seat]
    return totals[mine] - max((v for k, v in totals.items() if k != mine), default=0.0)
