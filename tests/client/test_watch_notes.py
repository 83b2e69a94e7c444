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
from client.cmd_table import _FIRST_WATCH_DAYS_MS, _print_change
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
