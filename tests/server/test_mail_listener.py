"""The server's own SMTP listener (issue 16): a real ``aiosmtpd`` listener of the server on
127.0.0.1, spoken to with ``smtplib``; the answers go out through the outbox to another real
SMTP server (the ``mailbox`` fixture). It takes mail for the server's address only (no relay),
refuses oversized mail at the SMTP layer, and answers 250 to every mail it took, moved or not."""

from __future__ import annotations

import smtplib
from collections.abc import Callable

import pytest

from server.app import App
from server.service.mailin import MAX_MAIL_BYTES
from shared.armor import armor
from tests.testkit import PlayerClient

from .conftest import AppFactory
from .mailkit import Mailbox, free_port, mail_text, verified

MOVES = "moves@canasta.example.org"


@pytest.fixture
def app(make_app: AppFactory, mailbox: tuple[Mailbox, int]) -> App:
    made = make_app(
        token_ttl_seconds=365 * 86_400,
        smtp_host="127.0.0.1",
        smtp_port=mailbox[1],
        smtp_security="none",
        mail_from=MOVES,
        smtp_listen=f"127.0.0.1:{free_port()}",
    )
    assert made.mail_listener is not None
    made.mail_listener.start()
    return made  # make_app's App.stop() closes the listener


def _send(app: App, sender: str, body: bytes, to: str = MOVES) -> None:
    assert app.mail_listener is not None
    with smtplib.SMTP(app.mail_listener.host, app.mail_listener.port, timeout=10) as client:
        client.sendmail(sender, [to], body)


def _mail(sender: str, text: str) -> bytes:
    return (
        f"From: {sender}\r\nTo: {MOVES}\r\nSubject: my move\r\n"
        f"Content-Type: text/plain; charset=utf-8\r\n\r\n{text}"
    ).encode()


def test_a_move_mailed_to_the_listener_is_stored_and_answered(
    app: App, players: Callable[..., PlayerClient], mailbox: tuple[Mailbox, int]
) -> None:
    box, _ = mailbox
    ann = players("ann")
    verified(app, box, ann, "ann@example.org", "off")
    match_id = ann.create_match(seat=0, bot_seats=[1, 2, 3]).match.match_id
    app.bots.drain()
    view = ann.view(match_id)
    while view.match.to_act != 0:  # the cut is ann's (the only person); then bots may play
        app.bots.drain()
        view = ann.view(match_id)
    request = (
        ann.envelope(view, ["deal"], deal_commitment=view.deal_commitment, client_time_ms=0)
        if view.HasField("dealing_seat")
        else ann.envelope(view, ["draw"])
    )
    _send(app, "ann@example.org", _mail("Ann <ann@example.org>", armor(request)))
    assert ann.view(match_id).version >= view.version + 1
    app.service.outbox.deliver()
    (answer,) = box.to("ann@example.org")
    assert f"Your move {view.version + 1} in match {match_id[:8]} is stored" in mail_text(answer)
    # Hostile mail the listener takes (250) and the service ignores: nothing is sent anywhere.
    app.bots.drain()  # the bots' answers to ann's move first
    version = ann.view(match_id).version
    _send(app, "eve@example.net", _mail("eve@example.net", armor(request)))
    _send(app, "ann@example.org", b"\xff\xfe not a mail at all")
    app.service.outbox.deliver()
    assert len(box.messages) == 1
    assert ann.view(match_id).version == version


def test_the_listener_is_no_relay_and_refuses_oversized_mail(app: App) -> None:
    with pytest.raises(smtplib.SMTPRecipientsRefused) as relay:
        _send(app, "eve@example.net", _mail("eve@example.net", "hi"), to="victim@example.com")
    assert relay.value.recipients["victim@example.com"][0] == 550
    assert app.mail_listener is not None
    with smtplib.SMTP(app.mail_listener.host, app.mail_listener.port, timeout=10) as client:
        client.ehlo()
        assert client.has_extn("size")
        assert int(client.esmtp_features["size"]) == MAX_MAIL_BYTES
        client.mail("eve@example.net")
        assert client.rcpt(MOVES)[0] == 250
        assert client.rcpt(MOVES)[0] == 452  # one recipient per mail
        big = _mail("eve@example.net", ("x" * 70 + "\r\n") * (MAX_MAIL_BYTES // 70))
        assert client.data(big)[0] == 552
