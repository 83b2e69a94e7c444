"""Standing tests for the attacks of issue 10, so that none of them can come back.

Each class of attack that was found by attacking the server from outside has a test here that
failed before the fix: replaying stored envelopes to read hands, options that make one request
unbounded work or break matches, small-order keys, undecodable messages, a blocked player's
open stream, and floods. The property test over the option space and the fuzz test are in
``test_attack_fuzz.py``.
"""

from __future__ import annotations

import logging
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import grpc
import pytest
from sqlmodel import select

from server.app import App
from server.store.models import ChallengeRow
from server.store.repository import Repository
from shared import protocol
from shared.crypto.keys import generate_private_key
from shared.pb import canasta_pb2 as pb
from shared.rules import PRESETS, make_config
from tests.testkit import PlayerClient, authoritative_state, start_server_process

from ..shared.crypto.test_weak_keys import SMALL_ORDER
from .audit import NOBODY, LeakAudit
from .conftest import AppFactory
from .floodkit import close_all, closed_by_server, idle_connections, refusal_lines

Players = Callable[..., PlayerClient]
Metadata = tuple[tuple[str, str], ...]
CARD = re.compile(r"\b(?:10|[2-9ajkqt])[cdhs]\b|\bjk\b|[♠♥♦♣]", re.IGNORECASE)
"""A card in the engine's notation, as it could appear in a message."""


def _refused(call: Callable[[], Any]) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as info:
        call()
    error = info.value
    assert error.code() not in (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN), error
    return error


def _block(app: App, client: PlayerClient) -> None:
    """What ``canasta-server players block`` does: block the key, revoke its tokens."""
    with app.db.write() as session:
        repo = Repository(session, b"")
        player = repo.player_by_key(client.public_key)
        assert player is not None
        repo.set_blocked(player.id, True)


def _play(app: App, seats: dict[int, PlayerClient], match_id: str, moves: int) -> None:
    """Move the match on by about ``moves`` entries: the humans in ``seats`` play the bot's
    choice (whole turns, so hands end), the server's bots the others."""
    from server.service.play.bots import default_chooser

    choose = default_chooser()
    for _ in range(moves):
        app.bots.drain()
        overview = next(iter(seats.values())).view(match_id)
        if overview.match.status == pb.MATCH_STATUS_FINISHED:
            return
        client = seats[overview.match.to_act]
        view = client.view(match_id)
        if view.HasField("dealing_seat"):
            client.deal(view)
        else:
            state = authoritative_state(app.service, match_id)
            client.submit(view, [str(choose(state, view.view.seat))])
    app.bots.drain()


# -- 1. replayed envelopes, and every call with every identity -------------------------------


