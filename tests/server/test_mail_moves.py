"""Moves by mail (issue 16): armored signed moves handed in by mail (``MailIn.receive``, what
``canasta-server mail-in`` runs) or by the operator (``submit_armored``), answered through the
outbox to a real SMTP server (``aiosmtpd`` on 127.0.0.1); and hostile mail, which changes
nothing and is answered, at most, by one short refusal to a verified address."""

from __future__ import annotations

import re
from collections.abc import Callable
from email.message import EmailMessage
from typing import Any

import pytest

from server.app import App
from server.service.mail.mailin import MAX_MAIL_BYTES
from shared import protocol
from shared.armor import armor
from shared.crypto.chain import verify_receipt
from shared.pb import canasta_pb2 as pb
from tests.testkit import PlayerClient

from .conftest import AppFactory
from .mailkit import (
    CARD,
    FakeClock,
    Mailbox,
    mail_text,
    own_table,
    update,
    verified,
    without_own_table,
)

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
    app: App, players: Callable[..., PlayerClient], box: Mailbox, *, reply_moves: bool = False
) -> tuple[str, dict[int, PlayerClient]]:
    """Ann (seat 0) and Ben (seat 1) with verified addresses, two bots, the first hand dealt,
    and the mails so far read (with ``reply_moves``: both take moves by reply, and the mails
    of the player to move are left in the box)."""
    ann, ben = players("ann"), players("ben")
    created = ann.create_match(seat=0, bot_seats=[2, 3])
    ben.join_match(created.invite_code, seat=1)
    app.bots.drain()
    clients = {0: ann, 1: ben}
    verified(app, box, ann, "ann@example.org", "each")
    verified(app, box, ben, "ben@example.org", "each" if reply_moves else "off")
    if reply_moves:
        for client in clients.values():
            assert update(client, allow_reply_moves=True).allow_reply_moves
    match_id = created.match.match_id
    cutter = ann.view(match_id).match.to_act
    clients[cutter].deal(clients[cutter].view(match_id))
    app.bots.drain()
    if not reply_moves:
        app.service.outbox.deliver()
        box.messages.clear()
    return match_id, clients


def _mail(sender: str, body: str, **headers: str) -> bytes:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = SERVER_ADDRESS
    message["Subject"] = headers.pop("Subject", "Re: Your turn")
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
    assert len(answers) == 1  # once: the resent mail gets none (even in mail mode "off")
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
    # The table is the player's own (as `canasta show` prints it); around it, no card at all
    # (the move was a draw).
    around = without_own_table(text, own_table(app, clients[seat], match_id))
    assert CARD.findall(around.lower()) == [], around
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
    without_own_table(text, own_table(app, clients[seat], match_id))  # the same table


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


# -- moves by reply ------------------------------------------------------------------------------


def _code(message: object) -> str:
    found = re.search(r"\[(canasta-[a-z0-9]+)\]", str(message))
    assert found is not None, f"no code in {message!r}"
    return found[1]


def _reply(to: Any, sender: str, move: str, *, code: str | None = None) -> bytes:
    """A reply as a mail client writes it: the move on top, the mail answered quoted below,
    the subject kept (with its code, unless ``code`` puts another one there)."""
    quoted = "\n".join("> " + line for line in mail_text(to).splitlines())
    subject = str(to["Subject"]) if code is None else f"Your turn [{code}]"
    return _mail(
        sender, f"{move}\n\nOn Monday, Canasta wrote:\n{quoted}\n", Subject="Re: " + subject
    )


