"""A small programmatic client of the server and a way to run one, for benchmarks and tests
(not the ``canasta`` CLI).

It does what any client must: pin the server key, register a key, authenticate reads, and
build, sign and submit move envelopes from the last view it saw. The benches import no test
kit, so what both need lives here; ``tests/testkit.py`` re-exports it beside the helpers only
tests use (checking a record as ``canasta verify`` does, the server's own state as an oracle).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import grpc

from shared import protocol
from shared.crypto.keys import PrivateKey, generate_private_key, public_key_raw
from shared.pb import canasta_pb2 as pb
from shared.pb import canasta_pb2_grpc as pb_grpc


class PlayerClient:
    """One player's connection: a key, a stub and (after ``login``) a bearer token."""

    def __init__(self, channel: grpc.Channel, key: PrivateKey | None = None) -> None:
        self.channel = channel
        self.stub = pb_grpc.CanastaStub(channel)
        self.key = key or generate_private_key()
        self.public_key = public_key_raw(self.key)
        self.token = ""
        info = self.stub.GetServerInfo(pb.GetServerInfoRequest())
        self.server_key: bytes = info.server_public_key
        self.bot_key: bytes = info.bot_public_key

    @property
    def metadata(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.token}"),)

    # -- identity ---------------------------------------------------------------------------

    def registration(
        self, name: str, invitation: str = "", email: str = "", server_key: bytes | None = None
    ) -> pb.RegisterRequest:
        return protocol.register_request(
            self.key,
            self.server_key if server_key is None else server_key,
            name,
            email=email,
            invitation=invitation,
        )

    def register(self, name: str, invitation: str = "", email: str = "") -> pb.RegisterResponse:
        return cast(
            pb.RegisterResponse, self.stub.Register(self.registration(name, invitation, email))
        )

    def answer(self, challenge: bytes, server_key: bytes | None = None) -> pb.AuthenticateRequest:
        return protocol.auth_request(
            self.key, self.server_key if server_key is None else server_key, challenge
        )

    def login(self) -> str:
        challenge = self.stub.Challenge(pb.ChallengeRequest(public_key=self.public_key))
        response = self.stub.Authenticate(self.answer(challenge.challenge))
        self.token = response.token
        return self.token

    def join_server(self, name: str, invitation: str = "") -> PlayerClient:
        self.register(name, invitation)
        self.login()
        return self

    # -- lobby ------------------------------------------------------------------------------

    def create_match(
        self,
        preset: str = "classic",
        *,
        target: int = 0,
        seat: int | None = None,
        bot_seats: Sequence[int] = (),
        options: dict[str, str] | None = None,
        bot_levels: dict[int, str] | None = None,
    ) -> pb.CreateMatchResponse:
        request = pb.CreateMatchRequest(
            preset=preset,
            target=target,
            bot_seats=list(bot_seats),
            options=options or {},
            bot_levels=bot_levels or {},
        )
        if seat is not None:
            request.seat = seat
        return cast(pb.CreateMatchResponse, self.stub.CreateMatch(request, metadata=self.metadata))

    def join_match(self, invite_code: str, seat: int | None = None) -> pb.JoinMatchResponse:
        request = pb.JoinMatchRequest(invite_code=invite_code)
        if seat is not None:
            request.seat = seat
        return cast(pb.JoinMatchResponse, self.stub.JoinMatch(request, metadata=self.metadata))

    def fill_with_bot(
        self, match_id: str, seat: int | None = None, level: str = ""
    ) -> pb.FillSeatWithBotResponse:
        request = pb.FillSeatWithBotRequest(match_id=match_id, bot_level=level)
        if seat is not None:
            request.seat = seat
        return cast(
            pb.FillSeatWithBotResponse, self.stub.FillSeatWithBot(request, metadata=self.metadata)
        )

    def start_match(self, match_id: str) -> pb.StartMatchResponse:
        return cast(
            pb.StartMatchResponse,
            self.stub.StartMatch(pb.StartMatchRequest(match_id=match_id), metadata=self.metadata),
        )

    def my_matches(self) -> pb.ListMyMatchesResponse:
        return cast(
            pb.ListMyMatchesResponse,
            self.stub.ListMyMatches(pb.ListMyMatchesRequest(), metadata=self.metadata),
        )

    # -- play -------------------------------------------------------------------------------

    def view(self, match_id: str) -> pb.MatchView:
        response = self.stub.GetView(pb.GetViewRequest(match_id=match_id), metadata=self.metadata)
        return cast(pb.MatchView, response.view)

    def history(self, match_id: str, after_seq: int = 0) -> pb.GetHistoryResponse:
        return cast(
            pb.GetHistoryResponse,
            self.stub.GetHistory(
                pb.GetHistoryRequest(match_id=match_id, after_seq=after_seq), metadata=self.metadata
            ),
        )

    def full_history(self, match_id: str) -> tuple[list[pb.HistoryEntry], pb.GetHistoryResponse]:
        """Every entry, and the last page with the hand records of every page merged in."""
        entries: list[pb.HistoryEntry] = []
        hands: dict[int, pb.HandRecord] = {}
        after = 0
        while True:
            page = self.history(match_id, after)
            entries.extend(page.entries)
            hands.update((h.hand_number, h) for h in page.hands)
            if not page.more:
                del page.hands[:]
                page.hands.extend(hands[n] for n in sorted(hands))
                return entries, page
            after = page.entries[-1].seq

    def envelope(
        self,
        view: pb.MatchView,
        actions: Sequence[str],
        *,
        seat: int | None = None,
        seq: int | None = None,
        prev_hash: bytes | None = None,
        match_id: str | None = None,
        deal_commitment: bytes = b"",
        signer: PrivateKey | None = None,
        client_time_ms: int | None = None,
    ) -> pb.SubmitRequest:
        """A signed move built from ``view`` (any field can be overridden, for tests)."""
        return protocol.move_request(
            signer or self.key,
            view.match.match_id if match_id is None else match_id,
            view.view.seat if seat is None else seat,
            view.version if seq is None else seq - 1,
            view.head_hash if prev_hash is None else prev_hash,
            actions,
            deal_commitment=deal_commitment,
            client_time_ms=client_time_ms,
        )

    def submit(self, view: pb.MatchView, actions: Sequence[str]) -> pb.SubmitResponse:
        request = self.envelope(view, actions)
        return cast(pb.SubmitResponse, self.stub.Submit(request, metadata=self.metadata))

    def deal(self, view: pb.MatchView) -> pb.SubmitResponse:
        """Cut the deck for the next hand (the seat named by ``view.dealing_seat``)."""
        return cast(
            pb.SubmitResponse,
            self.stub.Submit(
                protocol.deal_request(
                    self.key,
                    view.match.match_id,
                    view.view.seat,
                    view.version,
                    view.head_hash,
                    view.deal_commitment,
                ),
                metadata=self.metadata,
            ),
        )

    def watch(self, match_ids: Sequence[str] = (), timeout: float | None = None) -> Any:
        """The Watch stream (an iterator of ``WatchResponse``; ``.cancel()`` ends it)."""
        return self.stub.Watch(
            pb.WatchRequest(match_ids=list(match_ids)), metadata=self.metadata, timeout=timeout
        )