@pytest.mark.parametrize(
    ("engine", "preset"),
    # Every preset in make test (the inner loop keeps the smaller leak checks of this file),
    # on SQLite; what the audit checks is what the service sends, the same over either
    # database, so PostgreSQL plays the classic game only.
    [
        *(pytest.param("sqlite", p, marks=pytest.mark.slow) for p in sorted(PRESETS)),
        pytest.param("postgres", "classic", marks=[pytest.mark.slow, pytest.mark.postgres]),
    ],
)
def test_adversarial_leak_audit(
    preset: str, app: App, players: Players, channel: grpc.Channel, dump: Callable[[App], Any]
) -> None:
    """Issue 10, part 1: every stored envelope is sent again by its own player, by a member
    of another seat, by a registered non-member and by a stranger with no account; and every
    read and lobby call is made by each of them. Only the seat's own signed-in player ever
    gets a view back; nobody receives a card their own ``player_view`` does not show."""
    alice, bob, carol = players("alice"), players("bob"), players("carol")
    stranger = PlayerClient(channel)  # never registered: no token
    count = make_config(preset).players
    created = alice.create_match(preset, seat=0, bot_seats=list(range(2, count)))
    bob.join_match(created.invite_code, seat=1)
    match_id = created.match.match_id
    _play(app, {0: alice, 1: bob}, match_id, moves=60)
    entries, _ = alice.full_history(match_id)
    assert len(entries) > 20
    identities: list[tuple[PlayerClient, int, Metadata]] = [
        (alice, 0, alice.metadata),
        (bob, 1, bob.metadata),
        (carol, NOBODY, carol.metadata),
        (stranger, NOBODY, ()),
    ]
    audit = LeakAudit(app, match_id)
    before = dump(app)
    for entry in entries:
        request = pb.SubmitRequest(payload=entry.payload, signature=entry.signature)
        for client, seat, metadata in identities:
            response = client.stub.Submit(request, metadata=metadata)
            assert response.receipt.seq == entry.seq
            assert response.receipt.server_signature == entry.receipt_signature
            audit.check(seat, response)
            if seat == entry.seat:
                audit.exact_view(seat, response.view)
            else:
                assert not response.HasField("view"), f"{seat} got seat {entry.seat}'s view"
    assert dump(app) == before, "a replay changed the database"

    for client, seat, metadata in identities:
        for name, response, error in _every_call(client, metadata, match_id, created.invite_code):
            if error is not None:
                assert error.code() not in (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN)
                assert not CARD.search(error.details() or ""), f"{name}: {error.details()}"
                continue
            assert seat != NOBODY or name == "ListMyMatches", f"{name} answered a non-member"
            audit.check(seat, response)
            if name == "GetView":
                audit.exact_view(seat, response.view)
    assert audit.messages > 4 * len(entries)


def _every_call(
    client: PlayerClient, metadata: Metadata, match_id: str, invite_code: str
) -> list[tuple[str, Any, grpc.RpcError | None]]:
    """Every read and lobby call about one match, as ``client`` with ``metadata``: each
    call's name, and its response or its error."""
    stub = client.stub
    requests: list[tuple[str, Callable[..., Any], Any]] = [
        ("GetView", stub.GetView, pb.GetViewRequest(match_id=match_id)),
        ("GetHistory", stub.GetHistory, pb.GetHistoryRequest(match_id=match_id)),
        ("GetMoves", stub.GetMoves, pb.GetMovesRequest(match_id=match_id)),
        ("ListMyMatches", stub.ListMyMatches, pb.ListMyMatchesRequest()),
        ("JoinMatch", stub.JoinMatch, pb.JoinMatchRequest(invite_code=invite_code)),
        ("FillSeatWithBot", stub.FillSeatWithBot, pb.FillSeatWithBotRequest(match_id=match_id)),
        ("StartMatch", stub.StartMatch, pb.StartMatchRequest(match_id=match_id)),
        # Covering "off" changes nothing for a seat that no bot covers, and answers a summary.
        ("SetCover", stub.SetCover, pb.SetCoverRequest(match_id=match_id, covered=False)),
    ]
    found: list[tuple[str, Any, grpc.RpcError | None]] = []
    for name, method, request in requests:
        try:
            found.append((name, method(request, metadata=metadata), None))
        except grpc.RpcError as error:
            found.append((name, None, error))
    watch = stub.Watch(pb.WatchRequest(match_ids=[match_id]), metadata=metadata, timeout=5)
    try:
        found.append(("Watch", next(iter(watch)), None))
    except grpc.RpcError as error:
        found.append(("Watch", None, error))
    finally:
        watch.cancel()
    return found


def test_a_blocked_player_gets_nothing_from_replays(
    app: App, players: Players, channel: grpc.Channel
) -> None:
    alice, bob = players("alice"), players("bob")
    created = alice.create_match(seat=0, bot_seats=[2, 3])
    bob.join_match(created.invite_code, seat=1)
    match_id = created.match.match_id
    _play(app, {0: alice, 1: bob}, match_id, moves=10)
    entries, _ = alice.full_history(match_id)
    mine = [e for e in entries if e.seat == 1]
    assert mine
    _block(app, bob)
    stranger = PlayerClient(channel)
    for entry in mine:
        request = pb.SubmitRequest(payload=entry.payload, signature=entry.signature)
        error = _refused(partial(bob.stub.Submit, request, metadata=bob.metadata))
        assert error.code() == grpc.StatusCode.UNAUTHENTICATED  # his token was revoked
        for metadata in ((), alice.metadata):
            error = _refused(partial(stranger.stub.Submit, request, metadata=metadata))
            assert error.code() == grpc.StatusCode.PERMISSION_DENIED
            assert "blocked" in (error.details() or "")


