"""``canasta calendar`` (issue 12): deadlines as RFC 5545 iCalendar text."""

from __future__ import annotations

from client.calendar import calendar
from shared.pb import canasta_pb2 as pb

DAY = 86_400_000
NOW = 1_796_385_600_000  # 2026-12-04 12:00 UTC


def _summary(match_id: str, mine: bool, due: int) -> pb.MatchSummary:
    return pb.MatchSummary(
        match_id=match_id,
        preset="classic",
        status=pb.MATCH_STATUS_PLAYING,
        my_turn=mine,
        clock=pb.TurnClock(seat=0, started_at_ms=NOW - DAY, due_at_ms=due),
        time_control=pb.TimeControl(days_per_move=2, hours_per_move=48),
    )


def _unfold(text: str) -> list[str]:
    assert text.endswith("\r\n")
    assert "\n" not in text.replace("\r\n", "")  # every line ends in CRLF
    raw = text.split("\r\n")[:-1]
    for line in raw:
        assert len(line.encode()) <= 75
    lines: list[str] = []
    for line in raw:
        if line.startswith(" "):
            lines[-1] += line[1:]
        else:
            lines.append(line)
    return lines


def test_one_event_per_match_whose_clock_runs_on_my_turn() -> None:
    matches = [
        _summary("a" * 32, True, NOW + DAY),
        _summary("b" * 32, False, NOW + DAY),  # another player's turn: no event for me
        pb.MatchSummary(match_id="c" * 32, my_turn=True),  # no clock
    ]
    lines = _unfold(calendar(matches, "games.example.org:7437", NOW))
    assert lines[0] == "BEGIN:VCALENDAR"
    assert lines[-1] == "END:VCALENDAR"
    assert "VERSION:2.0" in lines
    assert any(line.startswith("PRODID:") for line in lines)
    assert lines.count("STATUS:CONFIRMED") == 1
    assert f"UID:{'a' * 32}@canasta" in lines  # one UID per match, whatever the turn
    assert f"SEQUENCE:{(NOW - DAY) // 60_000}" in lines
    # Another player's turn in a timed match: the same event of that match, cancelled.
    other = lines.index(f"UID:{'b' * 32}@canasta")
    assert lines[other + 1 : other + 3] == [f"SEQUENCE:{NOW // 60_000}", "STATUS:CANCELLED"]
    assert lines.count("BEGIN:VEVENT") == 2  # the match without a clock has none
    assert "DTEND:20261205T120000Z" in lines
    assert "DTSTART:20261205T110000Z" in lines
    assert "DTSTAMP:20261204T120000Z" in lines
    description = next(x for x in lines if x.startswith("DESCRIPTION:Due"))
    assert f"canasta show {'a' * 32}" in description  # the match is show's argument


def test_text_is_escaped_and_long_lines_folded() -> None:
    match = _summary("d" * 32, True, NOW + DAY)
    match.preset = "a;b,c\\d" + "é" * 60
    text = calendar([match], "host:1", NOW)
    lines = _unfold(text)
    summary = next(x for x in lines if x.startswith("SUMMARY:"))
    assert "a\\;b\\,c\\\\d" in summary
    assert summary.endswith("é" * 60 + "\\, match dddddddd)")  # folded, then joined back whole


def test_a_hostile_servers_values_cannot_inject_a_property_or_an_event() -> None:
    """Issue 25, point 14: every text value escaped, CR included; ids checked by format."""
    injected = "\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nSUMMARY:pay here\rX-EVIL:1\n;,\\\x00\x1b"
    good = _summary("e" * 32, True, NOW + DAY)
    good.preset = "classic" + injected
    crafted_ids = [
        "f" * 31 + "\r",
        ("a" * 32) + "\r\nBEGIN:VEVENT",
        "A" * 32,  # not the server's format (lowercase)
        "g" * 32,
    ]
    bad = [_summary(match_id, True, NOW + DAY) for match_id in crafted_ids]
    late = _summary("1" * 32, True, 2**62)  # no time of this era
    text = calendar([good, *bad, late], "host:1\r\nX-EVIL:2", NOW)
    lines = _unfold(text)
    assert "\r" not in text.replace("\r\n", "")  # no bare CR anywhere
    assert lines.count("BEGIN:VEVENT") == 1
    assert lines.count("END:VEVENT") == 1
    assert not any(line.startswith(("X-EVIL", "SUMMARY:pay")) for line in lines)
    assert not any(c in text for c in "\x00\x1b")
    summary = next(x for x in lines if x.startswith("SUMMARY:"))
    assert "classic\\nEND:VEVENT\\nBEGIN:VEVENT\\nSUMMARY:pay here\\nX-EVIL:1\\n\\;\\,\\\\" in (
        summary
    )
    description = next(x for x in lines if x.startswith("DESCRIPTION:Due"))
    assert "host:1\\nX-EVIL:2" in description


def test_the_next_turn_updates_the_same_event_with_a_higher_sequence() -> None:
    """Issue 28: re-importing after a turn must move the event, not leave the old one: the
    UID stays, the SEQUENCE grows (with the turn, and with the cancellation between)."""

    def sequence_and_uid(match: pb.MatchSummary, now: int) -> tuple[int, str]:
        lines = _unfold(calendar([match], "host:1", now))
        (uid,) = [x for x in lines if x.startswith("UID:")]
        (seq,) = [int(x.split(":")[1]) for x in lines if x.startswith("SEQUENCE:")]
        return seq, uid

    mine = _summary("a" * 32, True, NOW + DAY)
    first = sequence_and_uid(mine, NOW)
    waiting = _summary("a" * 32, False, NOW + DAY)
    between = sequence_and_uid(waiting, NOW + 3_600_000)
    again = _summary("a" * 32, True, NOW + 3 * DAY)
    again.clock.started_at_ms = NOW + 2 * 3_600_000
    later = sequence_and_uid(again, NOW + 2 * 3_600_000)
    assert first[1] == between[1] == later[1]
    assert first[0] < between[0] < later[0]
