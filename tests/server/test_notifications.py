"""Notifications (issue 12): the outbox, mail over a real SMTP server (``aiosmtpd`` on
127.0.0.1), webhooks to a real local HTTP server, digests, retries, and delivery exactly once
across a restart. Time is the service's clock, moved by the tests; delivery rounds are called
directly (``Outbox.deliver``) instead of waiting for the worker's thread."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from collections.abc import Callable
from datetime import datetime
from email.message import Message
from zoneinfo import ZoneInfo

import grpc
import pytest

from server.app import App
from shared.pb import canasta_pb2 as pb
from tests.testkit import PlayerClient, next_plain_move, plain_turn

from .conftest import AppFactory
from .mailkit import (
    CARD,
    FakeClock,
    Hooks,
    Mailbox,
    mail_text,
    own_table,
    update,
    verified,
    without_own_table,
)

MONDAY_7AM = int(datetime(2026, 12, 7, 7, tzinfo=ZoneInfo("UTC")).timestamp() * 1000)
HOUR = 3_600_000


@pytest.fixture
def app(make_app: AppFactory, mailbox: tuple[Mailbox, int]) -> App:
    return make_app(
        token_ttl_seconds=365 * 86_400,
        smtp_host="127.0.0.1",
        smtp_port=mailbox[1],
        smtp_security="none",
        mail_from="canasta@example.org",
        webhook_allow_private=True,  # the test's receiver is on 127.0.0.1
    )


@pytest.fixture
def clock(app: App) -> FakeClock:
    fake = FakeClock(MONDAY_7AM)
    app.service.ctx.clock = fake
    return fake


def _two_humans(
    app: App, players: Callable[..., PlayerClient]
) -> tuple[str, dict[int, PlayerClient]]:
    ann, ben = players("ann"), players("ben")
    created = ann.create_match(seat=0, bot_seats=[2, 3])
    ben.join_match(created.invite_code, seat=1)
    app.bots.drain()
    return created.match.match_id, {0: ann, 1: ben}


def test_each_turn_comes_by_mail_with_the_players_own_hand_only(
    app: App, clock: FakeClock, players: Callable[..., PlayerClient], mailbox: tuple[Mailbox, int]
) -> None:
    box, _ = mailbox
    match_id, clients = _two_humans(app, players)
    for seat, client in clients.items():
        verified(app, box, client, f"p{seat}@example.org", "each")
    cutter = clients[0].view(match_id).match.to_act
    view = clients[cutter].view(match_id)
    clients[cutter].deal(view)
    app.bots.drain()
    app.service.outbox.deliver()
    mover = clients[0].view(match_id).match.to_act
    mails = box.to(f"p{mover}@example.org")
    assert mails, "the player to move got no mail"
    body = mail_text(mails[-1])
    assert mails[-1]["Subject"] == f"Your turn - match {match_id[:8]}"
    around = without_own_table(body, own_table(app, clients[mover], match_id))
    assert "Your hand" in body
    assert CARD.findall(around.lower()) == []
    assert f"canasta show {match_id}" in body  # `show` takes the match as its argument
    assert "canasta notify email off" in body  # the unsubscribe line
    # No List-Unsubscribe header: nothing reads mail sent to the server yet, so a mail
    # client's "unsubscribe" button would promise what does not happen.
    assert mails[-1]["List-Unsubscribe"] is None
    assert mails[-1]["Message-ID"]
    # Delivered once: another round sends nothing more.
    count = len(box.messages)
    app.service.outbox.deliver()
    assert len(box.messages) == count


def test_a_digest_comes_once_a_day_at_the_players_hour(
    app: App, clock: FakeClock, players: Callable[..., PlayerClient], mailbox: tuple[Mailbox, int]
) -> None:
    box, _ = mailbox
    match_id, clients = _two_humans(app, players)
    verified(app, box, clients[0], "ann@example.org", "digest")
    turns = 0
    for _ in range(40):  # moves until ann's turn has come round a few times
        seat = clients[0].view(match_id).match.to_act
        client = clients[seat]
        view = client.view(match_id)
        if view.HasField("dealing_seat"):
            client.deal(view)
        else:
            client.submit(view, plain_turn(view))
        app.bots.drain()
        if seat != 0 and clients[0].view(match_id).match.to_act == 0:
            turns += 1
            if turns == 3:
                break
    app.service.outbox.deliver()  # 07:00 UTC: before the digest hour (08:00)
    assert box.to("ann@example.org") == []
    clock.now += HOUR
    app.service.outbox.deliver()
    (digest,) = box.to("ann@example.org")
    count = int(digest["Subject"].split()[1])
    assert count >= 2, digest["Subject"]  # ann's turns came round several times ...
    # ... and the digest says it once, above the match's table as it stands now (issue 28:
    # it used to repeat every old "It is your turn" line).
    assert mail_text(digest).count("It is your turn") == 1
    without_own_table(mail_text(digest), own_table(app, clients[0], match_id))
    app.service.outbox.deliver()
    clock.now += 3 * HOUR
    app.service.outbox.deliver()
    assert len(box.to("ann@example.org")) == 1  # one a day


def test_webhooks_are_signed_retried_and_delivered_once(
    app: App, clock: FakeClock, players: Callable[..., PlayerClient], hooks: Hooks
) -> None:
    match_id, clients = _two_humans(app, players)
    settings = update(clients[0], webhook_url=hooks.url)
    secret = settings.webhook_secret
    assert len(secret) == 64
    assert update(clients[0], time_zone="Europe/Berlin").webhook_secret == ""  # shown once
    hooks.statuses = [503]
    for _ in range(6):  # news for ann after her webhook was set (earlier news went nowhere)
        seat = clients[0].view(match_id).match.to_act
        view = clients[seat].view(match_id)
        if view.HasField("dealing_seat"):
            clients[seat].deal(view)
        else:
            clients[seat].submit(view, plain_turn(view))
        app.bots.drain()
    app.service.outbox.deliver()
    assert len(hooks.received) >= 1  # the first attempt was answered 503
    attempts = len(hooks.received)
    app.service.outbox.deliver()
    assert len(hooks.received) == attempts  # not due yet: the backoff holds
    clock.now += 31_000
    app.service.outbox.deliver()
    body, headers = hooks.received[-1]
    expected = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    assert headers["X-Canasta-Signature"] == f"sha256={expected}"
    data = json.loads(body)
    assert data["match_id"] == match_id
    assert data["kind"] in ("your_turn", "partner_asks")
    assert "hand" not in json.dumps(data["facts"]).replace("hand_number", "")
    deliveries = [h["X-Canasta-Delivery"] for _, h in hooks.received]
    assert deliveries.count(deliveries[0]) == 2  # the 503, then the success; no third
    # After the 503 the rest of that round's batch was not sent to the failing endpoint: each
    # went once, on the retry.
    assert all(deliveries.count(d) == 1 for d in deliveries[2:])
    clock.now += 10 * HOUR
    app.service.outbox.deliver()
    assert [h["X-Canasta-Delivery"] for _, h in hooks.received] == deliveries


def test_a_webhook_that_always_fails_is_tried_at_most_8_times_per_notification(
    app: App, clock: FakeClock, players: Callable[..., PlayerClient], hooks: Hooks
) -> None:
    """docs/trust.md's "at most 8 attempts ... per notification": a webhook that answers
    503 to everything gets each notification at most 8 times, the oldest exactly 8, and
    then nothing more, however long the outbox goes on."""
    match_id, clients = _two_humans(app, players)
    update(clients[0], webhook_url=hooks.url)
    hooks.statuses = [503] * 1_000
    for _ in range(4):
        seat = clients[0].view(match_id).match.to_act
        view = clients[seat].view(match_id)
        if view.HasField("dealing_seat"):
            clients[seat].deal(view)
        else:
            clients[seat].submit(view, plain_turn(view))
        app.bots.drain()
    for _ in range(12):  # each round well past any backoff
        app.service.outbox.deliver()
        clock.now += 24 * HOUR
    deliveries = [h["X-Canasta-Delivery"] for _, h in hooks.received]
    assert deliveries, "ann's webhook had no news"
    assert deliveries.count(deliveries[0]) == 8
    assert max(deliveries.count(d) for d in deliveries) == 8
    app.service.outbox.deliver()
    assert len(hooks.received) == len(deliveries)  # given up: nothing more is sent


def test_nothing_is_lost_or_sent_twice_across_a_restart(
    make_app: AppFactory, mailbox: tuple[Mailbox, int], app: App, clock: FakeClock,
    players: Callable[..., PlayerClient],
) -> None:  # fmt: skip
    box, port = mailbox
    match_id, clients = _two_humans(app, players)
    verified(app, box, clients[0], "ann@example.org", "each")
    verified(app, box, clients[1], "ben@example.org", "each")
    cutter = clients[0].view(match_id).match.to_act
    clients[cutter].deal(clients[cutter].view(match_id))
    app.bots.drain()
    # One notification is claimed by a delivery that dies before it can say how it went.
    with app.db.write() as session:
        repo = app.service.ctx.repo(session)
        first = repo.due_notifications(clock.now, 1)[0]
        assert repo.claim_notification(first, clock.now, clock.now + 1000)
    pending_before = _pending(app)
    app.stop(grace=None)
    again = make_app(
        token_ttl_seconds=365 * 86_400, smtp_host="127.0.0.1", smtp_port=port,
        smtp_security="none", mail_from="canasta@example.org",
    )  # fmt: skip
    again.service.ctx.clock = FakeClock(clock.now + 5000)
    again.service.outbox.deliver()
    ids = [m["Message-ID"] for m in box.messages]
    assert len(ids) == len(set(ids)), "a notification was mailed twice"
    assert len(ids) == pending_before  # every one that was waiting, and not the interrupted one
    again.service.outbox.deliver()
    assert [m["Message-ID"] for m in box.messages] == ids


def _pending(app: App) -> int:
    with app.db.read() as session:
        rows = session.connection().exec_driver_sql(
            "SELECT COUNT(*) FROM notification n JOIN player p ON p.id = n.player_id"
            " WHERE n.state = 'pending' AND p.email_verified AND n.kind != 'verify_email'"
        )
        return int(rows.scalar_one())


@pytest.mark.parametrize(
    ("fields", "status"),
    [
        ({"time_zone": "Mars/Olympus"}, grpc.StatusCode.INVALID_ARGUMENT),
        ({"time_zone": "x" * 5000}, grpc.StatusCode.INVALID_ARGUMENT),
        ({"email": "not an address"}, grpc.StatusCode.INVALID_ARGUMENT),
        ({"email": "a@" + "b" * 300 + ".org"}, grpc.StatusCode.INVALID_ARGUMENT),
        ({"email_mode": "hourly"}, grpc.StatusCode.INVALID_ARGUMENT),
        ({"webhook_url": "ftp://example.org/x"}, grpc.StatusCode.INVALID_ARGUMENT),
        ({"webhook_url": "http://" + "a" * 600}, grpc.StatusCode.INVALID_ARGUMENT),
        ({"email_code": "abc"}, grpc.StatusCode.PERMISSION_DENIED),
    ],
)
def test_bad_settings_are_refused_and_change_nothing(
    app: App, players: Callable[..., PlayerClient], fields: dict[str, str], status: grpc.StatusCode
) -> None:
    ann = players("ann")
    before = ann.stub.GetSettings(pb.GetSettingsRequest(), metadata=ann.metadata)
    with pytest.raises(grpc.RpcError) as refused:
        update(ann, **fields, email_mode="digest") if "email_mode" not in fields else update(
            ann, **fields
        )
    assert refused.value.code() == status
    assert len(refused.value.details() or "") < 300
    assert ann.stub.GetSettings(pb.GetSettingsRequest(), metadata=ann.metadata) == before


def test_webhooks_never_reach_private_addresses_by_default(
    make_app: AppFactory, players: Callable[..., PlayerClient], hooks: Hooks
) -> None:
    """A webhook on loopback (here: a real receiver on 127.0.0.1) is looked up at delivery,
    refused, and never called; refused for good after its retries."""
    strict = make_app("strict", token_ttl_seconds=365 * 86_400)
    clock = FakeClock(MONDAY_7AM)
    strict.service.ctx.clock = clock
    with grpc.insecure_channel(f"127.0.0.1:{strict.port}") as channel:
        ann = PlayerClient(channel).join_server("ann")
        update(ann, webhook_url=hooks.url)  # only its form is checked when it is set
        ann.create_match(bot_seats=[1, 2, 3])  # her turn to cut: a notification
        for _ in range(10):
            strict.service.outbox.deliver()
            clock.now += 3 * HOUR
        assert hooks.received == []
        with strict.db.read() as session:
            states = (
                session.connection()
                .exec_driver_sql("SELECT state, webhook_state FROM notification")
                .all()
            )
        assert ("failed", "failed") in [tuple(r) for r in states]
    for url in ("ftp://example.org/x", "http://example.org:99999/", "http://[::1/", "http://a b/"):
        with pytest.raises(grpc.RpcError) as refused:
            update(players("bob"), webhook_url=url)
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_reminders_come_before_the_deadline_once_each(
    app: App, clock: FakeClock, players: Callable[..., PlayerClient], mailbox: tuple[Mailbox, int]
) -> None:
    """The server's default ``reminder_hours`` are 24 and 2: one mail at each, per turn."""
    box, _ = mailbox
    ann, ben = players("ann"), players("ben")
    request = pb.CreateMatchRequest(
        preset="classic", seat=0, bot_seats=[2, 3], time_control=pb.TimeControl(days_per_move=3)
    )
    created = ann.stub.CreateMatch(request, metadata=ann.metadata)
    ben.join_match(created.invite_code, seat=1)
    clients = {0: ann, 1: ben}
    match_id = created.match.match_id
    summary = ann.view(match_id).match
    cutter = summary.clock.seat
    verified(app, box, clients[cutter], "late@example.org", "each")
    app.service.outbox.deliver()
    box.messages.clear()

    def reminders() -> list[Message]:
        app.service.absence.sweep()
        app.service.outbox.deliver()
        return [m for m in box.to("late@example.org") if m["Subject"].startswith("Reminder")]

    due = summary.clock.due_at_ms
    clock.now = due - 25 * HOUR
    assert reminders() == []
    clock.now = due - 23 * HOUR
    assert len(reminders()) == 1
    assert "Due " in mail_text(reminders()[0])  # the deadline, in the player's time zone
    clock.now = due - 3 * HOUR
    assert len(reminders()) == 1  # once per threshold
    other = clients[1 - cutter]
    for covered in (True, False, True, False):  # the other player's changes renew nothing
        other.stub.SetCover(
            pb.SetCoverRequest(match_id=match_id, covered=covered), metadata=other.metadata
        )
        assert len(reminders()) == 1
    clock.now = due - HOUR
    assert len(reminders()) == 2
    clients[cutter].deal(clients[cutter].view(match_id))  # the turn ends: no more reminders
    clock.now = due - 30 * 60_000
    assert len(reminders()) == 2


