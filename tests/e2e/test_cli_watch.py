"""``canasta watch`` as a player runs it (issue 14 and the correspondence issue): it prints the
player's notifications as they arrive, once each across runs, names the seat to move, and says
so (exit 1) when the server goes away. The real ``canasta-server`` and ``canasta``."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.harness import CANASTA, Lines, Player, Server, interruptible, start_server

pytestmark = pytest.mark.slow


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    running = start_server(tmp_path / "server")
    yield running
    running.stop()


def _watch(player: Player, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [CANASTA, "watch", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env=player.env(), preexec_fn=interruptible,
    )  # fmt: skip


def _lines_until(lines: Lines, wanted: str, seconds: float = 20) -> list[str]:
    """Lines printed until one contains ``wanted`` (the test fails if none does in time)."""
    seen: list[str] = []
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        line = lines.next(left)
        if line is None:
            break
        seen.append(line)
        if wanted in line:
            return seen
    raise AssertionError(f"no line with {wanted!r} in {seen}")


def _lines_for(lines: Lines, seconds: float) -> list[str]:
    """Every line printed within ``seconds``."""
    seen: list[str] = []
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        line = lines.next(left)
        if line is None:
            continue
        seen.append(line)
    return seen


def _remembered(player: Player, server: Server) -> int:
    """The last notification id the player's profile keeps for ``server`` (waits for it)."""
    profile = player.home / "profiles" / "default" / "profile.json"
    deadline = time.monotonic() + 10
    while True:
        seen = json.loads(profile.read_text()).get("notifications_seen", {})
        if server.address in seen or time.monotonic() > deadline:
            return int(seen.get(server.address, 0))
        time.sleep(0.05)


def _interrupt(process: subprocess.Popen[str]) -> str:
    process.send_signal(signal.SIGINT)
    process.wait(15)
    err = process.stderr.read() if process.stderr is not None else ""
    assert process.returncode == 130, err
    assert "Traceback" not in err
    return err


def test_watch_prints_each_notification_once_across_runs(server: Server, tmp_path: Path) -> None:
    ann = Player(tmp_path / "ann")
    ann.run("setup", "--server", server.address, "--name", "Ann")
    created = ann.json("create", "--bot", "1", "--bot", "2", "--bot", "3")
    match_id = created["match"]["match_id"]
    short = match_id[:8]

    first = _watch(ann)
    try:
        lines = _lines_until(Lines(first), f"It is your turn in match {short}")
        assert lines[-1].endswith(f": cut and deal the first hand. Next: canasta show {short}")
        assert any(
            f"{short} version 0 playing - your cut for the first hand" in line for line in lines
        ), lines
        assert _remembered(ann, server) >= 1  # kept as soon as it was printed
    finally:
        _interrupt(first)

    again = _watch(ann)
    output = Lines(again)
    try:
        quiet = _lines_for(output, 2.5)
        assert quiet, "the watch printed nothing at all"
        assert not any("It is your turn" in line for line in quiet), quiet
        ann.run("show")
        ann.run("deal")  # the bots play on until it is Ann's turn: a new notification
        lines = _lines_until(output, f"It is your turn in match {short}, hand 1.")
        assert lines[-1].endswith(f"Next: canasta show {short}")
    finally:
        _interrupt(again)
    assert sum("It is your turn" in line for line in lines) == 1, lines


def test_watch_names_the_seat_to_move(server: Server, tmp_path: Path) -> None:
    ann, ben = Player(tmp_path / "ann"), Player(tmp_path / "ben")
    ann.run("setup", "--server", server.address, "--name", "Ann")
    ben.run("setup", "--server", server.address, "--name", "Ben")
    created = ann.json("create", "--preset", "two_player")
    ben.run("join", created["invite_code"])
    view = ann.json("show")
    cutter = int(view["dealing_seat"])
    names = ["Ann", "Ben"]
    watcher = [ann, ben][1 - cutter]
    process = _watch(watcher)
    try:
        output = Lines(process)
        line = _lines_until(output, "to cut")[-1]
        # Issue 28: the first move is the cut, and the line says so (it said "to move").
        assert line.endswith(
            f"version 0 playing - {names[cutter]} (seat {cutter}) to cut for the first hand"
        ), line
        [ann, ben][cutter].run("deal")
        line = _lines_until(output, "version 1 ")[-1]
    finally:
        _interrupt(process)
    assert line.endswith(" to move") or line.endswith(" your turn"), line


def test_a_reconnect_prints_nothing_twice(tmp_path: Path) -> None:
    """Issue 28: a watch outlives its token and opens a new stream, which starts again with
    each match's state; an unchanged match is not printed again."""
    server = start_server(tmp_path / "server", settings={"token_ttl_seconds": "2"})
    ann = Player(tmp_path / "ann")
    try:
        ann.run("setup", "--server", server.address, "--name", "Ann")
        short = ann.json("create", "--bot", "1", "--bot", "2", "--bot", "3")["match"]["match_id"][
            :8
        ]
        process = _watch(ann)
        try:
            lines = _lines_for(Lines(process), 7)  # the token runs out two or three times
        finally:
            err = _interrupt(process)
    finally:
        server.stop()
    assert "canasta:" not in err, err
    states = [line for line in lines if f"{short} version 0 playing" in line]
    assert len(states) == 1, lines


def test_watch_says_so_and_exits_1_when_the_server_goes_away(tmp_path: Path) -> None:
    server = start_server(tmp_path / "server")
    ann = Player(tmp_path / "ann")
    try:
        ann.run("setup", "--server", server.address, "--name", "Ann")
        ann.run("create", "--bot", "1", "--bot", "2", "--bot", "3")
        process = _watch(ann)
        _lines_until(Lines(process), "your turn")
    finally:
        server.stop()
    process.wait(30)
    err = process.stderr.read() if process.stderr is not None else ""
    assert process.returncode == 1, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"canasta: the server at {server.address} ") or lines[0].startswith(
        f"canasta: cannot reach the server at {server.address}"
    ), lines
