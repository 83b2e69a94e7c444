"""Every error path of the ``canasta`` executable: its exit code and its one line on stderr.

One real server and four players with a started match serve most tests in this module (each
test leaves the match as it found it, or only moves it on legally); the changed-server-key
test runs its own server so it can replace it.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from google.protobuf import json_format

from client.errors import EXIT_MATCH_OVER, EXIT_TIMEOUT
from shared.pb import canasta_pb2 as pb
from tests.e2e.harness import (
    CANASTA,
    Lines,
    Player,
    Server,
    interruptible,
    one_line_error,
    start_server,
)

pytestmark = pytest.mark.slow


@dataclass
class Table:
    server: Server
    players: list[Player]
    match_id: str

    def view(self, seat: int) -> pb.MatchView:
        return json_format.Parse(self.players[seat].run("show", "--json").stdout, pb.MatchView())

    def actor(self) -> int:
        view = self.view(0)
        assert view.match.HasField("to_act")
        return int(view.match.to_act)


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Table]:
    root = tmp_path_factory.mktemp("errors")
    server = start_server(root / "server")
    players = [Player(root / name) for name in ("ann", "ben", "cat", "dan")]
    for number, player in enumerate(players):
        player.run("setup", "--server", server.address, "--name", f"P{number}")
    created = json_format.Parse(players[0].run("create", "--json").stdout,
                                pb.CreateMatchResponse())  # fmt: skip
    for player in players[1:]:
        player.run("join", created.invite_code)
    match_id = created.match.match_id
    cut = json_format.Parse(players[0].run("show", "--json").stdout, pb.MatchView())
    players[cut.dealing_seat].run("deal")
    yield Table(server, players, match_id)
    server.stop()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_no_profile_yet(tmp_path: Path) -> None:
    done = Player(tmp_path / "nobody").run("show", ok=False)
    assert done.returncode == 1
    line = one_line_error(done)
    assert "no profile 'default' yet" in line
    assert "canasta setup --server HOST:PORT" in line


def test_unreachable_server(tmp_path: Path) -> None:
    port = _free_port()
    done = Player(tmp_path / "p").run("setup", "--server", f"127.0.0.1:{port}", "--name", "X",
                                      ok=False)  # fmt: skip
    assert done.returncode == 1
    line = one_line_error(done)
    assert line.startswith(f"canasta: cannot reach the server at 127.0.0.1:{port} (")
    assert "connection refused" in line


def test_unknown_match(table: Table) -> None:
    player = table.players[1]
    unknown = "0" * 32
    done = player.run("show", unknown, ok=False)
    assert done.returncode == 1
    assert one_line_error(done) == f"canasta: there is no match '{unknown}'"
    done = player.run("history", "zz", ok=False)
    assert done.returncode == 1
    assert "no match of yours starts with 'zz'" in one_line_error(done)


def test_card_typo_is_caught_before_any_call(table: Table, tmp_path: Path) -> None:
    player = table.players[table.actor()]
    done = player.run("meld", "7h", "7x", "2s", ok=False)
    assert done.returncode == 2  # a command-line error, as docs/playing.md's exit codes say
    line = one_line_error(done)
    assert line.startswith("canasta: cannot read the move: could not read the card '7x'")
    # No call is made: the same typo against an unreachable server still names the card.
    offline = Player(player.home, {"CANASTA_PROFILE": "offline"})
    profile = player.home / "profiles" / "default" / "profile.json"
    (player.home / "profiles" / "offline").mkdir(exist_ok=True)
    text = profile.read_text().replace(table.server.address, f"127.0.0.1:{_free_port()}")
    (player.home / "profiles" / "offline" / "profile.json").write_text(text)
    done = offline.run("play", "draw; discard 1x", ok=False)
    assert "could not read the card '1x'" in one_line_error(done)
    assert done.returncode == 2
    done = offline.run("answer", "maybe", ok=False)
    assert done.returncode == 2
    assert one_line_error(done) == "canasta: canasta answer takes yes or no, not 'maybe'"


@pytest.mark.parametrize(
    ("address", "says"),
    [
        ("http://localhost:7437", "has a scheme (http://)"),
        ("localhost", "has no port"),
        ("localhost:99999", "is out of range (1-65535)"),
    ],
)
def test_a_wrong_server_address_is_named_before_connecting(
    tmp_path: Path, address: str, says: str
) -> None:
    done = Player(tmp_path / "p").run("setup", "--server", address, "--name", "X", ok=False)
    assert done.returncode == 2
    line = one_line_error(done)
    assert says in line
    assert "cannot reach" not in line
    assert not (tmp_path / "p" / "profiles").exists()  # nothing was made


def test_illegal_move_prints_the_rule(table: Table) -> None:
    seat = table.actor()
    view = table.view(seat)
    assert view.view.phase == pb.PHASE_DRAW
    done = table.players[seat].run("discard", view.view.hand[0], ok=False)
    assert done.returncode == 1
    line = one_line_error(done)
    assert line.startswith("canasta: refused: ")
    assert table.view(seat).version == view.version  # nothing changed


def test_wrong_turn(table: Table) -> None:
    actor = table.actor()
    seat = (actor + 1) % 4
    table.view(seat)  # up to date: the only fault is the turn
    done = table.players[seat].run("draw", ok=False)
    assert done.returncode == 1
    assert one_line_error(done) == (
        f"canasta: refused: it is not your move: waiting for P{actor} (seat {actor}) to draw"
    )


def test_stale_version_submits_nothing(table: Table) -> None:
    seat = table.actor()
    follower = (seat + 1) % 4
    seen = table.view(follower).version
    table.view(seat)
    table.players[seat].run("draw")
    done = table.players[follower].run("play", "draw; discard 4d", ok=False)
    assert done.returncode == 1
    assert one_line_error(done) == (
        f"canasta: the match moved on since you last looked (you saw version {seen}, it is at "
        f"version {seen + 1}), and it is not your move now: waiting for P{seat} (seat {seat}) "
        "to play. Nothing was submitted; `canasta show` shows the table"
    )
    assert table.view(seat).version == seen + 1
    hand = table.view(seat).view.hand
    table.players[seat].run("discard", hand[0])  # back to a draw phase for the other tests


def _others_move_until_my_turn(table: Table) -> tuple[int, int]:
    """The next player looks at the table, then the player to move draws and discards: the
    next player's view is stale although it is now their turn. Returns (mover, next)."""
    seat = table.actor()
    follower = (seat + 1) % 4
    table.view(follower)
    table.view(seat)
    table.players[seat].run("draw")
    table.players[seat].run("discard", table.view(seat).view.hand[0])
    return seat, follower


