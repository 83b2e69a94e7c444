"""Every bad input gets the right status and a clear message, and changes no database row."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import grpc
import pytest

from server.app import App
from shared.pb import canasta_pb2 as pb
from shared.rules import card_text, parse_card
from tests.testkit import PlayerClient

from .conftest import AppFactory

Build = Callable[["Table"], pb.SubmitRequest]


@dataclass
class Table:
    """Alice (seat 0) is to draw; Bob is her partner (seat 2); bots hold seats 1 and 3."""

    app: App
    alice: PlayerClient
    bob: PlayerClient
    view: pb.MatchView

    @property
    def card(self) -> str:
        return card_text(parse_card(self.view.view.hand[0]))


@pytest.fixture
def table(app: App, players: Callable[..., PlayerClient]) -> Table:
    return _alice_to_draw(app, players("alice"), players("bob"))


@pytest.fixture(scope="module")
def unchanged_table(module_make_app: AppFactory) -> Iterator[Table]:
    """One table for all of ``test_bad_submission``'s cases, on each database: each case
    asserts that its refusal changed no row, so none changes what the next one sees, and
    getting a match to Alice's draw costs more than a case."""
    app = module_make_app()
    with grpc.insecure_channel(f"127.0.0.1:{app.port}") as channel:
        alice, bob = (
            PlayerClient(channel).join_server("alice"),
            PlayerClient(channel).join_server("bob"),
        )
        yield _alice_to_draw(app, alice, bob)


def _alice_to_draw(app: App, alice: PlayerClient, bob: PlayerClient) -> Table:
    """A new match of Alice, Bob and two bots, played on until Alice is to draw."""
    created = alice.create_match(seat=0, bot_seats=[1, 3])
    bob.join_match(created.invite_code, seat=2)
    match_id = created.match.match_id
    for _ in range(50):
        app.bots.drain()
        view = alice.view(match_id)
        if view.match.to_act == 0 and view.view.phase == pb.PHASE_DRAW:
            return Table(app, alice, bob, view)
        seat = view.match.to_act
        client = alice if seat == 0 else bob
        view = client.view(match_id)
        if view.HasField("dealing_seat"):
            client.deal(view)
        elif view.view.phase == pb.PHASE_DRAW:  # bob's turn: keep it simple and short
            client.submit(view, ["draw"])
        else:
            client.submit(view, [f"discard {client.view(match_id).view.hand[0]}"])
    raise AssertionError("alice never got to draw")


def _flip(data: bytes) -> bytes:
    return data[:-1] + bytes([data[-1] ^ 1])


