"""The club ladder (issue 33): Glicko-2 ratings of a server's players from their finished,
rated matches, and the statistics a correspondence player asks for.

A background round (``rounds``) takes in each finished match once (``take_in``), reading only
that match: its log, replayed once for its hands' results, and its seats. Each rating period
(``ladder_period_days``, a week by default) is one Glicko-2 period: a match's results are added
to its players' tallies as it finishes, and a player's rating at any time is the period's
update from the results so far (``shared.glicko2``), exact once the period ends. The first
match of a player in a new period closes their last one.

Sides play as sides: in a partnership match each partner is rated, on the expected score of
their side (the partners' mean rating) against the other side's; every side meets every other
side (a three-sided match is three games), scoring 1, 0.5 or 0 by their final scores. Bots
stand at fixed ratings by level (``BOT_RATINGS``), so a new club has anchors; their ratings
never move. An abandoned match, and one created unrated, counts for nothing.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping, Sequence

from server.domain import DAY_MS, Entry, Hand, Match, MatchStatus, SeatKind, Standing
from server.service import matches
from server.service.context import ServiceContext
from server.service.errors import InvalidRequestError
from server.service.periodic import Periodic
from shared.bots import DEFAULT_LEVEL
from shared.glicko2 import Rating, composite
from shared.rules import GameState, HandResult, new_match

log = logging.getLogger(__name__)

BOT_RATINGS = {"easy": Rating(1180, 50), "normal": Rating(1500, 50), "strong": Rating(1620, 50)}
"""Where each bot level stands: fixed, so that players' ratings are measured from them.
``normal`` at the start rating; the others where their duplicate matches against it put them
on the same logistic scale (bench/README.md, ``bench_bots``): ``strong`` won 67% of 200
matches against ``normal`` (+123), ``normal`` 86.5% against ``easy`` (+323)."""
ROUND_SECONDS = 5.0
"""How often the ladder looks for finished matches (one small query when there is none)."""
ROUND_MATCHES = 20
"""Matches one round takes in at most (the next round takes the rest)."""
MAX_LISTED = 500
"""The most players one ratings list holds."""


def period_of(now_ms: int, period_days: int) -> int:
    """The rating period ``now_ms`` falls in: periods are ``period_days`` long from the epoch."""
    return now_ms // (period_days * DAY_MS)


@dataclasses.dataclass(frozen=True, slots=True)
class _Column:
    """One score column of a finished match: its seats and its final score."""

    seats: tuple[int, ...]
    score: int
    won: bool


def _score(column: _Column, against: _Column) -> float:
    """A column's result against another: 1, 0.5 or 0."""
    if column.won != against.won:
        return 1.0 if column.won else 0.0
    if column.score == against.score:
        return 0.5
    return 1.0 if column.score > against.score else 0.0


class Ladder:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx
        self.rounds = Periodic("canasta-ladder", lambda: ROUND_SECONDS, self.take_in_finished)

    def period(self) -> int:
        return period_of(self.ctx.clock(), self.ctx.config.ladder_period_days)

    # -- reading ----------------------------------------------------------------------------

    def standings(self, limit: int) -> tuple[int, list[Standing]]:
        """The current period and the ``limit`` rated players with the most rated matches,
        best rating first, with the bots' levels as anchors."""
        if not 1 <= limit <= MAX_LISTED:
            raise InvalidRequestError(f"list 1 to {MAX_LISTED} players")
        with self.ctx.db.read() as session:
            found = self.ctx.repo(session).standings(limit)
        period = self.period()
        anchors = [
            Standing(0, f"bot ({level})", base, bot_level=level)
            for level, base in BOT_RATINGS.items()
        ]
        ordered = sorted(
            [*found, *anchors], key=lambda s: (-s.rating_at(period).rating, s.player_id)
        )
        return period, ordered

    # -- taking matches in ------------------------------------------------------------------

    def take_in_finished(self) -> int:
        """Take in the finished matches not taken in yet (a bounded batch); how many."""
        with self.ctx.db.read() as session:
            waiting = self.ctx.repo(session).matches_to_rate(ROUND_MATCHES)
        done = 0
        for match_id in waiting:
            try:
                done += self.take_in(match_id)
            except Exception:  # logged; the match is tried again next round
                log.exception("match %s: the ladder could not take it in", match_id)
        return done

    def take_in(self, match_id: str) -> int:
        """Rate one finished match's players and add it to their statistics, once (1 if
        this call did it); reads only this match and its players' standings."""
        ctx = self.ctx
        now = ctx.clock()
        period = self.period()
        with ctx.db.write() as session:
            repo = ctx.repo(session)
            match = matches.require_match(repo, match_id, for_update=True)
            if match.status is not MatchStatus.FINISHED or not repo.set_rated(match.id, now):
                return 0
            if match.aborted or not match.rated or not match.version:
                return 1  # counts for nothing, and is not looked at again
            entries = repo.entries(match.id, 0, match.version)
            hands = {h.hand_number: h for h in repo.hands(match.id)}
            final, results = _replayed(match, entries, hands)
            people = {s.player_id: s.seat for s in match.seats if s.player_id is not None}
            known = repo.standings_of(people, for_update=True)
            standings = {
                player_id: _opened(known.get(player_id) or Standing(player_id, ""), period)
                for player_id in people
            }
            rated_now = _rated(match, final, standings)
            bot_key = ctx.keys.bot_public
            for player_id, seat in people.items():
                counted = _counted(match, seat, final, results, entries, bot_key)
                repo.save_standing(_merged(rated_now[player_id], counted))
        return 1