def test_a_stale_view_on_my_turn_shows_the_changes_and_needs_a_yes(table: Table) -> None:
    """Issue 14.5: others moved and it is now my turn: the table and the changes are shown;
    without a terminal nothing is sent unless --yes, and with --yes the move is played."""
    mover, me = _others_move_until_my_turn(table)
    before = table.view(mover).version
    done = table.players[me].run("draw", ok=False)
    assert done.returncode == 2
    assert one_line_error(done).endswith(
        "nothing was submitted. Run the command again with --yes to play it on this table"
    )
    assert "Since you last looked (2 moves by others):" in done.stdout
    assert f"P{mover} (seat {mover}): draw" in done.stdout
    assert "Your turn:" in done.stdout  # the table as it is now
    assert table.view(mover).version == before
    played = table.players[me].run("draw", "--yes")
    assert "Since you last looked (2 moves by others):" in played.stdout
    assert f"move {before + 1} stored; receipt verified" in played.stdout
    assert "sending `draw` (--yes)" in played.stderr
    table.players[me].run("discard", table.view(me).view.hand[0])


def test_a_stale_view_on_my_turn_asks_in_a_terminal(table: Table) -> None:
    """Issue 14.5: at a terminal the player is asked; "n" sends nothing, "y" plays."""
    import pty

    mover, me = _others_move_until_my_turn(table)
    before = table.view(mover).version
    outputs: list[tuple[int, str, str]] = []
    for reply in (b"n\n", b"y\n"):
        main, tty = pty.openpty()
        process = subprocess.Popen(
            [CANASTA, "draw"], stdin=tty, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=table.players[me].env(),
        )  # fmt: skip
        os.close(tty)
        os.write(main, reply)
        raw_out, raw_err = process.communicate(timeout=60)
        os.close(main)
        outputs.append((process.returncode, raw_out.decode(), raw_err.decode()))
    (refused, out, err), (played, out2, _) = outputs
    assert refused == 1, err
    assert "Play `draw` now?" in out
    assert err.strip() == "canasta: nothing was submitted"
    assert played == 0
    assert f"move {before + 1} stored; receipt verified" in out2
    table.players[me].run("discard", table.view(me).view.hand[0])


