"""The outbox delivers concurrently (issue 25, point 4): a webhook that never answers holds up
only its owner's notifications, not another player's mail (a real SMTP server, ``aiosmtpd``) or
webhook (a real HTTP server), and with the rounds of two server processes racing on one
database every notification still goes out once."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator

import grpc
import pytest

from server.app import App
from server.domain import Notice
from server.service.news.outbox import BATCH
from tests.testkit import PlayerClient

from .conftest import AppFactory
from .mailkit import Hooks, Mailbox, update, verified
from .test_notifications import player_id


class SilentServer:
    """An HTTP server that accepts connections and never answers; it notes which connections
    the client gave up on (closed)."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}/hook"
        self.accepted = 0
        self.closed_by_client = 0
        self._conns: list[socket.socket] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                self.accepted += 1
                self._conns.append(conn)
            threading.Thread(target=self._hold, args=(conn,), daemon=True).start()

    def _hold(self, conn: socket.socket) -> None:
        try:
            while conn.recv(4096):
                pass  # read the request, answer nothing
        except OSError:
            return
        with self._lock:
            self.closed_by_client += 1

    def close(self) -> None:
        self._listener.close()
        with self._lock:
            for conn in self._conns:
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)  # wakes the thread reading it; sends FIN
                conn.close()


@pytest.fixture
def silent() -> Iterator[SilentServer]:
    server = SilentServer()
    yield server
    server.close()


def _mailing_app(make_app: AppFactory, port: int, name: str = "server") -> App:
    return make_app(
        name,
        token_ttl_seconds=365 * 86_400,
        smtp_host="127.0.0.1",
        smtp_port=port,
        smtp_security="none",
        mail_from="canasta@example.org",
        webhook_allow_private=True,  # the test's receivers are on 127.0.0.1
        outbox_poll_ms=20,
    )


def _until(done: Callable[[], bool], what: str) -> None:
    """Wait for ``done()``; a deadline only so that a broken server fails the test."""
    deadline = time.monotonic() + 60
    while not done():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.01)


def test_a_webhook_that_never_answers_delays_only_its_owner(
    make_app: AppFactory, mailbox: tuple[Mailbox, int], hooks: Hooks, silent: SilentServer
) -> None:
    box, port = mailbox
    app = _mailing_app(make_app, port)
    with grpc.insecure_channel(f"127.0.0.1:{app.port}") as channel:
        ann = PlayerClient(channel).join_server("ann")
        verified(app, box, ann, "ann@example.org", "each")  # mail only
        bea = PlayerClient(channel).join_server("bea")
        update(bea, webhook_url=hooks.url)  # a webhook that answers
        eve = PlayerClient(channel).join_server("eve")
        update(eve, webhook_url=silent.url)  # a webhook that never answers
        for _ in range(3):  # eve's notifications come first
            eve.create_match(bot_seats=[1, 2, 3])
        ann.create_match(bot_seats=[1, 2, 3])
        bea.create_match(bot_seats=[1, 2, 3])
        app.bots.drain()
        try:
            app.service.outbox.rounds.start()
            _until(lambda: bool(box.to("ann@example.org")), "ann's mail")
            _until(lambda: bool(hooks.received), "bea's webhook")
            _until(lambda: silent.accepted >= 1, "a call to eve's webhook")
            # Eve's first webhook call is still waiting for its answer: ann's mail and bea's
            # webhook did not wait for it to time out.
            assert silent.closed_by_client == 0
        finally:
            silent.close()  # the call under way fails at once; nothing waits for its timeout
            app.service.outbox.stop()
    assert len(box.to("ann@example.org")) == 1
    assert len(hooks.received) == 1


def test_a_backlog_behind_a_dead_webhook_does_not_fill_every_round(
    make_app: AppFactory, mailbox: tuple[Mailbox, int], silent: SilentServer
) -> None:
    """Eve's webhook never answers and she has more notifications waiting than a round
    looks at (``BATCH``), all older than ann's one: ann's mail still goes out while eve's
    first call is waiting (found by a later attack: the round looked at the oldest due
    notifications of everyone, all eve's, so ann's waited out every one of eve's timeouts)."""
    box, port = mailbox
    app = _mailing_app(make_app, port)
    with grpc.insecure_channel(f"127.0.0.1:{app.port}") as channel:
        ann = PlayerClient(channel).join_server("ann")
        verified(app, box, ann, "ann@example.org", "each")
        eve = PlayerClient(channel).join_server("eve")
        update(eve, webhook_url=silent.url)
    box.messages.clear()
    now = app.service.ctx.clock()
    with app.db.write() as session:
        repo = app.service.ctx.repo(session)
        repo.add_notices([Notice(player_id(app, eve), "", "reminder", {})] * (BATCH * 2), now)
        repo.add_notices([Notice(player_id(app, ann), "", "reminder", {})], now)
    try:
        app.service.outbox.rounds.start()
        _until(lambda: silent.accepted >= 1, "a call to eve's webhook")
        _until(lambda: bool(box.to("ann@example.org")), "ann's mail")
        assert silent.closed_by_client == 0  # eve's first call is still waiting
    finally:
        silent.close()
        app.service.outbox.stop()
    assert len(box.to("ann@example.org")) == 1


def test_two_processes_racing_deliver_each_notification_once(
    make_app: AppFactory, mailbox: tuple[Mailbox, int]
) -> None:
    """Both servers' rounds run at once, each with its pools of workers, on one database."""
    box, port = mailbox
    app = _mailing_app(make_app, port)
    replica = _mailing_app(make_app, port)  # the same storage: a second process
    addresses = [f"p{n}@example.org" for n in range(4)]
    ids = []
    with grpc.insecure_channel(f"127.0.0.1:{app.port}") as channel:
        for address in addresses:
            client = PlayerClient(channel).join_server(address[:2])
            verified(app, box, client, address, "each")
            ids.append(player_id(app, client))
    now = app.service.ctx.clock()
    with app.db.write() as session:
        app.service.ctx.repo(session).add_notices(
            [Notice(p, "", "reminder", {}) for p in ids for _ in range(6)], now
        )
    for server in (app, replica):
        server.service.outbox.rounds.start()
    _until(lambda: len(box.messages) >= 24, "24 mails")
    for server in (app, replica):
        server.service.outbox.stop()
    sent = [m["Message-ID"] for m in box.messages]
    assert len(sent) == 24
    assert len(set(sent)) == 24, "a notification was mailed twice"
    assert sorted(m["To"] for m in box.messages) == sorted(addresses * 6)
