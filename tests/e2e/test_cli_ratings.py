"""``canasta ratings`` and ``canasta create --unrated`` through the real executables (issue
33): a finished rated match reaches the ladder within a round, an unrated one never does."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import Player, Server, start_server

pytestmark = pytest.mark.slow


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    running = start_server(tmp_path / "server")
    yield running
    running.stop()


def _rated(player: Player, name: str, matches: int) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while True:
        found = {s["display_name"]: s for s in player.json("ratings")["standings"]}
        if name in found and int(found[name]["matches"]) >= matches:
            return found
        assert time.monotonic() < deadline, f"{name} never reached {matches} rated matches"
        time.sleep(0.5)


def test_a_resigned_match_rates_both_players(server: Server, tmp_path: Path) -> None:
    ann, ben = Player(tmp_path / "ann"), Player(tmp_path / "ben")
    ann.run("setup", "--server", server.address, "--name", "Ann")
    ben.run("setup", "--server", server.address, "--name", "Ben")
    assert "Nobody is rated yet" in ann.run("ratings").stdout

    unrated = ann.json("create", "--preset", "two_player", "--unrated")
    ben.run("join", unrated["invite_code"])
    ben.run("resign", unrated["match"]["match_id"], "--yes")
    rated = ann.json("create", "--preset", "two_player")
    ben.run("join", rated["invite_code"])
    ben.run("resign", rated["match"]["match_id"], "--yes")

    found = _rated(ann, "Ann", 1)
    assert int(found["Ann"]["matches"]) == 1  # the unrated match counts for nothing
    assert found["Ann"]["rating"] > 1500 > found["Ben"]["rating"]
    table = ann.run("ratings").stdout
    assert "Ratings (Glicko-2; a rating period is 7 days" in table
    assert "(fixed: an anchor)" in table
    lines = [line for line in table.splitlines() if line.startswith(("Ann", "Ben"))]
    assert [line.split()[0] for line in lines] == ["Ann", "Ben"]  # best first
    # The next match's table shows both players' ratings.
    following = ann.json("create", "--preset", "two_player")
    ben.run("join", following["invite_code"])
    shown = ann.run("show", following["match"]["match_id"]).stdout
    row = next(line for line in shown.splitlines() if line.startswith("Ladder"))
    assert f"you {round(found['Ann']['rating'])}" in row
    assert f"Ben {round(found['Ben']['rating'])}" in row
