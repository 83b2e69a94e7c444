"""Issue 10's two standing fuzz tests: hostile bytes at every RPC, and the option space.

* ``test_fuzzed_requests_to_every_rpc``: over two thousand malformed or hostile requests,
  spread over every RPC (random bytes, truncated messages, another method's message, huge
  fields, NUL and odd Unicode, absurd numbers, hostile option JSON, hostile but validly signed
  moves and registrations, odd tokens). None may answer INTERNAL or UNKNOWN, the server stays
  up, and no refused request commits anything to the database (SQLite's ``data_version``,
  which moves with every commit of another connection, is read after each one).
* ``test_every_configuration_is_refused_or_plays_whole_hands``: a property test over the rule
  options: every configuration is refused at ``CreateMatch`` with INVALID_ARGUMENT, or it
  deals and plays a whole hand to its end through the service.
"""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from grpc_health.v1 import health_pb2, health_pb2_grpc
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from server.app import App
from server.service.play.bots import default_chooser
from shared.crypto.keys import generate_private_key, sign
from shared.pb import canasta_pb2 as pb
from shared.rules import CLASSIC, OPTION_CHOICES, OPTION_NAMES, PRESETS, TAKE_METHODS, Phase
from shared.wire import register_message
from tests.testkit import PlayerClient, authoritative_state

from .conftest import AppFactory

SERVICE = pb.DESCRIPTOR.services_by_name["Canasta"]
PER_METHOD = 160
FAILURES = (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN)

HOSTILE_TEXT = [
    "",
    " ",
    "\x00",
    "a\x00b",
    "x" * 70_000,
    "\u202e\u0645\u0631\u062d\u0628\u0627",
    "\U0001f0a1" * 40,
    "' OR 1=1 --",
    "../../etc/passwd",
    "%s%n%x",
    "\ufeffclassic",
    "classic\x00",
    "draw",
    "meld 7h 7c 2s; discard kd",
    "pickup " + "7h " * 500,
    "deal",
]
HOSTILE_JSON = [
    "1e400",
    "-1e400",
    "NaN",
    "-0",
    "null",
    "true",
    '"x"',
    "2147483648",
    "-2147483649",
    "9" * 5000,
    "[" * 5000 + "]" * 5000,
    '{"a": ' * 2000 + "1" + "}" * 2000,
    "[[null, 15], [0, 50]]",
    "[[0, 2], [1, 3]]",
    "[]",
    "{}",
    "0.5",
    '"\\u0000"',
]
INT32 = [0, 1, -1, 2, 3, 7, 2**31 - 1, -(2**31)]
INT64 = [*INT32, 2**63 - 1, -(2**63)]
UINT64 = [0, 1, 2, 2**32, 2**63, 2**64 - 1]
UINT32 = [0, 1, 2, 100, 101, 2**31, 2**32 - 1]


