"""Points a new user ran into (issue 28), with the real ``canasta-server`` and ``canasta``: one
way to name the match in every command, and moves the client can already see are illegal
are not signed for mailing (``--armor``).

One server; Ann plays two two-handed matches against a bot, so every command that names no
match is ambiguous and must be told which.
"""

from __future__ import annotations

import os
import pty
import select
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from google.protobuf import json_format

from shared.pb import canasta_pb2 as pb
from tests.e2e.harness import (
    CANASTA,
    RUN_TIMEOUT,
    Player,
    Server,
    one_line_error,
    start_server,
)

pytestmark = pytest.mark.slow


@dataclass
class Two:
    server: Server
    ann: Player
    first: str
    second: str

    def view(self, match_id: str) -> pb.MatchView:
        shown = self.ann.run("show", match_id, "--json").stdout
        return json_format.Parse(shown, pb.MatchView())


@pytest.fixture(scope="module")
def two(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Two]:
    root = tmp_path_factory.mktemp("new-user")
    server = start_server(root / "server")
    ann = Player(root / "ann")
    ann.run("setup", "--server", server.address, "--name", "Ann")
    ids = [
        ann.json("create", "--preset", "two_player", "--bot", "1")["match"]["match_id"]
        for _ in range(2)
    ]
    yield Two(server, ann, ids[0], ids[1])
    server.stop()


def _my_turn(two: Two, match_id: str) -> pb.MatchView:
    """Ann's turn to play (not to cut) in ``match_id``: cut when due, wait for the bot."""
    for _ in range(5):
        view = two.view(match_id)
        if view.HasField("dealing_seat"):
            assert view.dealing_seat == 0, "the bot cuts for itself"
            two.ann.run("deal", match_id[:6])  # the match named as the last argument
            continue
        if view.match.to_act == 0:
            return view
        two.ann.run("wait", match_id, "--timeout", "30")
    raise AssertionError("Ann's turn never came")


def test_every_command_takes_the_match_as_its_last_argument(two: Two) -> None:
    ann = two.ann
    ambiguous = ann.run("deal", ok=False)
    assert "you have 2 active matches" in one_line_error(ambiguous)
    view = _my_turn(two, two.first)  # `canasta deal PREFIX` cut the first match
    prefix = two.first[:6]
    assert view.view.phase == pb.PHASE_DRAW
    ann.run("draw", prefix)
    card = two.view(two.first).view.hand[0]
    done = ann.run("discard", card, prefix)
    assert f"move {view.version + 2} stored" in done.stdout
    # -m/--match still works where it did (scripts and mails use it).
    ann.run("show", two.second)
    ann.run("deal", "-m", two.second)
    assert not two.view(two.second).HasField("dealing_seat")
    # Two different matches named: a usage error, nothing sent.
    twice = ann.run("draw", prefix, "--match", two.second[:6], ok=False)
    assert twice.returncode == 2
    assert "two matches named" in one_line_error(twice)


def test_cards_then_the_match(two: Two) -> None:
    """Commands that take cards read a last word of 4 or more hex digits as the match; no
    card is written so."""
    view = _my_turn(two, two.first)
    ann = two.ann
    ann.run("draw", "--match", two.first)
    hand = list(two.view(two.first).view.hand)
    refused = ann.run("meld", hand[0], two.first[:8], ok=False)  # one card is no meld
    line = one_line_error(refused)
    assert line.startswith("canasta: refused: "), line  # judged by the server: match found
    assert "active matches" not in line
    done = ann.run("discard", hand[0], "-m", two.first)
    assert f"move {view.version + 2} stored" in done.stdout


