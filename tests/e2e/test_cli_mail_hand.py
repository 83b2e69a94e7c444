"""A whole hand by mail (issue 16), against the real ``canasta-server`` with its own SMTP
listener: Ann (seat 0) moves only by replying to the server's mails, Ben (seat 1) only by
mailing armored blocks (``canasta play --armor``), Cid (seat 2) with the CLI, and a bot in
seat 3. Mail goes both ways over real SMTP: the test's client to the server's listener, the
server's outbox to an ``aiosmtpd`` mailbox. Every mail Ann moves from is checked (her own hand
and nothing hidden, the code in the subject and the body, the command), every receipt Ben gets
is checked against the server key, and the hand's transcript verifies, with exactly Ann's moves
reported as server-attested."""

from __future__ import annotations

import email
import json
import re
import smtplib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from email.message import EmailMessage, Message
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller

from shared.crypto.chain import verify_receipt
from shared.rules import GameState, Phase, cards_text, player_view
from shared.rules.bot import choose_action
from tests.e2e.harness import Player, Server, start_server
from tests.testkit import authoritative_state

pytestmark = pytest.mark.slow

MOVES = "moves@example.org"
ADDRESSES = {0: "ann@example.org", 1: "ben@example.org"}
CODE = re.compile(r"canasta-[a-z0-9]{12}")
CARD = re.compile(
    r"(?<![0-9a-z])(?:10|[2-9]|[tjqka])[cdhs](?![0-9a-z])|(?<![0-9a-z])jk(?![0-9a-z])"
)


class Inbox:
    """What the server mailed, by recipient, in order of arrival."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.mails: dict[str, list[Message]] = {}

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        message = email.message_from_bytes(envelope.content)
        with self.lock:
            self.mails.setdefault(str(message["To"]), []).append(message)
        return "250 OK"

    def take(self, address: str, want: str, seconds: float = 20) -> list[Message]:
        """Every mail to ``address`` so far (taken out), once one holding ``want`` came."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            with self.lock:
                found = self.mails.get(address, [])
                if any(want in text(m) or want in str(m["Subject"]) for m in found):
                    self.mails[address] = []
                    return found
            time.sleep(0.03)
        with self.lock:
            got = [f"{m['Subject']}: {text(m)[:300]}" for m in self.mails.get(address, [])]
        raise AssertionError(f"no mail to {address} with {want!r}; got {got}")


def text(message: Message) -> str:
    payload = message.get_payload(decode=True)
    assert isinstance(payload, bytes)
    return payload.decode()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def world(tmp_path: Path) -> Iterator[tuple[Inbox, Server, int]]:
    inbox = Inbox()
    smtp_port, listen_port = free_port(), free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=smtp_port)
    controller.start()
    server = start_server(
        tmp_path / "server",
        settings={"smtp_host": "127.0.0.1", "smtp_port": str(smtp_port),
                  "smtp_security": "none", "mail_from": MOVES, "outbox_poll_ms": "50",
                  "smtp_listen": f"127.0.0.1:{listen_port}",
                  # every mail comes from this one address, faster than a person mails: the
                  # per-peer rate (test_mail_listener's to probe) would refuse the hand's end
                  "limit_smtp_mails_per_minute_per_peer": "0"},
    )  # fmt: skip
    yield inbox, server, listen_port
    server.stop()
    controller.stop()


def mail_to_server(port: int, sender: str, subject: str, body: str) -> None:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = MOVES
    message["Subject"] = subject
    message.set_content(body)
    with smtplib.SMTP("127.0.0.1", port, timeout=10) as client:
        client.send_message(message)


def verify_address(player: Player, inbox: Inbox, address: str) -> None:
    player.run("notify", "email", address)
    (mail,) = inbox.take(address, "Your code is")
    code = re.search(r"Your code is ([a-z0-9]+)", text(mail))
    assert code is not None
    player.run("notify", "verify", code[1])


def hand_shown(body: str) -> list[str]:
    """The cards under the table's "Your hand (N cards):" line, sorted ([] when none)."""
    lines = body.splitlines()
    start = next((i for i, x in enumerate(lines) if x.startswith("Your hand (")), None)
    if start is None:
        return []
    block = []
    for line in lines[start + 1 :]:
        if not line.startswith("  ") or line.startswith("  your move"):
            break
        block.append(line)
    return sorted(CARD.findall(" ".join(block).lower()))