def test_two_server_processes_handle_each_deadline_and_mail_once(
    make_app: AppFactory, mailbox: tuple[Mailbox, int], app: App, clock: FakeClock,
    players: Callable[..., PlayerClient],
) -> None:  # fmt: skip
    """Two servers on one database (the same data: keys and storage, as replicas): their
    sweeps and deliveries race, and each overdue turn and each mail is handled once."""
    box, port = mailbox
    ann, ben = players("ann"), players("ben")
    request = pb.CreateMatchRequest(
        preset="classic", seat=0, bot_seats=[2, 3], time_control=pb.TimeControl(days_per_move=1)
    )
    created = ann.stub.CreateMatch(request, metadata=ann.metadata)
    ben.join_match(created.invite_code, seat=1)
    for client, address in ((ann, "ann@example.org"), (ben, "ben@example.org")):
        verified(app, box, client, address, "each")
    replica = make_app(
        token_ttl_seconds=365 * 86_400, smtp_host="127.0.0.1", smtp_port=port,
        smtp_security="none", mail_from="canasta@example.org",
    )  # fmt: skip
    replica.service.ctx.clock = clock
    due = ann.view(created.match.match_id).match.clock.due_at_ms
    clock.now = due + 1
    handled: list[int] = []
    start = threading.Barrier(2)

    def work(server: App) -> None:
        start.wait()
        handled.append(server.service.absence.sweep())
        for _ in range(3):
            server.service.outbox.deliver()

    threads = [threading.Thread(target=work, args=(s,)) for s in (app, replica)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(handled) == [0, 1]
    app.bots.drain()
    replica.bots.drain()
    for server in (app, replica):
        server.service.outbox.deliver()
    ids = [m["Message-ID"] for m in box.messages]
    assert ids
    assert len(ids) == len(set(ids)), "a mail went out twice"
    timed_out = [m for m in box.messages if m["Subject"].startswith("Your time ran out")]
    assert len(timed_out) == 1


@pytest.mark.slow  # sixty moves with mail and webhooks: in make test, not the inner loop
def test_leak_audit_of_mails_and_webhooks_over_many_moves(
    app: App, clock: FakeClock, players: Callable[..., PlayerClient],
    mailbox: tuple[Mailbox, int], hooks: Hooks,
) -> None:  # fmt: skip
    """Every mail's table is the one the recipient's own view renders (``canasta show``), and
    the rest of the mail names no card at all; every webhook names no card at all. Checked
    after each of many moves of two players, who also talk at the table now and then: the
    talk in the mails is what they said and nothing more, and no webhook carries it."""
    import re

    from .test_talk import say

    box, _ = mailbox
    match_id, clients = _two_humans(app, players)
    for seat, client in clients.items():
        verified(app, box, client, f"p{seat}@example.org", "each")
        update(client, webhook_url=hooks.url)
    audited = webhooks = cards_seen = talk_mailed = 0
    for number in range(60):
        seat = clients[0].view(match_id).match.to_act
        view = clients[seat].view(match_id)
        if view.match.status != pb.MATCH_STATUS_PLAYING:
            break
        if number % 6 == 0:  # within the rate: 10 messages of a player an hour
            say(clients[seat], match_id, f"remark number {number} from seat {seat}")
        if view.HasField("dealing_seat"):
            clients[seat].deal(view)
        else:
            clients[seat].submit(view, plain_turn(view))
        app.bots.drain()
        box.messages.clear()
        hooks.received.clear()
        app.service.outbox.deliver()
        for reader, client in clients.items():
            table = own_table(app, client, match_id)
            for mail in box.to(f"p{reader}@example.org"):
                around = without_own_table(mail_text(mail), table)
                assert CARD.findall(around.lower()) == [], (reader, around)
                for line in around.splitlines():
                    if line.startswith("  ") and f"at match {match_id[:8]}: " in line:
                        talk_mailed += 1  # another seat's words, and only them
                        assert re.fullmatch(
                            r"  \w+ \(seat (\d)\) at match \w+: remark number \d+ from seat \1",
                            line,
                        ), line
                        assert f"(seat {reader})" not in line  # nobody hears themselves
                audited += 1
                cards_seen += len(CARD.findall(table.lower()))
        for body, _ in hooks.received:
            assert CARD.findall(body.decode().lower()) == []
            assert b"remark" not in body  # a webhook tells of talk, never its words
            webhooks += 1
    assert talk_mailed >= 3
    assert audited >= 10
    assert cards_seen >= 50  # the mails do show hands: the check above has teeth
    assert webhooks >= 10


def _watch_notes(client: PlayerClient, after: int, count: int) -> list[pb.WatchNotification]:
    """The first ``count`` notifications of a Watch stream resumed after ``after``."""
    stream = client.stub.Watch(
        pb.WatchRequest(notifications=True, after_notification_id=after),
        metadata=client.metadata,
        timeout=20,
    )
    found: list[pb.WatchNotification] = []
    try:
        for response in stream:
            if response.HasField("notification"):
                found.append(response.notification)
                if len(found) == count:
                    break
    finally:
        stream.cancel()
    return found


def test_watch_streams_notifications_and_resumes_after_the_last_seen(
    app: App, clock: FakeClock, players: Callable[..., PlayerClient]
) -> None:
    match_id, clients = _two_humans(app, players)
    for client in clients.values():
        update(client, email="someone@example.org")  # a code mail: never on the stream
    cutter = clients[0].view(match_id).match.to_act
    player = clients[cutter]
    (first,) = _watch_notes(player, 0, 1)
    assert first.kind == "your_turn"
    assert first.match_id == match_id
    assert "your turn" in first.text
    player.deal(player.view(match_id))
    app.bots.drain()
    for _ in range(6):  # both players move on; each hears of their turns
        seat = clients[0].view(match_id).match.to_act
        view = clients[seat].view(match_id)
        clients[seat].submit(view, plain_turn(view))
        app.bots.drain()
    with app.db.read() as session:
        mine = app.service.ctx.repo(session).notifications_of(player_id(app, player), 0, 100)
    expected = [n.id for n in mine if n.kind != "verify_email"]
    assert expected
    assert expected[0] > first.id  # the first seen is replaced by a later turn
    resumed = _watch_notes(player, first.id, len(expected))
    assert [n.id for n in resumed] == expected  # from after the last seen: none twice
    assert all(n.kind != "verify_email" for n in resumed)
    assert all("code" not in n.text.lower() for n in resumed)


def player_id(app: App, client: PlayerClient) -> int:
    with app.db.read() as session:
        found = app.service.ctx.repo(session).player_by_key(client.public_key)
    assert found is not None
    return found.id


def test_a_player_cannot_flood_an_inbox_with_codes(
    app: App, clock: FakeClock, players: Callable[..., PlayerClient], mailbox: tuple[Mailbox, int]
) -> None:
    """One code mail per player every ten minutes; only the latest code is ever mailed, and
    the stored notification forgets it once sent."""
    box, _ = mailbox
    eve = players("eve")
    update(eve, email="victim@example.org")
    for _ in range(5):
        with pytest.raises(grpc.RpcError) as limited:
            update(eve, email="victim@example.org")
        assert limited.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    clock.now += 11 * 60_000
    update(eve, email="victim2@example.org")  # the first code, not yet mailed, is void now
    app.service.outbox.deliver()
    assert len(box.to("victim@example.org")) == 0
    assert len(box.to("victim2@example.org")) == 1
    with app.db.read() as session:
        rows = (
            session.connection()
            .exec_driver_sql("SELECT detail_json FROM notification WHERE kind = 'verify_email'")
            .all()
        )
    assert rows
    assert all("code" not in r[0] for r in rows)


def test_code_mails_are_limited_per_address_and_in_all_and_carry_no_chosen_name(
    make_app: AppFactory, mailbox: tuple[Mailbox, int]
) -> None:
    """Issue 25, point 5: new accounts cost nothing, so the limits are per address (3 an
    hour, whoever asks) and in all (here 5); and the mail holds nothing the asker chose."""
    box, port = mailbox
    app = make_app(
        token_ttl_seconds=365 * 86_400, smtp_host="127.0.0.1", smtp_port=port,
        smtp_security="none", mail_from="canasta@example.org", limit_code_mails_per_hour=5,
    )  # fmt: skip
    bait = "URGENT pay at evil.test"
    with grpc.insecure_channel(f"127.0.0.1:{app.port}") as channel:

        def ask(address: str) -> PlayerClient:
            client = PlayerClient(channel).join_server(bait)
            update(client, email=address)
            return client

        for _ in range(3):
            ask("victim@example.org")
        late = PlayerClient(channel).join_server(bait)
        for address in ("victim@example.org", "VICTIM@example.org"):
            with pytest.raises(grpc.RpcError) as refused:
                update(late, email=address)
            assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "this address" in (refused.value.details() or "")
        after = late.stub.GetSettings(pb.GetSettingsRequest(), metadata=late.metadata)
        assert after.email_pending == ""  # the refusal changed nothing
        ask("other1@example.org")
        ask("other2@example.org")
        with pytest.raises(grpc.RpcError) as full:
            ask("other3@example.org")
        assert full.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "the server has mailed as many" in (full.value.details() or "")
        app.service.outbox.deliver()
        assert len(box.to("victim@example.org")) == 3
        assert len(box.messages) == 5
        for mail in box.messages:
            text = mail_text(mail)
            assert text.startswith("Your code is ")
            assert "evil" not in str(mail)
        app.service.ctx.clock = FakeClock(app.service.ctx.clock() + HOUR + 1)
        update(late, email="victim@example.org")  # an hour later: allowed again


def test_clearing_the_address_does_not_take_a_code_mail_out_of_the_count(
    make_app: AppFactory, mailbox: tuple[Mailbox, int]
) -> None:
    """Issue 25, point 5 (found by a later attack): each account asks for a code to the
    victim, lets it be mailed, then clears its address. The mails already
    sent to the victim still count: the fourth account is refused, and the victim gets 3."""
    box, port = mailbox
    app = make_app(
        token_ttl_seconds=365 * 86_400, smtp_host="127.0.0.1", smtp_port=port,
        smtp_security="none", mail_from="canasta@example.org",
    )  # fmt: skip
    with grpc.insecure_channel(f"127.0.0.1:{app.port}") as channel:
        for n in range(3):
            client = PlayerClient(channel).join_server(f"account {n}")
            update(client, email="victim@example.org")
            app.service.outbox.deliver()
            update(client, email="")
        late = PlayerClient(channel).join_server("account 3")
        with pytest.raises(grpc.RpcError) as refused:
            update(late, email="victim@example.org")
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "this address" in (refused.value.details() or "")
        app.service.outbox.deliver()
    assert len(box.to("victim@example.org")) == 3


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:9/",
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]/",  # IPv4-mapped loopback
        "http://[64:ff9b::a00:1]/",  # NAT64 to 10.0.0.1
        "http://[2002:a00:1::1]/",  # 6to4 from 10.0.0.1
        "http://169.254.169.254/latest/meta-data",
        "http://localhost:8080/",
    ],
)
def test_webhook_delivery_refuses_addresses_that_are_not_public(url: str) -> None:
    from server.edge.mail_out import http_post
    from server.service.news.outbox import DeliveryError

    with pytest.raises(DeliveryError, match="not a public address") as refused:
        http_post(url, b"{}", {}, False)
    assert "10.0" not in str(refused.value)  # the address found is not echoed