def test_a_stale_answer_says_nobody_asked(table: Table) -> None:
    """Issue 14.6: a stale `answer yes` says what is wrong with it, not only "moved on"."""
    _, me = _others_move_until_my_turn(table)
    done = table.players[me].run("answer", "yes", ok=False)
    assert done.returncode == 1
    line = one_line_error(done)
    assert ", and now nobody has asked you anything; you may draw (canasta draw)" in line
    assert line.endswith(". Nothing was submitted")
    table.players[me].run("draw", "--yes")
    table.players[me].run("discard", table.view(me).view.hand[0])


def test_moves_lists_what_i_may_do_as_commands(table: Table) -> None:
    """Issue 14.13: `canasta moves` groups the engine's legal actions as commands."""
    seat = table.actor()
    mine = table.players[seat].run("moves").stdout
    assert "Start your turn:\n  canasta draw\n" in mine
    other = (seat + 1) % 4
    theirs = table.players[other].run("moves").stdout
    assert theirs.startswith(f"Nothing for you to do in match {table.match_id[:8]} now: ")
    assert f"Waiting for P{seat} (seat {seat}) to draw" in theirs
    table.view(seat)
    table.players[seat].run("draw")
    after = json.loads(table.players[seat].run("moves", "--json").stdout)
    kinds = [group["kind"] for group in after["groups"]]
    assert "discard" in kinds
    assert "start" not in kinds
    hand = table.view(seat).view.hand
    discards = next(g for g in after["groups"] if g["kind"] == "discard")["actions"]
    assert discards
    assert all(a.split()[1] in hand for a in discards)
    table.players[seat].run("discard", hand[0])


def test_wait_times_out_or_returns_on_my_turn(table: Table) -> None:
    seat = table.actor()
    done = table.players[(seat + 1) % 4].run("wait", "--timeout", "1", ok=False)
    assert done.returncode == EXIT_TIMEOUT
    assert one_line_error(done) == "canasta: still not your turn after 1 s"
    mine = table.players[seat].run("wait", "--timeout", "5", "--json")
    assert json_format.Parse(mine.stdout, pb.MatchView()).view.seat == seat


def test_wait_on_a_match_that_is_over_exits_4(table: Table, tmp_path: Path) -> None:
    """docs/playing.md's exit codes: `canasta wait` on a finished match says so and exits 4
    (a script looping on `wait` stops), at once rather than at its timeout. A player of its
    own resigns a two-handed match against a bot, so the module's table plays on."""
    eve = Player(tmp_path / "eve")
    eve.run("setup", "--server", table.server.address, "--name", "Eve")
    created = json_format.Parse(eve.run("create", "--preset", "two_player", "--bot", "1",
                                        "--json").stdout, pb.CreateMatchResponse())  # fmt: skip
    eve.run("resign", "--yes")
    done = eve.run("wait", created.match.match_id, "--timeout", "20", ok=False)
    assert done.returncode == EXIT_MATCH_OVER == 4
    assert one_line_error(done) == "canasta: the match is over"


