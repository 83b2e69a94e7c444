"""``canasta watch``'s notifications: a profile's first watch passes over notifications older
than a day (a slow match's log can hold weeks of them) but remembers them as seen; later
watches resume after the last id, whatever its age."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest

from client import paths
from client.cmd_table import _FIRST_WATCH_DAYS_MS, _Memory, _print_change
from client.profiles import Profile
from shared.pb import canasta_pb2 as pb


@dataclass
class _Connection:
    """What ``_print_change`` uses of a connection: the profile and the server's address."""

    profile: Profile
    address: str = "localhost:7437"


def _note(note_id: int, age_ms: int) -> pb.WatchResponse:
    created = time.time_ns() // 1_000_000 - age_ms
    note = pb.WatchNotification(
        id=note_id, kind="your_turn", match_id="m" * 32, text="It is your turn.",
        created_at_ms=created,
    )  # fmt: skip
    return pb.WatchResponse(notification=note)


def test_the_first_watch_skips_old_news_but_remembers_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(paths.HOME_ENV, str(tmp_path))
    conn = _Connection(Profile(name="default"))
    seats = cast(Any, None)  # notifications never look up seats
    older = time.time_ns() // 1_000_000 - _FIRST_WATCH_DAYS_MS
    after = _print_change(conn, _note(7, 3 * _FIRST_WATCH_DAYS_MS), seats, 0, older, json=False)  # type: ignore[arg-type]
    assert after == 7
    assert capsys.readouterr().out == ""
    after = _print_change(conn, _note(8, 60_000), seats, after, older, json=False)  # type: ignore[arg-type]
    assert after == 8
    assert "It is your turn." in capsys.readouterr().out
    assert Profile.load("default").notifications_seen == {"localhost:7437": 8}


class _Seats:
    """Who sits where: Ann in seat 0 (the watcher), Ben in seat 1."""

    def of(self, match_id: str) -> pb.MatchSummary:
        seats = [pb.SeatInfo(seat=0, display_name="Ann"), pb.SeatInfo(seat=1, display_name="Ben")]
        return pb.MatchSummary(match_id=match_id, seats=seats, my_seat=0)


def _change(version: int, revision: int, to_act: int) -> pb.WatchResponse:
    return pb.WatchResponse(
        match_id="m" * 32,
        version=version,
        revision=revision,
        status=pb.MATCH_STATUS_PLAYING,
        to_act=to_act,
    )


def _lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return capsys.readouterr().out.splitlines()


def test_a_backlog_line_carries_the_time_of_its_event(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 28: a notification printed late is stamped with when it happened (and, from
    another day, which day), not with when the watch printed it."""
    monkeypatch.setenv(paths.HOME_ENV, str(tmp_path))
    conn = _Connection(Profile(name="default"))
    seats = cast(Any, None)
    for note_id, age_ms in ((1, 2 * 86_400_000), (2, 0)):
        _print_change(conn, _note(note_id, age_ms), seats, 0, 0, json=False)  # type: ignore[arg-type]
    old, new = _lines(capsys)
    then = time.localtime(time.time() - 2 * 86_400)
    assert old.startswith(time.strftime("%a %d %b %H:%M", then)), old
    assert new.startswith(time.strftime("%H:%M", time.localtime())), new
    assert new[8] == " "  # today: the time alone


def test_a_watch_says_who_cuts_and_prints_a_state_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 28: before the first deal and at the end of a hand (its "hand over" comes just
    before the change), the seat named cuts; a stream opened anew (a reconnect) repeats each
    match's state, which is printed once."""
    monkeypatch.setenv(paths.HOME_ENV, str(tmp_path))
    conn = _Connection(Profile(name="default"))
    seats = cast(Any, _Seats())
    memory = _Memory()

    def feed(*changes: pb.WatchResponse) -> list[str]:
        for change in changes:
            _print_change(conn, change, seats, 0, 0, json=False, memory=memory)  # type: ignore[arg-type]
        return [line.split(" ", 1)[1] for line in _lines(capsys)]

    short = "m" * 8
    assert feed(_change(0, 3, 1)) == [
        f"{short} version 0 playing - Ben (seat 1) to cut for the first hand"
    ]
    assert feed(_change(0, 3, 1)) == []  # the same state from a new stream: not again
    assert feed(_change(1, 4, 0), _change(2, 5, 1)) == [
        f"{short} version 1 playing - your turn",
        f"{short} version 2 playing - Ben (seat 1) to move",
    ]
    hand_over = pb.WatchResponse(notification=pb.WatchNotification(
        id=9, kind="hand_ended", match_id="m" * 32, text="Hand 1 of match mmmmmmmm is over.",
        created_at_ms=time.time_ns() // 1_000_000,
    ))  # fmt: skip
    assert feed(hand_over, _change(40, 43, 0), _change(41, 44, 1)) == [
        "Hand 1 of match mmmmmmmm is over. Next: canasta show mmmmmmmm",
        f"{short} version 40 playing - your cut for the next hand: canasta deal {short}",
        f"{short} version 41 playing - Ben (seat 1) to move",
    ]
