"""A correspondence match from the command line (issue 12): a clock chosen at creation and
shown at the table and in the list, a bot covering a seat on request, and resigning.

The real ``canasta-server`` and ``canasta`` executables, one player against three bots."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.harness import CANASTA, RUN_TIMEOUT, Player, Server, one_line_error, start_server

pytestmark = pytest.mark.slow


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    running = start_server(tmp_path / "server")
    yield running
    running.stop()


def test_a_clocked_match_shows_its_deadline_and_can_be_resigned(
    server: Server, tmp_path: Path
) -> None:
    ann = Player(tmp_path / "ann")
    ann.run("setup", "--server", server.address, "--name", "Ann")
    empty = ann.run("calendar", ok=False)  # no timed match: no calendar without events
    assert empty.returncode == 1
    assert "nothing was written" in empty.stderr
    assert "BEGIN:VCALENDAR" not in empty.stdout
    refused = ann.run("create", "--days", "15", ok=False)
    assert refused.returncode == 2  # a wrong command line: nothing was sent
    created = ann.json("create", "--days", "2", "--bank", "1", "--weekends-off", "--bot", "1",
                       "--bot", "2", "--bot", "3")  # fmt: skip
    match_id = created["match"]["match_id"]
    table = ann.run("show").stdout
    assert "Clock: your move, move due " in table
    assert "left), then 1d 0h of bank to " in table
    assert "(2 days a move + 1 day of bank, weekends off" in table
    assert "on timeout: substitute" in table
    assert "left), then 1d 0h of bank to " in ann.run("matches").stdout
    ics = tmp_path / "deadlines.ics"
    assert "1 deadline" in ann.run("calendar", "-o", str(ics)).stdout
    assert ics.read_bytes().count(b"BEGIN:VEVENT\r\n") == 1

    wrong = ann.run("cover", "maybe", ok=False)
    assert wrong.returncode == 2
    assert "cover on or cover off" in one_line_error(wrong)

    unconfirmed = ann.run("resign", ok=False)  # no terminal to ask in, no --yes
    assert unconfirmed.returncode == 2
    assert "add --yes" in one_line_error(unconfirmed)
    assert "Match over" not in ann.run("show").stdout
    # At a terminal the question names the match; "n" resigns nothing.
    asked = _at_a_terminal(ann, ["resign"], answer="n")
    assert f"Resign match {match_id}? It ends now and your side loses" in asked
    assert "not resigned" in asked
    assert "Match over" not in ann.run("show").stdout

    done = ann.run("resign", "--yes").stdout
    assert "Match over: bot 1+bot 3 won" in done, done
    history = ann.run("history", match_id).stdout
    assert "#1    you (seat 0): resign -> resigned the match" in history

    ann.run("create", "--bot", "1", "--bot", "2", "--bot", "3")
    assert "abandoned" in ann.run("abort").stdout  # nobody else to agree
    # Issue 28: a clock in hours, with the bank in hours, shown as it was chosen.
    hourly = ann.json("create", "--hours", "12", "--bank", "36h", "--bot", "1", "--bot", "2",
                      "--bot", "3")  # fmt: skip
    assert hourly["match"]["time_control"]["hours_per_move"] == 12
    assert hourly["match"]["time_control"]["bank_hours"] == 36
    shown = ann.run("show", hourly["match"]["match_id"]).stdout
    assert "(12 hours a move + 36 hours of bank, on timeout: substitute)" in shown
    assert ann.run("create", "--hours", "12", "--days", "1", ok=False).returncode == 2
    assert ann.run("create", "--hours", "12", "--bank", "3w", ok=False).returncode == 2
    assert "abandoned before its first deal" in ann.run("matches").stdout
    waiting = ann.json("create", "--bot", "1")["match"]["match_id"]  # two seats still open
    assert "abandoned" in ann.run("abort", "--match", waiting).stdout
    looked = ann.run("show", waiting)
    assert "warning" not in looked.stderr  # never started: no record, nothing to check


def test_notifications_are_set_up_from_the_command_line(tmp_path: Path) -> None:
    """``canasta notify email`` mails a code (through a real SMTP server) that ``canasta
    notify verify`` gives back; then the mode, the webhook and the time zone."""
    import email
    import re
    import socket
    import time
    from email.message import Message
    from typing import Any

    from aiosmtpd.controller import Controller

    received: list[Message] = []

    class Box:
        async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
            received.append(email.message_from_bytes(envelope.content))
            return "250 OK"

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        smtp_port = sock.getsockname()[1]
    controller = Controller(Box(), hostname="127.0.0.1", port=smtp_port)
    controller.start()
    server = start_server(
        tmp_path / "server",
        settings={"smtp_host": "127.0.0.1", "smtp_port": str(smtp_port),
                  "smtp_security": "none", "mail_from": "canasta@example.org",
                  "outbox_poll_ms": "50"},
    )  # fmt: skip
    try:
        ann = Player(tmp_path / "ann")
        ann.run("setup", "--server", server.address, "--name", "Ann")
        assert "e-mail   none" in ann.run("notify").stdout
        sent = ann.run("notify", "email", "ann@example.org").stdout
        assert "canasta notify verify CODE" in sent
        deadline = time.monotonic() + 20
        while not received and time.monotonic() < deadline:
            time.sleep(0.05)
        assert received, "no code mail arrived"
        payload = received[0].get_payload(decode=True)
        assert isinstance(payload, bytes)
        code = re.search(r"Your code is ([a-z0-9]+)", payload.decode())
        assert code is not None
        assert f"run canasta notify verify {code[1]}" in payload.decode()  # the code itself
        wrong = ann.run("notify", "verify", "nope", ok=False)
        assert wrong.returncode == 1
        assert "check it and try again" in one_line_error(wrong)  # the code still works
        shown = ann.run("notify", "verify", code[1]).stdout
        assert "e-mail   ann@example.org: a daily digest" in shown
        assert "a mail per event" in ann.run("notify", "email", "each").stdout
        bad = ann.run("notify", "email", "sometimes", ok=False)
        assert bad.returncode == 2
        assert ann.run("timezone", "Europe/Berlin").stdout.strip() == "Europe/Berlin"
        assert ann.run("timezone").stdout.strip() == "Europe/Berlin"
        refused = ann.run("timezone", "Mars/Olympus", ok=False)
        assert "unknown time zone" in one_line_error(refused)
        # Only its form is checked when set; the address is checked at each delivery.
        set_hook = ann.run("notify", "webhook", "https://hooks.example.org/canasta").stdout
        assert "signing secret (shown only now)" in set_hook
        bad = ann.run("notify", "webhook", "ftp://example.org/x", ok=False)
        assert "http:// or https:// URL" in one_line_error(bad)
        assert "no webhook" in ann.run("notify", "webhook", "off").stdout
        assert "not on vacation; 30.0 days left this year" in ann.run("vacation").stdout
        assert "your clocks stand still" in ann.run("vacation", "start").stdout
        again = ann.run("vacation", "start", ok=False)
        assert "on vacation already" in one_line_error(again)
        assert "not on vacation" in ann.run("vacation", "end").stdout
    finally:
        server.stop()
        controller.stop()


def _at_a_terminal(player: Player, args: list[str], answer: str) -> str:
    """Run ``canasta ARGS`` on a pseudo-terminal, type ``answer`` at its question, and return
    everything it wrote (a prompt is only shown at a terminal)."""
    main, other = pty.openpty()
    process = subprocess.Popen(
        [CANASTA, *args], stdin=other, stdout=other, stderr=other, env=player.env()
    )
    os.close(other)
    seen = b""
    deadline = time.monotonic() + RUN_TIMEOUT
    answered = False
    while time.monotonic() < deadline:
        ready, _, _ = select.select([main], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(main, 4096)
            except OSError:  # the command ended and closed its side
                break
            if not chunk:
                break
            seen += chunk
        if not answered and b"[y/N]" in seen:
            os.write(main, answer.encode() + b"\n")
            answered = True
        if process.poll() is not None and not ready:
            break
    process.wait(RUN_TIMEOUT)
    os.close(main)
    return seen.decode(errors="replace").replace("\r\n", "\n")