@pytest.mark.parametrize(
    "address",
    [
        "::127.0.0.1",  # IPv4-compatible loopback
        "::ffff:0:7f00:1",  # IPv4-translated loopback
        "::ffff:0:a00:1",  # IPv4-translated 10.0.0.1
        "224.0.0.1",  # multicast
        "ff0e::1",  # global-scope multicast
        "192.0.0.8",  # IETF protocol assignments
        "100.64.0.1",  # carrier-grade NAT
        "0.0.0.0",
        "::",
        "fe80::1",
        "fc00::1",
    ],
)
def test_the_webhook_guard_judges_an_address_by_its_properties(address: str) -> None:
    """Issue 25, point 12: the spellings that got through. The decision alone (``http_post``
    asks it before it connects, as the test above shows): a test never connects to an address
    other than loopback, even when the guard is wrong."""
    from ipaddress import ip_address

    from server.service.news.outbox import public_address

    assert not public_address(ip_address(address))


def test_the_webhook_guard_lets_public_unicast_addresses_through() -> None:
    from ipaddress import ip_address

    from server.service.news.outbox import public_address

    for text in ("8.8.8.8", "2001:4860:4860::8888", "::ffff:8.8.8.8", "64:ff9b::808:808"):
        assert public_address(ip_address(text)), text


