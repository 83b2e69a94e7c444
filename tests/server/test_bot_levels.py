"""Bot levels on a real server (issue 31): chosen per bot seat at creation, stored (a restarted
server keeps them), shown in the seats; a strong bot thinks in the worker processes and its
moves are stored like any other; a bot thinking never holds up the server's other calls, and
no more than ``bot_workers`` bots think at once."""

from __future__ import annotations

import threading
import time

import grpc
import pytest

from server.app import App
from shared.pb import canasta_pb2 as pb
from shared.rules import GameState
from shared.rules.bot import choose_action
from tests.testkit import PlayerClient, replay_history

from .conftest import AppFactory


def _client(app: App, name: str) -> tuple[grpc.Channel, PlayerClient]:
    channel = grpc.insecure_channel(f"127.0.0.1:{app.port}")
    return channel, PlayerClient(channel).join_server(name)


def _levels(summary: pb.MatchSummary) -> list[str]:
    return [s.bot_level for s in summary.seats]


def test_levels_are_chosen_stored_and_shown(make_app: AppFactory) -> None:
    app = make_app(bots=False)
    channel, alice = _client(app, "alice")
    with channel:
        created = alice.create_match(
            seat=0, bot_seats=[1, 2, 3], bot_levels={1: "strong", 3: "Easy"}
        )
        match_id = created.match.match_id
        assert _levels(created.match) == ["", "strong", "normal", "easy"]
        waiting = alice.create_match(seat=0)
        filled = alice.fill_with_bot(waiting.match.match_id, seat=2, level="strong").match
        assert _levels(filled) == ["", "", "strong", ""]
        alice.fill_with_bot(waiting.match.match_id, seat=1)
        started = alice.start_match(waiting.match.match_id).match
        assert _levels(started) == ["", "normal", "strong", "normal"]
        with pytest.raises(grpc.RpcError) as refused:
            alice.create_match(seat=0, bot_seats=[1], bot_levels={1: "grandmaster"})
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "unknown bot level" in (refused.value.details() or "")
        with pytest.raises(grpc.RpcError) as refused:
            alice.create_match(seat=0, bot_seats=[1], bot_levels={2: "strong"})
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    app.stop(grace=None)
    again = make_app(bots=False)  # the same data: a restarted server
    with grpc.insecure_channel(f"127.0.0.1:{again.port}") as channel:
        alice = PlayerClient(channel, alice.key)
        alice.login()
        assert _levels(alice.view(match_id).match) == ["", "strong", "normal", "easy"]


def _play_until(app: App, alice: PlayerClient, match_id: str, bot_moves: int) -> None:
    """Alice plays plainly (draw, discard her last card) and the bots inline, until the bots
    have made ``bot_moves`` moves."""
    made = 0
    while made < bot_moves:
        made += app.bots.play(match_id)
        view = alice.view(match_id)
        if view.match.status != pb.MATCH_STATUS_PLAYING:
            return
        if view.HasField("dealing_seat"):
            alice.deal(view)
        elif view.match.to_act == 0:
            phase = view.view.phase
            if phase == pb.PHASE_DRAW:
                alice.submit(view, ["draw" if view.view.stock_size else "pass"])
            elif phase == pb.PHASE_ANSWER:
                alice.submit(view, ["answer no"])
            else:
                alice.submit(view, [f"discard {view.view.hand[-1]}"])


def test_a_strong_bot_plays_on_a_real_server(make_app: AppFactory) -> None:
    app = make_app(bots=False, bot_think_seconds=0.02)
    channel, alice = _client(app, "alice")
    with channel:
        created = alice.create_match(seat=0, bot_seats=[1, 2, 3], bot_levels={1: "strong"})
        match_id = created.match.match_id
        _play_until(app, alice, match_id, 12)
        entries, history = alice.full_history(match_id)
        by_seat_1 = [e for e in entries if e.seat == 1]
        assert by_seat_1
        assert all(e.played_by_bot for e in by_seat_1)
        assert any(a.startswith("discard") for e in by_seat_1 for a in e.actions)
        replay_history(match_id, history, entries, app.service.ctx.keys.server_public)


def test_thinking_bots_hold_up_no_call_and_no_more_think_than_the_workers(
    make_app: AppFactory,
) -> None:
    app = make_app(bots=False, bot_workers=2)
    release = threading.Event()
    lock = threading.Lock()
    thinking = [0, 0]  # now, most at once

    def slow_thinker(state: GameState, seat: int, level: str, match_id: str) -> tuple[str, ...]:
        with lock:
            thinking[0] += 1
            thinking[1] = max(thinking)
        release.wait(60)
        with lock:
            thinking[0] -= 1
        return (str(choose_action(state, seat)),)

    app.bots.think = slow_thinker
    app.bots.start()
    channel, alice = _client(app, "alice")
    with channel:
        ids: list[str] = []
        on_bots = 0  # matches where a bot is to move after the deal (else alice plays first)
        while on_bots < 3 and len(ids) < 20:
            created = alice.create_match(seat=0, bot_seats=[1, 2, 3], bot_levels={1: "strong"})
            ids.append(created.match.match_id)
            view = alice.view(ids[-1])
            if view.HasField("dealing_seat") and view.match.to_act == 0:
                alice.deal(view)
                view = alice.view(ids[-1])
            on_bots += view.match.to_act != 0
        assert on_bots == 3
        deadline = time.monotonic() + 60
        while thinking[0] < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert thinking[0] == 2  # two bots think; the third match waits for a worker
        # Meanwhile the server answers everything else.
        assert len(alice.my_matches().matches) == len(ids)
        assert alice.view(ids[0]).match.match_id == ids[0]
        assert alice.create_match(seat=0).match.status == pb.MATCH_STATUS_WAITING
        release.set()
        app.bots.drain()
        assert thinking[1] <= 2
        stored = 0  # the moves thought of were stored (a match may wait for alice instead)
        for match_id in ids:
            entries, _ = alice.full_history(match_id)
            stored += any(e.played_by_bot for e in entries)
        assert stored >= 2


def test_covering_uses_the_operator_level(make_app: AppFactory) -> None:
    from server.service.play.bots import level_of

    app = make_app(bots=False, bot_cover_level="easy")
    channel, alice = _client(app, "alice")
    with channel:
        created = alice.create_match(seat=0, bot_seats=[1, 3], bot_levels={3: "strong"})
        match_id = created.match.match_id
    ctx = app.service.ctx
    with ctx.db.read() as session:
        match = ctx.repo(session).match(match_id)
    assert match is not None
    assert [level_of(ctx, match, s) for s in range(4)] == ["easy", "normal", "easy", "strong"]
