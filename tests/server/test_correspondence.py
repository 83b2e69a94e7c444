"""Correspondence clocks through the service (issue 12): a match created with a time control
times each human turn, charges a slow turn to the seat's bank, and shows the clock to every
player. Time is the service's injectable clock, moved by the test; nothing sleeps."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from zoneinfo import ZoneInfo

import grpc
import pytest

from server.app import App
from server.domain import DAY_MS
from shared.pb import canasta_pb2 as pb
from tests.testkit import PlayerClient, plain_turn

from .conftest import AppFactory

HOUR = 3_600_000
FRIDAY_NOON = int(datetime(2026, 12, 4, 12, tzinfo=ZoneInfo("UTC")).timestamp() * 1000)


class FakeClock:
    def __init__(self, now: int) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


@pytest.fixture
def app(make_app: AppFactory) -> App:
    """The server of this module's ``players``: its tokens outlive the weeks the tests skip."""
    return make_app(token_ttl_seconds=365 * 86_400)


@pytest.fixture
def clocked(app: App) -> tuple[App, FakeClock]:
    clock = FakeClock(FRIDAY_NOON)
    app.service.ctx.clock = clock
    return app, clock


def _create(client: PlayerClient, control: pb.TimeControl) -> pb.CreateMatchResponse:
    request = pb.CreateMatchRequest(preset="classic", bot_seats=[1, 2, 3], time_control=control)
    response: pb.CreateMatchResponse = client.stub.CreateMatch(request, metadata=client.metadata)
    return response


def test_a_human_turn_is_timed_and_a_slow_one_draws_on_the_bank(
    clocked: tuple[App, FakeClock], players: Callable[..., PlayerClient]
) -> None:
    app, clock = clocked
    ann = players("ann")
    created = _create(ann, pb.TimeControl(days_per_move=2, bank_days=1))
    match_id = created.match.match_id
    summary = created.match
    assert summary.time_control.days_per_move == 2
    assert summary.time_control.on_timeout == "substitute"  # the default for partnerships
    # Ann, the only human, cuts the first deal: her clock runs from the start of the match.
    assert summary.clock.seat == 0
    assert summary.clock.started_at_ms == FRIDAY_NOON
    assert summary.clock.due_at_ms == FRIDAY_NOON + 3 * DAY_MS  # two days and the bank's one
    assert [s.bank_ms for s in summary.seats] == [DAY_MS, 0, 0, 0]  # bots are never timed

    clock.now += 2 * DAY_MS + 6 * HOUR  # six hours over her two days
    ann.deal(ann.view(match_id))
    app.bots.drain()
    view = ann.view(match_id)
    assert view.match.seats[0].bank_ms == DAY_MS - 6 * HOUR
    # The bots moved at once; her next turn is timed from then, with what is left of the bank.
    assert view.match.clock.seat == 0 == view.match.to_act
    assert view.match.clock.started_at_ms == clock.now
    assert view.match.clock.due_at_ms == clock.now + 2 * DAY_MS + DAY_MS - 6 * HOUR

    clock.now += HOUR  # in time: the bank is untouched, and a draw does not end her turn
    response = ann.submit(view, plain_turn(view))
    assert response.view.match.clock.started_at_ms == clock.now - HOUR
    clock.now += HOUR
    ann.submit(response.view, plain_turn(response.view))
    app.bots.drain()
    view = ann.view(match_id)
    assert view.match.seats[0].bank_ms == DAY_MS - 6 * HOUR
    assert view.match.clock.started_at_ms == clock.now


def test_weekends_off_stop_the_clock_on_saturday_and_sunday(
    clocked: tuple[App, FakeClock], players: Callable[..., PlayerClient]
) -> None:
    _, clock = clocked
    ann = players("ann")
    created = _create(ann, pb.TimeControl(days_per_move=1, weekends_off=True))
    # Friday noon plus one day of clock, Saturday and Sunday not counted: Monday noon.
    assert created.match.clock.due_at_ms == FRIDAY_NOON + 3 * DAY_MS
    assert clock.now == FRIDAY_NOON


