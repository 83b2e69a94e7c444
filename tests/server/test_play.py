"""Whole matches over real gRPC: four authenticated clients, or one client with server bots.

Clients only ever send signed envelopes through the API. To *choose* a sensible move the test
asks the engine's bot about the server's own state (an oracle the bot may use: it reads only
what the seat could see). Every response is audited for leaks, every view is compared with the
engine's ``player_view``, and at the end the public record is verified and replayed through
the engine alone, which must reach the same final scores.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import grpc
import pytest

from server.app import App
from server.service import matches
from server.service.context import MatchCache, StateCache
from server.service.play.bots import default_chooser
from server.store.repository import Repository
from shared.crypto.chain import verify_receipt
from shared.pb import canasta_pb2 as pb
from shared.rules import GameState, Phase, apply
from tests.testkit import PlayerClient, authoritative_state, plain_turn, replay_history

from .audit import LeakAudit
from .conftest import AppFactory

choose = default_chooser()


def _whole_turn(state: GameState, seat: int) -> list[str]:
    """The bot's actions for the rest of this seat's turn (one envelope, applied atomically)."""
    actions: list[str] = []
    while state.actor() == seat and state.phase is not Phase.DEAL and len(actions) < 20:
        action = choose(state, seat)
        actions.append(str(action))
        state = apply(state, seat, action)
        if state.phase is Phase.ANSWER:
            break
    return actions


def _play_out(
    app: App, clients: dict[int, PlayerClient], match_id: str, audit: LeakAudit, batch_seat: int
) -> pb.MatchView:
    server_key = next(iter(clients.values())).server_key
    for _ in range(20_000):
        first_seat, first = next(iter(clients.items()))
        overview = first.view(match_id)
        audit.check(first_seat, overview)
        if overview.match.status == pb.MATCH_STATUS_FINISHED:
            return overview
        seat = overview.match.to_act
        client = clients[seat]
        view = client.view(match_id)
        audit.check(seat, view)
        audit.exact_view(seat, view)
        if view.HasField("dealing_seat"):
            response = client.deal(view)
        else:
            state = authoritative_state(app.service, match_id)
            whole = seat == batch_seat
            actions = _whole_turn(state, seat) if whole else [str(choose(state, seat))]
            response = client.submit(view, actions)
        audit.check(seat, response)
        audit.exact_view(seat, response.view)
        receipt = response.receipt
        assert receipt.seq == view.version + 1
        assert verify_receipt(
            server_key, match_id, receipt.seq, receipt.entry_hash, receipt.server_signature
        )
        assert response.view.head_hash == receipt.entry_hash
    raise AssertionError("the match did not finish")


@pytest.mark.slow  # a whole match of four clients with the leak audit: in make test
def test_four_players_play_a_whole_match(app: App, players: Callable[..., PlayerClient]) -> None:
    clients = {seat: players(f"player {seat}") for seat in range(4)}
    created = clients[0].create_match(target=1500, seat=0)
    assert created.match.status == pb.MATCH_STATUS_WAITING
    for seat in (1, 2, 3):
        joined = clients[seat].join_match(created.invite_code, seat=seat)
        assert joined.seat == seat
    match_id = created.match.match_id
    audit = LeakAudit(app, match_id)
    final = _play_out(app, clients, match_id, audit, batch_seat=1)
    assert final.view.phase == pb.PHASE_MATCH_OVER
    assert final.view.winners
    for seat, client in clients.items():
        entries, history = client.full_history(match_id)
        audit.check(seat, history)
        for entry in entries:
            audit.check(seat, entry)
        replayed = replay_history(match_id, history, entries, client.server_key)
        assert replayed.phase is Phase.MATCH_OVER
        assert list(replayed.scores) == list(final.view.scores)
        assert list(replayed.winners) == list(final.view.winners)
        assert len(entries) == final.version
    assert audit.messages > 100


def test_one_player_against_server_bots(app: App, players: Callable[..., PlayerClient]) -> None:
    alice = players("alice")
    created = alice.create_match(target=1000, bot_seats=[1, 2, 3])
    match_id = created.match.match_id
    assert created.match.status == pb.MATCH_STATUS_PLAYING  # full at once: started
    audit = LeakAudit(app, match_id)
    stream = alice.watch([match_id], timeout=120)
    changes = 0
    try:
        for change in stream:
            changes += 1
            audit.check(0, change)
            if change.status == pb.MATCH_STATUS_FINISHED:
                break
            if not change.HasField("to_act") or change.to_act != 0:
                continue
            view = alice.view(match_id)
            if view.version != change.version:
                continue  # an older notification; a newer one is queued
            if view.HasField("dealing_seat"):
                alice.deal(view)
            else:
                state = authoritative_state(app.service, match_id)
                alice.submit(view, [str(choose(state, 0))])
    finally:
        stream.cancel()
    entries, history = alice.full_history(match_id)
    bot_key = app.service.ctx.keys.bot_public
    assert {e.signer_public_key for e in entries if e.seat != 0} == {bot_key}
    final = alice.view(match_id)
    replayed = replay_history(match_id, history, entries, alice.server_key)
    assert list(replayed.scores) == list(final.view.scores)
    assert final.match.status == pb.MATCH_STATUS_FINISHED
    assert changes > 10


def test_the_same_envelope_twice_returns_the_same_receipt(
    app: App, players: Callable[..., PlayerClient], dump: Callable[[App], list[str]]
) -> None:
    alice = players("alice")
    match_id = alice.create_match(bot_seats=[1, 2, 3]).match.match_id
    app.bots.drain()
    view = alice.view(match_id)
    request = alice.envelope(view, ["deal"], deal_commitment=view.deal_commitment)
    first = alice.stub.Submit(request)
    app.bots.drain()
    before = dump(app)
    again = alice.stub.Submit(request)
    assert again.receipt == first.receipt
    assert dump(app) == before


@pytest.mark.slow  # plays until pile takes happen: in make test
def test_history_hides_others_draws_and_shows_pile_takes(
    app: App, players: Callable[..., PlayerClient]
) -> None:
    alice, bob = players("alice"), players("bob")
    created = alice.create_match(seat=0, bot_seats=[2, 3])
    bob.join_match(created.invite_code, seat=1)
    match_id = created.match.match_id
    clients = {0: alice, 1: bob}
    for _ in range(200):
        app.bots.drain()
        view = alice.view(match_id)
        seat = view.match.to_act
        if view.match.status != pb.MATCH_STATUS_PLAYING or seat not in clients:
            continue
        client = clients[seat]
        view = client.view(match_id)
        if view.HasField("dealing_seat"):
            client.deal(view)
        else:
            client.submit(view, [str(choose(authoritative_state(app.service, match_id), seat))])
    for seat, client in clients.items():
        entries, _ = client.full_history(match_id)
        draws = [ev for e in entries for ev in e.events if ev.kind == "draw"]
        assert any(d.seat == seat and d.private_cards for d in draws)
        assert all(not d.private_cards for d in draws if d.seat != seat)
        deals = [ev for e in entries for ev in e.events if ev.kind == "deal"]
        assert [d.seat for d in deals if d.private_cards] == [seat] * (len(deals) // 4)
        takes = [ev for e in entries for ev in e.events if ev.kind == "take"]
        assert all(t.cards for t in takes)  # the cards taken with the pile are public


def test_list_my_matches_shows_turn_and_changes(
    app: App, players: Callable[..., PlayerClient]
) -> None:
    alice, bob = players("alice"), players("bob")
    created = alice.create_match(seat=0, bot_seats=[2, 3])
    match_id = created.match.match_id
    (listed,) = alice.my_matches().matches
    assert listed.match_id == match_id
    assert listed.status == pb.MATCH_STATUS_WAITING
    assert listed.changed is False  # nothing happened since alice created it
    bob.join_match(created.invite_code)
    (listed,) = alice.my_matches().matches
    assert listed.status == pb.MATCH_STATUS_PLAYING
    assert listed.changed is True  # bob joined and the match started
    view = alice.view(match_id)
    (listed,) = alice.my_matches().matches
    assert listed.changed is False
    assert listed.my_turn == (view.match.to_act == 0)
    assert listed.to_act == view.dealing_seat
    (bob_listed,) = bob.my_matches().matches
    assert bob_listed.my_seat == 1
    assert bob_listed.invite_code == created.invite_code


def test_watch_ends_when_the_token_expires(app: App, players: Callable[..., PlayerClient]) -> None:
    alice = players("alice")
    match_id = alice.create_match().match.match_id
    stream = alice.watch([match_id], timeout=30)
    first = next(stream)
    assert first.match_id == match_id
    ctx = app.service.ctx
    real = ctx.clock
    ctx.clock = lambda: real() + (app.config.token_ttl_seconds + 5) * 1000
    try:
        with pytest.raises(grpc.RpcError) as info:
            next(stream)
    finally:
        ctx.clock = real
    assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED


def test_loading_a_match_replays_at_most_a_few_moves(
    app: App, players: Callable[..., PlayerClient]
) -> None:
    alice = players("alice")
    match_id = alice.create_match(target=1000, bot_seats=[1, 2, 3]).match.match_id
    view = alice.view(match_id)
    while view.version < 75 and view.match.status == pb.MATCH_STATUS_PLAYING:
        app.bots.drain()
        view = alice.view(match_id)
        if not view.match.HasField("to_act") or view.match.to_act != 0:
            continue  # a bot's turn, or the match is over (the loop condition sees it)
        if view.HasField("dealing_seat"):
            alice.deal(view)
        else:
            alice.submit(view, [str(choose(authoritative_state(app.service, match_id), 0))])
        view = alice.view(match_id)
    app.bots.drain()
    ctx = app.service.ctx
    remembered = authoritative_state(app.service, match_id)
    with app.db.read() as session:
        snapshot = Repository(session, b"").snapshot(match_id)
        version = alice.view(match_id).version
    assert snapshot is not None
    assert version - snapshot[0] < matches.SNAPSHOT_EVERY
    ctx.states = StateCache()  # forget: the next load starts from the snapshot
    ctx.matches = MatchCache(2048, ctx.hands)
    assert authoritative_state(app.service, match_id) == remembered


def test_open_watch_streams_hold_no_worker_thread(make_app: AppFactory) -> None:
    """More open Watch streams than worker threads: every other call still gets served, and
    a change still reaches every watcher (the streams wait on the event loop)."""
    app = make_app(max_workers=4)
    with grpc.insecure_channel(f"127.0.0.1:{app.port}") as channel:
        alice = PlayerClient(channel).join_server("alice")
        match_id = alice.create_match(seat=0).match.match_id
        streams = [alice.watch([match_id], timeout=30) for _ in range(8)]
        try:
            for stream in streams:
                assert next(stream).match_id == match_id
            bob = PlayerClient(channel).join_server("bob")  # four threads' worth of calls
            bob.join_match(alice.my_matches().matches[0].invite_code)
            for stream in streams:
                assert next(stream).revision > 1  # bob's arrival
        finally:
            for stream in streams:
                stream.cancel()


def test_a_watcher_who_leaves_is_unsubscribed(
    app: App, players: Callable[..., PlayerClient]
) -> None:
    alice = players("alice")
    match_id = alice.create_match().match.match_id
    stream = alice.watch([match_id], timeout=30)
    assert next(stream).match_id == match_id
    notifier = app.service.live.notifier
    assert notifier.watched()
    stream.cancel()
    deadline = time.monotonic() + 10
    while notifier.watched() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not notifier.watched()


def test_a_history_page_carries_only_the_hands_of_its_entries(make_app: AppFactory) -> None:
    """A page's size depends on its entries alone (issue 11): after several hands a page of
    the first hand's moves holds that hand's record, not every hand's."""
    app = make_app(history_page=5)
    with grpc.insecure_channel(f"127.0.0.1:{app.port}") as channel:
        alice = PlayerClient(channel).join_server("alice")
        match_id = alice.create_match(bot_seats=[1, 2, 3]).match.match_id
        for _ in range(5000):
            app.bots.drain()
            view = alice.view(match_id)
            if view.view.hand_number >= 2 or view.match.status == pb.MATCH_STATUS_FINISHED:
                break
            if view.HasField("dealing_seat"):
                alice.deal(view)
            elif view.match.to_act == 0:
                alice.submit(view, [str(choose(authoritative_state(app.service, match_id), 0))])
        first = alice.history(match_id, after_seq=0)
        assert {e.hand_number for e in first.entries} == {1}
        assert [h.hand_number for h in first.hands] == [1]
        entries, merged = alice.full_history(match_id)
        numbers = sorted({e.hand_number for e in entries})
        assert numbers[-1] >= 2
        assert [h.hand_number for h in merged.hands] == numbers
        replayed = replay_history(match_id, merged, entries, alice.server_key)
        assert replayed.hand_number >= 1