def _own_terminal() -> None:
    """For ``Popen(preexec_fn=...)``: a new session whose controlling terminal is the pty on
    standard input, so that ``getpass`` asks there (it opens /dev/tty)."""
    import fcntl
    import termios

    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def _typing(player: Player, args: list[str], replies: dict[bytes, bytes]) -> str:
    """Run ``canasta ARGS`` on a terminal of its own, answer each prompt ending with a key of
    ``replies`` by its value, and return all it wrote."""
    main, other = pty.openpty()
    process = subprocess.Popen(
        [CANASTA, *args], stdin=other, stdout=other, stderr=other, env=player.env(),
        preexec_fn=_own_terminal,
    )  # fmt: skip
    os.close(other)
    seen = b""
    answered = 0  # how much of the output the replies so far answered
    deadline = time.monotonic() + RUN_TIMEOUT
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
            asked = seen[answered:].rstrip()
            for prompt, reply in replies.items():
                if asked.endswith(prompt):
                    os.write(main, reply + b"\n")
                    answered = len(seen)
                    break
        if process.poll() is not None and not ready:
            break
    process.wait(RUN_TIMEOUT)
    os.close(main)
    assert process.returncode == 0, seen
    return seen.decode(errors="replace").replace("\r\n", "\n")


def test_setup_asks_a_new_passphrase_once_and_to_confirm_it(two: Two, tmp_path: Path) -> None:
    eve = Player(tmp_path / "eve")
    said = _typing(
        eve,
        ["setup", "--server", two.server.address, "--name", "Eve", "--passphrase"],
        {b"key:": b"correct horse", b"Again:": b"correct horse"},
    )
    assert said.count("New passphrase for your key:") == 1, said
    assert said.count("Again:") == 1, said
    assert "Passphrase for" not in said, said  # the new key is not asked for again
    assert "registered Eve" in said
    # A later command asks once, even when it must sign in again and sign a move.
    profile = eve.home / "profiles" / "default" / "profile.json"
    profile.write_text(profile.read_text().replace('"token": "', '"token": "stale'))
    shown = _typing(eve, ["matches"], {b"key:": b"correct horse"})
    assert shown.count("Passphrase for") == 1, shown


def test_armor_refuses_what_the_table_already_shows_is_illegal(two: Two, tmp_path: Path) -> None:
    """Issue 28: `--armor` signs a block nobody checks until the server gets it; a move the
    player's own view shows to be illegal (not their move, a kind the engine's list leaves
    out, cards not in hand) is refused, with nothing printed and exit 1."""
    bob = Player(tmp_path / "bob")
    bob.run("setup", "--server", two.server.address, "--name", "Bob")
    match_id = bob.json("create", "--preset", "two_player", "--bot", "1")["match"]["match_id"]
    bob.run("show")
    early = bob.run("draw", "--armor", ok=False)
    assert one_line_error(early).startswith(
        "canasta: refused before signing: it is not your move: "
    ), early.stderr
    assert early.stdout == ""
    assert bob.run("deal", "--armor").stdout.startswith("-----BEGIN CANASTA MOVE-----")
    bob.run("deal")
    for _ in range(3):
        view = json_format.Parse(bob.run("show", "--json").stdout, pb.MatchView())
        if view.match.to_act == 0:
            break
        bob.run("wait", match_id, "--timeout", "30")
    assert view.view.phase == pb.PHASE_DRAW
    hand = list(view.view.hand)
    discard = bob.run("discard", hand[0], "--armor", ok=False)
    said = one_line_error(discard)
    assert said.startswith("canasta: refused before signing: `discard` is not possible now; ")
    assert "you may draw (canasta draw)" in said
    assert said.endswith("; nothing was signed")
    assert discard.stdout == ""
    absent = [f"{rank}{suit}" for rank in "456789" for suit in "hdcs"]
    absent = [card for card in absent if card not in hand][:3]
    melded = bob.run("meld", *absent, "--armor", ok=False)
    assert "which your hand does not hold; nothing was signed" in one_line_error(melded)
    assert melded.stdout == ""
    signed = bob.run("play", f"draw; discard {hand[0]}", "--armor")  # legal as far as it shows
    assert signed.stdout.startswith("-----BEGIN CANASTA MOVE-----")
    # Away from the server (a player who mails the block), it is signed unchecked, and says so.
    away = Player(tmp_path / "away")
    subprocess.run(["cp", "-a", f"{bob.home}/.", str(away.home)], check=True)
    profile = away.home / "profiles" / "default" / "profile.json"
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = f"127.0.0.1:{sock.getsockname()[1]}"
    profile.write_text(profile.read_text().replace(two.server.address, closed))
    offline = away.run("draw", match_id, "--armor")
    assert offline.stdout.startswith("-----BEGIN CANASTA MOVE-----")
    assert "the move is signed without checking it against the table" in offline.stderr
