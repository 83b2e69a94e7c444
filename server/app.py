"""Assembling a server: open the database (migrated), keys, service and bots, then gRPC.

``create_server(config, service)`` builds the ``grpc.Server`` with health checking, reflection,
message size limits, TLS when configured, and the request-log interceptor, and binds it,
returning ``(server, port)`` (``port`` is the real one when the address asks for port 0).
``open_app(config)`` does everything and returns an ``App`` that starts and stops as a unit.
"""

from __future__ import annotations

import logging
import time
from concurrent import futures
from dataclasses import dataclass
from functools import partial
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from server.bots import BotRunner, Chooser
from server.committer import GroupCommitter
from server.config import ServerConfig
from server.context import ServiceContext
from server.db import Database
from server.feed import ChangeFeed
from server.keys import load_keys
from server.migrations import migrate
from server.service import CanastaService
from server.servicer import CanastaServicer
from shared.pb import canasta_pb2 as pb
from shared.pb import canasta_pb2_grpc as pb_grpc

log = logging.getLogger("canasta.server")
SERVICE_NAME = pb.DESCRIPTOR.services_by_name["Canasta"].full_name


def package_version() -> str:
    try:
        return version("canasta")
    except PackageNotFoundError:  # running from a checkout that was never installed
        return "0+unknown"


class RequestLogInterceptor(grpc.ServerInterceptor):  # type: ignore[misc]
    """One info line per request: method, status code, milliseconds, and for a refused or
    failed call the peer's address.

    The wrapped handler of each method is built once and reused. The peer is left out of
    successful calls on purpose: asking gRPC for it drops Python's interpreter lock, and
    under load every such drop sends the request thread to the back of the queue for it
    (``bench/bench_server.py``, 64 clients: about 0.2 ms of server CPU per move, one move in
    eight). A refused call (a bad signature, a wrong token) is where an operator needs it.
    """

    def __init__(self) -> None:
        self._handlers: dict[str, Any] = {}

    def intercept_service(self, continuation: Any, details: Any) -> Any:
        method = details.method
        wrapped = self._handlers.get(method)
        if wrapped is None:
            handler = continuation(details)
            if handler is None:
                return None
            wrapped = self._handlers[method] = _logged(method, handler)
        return wrapped


def _logged(method: str, handler: Any) -> Any:
    def done(context: Any, started: float) -> None:
        if log.isEnabledFor(logging.INFO):
            code = context.code()
            name = code.name if isinstance(code, grpc.StatusCode) else "OK"
            elapsed = (time.perf_counter() - started) * 1000
            if name == "OK":
                log.info("%s OK %.1fms", method, elapsed)
            else:
                log.info("%s %s %.1fms %s", method, name, elapsed, context.peer())

    def unary(behavior: Any) -> Any:
        def call(request: Any, context: Any) -> Any:
            started = time.perf_counter()
            try:
                return behavior(request, context)
            finally:
                done(context, started)

        return call

    def streaming(behavior: Any) -> Any:
        def call(request: Any, context: Any) -> Any:
            started = time.perf_counter()
            try:
                yield from behavior(request, context)
            finally:
                done(context, started)

        return call

    codec = {
        "request_deserializer": handler.request_deserializer,
        "response_serializer": handler.response_serializer,
    }
    if handler.unary_unary:
        return grpc.unary_unary_rpc_method_handler(unary(handler.unary_unary), **codec)
    if handler.unary_stream:
        return grpc.unary_stream_rpc_method_handler(streaming(handler.unary_stream), **codec)
    if handler.stream_unary:
        return grpc.stream_unary_rpc_method_handler(unary(handler.stream_unary), **codec)
    return grpc.stream_stream_rpc_method_handler(streaming(handler.stream_stream), **codec)


def create_server(
    config: ServerConfig, service: CanastaService
) -> tuple[grpc.Server, int, CanastaServicer]:
    """Build and bind (not start) the gRPC server for ``service``."""
    limit = config.max_message_bytes
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=config.max_workers, thread_name_prefix="rpc"),
        interceptors=[RequestLogInterceptor()],
        options=[
            ("grpc.max_receive_message_length", limit),
            ("grpc.max_send_message_length", limit),
            # Several `serve --workers` processes share the port; one alone must own it.
            ("grpc.so_reuseport", 1 if config.workers > 1 else 0),
        ],
    )
    servicer = CanastaServicer(service)
    pb_grpc.add_CanastaServicer_to_server(servicer, server)
    health_servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    for name in ("", SERVICE_NAME):
        health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    reflection.enable_server_reflection(
        (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server
    )
    if config.tls_cert is not None and config.tls_key is not None:
        try:
            pair = (config.tls_key.read_bytes(), config.tls_cert.read_bytes())
        except OSError as exc:
            raise OSError(f"cannot read the TLS files: {exc}") from None
        credentials = grpc.ssl_server_credentials([pair])
        bind = partial(server.add_secure_port, config.listen, credentials)
    else:
        bind = partial(server.add_insecure_port, config.listen)
    try:
        port = bind()
    except RuntimeError:  # newer grpcio raises where older ones returned 0
        port = 0
    if not port:
        raise OSError(
            f"cannot listen on {config.listen}: the port is in use or the address is not "
            "one of this machine's"
        )
    return server, port, servicer


@dataclass
class App:
    """A running server and everything it owns."""

    config: ServerConfig
    db: Database
    service: CanastaService
    bots: BotRunner
    server: grpc.Server
    servicer: CanastaServicer
    port: int
    feed: ChangeFeed
    """Brings changes stored by other processes on the same database to this one's watchers."""

    def start(self) -> None:
        self.server.start()
        self.bots.start()
        self.feed.start()

    def stop(self, grace: float | None = 2.0) -> None:
        self.servicer.stopping.set()
        self.server.stop(grace).wait()
        self.feed.stop()
        self.bots.stop()
        if self.service.ctx.committer is not None:
            self.service.ctx.committer.stop()
        self.db.dispose()


def open_service(
    config: ServerConfig, chooser: Chooser | None = None
) -> tuple[Database, CanastaService, BotRunner]:
    db = Database(config.db_url)
    migrate(db)
    ctx = ServiceContext(
        db=db, keys=load_keys(config.data_dir), config=config, committer=GroupCommitter(db)
    )
    service = CanastaService(ctx, package_version())
    return db, service, BotRunner(ctx, service.play, chooser)


def open_app(config: ServerConfig, chooser: Chooser | None = None) -> App:
    """Open everything and bind the port; call ``start()`` to serve."""
    db, service, bots = open_service(config, chooser)
    server, port, servicer = create_server(config, service)
    return App(config, db, service, bots, server, servicer, port, ChangeFeed(service.ctx))
