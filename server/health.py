"""Is the server serving? The gRPC health service asked from outside, for monitors and the
container's HEALTHCHECK (``python -m server.health``, which loads only gRPC and the settings:
it runs every half minute on a small box) and for ``canasta-server health``.

Where the server listens on every address (``0.0.0.0``), this host asks ``127.0.0.1``. With
TLS it trusts ``--ca`` if given, else the server's own certificate if it signed itself, else
the system's roots, and checks the certificate for the name it was issued to.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from server.config import ConfigFileError, ServerConfig, load_config


def check(
    config: ServerConfig, address: str | None, timeout: float, ca: Path | None = None
) -> tuple[bool, str]:
    """Whether the server at ``address`` (default: where ``config`` listens) serves; a line
    saying so, or why not."""
    target = local_address(address or config.listen)
    try:
        channel = _channel(config, target, ca)
    except (OSError, ValueError) as exc:
        return False, f"{target}: cannot use the TLS certificate ({exc})"
    with channel:
        try:
            answer = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(), timeout=timeout
            )
        except grpc.RpcError as exc:
            return False, f"{target}: not serving ({exc.code().name})"
    if answer.status != health_pb2.HealthCheckResponse.SERVING:
        status = health_pb2.HealthCheckResponse.ServingStatus.Name(answer.status)
        return False, f"{target}: not serving ({status})"
    return True, f"{target}: serving"


def local_address(listen: str) -> str:
    """Where this host reaches a server listening on ``listen`` (``host:port``): a server
    listening on every address (``0.0.0.0``, ``::``) is asked at ``127.0.0.1``."""
    host, _, port = listen.rpartition(":")
    if host in ("0.0.0.0", "::", "[::]", ""):
        host = "127.0.0.1"
    return f"{host}:{port}"


def _channel(config: ServerConfig, target: str, ca: Path | None) -> grpc.Channel:
    if config.tls_cert is None and ca is None:
        return grpc.insecure_channel(target)
    from server.edge.certificates import certificate_name

    own = (config.tls_cert or ca or Path()).read_bytes()
    name, self_signed = certificate_name(own)
    roots = ca.read_bytes() if ca is not None else own if self_signed else None
    credentials = grpc.ssl_channel_credentials(root_certificates=roots)
    return grpc.secure_channel(target, credentials, [("grpc.ssl_target_name_override", name)])


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m server.health", description=__doc__)
    parser.add_argument("--address", help="host:port of the server (default: its listen)")
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds to wait")
    parser.add_argument("--ca", type=Path, help="CA certificate to trust (TLS)")
    options = parser.parse_args()
    try:
        config = load_config()
    except ConfigFileError as exc:
        print(f"canasta-server: {exc}", file=sys.stderr)
        sys.exit(2)
    serving, message = check(
        config, options.address, min(max(options.timeout, 0.1), 60), options.ca
    )
    print(message, file=sys.stdout if serving else sys.stderr)
    sys.exit(0 if serving else 1)


if __name__ == "__main__":
    main()
