"""The server's own SMTP listener (issue 16): a real ``aiosmtpd`` listener of the server on
127.0.0.1, spoken to with ``smtplib``; the answers go out through the outbox to another real
SMTP server (the ``mailbox`` fixture). It takes mail for the server's address only (no relay),
refuses oversized mail at the SMTP layer, and answers 250 to every mail it took, moved or not."""

from __future__ import annotations

import logging
import re
import smtplib
import socket
import time
from collections.abc import Callable
from typing import Any

import pytest

from server.app import App
from server.edge.smtp import ListenerLimits, SmtpListener, peer_key
from server.service.mail.mailin import MAX_MAIL_BYTES, MAX_PARTS, REFUSALS_PER_HOUR
from shared.armor import armor
from tests.testkit import PlayerClient

from .conftest import AppFactory
from .mailkit import Mailbox, free_port, mail_text, update, verified

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


def _mail(sender: str, text: str, subject: str = "my move") -> bytes:
    return (
        f"From: {sender}\r\nTo: {MOVES}\r\nSubject: {subject}\r\n"
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


# -- hostile peers (issue 25) --------------------------------------------------------------------


def _nested(sender: str, depth: int) -> bytes:
    """A mail of ``depth`` multiparts each inside the last, under 64 KiB (at 1,000 levels the
    standard library's parser runs out of stack)."""
    levels = "".join(
        f"Content-Type:multipart/mixed;boundary={n:x}\r\n\r\n--{n:x}\r\n" for n in range(depth)
    )
    mail = f"From: {sender}\r\nTo: {MOVES}\r\nSubject: hi\r\n{levels}\r\ndraw\r\n".encode()
    assert len(mail) < MAX_MAIL_BYTES
    return mail


def _bare_parts(sender: str, count: int) -> bytes:
    """One multipart of ``count`` parts that have no headers of their own."""
    parts = "".join("--b\r\n\r\nx\r\n" for _ in range(count))
    return (
        f'From: {sender}\r\nTo: {MOVES}\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n'
        f"{parts}--b--\r\n"
    ).encode()


def _outcomes(caplog: pytest.LogCaptureFixture) -> list[str]:
    """What the listener logged of each mail it took (and that none logged a traceback)."""
    assert not [r for r in caplog.records if r.exc_info], "a traceback in the log"
    return [r.getMessage().split(": ", 1)[1] for r in caplog.records if r.name == LISTENER_LOG]


LISTENER_LOG = "server.edge.smtp"


def test_nested_or_many_part_mail_is_taken_and_dropped_or_refused_once(
    app: App,
    players: Callable[..., PlayerClient],
    mailbox: tuple[Mailbox, int],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Issue 25, 1 and 2: a stranger's mail is judged by its headers alone (its body is never
    parsed); a player's is parsed by a parser that stops at the 16th part. Either way a 250,
    never a 451 (which would make the sending server try again forever)."""
    box, _ = mailbox
    verified(app, box, players("ann"), "ann@example.org", "off")
    with caplog.at_level(logging.INFO, logger=LISTENER_LOG):
        _send(app, "eve@example.net", _nested("eve@example.net", 1000))
        _send(app, "ann@example.org", _nested("ann@example.org", 1000))
        _send(app, "ann@example.org", _bare_parts("Ann <ann@example.org>", 2000))
        # The null envelope sender of bounces and auto-replies: dropped before anything else.
        _send(app, "", _mail("ann@example.org", "no move at all"))
    assert _outcomes(caplog) == [
        "ignored (the sender is no player's verified address)",
        f"refused (the mail has more than {MAX_PARTS} parts: send the move as plain text)",
        f"ignored (the mail has more than {MAX_PARTS} parts: send the move as plain text (not "
        "answered: the same mail was refused this hour))",
        "ignored (a null envelope sender: a bounce or an automatic reply)",
    ]
    app.service.outbox.deliver()
    (refusal,) = box.to("ann@example.org")  # the same refusal again is not mailed again
    assert f"more than {MAX_PARTS} parts" in mail_text(refusal)
    assert len(box.messages) == 1


def _gated(app: App, **limits: Any) -> SmtpListener:
    """Another listener of ``app``'s service, with these limits, started (stop it after)."""
    listener = SmtpListener(
        app.service.mail, f"127.0.0.1:{free_port()}", MOVES, ListenerLimits(**limits)
    )
    listener.start()
    for _ in range(1000):  # aiosmtpd's own probe at start, until it is gone
        if not listener.connections:
            return listener
        time.sleep(0.01)
    raise AssertionError("the listener's start-up probe never left")


def _connect(listener: SmtpListener) -> tuple[socket.socket, bytes]:
    """A raw connection and the first line the listener said (its greeting or refusal)."""
    sock = socket.create_connection((listener.host, listener.port), timeout=10)
    return sock, sock.makefile("rb").readline()


def _closed_by_server(sock: socket.socket) -> bool:
    """Whether the listener closed ``sock`` (reads what is left until the end)."""
    try:
        while sock.recv(4096):
            pass
    except TimeoutError:
        return False
    return True


def _refusal_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "mail listener refused" in r.getMessage()]


