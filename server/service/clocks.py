"""Correspondence clocks: checking a time control, how much of a stretch of time counts, when
a turn is due, and what a turn costs the seat's bank.

A match's time control (``server.domain.TimeControl``) gives each turn ``hours_per_move`` hours
(a creator gives them in days or in hours: 4 hours to 14 days);
a turn that runs longer draws the excess from the seat's reserve bank, and when the bank is
spent too the turn is overdue (``server.service.deadlines`` applies the match's timeout
policy). With ``weekends_off`` the clock stands still from Saturday 00:00 to Monday 00:00 in
the time zone of the player in the seat, so a player in Tokyo and one in Lisbon each keep
their own weekend.

These are pure functions of instants (integer milliseconds since the Unix epoch, UTC) and an
IANA time zone name; the service passes its injectable clock's ``now``, so tests move time
without sleeping. The work is bounded: a walk day by day over at most the allowance and its
weekends (``MAX_HOURS_PER_MOVE + MAX_BANK_HOURS`` hours of clock, under 70 calendar days).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from server.domain import Match, SeatKind, TimeControl, TimeoutPolicy, TurnClock
from server.service.errors import InvalidRequestError

MIN_HOURS_PER_MOVE = 4
"""The shortest turn: a correspondence player reads mail a few times a day."""
MAX_HOURS_PER_MOVE = 14 * 24
MAX_BANK_HOURS = 30 * 24
MAX_TIME_ZONE = 64
"""Longest accepted time zone name (the IANA database's longest is about 30 characters)."""
SATURDAY = 5
"""``date.weekday()`` of Saturday; Sunday is 6."""


@dataclasses.dataclass(frozen=True, slots=True)
class ClockChoice:
    """A creator's time control as sent: per move and bank each in days or in hours (one of
    the two, 0 for the other), weekends off, and the timeout policy. All zero: no clock."""

    days_per_move: int = 0
    hours_per_move: int = 0
    bank_days: int = 0
    bank_hours: int = 0
    weekends_off: bool = False
    on_timeout: str = ""


NO_CLOCK = ClockChoice()


def _hours(days: int, hours: int, what: str) -> int:
    """``what`` in hours, from days or hours (not both)."""
    if days and hours:
        raise InvalidRequestError(f"give the {what} in days or in hours, not both")
    if days < 0 or hours < 0 or days > 10_000 or hours > 10_000:
        raise InvalidRequestError(f"the {what} is out of range")
    return days * 24 if days else hours


def time_control(choice: ClockChoice) -> TimeControl | None:
    """The time control a creator asked for (no time per move: none), or
    ``InvalidRequestError`` saying which value is out of range."""
    per_move = _hours(choice.days_per_move, choice.hours_per_move, "time per move")
    bank = _hours(choice.bank_days, choice.bank_hours, "reserve bank")
    if per_move == 0:
        if bank or choice.weekends_off or choice.on_timeout:
            raise InvalidRequestError(
                "a match without a clock takes no bank, weekends off or timeout policy"
            )
        return None
    if not MIN_HOURS_PER_MOVE <= per_move <= MAX_HOURS_PER_MOVE:
        raise InvalidRequestError(
            f"the time per move must be {MIN_HOURS_PER_MOVE} hours to "
            f"{MAX_HOURS_PER_MOVE // 24} days (or 0 for no clock), not {per_move} hours"
        )
    if not 0 <= bank <= MAX_BANK_HOURS:
        raise InvalidRequestError(
            f"the reserve bank must be 0 to {MAX_BANK_HOURS // 24} days, not {bank} hours"
        )
    policies = {p.value for p in TimeoutPolicy}
    on_timeout = choice.on_timeout
    if on_timeout and on_timeout not in policies:
        raise InvalidRequestError(
            f"on timeout: {on_timeout[:32]!r} is not one of {', '.join(sorted(policies))}"
        )
    policy = TimeoutPolicy(on_timeout) if on_timeout else TimeoutPolicy.SUBSTITUTE
    return TimeControl(per_move, bank, choice.weekends_off, policy)


@lru_cache(maxsize=512)
def zone(name: str) -> ZoneInfo:
    """The IANA time zone ``name`` (``UTC``, ``Europe/Berlin``), or ``InvalidRequestError``."""
    if not name or len(name) > MAX_TIME_ZONE or not name.isascii() or name.startswith("/"):
        raise InvalidRequestError(f"not a time zone name: {name[:MAX_TIME_ZONE]!r}")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise InvalidRequestError(
            f"unknown time zone {name!r}: use an IANA name such as Europe/Berlin"
        ) from None


def counted_ms(start_ms: int, end_ms: int, time_zone: str, weekends_off: bool) -> int:
    """How much of ``[start_ms, end_ms)`` the clock runs: all of it, or its weekdays."""
    if end_ms <= start_ms:
        return 0
    if not weekends_off:
        return end_ms - start_ms
    counted = 0
    for day_start, day_end, weekend in _days(start_ms, time_zone):
        if day_start >= end_ms:
            return counted
        if not weekend:
            counted += min(day_end, end_ms) - max(day_start, start_ms)
    raise AssertionError("unreachable: _days never ends")  # pragma: no cover


def due_ms(start_ms: int, allowance_ms: int, time_zone: str, weekends_off: bool) -> int:
    """The instant at which a clock started at ``start_ms`` has run ``allowance_ms``."""
    if not weekends_off:
        return start_ms + allowance_ms
    left = allowance_ms
    for day_start, day_end, weekend in _days(start_ms, time_zone):
        if weekend:
            continue
        begin = max(day_start, start_ms)
        if day_end - begin >= left:
            return begin + left
        left -= day_end - begin
    raise AssertionError("unreachable: _days never ends")  # pragma: no cover


def restart(
    match: Match, seat: int | None, now: int, hour_ms: int
) -> tuple[Match, tuple[int, ...]]:
    """A new turn begins at ``now`` for ``seat`` (None: nobody's): charge the turn that ran
    to the bank of its seat, and start the clock of the new one. Returns the match with its
    new clock and seats, and the seats whose bank changed (to be stored). ``hour_ms``: how
    long an hour of the time control lasts (``ServerConfig.hour_ms``).

    Only a human seat that no bot covers, whose player is not on vacation, is timed: bots
    move at once, and a vacation stops the clock.
    """
    control = match.time_control
    if control is None:
        return match, ()
    seats = match.seats
    banks: tuple[int, ...] = ()
    running = match.clock
    if running is not None:
        ran = seats[running.seat]
        # What a turn leaves of its days and bank is what its seat keeps of the bank (the
        # turn's own days are used first): the same, however often the clock was paused.
        bank = max(0, min(ran.bank_ms, left_ms(running, now, ran.time_zone, control.weekends_off)))
        if bank != ran.bank_ms:
            seats = tuple(
                dataclasses.replace(s, bank_ms=bank) if s.seat == running.seat else s for s in seats
            )
            banks = (running.seat,)
    clock = None
    mover = seats[seat] if seat is not None else None
    if (
        mover is not None
        and mover.kind is SeatKind.HUMAN
        and not mover.covered
        and not mover.on_vacation
    ):
        allowance = control.per_move_ms(hour_ms) + mover.bank_ms
        due = due_ms(now, allowance, mover.time_zone, control.weekends_off)
        clock = TurnClock(mover.seat, now, due)
    return dataclasses.replace(match, seats=seats, clock=clock), banks


def left_ms(clock: TurnClock, now: int, time_zone: str, weekends_off: bool) -> int:
    """Clock time the turn has left at ``now`` (what it had when paused, if it is)."""
    if clock.paused:
        return clock.paused_left_ms
    return counted_ms(now, clock.due_ms, time_zone, weekends_off)


def move_due_ms(match: Match) -> int:
    """When the running turn's own time ends and its seat's bank starts to be drawn: the
    instant the clock has the bank alone left (the bank is the seat's as the turn began)."""
    clock, control = match.clock, match.time_control
    if clock is None or control is None or clock.paused:
        return 0
    mover = match.seats[clock.seat]
    if not mover.bank_ms:
        return clock.due_ms
    allowance = counted_ms(clock.started_ms, clock.due_ms, mover.time_zone, control.weekends_off)
    own = allowance - mover.bank_ms
    if own <= 0:
        return clock.started_ms
    return due_ms(clock.started_ms, own, mover.time_zone, control.weekends_off)


def pause(match: Match, now: int) -> Match:
    """Stop the running clock, keeping the time it has left (vacation, a cover asked for)."""
    clock, control = match.clock, match.time_control
    if clock is None or control is None or clock.paused:
        return match
    mover = match.seats[clock.seat]
    left = max(1, left_ms(clock, now, mover.time_zone, control.weekends_off))
    return dataclasses.replace(match, clock=TurnClock(clock.seat, now, 0, left))


def resume(match: Match, now: int) -> Match:
    """Run a paused clock again from ``now`` with the time it had left."""
    clock, control = match.clock, match.time_control
    if clock is None or control is None or not clock.paused:
        return match
    mover = match.seats[clock.seat]
    due = due_ms(now, clock.paused_left_ms, mover.time_zone, control.weekends_off)
    return dataclasses.replace(match, clock=TurnClock(clock.seat, now, due))


def _days(start_ms: int, time_zone: str) -> Iterator[tuple[int, int, bool]]:
    """Local calendar days from the one holding ``start_ms`` on: (start, end, is weekend).

    Each day runs from local midnight to the next local midnight, converted to UTC, so a day
    with a daylight-saving change is 23 or 25 hours long, as the player lives it.
    """
    tz = zone(time_zone)
    day = datetime.fromtimestamp(start_ms / 1000, UTC).astimezone(tz).date()
    while True:
        following = day + timedelta(days=1)
        yield _midnight(day, tz), _midnight(following, tz), day.weekday() >= SATURDAY
        day = following


def _midnight(day: date, tz: ZoneInfo) -> int:
    return int(datetime(day.year, day.month, day.day, tzinfo=tz).timestamp() * 1000)