def test_a_match_without_a_clock_shows_none(
    clocked: tuple[App, FakeClock], players: Callable[..., PlayerClient]
) -> None:
    created = players("ann").create_match(bot_seats=[1, 2, 3])
    assert created.match.time_control.days_per_move == 0
    assert not created.match.HasField("clock")
    assert [s.bank_ms for s in created.match.seats] == [0] * 4


@pytest.mark.parametrize(
    "control",
    [
        pb.TimeControl(days_per_move=15),
        pb.TimeControl(days_per_move=2, bank_days=31),
        pb.TimeControl(days_per_move=2, on_timeout="resign"),
        pb.TimeControl(days_per_move=2, on_timeout="x" * 10_000),
        pb.TimeControl(days_per_move=0, bank_days=3),
        pb.TimeControl(days_per_move=4_000_000_000),
    ],
)
def test_time_controls_out_of_range_are_refused_and_store_nothing(
    clocked: tuple[App, FakeClock], players: Callable[..., PlayerClient], control: pb.TimeControl
) -> None:
    ann = players("ann")
    with pytest.raises(grpc.RpcError) as refused:
        _create(ann, control)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert len(refused.value.details()) < 200
    listed = ann.stub.ListMyMatches(pb.ListMyMatchesRequest(), metadata=ann.metadata)
    assert list(listed.matches) == []


# -- absence: timeouts, covers, forfeits ------------------------------------------------------


def _two_humans(
    app: App, players: Callable[..., PlayerClient], control: pb.TimeControl
) -> tuple[str, dict[int, PlayerClient]]:
    """Ann at seat 0 and Ben at seat 1, bots at 2 and 3: a match with a clock."""
    ann, ben = players("ann"), players("ben")
    request = pb.CreateMatchRequest(
        preset="classic", seat=0, bot_seats=[2, 3], time_control=control
    )
    created = ann.stub.CreateMatch(request, metadata=ann.metadata)
    ben.join_match(created.invite_code, seat=1)
    app.bots.drain()
    return created.match.match_id, {0: ann, 1: ben}


def _set_cover(client: PlayerClient, match_id: str, covered: bool) -> pb.MatchSummary:
    request = pb.SetCoverRequest(match_id=match_id, covered=covered)
    response: pb.SetCoverResponse = client.stub.SetCover(request, metadata=client.metadata)
    return response.match


def _history(client: PlayerClient, match_id: str) -> list[pb.HistoryEntry]:
    entries: list[pb.HistoryEntry] = []
    while True:
        page = client.stub.GetHistory(
            pb.GetHistoryRequest(match_id=match_id, after_seq=len(entries)),
            metadata=client.metadata,
        )
        entries += page.entries
        if not page.more:
            return entries