def test_a_move_with_a_token_of_someone_else_gets_no_view(
    app: App, players: Players, dump: Callable[[App], Any]
) -> None:
    """The token says who asks; the signature who moved. A fresh move sent with another
    player's token is stored (it is validly signed), but its view goes to nobody."""
    alice, bob = players("alice"), players("bob")
    match_id = alice.create_match(bot_seats=[1, 2, 3]).match.match_id
    app.bots.drain()
    view = alice.view(match_id)
    request = alice.envelope(view, ["deal"], deal_commitment=view.deal_commitment)
    response = alice.stub.Submit(request, metadata=bob.metadata)
    assert response.receipt.seq == view.version + 1
    assert not response.HasField("view")
    again = alice.stub.Submit(request, metadata=alice.metadata)
    assert again.receipt == response.receipt
    assert again.view.view.seat == 0
    bad_token = (("authorization", "Bearer not-a-token"),)
    app.bots.drain()
    before = dump(app)
    error = _refused(lambda: alice.stub.Submit(request, metadata=bad_token))
    assert error.code() == grpc.StatusCode.UNAUTHENTICATED
    assert dump(app) == before


# -- 2 and 3. options with no bound, or of the wrong type ------------------------------------

HOSTILE_OPTIONS: list[tuple[dict[str, str], int, str]] = [
    ({"jokers_per_deck": "2147483648"}, 0, "jokers_per_deck"),
    ({"decks": "200000"}, 0, "decks"),
    ({"red3_value": "3000000000"}, 0, "red3_value"),
    ({"target": "2147483648"}, 0, "target"),
    ({"target": "1e10"}, 0, "target"),
    ({}, 2_147_483_647, "target"),
    ({}, -5, "target"),
    ({"decks": "2.5"}, 0, "decks"),
    ({"hand_size": "2.5"}, 0, "hand_size"),
    ({"jokers_per_deck": "NaN"}, 0, "jokers_per_deck"),
    ({"going_out_bonus": "Infinity"}, 0, "going_out_bonus"),
    ({"ask_limit_per_hand": '"x"'}, 0, "ask_limit_per_hand"),
    ({"black3_freezes": "1"}, 0, "black3_freezes"),
    ({"players": "true"}, 0, "players"),
    ({"partnerships": "5"}, 0, "partnerships"),
    ({"partnerships": "[[0, 2], [1, true]]"}, 0, "partnerships"),
    ({"min_meld_table": "7"}, 0, "min_meld_table"),
    ({"min_meld_table": "[[null, 15], [0, 1e9]]"}, 0, "min_meld_table"),
    ({"min_meld_table": "[[null, 15]" + ", [0, 50]" * 50 + "]"}, 0, "min_meld_table"),
    ({"red3_special_totals": '{"4": 800}'}, 0, "red3_special_totals"),
    ({"unfrozen_take_methods": '"pair"'}, 0, "unfrozen_take_methods"),
    ({"wild_limit": "[]"}, 0, "wild_limit"),
    ({"ask_limit_per_hand": "[" * 100_000 + "]" * 100_000}, 0, "ask_limit_per_hand"),
    ({"x" * 10_000: "1"}, 0, "unknown rule option"),
]


@pytest.fixture(scope="module")
def refusing(module_make_app: AppFactory) -> Iterator[tuple[App, PlayerClient]]:
    """One server, and Alice on it, for all the hostile options and small-order keys, on each
    database: each test asserts that its refusal stored nothing, so none changes what the
    next one sees, and a new server for each cost more than the test."""
    app = module_make_app("refusing")
    with grpc.insecure_channel(f"127.0.0.1:{app.port}") as channel:
        yield app, PlayerClient(channel).join_server("alice")


