"""Armored moves from the command line (issue 16): ``canasta ... --armor`` prints a signed
move instead of sending it; ``canasta-server submit-armored`` and ``canasta-server mail-in``
(a raw mail on standard input) store it, and the running server mails the receipt through a
real SMTP server. The real ``canasta`` and ``canasta-server`` executables, one player against
three bots."""

from __future__ import annotations

import email
import re
import socket
import subprocess
import time
from collections.abc import Iterator
from email.message import EmailMessage, Message
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller

from tests.e2e.harness import CANASTA_SERVER, RUN_TIMEOUT, Player, Server, clean_env, start_server

pytestmark = pytest.mark.slow

ANN = "ann@example.org"


class Box:
    def __init__(self) -> None:
        self.received: list[Message] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        self.received.append(email.message_from_bytes(envelope.content))
        return "250 OK"

    def wait_for(self, subject: str) -> str:
        """The text of the first mail whose subject starts with ``subject`` (taken out)."""
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            for message in self.received:
                if str(message["Subject"]).startswith(subject):
                    self.received.remove(message)
                    payload = message.get_payload(decode=True)
                    assert isinstance(payload, bytes)
                    assert message["To"] == ANN
                    return payload.decode()
            time.sleep(0.05)
        raise AssertionError(f"no mail {subject!r} came")


@pytest.fixture
def box_and_server(tmp_path: Path) -> Iterator[tuple[Box, Server]]:
    box = Box()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        smtp_port = sock.getsockname()[1]
    controller = Controller(box, hostname="127.0.0.1", port=smtp_port)
    controller.start()
    server = start_server(
        tmp_path / "server",
        settings={"smtp_host": "127.0.0.1", "smtp_port": str(smtp_port),
                  "smtp_security": "none", "mail_from": "moves@example.org",
                  "outbox_poll_ms": "50"},
    )  # fmt: skip
    yield box, server
    server.stop()
    controller.stop()


def operator(server: Server, *args: str, stdin: str | bytes) -> subprocess.CompletedProcess[Any]:
    return subprocess.run(
        [CANASTA_SERVER, "--data-dir", str(server.data_dir), *args],
        input=stdin, capture_output=True, env=clean_env(), timeout=RUN_TIMEOUT, check=False,
        text=isinstance(stdin, str),
    )  # fmt: skip


def mail_from(sender: str, body: str) -> bytes:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = "moves@example.org"
    message["Subject"] = "my move"
    message.set_content(body)
    return bytes(message)


def test_armored_moves_by_the_operator_and_by_mail(
    box_and_server: tuple[Box, Server], tmp_path: Path
) -> None:
    box, server = box_and_server
    ann = Player(tmp_path / "ann")
    ann.run("setup", "--server", server.address, "--name", "Ann")
    ann.run("notify", "email", ANN)
    code = re.search(r"Your code is ([a-z0-9]+)", box.wait_for("Your Canasta e-mail code"))
    assert code is not None
    ann.run("notify", "verify", code[1])
    ann.run("notify", "email", "off")  # answers to her own mail come anyway
    match_id = ann.json("create", "--bot", "1", "--bot", "2", "--bot", "3")["match"]["match_id"]
    view = ann.json("show")
    while view.get("dealing_seat", -1) != 0 and view["view"].get("actor", -1) != 0:
        time.sleep(0.1)  # the bots cut and play until it is ann's move
        view = ann.json("show")
    if view.get("dealing_seat", -1) == 0:  # her cut (when the first dealer is left of her)
        cut = operator(server, "submit-armored", stdin=ann.run("deal", "--armor").stdout)
        assert cut.returncode == 0, cut.stderr
        assert "is stored: deal." in box.wait_for("Move stored")
        view = ann.json("show")
        while view["view"].get("actor", -1) != 0:
            time.sleep(0.1)
            view = ann.json("show")
    # Her draw, armored and handed to the operator.
    block = ann.run("draw", "--armor").stdout
    seq = int(view["version"]) + 1
    assert block.startswith("-----BEGIN CANASTA MOVE-----\n")
    assert f"Match: {match_id}\nSeat: 0\nSeq: {seq}\nMove: draw\n" in block
    assert ann.json("show")["version"] == view["version"]  # nothing was sent
    (tmp_path / "changed.txt").write_text(block.replace("Move: draw", "Move: pass"))
    changed = operator(server, "submit-armored", str(tmp_path / "changed.txt"), stdin="")
    assert changed.returncode == 1
    assert "canasta-server: refused: the signed move's readable lines" in changed.stderr
    stored = operator(server, "submit-armored", stdin=block)
    assert stored.returncode == 0, stored.stderr
    assert f"stored move {seq} of match {match_id}" in stored.stdout
    text = box.wait_for("Move stored")
    assert f"Your move {seq} in match {match_id[:8]} is stored: draw." in text
    assert "entry hash: " in text
    assert "server signature: " in text
    # A stranger's mail is read and ignored: exit 0 (no bounce to a forged sender), no answer.
    stranger = operator(server, "mail-in", stdin=mail_from("eve@example.net", block))
    assert stranger.returncode == 0
    assert b"mail ignored: the sender is no player's verified address" in stranger.stdout
    # Her own mail nested a thousand deep: one short refusal, exit 0, no traceback.
    nested = operator(server, "mail-in", stdin=nested_mail(f"Ann <{ANN}>"))
    assert nested.returncode == 0, nested.stderr
    assert b"mail refused: the mail has more than 16 parts" in nested.stdout
    assert b"Traceback" not in nested.stderr
    assert "more than 16 parts" in box.wait_for("Move refused")
    # The discard, on the table after the draw, as a block in a mail piped to mail-in.
    drawn = ann.json("show")
    assert int(drawn["version"]) == seq
    card = drawn["view"]["hand"][-1]
    block = ann.run("discard", card, "--armor").stdout
    done = operator(server, "mail-in", stdin=mail_from(f"Ann <{ANN}>", f"Here:\n\n{block}"))
    assert done.returncode == 0, done.stderr
    assert f"mail stored: match {match_id} seq {seq + 1}".encode() in done.stdout
    assert f"is stored: discard {card}." in box.wait_for("Move stored")
    after = ann.json("show")
    assert int(after["version"]) > seq + 1  # and the bots played on
    assert not [m for m in box.received if str(m["Subject"]).startswith("Move")]