def ann_reply(
    inbox: Inbox,
    port: int,
    state: GameState,
    match_id: str,
    move: str,
    accept: Callable[[Message], bool] | None = None,
) -> None:
    """Ann's move: the mail with a code that shows the table as it is now (one sent for an
    earlier table may come late: its code is for that table), checked, answered; with
    ``accept``, only a mail it accepts is answered."""
    view = player_view(state, 0)
    hand = sorted(CARD.findall(cards_text(view.hand).lower()))
    current: list[Message] = []
    while not current:
        for older in inbox.take(ADDRESSES[0], "reply code canasta-"):
            # every mail she gets: to her alone, one hand at most (her own)
            assert older["To"] == ADDRESSES[0]
            assert text(older).count("Your hand (") <= 1
            coded = "reply code canasta-" in text(older) and hand_shown(text(older)) == hand
            if coded and (accept is None or accept(older)):
                current.append(older)
    mail = current[-1]
    body = text(mail)
    (code,) = set(CODE.findall(body))
    assert f"[{code}]" in str(mail["Subject"])  # the same code in the subject
    command = (
        f"canasta deal {match_id}" if state.phase is Phase.DEAL else f"canasta show {match_id}"
    )
    assert f"  your move: {command}" in body
    # Nothing hidden: every card named is one her own view shows (her hand, the table, the
    # events she saw) or her own stored move.
    allowed = set(CARD.findall(json.dumps(view.to_json()).lower()))
    stored = re.search(r"is stored: (.*)\.", body)
    if stored:
        allowed |= set(CARD.findall(stored[1].lower()))
    assert set(CARD.findall(body.lower())) <= allowed, body
    quoted = "\n".join("> " + line for line in body.splitlines())
    mail_to_server(
        port, f"Ann <{ADDRESSES[0]}>", f"Re: {mail['Subject']}",
        f"{move}\n\nOn Monday, Canasta <{MOVES}> wrote:\n{quoted}\n",
    )  # fmt: skip


def test_a_whole_hand_by_mail_replies_armored_blocks_the_cli_and_a_bot(
    world: tuple[Inbox, Server, int], tmp_path: Path
) -> None:
    inbox, server, port = world
    ann, ben, cid = (Player(tmp_path / n) for n in ("ann", "ben", "cid"))
    for player, name in ((ann, "Ann"), (ben, "Ben"), (cid, "Cid")):
        player.run("setup", "--server", server.address, "--name", name)
    verify_address(ann, inbox, ADDRESSES[0])
    ann.run("notify", "email", "each", "--allow-reply-moves")
    verify_address(ben, inbox, ADDRESSES[1])
    ben.run("notify", "email", "off")  # his receipts come anyway
    created = ann.json("create", "--seat", "0", "--bot", "3")
    match_id, invite = created["match"]["match_id"], created["invite_code"]
    ben.run("join", invite, "--seat", "1")
    cid.run("join", invite, "--seat", "2")
    oracle = server.oracle()
    server_key = oracle.ctx.keys.server_public
    from server.service import matches

    moves = {0: 0, 1: 0, 2: 0}
    for _ in range(2000):
        with oracle.ctx.db.read() as session:
            match = matches.require_match(oracle.ctx.repo(session), match_id)
        state = authoritative_state(oracle, match_id)
        if state.hand_number >= 1 and state.phase in (Phase.DEAL, Phase.MATCH_OVER):
            break  # the hand is over
        seat = matches.to_act(match, state)
        if seat is None or seat == 3:
            time.sleep(0.05)  # the bot plays in the server
            continue
        move = "deal" if state.phase is Phase.DEAL else str(choose_action(state, seat))
        if seat == 0:
            ann_reply(inbox, port, state, match_id, move)
        elif seat == 1:
            ben.run("show")
            block = ben.run(*(["deal"] if move == "deal" else ["play", move]), "--armor").stdout
            assert f"Seq: {match.version + 1}\n" in block
            mail_to_server(port, ADDRESSES[1], "my move", f"Here it is:\n\n{block}")
            (receipt,) = [
                m for m in inbox.take(ADDRESSES[1], "Move stored") if "Move stored" in m["Subject"]
            ]
            body = text(receipt)
            assert f"Your move {match.version + 1} in match {match_id[:8]} is stored" in body
            entry = re.search(r"entry hash: ([0-9a-f]{64})", body)
            signature = re.search(r"server signature: ([0-9a-f]{128})", body)
            assert entry is not None
            assert signature is not None
            assert verify_receipt(
                server_key, match_id, match.version + 1, bytes.fromhex(entry[1]),
                bytes.fromhex(signature[1]),
            )  # fmt: skip
            assert "reply code" not in body  # Ben did not ask for moves by reply
        else:
            cid.run("show")
            cid.run(*(["deal"] if move == "deal" else ["play", move]))
        moves[seat] += 1
        deadline = time.monotonic() + 20
        while authoritative_state(oracle, match_id) == state and time.monotonic() < deadline:
            time.sleep(0.03)
        assert authoritative_state(oracle, match_id) != state, f"seat {seat}'s {move} stuck"
    else:
        raise AssertionError("the hand did not end")
    assert all(moves.values()), moves

    history = ann.json("history", match_id)["entries"]
    by_seat = {s: [int(e["seq"]) for e in history if e.get("seat", 0) == s] for s in range(4)}
    attested = [int(e["seq"]) for e in history if e.get("server_attested")]
    assert attested == by_seat[0]
    assert "[by mail reply, server-attested]" in ann.run("history", match_id).stdout
    # The table tells everyone whose moves the server signs.
    table = cid.run("show").stdout
    (line,) = [x for x in table.splitlines() if "takes moves by mail reply" in x]
    assert line.startswith("Ann"), table
    assert "the server signs those (server-attested" in line
    assert "You take moves by mail reply" in ann.run("show").stdout
    file = tmp_path / "hand.json"
    ann.run("export", match_id, "-o", str(file))
    report = cid.run("verify", str(file)).stdout
    assert f"entries {', '.join(map(str, by_seat[0]))}" in report, report
    assert f"{len(by_seat[0])} server-attested" in report
