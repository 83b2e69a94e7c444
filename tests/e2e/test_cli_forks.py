"""Fork detection (issue 13): an operator who rewrites an entry of a match after a player saw
it is caught by that player's ``canasta`` client, which saves the evidence; a player who first
looks after the rewrite sees a consistent history, and the two compare heads with
``canasta history``.

The real executables; the operator's rewrite is done in the server's SQLite file while the
server runs, re-chaining every later entry so the server itself carries on."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from shared.crypto.chain import entry_hash
from shared.transcript import canonical_json, header_hash
from tests.e2e.harness import Player, Server, one_line_error, start_server

pytestmark = pytest.mark.slow


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    running = start_server(tmp_path / "server")
    yield running
    running.stop()


def _rewrite(server: Server, match_id: str, seq: int) -> None:
    """Change entry ``seq``'s signature bytes and re-chain the entries after it, as an
    operator hiding a rewrite would; the match's head moves to the new chain's end."""
    with sqlite3.connect(server.data_dir / "canasta.db") as db:
        rows = db.execute(
            "SELECT seq, payload, signature FROM log_entry WHERE match_id = ? AND seq >= ?"
            " ORDER BY seq",
            (match_id, seq - 1),
        ).fetchall()
        if seq > 1:
            (prev,) = db.execute(
                "SELECT entry_hash FROM log_entry WHERE match_id = ? AND seq = ?",
                (match_id, seq - 1),
            ).fetchone()
        else:
            (header,) = db.execute("SELECT header FROM match WHERE id = ?", (match_id,)).fetchone()
            prev = header_hash(header)
        for number, payload, signature in rows:
            if number < seq:
                continue
            if number == seq:
                signature = signature[:-1] + bytes([signature[-1] ^ 1])
            prev = entry_hash(prev, payload, signature)
            db.execute(
                "UPDATE log_entry SET signature = ?, entry_hash = ? WHERE match_id = ? AND seq = ?",
                (signature, prev, match_id, number),
            )
        # A new revision, as any change of the match: the server's caches see the rewrite.
        db.execute(
            "UPDATE match SET head_hash = ?, revision = revision + 1 WHERE id = ?",
            (prev, match_id),
        )


def _head(player: Player, match_id: str) -> str:
    lines = player.run("history", match_id).stdout.splitlines()
    assert lines[-1].startswith("Head: entry ")
    return lines[-1]


def _seen_version(player: Player, match_id: str) -> int:
    profile = json.loads((player.home / "profiles" / "default" / "profile.json").read_text())
    return int(profile["matches"][match_id]["version"])


def _two_players(tmp_path: Path, server: Server) -> tuple[Player, Player, str]:
    """Ann (seat 0) and Ben (seat 1) with bots at 2 and 3, the first hand dealt, and Ann to
    draw (her `wait` returned: the bots have moved)."""
    ann, ben = Player(tmp_path / "ann"), Player(tmp_path / "ben")
    ann.run("setup", "--server", server.address, "--name", "Ann")
    ben.run("setup", "--server", server.address, "--name", "Ben")
    created = ann.json("create", "--seat", "0", "--bot", "2", "--bot", "3")
    match_id = created["match"]["match_id"]
    ben.run("join", created["invite_code"], "--seat", "1")
    for _ in range(10):
        view = ann.json("show", match_id)
        to_act = view["match"].get("to_act", 0)
        if to_act == 0 and "dealing_seat" not in view:
            return ann, ben, match_id
        if to_act in (0, 1):
            _take_turn(ann if to_act == 0 else ben, match_id)
        else:  # the bots play on to Ann (waiting for her turn while Ben's is due would not end)
            ann.run("wait", match_id, "--timeout", "30")
    raise AssertionError("Ann's turn never came")


def _take_turn(player: Player, match_id: str) -> None:
    """Cut, or draw and discard the last card in hand."""
    view = player.json("show", match_id)
    if "dealing_seat" in view:
        player.run("deal", "--match", match_id)
        return
    player.run("draw", "--match", match_id)
    hand = player.json("show", match_id)["view"]["hand"]
    player.run("discard", hand[-1], "--match", match_id)


def test_a_rewrite_after_a_player_looked_is_caught(server: Server, tmp_path: Path) -> None:
    ann, ben, match_id = _two_players(tmp_path, server)
    ben.run("show", match_id)
    assert _head(ann, match_id) == _head(ben, match_id)  # one history for both
    version = _seen_version(ann, match_id)
    assert version >= 1

    _rewrite(server, match_id, version)  # the last entry Ann has seen
    caught = ann.run("show", match_id, ok=False)
    assert caught.returncode == 1
    assert f"FORK DETECTED in match {match_id[:8]}" in one_line_error(caught)
    evidence = list((ann.home / "profiles" / "default" / "forks").glob(f"{match_id}-*.json"))
    assert len(evidence) == 1
    saved = json.loads(evidence[0].read_text())
    assert saved["seen_before"]["version"] == version
    assert saved["shown_now"]["head_hash"] != saved["seen_before"]["head_hash"]
    again = ann.run("show", match_id, ok=False)  # reported every time, never accepted
    assert "FORK DETECTED" in one_line_error(again)
    assert _seen_version(ann, match_id) == version  # nothing remembered from the fork


def test_moves_on_my_turn_checks_the_history_too(server: Server, tmp_path: Path) -> None:
    """Issue 28: `canasta moves` on the player's own turn checks the view against what the
    profile saw, as `show` does, and lists nothing from a rewritten history."""
    ann, _, match_id = _two_players(tmp_path, server)
    assert "canasta draw" in ann.run("moves", match_id).stdout  # Ann's turn
    version = _seen_version(ann, match_id)
    _rewrite(server, match_id, version)
    for args in (("moves", match_id), ("moves", match_id, "--json")):
        caught = ann.run(*args, ok=False)
        assert caught.returncode == 1
        assert f"FORK DETECTED in match {match_id[:8]}" in one_line_error(caught)
        assert caught.stdout == ""


def test_new_entries_that_do_not_follow_the_seen_head_are_caught(
    server: Server, tmp_path: Path
) -> None:
    ann, ben, match_id = _two_players(tmp_path, server)
    _take_turn(ann, match_id)  # Ann's move: the last entry she has seen is her own discard
    version = _seen_version(ann, match_id)
    _rewrite(server, match_id, version)
    # Ben last looked before Ann's move: the rewritten entry follows what he saw, so his
    # client accepts it; he plays on, and the bots after him, on the rewritten chain.
    ben.run("wait", match_id, "--timeout", "30")
    _take_turn(ben, match_id)
    caught = ann.run("show", match_id, ok=False)
    assert caught.returncode == 1
    assert "FORK DETECTED" in one_line_error(caught)
    assert f"entry {version + 1} does not follow the one before" in one_line_error(caught)


def test_a_header_that_is_not_the_tables_is_refused(server: Server, tmp_path: Path) -> None:
    """The operator swaps the match header (a target of 10,000) and restarts the chain from
    it before anyone looked: the first look compares it with the table and refuses."""
    ann = Player(tmp_path / "ann")
    ann.run("setup", "--server", server.address, "--name", "Ann")
    created = ann.json("create", "--bot", "1", "--bot", "2", "--bot", "3")
    match_id = created["match"]["match_id"]
    with sqlite3.connect(server.data_dir / "canasta.db") as db:
        (header,) = db.execute("SELECT header FROM match WHERE id = ?", (match_id,)).fetchone()
        value = json.loads(header)
        value["rules"]["target"] = 10_000
        forged = canonical_json(value)
        db.execute(
            "UPDATE match SET header = ?, head_hash = ?, revision = revision + 1 WHERE id = ?",
            (forged, header_hash(forged), match_id),
        )
    refused = ann.run("show", match_id, ok=False)
    assert refused.returncode == 1
    assert (
        "the match header the server shows is wrong: its rules (classic, 4 players, to 10000)"
        " are not the table's (classic, 4 players, to 5000)"
    ) in one_line_error(refused)


def test_a_match_that_has_not_started_cannot_be_exported(server: Server, tmp_path: Path) -> None:
    ann = Player(tmp_path / "ann")
    ann.run("setup", "--server", server.address, "--name", "Ann")
    ann.run("create", "--bot", "1")  # two seats still open: no header yet
    refused = ann.run("export", ok=False)
    assert refused.returncode == 1
    assert "has no header: it has not started yet" in one_line_error(refused)


def test_a_commitment_changed_before_the_cut_is_caught(server: Server, tmp_path: Path) -> None:
    """A server that re-draws the secret of a hand it already committed to (to get another
    deal from the same cut) is caught by a player who saw the first commitment."""
    ann = Player(tmp_path / "ann")
    ann.run("setup", "--server", server.address, "--name", "Ann")
    match_id = ann.json("create", "--bot", "1", "--bot", "2", "--bot", "3")["match"]["match_id"]
    shown = ann.json("show", match_id)
    assert shown["deal_commitment"]
    with sqlite3.connect(server.data_dir / "canasta.db") as db:
        db.execute(
            "UPDATE hand SET commitment = ? WHERE match_id = ? AND hand_number = 1",
            (bytes(32), match_id),
        )
    server.stop()  # the server keeps commitments in memory: the operator restarts it
    again = start_server(server.data_dir, port=server.port)
    try:
        caught = ann.run("show", match_id, ok=False)
    finally:
        again.stop()
    assert caught.returncode == 1
    assert "changed the commitment of the hand to deal" in one_line_error(caught)
