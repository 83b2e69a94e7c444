"""The gate in front of the gRPC port: at most so many connections per peer address.

gRPC's core caps connections in total (``grpc.max_allowed_incoming_connections``) and closes
silent and idle ones (``grpc.server_handshake_timeout_ms``, ``grpc.max_connection_idle_ms``),
but it has no cap per peer address: one peer could take every place the total cap leaves
and keep taking them as they free up. So when ``max_connections_per_peer`` is set, the
server's gRPC port is this gate. It accepts a connection, counts it against its peer's
address (``server.edge.limits.ConnectionCaps``; past a cap it closes the connection at once),
and otherwise opens a connection of its own to the gRPC server on a loopback port and copies
bytes both ways until either side closes, when it closes the other.

The gate reads no byte (TLS and HTTP/2 stay gRPC's) and decides nothing after the accept;
the idle and handshake timeouts are gRPC's, and when gRPC closes its side the gate closes
the peer's. Since gRPC sees every connection coming from the gate, the gate remembers whose
connection each of its own loopback connections carries (``origin``), so that the abuse
limits and the log still name the real peer. The cost: every call's bytes are copied once
more, on the server's event loop (``bench/README.md`` has the figures).
"""

from __future__ import annotations

import asyncio
import socket
from contextlib import suppress
from functools import partial

from server.edge.limits import ConnectionCaps, peer_host


def grpc_peer(address: tuple[str, int] | tuple[str, int, int, int]) -> str:
    """A socket's peer address written as gRPC writes it (``ipv4:1.2.3.4:5``, ``ipv6:[::1]:5``)."""
    host, port = address[0], address[1]
    return f"ipv6:[{host}]:{port}" if ":" in host else f"ipv4:{host}:{port}"


class ConnectionGate:
    """Caps connections per peer address in front of the gRPC server at ``target_port``."""

    def __init__(self, caps: ConnectionCaps) -> None:
        self.caps = caps
        self.target_port = 0
        """The gRPC server's loopback port (set by ``listen``)."""
        self.origin: dict[str, str] = {}
        """The gRPC peer of each of the gate's own connections -> the real peer it carries."""
        self._listening: socket.socket | None = None
        self._accepting: asyncio.Task[None] | None = None
        self._carrying: set[asyncio.Task[None]] = set()

    def peer_of(self, grpc_peer_seen: str) -> str:
        """The real peer behind a connection gRPC sees (itself if it did not come through)."""
        return self.origin.get(grpc_peer_seen, grpc_peer_seen)

    async def listen(self, listen: str, target_port: int) -> int:
        """Listen on ``listen`` (``host:port``, on the running loop) for the gRPC server on
        loopback port ``target_port``; the port bound."""
        self.target_port = target_port
        sock = _listening_socket(listen)
        sock.setblocking(False)
        self._listening = sock
        self._accepting = asyncio.create_task(self._accept(sock))
        return int(sock.getsockname()[1])

    async def stop_accepting(self) -> None:
        """Close the listening socket (connections carried go on)."""
        if self._accepting is not None:
            self._accepting.cancel()
            with suppress(asyncio.CancelledError):
                await self._accepting  # its wait on the socket is over: safe to close it
            self._accepting = None
        if self._listening is not None:
            self._listening.close()
            self._listening = None

    async def close(self) -> None:
        """Stop accepting and end every connection still carried (call it after the gRPC
        server stopped: until then its open calls' bytes still go through)."""
        await self.stop_accepting()
        for task in self._carrying:
            task.cancel()
        await asyncio.gather(*self._carrying, return_exceptions=True)

    async def _accept(self, sock: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                connection, address = await loop.sock_accept(sock)
            except OSError:  # out of file descriptors, or the peer left already
                await asyncio.sleep(0.05)
                continue
            peer = grpc_peer(address)
            key = peer_host(peer)
            if not self.caps.admit(key):
                connection.close()
                continue
            task = asyncio.create_task(self._carry(connection, peer, key))
            self._carrying.add(task)
            task.add_done_callback(partial(self._carried, connection))

    def _carried(self, connection: socket.socket, task: asyncio.Task[None]) -> None:
        self._carrying.discard(task)
        if task.cancelled():  # maybe before it began: then nothing else closes the socket
            connection.close()

    async def _carry(self, connection: socket.socket, peer: str, key: str) -> None:
        """Join ``connection`` to a new one to the gRPC server until either ends."""
        loop = asyncio.get_running_loop()
        ended = loop.create_future()
        inner: _Side | None = None
        outer: _Side | None = None
        seen = ""
        try:
            _, inner = await loop.create_connection(
                lambda: _Side(ended), "127.0.0.1", self.target_port
            )
            seen = grpc_peer(inner.transport.get_extra_info("sockname"))
            self.origin[seen] = peer  # before any byte goes through: no call can miss it
            _, outer = await loop.connect_accepted_socket(lambda: _Side(ended), connection)
            outer.join(inner)
            await ended
        except OSError:
            pass  # the gRPC server is stopping, or the peer reset: all is closed below
        finally:
            self.origin.pop(seen, None)
            self.caps.release(key)
            for side in (inner, outer):
                if side is not None:
                    side.transport.close()
            if outer is None:
                connection.close()


class _Side(asyncio.Protocol):
    """One of a carried connection's two sockets: what it reads is written to the other;
    when it ends, the other is closed (and ``ended`` set). While one side's write buffer is
    full the other side is not read (asyncio's flow control: ``pause_writing``)."""

    def __init__(self, ended: asyncio.Future[None]) -> None:
        self.ended = ended
        self.transport: asyncio.Transport
        self.other: _Side | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        transport.pause_reading()  # until ``join``: nowhere to write yet

    def join(self, other: _Side) -> None:
        self.other, other.other = other, self
        self.transport.resume_reading()
        other.transport.resume_reading()

    def data_received(self, data: bytes) -> None:
        assert self.other is not None
        self.other.transport.write(data)

    def pause_writing(self) -> None:
        if self.other is not None:
            self.other.transport.pause_reading()

    def resume_writing(self) -> None:
        if self.other is not None:
            self.other.transport.resume_reading()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.other is not None:
            self.other.transport.close()
        if not self.ended.done():
            self.ended.set_result(None)


def _listening_socket(listen: str) -> socket.socket:
    """A socket listening on ``listen`` as gRPC would bind it: ``[::]`` (or an empty host) on
    IPv6 and IPv4 at once; a name on the first address it resolves to (gRPC binds each).
    The backlog is the system's most, as gRPC's: a burst of connections waits, not fails."""
    host, _, port_text = listen.rpartition(":")
    host = host.strip("[]")
    port = int(port_text)
    if host in ("", "::"):
        return socket.create_server(
            ("::", port), family=socket.AF_INET6, backlog=socket.SOMAXCONN, dualstack_ipv6=True
        )
    family, _, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    return socket.create_server(address[:2], family=family, backlog=socket.SOMAXCONN)
