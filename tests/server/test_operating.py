"""Running a server for a club (issue 17): backups while moves are stored, restore, the admin
commands and their log, the metrics endpoint and JSON logs, against real servers."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import grpc
import pytest
from typer.testing import CliRunner

from server.__main__ import app as cli
from server.app import App
from server.metrics import PER_PEER
from server.service.people.accounts import Caller
from server.store.db import Database
from server.store.migrations import migrate
from shared.pb import canasta_pb2 as pb
from tests.testkit import (
    PlayerClient,
    authoritative_state,
    banner_port,
    next_plain_move,
    plain_turn,
    replay_history,
    seated_match,
    serve_with_banner,
    start_server_process,
)

from .conftest import AppFactory
from .floodkit import close_all, closed_by_server, idle_connections, refusal_lines

SERVER = (sys.executable, "-m", "server")


def _env(tmp_path: Path, **settings: str) -> dict[str, str]:
    """The environment of a server or admin process: no settings file, these settings."""
    (tmp_path / "none.toml").write_text("")
    env = {**os.environ, "CANASTA_SERVER_CONFIG": str(tmp_path / "none.toml")}
    env.update({f"CANASTA_SERVER_{k.upper()}": v for k, v in settings.items()})
    return env


def _four(port: int) -> tuple[list[PlayerClient], str]:
    """Four players on the server at ``port``, seated in a started match; its id."""
    seats = [
        PlayerClient(grpc.insecure_channel(f"127.0.0.1:{port}")).join_server(name)
        for name in ("alice", "bob", "carol", "dave")
    ]
    return seats, seated_match(seats)


def _stop(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGTERM)
    assert process.wait(30) == 0


# -- backup and restore -------------------------------------------------------------------------


class _Mover(threading.Thread):
    """Plays plain moves until told to stop, keeping each acknowledged move's receipt."""

    def __init__(self, seats: list[PlayerClient], match_id: str) -> None:
        super().__init__(daemon=True)
        self.seats, self.match_id = seats, match_id
        self.acked: list[tuple[int, bytes]] = []
        self.stopping = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            while not self.stopping.is_set():
                response = next_plain_move(self.seats, self.match_id)
                assert response is not None
                self.acked.append((response.receipt.seq, response.receipt.entry_hash))
        except BaseException as exc:  # reported by the test
            self.error = exc

    def wait_for(self, moves: int) -> None:
        while len(self.acked) < moves and self.error is None and self.is_alive():
            self.stopping.wait(0.01)
        assert self.error is None, self.error