def test_show_loads_neither_cryptography_nor_pydantic(table: Table) -> None:
    """``canasta show`` with a pinned key and a valid token checks the pin in pure Python
    (``shared.crypto.keytext``) and needs no signature: the ``cryptography`` library's 25 ms
    of start-up stay out of the command a player types most, as does pydantic's."""
    player = table.players[1]
    player.run("show")  # a token is cached and the server key pinned
    code = (
        "import json, sys\n"
        "from typer.main import get_command\n"
        "from client.main import app\n"
        "get_command(app).main(['show'], prog_name='canasta', standalone_mode=False)\n"
        "heavy = ('cryptography', 'pydantic', 'rich', 'shared.rules', 'shared.crypto.keys')\n"
        "print(json.dumps([m for m in heavy if m in sys.modules]), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=player.env(),
        timeout=60, check=True,
    )  # fmt: skip
    assert f"Match {table.match_id}" in done.stdout
    assert json.loads(done.stderr.strip().splitlines()[-1]) == []


def test_key_file_open_to_others_is_refused(table: Table) -> None:
    player = table.players[2]
    key = player.home / "profiles" / "default" / "key"
    os.chmod(key, 0o644)
    try:
        done = player.run("draw", ok=False)
        assert done.returncode == 1
        line = one_line_error(done)
        assert f"the key file {key} is open to other users (mode 0644)" in line
        assert f"chmod 600 {key}" in line
    finally:
        os.chmod(key, 0o600)
    assert stat.S_IMODE(key.stat().st_mode) == 0o600


def test_changed_server_key_is_loud(tmp_path: Path) -> None:
    first = start_server(tmp_path / "first")
    player = Player(tmp_path / "p")
    try:
        player.run("setup", "--server", first.address, "--name", "Pat")
    finally:
        first.stop()
    impostor = start_server(tmp_path / "second", port=first.port)
    try:
        done = player.run("matches", ok=False)
        assert done.returncode == 1
        line = one_line_error(done)
        assert line.startswith(
            f"canasta: DANGER: the server's key changed! {first.address} now presents key "
        )
        assert "run `canasta server forget`" in line
        player.run("server", "forget")
        # After forgetting, the new key is pinned; this player's key is not registered there.
        done = player.run("matches", ok=False)
        assert done.returncode == 1
        pinned, refused = done.stderr.strip().splitlines()
        assert pinned.startswith(f"canasta: pinned the key of the server at {first.address}")
        assert refused == "canasta: this key is not registered here: register first"
    finally:
        impostor.stop()