CASES: dict[str, tuple[Build, grpc.StatusCode, str]] = {
    "malformed card": (
        lambda t: t.alice.envelope(t.view, ["discard zz"]),
        grpc.StatusCode.INVALID_ARGUMENT,
        "could not read the card",
    ),
    "unknown action word": (
        lambda t: t.alice.envelope(t.view, ["shuffle"]),
        grpc.StatusCode.INVALID_ARGUMENT,
        "unknown action",
    ),
    "illegal move (discard before drawing)": (
        lambda t: t.alice.envelope(t.view, [f"discard {t.card}"]),
        grpc.StatusCode.FAILED_PRECONDITION,
        "draw first",
    ),
    "illegal step inside a whole turn": (
        lambda t: t.alice.envelope(t.view, ["draw", "meld 4h 4h 4h 4h 4h"]),
        grpc.StatusCode.FAILED_PRECONDITION,
        "step 2",
    ),
    "wrong turn": (
        lambda t: t.bob.envelope(t.view, ["draw"], seat=2),
        grpc.StatusCode.FAILED_PRECONDITION,
        "not your turn",
    ),
    "cut when no deal is due": (
        lambda t: t.alice.envelope(t.view, ["deal"]),
        grpc.StatusCode.FAILED_PRECONDITION,
        "no hand to deal",
    ),
    "stale seq": (
        lambda t: t.alice.envelope(t.view, ["draw"], seq=t.view.version),
        grpc.StatusCode.ABORTED,
        "stale",
    ),
    "future seq": (
        lambda t: t.alice.envelope(t.view, ["draw"], seq=t.view.version + 2),
        grpc.StatusCode.ABORTED,
        "ahead",
    ),
    "unknown match": (
        lambda t: t.alice.envelope(t.view, ["draw"], match_id="no-such-match"),
        grpc.StatusCode.NOT_FOUND,
        "no match",
    ),
    "no such seat": (
        lambda t: t.alice.envelope(t.view, ["draw"], seat=9),
        grpc.StatusCode.INVALID_ARGUMENT,
        "no seat 9",
    ),
    "bad signature": (
        lambda t: pb.SubmitRequest(
            payload=(e := t.alice.envelope(t.view, ["draw"])).payload,
            signature=_flip(e.signature),
        ),
        grpc.StatusCode.UNAUTHENTICATED,
        "signature",
    ),
    "foreign signature (partner signs for alice)": (
        lambda t: t.alice.envelope(t.view, ["draw"], signer=t.bob.key),
        grpc.StatusCode.UNAUTHENTICATED,
        "signature",
    ),
    "signed as a bot seat": (
        lambda t: t.alice.envelope(t.view, ["draw"], seat=1),
        grpc.StatusCode.UNAUTHENTICATED,
        "seat 1",
    ),
    "wrong prev_hash": (
        lambda t: t.alice.envelope(t.view, ["draw"], prev_hash=bytes(32)),
        grpc.StatusCode.FAILED_PRECONDITION,
        "prev_hash",
    ),
    "garbage payload": (
        lambda t: pb.SubmitRequest(payload=b"\xff\xff\xff", signature=bytes(64)),
        grpc.StatusCode.INVALID_ARGUMENT,
        "MovePayload",
    ),
    "no action": (
        lambda t: t.alice.envelope(t.view, []),
        grpc.StatusCode.INVALID_ARGUMENT,
        "no action",
    ),
    "too many actions": (
        lambda t: t.alice.envelope(t.view, ["draw"] * 65),
        grpc.StatusCode.INVALID_ARGUMENT,
        "at most",
    ),
    "commitment on an ordinary move": (
        lambda t: t.alice.envelope(t.view, ["draw"], deal_commitment=bytes(32)),
        grpc.StatusCode.INVALID_ARGUMENT,
        "commitment",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_submission(
    unchanged_table: Table, dump: Callable[[App], list[str]], case: str
) -> None:
    table = unchanged_table
    build, code, words = CASES[case]
    request = build(table)
    before = dump(table.app)
    with pytest.raises(grpc.RpcError) as info:
        table.alice.stub.Submit(request)
    assert info.value.code() == code, info.value.details()
    message = info.value.details()
    assert words in message
    assert "Traceback" not in message
    assert dump(table.app) == before
    trailer = dict(info.value.trailing_metadata() or ())
    assert trailer.get("canasta-error")
    if code == grpc.StatusCode.ABORTED:
        assert trailer["canasta-version"] == str(table.view.version)


def test_nul_characters_are_refused_cleanly(table: Table, dump: Callable[[App], list[str]]) -> None:
    """PostgreSQL cannot take a NUL in text at all (SQLite can): an id or e-mail holding one
    is a bad request on every engine, never an internal error."""
    alice, view = table.alice, table.view
    calls: list[Callable[[], object]] = [
        lambda: alice.stub.Submit(alice.envelope(view, ["draw"], match_id="m\x00")),
        lambda: alice.view("m\x00"),
        lambda: alice.history("m\x00"),
        lambda: alice.join_match("code\x00"),
        lambda: alice.fill_with_bot("m\x00"),
        lambda: PlayerClient(alice.channel).register("Nul", email="a\x00@example.org"),
    ]
    before = dump(table.app)
    for call in calls:
        with pytest.raises(grpc.RpcError) as info:
            call()
        assert info.value.code() in (
            grpc.StatusCode.INVALID_ARGUMENT,
            grpc.StatusCode.NOT_FOUND,
        ), info.value.details()
    assert dump(table.app) == before


def test_the_move_still_works_after_all_that(table: Table) -> None:
    response = table.alice.submit(table.view, ["draw"])
    assert response.receipt.seq == table.view.version + 1


def test_oversized_message(table: Table, dump: Callable[[App], list[str]]) -> None:
    before = dump(table.app)
    request = pb.SubmitRequest(payload=b"x" * (table.app.config.max_message_bytes + 1))
    with pytest.raises(grpc.RpcError) as info:
        table.alice.stub.Submit(request)
    assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert dump(table.app) == before
    big = pb.SubmitRequest(payload=b"x" * 100_000, signature=bytes(64))
    with pytest.raises(grpc.RpcError) as info:
        table.alice.stub.Submit(big)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert dump(table.app) == before


def test_bad_cuts(
    app: App, players: Callable[..., PlayerClient], dump: Callable[..., object]
) -> None:
    alice, bob = players("alice"), players("bob")
    created = alice.create_match(seat=0, bot_seats=[1, 3])
    bob.join_match(created.invite_code, seat=2)
    view = alice.view(created.match.match_id)
    cutter = {0: alice, 2: bob}[view.dealing_seat]
    other = bob if cutter is alice else alice
    view = cutter.view(created.match.match_id)
    before = dump(app)
    wrong = cutter.envelope(view, ["deal"], deal_commitment=bytes(32))
    with pytest.raises(grpc.RpcError) as info:
        cutter.stub.Submit(wrong)
    assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "commitment" in info.value.details()
    other_view = other.view(created.match.match_id)
    with pytest.raises(grpc.RpcError) as info:
        other.deal(other_view)
    assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "cuts the deck" in info.value.details()
    with pytest.raises(grpc.RpcError) as info:
        cutter.submit(view, ["draw"])
    assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert dump(app) == before
    assert cutter.deal(view).receipt.seq == 1


def test_unexpected_errors_become_internal_without_details(
    table: Table, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(payload: bytes, signature: bytes, viewer: object, **_: object) -> None:
        raise RuntimeError("database password is hunter2")

    monkeypatch.setattr(table.app.service.play, "submit", broken)
    with pytest.raises(grpc.RpcError) as info:
        table.alice.submit(table.view, ["draw"])
    assert info.value.code() == grpc.StatusCode.INTERNAL
    assert "hunter2" not in info.value.details()
    assert "reference" in info.value.details()
    assert "hunter2" in caplog.text  # the operator's log has it


@pytest.mark.parametrize(
    ("request_", "code", "words"),
    [
        (pb.CreateMatchRequest(preset="poker"), grpc.StatusCode.INVALID_ARGUMENT, "unknown preset"),
        (
            pb.CreateMatchRequest(options={"no_such_rule": "1"}),
            grpc.StatusCode.INVALID_ARGUMENT,
            "unknown rule option",
        ),
        (
            pb.CreateMatchRequest(options={"wild_limit": "not json"}),
            grpc.StatusCode.INVALID_ARGUMENT,
            "not JSON",
        ),
        *(  # issue 25: these two were refused with Python's words ("'int' object ...")
            (
                pb.CreateMatchRequest(options={"red3_special_totals": value}),
                grpc.StatusCode.INVALID_ARGUMENT,
                "option red3_special_totals must be a list of [..., ...] rows",
            )
            for value in ("0", "null")
        ),
        (pb.CreateMatchRequest(seat=7), grpc.StatusCode.INVALID_ARGUMENT, "seats are numbered"),
        (
            pb.CreateMatchRequest(seat=1, bot_seats=[1]),
            grpc.StatusCode.INVALID_ARGUMENT,
            "your own seat",
        ),
    ],
)
def test_bad_match_creation(
    app: App,
    players: Callable[..., PlayerClient],
    dump: Callable[[App], list[str]],
    request_: pb.CreateMatchRequest,
    code: grpc.StatusCode,
    words: str,
) -> None:
    alice = players("alice")
    before = dump(app)
    with pytest.raises(grpc.RpcError) as info:
        alice.stub.CreateMatch(request_, metadata=alice.metadata)
    assert info.value.code() == code
    assert words in info.value.details()
    assert dump(app) == before
