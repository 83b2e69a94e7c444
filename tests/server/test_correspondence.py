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
