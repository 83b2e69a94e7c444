"""Registration and read authentication over real gRPC: open and invitation-only, challenges,
tokens, and every way a credential can be expired, replayed, foreign or blocked."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import grpc
import pytest

from server.app import App
from server.store.repository import Repository
from shared import protocol
from shared.pb import canasta_pb2 as pb
from tests.testkit import PlayerClient

from .conftest import AppFactory


def _code(call: Callable[[], object]) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as info:
        call()
    return info.value.code(), info.value.details()


def test_server_info_names_keys_and_presets(channel: grpc.Channel, app: App) -> None:
    client = PlayerClient(channel)
    info = client.stub.GetServerInfo(pb.GetServerInfoRequest())
    assert info.server_public_key == app.service.ctx.keys.server_public
    assert info.bot_public_key == app.service.ctx.keys.bot_public
    assert info.registration == pb.REGISTRATION_MODE_OPEN
    names = {p.name: p.players for p in info.presets}
    assert names["classic"] == 4
    assert names["two_player"] == 2
    assert names["hand_and_foot"] == 4  # the lobby offers every preset (docs/rules.md §3.7 too)
    options = {o.name for o in info.options}
    assert "wild_limit" in options
    assert {"foot_size", "pile_take_count", "min_meld_by_hand", "hands_per_match"} <= options


def test_register_then_authenticate(channel: grpc.Channel) -> None:
    client = PlayerClient(channel)
    player = client.register("Alice", email="alice@example.org").player
    assert player.display_name == "Alice"
    assert player.public_key == client.public_key
    token = client.login()
    assert token
    assert client.my_matches().matches == []


def test_registering_twice_is_refused(channel: grpc.Channel) -> None:
    client = PlayerClient(channel)
    client.register("Alice")
    code, message = _code(lambda: client.register("Alice again"))
    assert code == grpc.StatusCode.ALREADY_EXISTS
    assert "already registered" in message


def test_registration_needs_a_valid_signature(channel: grpc.Channel) -> None:
    client = PlayerClient(channel)
    request = client.registration("Mallory")
    forged = pb.RegisterRequest(payload=request.payload, signature=bytes(64))
    code, _ = _code(lambda: client.stub.Register(forged))
    assert code == grpc.StatusCode.UNAUTHENTICATED
    other = PlayerClient(channel)  # a signature by someone else's key
    stolen = pb.RegisterRequest(
        payload=request.payload, signature=other.registration("x").signature
    )
    assert _code(lambda: client.stub.Register(stolen))[0] == grpc.StatusCode.UNAUTHENTICATED


def test_registration_for_another_server_is_refused(channel: grpc.Channel) -> None:
    client = PlayerClient(channel)
    request = client.registration("Alice", server_key=bytes(32))
    code, message = _code(lambda: client.stub.Register(request))
    assert code == grpc.StatusCode.UNAUTHENTICATED
    assert "another server" in message


@pytest.mark.parametrize("name", ["", "   ", "x" * 41, "tab\there"])
def test_bad_display_names_are_refused(channel: grpc.Channel, name: str) -> None:
    client = PlayerClient(channel)
    code, message = _code(lambda: client.register(name))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert "display name" in message


def test_invitation_only_registration(make_app: AppFactory) -> None:
    app = make_app(registration="invite")
    now = app.service.ctx.clock()
    with app.db.write() as session:
        Repository(session, b"").add_invitation("welcome-1", now, now + 60_000)
    with grpc.insecure_channel(f"127.0.0.1:{app.port}") as channel:
        first = PlayerClient(channel)
        code, message = _code(lambda: first.register("No code"))
        assert code == grpc.StatusCode.PERMISSION_DENIED
        assert "invitation" in message
        assert first.register("Invited", invitation="welcome-1").player.display_name == "Invited"
        second = PlayerClient(channel)  # each code works once
        code, _ = _code(lambda: second.register("Also", invitation="welcome-1"))
        assert code == grpc.StatusCode.PERMISSION_DENIED


def test_reads_need_a_token(channel: grpc.Channel, players: Callable[..., PlayerClient]) -> None:
    alice = players("alice")
    alice.token = ""
    code, message = _code(alice.my_matches)
    assert code == grpc.StatusCode.UNAUTHENTICATED
    assert "token" in message
    alice.token = "made-up"
    assert _code(alice.my_matches)[0] == grpc.StatusCode.UNAUTHENTICATED


def test_a_challenge_works_once(channel: grpc.Channel) -> None:
    client = PlayerClient(channel)
    client.register("Alice")
    challenge = client.stub.Challenge(pb.ChallengeRequest(public_key=client.public_key))
    answer = client.answer(challenge.challenge)
    assert client.stub.Authenticate(answer).token
    code, message = _code(lambda: client.stub.Authenticate(answer))
    assert code == grpc.StatusCode.UNAUTHENTICATED
    assert "already used" in message


def test_challenge_signed_for_another_server_or_by_another_key(channel: grpc.Channel) -> None:
    client = PlayerClient(channel)
    client.register("Alice")
    other = PlayerClient(channel)
    other.register("Bob")
    challenge = client.stub.Challenge(pb.ChallengeRequest(public_key=client.public_key))
    foreign = client.answer(challenge.challenge, server_key=bytes(32))
    assert _code(lambda: client.stub.Authenticate(foreign))[0] == grpc.StatusCode.UNAUTHENTICATED
    # Any answer uses the challenge up, a wrong one too: no second guess (issue 10, part 7).
    code, message = _code(lambda: client.stub.Authenticate(client.answer(challenge.challenge)))
    assert code == grpc.StatusCode.UNAUTHENTICATED
    assert "already used" in message
    second = client.stub.Challenge(pb.ChallengeRequest(public_key=client.public_key))
    by_bob = other.answer(second.challenge)  # Bob answers Alice's challenge
    assert _code(lambda: client.stub.Authenticate(by_bob))[0] == grpc.StatusCode.UNAUTHENTICATED
    third = client.stub.Challenge(pb.ChallengeRequest(public_key=client.public_key))
    assert client.stub.Authenticate(client.answer(third.challenge)).token


def test_unregistered_keys_get_no_challenge(channel: grpc.Channel) -> None:
    client = PlayerClient(channel)
    code, message = _code(
        lambda: client.stub.Challenge(pb.ChallengeRequest(public_key=client.public_key))
    )
    assert code == grpc.StatusCode.NOT_FOUND
    assert "register first" in message
    bad = pb.ChallengeRequest(public_key=b"short")
    assert _code(lambda: client.stub.Challenge(bad))[0] == grpc.StatusCode.INVALID_ARGUMENT


def test_expired_challenge_and_expired_token(app: App, channel: grpc.Channel) -> None:
    ctx = app.service.ctx
    real_clock = ctx.clock
    client = PlayerClient(channel)
    client.register("Alice")
    challenge = client.stub.Challenge(pb.ChallengeRequest(public_key=client.public_key))
    later = real_clock() + (app.config.challenge_ttl_seconds + 1) * 1000
    ctx.clock = lambda: later
    try:
        code, message = _code(lambda: client.stub.Authenticate(client.answer(challenge.challenge)))
    finally:
        ctx.clock = real_clock
    assert code == grpc.StatusCode.UNAUTHENTICATED
    assert "expired" in message
    client.login()
    assert client.my_matches() is not None
    much_later = real_clock() + (app.config.token_ttl_seconds + 1) * 1000
    ctx.clock = lambda: much_later
    try:
        code, message = _code(client.my_matches)
    finally:
        ctx.clock = real_clock
    assert code == grpc.StatusCode.UNAUTHENTICATED
    assert "expired" in message


def test_a_token_from_another_server_is_refused(make_app: AppFactory) -> None:
    first, second = make_app("first"), make_app("second")
    with (
        grpc.insecure_channel(f"127.0.0.1:{first.port}") as one,
        grpc.insecure_channel(f"127.0.0.1:{second.port}") as two,
    ):
        alice = PlayerClient(one).join_server("alice")
        elsewhere = PlayerClient(two, key=alice.key)
        elsewhere.register("alice")
        elsewhere.token = alice.token
        code, _ = _code(elsewhere.my_matches)
        assert code == grpc.StatusCode.UNAUTHENTICATED


def test_a_blocked_key_is_refused_everywhere(
    app: App, channel: grpc.Channel, players: Callable[..., PlayerClient]
) -> None:
    alice = players("alice")
    bob = players("bob")
    match = alice.create_match(bot_seats=[2, 3]).match
    bob.join_match(alice.create_match().invite_code)
    view = alice.view(match.match_id)
    with app.db.write() as session:
        repo = Repository(session, b"")
        player = repo.player_by_key(alice.public_key)
        assert player is not None
        repo.set_blocked(player.id, True)
    refused = [
        lambda: alice.my_matches(),
        lambda: alice.view(match.match_id),
        lambda: alice.stub.Challenge(pb.ChallengeRequest(public_key=alice.public_key)),
        lambda: alice.register("again"),
        lambda: alice.deal(view),
    ]
    for call in refused:
        code, _ = _code(call)
        assert code in (grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.UNAUTHENTICATED)
    # A move sent without a token (its signature is its credential) says why.
    cut = protocol.deal_request(
        alice.key, view.match.match_id, view.view.seat, view.version, view.head_hash,
        view.deal_commitment,
    )  # fmt: skip
    code, message = _code(lambda: alice.stub.Submit(cut))
    assert code == grpc.StatusCode.PERMISSION_DENIED
    assert "blocked" in message
    assert bob.my_matches().matches  # others are unaffected


def test_tokens_are_stored_only_as_their_hash(
    app: App, channel: grpc.Channel, dump: Callable[[App], list[str]]
) -> None:
    """A copy of the database (a backup, a leak) holds no usable token: only its SHA-256
    (docs/trust.md: identity)."""
    client = PlayerClient(channel)
    client.register("Alice")
    token = client.login()
    rows = "\n".join(dump(app))
    assert token not in rows
    digest = hashlib.sha256(token.encode()).digest()
    assert digest.hex() in rows.lower() or repr(digest) in rows