def test_no_digest_goes_out_after_mail_was_turned_off(
    app: App, clock: FakeClock, players: Callable[..., PlayerClient], mailbox: tuple[Mailbox, int]
) -> None:
    box, _ = mailbox
    match_id, clients = _two_humans(app, players)
    verified(app, box, clients[0], "ann@example.org", "digest")
    verified(app, box, clients[1], "ben@example.org", "digest")
    for _ in range(8):  # both players have news
        seat = clients[0].view(match_id).match.to_act
        view = clients[seat].view(match_id)
        if view.HasField("dealing_seat"):
            clients[seat].deal(view)
        else:
            clients[seat].submit(view, plain_turn(view))
        app.bots.drain()
    app.service.outbox.deliver()  # marked for the digest
    with app.db.read() as session:
        waiting = (
            session.connection()
            .exec_driver_sql(
                "SELECT COUNT(DISTINCT player_id) FROM notification WHERE email_state = 'digest'"
            )
            .scalar_one()
        )
    assert waiting == 2
    update(clients[0], email_mode="off")
    clock.now += 2 * HOUR  # past the digest hour
    app.service.outbox.deliver()
    assert box.to("ann@example.org") == []
    assert len(box.to("ben@example.org")) == 1  # the other still gets theirs, once
    clock.now += HOUR
    app.service.outbox.deliver()
    assert len(box.to("ben@example.org")) == 1