def test_mail_in_asks_the_mail_server_to_retry_when_the_database_is_down(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("not a directory")
    done = subprocess.run(
        [CANASTA_SERVER, "--data-dir", str(tmp_path), "--database-url",
         f"sqlite:///{tmp_path}/a-file/canasta.db", "mail-in"],
        input=mail_from(ANN, "draw"), capture_output=True, env=clean_env(), timeout=RUN_TIMEOUT,
        check=False,
    )  # fmt: skip
    assert done.returncode == 75, done.stderr
    assert b"canasta-server: mail-in failed" in done.stderr


def test_moves_by_reply_from_the_command_line_to_the_history(
    box_and_server: tuple[Box, Server], tmp_path: Path
) -> None:
    box, server = box_and_server
    ann = Player(tmp_path / "ann")
    ann.run("setup", "--server", server.address, "--name", "Ann")
    ann.run("notify", "email", ANN)
    code = re.search(r"Your code is ([a-z0-9]+)", box.wait_for("Your Canasta e-mail code"))
    assert code is not None
    ann.run("notify", "verify", code[1])
    shown = ann.run("notify", "email", "each", "--allow-reply-moves").stdout
    assert "moves by replying to a mail: on (server-attested)" in shown
    match_id = ann.json("create", "--bot", "1", "--bot", "2", "--bot", "3")["match"]["match_id"]
    pattern = re.compile(r"reply code (canasta-[a-z0-9]+), good for this table once")
    text = box.wait_for("Your turn")  # her first move: the cut, or her first draw
    for _ in range(2):
        view = ann.json("show")
        move = "deal" if view.get("dealing_seat", -1) == 0 else "draw"
        found = pattern.search(text)
        assert found is not None, text
        quoted = "\n".join("> " + line for line in text.splitlines())
        raw = mail_from(ANN, f"{move}\n\nOn Monday, Canasta wrote:\n{quoted}\n")
        done = operator(server, "mail-in", stdin=raw)
        seq = int(view["version"]) + 1
        assert f"mail stored: match {match_id} seq {seq} (by reply)".encode() in done.stdout
        text = box.wait_for("Move stored")
        assert f"is stored: {move}." in text
        if move == "draw":
            break
        if not pattern.search(text):  # the bots move first: her turn comes by its own mail
            text = box.wait_for("Your turn")
    assert "reply code canasta-" in text  # after the draw: a fresh code for the discard
    history = ann.run("history", match_id).stdout
    assert "you (seat 0) [by mail reply, server-attested]: draw" in history, history
    off = ann.run("notify", "email", "each", "--no-allow-reply-moves").stdout
    assert "moves by replying" not in off


def test_mail_in_takes_an_oversized_or_nested_mail_whole_and_exits_0(tmp_path: Path) -> None:
    """Issue 25, 16 and 1: the mail server piping a mail over 64 KiB sees all of it taken (no
    broken pipe), and a mail nested a thousand deep is read without a traceback; both are
    ignored with exit 0 (no bounce, no retry)."""
    command = [CANASTA_SERVER, "--data-dir", str(tmp_path), "mail-in"]
    big = mail_from("eve@example.net", "x" * 70 + "\n") * 16_000  # about 1.4 MB
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=clean_env(),
    )  # fmt: skip
    assert process.stdin is not None
    try:
        for start in range(0, len(big), 1 << 16):  # as a mail server pipes it
            process.stdin.write(big[start : start + (1 << 16)])
        process.stdin.flush()
    except BrokenPipeError:
        process.kill()
        raise AssertionError("mail-in left the mail server with a broken pipe") from None
    out, err = process.communicate(timeout=RUN_TIMEOUT)
    assert process.returncode == 0, err
    assert b"mail ignored: larger than 65536 bytes" in out
    done = subprocess.run(
        command, input=nested_mail("eve@example.net"), capture_output=True, env=clean_env(),
        timeout=RUN_TIMEOUT, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert b"mail ignored: the sender is no player's verified address" in done.stdout
    assert b"Traceback" not in done.stderr
    # A bounce (the null envelope sender, as Postfix's pipe passes it): dropped unread.
    bounce = subprocess.run(
        [*command, "--sender", "MAILER-DAEMON"], input=nested_mail("Ann <ann@example.org>"),
        capture_output=True, env=clean_env(), timeout=RUN_TIMEOUT, check=False,
    )  # fmt: skip
    assert bounce.returncode == 0, bounce.stderr
    assert b"mail ignored: a null envelope sender" in bounce.stdout


def nested_mail(sender: str) -> bytes:
    """A mail of a thousand multiparts each inside the last (the standard library's parser
    runs out of stack on it), under 64 KiB."""
    levels = "".join(
        f"Content-Type:multipart/mixed;boundary={n:x}\n\n--{n:x}\n" for n in range(1000)
    )
    return f"From: {sender}\nTo: moves@example.org\nSubject: hi\n{levels}\ndraw\n".encode()