def seated_match(seats: Sequence[PlayerClient]) -> str:
    """A classic match ``seats[0]`` creates in seat 0 and every other player joins in its own
    seat (so it starts); its id."""
    created = seats[0].create_match(seat=0)
    for seat, player in enumerate(seats[1:], start=1):
        player.join_match(created.invite_code, seat=seat)
    return created.match.match_id


def plain_turn(view: pb.MatchView) -> list[str]:
    """The plainest legal move from the acting seat's view, outside a deal: draw (pass once
    the stock is gone), refuse partner's request to go out, else discard the last card in
    hand. Benchmarks and long-running tests use it to move a match along without a bot; a
    draw or a pass needs no hand, so any seat's view of the draw phase will do."""
    if view.view.phase == pb.PHASE_DRAW:
        return ["draw" if view.view.stock_size else "pass"]
    if view.view.phase == pb.PHASE_ANSWER:
        return ["answer no"]
    return [f"discard {view.view.hand[-1]}"]


def start_server_process(
    data_dir: Path,
    *,
    env: Mapping[str, str],
    command: Sequence[str] = (sys.executable, "-m", "server"),
    listen: str = "127.0.0.1:0",
    serve_args: Sequence[str] = (),
) -> tuple[subprocess.Popen[str], int]:
    """``serve_with_banner``; the process and the port it bound."""
    process, banner = serve_with_banner(
        data_dir, env=env, command=command, listen=listen, serve_args=serve_args
    )
    return process, banner_port(banner, "listening on ")


def serve_with_banner(
    data_dir: Path,
    *,
    env: Mapping[str, str],
    command: Sequence[str] = (sys.executable, "-m", "server"),
    listen: str = "127.0.0.1:0",
    serve_args: Sequence[str] = (),
) -> tuple[subprocess.Popen[str], str]:
    """Run ``canasta-server serve`` as a process of its own and wait for its banner line
    ("... listening on HOST:PORT ..."); return the process and that line.

    ``serve_args`` go after ``serve --listen ...`` (e.g. ``["--workers", "2"]``), so a caller
    can pass any ``serve`` option without this helper knowing them all. Its log (stderr) goes
    to ``data_dir / "server.log"``. End it with SIGTERM.
    """
    data_dir.mkdir(parents=True, exist_ok=True)
    with (data_dir / "server.log").open("a") as log:
        process = subprocess.Popen(
            [*command, "--data-dir", str(data_dir), "serve", "--listen", listen, *serve_args],
            stdout=subprocess.PIPE, stderr=log, text=True, env=dict(env),
        )  # fmt: skip
    assert process.stdout is not None
    banner = process.stdout.readline()
    if "listening on" not in banner:
        process.kill()
        process.wait()
        raise RuntimeError(f"the server did not start: {banner!r} (see {data_dir}/server.log)")
    return process, banner


def banner_port(banner: str, after: str) -> int:
    """The port in ``canasta-server serve``'s banner line after ``after`` ("listening on ",
    "metrics on ")."""
    return int(banner.split(after)[1].split()[0].rstrip(";").rpartition(":")[2])
