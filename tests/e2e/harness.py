"""Real processes for end-to-end tests: a ``canasta-server`` and players running ``canasta``.

The server is the installed ``canasta-server`` executable on a free port over a fresh SQLite
file; each player is a separate ``CANASTA_HOME`` and runs the installed ``canasta`` executable
as a subprocess, exactly as a person at a shell would.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from tests.testkit import start_server_process

BIN = Path(sys.executable).parent
CANASTA = str(BIN / "canasta")
CANASTA_SERVER = str(BIN / "canasta-server")
RUN_TIMEOUT = 60.0


def clean_env() -> dict[str, str]:
    """The test's environment without anything that would steer the client or server."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CANASTA_", "TYPER_")) and k != "NO_COLOR"
    }
    env["NO_COLOR"] = "1"
    return env


def interruptible() -> None:
    """For ``Popen(preexec_fn=...)`` of a process the test stops with SIGINT (Ctrl-C), as a
    person's shell starts it: with SIGINT's default action. A test run started in the
    background by a shell without job control (``make test &``, some CI runners) inherits
    SIGINT ignored, and a Python that starts with it ignored never raises KeyboardInterrupt."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@dataclass
class Server:
    process: subprocess.Popen[str]
    data_dir: Path
    port: int

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        if self.process.stdout is not None:
            self.process.stdout.close()

    def oracle(self) -> Any:
        """Something ``tests.testkit.authoritative_state`` can read this server's matches from.

        It opens the server's own SQLite file (WAL: a second reader is safe) with the server's
        code, so the test's bots can see what a bot needs: the true state, of which they read
        only their own hand and the table (``shared.rules.bot``).
        """
        from server.config import ServerConfig
        from server.keys import load_keys
        from server.service.context import ServiceContext
        from server.service.live.streams import Notifier
        from server.store.db import Database

        config = ServerConfig(data_dir=self.data_dir)
        ctx = ServiceContext(
            db=Database(config.db_url),
            keys=load_keys(self.data_dir),
            config=config,
            notifier=Notifier(),
        )
        return SimpleNamespace(ctx=ctx)


def start_server(data_dir: Path, port: int = 0, settings: dict[str, str] | None = None) -> Server:
    """Run the ``canasta-server`` executable and wait until it listens; ``settings`` are
    server settings by name (``{"smtp_host": "127.0.0.1"}``), passed as its environment."""
    env = {**clean_env(), "CANASTA_SERVER_LOG_LEVEL": "WARNING"}
    for name, value in (settings or {}).items():
        env["CANASTA_SERVER_" + name.upper()] = value
    process, bound = start_server_process(
        data_dir, env=env, command=[CANASTA_SERVER], listen=f"127.0.0.1:{port}"
    )
    return Server(process, data_dir, bound)


@dataclass
class Player:
    """One person at a shell: a ``CANASTA_HOME`` of their own."""

    home: Path
    extra_env: dict[str, str] | None = None

    def env(self) -> dict[str, str]:
        return {**clean_env(), "CANASTA_HOME": str(self.home), **(self.extra_env or {})}

    def run(self, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        """Run ``canasta ARGS``; with ``ok`` a non-zero exit fails the test with its stderr."""
        done = subprocess.run(
            [CANASTA, *args],
            capture_output=True, text=True, env=self.env(), timeout=RUN_TIMEOUT, check=False,
        )  # fmt: skip
        if ok and done.returncode != 0:
            raise AssertionError(
                f"canasta {' '.join(args)} exited {done.returncode}: {done.stderr.strip()}"
            )
        return done

    def json(self, *args: str) -> Any:
        return json.loads(self.run(*args, "--json").stdout)


def one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    """The single stderr line of a failed command (and nothing on stdout, no traceback)."""
    lines = done.stderr.strip().splitlines()
    assert done.returncode != 0, done.stdout
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert lines[0].startswith("canasta: "), lines[0]
    return lines[0]


class Lines:
    """The lines a running process prints, read by a thread: ``select`` on the pipe would miss
    lines already read ahead into the text wrapper's buffer."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        import queue
        import threading

        assert process.stdout is not None
        self.queue: queue.Queue[str | None] = queue.Queue()
        stream = process.stdout

        def pump() -> None:
            for line in stream:
                self.queue.put(line.rstrip("\n"))
            self.queue.put(None)

        threading.Thread(target=pump, daemon=True).start()

    def next(self, seconds: float) -> str | None:
        """The next line, or ``None`` at the end of the output or after ``seconds``."""
        import queue

        try:
            return self.queue.get(timeout=seconds)
        except queue.Empty:
            return None