class Fuzzer:
    """Builds hostile request bytes for a method from its message descriptor."""

    def __init__(self, rng: random.Random, alice: PlayerClient, match_id: str) -> None:
        self.rng = rng
        self.alice = alice
        self.match_id = match_id

    def text(self) -> str:
        if self.rng.random() < 0.2:
            return self.match_id
        return self.rng.choice(HOSTILE_TEXT)

    def raw(self) -> bytes:
        return self.rng.choice(
            [b"", b"\x00" * 32, b"\xff" * 64, self.rng.randbytes(32), self.rng.randbytes(64)]
        )

    def scalar(self, field: Any) -> Any:
        """A hostile value for a scalar ``field`` (a ``FieldDescriptor``)."""
        kind = field.type
        if kind == FieldDescriptor.TYPE_STRING:
            return self.text()
        if kind == FieldDescriptor.TYPE_BYTES:
            return self.raw()
        if kind == FieldDescriptor.TYPE_BOOL:
            return self.rng.random() < 0.5
        if kind == FieldDescriptor.TYPE_ENUM:
            return self.rng.choice([v.number for v in field.enum_type.values])
        if kind == FieldDescriptor.TYPE_UINT64:
            return self.rng.choice(UINT64)
        if kind == FieldDescriptor.TYPE_UINT32:
            return self.rng.choice(UINT32)
        if kind == FieldDescriptor.TYPE_INT64:
            return self.rng.choice(INT64)
        return self.rng.choice(INT32)

    def fill(self, message: Message, depth: int = 0) -> Message:
        """Set a random selection of ``message``'s fields to hostile values."""
        for field in message.DESCRIPTOR.fields:
            if self.rng.random() < 0.3:
                continue
            if field.message_type is not None and field.message_type.GetOptions().map_entry:
                entries = getattr(message, field.name)
                key = field.message_type.fields_by_name["key"]
                for _ in range(self.rng.choice([0, 1, 3, 70])):
                    if key.type == FieldDescriptor.TYPE_STRING:  # rule options: name -> JSON
                        name = self.rng.choice([*OPTION_NAMES, *HOSTILE_TEXT[:12]])
                        entries[name] = self.rng.choice(HOSTILE_JSON)
                    else:  # bot levels: seat -> level
                        level = self.rng.choice(["strong", "easy", *HOSTILE_TEXT[:12]])
                        entries[self.scalar(key)] = level
            elif field.is_repeated:
                values = getattr(message, field.name)
                for _ in range(self.rng.choice([0, 1, 5, 2_000])):
                    if field.message_type is not None:
                        if depth < 2:
                            self.fill(values.add(), depth + 1)
                    else:
                        values.append(self.scalar(field))
            elif field.message_type is not None:
                if depth < 2:
                    self.fill(getattr(message, field.name), depth + 1)
            else:
                setattr(message, field.name, self.scalar(field))
        return message

    def signed_move(self) -> pb.SubmitRequest:
        """A hostile move that alice really signed: it gets past the signature to the rules."""
        payload = self.fill(pb.MovePayload())
        assert isinstance(payload, pb.MovePayload)
        if self.rng.random() < 0.7:
            payload.match_id = self.match_id
            payload.seat = self.rng.choice([0, 0, 1, -1, 9])
        data = payload.SerializeToString()
        return pb.SubmitRequest(payload=data, signature=sign(self.alice.key, data))

    def signed_registration(self) -> pb.RegisterRequest:
        key = generate_private_key()
        payload = self.fill(pb.RegisterPayload())
        assert isinstance(payload, pb.RegisterPayload)
        if self.rng.random() < 0.7:
            payload.public_key = key.public_key().public_bytes_raw()
            payload.server_public_key = self.alice.server_key
        data = payload.SerializeToString()
        return pb.RegisterRequest(payload=data, signature=sign(key, register_message(data)))

    def request(self, input_type: Descriptor, method: str) -> bytes:
        """The bytes of one hostile request for ``method``."""
        roll = self.rng.random()
        if roll < 0.15:
            return self.rng.randbytes(self.rng.choice([1, 5, 40, 300]))
        if roll < 0.25:  # a message of another method: decodes, means something else
            other = self.rng.choice(list(SERVICE.methods)).input_type
            return bytes(self.fill(_message(other)).SerializeToString())
        if method == "Submit" and roll < 0.65:
            message: Message = self.signed_move()
        elif method == "Register" and roll < 0.65:
            message = self.signed_registration()
        else:
            message = self.fill(_message(input_type))
        data = bytes(message.SerializeToString())
        if roll > 0.9 and len(data) > 1:
            return data[: self.rng.randrange(1, len(data))]
        return data

    def metadata(self) -> tuple[tuple[str, str], ...]:
        return self.rng.choice(
            [
                (),
                self.alice.metadata,
                self.alice.metadata,
                (("authorization", "Bearer " + "A" * 4000),),
                (("authorization", "Basic YWxpY2U6c2VjcmV0"),),
                (("authorization", "Bearer"),),
            ]
        )


