"""The server's files are its owner's alone whatever the umask (issue 25, point 9): run by hand
under umask 022, the real ``canasta-server`` makes its data directory 0700 and its database,
WAL, shared-memory file, keys and backups 0600; a database left readable by an older version
is made private when it is opened."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import grpc

from server.store.db import Database
from tests.testkit import PlayerClient, banner_port

SERVER = (sys.executable, "-m", "server")


def _env(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "none.toml").write_text("")
    return {**os.environ, "CANASTA_SERVER_CONFIG": str(tmp_path / "none.toml")}


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _serve_and_register(data: Path, env: dict[str, str], log: Path) -> None:
    """Start the server under umask 022, register a player (a write: the WAL is in use), look
    at every file while it runs, and stop it."""
    with log.open("a") as err:
        process = subprocess.Popen(
            [*SERVER, "--data-dir", str(data), "serve", "--listen", "127.0.0.1:0"],
            stdout=subprocess.PIPE, stderr=err, text=True, env=env, umask=0o022,
        )  # fmt: skip
    try:
        assert process.stdout is not None
        port = banner_port(process.stdout.readline(), "listening on ")
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            PlayerClient(channel).join_server("ann")
        names = {p.name for p in data.iterdir()}
        assert {"canasta.db", "canasta.db-wal", "canasta.db-shm", "deal_key.bin"} <= names
        assert _mode(data) == 0o700
        for path in data.iterdir():
            assert _mode(path) & 0o077 == 0, (path.name, oct(_mode(path)))
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(30) == 0


def test_the_data_directory_and_database_files_are_private_under_umask_022(
    tmp_path: Path,
) -> None:
    data = tmp_path / "state" / "canasta"  # not there yet: the server makes it
    env = _env(tmp_path)
    _serve_and_register(data, env, tmp_path / "server.log")
    copy = tmp_path / "copy.db"
    subprocess.run(
        [*SERVER, "--data-dir", str(data), "backup", str(copy)],
        check=True, env=env, umask=0o022, capture_output=True,
    )  # fmt: skip
    assert _mode(copy) == 0o600


def test_a_database_left_readable_is_made_private_when_opened(tmp_path: Path) -> None:
    path = tmp_path / "canasta.db"
    Database(f"sqlite:///{path}").dispose()
    for name in ("canasta.db", "canasta.db-wal", "canasta.db-journal"):
        (tmp_path / name).touch()
        os.chmod(tmp_path / name, 0o644)  # as an older version, under umask 022, left them
    Database(f"sqlite:///{path}").dispose()
    for name in ("canasta.db", "canasta.db-wal", "canasta.db-journal"):
        assert _mode(tmp_path / name) == 0o600, name
