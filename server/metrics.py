"""Prometheus metrics of one server process, served on a port of their own when the operator
sets ``metrics_listen`` (off by default).

Each figure is counted where it happens, at the cost of an addition:
- calls and their latency, per method and status: the edge's request-log interceptor;
- moves stored, by players and by bots: the play service, after the commit;
- open Watch streams: the servicer;
- notification deliveries, per channel and outcome: the outbox;
- database commit time: the store.

What the database knows (matches by status, notifications waiting or failed) is read when the
endpoint is scraped, by one grouped query each, so it is right for every process on the
database and costs nothing between scrapes. Each server has a registry of its own: several
servers may run in one process (the tests do). The endpoint shows how busy the server is,
never who plays what: no label carries a player, a match or a card.

The endpoint is a small threaded HTTP server (a thread per connection, as a scraper needs
one or two): it takes at most ``MAX_CONNECTIONS`` connections at once and ``PER_PEER`` from
one address (``server.edge.limits.ConnectionCaps``), and closes one that sends nothing for
``handshake_seconds``, so idle connections cannot pile up threads.
"""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Callable, Iterator
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, make_wsgi_app
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from server.edge.limits import ConnectionCaps, address_key

log = logging.getLogger("canasta.server")
MAX_CONNECTIONS = 8
"""Connections the metrics endpoint holds at once (a scraper uses one at a time)."""
PER_PEER = 4
"""Of those, from one address."""

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

StoredCounts = Callable[[], dict[str, dict[str, int]]]
"""Reads ``{"matches": {status: n}, "notifications": {state: n}}`` from the database."""


class Metrics:
    """The instruments of one server (always counted; served only when asked)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.rpc_calls = Counter(
            "canasta_rpc_calls", "Calls finished, by method and status code.",
            ["method", "code"], registry=r,
        )  # fmt: skip
        self.rpc_seconds = Histogram(
            "canasta_rpc_seconds", "Time from a call's arrival to its end (a Watch stream: "
            "its whole life), by method and status code.", ["method", "code"],
            buckets=LATENCY_BUCKETS, registry=r,
        )  # fmt: skip
        self.moves = Counter(
            "canasta_moves_stored", "Moves durably stored by this process, by who signed them "
            "(player or bot).", ["by"], registry=r,
        )  # fmt: skip
        self.watch_streams = Gauge(
            "canasta_watch_streams_open", "Watch streams open on this process.", registry=r
        )
        self.deliveries = Counter(
            "canasta_notification_deliveries", "Notification deliveries attempted by this "
            "process, by channel (email, webhook) and outcome (sent, failed).",
            ["channel", "outcome"], registry=r,
        )  # fmt: skip
        self.commit_seconds = Histogram(
            "canasta_db_commit_seconds", "Time to commit a write transaction (durably).",
            buckets=LATENCY_BUCKETS, registry=r,
        )  # fmt: skip
        self._server: _MetricsServer | None = None

    def read_from_database(self, counts: StoredCounts) -> None:
        """Report what ``counts`` reads at each scrape (matches, notifications waiting)."""
        self.registry.register(_StoredCollector(counts))

    def serve(self, listen: str, timeout: float = 10.0) -> int:
        """Serve ``/metrics`` on ``listen`` (``host:port``) in a thread, closing a connection
        that sends nothing for ``timeout`` seconds; the port bound."""
        host, _, port = listen.rpartition(":")
        server = _MetricsServer(host.strip("[]"), int(port), timeout)
        server.set_app(make_wsgi_app(self.registry))
        threading.Thread(target=server.serve_forever, name="metrics", daemon=True).start()
        self._server = server
        return int(server.server_address[1])

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


class _StoredCollector(Collector):
    def __init__(self, counts: StoredCounts) -> None:
        self.counts = counts

    def describe(self) -> list[Metric]:
        return []  # nothing to check at registration: the database is read at scrape time

    def collect(self) -> Iterator[Metric]:
        found = self.counts()
        matches = GaugeMetricFamily(
            "canasta_matches", "Matches on the database, by status.", labels=["status"]
        )
        for status, n in sorted(found["matches"].items()):
            matches.add_metric([status], n)
        yield matches
        notes = GaugeMetricFamily(
            "canasta_notifications", "Notifications waiting to be delivered (pending), being "
            "delivered (sending), or given up (failed), on the database.", labels=["state"],
        )  # fmt: skip
        for state, n in sorted(found["notifications"].items()):
            notes.add_metric([state], n)
        yield notes


class _QuietHandler(WSGIRequestHandler):
    """One request per connection, no log line per request, and a time limit on each read."""

    server: _MetricsServer

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(self.server.timeout_seconds)

    def log_message(self, format: str, *args: Any) -> None:
        """Log nothing per request."""


class _MetricsServer(ThreadingMixIn, WSGIServer):
    """``wsgiref``'s server with a thread per connection, and the caps on connections."""

    daemon_threads = True

    def __init__(self, host: str, port: int, timeout: float) -> None:
        family, _, _, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        self.address_family = family
        self.timeout_seconds = timeout
        self.caps = ConnectionCaps("metrics", MAX_CONNECTIONS, PER_PEER)
        self._admitted: dict[Any, str] = {}
        """Each connection let in -> its address's key, to release it when it ends."""
        super().__init__((str(address[0]), int(address[1])), _QuietHandler)

    def verify_request(self, request: Any, client_address: Any) -> bool:
        """Let a connection in only under the caps (a refused one is closed at once)."""
        key = address_key(client_address[0])
        if not self.caps.admit(key):
            return False
        self._admitted[request] = key
        return True

    def shutdown_request(self, request: Any) -> None:
        key = self._admitted.pop(request, None)
        if key is not None:
            self.caps.release(key)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A peer that timed out or left: nothing to report (the base prints a traceback)."""
        log.debug("metrics: a connection from %s ended early", client_address[0])