def test_connections_are_capped_per_peer_and_in_total_and_logged_once_a_minute(
    app: App, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 25, 3: one peer cannot hold the listener; a refused connection is greeted with
    421 and closed; a refused peer gets one log line a minute, not one per connection."""
    per_peer = _gated(app, connections_per_peer=2, connections=100)
    total = _gated(app, connections_per_peer=100, connections=3)
    held: list[socket.socket] = []
    try:
        with caplog.at_level(logging.INFO):
            for _ in range(2):
                sock, greeting = _connect(per_peer)
                held.append(sock)
                assert greeting.startswith(b"220 "), greeting
            for _ in range(10):
                sock, refused = _connect(per_peer)
                assert refused.startswith(b"421 4.7.0 too many connections from your address")
                assert _closed_by_server(sock)
                sock.close()
            assert len(_refusal_lines(caplog)) == 1
            assert "127.0.0.1" in _refusal_lines(caplog)[0]
            held.pop().close()  # one leaves: the next may come (once the listener saw it go)
            for _ in range(100):
                sock, greeting = _connect(per_peer)
                held.append(sock)
                if greeting.startswith(b"220 "):
                    break
            else:
                raise AssertionError("the listener never let the peer in again")
            for _ in range(3):
                sock, greeting = _connect(total)
                held.append(sock)
                assert greeting.startswith(b"220 "), greeting
            sock, refused = _connect(total)
            held.append(sock)
            assert refused.startswith(b"421 4.7.0 too many connections now")
            assert _closed_by_server(sock)
        assert not [r for r in caplog.records if r.name.startswith("mail.log")]
    finally:
        for sock in held:
            sock.close()
        per_peer.stop()
        total.stop()


def test_idle_and_endless_sessions_are_closed(app: App) -> None:
    """Issue 25, 3: a session without a command is closed after ``idle_seconds``, and one
    that keeps sending harmless commands after ``session_seconds`` all the same."""
    idle = _gated(app, idle_seconds=0.5)
    endless = _gated(app, idle_seconds=30.0, session_seconds=1.0)
    try:
        sock, greeting = _connect(idle)
        assert greeting.startswith(b"220 ")
        assert _closed_by_server(sock)
        sock.close()
        sock, greeting = _connect(endless)
        assert greeting.startswith(b"220 ")
        sock.settimeout(0.3)
        for n in range(30):  # 30 commands over 9 s or more, each well within its own limit
            try:
                sock.sendall(b"NOOP\r\n" if n % 2 else b"RSET\r\n")
            except OSError:
                break
            if _closed_by_server(sock):
                break
        else:
            raise AssertionError("a session that never stops was never closed")
        sock.close()
    finally:
        idle.stop()
        endless.stop()


def test_mails_are_rate_limited_per_peer_and_in_total(
    app: App, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 25, 2: past its mails a minute a peer's next mail gets 450 at MAIL FROM (before
    any of it is sent; the sending server tries again later), and so does anyone's past the
    listener's total; the refusal is logged once a minute."""
    per_peer = _gated(app, mails_per_minute_per_peer=3, mails_per_minute=100)
    total = _gated(app, mails_per_minute_per_peer=100, mails_per_minute=2)
    try:
        with caplog.at_level(logging.INFO):
            for listener, allowed in ((per_peer, 3), (total, 2)):
                with smtplib.SMTP(listener.host, listener.port, timeout=10) as client:
                    for _ in range(allowed):
                        client.sendmail("eve@example.net", [MOVES], _mail("eve@example.net", "x"))
                    for _ in range(3):
                        code, reply = client.mail("eve@example.net")
                        assert code == 450, reply
                        assert b"too many requests from" in reply
                        client.rset()
        lines = _refusal_lines(caplog)
        assert len(lines) == 2, lines
        assert "refused ipv4:127.0.0.1: 450 4.7.1 too many requests from your address" in lines[0]
        assert "refused all peers: 450 4.7.1 too many requests from all senders" in lines[1]
    finally:
        per_peer.stop()
        total.stop()


def _ann_to_cut(
    app: App, players: Callable[..., PlayerClient], box: Mailbox
) -> tuple[PlayerClient, str, str]:
    """Ann, with moves by reply on, at a table with three bots where it is her move (the cut):
    her client, the match and the reply code of her "Your turn" mail (then the box is empty)."""
    ann = players("ann")
    verified(app, box, ann, "ann@example.org", "each")
    assert update(ann, allow_reply_moves=True).allow_reply_moves
    match_id = ann.create_match(seat=0, bot_seats=[1, 2, 3]).match.match_id
    app.bots.drain()
    assert ann.view(match_id).match.to_act == 0
    app.service.outbox.deliver()
    (turn,) = [m for m in box.to("ann@example.org") if m["Subject"].startswith("Your turn")]
    box.messages.clear()
    found = re.search(r"\[(canasta-[a-z0-9]+)\]", str(turn["Subject"]))
    assert found is not None
    return ann, match_id, found[1]


def _reply(sender: str, code: str, text: str) -> bytes:
    return _mail(sender, f"{text}\r\n", subject=f"Re: Your turn [{code}]")


def test_only_the_address_part_of_from_counts(
    app: App, players: Callable[..., PlayerClient], mailbox: tuple[Mailbox, int]
) -> None:
    """Issue 25, 7: a From that mail clients and DMARC read as Eve's (or that shows an address
    as its display name) is nobody's, even with Ann's valid code; Ann's own reply is hers."""
    box, _ = mailbox
    ann, match_id, code = _ann_to_cut(app, players, box)
    version = ann.view(match_id).version
    for forged in (
        "ann@example.org <eve@example.net>",
        '"ann@example.org" <eve@example.net>',
        "=?utf-8?q?ann=40example.org?= <ann@example.org>",
        '"eve@example.net" <ann@example.org>',
        "Ann <ann@example.org> <eve@example.net>",
        "ann@example.org eve@example.net",
        "friends: ann@example.org;",
    ):
        _send(app, "eve@example.net", _reply(forged, code, "deal"))
        assert ann.view(match_id).version == version, forged
    app.service.outbox.deliver()
    assert box.messages == []
    _send(app, "ann@example.org", _reply("Ann Example <ann@example.org>", code, "deal"))
    assert ann.view(match_id).version >= version + 1  # (and the bots may play on)


def test_a_refusal_spends_no_code_and_the_same_text_is_answered_once(
    app: App, players: Callable[..., PlayerClient], mailbox: tuple[Mailbox, int]
) -> None:
    """Issue 25, 8: an auto-responder without the marker headers answers Ann's mail; the
    server refuses that once, does not answer the same text to the refusal again (which ends
    the loop), and her code stays good for her own reply."""
    box, _ = mailbox
    ann, match_id, code = _ann_to_cut(app, players, box)
    version = ann.view(match_id).version
    away = "I am away until Monday and will answer your mail then."
    _send(app, "ann@example.org", _reply("ann@example.org", code, away))
    app.service.outbox.deliver()
    (refusal,) = box.to("ann@example.org")
    box.messages.clear()
    assert "cannot read the move" in mail_text(refusal)
    fresh = re.search(r"\[(canasta-[a-z0-9]+)\]", str(refusal["Subject"]))
    assert fresh is not None
    assert fresh[1] != code
    quoted = "\n".join("> " + line for line in mail_text(refusal).splitlines())
    _send(app, "ann@example.org", _reply("ann@example.org", fresh[1], f"{away}\n\n{quoted}"))
    app.service.outbox.deliver()
    assert box.messages == []  # not answered again
    assert ann.view(match_id).version == version
    _send(app, "ann@example.org", _reply("Ann <ann@example.org>", code, "deal"))
    assert ann.view(match_id).version >= version + 1  # (and the bots may play on)
    app.service.outbox.deliver()
    subjects = [str(m["Subject"]) for m in box.to("ann@example.org")]  # (a code, if her move)
    answers = [s.split(" [")[0] for s in subjects if s.startswith("Move")]
    assert answers == [f"Move stored - match {match_id[:8]}"]


@pytest.mark.slow  # thirty-odd mails: out of the inner loop
def test_forged_mail_cannot_silence_the_answer_to_a_real_reply(
    app: App, players: Callable[..., PlayerClient], mailbox: tuple[Mailbox, int]
) -> None:
    """Issue 25, 8: forged mail in Ann's name uses up the hour's refusals (the last one says
    so); her own reply, which carries her valid code, is still answered."""
    box, _ = mailbox
    _, _, code = _ann_to_cut(app, players, box)
    forged = [
        app.service.mail.receive(_mail("ann@example.org", f"spam number {n}")).status
        for n in range(REFUSALS_PER_HOUR + 1)
    ]
    assert forged == ["refused"] * REFUSALS_PER_HOUR + ["ignored"]
    app.service.outbox.deliver()
    refusals = box.to("ann@example.org")
    assert len(refusals) == REFUSALS_PER_HOUR
    assert f"That makes {REFUSALS_PER_HOUR} refusals this hour" in mail_text(refusals[-1])
    assert "That makes" not in mail_text(refusals[-2])
    box.messages.clear()
    _send(app, "ann@example.org", _reply("ann@example.org", code, "draw"))  # she must cut
    app.service.outbox.deliver()
    (answer,) = box.to("ann@example.org")
    assert "Your mail moved nothing:" in mail_text(answer)


def test_peers_are_counted_by_host_and_an_ipv6_one_by_its_64() -> None:
    assert peer_key(("127.0.0.1", 2525)) == "ipv4:127.0.0.1"
    assert peer_key(("2001:db8::1", 2525, 0, 0)) == "ipv6:2001:db8::/64"
    assert peer_key(("2001:db8::2:1", 2526, 0, 0)) == "ipv6:2001:db8::/64"
    assert peer_key(("::ffff:192.0.2.7", 2525, 0, 0)) == "ipv4:192.0.2.7"
