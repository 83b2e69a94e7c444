"""After a move, ``canasta`` prints the same table as ``canasta show`` then (issue 29): the
Submit names the version the player saw, the server sends only the events the move added, and
the table needs no earlier one. The real ``canasta-server`` on SQLite, four players."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from google.protobuf import json_format

from shared.pb import canasta_pb2 as pb
from shared.rules import Phase
from tests.e2e.harness import Player, Server, start_server
from tests.e2e.test_cli_hand import _plan_turn
from tests.testkit import authoritative_state

pytestmark = pytest.mark.slow


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    running = start_server(tmp_path / "server")
    yield running
    running.stop()


def test_the_table_after_a_move_is_the_table_shown_then(server: Server, tmp_path: Path) -> None:
    names = ["Ann", "Ben", "Cat", "Dan"]
    players = [Player(tmp_path / name) for name in names]
    for player, name in zip(players, names, strict=True):
        player.run("setup", "--server", server.address, "--name", name)
    created = json_format.Parse(players[0].run("create", "--seat", "0", "--json").stdout,
                                pb.CreateMatchResponse())  # fmt: skip
    match_id = created.match.match_id
    for seat in (1, 2, 3):
        players[seat].run("join", created.invite_code, "--seat", str(seat))
    first = json_format.Parse(players[0].run("show", match_id[:6], "--json").stdout,
                              pb.MatchView())  # fmt: skip
    players[first.dealing_seat].run("deal", "--match", match_id)
    oracle = server.oracle()
    for _ in range(6):
        state = authoritative_state(oracle, match_id)
        assert state.phase in (Phase.DRAW, Phase.PLAY)
        actor = state.actor()
        assert actor is not None
        player = players[actor]
        player.run("show", match_id)  # the table the move follows
        done = player.run("play", "; ".join(_plan_turn(state, actor)), "--match", match_id)
        *table, stored = done.stdout.rstrip("\n").split("\n")
        assert stored.endswith("stored; receipt verified")
        assert "\n".join(table) == player.run("show", match_id).stdout.rstrip("\n")
