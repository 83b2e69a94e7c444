"""Nothing a player saw is lost when the server is restored from a backup (issue 30).

The real ``canasta-server`` and ``canasta`` executables: Ann (seat 0) and Ben (seat 1) against
two bots. The operator backs the server up while the match runs; forty more moves follow; the
server stops and the backup is put back. When each player looks again, their client finds the
server behind what it saw, with its head an entry the client holds, and sends the lost entries
back: the server checks each as a new move and by its own receipt. Ann's copy ends at her last
look; Ben's copy brings the rest. No client reports a fork, the exported match verifies, and
the match plays on.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from server.service import matches
from shared.rules import Phase
from shared.rules.bot import choose_action
from tests.e2e.harness import CANASTA_SERVER, Player, clean_env, start_server
from tests.testkit import authoritative_state

pytestmark = pytest.mark.slow


def _operator(data: Path, *args: str) -> str:
    done = subprocess.run(
        [CANASTA_SERVER, "--data-dir", str(data), *args],
        env=clean_env(), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def _play(oracle: Any, match_id: str, players: dict[int, Player], moves: int) -> int:
    """``moves`` moves of the people (the bots move in the server meanwhile); each looks
    before moving, as a player does. Returns the version reached."""
    made = 0
    while made < moves:
        with oracle.ctx.db.read() as session:
            match = matches.require_match(oracle.ctx.repo(session), match_id)
        state = authoritative_state(oracle, match_id)
        seat = matches.to_act(match, state)
        if seat not in players:
            continue  # a bot's move, under way in the server
        player = players[seat]
        player.run("show", match_id)
        if state.phase is Phase.DEAL:
            player.run("deal", match_id)
        else:
            player.run("play", str(choose_action(state, seat)), match_id)
        made += 1
    with oracle.ctx.db.read() as session:
        return matches.require_match(oracle.ctx.repo(session), match_id).version


def test_a_restore_loses_no_move_a_player_saw(tmp_path: Path) -> None:
    data = tmp_path / "server"
    server = start_server(data)
    port = server.port
    oracle = server.oracle()
    ann, ben = Player(tmp_path / "ann"), Player(tmp_path / "ben")
    try:
        ann.run("setup", "--server", server.address, "--name", "Ann")
        ben.run("setup", "--server", server.address, "--name", "Ben")
        created = ann.json("create", "--seat", "0", "--bot", "2", "--bot", "3")
        match_id = created["match"]["match_id"]
        ben.run("join", created["invite_code"], "--seat", "1")
        people = {0: ann, 1: ben}
        _play(oracle, match_id, people, 6)
        copy = tmp_path / "backup.db"
        _operator(data, "backup", str(copy))
        lost_from = ann.json("show", match_id)["version"]
        _play(oracle, match_id, people, 40)
        ben.run("show", match_id)  # Ben saw the last moves; Ann's copy ends at her last look
        held = ben.json("history", match_id)["entries"]
    finally:
        oracle.ctx.db.dispose()  # the test's own look at the database, closed for the restore
        server.stop()
    _operator(data, "restore", str(copy))
    server = start_server(data, port=port)
    oracle = server.oracle()
    try:
        with oracle.ctx.db.read() as session:
            restored = matches.require_match(oracle.ctx.repo(session), match_id).version
        assert restored < len(held)  # the restore lost moves (its bots may replay a few)
        looked = ann.run("show", match_id)
        assert "FORK" not in looked.stderr
        brought = re.search(r"had lost moves (\d+)-(\d+) of match", looked.stderr)
        assert brought is not None, looked.stderr
        assert restored < int(brought[1]) <= len(held)  # from the head (bots may have replayed)
        looked = ben.run("show", match_id)
        assert "FORK" not in looked.stderr
        if int(brought[2]) < len(held):  # Ann's copy ended at her last look: Ben's has the rest
            assert f"had lost moves {int(brought[2]) + 1}-{len(held)}" in looked.stderr
        table = ann.run("show", match_id).stdout
        assert "The server was restored from a backup: moves " in table
        now = ben.json("history", match_id)["entries"]
        assert [(e["seq"], e["entry_hash"]) for e in now[: len(held)]] == [
            (e["seq"], e["entry_hash"]) for e in held
        ]
        assert len(held) > int(lost_from) + 40
        file = tmp_path / "match.json"
        ann.run("export", match_id, "-o", str(file))
        report = ben.run("verify", str(file)).stdout
        assert "verified" in report, report
        _play(oracle, match_id, people, 2)  # and the match goes on
    finally:
        oracle.ctx.db.dispose()
        server.stop()