def _opened(standing: Standing, period: int) -> Standing:
    """The standing with ``period`` open: a past period's results become its rating (and
    periods since without a game widen its RD); this period's tally starts empty."""
    if standing.period == period:
        return standing
    base = standing.rating_at(period) if standing.period else standing.base
    return dataclasses.replace(standing, base=base, period=period, tally=type(standing.tally)())


def _rated(
    match: Match, final: GameState, standings: Mapping[int, Standing]
) -> dict[int, Standing]:
    """Each player's standing with the match's games added to this period's tally: every
    score column against every other, a winner beating a loser (a resignation too), and
    two winners or two losers by their final scores."""
    config = match.config
    columns = [
        _Column(
            tuple(s for s in range(config.players) if config.initial_side(s) == column),
            final.scores[column],
            column in final.winners,
        )
        for column in range(len(final.scores))
    ]

    def rating(seat: int) -> Rating:
        info = match.seats[seat]
        if info.kind is SeatKind.BOT or info.player_id is None:
            return BOT_RATINGS[info.bot_level or DEFAULT_LEVEL]
        return standings[info.player_id].base

    sides = [composite([rating(s) for s in column.seats]) for column in columns]
    out = dict(standings)
    for index, column in enumerate(columns):
        for seat in column.seats:
            player_id = match.seats[seat].player_id
            if player_id is None or match.seats[seat].kind is SeatKind.BOT:
                continue
            tally = out[player_id].tally
            for other, against in enumerate(columns):
                if other == index:
                    continue
                score = _score(column, against)
                tally = tally.plus(sides[index], sides[other], score)
            out[player_id] = dataclasses.replace(out[player_id], tally=tally)
    return out


@dataclasses.dataclass(frozen=True, slots=True)
class _Counted:
    """One match's statistics for one seat."""

    won: bool
    hands: int
    hand_points: int
    canastas: int
    went_out: int
    moves: int
    move_ms: int
    timeouts: int


def _counted(
    match: Match,
    seat: int,
    final: GameState,
    results: Sequence[HandResult],
    entries: Sequence[Entry],
    bot_key: bytes,
) -> _Counted:
    """The seat's hands, points, canastas and ways out from the hands' results; its moves
    (its player's own: not a bot's for them, nor a standing order's) and the time each took
    since the entry before it."""
    hands = points = canastas = went_out = 0
    for result in results:
        for column in result.columns:
            if seat in column.seats:
                hands += 1
                points += column.hand_total
                canastas += (
                    column.natural_canastas
                    + column.mixed_canastas
                    + column.sequence_canastas
                    + column.wild_canastas
                    + column.special_canastas
                )
        went_out += result.went_out == seat
    moves = move_ms = 0
    previous = match.created_ms
    for entry in entries:
        if entry.seat == seat and entry.actor_key != bot_key and not entry.standing_order:
            moves += 1
            move_ms += max(entry.created_ms - previous, 0)
        previous = entry.created_ms
    won = match.config.initial_side(seat) in final.winners
    timeouts = match.seats[seat].timeouts
    return _Counted(won, hands, points, canastas, went_out, moves, move_ms, timeouts)


def _merged(standing: Standing, counted: _Counted) -> Standing:
    return dataclasses.replace(
        standing,
        matches=standing.matches + 1,
        wins=standing.wins + counted.won,
        hands=standing.hands + counted.hands,
        hand_points=standing.hand_points + counted.hand_points,
        canastas=standing.canastas + counted.canastas,
        went_out=standing.went_out + counted.went_out,
        moves=standing.moves + counted.moves,
        move_ms=standing.move_ms + counted.move_ms,
        timeouts=standing.timeouts + counted.timeouts,
    )


def _replayed(
    match: Match, entries: Sequence[Entry], hands: Mapping[int, Hand]
) -> tuple[GameState, list[HandResult]]:
    """The match replayed from its first entry (``matches.replay``: as ``canasta verify``
    does), with every hand's result in order."""
    state = new_match(match.config, seed=match.id)
    results: list[HandResult] = []
    for entry in entries:
        state = matches.replay(match, state, [entry], hands.get)
        last = state.last_hand
        if last is not None and (not results or results[-1].hand_number != last.hand_number):
            results.append(last)
    return state, results
