"""What the notification tests share: a fake clock, a real SMTP server (``aiosmtpd`` on
127.0.0.1) and a real HTTP server for webhooks, and the steps a player takes to prove an address.
The fixtures ``mailbox`` and ``hooks`` are made visible to the tests by ``conftest``."""

from __future__ import annotations

import email
import re
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import grpc
import pytest
from aiosmtpd.controller import Controller

from server.app import App
from shared.pb import canasta_pb2 as pb
from shared.tabletext import render_table
from tests.testkit import PlayerClient


class FakeClock:
    """The service's clock, moved by the test: nothing sleeps."""

    def __init__(self, now: int) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


@dataclass
class Mailbox:
    """What the SMTP server received."""

    messages: list[Message] = field(default_factory=list)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        self.messages.append(email.message_from_bytes(envelope.content))
        return "250 OK"

    def to(self, address: str) -> list[Message]:
        return [m for m in self.messages if m["To"] == address]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def mailbox() -> Iterator[tuple[Mailbox, int]]:
    box = Mailbox()
    port = free_port()
    controller = Controller(box, hostname="127.0.0.1", port=port)
    controller.start()
    yield box, port
    controller.stop()


@dataclass
class Hooks:
    """A webhook receiver: each POST's body and headers; answers the next status queued."""

    received: list[tuple[bytes, dict[str, str]]] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)
    url: str = ""


@pytest.fixture
def hooks() -> Iterator[Hooks]:
    found = Hooks()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            found.received.append((body, dict(self.headers.items())))
            status = found.statuses.pop(0) if found.statuses else 200
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    found.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    # serve_forever looks for shutdown() every poll_interval: its default 0.5 s would be the
    # teardown's wait in every test that uses the fixture.
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    yield found
    server.shutdown()
    server.server_close()


def update(client: PlayerClient, **fields: Any) -> pb.Settings:
    settings: pb.Settings = client.stub.UpdateSettings(
        pb.UpdateSettingsRequest(**fields), metadata=client.metadata
    )
    return settings


def verified(app: App, box: Mailbox, client: PlayerClient, address: str, mode: str) -> None:
    """Set and prove an address the way a player does: the code comes by mail."""
    pending = update(client, email=address)
    assert pending.email_pending == address
    assert not pending.email_verified
    app.service.outbox.deliver()
    (mail,) = box.to(address)
    assert "code" in mail["Subject"].lower()
    code = re.search(r"Your code is ([a-z0-9]+)", mail_text(mail))
    assert code is not None
    with pytest.raises(grpc.RpcError) as wrong:
        update(client, email_code="not-the-code")
    assert wrong.value.code() == grpc.StatusCode.PERMISSION_DENIED
    settings = update(client, email_code=code[1], email_mode=mode)
    assert settings.email == address
    assert settings.email_verified
    box.messages.clear()


def mail_text(message: Message) -> str:
    payload = message.get_payload(decode=True)
    assert isinstance(payload, bytes)
    return payload.decode().replace("\r\n", "\n")  # (SMTP carries lines with CRLF)


# A card named in text, as the notation writes it (rank then suit).
CARD = re.compile(
    r"(?<![0-9a-z])(?:10|[2-9]|[tjqka])[cdhs](?![0-9a-z])|(?<![0-9a-z])jk(?![0-9a-z])"
)


def own_table(app: App, client: PlayerClient, match_id: str) -> str:
    """The table the player's own GetView renders now (``canasta show`` piped, in UTC): what
    every mail of theirs that shows this match must hold, verbatim."""
    view = client.view(match_id)
    return render_table(view, color=False, tz=UTC, now_ms=app.service.ctx.clock())


def without_own_table(body: str, table: str) -> str:
    """The mail's text around its table, which must be there whole (the leak audit checks the
    rest on its own: the table is the player's own view, the rest must add nothing)."""
    assert table in body, f"the mail does not show the player's own table:\n{body}\n---\n{table}"
    return body.replace(table, "")
