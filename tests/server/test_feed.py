"""The change feed: two servers on one database (as ``serve --workers`` or replicas), and a
player's Watch stream on one of them hears what is stored through the other.

Each test runs on SQLite and on PostgreSQL (``make_app`` twice with the same name: the same
database and keys). The feeds poll every few milliseconds here; waits are bounded by generous
timeouts (a hang fails the test) but nothing asserts how long anything took.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import grpc
import pytest
from sqlalchemy import text

from server.app import App
from server.service.play.bots import default_chooser
from shared.pb import canasta_pb2 as pb
from tests.testkit import PlayerClient, authoritative_state, plain_turn

from .conftest import AppFactory

POLL_MS = 20
STREAM_SECONDS = 60


def _wait_for(condition: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    """Return once ``condition()`` holds; fail (not hang) if it never does."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.005)


def _until(stream: Any, version: int) -> list[pb.WatchResponse]:
    """What ``stream`` says up to (and with) its first change at ``version`` or later."""
    heard: list[pb.WatchResponse] = []
    for change in stream:
        heard.append(change)
        if change.version >= version:
            return heard
    raise AssertionError(f"the stream ended before version {version}: {heard}")


def _revisions(heard: list[pb.WatchResponse]) -> list[int]:
    return [change.revision for change in heard]


@contextmanager
def _two_servers(make_app: AppFactory) -> Iterator[tuple[App, App, grpc.Channel, grpc.Channel]]:
    """Servers A (bots on) and B (bots off) on one database, and a channel to each."""
    a = make_app(feed_poll_ms=POLL_MS)
    b = make_app(feed_poll_ms=POLL_MS, bots=False)
    with (
        grpc.insecure_channel(f"127.0.0.1:{a.port}") as to_a,
        grpc.insecure_channel(f"127.0.0.1:{b.port}") as to_b,
    ):
        yield a, b, to_a, to_b


def _on(channel: grpc.Channel, player: PlayerClient) -> PlayerClient:
    """The same player, signed in through another server."""
    other = PlayerClient(channel, key=player.key)
    other.login()
    return other


def _next_move(app: App, player: PlayerClient, match_id: str) -> pb.SubmitResponse:
    """Seat 0's next move (a cut or a turn), sent through ``player``'s server."""
    view = player.view(match_id)
    assert view.match.to_act == 0
    if view.HasField("dealing_seat"):
        return player.deal(view)
    state = authoritative_state(app.service, match_id)
    return player.submit(view, [str(default_chooser()(state, 0))])


def _settled(app: App, player: PlayerClient, match_id: str) -> pb.MatchView:
    """The view once ``app``'s bots have played up to a human's turn."""
    app.bots.drain()
    return player.view(match_id)


def test_a_move_reaches_a_watcher_on_the_other_server_once(make_app: AppFactory) -> None:
    with _two_servers(make_app) as (a, b, to_a, to_b):
        alice = PlayerClient(to_a).join_server("alice")
        alice_b = _on(to_b, alice)
        match_id = alice.create_match(bot_seats=[1, 2, 3]).match.match_id
        on_a = alice.watch([match_id], timeout=STREAM_SECONDS)
        on_b = alice_b.watch([match_id], timeout=STREAM_SECONDS)
        try:
            first_a, first_b = next(on_a), next(on_b)
            assert (first_a.version, first_a.revision) == (first_b.version, first_b.revision)
            _next_move(a, alice, match_id)  # alice cuts; A's bots play on to her turn
            view = _settled(a, alice, match_id)
            assert view.match.to_act == 0

            heard_b = _until(on_b, view.version)
            assert heard_b[-1].version == view.version
            assert heard_b[-1].to_act == view.match.to_act == 0
            assert heard_b[-1].status == pb.MATCH_STATUS_PLAYING
            heard_a = _until(on_a, view.version)
            for heard in (heard_a, heard_b):
                revisions = [first_a.revision, *_revisions(heard)]
                assert revisions == sorted(set(revisions))  # each once, in order
            # B's feed counts a change after it closes the read that found it, which may be
            # after the watcher heard it
            _wait_for(lambda: b.feed.relayed >= 1, "B's feed to count what it relayed")

            # A's own feed, looking again and again at a window that holds all those moves,
            # sends none of them a second time...
            relayed, polls = a.feed.relayed, a.feed.polls
            _wait_for(lambda: a.feed.polls >= polls + 3, "three more polls on A")
            assert a.feed.relayed == relayed
            # ...so the next thing each watcher hears is alice's next move.
            sent = _next_move(a, alice, match_id)
            assert next(on_a).version == sent.receipt.seq
            assert next(on_b).version >= sent.receipt.seq  # B may hear bots' replies with it
        finally:
            on_a.cancel()
            on_b.cancel()


