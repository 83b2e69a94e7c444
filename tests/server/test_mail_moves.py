"""Moves by mail (issue 16): armored signed moves handed in by mail (``MailIn.receive``, what
``canasta-server mail-in`` runs) or by the operator (``submit_armored``), answered through the
outbox to a real SMTP server (``aiosmtpd`` on 127.0.0.1); and hostile mail, which changes
nothing and is answered, at most, by one short refusal to a verified address."""

from __future__ import annotations

from collections.abc import Callable
from email.message import EmailMessage

import pytest

from server.app import App
from server.service.mailin import MAX_MAIL_BYTES
from shared.armor import armor
from shared.crypto.chain import verify_receipt
from shared.pb import canasta_pb2 as pb
from tests.testkit import PlayerClient

from .conftest import AppFactory
from .mailkit import CARD, Mailbox, mail_text, verified

SERVER_ADDRESS = "moves@canasta.example.org"


@pytest.fixture
def app(make_app: AppFactory, mailbox: tuple[Mailbox, int]) -> App:
    return make_app(
        token_ttl_seconds=365 * 86_400,
        smtp_host="127.0.0.1",
        smtp_port=mailbox[1],
        smtp_security="none",
        mail_from=SERVER_ADDRESS,
    )


def _table(
    app: App, players: Callable[..., PlayerClient], box: Mailbox
) -> tuple[str, dict[int, PlayerClient]]:
    """Ann (seat 0) and Ben (seat 1) with verified addresses, two bots, the first hand dealt,
    and the mails so far read."""
    ann, ben = players("ann"), players("ben")
    created = ann.create_match(seat=0, bot_seats=[2, 3])
    ben.join_match(created.invite_code, seat=1)
    app.bots.drain()
    clients = {0: ann, 1: ben}
    verified(app, box, ann, "ann@example.org", "each")
    verified(app, box, ben, "ben@example.org", "off")
    match_id = created.match.match_id
    cutter = ann.view(match_id).match.to_act
    clients[cutter].deal(clients[cutter].view(match_id))
    app.bots.drain()
    app.service.outbox.deliver()
    box.messages.clear()
    return match_id, clients


def _mail(sender: str, body: str, **headers: str) -> bytes:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = SERVER_ADDRESS
    message["Subject"] = "Re: Your turn"
    for name, value in headers.items():
        message[name.replace("_", "-")] = value
    message.set_content(body)
    return bytes(message)


def _human_to_move(app: App, match_id: str, clients: dict[int, PlayerClient]) -> int:
    seat = clients[0].view(match_id).match.to_act
    assert seat in clients, "a bot is to move"
    return seat


def test_an_armored_move_by_mail_is_stored_and_its_receipt_mailed_back(
    app: App, players: Callable[..., PlayerClient], mailbox: tuple[Mailbox, int]
) -> None:
    box, _ = mailbox
    match_id, clients = _table(app, players, box)
    seat = _human_to_move(app, match_id, clients)
    view = clients[seat].view(match_id)
    request = clients[seat].envelope(view, ["draw"])
    address = f"{['ann', 'ben'][seat]}@example.org"
    body = f"> It is your turn\n> quoted text\n\nHere it is:\n\n{armor(request)}\n-- \nsig\n"
    outcome = app.service.mail.receive(_mail(address.upper(), body))
    assert outcome.status == "stored", outcome.detail
    assert outcome.receipt is not None
    assert outcome.receipt.seq == view.version + 1
    after = clients[seat].view(match_id)
    assert after.version == view.version + 1
    assert len(after.view.hand) == len(view.view.hand) + 1  # drew (red threes are replaced)
    # The same envelope again (a resent mail): applied once, the stored receipt again.
    again = app.service.mail.receive(_mail(address, body))
    assert again.receipt == outcome.receipt
    assert clients[seat].view(match_id).version == after.version
    app.service.outbox.deliver()
    answers = [m for m in box.to(address) if m["Subject"].startswith("Move stored")]
    assert len(answers) == 2  # even in mail mode "off" (ben): he asked for these answers
    text = mail_text(answers[0])
    entry_hash = outcome.receipt.entry_hash.hex()
    signature = outcome.receipt.server_signature.hex()
    assert f"entry hash: {entry_hash}" in text
    assert f"server signature: {signature}" in text
    assert verify_receipt(
        app.service.ctx.keys.server_public,
        match_id,
        outcome.receipt.seq,
        bytes.fromhex(entry_hash),
        bytes.fromhex(signature),
    )
    hand_lines = [line for line in text.splitlines() if "hand:" in line]
    own = clients[seat].view(match_id).view.hand
    assert hand_lines == [f"  your hand: {' '.join(own)}"]
    others = [line for line in text.splitlines() if "hand:" not in line]
    assert not [line for line in others if CARD.search(line.lower()) and "pile" not in line]
    assert answers[0]["Auto-Submitted"] == "auto-generated"
    assert all(m["To"] == address for m in box.messages)