@pytest.mark.parametrize(
    ("options", "target", "named"),
    HOSTILE_OPTIONS,
    ids=[f"{n}-{i}" for i, (_, _, n) in enumerate(HOSTILE_OPTIONS)],
)
def test_options_out_of_type_or_range_are_refused_and_store_nothing(
    refusing: tuple[App, PlayerClient],
    dump: Callable[[App], Any],
    options: dict[str, str],
    target: int,
    named: str,
) -> None:
    """Issue 10, parts 2 and 3: each value the attack used is INVALID_ARGUMENT naming the
    option, quickly, and no match is stored."""
    app, alice = refusing
    before = dump(app)
    started = time.perf_counter()
    error = _refused(lambda: alice.create_match(options=options, target=target, bot_seats=[1]))
    assert time.perf_counter() - started < 5
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    details = error.details() or ""
    assert named in details
    assert len(details) < 300
    assert dump(app) == before
    assert not alice.my_matches().matches


@pytest.mark.parametrize("after", [2**62, 2**63 - 1, 2**63, 2**64 - 1])
def test_history_after_any_seq_is_an_empty_page(app: App, players: Players, after: int) -> None:
    alice = players("alice")
    match_id = alice.create_match(bot_seats=[1, 2, 3]).match.match_id
    page = alice.history(match_id, after_seq=after)
    assert not page.entries
    assert not page.more


# -- 4. small-order keys ------------------------------------------------------------------------


@pytest.mark.parametrize("weak", SMALL_ORDER, ids=[k.hex()[:8] for k in SMALL_ORDER])
def test_small_order_keys_cannot_register_or_sign_in(
    refusing: tuple[App, PlayerClient], dump: Callable[[App], Any], weak: bytes
) -> None:
    """Issue 10, part 4. The identity point with the "signature" 01 00..00 verified over any
    registration before the fix."""
    app, alice = refusing
    client = PlayerClient(alice.channel)
    payload = pb.RegisterPayload(
        public_key=weak, display_name="mallory", server_public_key=client.server_key
    ).SerializeToString()
    universal = bytes([1]) + bytes(63)
    before = dump(app)
    error = _refused(
        lambda: client.stub.Register(pb.RegisterRequest(payload=payload, signature=universal))
    )
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "small order" in (error.details() or "")
    error = _refused(lambda: client.stub.Challenge(pb.ChallengeRequest(public_key=weak)))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert dump(app) == before


# -- 5. undecodable messages --------------------------------------------------------------------

SERVICE = pb.DESCRIPTOR.services_by_name["Canasta"]


@pytest.fixture(scope="module")
def undecoding(module_make_app: AppFactory) -> Iterator[grpc.Channel]:
    """A channel to one server for all the undecodable requests, on each database (a server
    of their own: each counts the log lines that name its method, which no other test of
    theirs names)."""
    app = module_make_app("undecoding")
    with grpc.insecure_channel(f"127.0.0.1:{app.port}") as channel:
        yield channel


@pytest.mark.parametrize("method", [m.name for m in SERVICE.methods])
def test_undecodable_requests_are_invalid_argument_with_one_log_line(
    undecoding: grpc.Channel, caplog: pytest.LogCaptureFixture, method: str
) -> None:
    """Issue 10, part 5: gRPC itself answered UNKNOWN with a traceback per request."""
    channel = undecoding
    path = f"/{SERVICE.full_name}/{method}"
    streaming = SERVICE.methods_by_name[method].server_streaming
    garbage = b"\xff\xff\xff\xff\x0f"  # a varint that never ends
    caplog.set_level("INFO", logger="canasta.server")
    if streaming:
        stream = channel.unary_stream(path)(garbage, timeout=5)
        error = _refused(lambda: next(iter(stream)))
    else:
        error = _refused(lambda: channel.unary_unary(path)(garbage, timeout=5))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert method in (error.details() or "")
    deadline = time.monotonic() + 5
    while f"{method} INVALID_ARGUMENT" not in caplog.text and time.monotonic() < deadline:
        time.sleep(0.01)
    lines = [r for r in caplog.records if method in r.getMessage()]
    assert len(lines) == 1
    assert "127.0.0.1" in lines[0].getMessage()
    assert "Traceback" not in caplog.text
    assert not any(r.exc_info for r in caplog.records)


