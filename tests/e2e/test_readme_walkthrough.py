"""The README's first matches, run line by line as newcomers would: "Play from the command
line" (against bots) and "A first match with friends".

Each block is extracted from README.md and each line runs in a shell against a real server;
only the server address (``localhost:7437`` in the README) is the test's own, and each player
has a fresh ``CANASTA_HOME``. If the README changes, this test runs the new lines.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.e2e.harness import BIN, Player, start_server

pytestmark = pytest.mark.slow
README = Path(__file__).resolve().parents[2] / "README.md"
README_ADDRESS = "localhost:7437"


def block_lines(heading: str) -> list[str]:
    """The lines of the first ``sh`` block under the README's ``## heading``."""
    text = README.read_text(encoding="utf-8")
    section = text.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    assert block is not None, f"the ```sh block of {heading!r} is missing"
    return [line for line in block.group(1).splitlines() if line.strip()]


def run_line(line: str, player: Player, address: str) -> subprocess.CompletedProcess[str]:
    env = {**player.env(), "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(
        line.replace(README_ADDRESS, address),
        shell=True, capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, f"README line {line!r} failed: {done.stderr.strip()}"
    return done


def test_the_walkthrough_reaches_a_first_move(tmp_path: Path) -> None:
    lines = block_lines("Play from the command line")
    assert lines[0].startswith("canasta setup")
    assert any(line.startswith("canasta draw") for line in lines)
    assert len(lines) == 6  # "six commands", as the README says
    server = start_server(tmp_path / "server")
    player = Player(tmp_path / "alice")
    try:
        for line in lines:
            done = run_line(line, player, server.address)
        assert "stored; receipt verified" in done.stdout, done.stdout
    finally:
        server.stop()


def test_a_first_match_with_friends_starts_when_the_friend_joins(tmp_path: Path) -> None:
    """Each line's comment names who runs it (``# Alice: ...``, ``# Bob, ...``); ``CODE`` is
    the invite code Alice's ``create`` printed."""
    lines = block_lines("A first match with friends")
    server = start_server(tmp_path / "server")
    players = {name: Player(tmp_path / name.lower()) for name in ("Alice", "Bob")}
    code = ""
    try:
        players["Alice"].run("setup", "--server", server.address, "--name", "Alice")
        for line in lines:
            command, _, comment = line.partition("#")
            who = re.match(r"\s*(\w+)", comment)
            assert who is not None, f"who runs {line!r}?"
            assert who[1] in players, f"who runs {line!r}?"
            done = run_line(command.replace("CODE", code), players[who[1]], server.address)
            found = re.search(r"invite\s+(\S+)", done.stdout)
            code = found[1] if found else code
        assert code, "Alice's create printed no invite code"
        for player in players.values():
            (match,) = player.json("matches")["matches"]
            assert match["status"] == "MATCH_STATUS_PLAYING"
    finally:
        server.stop()