def test_moves_by_reply_are_played_signed_by_the_server_and_marked_so(
    app: App, players: Callable[..., PlayerClient], mailbox: tuple[Mailbox, int]
) -> None:
    box, _ = mailbox
    match_id, clients = _table(app, players, box, reply_moves=True)
    seat = _human_to_move(app, match_id, clients)
    address = f"{['ann', 'ben'][seat]}@example.org"
    app.service.outbox.deliver()
    turn = [m for m in box.to(address) if str(m["Subject"]).startswith("Your turn")][-1]
    code = _code(turn["Subject"])
    assert f"reply code {code}, good for this table once" in mail_text(turn)
    assert "(e.g. draw)" in mail_text(turn)
    others = [m for m in box.messages if m["To"] != address]
    assert not [m for m in others if "canasta-" in str(m["Subject"]) + mail_text(m)]
    box.messages.clear()
    view = clients[seat].view(match_id)

    outcome = app.service.mail.receive(_reply(turn, address, "Draw"))
    assert outcome.status == "stored", outcome.detail
    drawn = clients[seat].view(match_id)
    assert drawn.version == view.version + 1
    app.service.outbox.deliver()
    (answer,) = box.to(address)
    box.messages.clear()
    text = mail_text(answer)
    assert f"Your move {drawn.version} in match {match_id[:8]} is stored: draw." in text
    without_own_table(text, own_table(app, clients[seat], match_id))
    fresh = _code(answer["Subject"])
    assert fresh != code
    # The example is a discard of a natural card in hand, never a wild one (a joker or a 2).
    example = text.split("(e.g. discard ", 1)[1].split(")", 1)[0]
    assert example in drawn.view.hand
    assert example != "jk"
    assert not example.startswith("2")

    # The spent code again: refused, nothing played.
    again = app.service.mail.receive(_reply(turn, address, "draw"))
    assert again.status == "refused"
    assert "not valid" in again.detail
    app.service.outbox.deliver()
    (short,) = box.to(address)
    box.messages.clear()
    assert "Your hand" not in mail_text(short)  # a bad code gets no table
    # A second code for this table, as a second mail (a reminder) would carry, kept for later.
    from server.service.news import replies

    ctx = app.service.ctx
    with ctx.db.write() as session:
        repo = ctx.repo(session)
        found = repo.player_by_key(clients[seat].public_key)
        assert found is not None
        spare = replies.issue(repo, found.id, match_id, drawn.version, ctx.clock())
    # A move the rules refuse: the reason, the same table and a fresh code.
    refused = app.service.mail.receive(_reply(answer, address, "draw"))
    assert refused.status == "refused"
    assert clients[seat].view(match_id).version == drawn.version
    app.service.outbox.deliver()
    (told,) = box.to(address)
    box.messages.clear()
    assert "Your mail moved nothing:" in mail_text(told)
    without_own_table(mail_text(told), own_table(app, clients[seat], match_id))
    last = _code(told["Subject"])
    discard = f"discard {drawn.view.hand[-1]}"
    stored = app.service.mail.receive(_reply(told, address.upper(), discard))
    assert stored.status == "stored", stored.detail
    # The spare code was for the table before the discard: refused, nothing played.
    app.bots.drain()
    now = clients[seat].view(match_id).version
    late = app.service.mail.receive(_reply(answer, address, "draw", code=spare))
    assert late.status == "refused"
    assert "moved on" in late.detail
    assert clients[seat].view(match_id).version == now

    entries, _ = clients[seat].full_history(match_id)
    attested = [e for e in entries if e.server_attested]
    assert [e.seq for e in attested] == [drawn.version, drawn.version + 1]
    assert all(not e.played_by_bot for e in attested)
    assert all(bytes(e.signer_public_key) == app.service.ctx.keys.attest_public for e in attested)
    assert stored.receipt is not None
    assert last != fresh


def test_reply_codes_are_single_use_bound_to_their_player_and_expire(
    app: App, players: Callable[..., PlayerClient], mailbox: tuple[Mailbox, int]
) -> None:
    box, _ = mailbox
    clock = FakeClock(app.service.ctx.clock())
    app.service.ctx.clock = clock
    match_id, clients = _table(app, players, box, reply_moves=True)
    seat = _human_to_move(app, match_id, clients)
    me = f"{['ann', 'ben'][seat]}@example.org"
    them = f"{['ann', 'ben'][1 - seat]}@example.org"
    app.service.outbox.deliver()
    turn = [m for m in box.to(me) if str(m["Subject"]).startswith("Your turn")][-1]
    version = clients[0].view(match_id).version
    box.messages.clear()

    def refused(raw: bytes, why: str) -> None:
        outcome = app.service.mail.receive(raw)
        assert outcome.status == "refused", outcome.detail
        assert why in outcome.detail
        assert clients[0].view(match_id).version == version
        app.service.outbox.deliver()
        (answer,) = box.messages  # one short refusal, to the sender's own verified address
        assert answer["To"] == them
        assert "hand:" not in mail_text(answer)
        box.messages.clear()

    # Someone else's valid code from another player's address (as a forged From with a
    # stolen code would come), a made-up code, several codes, no code: refused.
    refused(_reply(turn, them, "draw"), "not valid")
    refused(_reply(turn, them, "draw now", code="canasta-aaaaaaaaaaaa"), "not valid")
    code = _code(turn["Subject"])
    refused(_mail(them, f"draw\n{code} canasta-aaaaaaaaaaaa", Subject="Re: hi"), "several")
    refused(_mail(them, "draw\n\nmeld 7h 7c 7d"), "no move found")
    # The code is still good for its owner, once.
    assert app.service.mail.receive(_reply(turn, me, "draw")).status == "stored"
    version += 1
    app.service.outbox.deliver()
    (answer,) = box.to(me)
    box.messages.clear()
    # Expired: the fresh code, two weeks and a day later.
    clock.now += 15 * 86_400_000
    outcome = app.service.mail.receive(_reply(answer, me, "discard 3c"))
    assert outcome.status == "refused"
    assert "not valid" in outcome.detail
    assert clients[0].view(match_id).version == version


