"""A test server whose clocks run fast (issue 28): an operator or tester sees a turn time out
in seconds instead of days. The real ``canasta-server`` refuses the setting unless it is
explicitly allowed, says so in its one banner line and in its info, and ``canasta`` tells the
player at setup and in ``canasta server info``."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from tests.e2e.harness import CANASTA_SERVER, Player, Server, clean_env
from tests.testkit import banner_port, serve_with_banner

pytestmark = pytest.mark.slow

SPEED = 86_400
"""A day of a time control lasts a second."""


def test_a_fast_clock_is_refused_unless_allowed(tmp_path: Path) -> None:
    env = {**clean_env(), "CANASTA_SERVER_TEST_CLOCK_SPEED": "60"}
    done = subprocess.run(
        [CANASTA_SERVER, "--data-dir", str(tmp_path), "serve", "--listen", "127.0.0.1:0"],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode != 0
    assert "allow_test_clock" in done.stderr + done.stdout
    assert "Traceback" not in done.stderr


def test_a_fast_clock_times_a_turn_out_in_seconds_and_says_so(tmp_path: Path) -> None:
    env = {**clean_env(), "CANASTA_SERVER_LOG_LEVEL": "WARNING",
           "CANASTA_SERVER_TEST_CLOCK_SPEED": str(SPEED),
           "CANASTA_SERVER_ALLOW_TEST_CLOCK": "true",
           "CANASTA_SERVER_DEADLINE_SWEEP_SECONDS": "0.1"}  # fmt: skip
    process, banner = serve_with_banner(tmp_path / "server", env=env, command=[CANASTA_SERVER])
    server = Server(process, tmp_path / "server", banner_port(banner, "listening on "))
    try:
        assert "TEST SERVER: every clock runs 86400x real time" in banner
        ann = Player(tmp_path / "ann")
        said = ann.run("setup", "--server", server.address, "--name", "Ann").stdout
        assert "note: TEST SERVER" in said
        assert "a day per move lasts 1s" in ann.run("server", "info").stdout
        ann.run("create", "--days", "1", "--bot", "1", "--bot", "2", "--bot", "3")
        deadline = time.monotonic() + 30
        table = ""
        while time.monotonic() < deadline:
            table = ann.run("show").stdout
            if "A bot plays for you" in table:
                break
            time.sleep(0.2)
        assert "A bot plays for you (your turn ran out)" in table, table
        assert "1 day a move, on timeout: substitute" in table
    finally:
        server.stop()