# -- 6. a blocked player's open stream ----------------------------------------------------------


@pytest.mark.parametrize("how", ["block", "revoke"])
def test_blocking_or_revoking_ends_open_watch_streams_at_once(
    app: App, players: Players, how: str
) -> None:
    alice = players("alice")
    match_id = alice.create_match(bot_seats=[1, 2, 3]).match.match_id
    stream = alice.watch([match_id], timeout=30)
    assert next(iter(stream)).match_id == match_id
    if how == "block":
        _block(app, alice)
    else:  # the token alone goes (as an expired token's purge does), the player stays
        with app.db.write() as session:
            repo = Repository(session, b"")
            repo.purge_expired(now=2**62)
    started = time.monotonic()
    error = _refused(lambda: next(iter(stream)))
    assert time.monotonic() - started < 3  # within a feed round or two, not the token's hour
    expected = (
        grpc.StatusCode.PERMISSION_DENIED if how == "block" else grpc.StatusCode.UNAUTHENTICATED
    )
    assert error.code() in (expected, grpc.StatusCode.UNAUTHENTICATED)


# -- 7. floods ----------------------------------------------------------------------------------


def test_calls_without_a_token_are_limited_per_address(make_app: AppFactory) -> None:
    app = make_app(limit_anonymous_per_minute=6)
    with grpc.insecure_channel(f"127.0.0.1:{app.port}") as channel:
        alice = PlayerClient(channel).join_server("alice")  # 3 counted: register, sign in (2)
        stub = alice.stub
        stub.Challenge(pb.ChallengeRequest(public_key=alice.public_key))
        stub.Challenge(pb.ChallengeRequest(public_key=alice.public_key))
        stub.Challenge(pb.ChallengeRequest(public_key=alice.public_key))
        error = _refused(lambda: stub.Challenge(pb.ChallengeRequest(public_key=alice.public_key)))
        assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "at most 6 a minute" in (error.details() or "")
        assert alice.my_matches() is not None  # signed-in reads are not counted


def test_challenges_per_key_are_bounded_and_nobody_can_lock_a_player_out(
    make_app: AppFactory,
) -> None:
    """A key holds at most ``limit_live_challenges``; asking for more drops the oldest
    instead of refusing, since anyone may ask in a player's name (public keys are public)."""
    app = make_app(limit_live_challenges=3)
    with grpc.insecure_channel(f"127.0.0.1:{app.port}") as channel:
        alice = PlayerClient(channel)
        alice.register("alice")
        request = pb.ChallengeRequest(public_key=alice.public_key)
        mallory = PlayerClient(channel)
        oldest = alice.stub.Challenge(request).challenge
        for _ in range(10):  # Mallory asks in Alice's name, over and over
            mallory.stub.Challenge(request)
        with app.db.read() as session:
            rows = session.exec(select(ChallengeRow)).all()
        assert len(rows) == 3
        error = _refused(lambda: alice.stub.Authenticate(alice.answer(oldest)))
        assert error.code() == grpc.StatusCode.UNAUTHENTICATED
        fresh = alice.stub.Challenge(request).challenge  # Alice is never refused one
        assert alice.stub.Authenticate(alice.answer(fresh)).token