@pytest.mark.slow
def test_a_backup_taken_during_moves_restores_every_move_acknowledged_before_it(
    tmp_path: Path,
) -> None:
    """`canasta-server backup` while a match is being played; `restore` refused while the
    server runs; after a stop, restore, start: every move acknowledged before the backup
    began is there with its receipt's hash, the chain verifies, and the match plays on.

    Moves come as fast as the server takes them (seat 0 reads a view for each), so the
    per-player read budget is off: it is what the attack tests probe, not this one."""
    data, env = tmp_path / "server", _env(tmp_path, limit_reads_per_minute="0")
    copy = tmp_path / "nightly.db"
    process, port = start_server_process(data, env=env)
    try:
        seats, match_id = _four(port)
        mover = _Mover(seats, match_id)
        mover.start()
        mover.wait_for(40)
        before = list(mover.acked)
        backup = subprocess.run(
            [*SERVER, "--data-dir", str(data), "backup", str(copy)],
            env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        mover.wait_for(len(mover.acked) + 20)  # moves go on being stored after it
        mover.stopping.set()
        mover.join(30)
        assert mover.error is None, mover.error
        assert backup.returncode == 0, backup.stderr
        assert f"backed up {copy}: 1 matches" in backup.stdout
        refused = subprocess.run(
            [*SERVER, "--data-dir", str(data), "restore", str(copy)],
            env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert refused.returncode == 1
        assert "in use (is the server running?)" in refused.stderr
        assert seats[0].view(match_id).version == len(mover.acked)  # nothing was touched
    finally:
        _stop(process)
    with sqlite3.connect(copy) as db:  # one self-contained file
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert not Path(f"{copy}-wal").exists()

    restored = subprocess.run(
        [*SERVER, "--data-dir", str(data), "restore", str(copy)],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert restored.returncode == 0, restored.stderr
    kept = list(data.glob("canasta.db.before-restore-*"))
    assert len(kept) == 1
    assert f"kept as {kept[0]}" in restored.stdout

    process, port = start_server_process(data, env=env)
    try:
        again = [PlayerClient(grpc.insecure_channel(f"127.0.0.1:{port}"), key=s.key) for s in seats]
        for client in again:
            client.login()
        entries, history = again[1].full_history(match_id)
        stored = {e.seq: e.entry_hash for e in entries}
        for seq, entry_hash in before:
            assert stored.get(seq) == entry_hash, f"move {seq} acknowledged before the backup"
        assert len(before) <= len(entries) <= len(mover.acked)
        replay_history(match_id, history, entries, again[0].server_key)
        response = next_plain_move(again, match_id)  # the restored match plays on
        assert response is not None
        assert response.receipt.seq == len(entries) + 1
    finally:
        _stop(process)
    with sqlite3.connect(kept[0]) as old:  # the replaced database, every move in it
        assert old.execute("SELECT COUNT(*) FROM log_entry").fetchone()[0] == len(mover.acked)


@pytest.mark.parametrize("engine", ["sqlite"])
def test_backup_and_restore_refuse_what_they_cannot_do_safely(
    tmp_path: Path, make_app: AppFactory
) -> None:
    """An existing file is never overwritten; a file that is not a backup, or one made by a
    newer server, is never restored; nothing changes when refused."""
    runner = CliRunner()
    base = ["--data-dir", str(tmp_path / "server")]
    app = make_app("server", start=False)
    database = Path(app.config.db_url.removeprefix("sqlite:///"))
    taken = tmp_path / "taken.db"
    taken.write_text("keep me")
    done = runner.invoke(cli, [*base, "backup", str(taken)])
    assert done.exit_code == 1
    assert "exists already" in done.output
    assert taken.read_text() == "keep me"
    done = runner.invoke(cli, [*base, "backup", str(tmp_path / "nowhere" / "x.db")])
    assert done.exit_code == 1
    assert "does not exist" in done.output

    done = runner.invoke(cli, [*base, "restore", str(tmp_path / "server" / "canasta.db")])
    assert done.exit_code == 1
    assert "in use" in done.output  # this test's own server has it open
    app.stop(grace=None)
    before = database.read_bytes()
    done = runner.invoke(cli, [*base, "restore", str(taken)])
    assert done.exit_code == 1
    assert "not a canasta-server database" in done.output
    newer = tmp_path / "newer.db"
    assert runner.invoke(cli, [*base, "backup", str(newer)]).exit_code == 0
    with sqlite3.connect(newer) as db:
        db.execute("UPDATE alembic_version SET version_num = '9999'")
    done = runner.invoke(cli, [*base, "restore", str(newer)])
    assert done.exit_code == 1
    assert "revision 9999, which this server does not know" in done.output
    assert database.read_bytes() == before
    assert not list(database.parent.glob("*.before-restore-*"))


@pytest.mark.parametrize("engine", ["sqlite"])
def test_scheduled_backups_come_every_so_many_hours_and_the_oldest_go(
    make_app: AppFactory, players: Callable[..., PlayerClient], tmp_path: Path
) -> None:
    """Issue 30: with ``backup_dir`` a server takes an online backup when the newest there is
    ``backup_every_hours`` old, and keeps the newest ``backup_keep``; each is a good backup of
    what was stored before it, readable by its owner only."""
    folder = tmp_path / "backups"
    app = make_app(backup_dir=folder, backup_every_hours=6, backup_keep=2)
    now = [1_796_630_400_000]  # Monday 7 December 2026, 08:00 UTC
    app.service.ctx.clock = lambda: now[0]
    players("ann").create_match(bot_seats=[1, 2, 3])

    def taken() -> list[str]:
        return sorted(p.name for p in folder.glob("canasta-*.db"))

    app.backup_round()
    assert taken() == ["canasta-20261207-080000.db"]
    assert (folder / taken()[0]).stat().st_mode & 0o777 == 0o600
    for hours in (1, 5):  # not due until six hours have passed
        now[0] += hours * 3_600_000 - (1 if hours == 5 else 0)
        app.backup_round()
        assert len(taken()) == 1
    now[0] += 1
    app.backup_round()
    now[0] += 6 * 3_600_000
    app.backup_round()
    assert taken() == ["canasta-20261207-140000.db", "canasta-20261207-200000.db"]
    with sqlite3.connect(folder / taken()[-1]) as copy:
        assert copy.execute("SELECT COUNT(*) FROM match").fetchone()[0] == 1


def test_scheduled_backups_are_for_sqlite(tmp_path: Path) -> None:
    from server.config import ConfigFileError, load_config

    env = {
        "CANASTA_SERVER_DATABASE_URL": "postgresql+psycopg://canasta@localhost/canasta",
        "CANASTA_SERVER_BACKUP_DIR": str(tmp_path),
    }
    with pytest.raises(ConfigFileError, match="pg_dump"):
        load_config(env=env, data_dir=tmp_path)


def test_backup_of_postgresql_points_to_pg_dump(tmp_path: Path) -> None:
    runner = CliRunner()
    done = runner.invoke(
        cli,
        ["--data-dir", str(tmp_path), "--database-url", "postgresql+psycopg://x@127.0.0.1:1/x",
         "backup", str(tmp_path / "f.db")],
    )  # fmt: skip
    assert done.exit_code == 1
    assert "for PostgreSQL use pg_dump and pg_restore" in done.output
    assert not (tmp_path / "f.db").exists()


# -- admin commands -----------------------------------------------------------------------------


@pytest.fixture
def admin(tmp_path: Path, database_url: Callable[[str], str]) -> Callable[..., tuple[int, str]]:
    """``admin("players", "list")``: run a ``canasta-server`` command on the storage of the
    ``make_app`` server named "server"; its exit code and output."""
    runner = CliRunner()
    url = database_url("server")
    base = ["--data-dir", str(tmp_path / "server"), *(["--database-url", url] if url else [])]

    def run(*args: str) -> tuple[int, str]:
        done = runner.invoke(cli, [*base, *args])
        return done.exit_code, done.output

    return run


def _names(view: pb.MatchView) -> list[str]:
    return [s.display_name for s in view.match.seats]


def test_the_operator_lists_shows_and_aborts_matches_and_renames_and_deletes_players(
    make_app: AppFactory, admin: Callable[..., tuple[int, str]]
) -> None:
    """`matches list|show|abort`, `players rename|delete`, `log` and `status`, beside a running
    server that sees each change at once; a deleted player's signed moves stay and verify."""
    app = make_app("server")
    seats, match_id = _four(app.port)
    for _ in range(12):
        next_plain_move(seats, match_id)
    code, out = admin("matches", "list")
    assert code == 0, out
    assert match_id in out
    assert "playing" in out
    assert "alice, bob, carol, dave" in out
    code, out = admin("matches", "show", match_id[:6])
    assert code == 0, out
    assert f"match     {match_id}" in out
    assert "moves     12" in out
    assert "seat 1    bob  player #2" in out
    assert admin("matches", "show", "zz")[0] == 2  # not a match id
    assert admin("matches", "show", "0000000000")[0] == 1  # no such match

    code, out = admin("players", "rename", "1", "Alice B.")
    assert code == 0, out
    assert _names(seats[2].view(match_id))[0] == "Alice B."  # the running server shows it
    code, out = admin("players", "rename", "1", "x" * 41)
    assert code == 2
    assert "1 to 40 printable characters" in out

    code, out = admin("players", "delete", "2", "--yes")
    assert code == 1
    assert f"sits in 1 match(es) that are not over ({match_id[:8]})" in out
    code, out = admin("matches", "abort", match_id[:8], "--yes")
    assert code == 0, out
    view = seats[0].view(match_id)
    assert view.match.status == pb.MATCH_STATUS_FINISHED
    assert view.match.aborted
    assert not view.match.HasField("to_act")  # nobody is to move any more
    actor = authoritative_state(app.service, match_id).actor()
    assert actor is not None
    engine_actor = seats[actor]
    with pytest.raises(grpc.RpcError) as info:  # the seat the engine would have next: refused
        engine_actor.submit(engine_actor.view(match_id), plain_turn(engine_actor.view(match_id)))
    assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "abandoned: it takes no more moves" in (info.value.details() or "")
    assert seats[0].view(match_id).version == 12
    assert admin("matches", "abort", match_id, "--yes")[0] == 1  # over already
    notes = app.service.outbox.log(_caller(app, seats[1]).player.id, 0)[1]
    assert any(
        note.kind == "match_aborted" and "ended by the server's operator" in text
        for note, text in notes
    )

    code, out = admin("players", "rename", "2", "Bobby Tables")
    assert code == 0, out
    assert "canasta-server: players rename by " in out  # the log line, on standard error
    code, out = admin("players", "delete", "2", "--yes")
    assert code == 0, out
    assert "views now show 'deleted player 2'" in out
    assert _names(seats[0].view(match_id))[1] == "deleted player 2"
    with pytest.raises(grpc.RpcError) as info:
        seats[1].login()
    assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
    entries, history = seats[0].full_history(match_id)
    assert len(entries) == 12  # bob's signed moves stay, and the record verifies
    replay_history(match_id, history, entries, seats[0].server_key)
    assert admin("players", "unblock", "2")[0] == 1  # a deleted player's key stays blocked
    code, out = admin("players", "list")
    assert "DELETED" in out
    assert "bob" not in _without_keys(out)

    code, out = admin("log")
    assert code == 0, out
    lines = out.splitlines()
    assert [line.split(": ", 1)[1].split()[:3] for line in lines] == [
        ["players", "rename", "#1"],
        ["matches", "abort", match_id],
        ["players", "rename", "#2"],
        ["players", "delete", "#2"],
    ]
    assert "Alice B." in lines[0]
    assert "Bobby" not in out  # a deleted player's names leave the admin log too
    assert "bob" not in _without_keys(out)
    code, out = admin("status")
    assert code == 0, out
    assert "matches finished                 1" in out
    assert "moves                           12" in out
    assert "open watch streams        unknown (metrics off)" in out
    assert "players delete #2" in out


def _caller(app: App, client: PlayerClient) -> Caller:
    return app.service.accounts.authorize(client.token)


# -- metrics and logs ---------------------------------------------------------------------------


def _scrape(port: int) -> dict[str, float]:
    """The metrics endpoint's samples: ``'name{label="value",...}'`` -> value."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    samples: dict[str, float] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            samples[name] = float(value)
    return samples


@pytest.mark.slow
def test_the_metrics_endpoint_counts_calls_moves_streams_and_commits(tmp_path: Path) -> None:
    """A real server with ``metrics_listen``: a scrape shows the calls per method and status,
    the moves stored by players and bots, the open Watch streams, the matches by status and
    the commit times, and no label names a player, a match or a card; `status` reads the
    open streams from it."""
    data, env = tmp_path / "server", _env(tmp_path, metrics_listen="127.0.0.1:0")
    process, banner = serve_with_banner(data, env=env)
    port, metrics_port = banner_port(banner, "listening on "), banner_port(banner, "metrics on ")
    try:
        alice = PlayerClient(grpc.insecure_channel(f"127.0.0.1:{port}")).join_server("alice")
        match_id = alice.create_match(seat=0, bot_seats=[1, 2, 3]).match.match_id
        stream = alice.watch([match_id])
        next(stream)  # the stream is open: its first message arrived
        moves = 0
        while moves < 6:
            view = alice.view(match_id)
            if view.match.to_act != 0:
                continue  # the bots are moving
            response = alice.deal(view) if view.HasField("dealing_seat") else None
            if response is None:
                alice.submit(view, plain_turn(view))
            moves += 1
        with pytest.raises(grpc.RpcError):
            alice.stub.GetView(pb.GetViewRequest(match_id=match_id))  # no token
        # A call is counted as its handler ends, which can be a moment after its status
        # reached the client (an abort sends it first): scrape until the refusal shows.
        refused = 'canasta_rpc_calls_total{code="UNAUTHENTICATED",method="GetView"}'
        samples = _scrape(metrics_port)
        deadline = time.monotonic() + 10
        while refused not in samples and time.monotonic() < deadline:
            time.sleep(0.05)
            samples = _scrape(metrics_port)
        status = subprocess.run(
            [*SERVER, "--data-dir", str(data), "status"],
            env={**env, "CANASTA_SERVER_METRICS_LISTEN": f"127.0.0.1:{metrics_port}"},
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        stream.cancel()
    finally:
        _stop(process)
    submits = samples['canasta_rpc_calls_total{code="OK",method="Submit"}']
    assert submits == moves
    assert samples[refused] == 1
    assert samples['canasta_rpc_seconds_count{code="OK",method="Submit"}'] == moves
    assert samples['canasta_moves_stored_total{by="player"}'] == moves
    assert samples['canasta_moves_stored_total{by="bot"}'] >= moves - 1  # bots answered
    assert samples["canasta_watch_streams_open"] == 1
    assert samples['canasta_matches{status="playing"}'] == 1
    assert samples['canasta_notifications{state="failed"}'] == 0
    assert samples["canasta_db_commit_seconds_count"] >= 2 * moves
    labels = {part for name in samples for part in name.partition("{")[2].split(",") if part}
    assert not any(match_id in label or "alice" in label for label in labels)
    assert status.returncode == 0, status.stderr
    assert "open watch streams               1" in status.stdout


@pytest.mark.slow  # about 9 s of idle timeouts: in `make test`, not the inner loop
def test_the_metrics_endpoint_caps_connections_and_closes_idle_ones(tmp_path: Path) -> None:
    """Issue 25: idle connections to the metrics endpoint each held a thread for good. Now one
    address holds at most ``PER_PEER`` (the rest are closed at once, in one log line), each
    is closed after ``handshake_seconds`` of silence, and a scrape is served meanwhile."""
    data = tmp_path / "server"
    env = _env(tmp_path, metrics_listen="127.0.0.1:0", handshake_seconds="1")
    process, banner = serve_with_banner(data, env=env)
    metrics_port = banner_port(banner, "metrics on ")
    try:
        threads_before = _threads(process.pid)
        flood = idle_connections(metrics_port, 50)
        try:
            assert closed_by_server(flood, at_least=50 - PER_PEER) >= 50 - PER_PEER
            # One thread per connection held (50 before the caps); 2 to spare for any the
            # server starts on its own meanwhile.
            assert _threads(process.pid) <= threads_before + PER_PEER + 2
            assert "canasta_watch_streams_open" in _scrape(metrics_port)
            assert closed_by_server(flood, at_least=50) == 50  # the held ones: timed out
        finally:
            close_all(flood)
    finally:
        _stop(process)
    lines = refusal_lines(data / "server.log", "metrics")
    assert len(lines) == 1, lines
    assert "ipv4:127.0.0.2" in lines[0]


def _threads(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(status.split("Threads:", 1)[1].split()[0])


@pytest.mark.slow
def test_json_log_lines_are_one_object_each(tmp_path: Path) -> None:
    """``log_format = "json"``: every line the server logs is one JSON object with its time,
    level, logger and message (a call's line among them)."""
    data, env = tmp_path / "server", _env(tmp_path, log_format="json")
    process, port = start_server_process(data, env=env)
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            PlayerClient(channel)  # asks for the server's info
    finally:
        _stop(process)
    lines = (data / "server.log").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert records
    assert all(set(r) == {"time", "level", "logger", "message"} for r in records)
    assert {"logger": "canasta.server", "level": "INFO"}.items() <= next(
        r for r in records if "GetServerInfo OK" in r["message"]
    ).items()
    assert all(r["time"].endswith("+00:00") for r in records)


@pytest.mark.parametrize("engine", ["sqlite"])
def test_restore_puts_an_old_backup_over_a_damaged_database_and_migrates_it(
    tmp_path: Path, make_app: AppFactory
) -> None:
    """The database in place is moved aside unread (a damaged one is no obstacle); a backup
    from an older server is brought to this one's schema and the restore is logged; a target
    with no database needs --new; backups are for their owner's eyes only."""
    runner = CliRunner()
    old = tmp_path / "old.db"
    db = Database(f"sqlite:///{old}")
    migrate(db, target="0006")  # what a server before admin logs wrote
    db.dispose()
    base = ["--data-dir", str(tmp_path / "server")]
    make_app("server", start=False).stop(grace=None)
    database = tmp_path / "server" / "canasta.db"
    database.write_bytes(b"not a database any more" * 100)

    done = runner.invoke(cli, [*base, "restore", str(old)])
    assert done.exit_code == 0, done.output
    kept = list(database.parent.glob("canasta.db.before-restore-*"))
    assert [k.read_bytes()[:23] for k in kept] == [b"not a database any more"]
    out = runner.invoke(cli, [*base, "log"]).output
    assert f"restore {old}" in out
    copy = tmp_path / "copy.db"
    assert runner.invoke(cli, [*base, "backup", str(copy)]).exit_code == 0
    assert copy.stat().st_mode & 0o777 == 0o600

    elsewhere = ["--data-dir", str(tmp_path / "typo")]
    (tmp_path / "typo").mkdir()
    done = runner.invoke(cli, [*elsewhere, "restore", str(copy)])
    assert done.exit_code == 1
    assert "there is no database at" in done.output
    assert "--new" in done.output
    assert not (tmp_path / "typo" / "canasta.db").exists()
    done = runner.invoke(cli, [*elsewhere, "restore", "--new", str(copy)])
    assert done.exit_code == 0, done.output
    assert "restored" in done.output


def _without_keys(text: str) -> str:
    """``text`` less its public keys' text (``ed25519:`` and base64), which may hold any short
    string by chance ("bob" among them): what is left is what a name could leak into."""
    return " ".join(word for word in text.split() if not word.startswith("ed25519:"))
