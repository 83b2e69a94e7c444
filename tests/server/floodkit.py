"""Connection floods for the tests of the listeners' caps: many idle TCP connections from one
loopback address (``127.0.0.2``: all of 127/8 is this machine, so the attacker has an address
of its own while the well-behaved client keeps ``127.0.0.1``)."""

from __future__ import annotations

import selectors
import socket
import time
from pathlib import Path

ATTACKER = "127.0.0.2"


def idle_connections(port: int, count: int, source: str = ATTACKER) -> list[socket.socket]:
    """``count`` TCP connections to ``127.0.0.1:port`` from ``source`` that send nothing
    (the kernel completes a connection before the server accepts it, so each connects)."""
    sockets = []
    for _ in range(count):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind((source, 0))
        sock.connect(("127.0.0.1", port))
        sockets.append(sock)
    return sockets


def closed_by_server(sockets: list[socket.socket], at_least: int, wait: float = 10.0) -> int:
    """How many of ``sockets`` the server closed (end of file or reset), waiting up to ``wait``
    seconds for ``at_least`` of them; bytes the server sent meanwhile are read and dropped."""
    closed = 0
    deadline = time.monotonic() + wait
    with selectors.DefaultSelector() as watching:  # epoll: no limit on the sockets' numbers
        for sock in sockets:
            watching.register(sock, selectors.EVENT_READ, sock)
        while closed < at_least and time.monotonic() < deadline:
            for key, _ in watching.select(0.1):
                sock = key.data
                try:
                    ended = not sock.recv(65536)
                except OSError:
                    ended = True
                if ended:
                    watching.unregister(sock)
                    closed += 1
    return closed


def close_all(sockets: list[socket.socket]) -> None:
    for sock in sockets:
        sock.close()


def refusal_lines(log: Path, listener: str) -> list[str]:
    """The server log's lines about refused connections on ``listener`` ("gRPC", "metrics")."""
    return [
        line
        for line in log.read_text().splitlines()
        if f"{listener}: refused" in line and "connection(s)" in line
    ]