def test_made_up_tokens_are_limited_per_address_and_valid_ones_still_served(
    make_app: AppFactory,
) -> None:
    """Each token that is not valid costs its address; once that is used up, its failures
    are refused as a flood. A valid token from the same address is still served: behind a
    load balancer every player has one address, and one flooder must not lock them out."""
    app = make_app(limit_anonymous_per_minute=5)
    with grpc.insecure_channel(f"127.0.0.1:{app.port}") as channel:
        alice = PlayerClient(channel).join_server("alice")
        stub = alice.stub
        codes = []
        for n in range(8):
            metadata = (("authorization", f"Bearer made-up-{n}"),)
            try:
                stub.ListMyMatches(pb.ListMyMatchesRequest(), metadata=metadata)
            except grpc.RpcError as error:
                codes.append(error.code())
        assert codes[:5] == [grpc.StatusCode.UNAUTHENTICATED] * 5
        assert codes[5:] == [grpc.StatusCode.RESOURCE_EXHAUSTED] * 3
        assert alice.my_matches() is not None  # her valid token, from the same address
        assert alice.create_match(bot_seats=[1, 2, 3]).match.match_id


def test_server_info_is_never_limited(make_app: AppFactory) -> None:
    """Every CLI command asks for it first; it reads no database, so it is not counted."""
    app = make_app(limit_anonymous_per_minute=2)
    with grpc.insecure_channel(f"127.0.0.1:{app.port}") as channel:
        stub = PlayerClient(channel).stub
        for _ in range(20):
            assert stub.GetServerInfo(pb.GetServerInfoRequest()).server_public_key


def test_writes_are_limited_per_player_and_replays_spend_the_senders_allowance(
    make_app: AppFactory, dump: Callable[[App], Any]
) -> None:
    app = make_app(limit_writes_per_minute=4)
    with grpc.insecure_channel(f"127.0.0.1:{app.port}") as channel:
        alice = PlayerClient(channel).join_server("alice")
        match_id = alice.create_match(bot_seats=[1, 2, 3]).match.match_id  # write 1
        app.bots.drain()
        view = alice.view(match_id)
        cut = alice.envelope(view, ["deal"], deal_commitment=view.deal_commitment)
        alice.stub.Submit(cut, metadata=alice.metadata)  # write 2
        # A flooder resends her envelope without a token: counted against its own address.
        flooder = PlayerClient(channel)
        for _ in range(4):
            flooder.stub.Submit(cut)
        error = _refused(lambda: flooder.stub.Submit(cut))
        assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        alice.create_match(bot_seats=[1, 2, 3])  # write 3
        alice.create_match(bot_seats=[1, 2, 3])  # write 4
        app.bots.drain()
        before = dump(app)
        error = _refused(lambda: alice.create_match(bot_seats=[1, 2, 3]))
        assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "a minute" in (error.details() or "")
        assert dump(app) == before


def test_reads_are_limited_per_player_and_a_flood_of_them_starves_nobody(
    make_app: AppFactory,
) -> None:
    """Issue 25's flood: one account asking for its match list from three threads. Its reads
    run out (``RESOURCE_EXHAUSTED``); another player's views are served all along."""
    app = make_app(limit_reads_per_minute=20)
    with (
        grpc.insecure_channel(f"127.0.0.1:{app.port}") as flooding,
        grpc.insecure_channel(f"127.0.0.1:{app.port}") as playing,
    ):
        mallory = PlayerClient(flooding).join_server("mallory")
        bob = PlayerClient(playing).join_server("bob")
        match_id = bob.create_match(bot_seats=[1, 2, 3]).match.match_id
        codes: list[grpc.StatusCode] = []
        details: list[str] = []

        def flood() -> None:
            for _ in range(15):
                try:
                    mallory.my_matches()
                    codes.append(grpc.StatusCode.OK)
                except grpc.RpcError as error:
                    codes.append(error.code())
                    details.append(error.details() or "")

        threads = [threading.Thread(target=flood) for _ in range(3)]
        for thread in threads:
            thread.start()
        views = [bob.view(match_id).match.match_id for _ in range(5)]
        for thread in threads:
            thread.join()
        assert views == [match_id] * 5
        assert set(codes) == {grpc.StatusCode.OK, grpc.StatusCode.RESOURCE_EXHAUSTED}
        assert 20 <= codes.count(grpc.StatusCode.OK) < 25  # the burst, and what refilled
        assert "at most 20 a minute" in details[0]


