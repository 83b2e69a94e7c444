"""Four people play a whole hand of classic Canasta through the real ``canasta`` executable.

The server is the real ``canasta-server`` process on a free port with a fresh SQLite file.
Each player has a separate ``CANASTA_HOME``, sets up, and the four create and join one match.
Then, turn by turn, the player to move looks at the table (``canasta show --json``: at their
first turn and every fourth turn; otherwise ``--yes`` plays on a table others changed since)
and types the whole turn at once (``canasta play "draw; meld ...; discard ..."``), as chosen by the
engine's bot. The bot needs a full engine state to run on; the test reads it from the server's
own database (the bot reads only its seat's hand and the table: see ``shared.rules.bot``).
The hand's scores the client prints must be the server's.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format

from shared.pb import canasta_pb2 as pb
from shared.rules import Phase, apply, card_text
from shared.rules.bot import choose_action
from tests.e2e.harness import Player, Server, start_server
from tests.testkit import authoritative_state

pytestmark = pytest.mark.slow
MAX_TURNS = 400


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    running = start_server(tmp_path / "server")
    yield running
    running.stop()


def _version(oracle: Any, match_id: str) -> int:
    """The match's version as the server stores it."""
    from server.service import matches

    with oracle.ctx.db.read() as session:
        return matches.require_match(oracle.ctx.repo(session), match_id).version


def _plan_turn(state: object, seat: int) -> list[str]:
    """The bot's actions for ``seat`` until the move passes to someone else."""
    from shared.rules import GameState

    assert isinstance(state, GameState)
    actions: list[str] = []
    while state.actor() == seat and state.phase not in (Phase.DEAL, Phase.MATCH_OVER):
        action = choose_action(state, seat)
        actions.append(str(action))
        state = apply(state, seat, action)
    return actions


def test_four_players_play_a_whole_hand_through_the_executable(
    server: Server, tmp_path: Path
) -> None:
    names = ["Ann", "Ben", "Cat", "Dan"]
    players = [Player(tmp_path / name) for name in names]
    for player, name in zip(players, names, strict=True):
        player.run("setup", "--server", server.address, "--name", name)

    created = json_format.Parse(players[0].run("create", "--seat", "0", "--json").stdout,
                                pb.CreateMatchResponse())  # fmt: skip
    match_id = created.match.match_id
    for seat in (1, 2, 3):
        players[seat].run("join", created.invite_code, "--seat", str(seat))
    listing = json_format.Parse(players[2].run("matches", "--json").stdout,
                                pb.ListMyMatchesResponse())  # fmt: skip
    assert [m.match_id for m in listing.matches] == [match_id]
    assert listing.matches[0].status == pb.MATCH_STATUS_PLAYING

    oracle = server.oracle()
    first = json_format.Parse(players[0].run("show", match_id[:6], "--json").stdout,
                              pb.MatchView())  # fmt: skip
    assert first.HasField("dealing_seat")
    cutter = players[first.dealing_seat]
    cutter.run("deal", "--match", match_id)

    last: pb.SubmitResponse | None = None
    seat = 0
    in_hand = (Phase.DRAW, Phase.PLAY, Phase.ANSWER)
    looked: set[int] = set()
    for number in range(MAX_TURNS):
        state = authoritative_state(oracle, match_id)
        if state.phase not in in_hand:
            break
        actor = state.actor()
        assert actor is not None
        seat = actor
        player = players[seat]
        turn = "; ".join(_plan_turn(state, seat))
        # A player looks first at their first turn of the hand (the client refuses a move
        # on a hand it has not seen) and every fourth turn; otherwise plays on a table others
        # have changed since (--yes), as a player answering the reminder mail would: a CLI
        # run fewer, and the view the move returns is checked instead.
        look = number % 4 == 0 or seat not in looked
        looked.add(seat)
        if look:
            view = json_format.Parse(player.run("show", "--json").stdout, pb.MatchView())
            assert view.view.seat == seat
            assert sorted(view.view.hand) == sorted(card_text(c) for c in state.hands[seat])
        version = _version(oracle, match_id)
        if look:
            assert view.version == version
        done = player.run("play", turn, "--match", match_id, "--json", *([] if look else ["--yes"]))
        last = json_format.Parse(done.stdout, pb.SubmitResponse())
        assert last.receipt.seq == version + 1
        after = authoritative_state(oracle, match_id)
        assert last.view.view.seat == seat
        if after.phase in in_hand:
            assert sorted(last.view.view.hand) == sorted(card_text(c) for c in after.hands[seat])
    else:
        pytest.fail(f"the hand did not end within {MAX_TURNS} turns")

    assert last is not None
    state = authoritative_state(oracle, match_id)
    assert state.hand_number == 1
    assert state.last_hand is not None
    printed = last.view.view.last_hand
    expected = state.last_hand
    assert printed.hand_number == expected.hand_number == 1
    assert [c.hand_total for c in printed.columns] == [c.hand_total for c in expected.columns]
    assert [c.cumulative for c in printed.columns] == [c.cumulative for c in expected.columns]
    assert list(last.view.view.scores) == list(state.scores)

    # Another player sees the same result through GetView, and the text table shows it.
    other = players[(seat + 1) % 4]
    seen = json_format.Parse(other.run("show", "--json").stdout, pb.MatchView())
    assert json_format.MessageToDict(seen.view.last_hand) == json_format.MessageToDict(printed)
    table = other.run("show").stdout
    for column in expected.columns:
        assert str(column.hand_total) in table
    history = json_format.Parse(other.run("history", "--json").stdout, pb.GetHistoryResponse())
    assert history.version == last.view.version
    assert history.hands[0].secret  # revealed now that the hand is over
