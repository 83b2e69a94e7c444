"""Points a new user ran into (issue 28), with the real ``canasta-server`` and ``canasta``: one
way to name the match in every command, and moves the client can already see are illegal
are not signed for mailing (``--armor``).

One server; Ann plays two two-handed matches against a bot, so every command that names no
match is ambiguous and must be told which.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from google.protobuf import json_format

from shared.pb import canasta_pb2 as pb
from tests.e2e.harness import Player, Server, one_line_error, start_server

pytestmark = pytest.mark.slow


@dataclass
class Two:
    server: Server
    ann: Player
    first: str
    second: str

    def view(self, match_id: str) -> pb.MatchView:
        shown = self.ann.run("show", match_id, "--json").stdout
        return json_format.Parse(shown, pb.MatchView())


@pytest.fixture(scope="module")
def two(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Two]:
    root = tmp_path_factory.mktemp("new-user")
    server = start_server(root / "server")
    ann = Player(root / "ann")
    ann.run("setup", "--server", server.address, "--name", "Ann")
    ids = [
        ann.json("create", "--preset", "two_player", "--bot", "1")["match"]["match_id"]
        for _ in range(2)
    ]
    yield Two(server, ann, ids[0], ids[1])
    server.stop()


def _my_turn(two: Two, match_id: str) -> pb.MatchView:
    """Ann's turn to play (not to cut) in ``match_id``: cut when due, wait for the bot."""
    for _ in range(5):
        view = two.view(match_id)
        if view.HasField("dealing_seat"):
            assert view.dealing_seat == 0, "the bot cuts for itself"
            two.ann.run("deal", match_id[:6])  # the match named as the last argument
            continue
        if view.match.to_act == 0:
            return view
        two.ann.run("wait", match_id, "--timeout", "30")
    raise AssertionError("Ann's turn never came")


def test_every_command_takes_the_match_as_its_last_argument(two: Two) -> None:
    ann = two.ann
    ambiguous = ann.run("deal", ok=False)
    assert "you have 2 active matches" in one_line_error(ambiguous)
    view = _my_turn(two, two.first)  # `canasta deal PREFIX` cut the first match
    prefix = two.first[:6]
    assert view.view.phase == pb.PHASE_DRAW
    ann.run("draw", prefix)
    card = two.view(two.first).view.hand[0]
    done = ann.run("discard", card, prefix)
    assert f"move {view.version + 2} stored" in done.stdout
    # -m/--match still works where it did (scripts and mails use it).
    ann.run("show", two.second)
    ann.run("deal", "-m", two.second)
    assert not two.view(two.second).HasField("dealing_seat")
    # Two different matches named: a usage error, nothing sent.
    twice = ann.run("draw", prefix, "--match", two.second[:6], ok=False)
    assert twice.returncode == 2
    assert "two matches named" in one_line_error(twice)


def test_cards_then_the_match(two: Two) -> None:
    """Commands that take cards read a last word of 4 or more hex digits as the match; no
    card is written so."""
    view = _my_turn(two, two.first)
    ann = two.ann
    ann.run("draw", "--match", two.first)
    hand = list(two.view(two.first).view.hand)
    refused = ann.run("meld", hand[0], two.first[:8], ok=False)  # one card is no meld
    line = one_line_error(refused)
    assert line.startswith("canasta: refused: "), line  # judged by the server: match found
    assert "active matches" not in line
    done = ann.run("discard", hand[0], "-m", two.first)
    assert f"move {view.version + 2} stored" in done.stdout