def test_open_matches_per_player_are_limited(
    make_app: AppFactory, dump: Callable[[App], Any]
) -> None:
    app = make_app(limit_open_matches=2)
    with grpc.insecure_channel(f"127.0.0.1:{app.port}") as channel:
        alice = PlayerClient(channel).join_server("alice")
        bob = PlayerClient(channel).join_server("bob")
        alice.create_match()
        alice.create_match()
        invite = bob.create_match().invite_code
        app.bots.drain()
        before = dump(app)
        for call in (lambda: alice.create_match(), lambda: alice.join_match(invite)):
            error = _refused(call)
            assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "unfinished matches" in (error.details() or "")
        assert dump(app) == before


def test_register_with_a_valid_signature_is_still_counted(make_app: AppFactory) -> None:
    """A flood of fresh keys, each registration validly signed, stops at the address limit."""
    app = make_app(limit_anonymous_per_minute=9)
    with grpc.insecure_channel(f"127.0.0.1:{app.port}") as channel:
        first = PlayerClient(channel)
        codes = []
        for n in range(12):
            request = protocol.register_request(
                generate_private_key(), first.server_key, f"flood {n}"
            )
            try:
                first.stub.Register(request)
                codes.append(grpc.StatusCode.OK)
            except grpc.RpcError as error:
                codes.append(error.code())
        assert codes.count(grpc.StatusCode.OK) == 9
        assert set(codes) == {grpc.StatusCode.OK, grpc.StatusCode.RESOURCE_EXHAUSTED}


def test_watch_streams_per_player_are_limited(make_app: AppFactory) -> None:
    app = make_app(limit_watch_streams=2)
    with grpc.insecure_channel(f"127.0.0.1:{app.port}") as channel:
        alice = PlayerClient(channel).join_server("alice")
        bob = PlayerClient(channel).join_server("bob")
        match_id = alice.create_match(bot_seats=[1, 2, 3]).match.match_id
        streams = [alice.watch([match_id], timeout=30) for _ in range(2)]
        for stream in streams:
            assert next(iter(stream)).match_id == match_id
        third = alice.watch([match_id], timeout=30)
        error = _refused(lambda: next(iter(third)))
        assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        bobs_match = bob.create_match(bot_seats=[1, 2, 3]).match.match_id
        bobs = bob.watch([bobs_match], timeout=30)  # another player is not affected
        assert next(iter(bobs)).match_id == bobs_match
        for stream in [*streams, bobs]:
            stream.cancel()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:  # a closed stream frees its place
            again = alice.watch([match_id], timeout=30)
            try:
                assert next(iter(again)).match_id == match_id
                again.cancel()
                return
            except grpc.RpcError:
                time.sleep(0.05)
        raise AssertionError("closing streams did not free their places")


@pytest.mark.parametrize("length", [65, 10_000, 500_000])
def test_a_long_match_id_is_not_found_and_not_echoed(
    app: App, players: Players, length: int
) -> None:
    alice = players("alice")
    long_id = "x" * length
    for call in (
        lambda: alice.view(long_id),
        lambda: alice.history(long_id),
        lambda: alice.fill_with_bot(long_id),
    ):
        error = _refused(call)
        assert error.code() == grpc.StatusCode.NOT_FOUND
        assert len(error.details() or "") < 200


# -- 8. connections ---------------------------------------------------------------------------