def test_a_reply_is_read_from_its_first_unquoted_lines_only() -> None:
    from server.service.news.replies import ReplyError, codes_in, move_of

    assert move_of("draw\n\n> meld 7h 7c 7d\n> discard kd") == ["draw"]
    assert move_of("\n  meld 7h 7c 2s\n discard KD\n\nThanks!\n-- \nAnn") == [
        "meld 7h 7c 2s",
        "discard kd",
    ]
    assert move_of("pickup 7h 7c; discard 4s\nOn Mon, Canasta wrote:\n> draw") == [
        "pickup 7h 7c",
        "discard 4s",
    ]
    with pytest.raises(ReplyError, match="several moves"):
        move_of("draw\n\ndiscard kd")
    with pytest.raises(ReplyError, match="no move"):
        move_of("> draw")
    with pytest.raises(ReplyError, match="cannot read"):
        move_of("<html><body>draw</body></html>")
    with pytest.raises(ReplyError, match="longer"):
        move_of("draw " * 300)
    code = "canasta-abcdefghjkmn"
    assert codes_in(f"Re: Your turn [{code}]", "> canasta-zzzzzzzzzzzz") == {code}
    assert codes_in("Re: hi", f"> {code}\n> canasta-zzzzzzzzzzzz") == {
        code,
        "canasta-zzzzzzzzzzzz",
    }
    assert codes_in("Re: hi", "xcanasta-abcdefghjkmn canasta-abcdefghjkmnp") == set()


def test_a_hand_of_server_attested_moves_verifies_and_is_reported_as_such(
    app: App, players: Callable[..., PlayerClient]
) -> None:
    """Ann's every move, the cut included, signed by the attest key as a mailed reply's is
    (``Play.submit``, the same path): the exported transcript verifies, and the report names
    exactly those entries as server-attested, and her cuts as the server's."""
    from shared.crypto.keys import sign
    from shared.rules import Phase
    from shared.rules.bot import choose_action
    from shared.transcript import verify
    from shared.wire import DEAL_ACTION, Move, move_to_bytes
    from tests.testkit import authoritative_state

    ann = players("ann")
    match_id = ann.create_match(seat=0, bot_seats=[1, 2, 3]).match.match_id
    ctx = app.service.ctx
    for _ in range(500):
        app.bots.drain()
        view = ann.view(match_id)
        state = authoritative_state(app.service, match_id)
        if state.hand_number == 1 and state.phase is Phase.DEAL:
            break  # the first hand is over
        if view.match.to_act != 0:
            continue
        cut = view.HasField("dealing_seat")
        text = DEAL_ACTION if cut else str(choose_action(state, 0))
        payload = move_to_bytes(
            Move(match_id, 0, view.version + 1, view.head_hash, 0 if cut else 1,
                 (text,), view.deal_commitment if cut else b"")
        )  # fmt: skip
        app.service.play.submit(payload, sign(ctx.keys.attest, payload))
    else:
        raise AssertionError("the hand did not end")
    entries, history = ann.full_history(match_id)
    report = verify(protocol.transcript_of(history.header, entries, history.hands, history.end))
    mine = [e.seq for e in entries if e.seat == 0]
    assert mine
    assert list(report.attested) == mine
    assert [e.seq for e in entries if e.server_attested] == mine
    assert report.by_bot == 0
    assert report.header.attest_key == ctx.keys.attest_public
    assert entries[0].seat == 0  # the only person cuts every hand: here, by the attest key
    assert report.server_cuts == (1,)


