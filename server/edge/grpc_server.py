"""The gRPC server: ``grpc.aio`` on an event loop in a thread of its own.

``create_server(config, service)`` builds it with health checking, reflection, message size
limits, TLS when configured, the request-log interceptor (which also refuses requests that
do not decode) and the connection limits (``connection_options``; the cap per peer address
is the gate in front, ``server.edge.gate``), and binds it, returning ``(server, port,
servicer)`` (``port`` is the real one when the address asks for port 0).
"""

from __future__ import annotations

import asyncio
import logging
import resource
import threading
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any, TypeVar

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from server.config import ServerConfig
from server.edge.certificates import certificate_problems
from server.edge.gate import ConnectionGate
from server.edge.limits import ConnectionCaps
from server.edge.servicer import CanastaServicer
from server.metrics import MAX_CONNECTIONS as METRICS_CONNECTIONS
from server.metrics import Metrics
from server.service.wings import CanastaService
from shared import wire
from shared.pb import canasta_pb2 as pb
from shared.pb import canasta_pb2_grpc as pb_grpc

log = logging.getLogger("canasta.server")
T = TypeVar("T")
SERVICE_NAME = pb.DESCRIPTOR.services_by_name["Canasta"].full_name


class RequestLogInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """One info line per request: method, status code, milliseconds, and for a refused or
    failed call the peer's address; the same call counted in the server's metrics. A request
    whose bytes do not decode as the method's message is refused here with
    ``INVALID_ARGUMENT`` (gRPC itself would answer ``UNKNOWN`` and log a traceback per
    request: a free way to flood the log).

    The wrapped handler of each method is built once and reused. The peer is left out of
    successful calls on purpose: asking gRPC for it costs a call into its C core per request,
    and a refused call (a bad signature, a wrong token) is where an operator needs it.
    """

    def __init__(self, metrics: Metrics, peer_of: Callable[[str], str] = str) -> None:
        self.metrics = metrics
        self.peer_of = peer_of
        """The real peer behind a connection gRPC sees (``server.edge.gate``)."""
        self._handlers: dict[str, Any] = {}

    async def intercept_service(self, continuation: Any, details: Any) -> Any:
        method = details.method
        wrapped = self._handlers.get(method)
        if wrapped is None:
            handler = await continuation(details)
            if handler is None:
                return None
            wrapped = self._handlers[method] = _logged(method, handler, self)
        return wrapped


class _Undecodable:
    """Stands for a request whose bytes did not decode."""


_UNDECODABLE = _Undecodable()


def _tolerant(deserializer: Any) -> Any:
    """``deserializer``, returning ``_UNDECODABLE`` instead of raising for bad bytes."""
    if deserializer is None:
        return None

    def deserialize(data: bytes) -> Any:
        try:
            return deserializer(data)
        except Exception:  # DecodeError, or anything else bad bytes make the parser raise
            return _UNDECODABLE

    return deserialize


async def _refuse_undecodable(method: str, context: Any) -> None:
    await context.abort(
        grpc.StatusCode.INVALID_ARGUMENT,
        f"the request is not a valid message for {method.rsplit('/', 1)[-1]}",
    )