def test_an_overdue_seat_is_played_by_a_bot_until_its_player_is_back(
    clocked: tuple[App, FakeClock], players: Callable[..., PlayerClient]
) -> None:
    app, clock = clocked
    match_id, clients = _two_humans(app, players, pb.TimeControl(days_per_move=1))
    summary = clients[0].view(match_id).match
    absent = summary.clock.seat
    present = 1 - absent
    assert app.service.absence.sweep() == 0  # nothing is due yet
    clock.now = summary.clock.due_at_ms - 1
    assert app.service.absence.sweep() == 0
    clock.now = summary.clock.due_at_ms
    assert app.service.absence.sweep() == 1
    app.bots.drain()
    view = clients[present].view(match_id)
    assert view.match.seats[absent].covered == "timeout"
    assert view.match.to_act == present  # the bot played the absent seat's turns at once
    assert view.match.clock.seat == present
    by_bot = [e for e in _history(clients[present], match_id) if e.seat == absent]
    assert by_bot
    with app.db.read() as session:
        told = app.service.ctx.repo(session).notifications_of(
            _player_id(app, clients[absent]), 0, 100
        )
    kinds = [n.kind for n in told]
    assert "deadline_passed" in kinds
    assert "bot_played" in kinds  # told once per turn the bot played
    assert all(e.played_by_bot for e in by_bot)
    assert all(
        not e.played_by_bot for e in _history(clients[present], match_id) if e.seat == present
    )

    back = _set_cover(clients[absent], match_id, False)
    assert back.seats[absent].covered == ""
    clock.now += HOUR
    view = clients[present].view(match_id)
    clients[present].submit(view, plain_turn(view))
    view = clients[present].view(match_id)
    if view.match.to_act == present:  # a draw leaves the turn with its player
        clients[present].submit(view, plain_turn(view))
    app.bots.drain()
    view = clients[absent].view(match_id)
    assert view.match.to_act == absent  # no bot moved for the player who came back
    assert view.match.clock.seat == absent
    assert view.match.clock.started_at_ms == clock.now


def test_a_player_may_ask_a_bot_to_cover_their_seat(
    clocked: tuple[App, FakeClock], players: Callable[..., PlayerClient]
) -> None:
    app, _ = clocked
    match_id, clients = _two_humans(app, players, pb.TimeControl(days_per_move=3))
    cutter = clients[0].view(match_id).match.to_act
    covered = _set_cover(clients[cutter], match_id, True)
    assert covered.seats[cutter].covered == "asked"
    assert not covered.HasField("clock") or covered.clock.seat != cutter
    app.bots.drain()
    view = clients[1 - cutter].view(match_id)
    assert view.match.to_act == 1 - cutter
    assert view.view.hand_number == 1  # the bot cut the deal for the covered seat
    assert _set_cover(clients[cutter], match_id, True).seats[cutter].covered == "asked"  # again
    with pytest.raises(grpc.RpcError) as refused:
        _set_cover(players("stranger"), match_id, True)
    assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED


def test_under_forfeit_the_overdue_side_loses_the_match(
    clocked: tuple[App, FakeClock], players: Callable[..., PlayerClient]
) -> None:
    app, clock = clocked
    control = pb.TimeControl(days_per_move=2, bank_days=1, on_timeout="forfeit")
    match_id, clients = _two_humans(app, players, control)
    summary = clients[0].view(match_id).match
    absent = summary.clock.seat
    clock.now = summary.clock.due_at_ms + 5
    assert app.service.absence.sweep() == 1
    app.bots.drain()
    view = clients[1 - absent].view(match_id)
    assert view.match.status == pb.MATCH_STATUS_FINISHED
    loser = view.match.seats[absent].side
    assert list(view.match.winners) == [c for c in range(len(view.match.scores)) if c != loser]
    assert view.match.seats[absent].bank_ms == 0
    last = _history(clients[1 - absent], match_id)[-1]
    assert list(last.actions) == ["resign"]
    assert last.played_by_bot
    assert not view.match.HasField("clock")