def _message(descriptor: Descriptor) -> Message:
    return getattr(pb, descriptor.name)()  # type: ignore[no-any-return]


def _data_version(connection: sqlite3.Connection) -> int:
    return int(connection.execute("PRAGMA data_version").fetchone()[0])


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["sqlite"])
def test_fuzzed_requests_to_every_rpc(make_app: AppFactory) -> None:
    app = make_app(
        bots=False,
        limit_anonymous_per_minute=0,
        limit_writes_per_minute=0,
        limit_reads_per_minute=0,
        max_workers=8,
    )
    target = f"127.0.0.1:{app.port}"
    with grpc.insecure_channel(target) as channel:
        alice = PlayerClient(channel).join_server("alice")
        match_id = alice.create_match(bot_seats=[1, 2, 3]).match.match_id
        view = alice.view(match_id)
        alice.deal(view)
        fuzz = Fuzzer(random.Random(10), alice, match_id)
        database = Path(app.config.db_url.removeprefix("sqlite:///"))
        watcher = sqlite3.connect(database)
        sent, refused = 0, 0
        outcomes: dict[grpc.StatusCode, int] = {}
        try:
            version = _data_version(watcher)
            for method in SERVICE.methods:
                path = f"/{SERVICE.full_name}/{method.name}"
                for _ in range(PER_METHOD):
                    data = fuzz.request(method.input_type, method.name)
                    code = _call(channel, path, method.server_streaming, data, fuzz.metadata())
                    sent += 1
                    outcomes[code] = outcomes.get(code, 0) + 1
                    assert code not in FAILURES, f"{method.name} answered {code.name}"
                    now = _data_version(watcher)
                    if code is grpc.StatusCode.OK:
                        version = now
                        continue
                    refused += 1
                    assert now == version, f"a refused {method.name} changed the database"
        finally:
            watcher.close()
        health = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
        assert health.status == health_pb2.HealthCheckResponse.SERVING
        assert alice.view(match_id).match.match_id == match_id  # still serving, still sane
    assert sent >= 2000
    assert refused > sent // 2, outcomes  # mostly refused: the requests really were hostile


def _call(
    channel: grpc.Channel,
    path: str,
    streaming: bool,
    data: bytes,
    metadata: tuple[tuple[str, str], ...],
) -> grpc.StatusCode:
    try:
        if streaming:
            stream = channel.unary_stream(path)(data, metadata=metadata, timeout=10)
            try:
                next(iter(stream))
            finally:
                stream.cancel()
        else:
            channel.unary_unary(path)(data, metadata=metadata, timeout=10)
    except grpc.RpcError as error:
        code = error.code()
        assert isinstance(code, grpc.StatusCode)
        if code is grpc.StatusCode.CANCELLED:  # our own cancel after the first message
            return grpc.StatusCode.OK
        return code
    return grpc.StatusCode.OK


# -- the option space ---------------------------------------------------------------------------

HOSTILE_VALUES = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=4),
    st.none(),
    st.lists(st.integers(min_value=-3, max_value=9), max_size=3),
)