def _logged(method: str, handler: Any, logger: RequestLogInterceptor) -> Any:
    short = method.rsplit("/", 1)[-1]  # only methods the server has: a bounded set of labels
    metrics = logger.metrics

    def done(context: Any, started: float) -> None:
        elapsed = time.perf_counter() - started
        code = context.code()
        if isinstance(code, grpc.StatusCode):
            name = code.name
        else:
            name = "CANCELLED" if context.cancelled() else "OK"
        metrics.rpc_calls.labels(short, name).inc()
        metrics.rpc_seconds.labels(short, name).observe(elapsed)
        if log.isEnabledFor(logging.INFO):
            if name == "OK":
                log.info("%s OK %.1fms", method, elapsed * 1000)
            else:
                peer = logger.peer_of(context.peer())
                log.info("%s %s %.1fms %s", method, name, elapsed * 1000, peer)

    def unary(behavior: Any) -> Any:
        async def call(request: Any, context: Any) -> Any:
            started = time.perf_counter()
            try:
                if request is _UNDECODABLE:
                    await _refuse_undecodable(method, context)
                return await behavior(request, context)
            finally:
                done(context, started)

        return call

    def streaming(behavior: Any) -> Any:
        async def call(request: Any, context: Any) -> Any:
            started = time.perf_counter()
            try:
                if request is _UNDECODABLE:
                    await _refuse_undecodable(method, context)
                async for item in behavior(request, context):
                    yield item
            finally:
                done(context, started)

        return call

    codec = {
        "request_deserializer": handler.request_deserializer,
        "response_serializer": handler.response_serializer,
    }
    # A single request is decoded before the handler runs: a bad one is refused here. (No
    # method of ours takes a stream of requests; those keep gRPC's own decoding.)
    single = {**codec, "request_deserializer": _tolerant(handler.request_deserializer)}
    if handler.unary_unary:
        return grpc.unary_unary_rpc_method_handler(unary(handler.unary_unary), **single)
    if handler.unary_stream:
        return grpc.unary_stream_rpc_method_handler(streaming(handler.unary_stream), **single)
    if handler.stream_unary:
        return grpc.stream_unary_rpc_method_handler(unary(handler.stream_unary), **codec)
    return grpc.stream_stream_rpc_method_handler(streaming(handler.stream_stream), **codec)


