"""Your deadlines as an iCalendar file (RFC 5545), so that a phone's calendar reminds you.

One event per match whose clock runs on your turn: it ends at the deadline and starts an hour
before it, with an alarm at its start. Each match has one event, whatever the turn: its UID
names the match alone and its SEQUENCE grows with each turn (the minute the turn's clock
started), so re-importing the file moves the event to the new deadline instead of leaving the
old one beside it. A timed match that is not waiting for you is written as that same event,
cancelled (``STATUS:CANCELLED``, a SEQUENCE of now), so the old deadline goes away too. Text is
escaped and long lines folded as the RFC requires; lines end in CRLF.

Everything in it comes from the server, which may be hostile: every text value is escaped
(backslash, semicolon, comma, and each line break, CR included, as ``\\n``; other control
characters dropped), so no value can end its line and start a property or an event of its own;
a match whose id is not 32 lowercase hex digits (the server's format), or whose clock is not a
time of this era, is left out.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shared.pb import canasta_pb2 as pb

HOUR_MS = 3_600_000
FOLD = 75
"""Longest line in octets, CRLF not counted (RFC 5545 3.1)."""
MATCH_ID = re.compile(r"[0-9a-f]{32}")
"""A match id as the server makes them (a UUID's hex)."""
LATEST_MS = 253_402_300_799_000
"""The last millisecond of the year 9999: nothing later is a deadline."""
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
"""Control characters other than the line breaks (a TEXT value may hold none of them)."""


def calendar(matches: Sequence[pb.MatchSummary], server: str, now_ms: int) -> str:
    lines = [
        "BEGIN:VCALENDAR",
        "VERSION:2.0",
        "PRODID:-//canasta//correspondence deadlines//EN",
        "CALSCALE:GREGORIAN",
        "METHOD:PUBLISH",
        "X-WR-CALNAME:Canasta deadlines",
    ]
    for match in matches:
        if not MATCH_ID.fullmatch(match.match_id) or not match.time_control.hours_per_move:
            continue
        summary = f"Canasta: your move ({match.preset}, match {match.match_id[:8]})"
        if not match.HasField("clock") or not match.my_turn:
            lines += [
                "BEGIN:VEVENT",
                f"UID:{match.match_id}@canasta",
                f"SEQUENCE:{now_ms // 60_000}",
                "STATUS:CANCELLED",
                f"DTSTAMP:{_utc(now_ms)}",
                f"DTSTART:{_utc(now_ms)}",
                f"SUMMARY:{_text(summary)}",
                "END:VEVENT",
            ]
            continue
        if not _sound(match):
            continue
        due = match.clock.due_at_ms
        detail = f"Due at the end of this event. canasta show {match.match_id} (server {server})"
        lines += [
            "BEGIN:VEVENT",
            f"UID:{match.match_id}@canasta",
            f"SEQUENCE:{match.clock.started_at_ms // 60_000}",
            "STATUS:CONFIRMED",
            f"DTSTAMP:{_utc(now_ms)}",
            f"DTSTART:{_utc(due - HOUR_MS)}",
            f"DTEND:{_utc(due)}",
            f"SUMMARY:{_text(summary)}",
            f"DESCRIPTION:{_text(detail)}",
            "BEGIN:VALARM",
            "ACTION:DISPLAY",
            f"DESCRIPTION:{_text(summary)}",
            "TRIGGER:-PT0M",
            "END:VALARM",
            "END:VEVENT",
        ]
    lines.append("END:VCALENDAR")
    return "".join(_fold(line) + "\r\n" for line in lines)


def _sound(match: pb.MatchSummary) -> bool:
    """Whether a match from the server has an id of the server's format and a clock within
    this era (anything else is left out of the calendar)."""
    clock = match.clock
    return (
        MATCH_ID.fullmatch(match.match_id) is not None
        and HOUR_MS <= clock.due_at_ms <= LATEST_MS
        and 0 <= clock.started_at_ms <= LATEST_MS
    )


def _utc(ms: int) -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(ms / 1000))


def _text(value: str) -> str:
    """A TEXT value (RFC 5545 3.3.11): backslash, semicolon and comma escaped, each line break
    (CRLF, LF or a lone CR) written ``\\n``, other control characters dropped."""
    escaped = value.replace("\\", "\\\\").replace(";", "\\;").replace(",", "\\,")
    lines = escaped.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROLS.sub("", lines).replace("\n", "\\n")


def _fold(line: str) -> str:
    """Fold a content line into pieces of at most 75 octets, never inside a UTF-8 character."""
    pieces: list[str] = []
    current, size = "", 0
    for char in line:
        width = len(char.encode())
        limit = FOLD if not pieces else FOLD - 1  # a continuation starts with a space
        if size + width > limit:
            pieces.append(current)
            current, size = "", 0
        current += char
        size += width
    pieces.append(current)
    return "\r\n ".join(pieces)
