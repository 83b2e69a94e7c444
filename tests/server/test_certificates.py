"""The server's word at start about its TLS certificate (issue 17): an Ed25519 certificate,
which gRPC clients refuse in the handshake although the server starts with it, and an expired
one, are named in the log; an ECDSA P-256 certificate passes without a word."""

from __future__ import annotations

import logging
from pathlib import Path

import grpc
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from grpc_health.v1 import health_pb2, health_pb2_grpc

from server.edge.certificates import certificate_problems

from .conftest import AppFactory
from .tlskit import self_signed


def test_an_ecdsa_certificate_raises_no_word(tmp_path: Path) -> None:
    cert, _ = self_signed(tmp_path, ec.generate_private_key(ec.SECP256R1()))
    assert certificate_problems(cert.read_bytes()) == []


def test_an_expired_certificate_is_named(tmp_path: Path) -> None:
    cert, _ = self_signed(tmp_path, ec.generate_private_key(ec.SECP256R1()), days=-3)
    (problem,) = certificate_problems(cert.read_bytes())
    assert "expired" in problem


def test_a_file_that_is_no_certificate_is_named() -> None:
    (problem,) = certificate_problems(b"-----BEGIN CERTIFICATE-----\nnot one\n")
    assert "cannot be read" in problem


def test_an_ed25519_certificate_is_named_at_start_and_gRPC_clients_refuse_it(  # noqa: N802
    make_app: AppFactory, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cert, key = self_signed(tmp_path, ed25519.Ed25519PrivateKey.generate())
    with caplog.at_level(logging.WARNING, logger="canasta.server"):
        app = make_app(tls_cert=cert, tls_key=key)
    assert any("key is Ed25519" in r.getMessage() for r in caplog.records), caplog.text
    # What the warning says: the server listens, and a gRPC client's handshake fails.
    credentials = grpc.ssl_channel_credentials(root_certificates=cert.read_bytes())
    with grpc.secure_channel(f"localhost:{app.port}", credentials) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        with pytest.raises(grpc.RpcError) as refused:
            stub.Check(health_pb2.HealthCheckRequest(), timeout=5)
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