def test_a_watch_resumed_after_an_impossible_id_is_refused(
    app: App, players: Callable[..., PlayerClient]
) -> None:
    ann = players("ann")
    stream = ann.stub.Watch(
        pb.WatchRequest(notifications=True, after_notification_id=2**64 - 1),
        metadata=ann.metadata,
        timeout=10,
    )
    with pytest.raises(grpc.RpcError) as refused:
        next(iter(stream))
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    registry = app.service.ctx.metrics.registry
    deadline = time.monotonic() + 5  # the server ends the stream just after the client hears
    while registry.get_sample_value("canasta_watch_streams_open") and time.monotonic() < deadline:
        time.sleep(0.01)
    assert registry.get_sample_value("canasta_watch_streams_open") == 0  # not counted as open


def test_an_hour_clock_reminds_two_hours_before_and_times_out(
    app: App, clock: FakeClock, players: Callable[..., PlayerClient], mailbox: tuple[Mailbox, int]
) -> None:
    """Issue 28: a 12-hour turn with 6 hours of bank. The move's own deadline and the bank's
    are both shown; no 24-hour reminder (the turn is shorter), one 2-hour reminder, then at
    the deadline (bank spent) a bot covers the seat and its player is told."""
    box, _ = mailbox
    ann, ben = players("ann"), players("ben")
    control = pb.TimeControl(hours_per_move=12, bank_hours=6)
    request = pb.CreateMatchRequest(
        preset="classic", seat=0, bot_seats=[2, 3], time_control=control
    )
    created = ann.stub.CreateMatch(request, metadata=ann.metadata)
    ben.join_match(created.invite_code, seat=1)
    clients = {0: ann, 1: ben}
    match_id = created.match.match_id
    summary = ann.view(match_id).match
    assert summary.time_control.hours_per_move == 12
    assert summary.time_control.bank_hours == 6
    assert summary.time_control.days_per_move == 0  # not whole days: hours only
    cutter = summary.clock.seat
    started = summary.clock.started_at_ms
    assert summary.clock.move_due_at_ms == started + 12 * HOUR
    assert summary.clock.due_at_ms == started + 18 * HOUR
    verified(app, box, clients[cutter], "late@example.org", "each")
    app.service.outbox.deliver()
    box.messages.clear()

    def mails(subject: str) -> list[Message]:
        app.service.absence.sweep()
        app.service.outbox.deliver()
        return [m for m in box.to("late@example.org") if m["Subject"].startswith(subject)]

    clock.now = started + 10 * HOUR  # 8 hours left in all: no 24-hour reminder
    assert mails("Reminder") == []
    clock.now = started + 16 * HOUR + 1  # under 2 hours left
    assert len(mails("Reminder")) == 1
    assert mails("Your time ran out") == []
    clock.now = started + 18 * HOUR
    assert len(mails("Your time ran out")) == 1
    app.bots.drain()
    assert ann.view(match_id).match.seats[cutter].covered == "timeout"


