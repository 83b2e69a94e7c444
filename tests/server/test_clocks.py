"""Correspondence clocks (issue 12): time controls, weekends off in the player's own time zone,
daylight-saving days, the reserve bank. Pure functions: no server, no sleeping."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from server.domain import DAY_MS, TimeControl, TimeoutPolicy, TurnClock
from server.service.clocks import (
    ClockChoice,
    counted_ms,
    due_ms,
    left_ms,
    time_control,
    zone,
)
from server.service.errors import InvalidRequestError

HOUR = 3_600_000


def at(text: str, tz: str = "UTC") -> int:
    """Milliseconds of a local wall-clock time such as ``2026-12-04 14:00`` in ``tz``."""
    moment = datetime.fromisoformat(text).replace(tzinfo=ZoneInfo(tz))
    return int(moment.timestamp() * 1000)


def test_a_clock_without_weekends_off_counts_everything() -> None:
    start = at("2026-12-04 14:00")  # a Friday
    assert counted_ms(start, start + 3 * DAY_MS, "UTC", False) == 3 * DAY_MS
    assert due_ms(start, 2 * DAY_MS, "UTC", False) == start + 2 * DAY_MS


def test_weekends_off_skip_saturday_and_sunday() -> None:
    friday = at("2026-12-04 14:00")
    # One day from Friday 14:00 is Monday 14:00: Saturday and Sunday do not count.
    assert due_ms(friday, DAY_MS, "UTC", True) == at("2026-12-07 14:00")
    assert counted_ms(friday, at("2026-12-07 14:00"), "UTC", True) == DAY_MS
    # A turn begun on Saturday starts counting on Monday at midnight.
    saturday = at("2026-12-05 09:30")
    assert due_ms(saturday, 2 * DAY_MS, "UTC", True) == at("2026-12-09 00:00")
    assert counted_ms(saturday, at("2026-12-06 23:00"), "UTC", True) == 0


def test_the_weekend_is_the_players_own() -> None:
    # Friday 20:00 UTC is already Saturday 05:00 in Tokyo: its clock stands still.
    friday_evening = at("2026-12-04 20:00")
    tokyo_monday = at("2026-12-07 00:00", "Asia/Tokyo")
    assert counted_ms(friday_evening, tokyo_monday, "Asia/Tokyo", True) == 0
    assert counted_ms(friday_evening, tokyo_monday, "UTC", True) == 4 * HOUR


def test_a_daylight_saving_day_is_as_long_as_the_player_lives_it() -> None:
    # Berlin springs forward on Sunday 2027-03-28; the weekdays around it are 24 h each.
    friday = at("2027-03-26 12:00", "Europe/Berlin")
    monday = at("2027-03-29 12:00", "Europe/Berlin")
    assert counted_ms(friday, monday, "Europe/Berlin", True) == DAY_MS
    assert counted_ms(friday, monday, "Europe/Berlin", False) == 3 * DAY_MS - HOUR
    assert due_ms(friday, DAY_MS, "Europe/Berlin", True) == monday


@pytest.mark.parametrize("tz", ["UTC", "Europe/Berlin", "America/New_York", "Asia/Tokyo"])
@pytest.mark.parametrize("days", [1, 3, 14, 44])
def test_due_is_where_the_counted_time_reaches_the_allowance(tz: str, days: int) -> None:
    for start in (at("2026-12-04 14:00"), at("2026-12-05 03:00"), at("2027-03-27 23:30")):
        due = due_ms(start, days * DAY_MS, tz, True)
        assert counted_ms(start, due, tz, True) == days * DAY_MS
        assert counted_ms(start, due - 1, tz, True) == days * DAY_MS - 1


def test_a_turn_has_left_what_its_clock_has_not_run_or_what_it_had_when_paused() -> None:
    friday = at("2026-12-04 12:00")
    running = TurnClock(0, friday, friday + 3 * DAY_MS)
    assert left_ms(running, friday + DAY_MS, "UTC", False) == 2 * DAY_MS
    assert left_ms(running, friday + DAY_MS, "UTC", True) == 12 * HOUR  # Monday morning only
    assert left_ms(running, friday + 5 * DAY_MS, "UTC", False) == 0  # overdue: nothing
    paused = TurnClock(0, friday, 0, 7 * HOUR)
    assert paused.paused
    assert left_ms(paused, friday + 9 * DAY_MS, "UTC", False) == 7 * HOUR  # time stood still


def _days(days: int, bank: int, weekends_off: bool, policy: str) -> TimeControl | None:
    return time_control(ClockChoice(days, 0, bank, 0, weekends_off, policy))


def test_time_controls_have_ranges() -> None:
    assert _days(0, 0, False, "") is None
    assert _days(3, 5, True, "forfeit") == TimeControl(72, 120, True, TimeoutPolicy.FORFEIT)
    assert _days(1, 0, False, "").on_timeout is TimeoutPolicy.SUBSTITUTE  # type: ignore[union-attr]
    for days, bank, policy in ((15, 0, ""), (-1, 0, ""), (3, 31, ""), (3, -2, ""), (3, 0, "x")):
        with pytest.raises(InvalidRequestError):
            _days(days, bank, False, policy)
    with pytest.raises(InvalidRequestError, match="without a clock"):
        _days(0, 2, False, "")


def test_time_controls_in_hours_from_4_hours_to_14_days() -> None:
    """Issue 28: a turn of a few hours fits a correspondence player who reads mail a few
    times a day; the bank in hours or days; one unit per field, not both."""
    assert time_control(ClockChoice(hours_per_move=12, bank_hours=36)) == TimeControl(12, 36)
    assert time_control(ClockChoice(hours_per_move=4, bank_days=2)) == TimeControl(4, 48)
    assert time_control(ClockChoice(hours_per_move=336)) == TimeControl(336)
    for choice in (
        ClockChoice(hours_per_move=3),
        ClockChoice(hours_per_move=337),
        ClockChoice(days_per_move=1, hours_per_move=12),
        ClockChoice(hours_per_move=12, bank_days=1, bank_hours=5),
        ClockChoice(hours_per_move=12, bank_hours=30 * 24 + 1),
        ClockChoice(hours_per_move=2**31),
    ):
        with pytest.raises(InvalidRequestError):
            time_control(choice)


@pytest.mark.parametrize(
    "name", ["", "Mars/Olympus", "../../etc/passwd", "/etc/localtime", "x" * 65]
)
def test_unknown_time_zones_are_refused(name: str) -> None:
    with pytest.raises(InvalidRequestError):
        zone(name)
