"""A correspondence match from the command line (issue 12): a clock chosen at creation and
shown at the table and in the list, a bot covering a seat on request, and resigning.

The real ``canasta-server`` and ``canasta`` executables, one player against three bots."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.harness import Player, Server, one_line_error, start_server

pytestmark = pytest.mark.slow


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    running = start_server(tmp_path / "server")
    yield running
    running.stop()


def test_a_clocked_match_shows_its_deadline_and_can_be_resigned(
    server: Server, tmp_path: Path
) -> None:
    ann = Player(tmp_path / "ann")
    ann.run("setup", "--server", server.address, "--name", "Ann")
    refused = ann.run("create", "--days", "15", ok=False)
    assert refused.returncode == 2  # a wrong command line: nothing was sent
    created = ann.json("create", "--days", "2", "--bank", "1", "--weekends-off", "--bot", "1",
                       "--bot", "2", "--bot", "3")  # fmt: skip
    match_id = created["match"]["match_id"]
    table = ann.run("show").stdout
    assert "Clock: your move, due " in table
    assert "left; bank 1d 0h (2 days a move + 1 days' bank, weekends off" in table
    assert "on timeout: substitute" in table
    assert "left; bank 1d 0h" in ann.run("matches").stdout

    wrong = ann.run("cover", "maybe", ok=False)
    assert wrong.returncode == 2
    assert "cover on or cover off" in one_line_error(wrong)

    unconfirmed = ann.run("resign", ok=False)  # no terminal to ask in, no --yes
    assert unconfirmed.returncode == 2
    assert "add --yes" in one_line_error(unconfirmed)
    assert "Match over" not in ann.run("show").stdout

    done = ann.run("resign", "--yes").stdout
    assert "Match over: bot 1+bot 3 won" in done, done
    history = ann.run("history", match_id).stdout
    assert "#1    you (seat 0): resign -> resigned the match" in history