def test_the_operator_submits_a_block_and_the_receipt_goes_to_the_player(
    app: App, players: Callable[..., PlayerClient], mailbox: tuple[Mailbox, int]
) -> None:
    box, _ = mailbox
    match_id, clients = _table(app, players, box)
    seat = _human_to_move(app, match_id, clients)
    view = clients[seat].view(match_id)
    receipt, move = app.service.mail.submit_armored(armor(clients[seat].envelope(view, ["draw"])))
    assert (receipt.seq, move.seat) == (view.version + 1, seat)
    app.service.outbox.deliver()
    (answer,) = box.to(f"{['ann', 'ben'][seat]}@example.org")
    assert f"Your move {receipt.seq} in match {match_id[:8]} is stored: draw." in mail_text(answer)


def test_a_refused_move_gets_the_rules_reason_and_the_same_table(
    app: App, players: Callable[..., PlayerClient], mailbox: tuple[Mailbox, int]
) -> None:
    box, _ = mailbox
    match_id, clients = _table(app, players, box)
    seat = _human_to_move(app, match_id, clients)
    view = clients[seat].view(match_id)
    address = f"{['ann', 'ben'][seat]}@example.org"
    request = clients[seat].envelope(view, [f"discard {view.view.hand[0]}"])  # before drawing
    outcome = app.service.mail.receive(_mail(address, armor(request)))
    assert outcome.status == "refused"
    assert clients[seat].view(match_id).version == view.version
    app.service.outbox.deliver()
    (answer,) = box.to(address)
    assert answer["Subject"] == f"Move refused - match {match_id[:8]}"
    text = mail_text(answer)
    assert "Your mail moved nothing:" in text
    assert "draw" in text
    assert f"  your hand: {' '.join(view.view.hand)}" in text


def _hostile(app: App, match_id: str, clients: dict[int, PlayerClient]) -> dict[str, bytes]:
    seat = _human_to_move(app, match_id, clients)
    other = 1 - seat
    view = clients[seat].view(match_id)
    mine = armor(clients[seat].envelope(view, ["draw"]))
    theirs_signed_by_me = armor(clients[other].envelope(view, ["draw"], seat=seat))
    me = f"{['ann', 'ben'][seat]}@example.org"
    them = f"{['ann', 'ben'][other]}@example.org"
    html = EmailMessage()
    html["From"] = me
    html.set_content(f"<pre>{mine}</pre>", subtype="html")
    bomb = EmailMessage()
    bomb["From"] = me
    bomb.set_content(mine)
    for n in range(40):
        bomb.add_attachment(b"x", maintype="application", subtype="octet-stream", filename=f"{n}")
    return {
        # ignored: no answer at all
        "unknown sender": _mail("mallory@evil.example", mine),
        "no address": _mail("undisclosed-recipients:;", mine),
        "two senders": _mail(f"{me}, mallory@evil.example", mine),
        "auto-responder": _mail(me, mine, Auto_Submitted="auto-replied"),
        "bulk": _mail(me, mine, Precedence="bulk"),
        "mailing list": _mail(me, mine, List_Id="<players.example.org>"),
        "oversized": _mail(me, mine + "x" * MAX_MAIL_BYTES),
        # refused: one short answer to the verified address, nothing stored
        "html only": bytes(html),
        "multipart bomb": bytes(bomb),
        "several moves": _mail(me, mine + "\n" + mine),
        "someone else's seat": _mail(them, mine),
        "signed by another key": _mail(me, theirs_signed_by_me),
        "no move": _mail(me, "draw please"),
    }


IGNORED = {"unknown sender", "no address", "two senders", "auto-responder", "bulk",
           "mailing list", "oversized"}  # fmt: skip


def test_hostile_mail_changes_nothing_and_gets_a_short_refusal_at_most(
    app: App,
    players: Callable[..., PlayerClient],
    mailbox: tuple[Mailbox, int],
    dump: Callable[[App], list[str]],
) -> None:
    box, _ = mailbox
    match_id, clients = _table(app, players, box)
    version = clients[0].view(match_id).version
    for name, raw in _hostile(app, match_id, clients).items():
        before = dump(app)
        outcome = app.service.mail.receive(raw)
        assert outcome.status == ("ignored" if name in IGNORED else "refused"), name
        assert outcome.receipt is None
        if name in IGNORED:
            assert dump(app) == before, name
        app.service.outbox.deliver()
        answers = list(box.messages)
        box.messages.clear()
        assert len(answers) == (0 if name in IGNORED else 1), name
        for answer in answers:
            assert answer["To"] in ("ann@example.org", "ben@example.org"), name
            assert answer["Subject"].startswith("Move refused"), name
            assert len(mail_text(answer)) < 1500, name
    assert clients[0].view(match_id).version == version


def test_history_shows_a_mailed_move_like_any_other(
    app: App, players: Callable[..., PlayerClient], mailbox: tuple[Mailbox, int]
) -> None:
    box, _ = mailbox
    match_id, clients = _table(app, players, box)
    seat = _human_to_move(app, match_id, clients)
    view = clients[seat].view(match_id)
    request = clients[seat].envelope(view, ["draw"])
    app.service.mail.receive(_mail(f"{['ann', 'ben'][seat]}@example.org", armor(request)))
    entries, _ = clients[seat].full_history(match_id)
    last: pb.HistoryEntry = entries[-1]
    assert (bytes(last.payload), bytes(last.signature)) == (request.payload, request.signature)