@pytest.mark.slow  # sixty mails: out of the inner loop
def test_refusals_to_one_player_are_capped_per_hour(
    app: App, players: Callable[..., PlayerClient], mailbox: tuple[Mailbox, int]
) -> None:
    """Forged mail cannot flood a player's inbox through the server: at most
    ``REFUSALS_PER_HOUR`` refusals an hour, then silence until the hour has passed."""
    from server.service.mail.mailin import REFUSALS_PER_HOUR

    box, _ = mailbox
    clock = FakeClock(app.service.ctx.clock())
    app.service.ctx.clock = clock
    ann = players("ann")
    verified(app, box, ann, "ann@example.org", "off")
    statuses = [  # each its own text: the same text again gets no second answer anyway
        app.service.mail.receive(_mail("ann@example.org", f"no move here ({n})")).status
        for n in range(REFUSALS_PER_HOUR + 5)
    ]
    assert statuses == ["refused"] * REFUSALS_PER_HOUR + ["ignored"] * 5
    app.service.outbox.deliver()
    assert len(box.to("ann@example.org")) == REFUSALS_PER_HOUR
    clock.now += 3_600_001
    assert app.service.mail.receive(_mail("ann@example.org", "no move")).status == "refused"


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"\x00\xff\xfe garbage",
        b"From: <<<@>>>\r\n\r\ndraw",
        b"From: =?utf-8?q?=E2=82?= <ann@example.org>\r\nSubject: =?bogus?x?zz?=\r\n\r\ndraw",
        b'From: ann@example.org\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n--b\r\n'
        b'Content-Type: multipart/mixed; boundary="c"\r\n\r\n--c\r\n--c--\r\n--b--\r\n',
        b"From: ann@example.org\r\nContent-Type: text/plain; charset=no-such-charset\r\n"
        b"Content-Transfer-Encoding: base64\r\n\r\n!!!!",
        b"From: ann@example.org\r\nFrom: ben@example.org\r\n\r\ndraw",
        b'From: "ann@example.org" <>\r\n\r\ndraw',
        b"From: ann@example.org\r\n" + b"X-Long: " + b"a" * 60_000 + b"\r\n\r\ndraw",
    ],
)
def test_malformed_mail_never_breaks_the_reader(
    app: App, players: Callable[..., PlayerClient], mailbox: tuple[Mailbox, int], raw: bytes
) -> None:
    box, _ = mailbox
    verified(app, box, players("ann"), "ann@example.org", "each")
    outcome = app.service.mail.receive(raw)
    assert outcome.status in ("ignored", "refused")
    assert outcome.receipt is None
    app.service.outbox.deliver()
    assert all(m["To"] == "ann@example.org" for m in box.messages)
    assert len(box.messages) <= 1


def test_a_digest_carries_a_code_for_each_table_where_it_is_your_move(
    app: App, players: Callable[..., PlayerClient], mailbox: tuple[Mailbox, int]
) -> None:
    box, _ = mailbox
    clock = FakeClock(1_796_626_800_000)  # Monday 2026-12-07 07:00 UTC, before the digest
    app.service.ctx.clock = clock
    ann = players("ann")
    verified(app, box, ann, "ann@example.org", "digest")
    assert update(ann, allow_reply_moves=True).allow_reply_moves
    match_id = ann.create_match(seat=0, bot_seats=[1, 2, 3]).match.match_id
    app.bots.drain()
    assert ann.view(match_id).match.to_act == 0  # her cut (the only person)
    app.service.outbox.deliver()
    assert box.messages == []
    clock.now += 3_600_000  # 08:00: the digest hour
    app.service.outbox.deliver()
    (digest,) = box.to("ann@example.org")
    assert "canasta-" not in str(digest["Subject"])
    found = re.findall(
        r"reply code (canasta-[a-z0-9]{12}), good for this table once", mail_text(digest)
    )
    assert len(found) == 1
    outcome = app.service.mail.receive(_mail("ann@example.org", f"deal\n\n> {found[0]}"))
    assert outcome.status == "stored", outcome.detail


@pytest.mark.parametrize(
    ("value", "address"),
    [
        ("Ann Smith <Ann@Example.org>", "ann@example.org"),
        ('"Smith, Ann" <ann@example.org>', "ann@example.org"),
        ("=?utf-8?b?Wm/DqyBNw7xsbGVy?= <ann@example.org>", "ann@example.org"),
        ("Zoë Müller <ann@example.org>", "ann@example.org"),  # raw UTF-8 (SMTPUTF8)
        ("ann@example.org (Ann Smith)", "ann@example.org"),
        ("<ann@example.org>", "ann@example.org"),
        ("ann@example.org <eve@example.net>", None),  # clients show eve's
        ("eve@example.net <ann@example.org>", None),
        ('"eve@example.net" <ann@example.org>', None),
        ("=?utf-8?q?eve=40example.net?= <ann@example.org>", None),
        ("Ann <ann@example.org>, Eve <eve@example.net>", None),
        ("Ann <ann@example.org> <eve@example.net>", None),
        ("friends: ann@example.org;", None),
        ("Ann <ann@example.org", None),
        ("(" * 600 + ")" * 600 + " ann@example.org", None),  # the parser recurses per level
        ("x" * 1000 + " <ann@example.org>", None),
    ],
)
def test_from_is_read_by_its_address_part_alone(value: str, address: str | None) -> None:
    from server.service.mail.mailin import _HEADERS, _sender

    headers = _HEADERS.parsebytes(f"From: {value}\r\n\r\n".encode(), headersonly=True)
    assert _sender(headers) == address
