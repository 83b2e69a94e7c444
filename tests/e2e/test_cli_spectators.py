"""Spectators through the real ``canasta-server`` and ``canasta`` (issue 32): a four-player
match created with each spectator policy, two registered players who sit in it follow it
with ``canasta show``, ``canasta history`` and ``canasta watch --spectate``; every view they
get is the engine's spectator view of the server's state; the players see who watches; the
policy changes only when every seated player asks (``canasta spectators``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from google.protobuf.json_format import ParseDict

from shared.pb import canasta_pb2 as pb
from shared.rules import spectator_view
from shared.wire import view_to_pb
from tests.e2e.harness import Lines, Player, Server, start_server
from tests.e2e.test_cli_watch import _interrupt, _lines_until, _watch
from tests.testkit import authoritative_state

pytestmark = pytest.mark.slow


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    running = start_server(tmp_path / "server")
    yield running
    running.stop()


def _people(server: Server, tmp_path: Path, names: list[str]) -> list[Player]:
    people = []
    for name in names:
        person = Player(tmp_path / name.lower())
        person.run("setup", "--server", server.address, "--name", name)
        people.append(person)
    return people


def _spectator_view_is_the_engines(server: Server, spectator: Player, match_id: str) -> None:
    shown = ParseDict(spectator.json("show", match_id), pb.MatchView())
    state = authoritative_state(server.oracle(), match_id)
    assert shown.view == view_to_pb(spectator_view(state))
    assert shown.view.seat == -1
    assert not shown.view.hand


@pytest.mark.parametrize("policy", ["table", "after-hand", "after-match"])
def test_two_spectators_follow_a_four_player_match(
    server: Server, tmp_path: Path, policy: str
) -> None:
    ann, ben, cat, dan, eve, fay = _people(
        server, tmp_path, ["Ann", "Ben", "Cat", "Dan", "Eve", "Fay"]
    )
    created = ann.json("create", "--spectators", policy, "--seat", "0")
    match_id = created["match"]["match_id"]
    assert created["match"]["spectators"] == policy
    for seat, person in enumerate([ben, cat, dan], start=1):
        person.run("join", created["invite_code"], "--seat", str(seat))
    seated = [ann, ben, cat, dan]

    table = eve.run("show", match_id).stdout
    assert "You are a spectator: you see the public table" in table
    _spectator_view_is_the_engines(server, eve, match_id)

    watch = _watch(fay, match_id, "--spectate")
    try:
        output = Lines(watch)
        _lines_until(output, f"{match_id[:8]} version 0 playing")
        cutter = int(ann.json("show")["dealing_seat"])
        seated[cutter].run("deal")
        _lines_until(output, f"{match_id[:8]} version 1 playing")
    finally:
        _interrupt(watch)
    _spectator_view_is_the_engines(server, eve, match_id)
    _spectator_view_is_the_engines(server, fay, match_id)

    mine = ann.run("show").stdout
    assert "watching: " in mine
    assert "Eve" in mine
    assert "Fay" in mine
    assert "2 spectators watching" in eve.run("show", match_id).stdout

    history = eve.run("history", match_id).stdout
    assert "You follow this match as a spectator" in history
    record = ParseDict(eve.json("history", match_id), pb.GetHistoryResponse())
    assert record.entries
    assert not any(ev.private_cards for e in record.entries for ev in e.events)

    # A spectator cannot move.
    refused = eve.run("draw", "--match", match_id, ok=False)
    assert refused.returncode != 0
    assert "Traceback" not in refused.stderr


def test_the_policy_changes_when_every_seated_player_asks(server: Server, tmp_path: Path) -> None:
    ann, ben, eve = _people(server, tmp_path, ["Ann", "Ben", "Eve"])
    created = ann.json("create", "--preset", "two_player")
    match_id = created["match"]["match_id"]
    ben.run("join", created["invite_code"])
    refused = eve.run("show", match_id, ok=False)
    assert refused.returncode == 1
    assert "allow no spectators" in refused.stderr

    asked = ann.run("spectators", "after-hand").stdout
    assert "it changes once Ben asks for it too" in asked
    assert (
        "Ann asked to let spectators see the public table, and each hand" in ben.run("show").stdout
    )
    assert "spectators after-hand" in ben.run("spectators", "after-hand", match_id[:8]).stdout
    assert "You are a spectator" in eve.run("show", match_id).stdout
    bad = ann.run("spectators", "everybody", ok=False)
    assert bad.returncode == 1
    assert "one of none, table, after-hand, after-match" in bad.stderr
