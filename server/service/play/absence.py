"""Absent players: a bot covers a seat on its player's request, and overdue turns get the
match's timeout policy.

A *covered* human seat is played by the server's bot (``server.service.play.bots``), each move
signed by the bot key and so marked in the history, until its player comes back: by asking
(``set_cover(..., False)``) or by signing a move for the seat themselves. The deadline sweep
looks for timed turns that are overdue (``clock_due_ms`` is indexed) and covers their seat:
``substitute`` lets the bot play on; ``forfeit`` has the bot resign the match for the seat
(``shared.rules.concede``), which ends it with that side losing. Either way the seat's bank
is spent.

Each change is one conditional write on the match's revision, under its row lock: of several
server processes on one PostgreSQL database sweeping at once, exactly one covers a given
overdue seat; the bots' moves that follow are applied once by the log's unique ``(match,
seq)``. The sweep runs in a thread every ``deadline_sweep_seconds``, and ``sweep(now)`` can be
called directly: tests move the service's clock and sweep, without sleeping.
"""

from __future__ import annotations

import dataclasses
import logging
from datetime import UTC, datetime

from server.domain import (
    DAY_MS,
    Cover,
    Match,
    MatchStatus,
    MatchSummary,
    Player,
    Settings,
    TimeoutPolicy,
)
from server.service import clocks, matches
from server.service.context import ServiceContext
from server.service.errors import ConflictError, NotFoundError
from server.service.news import causes
from server.service.periodic import Periodic
from server.service.play.lobby import abandon
from server.store.repository import Repository
from shared.rules import GameState

log = logging.getLogger(__name__)

SWEEP_BATCH = 100
"""Most overdue matches handled in one sweep (the next sweep takes the rest)."""


