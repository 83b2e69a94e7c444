"""``serve --workers N``: N server processes sharing one port, watched by a supervisor.

Python runs one thread at a time per process, so a single server process uses about one core
however many threads it has. With ``workers`` above 1 the ``serve`` command becomes this
supervisor: it migrates the database and creates the keys once (so the workers never race to
do either), reserves the port, starts the workers, and prints the usual banner once every
worker listens. Each worker is a whole server (``serve --as-worker``) bound to the same port
with ``SO_REUSEPORT``: the kernel spreads incoming connections over them. They share
nothing but the database, which is what makes that safe: every move is a conditional write
(a worker whose copy of a match is behind re-reads it and checks the move again), SQLite
writers take turns through ``server.writer_lock``, and Watch streams hear of other workers'
moves through the database.

The supervisor stops the workers on SIGTERM or SIGINT. If a worker dies, it stops the others
and exits with status 1, so that the service manager (systemd, a container runtime) restarts
the whole server. A worker whose supervisor disappears (its stdin closes) stops itself.
"""

from __future__ import annotations

import logging
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence

log = logging.getLogger("canasta.server")

BANNER_MARK = "listening on "
_STOP_SECONDS = 15.0


def split_listen(listen: str) -> tuple[str, int]:
    """``"host:port"`` (``"[::]:7437"`` for IPv6) as ``(host without brackets, port)``."""
    host, _, port = listen.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"listen must be host:port, not {listen!r}")
    return host.strip("[]"), int(port)


def reserve_port(listen: str) -> tuple[str, socket.socket | None]:
    """The address the workers share. For port 0, bind (without listening) a SO_REUSEPORT
    socket to pick a free port and keep it until the workers are gone, so no other program
    takes that port meanwhile; a bound socket that does not listen receives no connections.
    """
    host, port = split_listen(listen)
    if port:
        return listen, None
    family, kind, proto, _, address = socket.getaddrinfo(
        host, 0, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    reservation = socket.socket(family, kind, proto)
    reservation.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    reservation.bind(address)
    chosen = reservation.getsockname()[1]
    return f"{listen.rpartition(':')[0]}:{chosen}", reservation


class Supervisor:
    """Starts ``count`` copies of ``command + ["--listen", address]``, waits, stops them."""

    def __init__(self, command: Sequence[str], count: int, address: str) -> None:
        self.command = [*command, "--listen", address]
        self.count = count
        self.address = address
        self.workers: list[subprocess.Popen[str]] = []
        self.stopping = threading.Event()

    def start(self) -> bool:
        """Start every worker and wait for each one's banner; False if one did not start."""
        for _ in range(self.count):
            self.workers.append(
                subprocess.Popen(
                    self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
                )
            )
        for number, worker in enumerate(self.workers, 1):
            assert worker.stdout is not None
            if BANNER_MARK not in worker.stdout.readline():
                log.error("worker %d (pid %d) did not start: see its messages above", number,
                          worker.pid)  # fmt: skip
                return False
        return True

    def wait(self) -> int:
        """Until asked to stop (0) or a worker dies (1)."""
        while not self.stopping.wait(0.5):
            for number, worker in enumerate(self.workers, 1):
                code = worker.poll()
                if code is not None and not self.stopping.is_set():
                    log.error("worker %d (pid %d) exited with status %d: stopping the server",
                              number, worker.pid, code)  # fmt: skip
                    return 1
        return 0

    def stop(self) -> None:
        """SIGTERM to every worker (each finishes its calls), then wait; kill stragglers."""
        for worker in self.workers:
            if worker.poll() is None:
                worker.send_signal(signal.SIGTERM)
        for worker in self.workers:
            try:
                worker.wait(_STOP_SECONDS)
            except subprocess.TimeoutExpired:
                log.error("worker pid %d did not stop in %.0f s: killed", worker.pid,
                          _STOP_SECONDS)  # fmt: skip
                worker.kill()
                worker.wait()
            for stream in (worker.stdin, worker.stdout):
                if stream is not None:
                    stream.close()


def supervise(command: Sequence[str], count: int, listen: str, banner: Callable[[str], str]) -> int:
    """Run ``count`` workers on ``listen`` until SIGTERM/SIGINT; the exit status.

    ``banner(address)`` is the line printed once all workers listen (with the real port).
    """
    if sys.platform != "linux":
        log.error("several workers need Linux (SO_REUSEPORT spreads connections there only)")
        return 2
    address, reservation = reserve_port(listen)
    supervisor = Supervisor(command, count, address)
    previous = {
        sig: signal.signal(sig, lambda *_: supervisor.stopping.set())
        for sig in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        if not supervisor.start():
            return 1
        print(banner(address), flush=True)
        return supervisor.wait()
    finally:
        supervisor.stop()
        if reservation is not None:
            reservation.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def stop_when_stdin_closes(stop: threading.Event) -> None:
    """In a worker: the supervisor holds our stdin; when it closes, the supervisor is gone."""

    def watch() -> None:
        while sys.stdin.readline():
            pass
        stop.set()

    threading.Thread(target=watch, name="supervisor-watch", daemon=True).start()