def test_lobby_changes_reach_watchers_on_the_other_server(make_app: AppFactory) -> None:
    with _two_servers(make_app) as (_a, _b, to_a, to_b):
        alice, bob = PlayerClient(to_a).join_server("alice"), PlayerClient(to_a).join_server("bob")
        alice_b, bob_b = _on(to_b, alice), _on(to_b, bob)
        created = alice.create_match(seat=0)
        match_id = created.match.match_id
        alices = alice_b.watch([match_id], timeout=STREAM_SECONDS)
        bobs = bob_b.watch(timeout=STREAM_SECONDS)  # all of bob's matches: none yet
        try:
            waiting = next(alices)
            assert waiting.status == pb.MATCH_STATUS_WAITING

            bob.join_match(created.invite_code, seat=1)
            joined = next(alices)
            assert joined.status == pb.MATCH_STATUS_WAITING
            assert joined.revision > waiting.revision
            heard = next(bobs)
            assert (heard.match_id, heard.status) == (match_id, pb.MATCH_STATUS_WAITING)

            alice.fill_with_bot(match_id, seat=2)
            filled = next(alices)
            assert filled.status == pb.MATCH_STATUS_WAITING
            assert filled.revision > joined.revision

            alice.start_match(match_id)  # seat 3 goes to a bot
            view = alice.view(match_id)
            for stream in (alices, bobs):
                started = next(stream)
                while started.status != pb.MATCH_STATUS_PLAYING:
                    started = next(stream)  # bob has not read of the bot in seat 2 yet
                assert started.revision == view.match.revision
                assert started.to_act == view.dealing_seat
        finally:
            alices.cancel()
            bobs.cancel()


def test_no_watcher_no_polling(make_app: AppFactory) -> None:
    app = make_app(feed_poll_ms=POLL_MS)
    feed = app.feed
    _wait_for(lambda: feed.ticks >= 3, "three rounds of the feed")
    assert feed.polls == 0
    with grpc.insecure_channel(f"127.0.0.1:{app.port}") as channel:
        alice = PlayerClient(channel).join_server("alice")
        match_id = alice.create_match().match.match_id
        assert feed.polls == 0
        stream = alice.watch([match_id], timeout=STREAM_SECONDS)
        next(stream)  # subscribed
        _wait_for(lambda: feed.polls >= 2, "the feed to poll for the watcher")
        stream.cancel()
    _wait_for(lambda: not app.service.live.notifier.watched(), "the watch to end")
    ticks = feed.ticks
    _wait_for(lambda: feed.ticks >= ticks + 1, "the round under way to end")
    polls = feed.polls
    _wait_for(lambda: feed.ticks >= ticks + 4, "three more rounds of the feed")
    assert feed.polls == polls
    assert feed.errors == 0


def test_a_failed_poll_is_logged_and_the_feed_goes_on(
    make_app: AppFactory, caplog: pytest.LogCaptureFixture
) -> None:
    with _two_servers(make_app) as (a, b, to_a, to_b):
        alice = PlayerClient(to_a).join_server("alice")
        alice_b = _on(to_b, alice)
        match_id = alice.create_match(bot_seats=[1, 2, 3]).match.match_id
        stream = alice_b.watch([match_id], timeout=STREAM_SECONDS)
        try:
            next(stream)
            # A match row nobody can read, changed just now: every feed's poll trips on it.
            with a.db.write() as session:
                session.connection().execute(
                    text(
                        "INSERT INTO match (id, preset, config_json, status, players, version,"
                        " revision, head_hash, invite_code, created_by, created_ms, updated_ms,"
                        " state_json, snapshot_version) SELECT 'broken', 'classic', 'not json',"
                        " 'waiting', 4, 0, 1, head_hash, 'broken', created_by, :now, :now, '', 0"
                        " FROM match WHERE id = :id"
                    ),
                    {"id": match_id, "now": a.service.ctx.clock()},
                )
            _wait_for(lambda: b.feed.errors >= 2, "two failed polls on B")
            failures = [r for r in caplog.records if r.name == "server.service.live.feed"]
            assert failures
            assert all(r.exc_info and "\n" not in r.getMessage() for r in failures)
            with a.db.write() as session:  # out of the feed's window
                session.connection().execute(
                    text("UPDATE match SET updated_ms = 0 WHERE id = 'broken'")
                )
            sent = _next_move(a, alice, match_id)
            assert _until(stream, sent.receipt.seq)[-1].version >= sent.receipt.seq
        finally:
            stream.cancel()


def test_a_watch_says_when_the_seat_named_is_to_cut_mid_match(
    make_app: AppFactory, players: Callable[..., PlayerClient]
) -> None:
    """Issue 28: a watch opened while the next hand's cut is due says so (``cut``), so a
    watcher is told "to cut", not "to move", whatever it saw before."""
    app = make_app()
    ann = players("ann")
    match_id = ann.create_match(bot_seats=[1, 2, 3]).match.match_id
    stream = ann.watch([match_id], timeout=30)
    first = next(iter(stream))
    stream.cancel()
    assert first.cut  # before the first deal: Ann cuts
    for _ in range(2_000):
        view = ann.view(match_id)
        if view.HasField("dealing_seat") and view.view.hand_number >= 1:
            break
        if view.HasField("dealing_seat"):
            ann.deal(view)
        elif view.match.to_act == 0:
            ann.submit(view, plain_turn(view))
        app.bots.drain()
    else:
        raise AssertionError("the first hand did not end")
    stream = ann.watch([match_id], timeout=30)
    change = next(iter(stream))
    stream.cancel()
    assert change.version > 0
    assert change.cut
    assert change.to_act == view.dealing_seat
    ann.deal(view)  # after the cut, the seat named is to move
    app.bots.drain()
    stream = ann.watch([match_id], timeout=30)
    after = next(iter(stream))
    stream.cancel()
    assert not after.cut