def _option_values(name: str) -> st.SearchStrategy[Any]:
    """Values for one option: plausible ones (in range or near it) and hostile ones."""
    default = getattr(CLASSIC, name)
    if name in OPTION_CHOICES:
        plausible: st.SearchStrategy[Any] = st.sampled_from(OPTION_CHOICES[name])
    elif isinstance(default, bool):
        plausible = st.booleans()
    elif name == "players":
        plausible = st.sampled_from([2, 3, 4, 6])
    elif isinstance(default, int) or name in (
        "ask_limit_per_hand",
        "samba_min_7000",
        "pile_take_count",
        "hands_per_match",
        "clean_sevens_bonus",
    ):
        plausible = st.one_of(
            st.integers(min_value=-2, max_value=16),
            st.sampled_from([0, 100, 300, 1000, 5000, 20_000, 50_000, 50_001]),
        )
    elif name == "partnerships":
        plausible = st.lists(
            st.lists(st.integers(min_value=0, max_value=6), min_size=1, max_size=3), max_size=4
        )
    elif name == "min_meld_table":
        row = st.tuples(
            st.one_of(st.none(), st.integers(min_value=-3000, max_value=9000)),
            st.integers(min_value=0, max_value=1100),
        )
        plausible = st.lists(row, min_size=1, max_size=5)
    elif name == "red3_special_totals":
        row = st.tuples(
            st.integers(min_value=1, max_value=8), st.integers(min_value=0, max_value=3000)
        )
        plausible = st.lists(row, max_size=3)
    elif name == "min_meld_by_hand":  # Hand and Foot (§3.7)
        plausible = st.lists(st.integers(min_value=-5, max_value=1100), max_size=12)
    elif name == "unfrozen_take_methods":
        plausible = st.lists(st.sampled_from([*TAKE_METHODS, "steal"]), max_size=4)
    else:
        raise AssertionError(f"no values for option {name}: add them here")
    default_value = st.just(list(default) if isinstance(default, tuple) else default)
    return st.one_of(plausible, plausible, plausible, default_value, default_value, HOSTILE_VALUES)


OPTION_VALUES = {name: _option_values(name) for name in OPTION_NAMES if name != "preset"}


@st.composite
def configurations(draw: st.DrawFn) -> tuple[str, dict[str, str]]:
    preset = draw(st.sampled_from(sorted(PRESETS)))
    names = draw(st.lists(st.sampled_from(sorted(OPTION_VALUES)), max_size=4, unique=True))
    return preset, {n: json.dumps(draw(OPTION_VALUES[n]), allow_nan=True) for n in names}


_TABLES: dict[int, tuple[App, PlayerClient]] = {}


def _table(make_app: AppFactory) -> tuple[App, PlayerClient]:
    """The server and signed-in player of this test call (made by its first example)."""
    key = id(make_app)
    if key not in _TABLES:
        app = make_app(
            limit_open_matches=10_000, limit_writes_per_minute=0, limit_reads_per_minute=0
        )
        channel = grpc.insecure_channel(f"127.0.0.1:{app.port}")
        _TABLES.clear()
        _TABLES[key] = (app, PlayerClient(channel).join_server("alice"))
    return _TABLES[key]


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["sqlite"])
@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(configuration=configurations())
def test_every_configuration_is_refused_or_plays_whole_hands(
    make_app: AppFactory, configuration: tuple[str, dict[str, str]]
) -> None:
    """Hypothesis runs the examples inside one call of the test: one server and one player
    serve them all (``_table``)."""
    preset, options = configuration
    app, alice = _table(make_app)
    request = pb.CreateMatchRequest(preset=preset, options=options)
    try:
        created = alice.stub.CreateMatch(request, metadata=alice.metadata)
    except grpc.RpcError as error:
        refusal = error
    else:
        refusal = None
    if refusal is not None:
        assert refusal.code() == grpc.StatusCode.INVALID_ARGUMENT, refusal.details()
        event("refused")
        return
    event("played")
    match_id = created.match.match_id
    count = created.match.players
    filled = alice.start_match(match_id).match
    assert filled.status == pb.MATCH_STATUS_PLAYING
    choose = default_chooser()
    for _ in range(5_000):
        app.bots.drain()
        state = authoritative_state(app.service, match_id)
        if state.phase is Phase.MATCH_OVER or (state.phase is Phase.DEAL and state.hand_number):
            assert len(state.scores) == len(state.config.partnerships)
            return
        view = alice.view(match_id)
        if view.HasField("dealing_seat"):
            assert view.dealing_seat == 0  # the only human cuts
            alice.deal(view)
        else:
            assert view.match.to_act == 0, f"a bot of {count} seats stopped"
            alice.submit(view, [str(choose(state, 0))])
    raise AssertionError("the hand did not end")