def test_settled_notifications_are_forgotten_after_the_retention_period(
    app: App, clock: FakeClock, players: Callable[..., PlayerClient], mailbox: tuple[Mailbox, int]
) -> None:
    """Issue 29: storage stays bounded. Notifications settled more than
    ``notification_retention_days`` (90) ago are deleted by the outbox's hourly pass; newer
    ones, and those a digest still waits for, stay."""
    box, _ = mailbox
    match_id, clients = _two_humans(app, players)
    seats = [clients[0], clients[1]]
    verified(app, box, clients[1], "ben@example.org", "each")
    for _ in range(4):
        next_plain_move(seats, match_id)
        app.bots.drain()
    app.service.outbox.deliver()

    def ids(where: str = "") -> set[int]:
        with app.db.read() as session:
            rows = session.connection().exec_driver_sql(f"SELECT id FROM notification {where}")
            return {int(r[0]) for r in rows}

    old = ids()
    assert old
    assert ids("WHERE state IN ('done', 'failed')") == old  # all delivered or settled
    clock.now += 89 * 24 * HOUR
    assert app.service.outbox.forget_old(clock.now) == 0  # not old enough yet
    next_plain_move(seats, match_id)  # news after the old ones: kept
    app.bots.drain()
    app.service.outbox.deliver()
    newer = ids() - old
    assert newer
    with app.db.write() as session:  # one old notification still waits for a digest
        session.connection().exec_driver_sql(
            f"UPDATE notification SET email_state = 'digest' WHERE id = {min(old)}"
        )
        session.connection().exec_driver_sql(  # as stored before done_ms was set at once
            f"UPDATE notification SET done_ms = 0 WHERE id = {max(old)}"
        )
    clock.now += 2 * 24 * HOUR
    app.service.outbox.start_round()  # the hourly pass comes with a round
    assert ids() == newer | {min(old)}


