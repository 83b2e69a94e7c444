"""Your deadlines as an iCalendar file (RFC 5545), so that a phone's calendar reminds you.

One event per match whose clock runs on your turn: it ends at the deadline and starts an hour
before it, with an alarm at its start. The event's UID names the match and the turn (when its
clock started), so re-importing the file updates an event instead of adding a second one, and a
new turn is a new event. Text is escaped and long lines folded as the RFC requires; lines end
in CRLF.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shared.pb import canasta_pb2 as pb

HOUR_MS = 3_600_000
FOLD = 75
"""Longest line in octets, CRLF not counted (RFC 5545 3.1)."""


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
        if not match.HasField("clock") or not match.my_turn:
            continue
        due = match.clock.due_at_ms
        summary = f"Canasta: your move ({match.preset}, match {match.match_id[:8]})"
        detail = f"Due at the end of this event. canasta show {match.match_id} (server {server})"
        lines += [
            "BEGIN:VEVENT",
            f"UID:{match.match_id}-{match.clock.started_at_ms}@canasta",
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


def _utc(ms: int) -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(ms / 1000))


def _text(value: str) -> str:
    """A TEXT value: backslash, semicolon, comma and newline escaped (RFC 5545 3.3.11)."""
    return value.replace("\\", "\\\\").replace(";", "\\;").replace(",", "\\,").replace("\n", "\\n")


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