def test_each_deadline_is_handled_once_by_sweeps_racing(
    clocked: tuple[App, FakeClock], players: Callable[..., PlayerClient]
) -> None:
    """Several sweeps at once (as from several server processes) cover the seat once."""
    import threading

    app, clock = clocked
    match_id, clients = _two_humans(app, players, pb.TimeControl(days_per_move=1))
    clock.now = clients[0].view(match_id).match.clock.due_at_ms
    counts: list[int] = []
    start = threading.Barrier(4)

    def sweep() -> None:
        start.wait()
        counts.append(app.service.absence.sweep())

    threads = [threading.Thread(target=sweep) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(counts) == [0, 0, 0, 1]


def test_a_covered_player_who_signs_a_move_again_is_back(
    clocked: tuple[App, FakeClock], players: Callable[..., PlayerClient]
) -> None:
    app, _ = clocked
    match_id, clients = _two_humans(app, players, pb.TimeControl(days_per_move=3))
    app.bots.stop()  # so that the covered seat's turn waits, and its player can take it
    cutter = clients[0].view(match_id).match.to_act
    assert _set_cover(clients[cutter], match_id, True).seats[cutter].covered == "asked"
    view = clients[cutter].view(match_id)
    response = clients[cutter].deal(view)  # signed with the player's own key
    assert response.view.match.seats[cutter].covered == ""
    entry = _history(clients[cutter], match_id)[-1]
    assert not entry.played_by_bot


# -- vacation -----------------------------------------------------------------------------------


def _vacation(client: PlayerClient, on: bool) -> pb.Settings:
    settings: pb.Settings = client.stub.UpdateSettings(
        pb.UpdateSettingsRequest(vacation=on), metadata=client.metadata
    )
    return settings


def test_a_vacation_pauses_the_clock_and_it_runs_on_with_the_time_left(
    clocked: tuple[App, FakeClock], players: Callable[..., PlayerClient]
) -> None:
    app, clock = clocked
    match_id, clients = _two_humans(app, players, pb.TimeControl(days_per_move=2, bank_days=2))
    summary = clients[0].view(match_id).match
    away = summary.clock.seat
    other = clients[1 - away]
    clock.now += 3 * DAY_MS  # a day into the bank: one day left of the four
    settings = _vacation(clients[away], True)
    assert settings.vacation_since_ms == clock.now
    assert settings.vacation_left_ms == 30 * DAY_MS  # the server's default allowance
    seen = other.view(match_id).match
    assert seen.seats[away].on_vacation  # the others see it
    assert not seen.HasField("clock")  # paused: no deadline
    clock.now += 10 * DAY_MS
    assert app.service.absence.sweep() == 0  # nothing times out on vacation
    assert _vacation(clients[away], False).vacation_left_ms == 20 * DAY_MS
    back = other.view(match_id).match
    assert not back.seats[away].on_vacation
    assert back.clock.seat == away
    assert back.clock.due_at_ms == clock.now + DAY_MS  # the day that was left, no more
    with pytest.raises(grpc.RpcError) as twice:
        _vacation(clients[away], False)
    assert twice.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    clock.now += 6 * HOUR
    clients[away].deal(clients[away].view(match_id))  # the turn ends: 18 h of bank remain
    assert other.view(match_id).match.seats[away].bank_ms == 18 * HOUR


def test_going_away_and_back_does_not_renew_a_turn(
    clocked: tuple[App, FakeClock], players: Callable[..., PlayerClient]
) -> None:
    """Vacation or cover switched on and off again: the clock keeps what it had left."""
    app, clock = clocked
    match_id, clients = _two_humans(app, players, pb.TimeControl(days_per_move=1))
    app.bots.stop()  # so that a covered seat's turn waits
    due = clients[0].view(match_id).match.clock.due_at_ms
    away = clients[0].view(match_id).match.clock.seat
    for _ in range(3):
        clock.now += 4 * HOUR
        _vacation(clients[away], True)
        _vacation(clients[away], False)
        _set_cover(clients[away], match_id, True)
        _set_cover(clients[away], match_id, False)
    assert clients[0].view(match_id).match.clock.due_at_ms == due
    clock.now = due
    assert app.service.absence.sweep() == 1


def test_a_vacation_ends_when_the_allowance_is_spent(
    clocked: tuple[App, FakeClock], players: Callable[..., PlayerClient]
) -> None:
    app, clock = clocked
    match_id, clients = _two_humans(app, players, pb.TimeControl(days_per_move=1))
    away = clients[0].view(match_id).match.clock.seat
    _vacation(clients[away], True)
    clock.now += 31 * DAY_MS
    app.service.absence.sweep()  # ends the vacation (30 days), then times the turn afresh
    view = clients[away].view(match_id).match
    assert not view.seats[away].on_vacation
    assert view.clock.seat == away
    assert view.clock.started_at_ms == clock.now
    with pytest.raises(grpc.RpcError) as spent:
        _vacation(clients[away], True)
    assert spent.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "all 30 days" in (spent.value.details() or "")


# -- abandoning a match before its first deal ---------------------------------------------------


def _abort(client: PlayerClient, match_id: str) -> pb.MatchSummary:
    response: pb.AbortMatchResponse = client.stub.AbortMatch(
        pb.AbortMatchRequest(match_id=match_id), metadata=client.metadata
    )
    return response.match


def test_a_match_is_abandoned_when_every_player_agrees_before_the_first_deal(
    clocked: tuple[App, FakeClock], players: Callable[..., PlayerClient]
) -> None:
    app, _ = clocked
    match_id, clients = _two_humans(app, players, pb.TimeControl(days_per_move=2))
    asked = _abort(clients[0], match_id)
    assert not asked.aborted
    assert asked.status == pb.MATCH_STATUS_PLAYING
    assert clients[1].view(match_id).match.seats[0].abort_asked  # the other one sees it
    with pytest.raises(grpc.RpcError) as stranger:
        _abort(players("eve"), match_id)
    assert stranger.value.code() == grpc.StatusCode.PERMISSION_DENIED
    ended = _abort(clients[1], match_id)
    assert ended.aborted
    assert ended.status == pb.MATCH_STATUS_FINISHED
    assert list(ended.winners) == []
    assert not ended.HasField("clock")
    assert app.service.absence.sweep() == 0


def test_a_dealt_match_cannot_be_abandoned_only_resigned(
    clocked: tuple[App, FakeClock], players: Callable[..., PlayerClient]
) -> None:
    app, _ = clocked
    match_id, clients = _two_humans(app, players, pb.TimeControl(days_per_move=2))
    cutter = clients[0].view(match_id).match.to_act
    clients[cutter].deal(clients[cutter].view(match_id))
    with pytest.raises(grpc.RpcError) as refused:
        _abort(clients[0], match_id)
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "resign" in (refused.value.details() or "")


def test_a_match_nobody_joins_is_abandoned_after_the_servers_waiting_days(
    clocked: tuple[App, FakeClock], players: Callable[..., PlayerClient]
) -> None:
    app, clock = clocked
    ann = players("ann")
    waiting = ann.create_match(bot_seats=[2, 3])  # seat 1 stays open
    match_id = waiting.match.match_id
    clock.now += 29 * DAY_MS
    app.service.absence.sweep()
    assert ann.view(match_id).match.status == pb.MATCH_STATUS_WAITING
    clock.now += 2 * DAY_MS
    app.service.absence.sweep()
    ended = ann.view(match_id).match
    assert ended.aborted
    assert ended.status == pb.MATCH_STATUS_FINISHED
    alone = ann.create_match(bot_seats=[2])  # alone in it: abandoning needs nobody else
    assert _abort(ann, alone.match.match_id).aborted


def _player_id(app: App, client: PlayerClient) -> int:
    with app.db.read() as session:
        found = app.service.ctx.repo(session).player_by_key(client.public_key)
    assert found is not None
    return found.id


def test_a_refused_settings_request_starts_no_vacation(
    clocked: tuple[App, FakeClock], players: Callable[..., PlayerClient]
) -> None:
    ann = players("ann")
    for request in (
        pb.UpdateSettingsRequest(vacation=True, time_zone="Not/AZone"),
        pb.UpdateSettingsRequest(vacation=True, time_zone="Europe/Berlin"),
    ):
        with pytest.raises(grpc.RpcError) as refused:
            ann.stub.UpdateSettings(request, metadata=ann.metadata)
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    settings = ann.stub.GetSettings(pb.GetSettingsRequest(), metadata=ann.metadata)
    assert settings.vacation_since_ms == 0
    assert settings.time_zone == "UTC"
