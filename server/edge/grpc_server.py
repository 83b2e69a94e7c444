"""The gRPC server: ``grpc.aio`` on an event loop in a thread of its own.

``create_server(config, service)`` builds it with health checking, reflection, message size
limits, TLS when configured, and the request-log interceptor (which also refuses requests
that do not decode), and binds it, returning ``(server, port, servicer)`` (``port`` is the
real one when the address asks for port 0).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any, TypeVar

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from server.config import ServerConfig
from server.edge.certificates import certificate_problems
from server.edge.servicer import CanastaServicer
from server.metrics import Metrics
from server.service.facade import CanastaService
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

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics
        self._handlers: dict[str, Any] = {}

    async def intercept_service(self, continuation: Any, details: Any) -> Any:
        method = details.method
        wrapped = self._handlers.get(method)
        if wrapped is None:
            handler = await continuation(details)
            if handler is None:
                return None
            wrapped = self._handlers[method] = _logged(method, handler, self.metrics)
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


def _logged(method: str, handler: Any, metrics: Metrics) -> Any:
    short = method.rsplit("/", 1)[-1]  # only methods the server has: a bounded set of labels

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
                log.info("%s %s %.1fms %s", method, name, elapsed * 1000, context.peer())

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
            if self.aio is not None:
                self.run(self.aio.stop(grace))
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join()
            self.loop.close()
            self.executor.shutdown(wait=True, cancel_futures=True)


def create_server(
    config: ServerConfig, service: CanastaService
) -> tuple[GrpcServer, int, CanastaServicer]:
    """Build and bind (not start) the gRPC server for ``service``."""
    executor = ThreadPoolExecutor(max_workers=config.max_workers, thread_name_prefix="rpc")
    server = GrpcServer(executor)
    servicer = CanastaServicer(service, executor)
    try:
        server.aio, port = server.run(_build(config, servicer))
    except BaseException:
        server.stop(None)
        raise
    return server, port, servicer


async def _build(config: ServerConfig, servicer: CanastaServicer) -> tuple[grpc.aio.Server, int]:
    """The aio server with every service, bound (on the loop, which grpc.aio requires)."""
    limit = config.max_message_bytes
    server = grpc.aio.server(
        interceptors=[RequestLogInterceptor(servicer.service.ctx.metrics)],
        options=[
            ("grpc.max_receive_message_length", limit),
            ("grpc.max_send_message_length", limit),
            ("grpc.so_reuseport", 0),  # a second server on the same port is an error
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
    return server, port