def test_looking_again_at_an_unchanged_match_writes_nothing(
    app: App, players: Callable[..., PlayerClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A view notes that the seat has seen the match once per change, not once per look:
    a look at an unchanged match opens no write transaction (on SQLite it would take the
    database's write lock on the event loop)."""
    alice = players("alice")
    match_id = alice.create_match(bot_seats=[1, 2, 3]).match.match_id
    alice.deal(alice.view(match_id))  # the cut
    for _ in range(2):  # alice's whole turn (draw, discard), whenever it comes: bots move after
        app.bots.drain()
        view = alice.view(match_id)
        alice.submit(view, plain_turn(view))
    app.bots.drain()
    alice.view(match_id)  # she sees what the bots changed: one write
    writes: list[int] = []
    real_write = app.db.write

    def counted() -> Any:
        writes.append(1)
        return real_write()

    monkeypatch.setattr(app.db, "write", counted)
    for _ in range(5):
        alice.view(match_id)
        alice.history(match_id)
    assert writes == []


def test_each_hand_secret_comes_from_the_deal_key_so_a_restore_deals_it_again(
    make_app: AppFactory, players: Callable[..., PlayerClient]
) -> None:
    """Issue 30: the commitment published for a hand is that of the secret derived from the
    server's deal key (``deal_key.bin`` beside its signing keys), so a server restored from a
    backup commits to, and reveals, the very hands it dealt after the backup."""
    from shared.crypto.fairdeal import commitment, derived_secret

    app = make_app()
    view = players("ann").create_match(bot_seats=[1, 2, 3])
    match_id = view.match.match_id
    key = (app.config.data_dir / "deal_key.bin").read_bytes()
    assert key == app.service.ctx.keys.deal
    assert len(key) == 32
    with app.db.read() as session:
        hand = app.service.ctx.repo(session).hand(match_id, 1)
    assert hand is not None
    assert hand.secret == derived_secret(key, match_id, 1)
    assert hand.commitment == commitment(hand.secret, match_id, 1)
