"""The club ladder through the real service (issue 33): finished, rated matches rate their
players by Glicko-2 (``shared.glicko2``), once each, reading only that match.

The published example (Glickman, "Example of the Glicko-2 system"): a player rated 1500 (RD
200) beats a 1400 (RD 30), loses to a 1550 (RD 100) and to a 1700 (RD 300) within one rating
period, and stands at 1464.06 (RD 151.52) when it ends; here the three games are three real
two-player matches on the server, each ended by a resignation."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from server.app import App
from server.domain import Standing
from shared.glicko2 import Rating
from shared.pb import canasta_pb2 as pb
from shared.protocol import transcript_of
from shared.transcript import verify
from tests.testkit import PlayerClient

from .conftest import AppFactory


@pytest.fixture
def app(make_app: AppFactory) -> App:
    return make_app(bots=False)


def _player_id(app: App, client: PlayerClient) -> int:
    with app.db.read() as session:
        player = app.service.ctx.repo(session).player_by_key(client.public_key)
    assert player is not None
    return player.id


def _seed(app: App, client: PlayerClient, rating: Rating) -> None:
    """Give a player a rating at the start of the current period."""
    period = app.service.ladder.period()
    with app.db.write() as session:
        app.service.ctx.repo(session).save_standing(
            Standing(_player_id(app, client), "", base=rating, period=period)
        )


def _two_player_match(winner: PlayerClient, loser: PlayerClient, *, unrated: bool = False) -> str:
    """A two-player match the loser resigns at once."""
    request = pb.CreateMatchRequest(preset="two_player", seat=0, unrated=unrated)
    created: pb.CreateMatchResponse = winner.stub.CreateMatch(request, metadata=winner.metadata)
    loser.join_match(created.invite_code, seat=1)
    match_id = created.match.match_id
    view = loser.view(match_id)
    loser.submit(view, ["resign"])
    return match_id


def _ratings(client: PlayerClient) -> dict[str, pb.PlayerStanding]:
    response: pb.GetRatingsResponse = client.stub.GetRatings(
        pb.GetRatingsRequest(), metadata=client.metadata
    )
    return {s.display_name: s for s in response.standings}


def test_the_published_example_from_three_matches_in_one_period(
    app: App, players: Callable[..., PlayerClient]
) -> None:
    me, weak, even, strong = (players(n) for n in ("me", "weak", "even", "strong"))
    _seed(app, me, Rating(1500, 200, 0.06))
    _seed(app, weak, Rating(1400, 30))
    _seed(app, even, Rating(1550, 100))
    _seed(app, strong, Rating(1700, 300))
    _two_player_match(me, weak)
    _two_player_match(even, me)
    _two_player_match(strong, me)
    assert app.service.ladder.take_in_finished() == 3
    assert app.service.ladder.take_in_finished() == 0  # once each
    found = _ratings(me)
    mine = found["me"]
    assert mine.rating == pytest.approx(1464.06, abs=0.01)
    assert mine.rd == pytest.approx(151.52, abs=0.01)
    assert mine.volatility == pytest.approx(0.05999, abs=0.00001)
    assert (mine.matches, mine.wins) == (3, 1)
    assert found["weak"].rating < 1400 < found["strong"].rating - 200
    # The bots stand where their levels put them, as anchors.
    assert {s.bot_level: s.rating for s in found.values() if s.bot_level} == {
        "easy": 1180,
        "normal": 1500,
        "strong": 1620,
    }
    # The table shows each player's rating.
    match_id = _two_player_match(me, weak, unrated=True)
    seats = me.view(match_id).match.seats
    assert [s.rating for s in seats] == [round(mine.rating), round(found["weak"].rating)]


def test_unrated_and_abandoned_matches_count_for_nothing(
    app: App, players: Callable[..., PlayerClient]
) -> None:
    ann, ben = players("ann"), players("ben")
    match_id = _two_player_match(ann, ben, unrated=True)
    assert not ann.view(match_id).match.rated
    created = ann.create_match("two_player", seat=0)
    ann.stub.AbortMatch(
        pb.AbortMatchRequest(match_id=created.match.match_id), metadata=ann.metadata
    )
    assert app.service.ladder.take_in_finished() == 2
    assert set(_ratings(ann)) == {"bot (easy)", "bot (normal)", "bot (strong)"}


def test_a_new_player_s_first_win_and_the_statistics(
    app: App, players: Callable[..., PlayerClient]
) -> None:
    ann, ben = players("ann"), players("ben")
    _two_player_match(ann, ben)
    app.service.ladder.take_in_finished()
    found = _ratings(ann)
    assert found["ann"].rating > 1500 > found["ben"].rating
    assert found["ann"].rd < 350
    assert (found["ann"].matches, found["ann"].wins, found["ben"].wins) == (1, 1, 0)
    assert found["ben"].hands == 0  # resigned before a hand ended
    assert found["ben"].timeouts == 0


def test_a_played_match_s_statistics(app: App, players: Callable[..., PlayerClient]) -> None:
    """A whole two-player hand played by bots covering both players: hands, points,
    canastas and goings out come from the hands' results; moves made by a bot for a player
    are not the player's."""
    ann, ben = players("ann"), players("ben")
    request = pb.CreateMatchRequest(preset="two_player", seat=0, target=100)
    created: pb.CreateMatchResponse = ann.stub.CreateMatch(request, metadata=ann.metadata)
    ben.join_match(created.invite_code, seat=1)
    match_id = created.match.match_id
    for client in (ann, ben):
        client.stub.SetCover(
            pb.SetCoverRequest(match_id=match_id, covered=True), metadata=client.metadata
        )
    app.bots.start()
    app.bots.drain()
    view = ann.view(match_id)
    assert view.match.status == pb.MATCH_STATUS_FINISHED
    assert app.service.ladder.take_in_finished() == 1
    found = _ratings(ann)
    # What the hands were, as ``canasta verify`` replays the match's record.
    entries, history = ann.full_history(match_id)
    report = verify(transcript_of(history.header, entries, history.hands, history.end))
    hands = len(report.hands)
    assert hands == view.view.hand_number
    for seat, name in enumerate(("ann", "ben")):
        mine = [c for r in report.hands for c in r.columns if seat in c.seats]
        shown = found[name]
        assert shown.hands == hands
        assert shown.average_hand_score == pytest.approx(sum(c.hand_total for c in mine) / hands)
        canastas = sum(c.natural_canastas + c.mixed_canastas for c in mine)
        assert shown.canastas_per_hand == pytest.approx(canastas / hands)
        went_out = sum(r.went_out == seat for r in report.hands)
        assert shown.going_out_rate == pytest.approx(went_out / hands)
        assert shown.average_move_seconds == 0  # every move was the bot's
    assert found["ann"].wins + found["ben"].wins == 1