class GrpcServer:
    """A ``grpc.aio`` server on an event loop in a thread of its own.

    Why asyncio: a Watch stream then waits on the loop instead of holding a thread, so a
    thousand idle streams cost a thousand small coroutines, not a thousand threads (where the
    other calls' bodies run: ``server.edge.servicer``). The loop lives in its own
    thread so that everything else (bots, the change feed, operator commands, tests) stays
    plain blocking code, and ``start``/``stop`` here block until done.
    """

    def __init__(self, executor: ThreadPoolExecutor) -> None:
        self.executor = executor
        self.gate: ConnectionGate | None = None
        """In front of the gRPC port when connections are capped per peer address."""
        self.loop = asyncio.new_event_loop()
        self.loop.set_default_executor(executor)
        self._thread = threading.Thread(target=self.loop.run_forever, name="grpc-loop")
        self._thread.daemon = True
        self._thread.start()
        self.aio: grpc.aio.Server | None = None

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` on the loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()

    def start(self) -> None:
        assert self.aio is not None
        self.run(self.aio.start())

    def stop(self, grace: float | None) -> None:
        """Stop serving (open calls get ``grace`` seconds), then end the loop and its thread."""
        if self.loop.is_closed():
            return
        try:
            if self.gate is not None:
                self.run(self.gate.stop_accepting())
            if self.aio is not None:
                self.run(self.aio.stop(grace))
            if self.gate is not None:
                self.run(self.gate.close())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join()
            self.loop.close()
            self.executor.shutdown(wait=True, cancel_futures=True)


def create_server(
    config: ServerConfig, service: CanastaService
) -> tuple[GrpcServer, int, CanastaServicer]:
    """Build and bind (not start) the gRPC server for ``service``."""
    raise_file_limit(files_needed(config))
    wire.keep_event_messages(2 * config.match_cache_size)
    executor = ThreadPoolExecutor(max_workers=config.max_workers, thread_name_prefix="rpc")
    server = GrpcServer(executor)
    gate = None
    if config.max_connections_per_peer:
        caps = ConnectionCaps("gRPC", config.max_connections, config.max_connections_per_peer)
        gate = server.gate = ConnectionGate(caps)
    servicer = CanastaServicer(service, executor, gate.peer_of if gate else str)
    try:
        server.aio, port = server.run(_build(config, servicer, gate))
    except BaseException:
        server.stop(None)
        raise
    return server, port, servicer


def connection_options(config: ServerConfig) -> list[tuple[str, int]]:
    """gRPC core's own connection limits (channel arguments; a misspelt one is ignored
    without a word, so ``test_operating`` checks that each takes effect): the total cap, how
    long a new connection may take to finish its handshake, and how long one may stay open
    with no call. Keepalive pings find peers that vanished without closing (a Watch stream
    on a dead connection would otherwise hold its place for hours)."""
    return [
        ("grpc.max_allowed_incoming_connections", config.max_connections),
        ("grpc.server_handshake_timeout_ms", round(config.handshake_seconds * 1000)),
        ("grpc.max_connection_idle_ms", config.idle_connection_seconds * 1000),
        ("grpc.keepalive_time_ms", KEEPALIVE_SECONDS * 1000),
        ("grpc.keepalive_timeout_ms", KEEPALIVE_TIMEOUT_SECONDS * 1000),
    ]


FILES_BESIDES_CONNECTIONS = 256
"""Open files a server needs besides its gRPC connections: the database and its journal,
the pool's connections, the metrics endpoint, the SMTP listener's sessions, webhook and
mail deliveries, the log."""


def files_needed(config: ServerConfig) -> int:
    """Open files the caps let a server reach: two per gRPC connection through the gate (the
    peer's and the gate's own to gRPC), one without it, and the rest. The systemd unit's
    ``LimitNOFILE`` is well above it for the defaults (``test_deploy`` checks)."""
    per_connection = 2 if config.max_connections_per_peer else 1
    return (
        config.max_connections * per_connection + METRICS_CONNECTIONS + (FILES_BESIDES_CONNECTIONS)
    )


def raise_file_limit(needed: int) -> None:
    """Raise this process's limit of open files to ``needed`` if it is lower and the hard
    limit allows (a shell's default is often 1,024), else warn: past the limit the server
    cannot accept connections, and then nobody gets an answer."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return
    target = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
    if target > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    if target < needed:
        log.warning(
            "the limit of open files is %d; max_connections needs %d: raise the limit "
            "(LimitNOFILE in the systemd unit, ulimit -n) or lower max_connections",
            target, needed,
        )  # fmt: skip


KEEPALIVE_SECONDS = 120
"""How long a connection with a call open may stay silent before the server pings it."""
KEEPALIVE_TIMEOUT_SECONDS = 20
"""How long the server waits for the ping's answer before it closes the connection."""


async def _build(
    config: ServerConfig, servicer: CanastaServicer, gate: ConnectionGate | None
) -> tuple[grpc.aio.Server, int]:
    """The aio server with every service, bound (on the loop, which grpc.aio requires); with
    a ``gate``, the gRPC server binds a loopback port of its own and the gate ``listen``."""
    limit = config.max_message_bytes
    server = grpc.aio.server(
        interceptors=[RequestLogInterceptor(servicer.service.ctx.metrics, servicer.peer_of)],
        options=[
            ("grpc.max_receive_message_length", limit),
            ("grpc.max_send_message_length", limit),
            ("grpc.so_reuseport", 0),  # a second server on the same port is an error
            *connection_options(config),
        ],
    )
    pb_grpc.add_CanastaServicer_to_server(servicer, server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    for name in ("", SERVICE_NAME):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    reflection.enable_server_reflection(
        (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server
    )
    if config.tls_cert is not None and config.tls_key is not None:
        try:
            pair = (config.tls_key.read_bytes(), config.tls_cert.read_bytes())
        except OSError as exc:
            raise OSError(f"cannot read the TLS files: {exc}") from None
        for problem in certificate_problems(pair[1]):
            log.warning("%s", problem)
        credentials = grpc.ssl_server_credentials([pair])
        bind = partial(server.add_secure_port, server_credentials=credentials)
    else:
        bind = server.add_insecure_port
    address = config.listen if gate is None else "127.0.0.1:0"
    try:
        port = bind(address)
        if gate is not None and port:
            port = await gate.listen(config.listen, port)
    except (RuntimeError, OSError):  # newer grpcio raises where older ones returned 0
        port = 0
    if not port:
        raise OSError(
            f"cannot listen on {config.listen}: the port is in use or the address is not "
            "one of this machine's"
        )
    return server, port
