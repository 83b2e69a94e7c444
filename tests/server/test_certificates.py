"""The server's word at start about its TLS certificate (issue 17): an Ed25519 certificate,
which gRPC clients refuse in the handshake although the server starts with it, and an expired
one, are named in the log; an ECDSA P-256 certificate passes without a word."""

from __future__ import annotations

import datetime
import ipaddress
import logging
from pathlib import Path

import grpc
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from cryptography.x509.oid import NameOID
from grpc_health.v1 import health_pb2, health_pb2_grpc

from server.edge.certificates import certificate_problems

from .conftest import AppFactory

NOW = datetime.datetime.now(datetime.UTC)


def _certificate(
    directory: Path, key: ec.EllipticCurvePrivateKey | ed25519.Ed25519PrivateKey,
    days: int = 1,
) -> tuple[Path, Path]:  # fmt: skip
    """A self-signed certificate for localhost with ``key``, valid ``days`` from now (a
    negative number: it expired that many days ago)."""
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    start = NOW - datetime.timedelta(days=abs(days) + 1) if days < 0 else NOW
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start - datetime.timedelta(minutes=5))
        .not_valid_after(NOW + datetime.timedelta(days=days))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
    )
    digest = None if isinstance(key, ed25519.Ed25519PrivateKey) else hashes.SHA256()
    cert = builder.sign(key, digest)
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def test_an_ecdsa_certificate_raises_no_word(tmp_path: Path) -> None:
    cert, _ = _certificate(tmp_path, ec.generate_private_key(ec.SECP256R1()))
    assert certificate_problems(cert.read_bytes()) == []


def test_an_expired_certificate_is_named(tmp_path: Path) -> None:
    cert, _ = _certificate(tmp_path, ec.generate_private_key(ec.SECP256R1()), days=-3)
    (problem,) = certificate_problems(cert.read_bytes())
    assert "expired" in problem


def test_a_file_that_is_no_certificate_is_named() -> None:
    (problem,) = certificate_problems(b"-----BEGIN CERTIFICATE-----\nnot one\n")
    assert "cannot be read" in problem


def test_an_ed25519_certificate_is_named_at_start_and_gRPC_clients_refuse_it(  # noqa: N802
    make_app: AppFactory, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cert, key = _certificate(tmp_path, ed25519.Ed25519PrivateKey.generate())
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
