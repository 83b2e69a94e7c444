"""The README's "Play from the command line" walkthrough, run line by line as a newcomer would.

The first ``sh`` block of that section is extracted from README.md and each line runs in a
shell against a real server; only the server address (``localhost:7437`` in the README) is the
test's own, and ``CANASTA_HOME`` is a fresh directory. If the README changes, this test runs
the new lines.
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


def walkthrough_lines() -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Play from the command line", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    assert block is not None, "the walkthrough's ```sh block is missing"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_the_walkthrough_reaches_a_first_move(tmp_path: Path) -> None:
    lines = walkthrough_lines()
    assert lines[0].startswith("canasta setup")
    assert any(line.startswith("canasta draw") for line in lines)
    server = start_server(tmp_path / "server")
    player = Player(tmp_path / "alice")
    env = {**player.env(), "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    try:
        for line in lines:
            command = line.replace(README_ADDRESS, server.address)
            done = subprocess.run(
                command, shell=True, capture_output=True, text=True, env=env, timeout=60
            )
            assert done.returncode == 0, f"README line {line!r} failed: {done.stderr.strip()}"
        assert "stored; receipt verified" in done.stdout, done.stdout
    finally:
        server.stop()