def test_turn_notices_are_bounded_per_player_and_match_and_each_mailed_once(
    app: App, clock: FakeClock, players: Callable[..., PlayerClient], mailbox: tuple[Mailbox, int]
) -> None:
    """Issue 29: a turn notice replaces the player's delivered ones of the match, so their
    rows do not grow with the moves; every one still goes out, once, and one that waits for
    delivery is never replaced."""
    box, _ = mailbox
    match_id, clients = _two_humans(app, players)
    seats = [clients[0], clients[1]]
    verified(app, box, clients[1], "ben@example.org", "each")
    ben = player_id(app, clients[1])

    def rows(where: str) -> list[tuple[int, str, str]]:
        with app.db.read() as session:
            found = session.connection().exec_driver_sql(
                "SELECT id, kind, state FROM notification WHERE kind IN"
                f" ('your_turn', 'partner_asks') AND match_id = '{match_id}' AND {where}"
            )
            return [(int(r[0]), str(r[1]), str(r[2])) for r in found]

    due: set[int] = set()  # every turn notice of ben's that waited for delivery
    unsent: set[int] = set()
    for move in range(40):
        next_plain_move(seats, match_id)
        app.bots.drain()
        unsent |= {i for i, _, state in rows(f"player_id = {ben}") if state == "pending"}
        assert unsent <= {i for i, _, _ in rows("1 = 1")}  # none replaced before it went
        if move % 3 == 0:  # some turns wait a while: a newer one must not replace them
            app.service.outbox.deliver()
            due |= unsent
            unsent.clear()
            for player in (ben, player_id(app, clients[0])):
                assert len(rows(f"player_id = {player}")) <= 2
    due |= unsent
    app.service.outbox.deliver()
    assert rows("state = 'pending'") == []
    mailed = [
        int(str(m["Message-ID"]).split("canasta-notification-")[1].split("@")[0])
        for m in box.to("ben@example.org")
        if "canasta-notification-" in str(m["Message-ID"])
    ]
    turns = [i for i in mailed if i in due]
    assert len(due) >= 5
    assert sorted(turns) == sorted(due)  # each turn notice mailed, and once
    assert len(rows(f"player_id = {ben}")) <= 2  # the newest and the last mailed


def test_a_turn_notice_being_retried_keeps_the_mail_its_talk_starts_from(
    app: App, players: Callable[..., PlayerClient]
) -> None:
    """Issue 29: while an older turn notice of a player's match waits (its mail failed and is
    tried again), no turn notice of that match is replaced: its mail's table talk starts after
    the last mail below it (``talk_notes_before``), which must still be there."""
    from server.domain import Notice

    match_id, clients = _two_humans(app, players)
    ben = player_id(app, clients[1])

    def add_turn(state: str, email_state: str) -> int:
        with app.db.write() as session:
            app.service.ctx.repo(session).add_notices(
                [Notice(ben, match_id, "your_turn", {})], app.service.ctx.clock()
            )
            connection = session.connection()
            (newest,) = connection.exec_driver_sql("SELECT MAX(id) FROM notification").one()
            connection.exec_driver_sql(
                f"UPDATE notification SET state = '{state}', email_state = '{email_state}'"
                f" WHERE id = {newest}"
            )
        return int(newest)

    def kept() -> set[int]:
        with app.db.read() as session:
            found = session.connection().exec_driver_sql(
                "SELECT id FROM notification WHERE kind = 'your_turn'"
                f" AND match_id = '{match_id}' AND player_id = {ben}"
            )
            return {int(row[0]) for row in found}

    with app.db.write() as session:  # the match's own turn notices so far: out of the way
        session.connection().exec_driver_sql(
            f"DELETE FROM notification WHERE match_id = '{match_id}' AND player_id = {ben}"
        )
    first = add_turn("done", "sent")  # mailed
    retried = add_turn("pending", "")  # its mail failed: tried again later
    third = add_turn("done", "sent")  # mailed meanwhile
    fourth = add_turn("pending", "")
    assert kept() == {first, retried, third, fourth}  # the retried one's last mail stays
    with app.db.write() as session:  # the retried mail goes out at last, and the fourth's
        session.connection().exec_driver_sql(
            "UPDATE notification SET state = 'done', email_state = 'sent'"
            f" WHERE id IN ({retried}, {fourth})"
        )
    fifth = add_turn("pending", "")
    assert kept() == {fourth, fifth}  # the newest and the last mailed, once none waits


