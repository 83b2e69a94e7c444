"""Table talk in the notifications (issue 32): a mail about a match carries the talk since the
player's last mail there (over a real SMTP server), a digest lists it, a webhook gets a short
notice without its text, and Watch streams it."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from server.app import App
from shared.pb import canasta_pb2 as pb
from tests.testkit import PlayerClient, plain_turn

from .conftest import AppFactory
from .mailkit import FakeClock, Hooks, Mailbox, mail_text, update, verified
from .test_notifications import MONDAY_7AM, _two_humans
from .test_talk import say

HOUR = 3_600_000


@pytest.fixture
def app(make_app: AppFactory, mailbox: tuple[Mailbox, int]) -> App:
    return make_app(
        token_ttl_seconds=365 * 86_400,
        smtp_host="127.0.0.1",
        smtp_port=mailbox[1],
        smtp_security="none",
        mail_from="canasta@example.org",
        webhook_allow_private=True,
    )


@pytest.fixture
def clock(app: App) -> FakeClock:
    fake = FakeClock(MONDAY_7AM)
    app.service.ctx.clock = fake
    return fake


def _play_until_turn_of(
    app: App, clients: dict[int, PlayerClient], match_id: str, seat: int
) -> None:
    """Moves (plain ones, and cuts) until it is ``seat``'s turn again after someone else's."""
    others = False
    for _ in range(60):
        to_act = clients[0].view(match_id).match.to_act
        if to_act == seat and others:
            return
        others = others or to_act != seat
        client = clients[to_act]
        view = client.view(match_id)
        if view.HasField("dealing_seat"):
            client.deal(view)
        else:
            client.submit(view, plain_turn(view))
        app.bots.drain()
    raise AssertionError(f"seat {seat}'s turn did not come")


def test_a_mail_carries_the_talk_since_the_last_mail_and_a_webhook_only_a_notice(
    app: App,
    clock: FakeClock,
    players: Callable[..., PlayerClient],
    mailbox: tuple[Mailbox, int],
    hooks: Hooks,
) -> None:
    box, _ = mailbox
    match_id, clients = _two_humans(app, players)
    ann, ben = clients[0], clients[1]
    verified(app, box, ben, "ben@example.org", "each")
    update(ben, webhook_url=hooks.url)
    app.service.outbox.deliver()
    box.messages.clear()
    say(ann, match_id, "hello ben, good luck")
    say(ann, match_id, "¿listo? ♠")
    app.service.outbox.deliver()
    assert box.to("ben@example.org") == []  # talk has no mail of its own
    bodies = [json.loads(body) for body, _ in hooks.received]
    talk = [b for b in bodies if b["kind"] == "talk"]
    assert len(talk) == 2
    for body in talk:
        assert "hello" not in json.dumps(body)
        assert "listo" not in json.dumps(body)
        assert body["facts"] == {
            "seat": 0,
            "talk_kind": "say",
            "talk_seq": body["facts"]["talk_seq"],
        }
        assert body["text"] == f"Something was said at the table of match {match_id[:8]}."
    _play_until_turn_of(app, clients, match_id, 1)
    app.service.outbox.deliver()
    mails = box.to("ben@example.org")
    assert mails, "ben's turn came by mail"
    text = mail_text(mails[0])
    assert "Table talk since your last mail:" in text
    assert f"ann (seat 0) at match {match_id[:8]}: hello ben, good luck" in text
    assert f"ann (seat 0) at match {match_id[:8]}: ¿listo? ♠" in text
    assert text.index("It is your turn") < text.index("Table talk since your last mail:")
    box.messages.clear()
    say(ann, match_id, "nice one")
    _play_until_turn_of(app, clients, match_id, 1)
    app.service.outbox.deliver()
    later = "\n".join(mail_text(m) for m in box.to("ben@example.org"))
    assert "nice one" in later
    assert "hello ben" not in later  # said before the last mail: not again


def test_a_digest_lists_the_talk(
    app: App, clock: FakeClock, players: Callable[..., PlayerClient], mailbox: tuple[Mailbox, int]
) -> None:
    box, _ = mailbox
    match_id, clients = _two_humans(app, players)
    verified(app, box, clients[1], "ben@example.org", "digest")
    say(clients[0], match_id, "see you tomorrow")
    app.service.outbox.deliver()
    clock.now += 2 * HOUR  # past the digest hour
    app.service.outbox.deliver()
    (digest,) = box.to("ben@example.org")
    text = mail_text(digest)
    assert "Table talk since your last mail:" in text
    assert f"ann (seat 0) at match {match_id[:8]}: see you tomorrow" in text


def test_watch_streams_what_is_said(
    app: App, clock: FakeClock, players: Callable[..., PlayerClient]
) -> None:
    match_id, clients = _two_humans(app, players)
    say(clients[0], match_id, "hi from the table")
    say(clients[1], match_id, "hi back", "conventions")
    found = _talk_notes(clients[1], 1)
    assert [(n.kind, n.text) for n in found] == [
        ("talk", f"ann (seat 0) at match {match_id[:8]}: hi from the table")
    ]
    found = _talk_notes(clients[0], 1)
    assert [n.text for n in found] == [
        f"ben (seat 1) declares their side's conventions at match {match_id[:8]}: hi back"
    ]


def _talk_notes(client: PlayerClient, count: int) -> list[pb.WatchNotification]:
    """The first ``count`` talk notifications of the client's log, as Watch streams them."""
    stream = client.stub.Watch(
        pb.WatchRequest(notifications=True, after_notification_id=0),
        metadata=client.metadata,
        timeout=20,
    )
    found: list[pb.WatchNotification] = []
    try:
        for response in stream:
            if response.HasField("notification") and response.notification.kind == "talk":
                found.append(response.notification)
                if len(found) == count:
                    break
    finally:
        stream.cancel()
    return found