def test_one_address_holding_idle_connections_starves_nobody(tmp_path: Path) -> None:
    """The attack of issue 25: one peer opens more idle connections than the server has file
    descriptors. The server here runs with 400 (``prlimit``) as the unit's 1,024 would be:
    without caps it accepts until it runs out and then answers nobody. With them the peer
    keeps ``max_connections_per_peer``, the rest are closed at once, one log line says so,
    and another client is served meanwhile."""
    (tmp_path / "none.toml").write_text("")
    env = {
        **os.environ,
        "CANASTA_SERVER_CONFIG": str(tmp_path / "none.toml"),
        "CANASTA_SERVER_MAX_CONNECTIONS": "48",
        "CANASTA_SERVER_MAX_CONNECTIONS_PER_PEER": "8",
        "CANASTA_SERVER_HANDSHAKE_SECONDS": "60",  # the flood stays as long as it can
    }
    data = tmp_path / "server"
    command = ("prlimit", "--nofile=400:400", sys.executable, "-m", "server")
    server, port = start_server_process(data, env=env, command=command)
    try:
        flood = idle_connections(port, 500)
        try:
            with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
                stub = PlayerClient(channel).stub
                assert stub.GetServerInfo(pb.GetServerInfoRequest(), timeout=10).server_public_key
                alice = PlayerClient(channel).join_server("alice")
                assert alice.create_match(bot_seats=[1, 2, 3]).match.match_id
            assert closed_by_server(flood, at_least=500 - 8) == 500 - 8
        finally:
            close_all(flood)
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(30) == 0
    lines = refusal_lines(data / "server.log", "gRPC")
    assert len(lines) == 1, lines  # once a minute per address, not once per connection
    assert "from ipv4:127.0.0.2" in lines[0]
    assert "8 connections are open" in lines[0]


@pytest.mark.parametrize("engine", ["sqlite"])
def test_through_the_gate_the_limits_and_the_log_see_the_real_peer(
    app: App, caplog: pytest.LogCaptureFixture
) -> None:
    """gRPC sees every connection coming from the gate's own loopback socket; the servicer
    and the log must name the peer behind it (else every player would share one address's
    allowances)."""
    caplog.set_level(logging.INFO, logger="canasta.server")
    gate = app.server.gate
    assert gate is not None
    with grpc.insecure_channel(f"127.0.0.1:{app.port}") as channel:
        stub = PlayerClient(channel).stub
        _refused(lambda: stub.GetView(pb.GetViewRequest(match_id="m")))  # no token
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # logged as the handler ends, maybe a moment later
            lines = [
                r.getMessage()
                for r in caplog.records
                if "GetView UNAUTHENTICATED" in r.getMessage()
            ]
            if lines:
                break
            time.sleep(0.02)
        peer = lines[0].rsplit(" ", 1)[1]
        assert peer in gate.origin.values()  # the client's own address and port
        assert peer not in gate.origin  # not the gate's socket


@pytest.mark.parametrize("engine", ["sqlite"])
@pytest.mark.parametrize("per_peer", [0, 8])
def test_grpc_closes_connections_past_the_cap_and_silent_or_idle_ones(
    make_app: AppFactory, per_peer: int
) -> None:
    """gRPC's own channel arguments (``connection_options``) take effect, with and without the
    gate: a misspelt one would be ignored without a word."""
    app = make_app(max_connections=3, max_connections_per_peer=per_peer, handshake_seconds=60)
    flood = idle_connections(app.port, 5, source="127.0.0.1")
    try:
        assert closed_by_server(flood, at_least=2) == 2  # past the total cap: at once
    finally:
        close_all(flood)
    app = make_app(
        "quick", max_connections_per_peer=per_peer, handshake_seconds=0.3, idle_connection_seconds=1
    )
    silent = idle_connections(app.port, 1, source="127.0.0.1")
    # A client that finished the HTTP/2 handshake (preface, settings, settings ack) and then
    # makes no call: closed as idle.
    idle = idle_connections(app.port, 1, source="127.0.0.1")
    idle[0].sendall(HTTP2_PREFACE + SETTINGS + SETTINGS_ACK)
    try:
        assert closed_by_server(silent, at_least=1) == 1
        assert closed_by_server(idle, at_least=1) == 1
    finally:
        close_all(silent + idle)


HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
SETTINGS = bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])  # an empty SETTINGS frame
SETTINGS_ACK = bytes([0, 0, 0, 4, 1, 0, 0, 0, 0])