def test_watch_prints_a_line_per_change_until_interrupted(table: Table) -> None:
    seat = table.actor()
    watcher = table.players[(seat + 2) % 4]
    process = subprocess.Popen(
        [CANASTA, "watch", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env=watcher.env(), preexec_fn=interruptible,
    )  # fmt: skip
    lines = Lines(process)
    try:
        now = _line(lines)
        assert now["match_id"] == table.match_id
        table.view(seat)
        table.players[seat].run("draw")
        change = _line(lines)
        assert int(str(change["version"])) == int(str(now["version"])) + 1
        assert change["to_act"] == seat
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(15)
        err = process.stderr.read() if process.stderr is not None else ""
    assert process.returncode == 130  # stopped by Ctrl-C, quietly: no traceback
    assert "Traceback" not in err
    hand = table.view(seat).view.hand
    table.players[seat].run("discard", hand[0])


def _line(lines: Lines) -> dict[str, object]:
    """The next change of a match (the player's notifications, also printed, are skipped)."""
    while True:
        line = lines.next(20)
        assert line, "watch printed nothing"
        data: dict[str, object] = json.loads(line)
        if data["match_id"]:
            return data


def test_passphrase_protected_key(table: Table, tmp_path: Path) -> None:
    secret = {"CANASTA_PASSPHRASE": "a long passphrase"}
    player = Player(tmp_path / "eve", secret)
    player.run("setup", "--server", table.server.address, "--name", "Eve", "--passphrase")
    key = tmp_path / "eve" / "profiles" / "default" / "key"
    assert key.read_bytes().startswith(b"-----BEGIN OPENSSH PRIVATE KEY-----")
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    locked = Player(tmp_path / "eve")
    (tmp_path / "eve" / "profiles" / "default" / "profile.json").write_text(
        (tmp_path / "eve" / "profiles" / "default" / "profile.json")
        .read_text()
        .replace('"token": "', '"token": "stale')
    )
    done = locked.run("matches", ok=False)
    assert done.returncode == 1
    assert one_line_error(done) == (
        f"canasta: the key {key} is protected by a passphrase: set CANASTA_PASSPHRASE "
        "or run the command in a terminal"
    )
    wrong = Player(tmp_path / "eve", {"CANASTA_PASSPHRASE": "nope"})
    assert "the passphrase is wrong" in one_line_error(wrong.run("matches", ok=False))
    assert player.json("matches")["matches"] == []


def test_a_changed_pin_stops_reads_and_moves_before_anything_is_sent(table: Table) -> None:
    """The same server and database, but the profile pinned another key (a copied profile
    meeting an impostor looks the same): no token and no move may leave."""
    from shared.crypto.keys import generate_private_key, public_key_raw
    from shared.crypto.keytext import public_key_to_text

    seat = table.actor()
    player = table.players[seat]
    table.view(seat)
    profile = player.home / "profiles" / "default" / "profile.json"
    original = profile.read_text()
    data = json.loads(original)
    data["server_key"] = public_key_to_text(public_key_raw(generate_private_key()))
    profile.write_text(json.dumps(data))
    try:
        for command in (["show"], ["draw"]):
            done = player.run(*command, ok=False)
            assert done.returncode == 1
            assert one_line_error(done).startswith("canasta: DANGER: the server's key changed!")
    finally:
        profile.write_text(original)
    assert table.view(seat).view.phase == pb.PHASE_DRAW  # the draw was never sent


def test_a_first_move_from_a_profile_that_never_looked_is_played(
    table: Table, tmp_path: Path
) -> None:
    """Issue 28: a copy of the player's profile that never saw the match (another device)
    plays its first move on the match as it is now, after the first look's checks of the
    whole chain from its header (``client.forks``), which it then remembers."""
    seat = table.actor()
    stranger = Player(tmp_path / "copy")
    source = table.players[seat].home
    subprocess.run(["cp", "-a", f"{source}/.", str(stranger.home)], check=True)
    profile = stranger.home / "profiles" / "default" / "profile.json"
    data = json.loads(profile.read_text())
    data["matches"] = {}  # this copy of the profile never saw the match
    profile.write_text(json.dumps(data))
    version = table.view(seat).version
    done = stranger.run("draw")
    assert f"move {version + 1} stored; receipt verified" in done.stdout
    seen = json.loads(profile.read_text())["matches"][table.match_id]
    assert seen["version"] == version + 1
    assert seen["header_hash"]  # the chain was checked from its header on the first look
    hand = table.view(seat).view.hand
    table.players[seat].run("discard", hand[0])  # the turn ends as any other


def test_wait_refuses_a_timeout_that_is_not_a_number_of_seconds(table: Table) -> None:
    for value in ("inf", "nan", "0", "-3"):
        done = table.players[0].run("wait", "--timeout", value, ok=False)
        assert done.returncode == 2, (value, done.stderr)
        assert "Traceback" not in done.stderr


def test_unknown_host(tmp_path: Path) -> None:
    done = Player(tmp_path / "p").run(
        "setup", "--server", "nonexistent.invalid:1", "--name", "B", ok=False
    )
    assert one_line_error(done) == (
        "canasta: cannot reach the server at nonexistent.invalid:1 (the host name does not resolve)"
    )


@pytest.mark.parametrize("content", ["[]", '{"server": 5, "matches": {"x": {"foo": 1}}}'])
def test_damaged_profile(table: Table, tmp_path: Path, content: str) -> None:
    player = Player(tmp_path / "p")
    profile = player.home / "profiles" / "default" / "profile.json"
    profile.parent.mkdir(parents=True)
    profile.write_text(content)
    done = player.run("matches", ok=False)
    assert done.returncode == 1
    assert one_line_error(done) == (
        f"canasta: the profile file {profile} is damaged; fix it, or move it away and run "
        "`canasta setup` again"
    )
