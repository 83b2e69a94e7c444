"""What the server says at start about its TLS certificate (issue 17).

gRPC's TLS stack (BoringSSL) accepts an Ed25519 or Ed448 certificate on the server side, so
the server starts and says "TLS", and OpenSSL's own client connects, but gRPC clients
(``canasta`` among them) fail every handshake with such a certificate. Operators should hear
that at start, not from their players. An expired certificate, or one not yet valid, fails
every handshake too.
"""

from __future__ import annotations

from contextlib import suppress
from datetime import UTC, datetime

from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ed448, ed25519


def certificate_name(pem: bytes) -> tuple[str, bool]:
    """The host name the first certificate of ``pem`` is for (its first DNS name, else its
    common name), and whether it signed itself (so it is its own trust root)."""
    certificate = x509.load_pem_x509_certificate(pem)
    names: list[str] = []
    with suppress(x509.ExtensionNotFound):
        names = certificate.extensions.get_extension_for_class(
            x509.SubjectAlternativeName
        ).value.get_values_for_type(x509.DNSName)
    common = certificate.subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)
    name = names[0] if names else str(common[0].value) if common else "localhost"
    return name, certificate.issuer == certificate.subject


def certificate_problems(pem: bytes, now: datetime | None = None) -> list[str]:
    """The reasons gRPC clients would refuse the first certificate of ``pem``; empty if
    none is known. Never raises: a file that cannot be read as a certificate is a reason."""
    try:
        certificate = x509.load_pem_x509_certificate(pem)
    except ValueError as exc:
        return [f"the TLS certificate cannot be read ({exc})"]
    problems = []
    key = certificate.public_key()
    if isinstance(key, ed25519.Ed25519PublicKey | ed448.Ed448PublicKey):
        kind = "Ed25519" if isinstance(key, ed25519.Ed25519PublicKey) else "Ed448"
        problems.append(
            f"the TLS certificate's key is {kind}: gRPC clients, canasta among them, refuse it "
            "in the handshake; use an ECDSA P-256 or RSA certificate (docs/operating.md: TLS)"
        )
    moment = now or datetime.now(UTC)
    if certificate.not_valid_after_utc < moment:
        problems.append(
            f"the TLS certificate expired on {certificate.not_valid_after_utc:%Y-%m-%d}: "
            "every client will refuse it"
        )
    elif certificate.not_valid_before_utc > moment:
        problems.append(
            f"the TLS certificate is valid only from {certificate.not_valid_before_utc:%Y-%m-%d}"
        )
    return problems