def test_a_wrong_code_can_be_tried_again_until_it_expires(
    app: App, clock: FakeClock, players: Callable[..., PlayerClient], mailbox: tuple[Mailbox, int]
) -> None:
    """Issue 28: a wrong code leaves the mailed one working, and the refusal says so (it used
    to say to set the address again); an expired one needs a new mail, and says that."""
    import re

    box, _ = mailbox
    ann, ben = players("ann"), players("ben")

    def refusal(client: PlayerClient, code: str) -> str:
        with pytest.raises(grpc.RpcError) as refused:
            update(client, email_code=code)
        assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
        return refused.value.details() or ""

    assert "no address of yours waits for a code" in refusal(ann, "abc")
    for client, address in ((ann, "ann@example.org"), (ben, "ben@example.org")):
        update(client, email=address)
    app.service.outbox.deliver()
    codes = {}
    for address in ("ann@example.org", "ben@example.org"):
        (mail,) = box.to(address)
        found = re.search(r"Your code is ([a-z0-9]+)", mail_text(mail))
        assert found is not None
        codes[address] = found[1]
    said = refusal(ann, "not-the-code")
    assert said == (
        "that is not the code last mailed to ann@example.org (only the latest one works): "
        "check it and try again; the code works for 60 more minutes"
    )
    clock.now += 45 * 60_000
    assert refusal(ann, "still-not-it").endswith("the code works for 15 more minutes")
    assert update(ann, email_code=codes["ann@example.org"]).email_verified  # it still works
    clock.now += 16 * 60_000
    assert refusal(ben, codes["ben@example.org"]) == (
        "the code mailed to ben@example.org expired (a code works for 60 minutes): set the "
        "address again for a new one"
    )


def test_a_watch_sends_the_notifications_of_a_change_before_the_change(
    app: App, clock: FakeClock, players: Callable[..., PlayerClient]
) -> None:
    """Issue 28: the notices a change caused come just before the change on the stream, so a
    watcher knows what the change was ("hand over": the seat named is to cut, not to move)."""
    match_id, clients = _two_humans(app, players)
    ann = clients[0]
    with app.db.read() as session:
        known = app.service.ctx.repo(session).notifications_of(player_id(app, ann), 0, 100)
    after = max((n.id for n in known), default=0)
    stream = ann.stub.Watch(
        pb.WatchRequest(notifications=True, after_notification_id=after),
        metadata=ann.metadata,
        timeout=20,
    )
    try:
        first = next(stream)
        assert first.match_id == match_id  # the match's state now
        for _ in range(40):  # others move until it is Ann's turn
            seat = ann.view(match_id).match.to_act
            if seat == 0 and first.version < ann.view(match_id).version:
                break
            view = clients[seat].view(match_id)
            if view.HasField("dealing_seat"):
                clients[seat].deal(view)
            else:
                clients[seat].submit(view, plain_turn(view))
            app.bots.drain()
        else:
            raise AssertionError("Ann's turn never came")
        version = ann.view(match_id).version
        seen: list[pb.WatchResponse] = []
        for response in stream:
            seen.append(response)
            if not response.HasField("notification") and response.version == version:
                break
    finally:
        stream.cancel()
    assert seen[-1].to_act == 0
    before = seen[-2]
    assert before.HasField("notification"), seen
    assert before.notification.kind == "your_turn"
    assert before.notification.match_id == match_id


@pytest.mark.slow  # a whole hand: out of the inner loop
def test_hand_over_comes_just_before_the_change_that_ended_the_hand(
    app: App, clock: FakeClock, players: Callable[..., PlayerClient]
) -> None:
    """Issue 28: at the end of a hand the stream says "hand over" and then the change, whose
    seat to act is the one that cuts (``canasta watch`` says "to cut", not "to move")."""
    match_id, clients = _two_humans(app, players)
    ann = clients[0]
    stream = ann.stub.Watch(
        pb.WatchRequest(notifications=True, after_notification_id=0),
        metadata=ann.metadata,
        timeout=120,
    )
    try:
        for _ in range(400):  # the humans draw and discard until the hand is over
            view = ann.view(match_id)
            if view.HasField("dealing_seat") and view.view.hand_number == 1:
                break
            seat = view.match.to_act
            view = clients[seat].view(match_id)
            if view.HasField("dealing_seat"):
                clients[seat].deal(view)
            else:
                try:
                    clients[seat].submit(view, plain_turn(view))
                except grpc.RpcError:  # the empty stock's compulsory take: what the engine lists
                    moves = clients[seat].stub.GetMoves(
                        pb.GetMovesRequest(match_id=match_id), metadata=clients[seat].metadata
                    )
                    clients[seat].submit(view, [moves.groups[0].actions[0]])
            app.bots.drain()
        else:
            raise AssertionError("the hand never ended")
        seen: list[pb.WatchResponse] = []
        for response in stream:
            seen.append(response)
            if not response.HasField("notification") and response.version == view.version:
                break
    finally:
        stream.cancel()
    over = [i for i, r in enumerate(seen) if r.notification.kind == "hand_ended"]
    assert over, "no hand over on the stream"
    after = [r for r in seen[over[-1] + 1 :] if not r.HasField("notification")]
    assert [r.version for r in after] == [view.version], seen[over[-1] - 2 :]
    assert after[0].to_act == view.dealing_seat