class Absence:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx
        self.rounds = Periodic(
            "canasta-deadlines", lambda: ctx.config.deadline_sweep_seconds, self.sweep
        )
        """The thread that runs ``sweep`` again and again (``start``/``stop``)."""

    def set_cover(self, player: Player, match_id: str, covered: bool) -> MatchSummary:
        """Let a bot play the caller's seat from now on, or stop it ("I am back")."""
        ctx = self.ctx
        with ctx.db.write() as session:
            repo = ctx.repo(session)
            match = matches.require_match(repo, match_id, for_update=True)
            seat = matches.require_seat(match, player.id)
            if match.status is not MatchStatus.PLAYING:
                raise ConflictError("only a match in play has seats to cover")
            cover = Cover.ASKED.value if covered else ""
            if match.seats[seat].covered == Cover.FORFEIT:
                raise ConflictError(
                    "your time ran out and this match's policy is forfeit: the bot resigns "
                    "for your side"
                )
            if bool(match.seats[seat].covered) == covered:
                state = matches.load_state(ctx, repo, match)
            else:
                match, state = self._cover(repo, match, seat, cover, ctx.clock(), bank=None)
            repo.set_seen(match.id, seat, match.revision)
        self._publish(match, state)
        return matches.summary(match, state, player.id)

    def sweep(self, now: int | None = None) -> int:
        """Send the reminders due, and apply the timeout policy to every turn overdue at
        ``now``; returns how many turns timed out."""
        ctx = self.ctx
        now = ctx.clock() if now is None else now
        self.end_spent_vacations(now)
        self.abandon_unfilled(now)
        self.remind(now)
        with ctx.db.read() as session:
            due = ctx.repo(session).clocks_due(now, SWEEP_BATCH)
        handled = 0
        for match_id in due:
            try:
                handled += self._time_out(match_id, now)
            except Exception:  # one match that will not load stops no other
                log.exception("match %s: applying the timeout policy failed", match_id)
        return handled

    def _time_out(self, match_id: str, now: int) -> int:
        """Apply the timeout policy to one overdue match; 1 if this process did it."""
        ctx = self.ctx
        with ctx.db.write() as session:
            repo = ctx.repo(session)
            match = matches.require_match(repo, match_id, for_update=True)
            clock, control = match.clock, match.time_control
            if clock is None or control is None or clock.due_ms > now:
                return 0  # moved, or handled by another process, meanwhile
            cover = Cover.FORFEIT if control.on_timeout is TimeoutPolicy.FORFEIT else Cover.TIMEOUT
            match, state = self._cover(repo, match, clock.seat, cover.value, now, bank=0)
            repo.add_timeout(match.id, clock.seat)
            repo.add_notices(causes.deadline_passed(match, state, clock.seat, cover), now)
        log.info("match %s: seat %d timed out (%s)", match.id, clock.seat, cover.value)
        self._publish(match, state)
        return 1

    def abandon_unfilled(self, now: int) -> int:
        """Abandon every match still waiting for players ``waiting_match_days`` after it was
        created (it holds its creator's open-match allowance)."""
        ctx = self.ctx
        before = now - ctx.config.waiting_match_days * DAY_MS
        with ctx.db.read() as session:
            stale = ctx.repo(session).waiting_since_before(before, SWEEP_BATCH)
        ended = 0
        for match_id in stale:
            with ctx.db.write() as session:
                repo = ctx.repo(session)
                match = matches.require_match(repo, match_id, for_update=True)
                if match.status is not MatchStatus.WAITING or match.created_ms >= before:
                    continue
                state = matches.load_state(ctx, repo, match)
                match = abandon(repo, match, state, now)
            log.info("match %s: no players came; abandoned", match.id)
            self._publish(match, state)
            ended += 1
        return ended

    # -- vacation ---------------------------------------------------------------------------------

    def vacation_left(self, settings: Settings, now: int) -> int:
        """What is left of the player's vacation allowance this year, the running one
        counted."""
        allowance = self.ctx.config.vacation_days_per_year * DAY_MS
        used = settings.vacation_used_ms if settings.vacation_year == _year(now) else 0
        if settings.vacation_started_ms:
            used += now - settings.vacation_started_ms
        return max(0, allowance - used)

    def set_vacation(self, player: Player, on: bool, now: int | None = None) -> None:
        """Start or end the player's vacation: their clocks stop, or start afresh.

        A turn running when the vacation starts is paused with the clock time it has left, and
        runs on with that time when the vacation ends (going away does not renew a turn); a
        turn that came during the vacation starts then, with its full days. The player's
        matches are marked changed so that every server process reloads their seats
        (``Seat.on_vacation``).
        """
        ctx = self.ctx
        now = ctx.clock() if now is None else now
        changed: list[tuple[Match, GameState]] = []
        with ctx.db.write() as session:
            repo = ctx.repo(session)
            settings = repo.settings(player.id)
            if settings is None:
                raise NotFoundError("no such player")
            year = _year(now)
            used = settings.vacation_used_ms if settings.vacation_year == year else 0
            if on:
                if settings.vacation_started_ms:
                    raise ConflictError("you are on vacation already")
                if self.vacation_left(settings, now) <= 0:
                    raise ConflictError(
                        f"you have taken all {ctx.config.vacation_days_per_year} days of "
                        f"vacation of {year}"
                    )
                repo.update_player(
                    player.id, vacation_started_ms=now, vacation_used_ms=used, vacation_year=year
                )
            else:
                if not settings.vacation_started_ms:
                    raise ConflictError("you are not on vacation")
                used += now - settings.vacation_started_ms
                repo.update_player(
                    player.id, vacation_started_ms=0, vacation_used_ms=used, vacation_year=year
                )
            repo.touch_matches_of(player.id, now)
            for match_id in repo.playing_match_ids_of(player.id):
                match = matches.require_match(repo, match_id, for_update=True)
                seat = match.seat_of(player.id)
                state = matches.load_state(ctx, repo, match)
                if seat is None or matches.to_act(match, state) != seat:
                    changed.append((match, state))
                    continue
                clock = match.clock
                if on:
                    timed = clocks.pause(match, now)
                elif clock is not None and clock.paused:
                    timed = clocks.resume(match, now)
                else:  # the turn came during the vacation: nothing of it was used
                    timed, _ = clocks.restart(match, seat, now, ctx.config.hour_ms)
                changed.append((matches.store_change(repo, match, timed, now), state))
        for match, state in changed:
            self._publish(match, state)

    def end_spent_vacations(self, now: int) -> int:
        """End every vacation whose allowance ran out by ``now``."""
        ctx = self.ctx
        allowance = ctx.config.vacation_days_per_year * DAY_MS
        with ctx.db.read() as session:
            repo = ctx.repo(session)
            found = [
                (player_id, repo.settings(player_id), repo.player_by_id(player_id))
                for player_id in repo.vacations_spent(now, allowance, _year(now), SWEEP_BATCH)
            ]
        ended = 0
        for _, settings, player in found:
            if settings is None or player is None or self.vacation_left(settings, now) > 0:
                continue
            try:
                self.set_vacation(player, False, now)
            except ConflictError:
                continue  # ended meanwhile (by the player, or another process)
            ended += 1
        return ended

    def remind(self, now: int) -> int:
        """Tell each player whose deadline is nearer than one of ``reminder_hours`` (once per
        threshold and turn; the count is a conditional write, so once across processes)."""
        ctx = self.ctx
        thresholds = ctx.config.reminders_ms
        if not thresholds:
            return 0
        with ctx.db.read() as session:
            candidates = ctx.repo(session).clocks_to_remind(
                now + thresholds[0], len(thresholds), SWEEP_BATCH
            )
        sent = 0
        for match_id, due, had in candidates:
            crossed = sum(1 for ahead in thresholds if due - now <= ahead)
            if due <= now or crossed <= had:
                continue
            with ctx.db.write() as session:
                repo = ctx.repo(session)
                match = matches.require_match(repo, match_id)
                clock = match.clock
                if clock is None or clock.due_ms != due:
                    continue
                if not repo.set_reminded(match_id, clock.started_ms, had, crossed):
                    continue
                # A threshold the whole turn fits inside (a one-day turn and a 24-hour
                # reminder) says nothing the "your turn" mail did not: counted, not sent.
                if all(due - clock.started_ms <= ahead for ahead in thresholds[had:crossed]):
                    continue
                state = matches.load_state(ctx, repo, match)
                repo.add_notices(causes.reminder(match, state, clock.seat), now)
            sent += 1
        return sent

    def _cover(
        self, repo: Repository, match: Match, seat: int, cover: str, now: int, *, bank: int | None
    ) -> tuple[Match, GameState]:
        """Store the seat's new cover (and bank, if given). When the seat is the one to act,
        its clock follows: stopped at a timeout (the bot moves at once), paused by a cover
        asked for (keeping the time left), running again, with that time, when the player is
        back."""
        state = matches.load_state(self.ctx, repo, match)
        changed = matches.with_cover(match, seat, cover, bank)
        clock = changed.clock
        if matches.to_act(changed, state) == seat:
            if cover in (Cover.TIMEOUT, Cover.FORFEIT):
                changed = dataclasses.replace(changed, clock=None)
            elif cover:
                changed = clocks.pause(changed, now)
            elif clock is not None and clock.paused:
                changed = clocks.resume(changed, now)
            elif clock is None:
                changed, _ = clocks.restart(changed, seat, now, self.ctx.config.hour_ms)
        repo.set_covered(match.id, seat, cover, changed.seats[seat].bank_ms)
        return matches.store_change(repo, match, changed, now), state

    def _publish(self, match: Match, state: GameState) -> None:
        self.ctx.matches.put(match.id, match)
        self.ctx.states.put(match.id, match.revision, state)
        self.ctx.notifier.publish(matches.change(match, state))


def _year(ms: int) -> int:
    return datetime.fromtimestamp(ms / 1000, UTC).year
