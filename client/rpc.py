"""The one place the client talks gRPC: channel, server-key pinning, login, error messages.

* The channel is plaintext by default (a server on localhost or behind a tunnel) and TLS when
  the profile says so (``canasta setup --tls [--ca FILE]``).
* The server's public key is pinned on first contact. Every later login compares it, and every
  receipt must verify with it; a changed key is a loud error telling the player what to do.
* Reads carry a cached bearer token; a missing or expiring one is renewed with the
  challenge-response login first, and a call refused as UNAUTHENTICATED is retried once after a
  fresh login (the token may have been revoked or the server restarted).
* Every ``grpc.RpcError`` becomes an ``RpcFailureError``: one line a player can act on, naming the
  server for connection problems and carrying the rule's reason for refused moves.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import grpc

from client.errors import EXIT_ERROR, CliError
from client.profiles import Profile, check_server_address
from shared.pb import canasta_pb2 as pb
from shared.pb import canasta_pb2_grpc as pb_grpc

DEFAULT_TIMEOUT = 15.0
"""Seconds before a unary call gives up (a correspondence game can wait; a person cannot)."""


class RpcFailureError(CliError):
    """A refused or failed call, with the status and trailers for callers that explain more."""

    def __init__(self, message: str, status: str, trailers: dict[str, str]) -> None:
        super().__init__(message)
        self.status = status
        self.trailers = trailers


def _trailers(error: grpc.RpcError) -> dict[str, str]:
    try:
        return {str(k): str(v) for k, v in (error.trailing_metadata() or ())}
    except Exception:  # a local failure (no connection) has no trailers to read
        return {}


def _unreachable_reason(details: str, tls: bool | None = None) -> str:
    """Why a server could not be reached, with a hint a player can act on; ``tls``: whether
    the channel talked TLS (None: not known)."""
    lowered = details.lower()
    if "connection refused" in lowered:
        return "connection refused: is canasta-server running there?"
    if any(word in lowered for word in ("dns", "resolv", "lookup", "name or service")):
        return "the host name does not resolve"
    if "hostname verification" in lowered:
        return (
            "its TLS certificate is not made out to this host name: use the name it was made "
            "for in --server NAME:PORT (an IP address will not do for a certificate that names "
            "a host)"
        )
    if "wrong_version_number" in lowered:
        return "the TLS handshake failed: the server does not talk TLS; set up without --tls"
    if "certificate_verify_failed" in lowered or "unable to get local issuer" in lowered:
        return (
            "the server's TLS certificate is not trusted: for a self-signed one, give its "
            "certificate with --ca FILE"
        )
    if "ssl" in lowered or "tls" in lowered or "handshake" in lowered or "certificate" in lowered:
        return "the TLS handshake failed: check --tls and the CA file"
    if tls is False and "socket closed" in lowered:
        return (
            "the server closed the connection at once: if it talks TLS, set up with --tls "
            "(and --ca FILE for a self-signed certificate)"
        )
    if "deadline" in lowered or "timeout" in lowered or "timed out" in lowered:
        return "no answer in time"
    first = details.split(";")[0].strip()
    return first[:120] or "no details"


def describe(error: grpc.RpcError, address: str, tls: bool | None = None) -> RpcFailureError:
    """The one line that tells a player what went wrong with a call to ``address`` (over TLS
    or not, if ``tls`` says)."""
    code = error.code()
    details = (error.details() or "").strip()
    trailers = _trailers(error)
    name = code.name if code is not None else "UNKNOWN"
    message: str
    if code == grpc.StatusCode.UNAVAILABLE:
        message = f"cannot reach the server at {address} ({_unreachable_reason(details, tls)})"
    elif code == grpc.StatusCode.DEADLINE_EXCEEDED:
        message = f"the server at {address} did not answer in time"
    elif code == grpc.StatusCode.FAILED_PRECONDITION:
        rule = trailers.get("canasta-rule")
        message = f"refused: {details}" + (f" (rules {rule})" if rule else "")
    elif code == grpc.StatusCode.ABORTED:
        now = trailers.get("canasta-version")
        at = f" (it is at version {now})" if now else ""
        message = f"the match moved on{at}: nothing was submitted; run `canasta show` to see it now"
    elif code == grpc.StatusCode.UNAUTHENTICATED:
        message = f"the server refused this player's credentials: {details}"
    elif code in (
        grpc.StatusCode.NOT_FOUND,
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.ALREADY_EXISTS,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
    ):
        message = details or name.lower().replace("_", " ")
    else:
        message = f"the server at {address} failed ({name}): {details}"
    return RpcFailureError(message, name, trailers)


@contextmanager
def translated(address: str, tls: bool | None = None) -> Iterator[None]:
    """Turn any gRPC error raised inside (also while reading a stream) into one line."""
    try:
        yield
    except grpc.RpcError as error:
        raise describe(error, address, tls) from None


def open_channel(address: str, tls: bool = False, ca_file: str = "") -> grpc.Channel:
    if not tls:
        return grpc.insecure_channel(address)
    root = None
    if ca_file:
        try:
            with open(ca_file, "rb") as handle:
                root = handle.read()
        except OSError as exc:
            raise CliError(f"cannot read the CA file {ca_file}: {exc.strerror}") from None
    return grpc.secure_channel(address, grpc.ssl_channel_credentials(root_certificates=root))


def key_changed_message(address: str, pinned: bytes, presented: bytes) -> str:
    from shared.crypto.keytext import fingerprint

    return (
        f"DANGER: the server's key changed! {address} now presents key {fingerprint(presented)}, "
        f"but this profile pinned {fingerprint(pinned)}. Someone may be impersonating the "
        "server, or its operator replaced the key; nothing was sent. If you trust the change, "
        "run `canasta server forget` and try again."
    )


class Connection:
    """A profile's channel to its server, with pinning and a login that renews itself."""

    def __init__(self, profile: Profile) -> None:
        if not profile.server:
            raise CliError(f"the profile {profile.name!r} names no server: run `canasta setup`")
        self.profile = profile
        self.address = check_server_address(profile.server, EXIT_ERROR)  # an edited profile
        self.channel = open_channel(self.address, profile.tls, profile.ca_file)
        self.stub = pb_grpc.CanastaStub(self.channel)
        self._checked_key: bytes | None = None

    def close(self) -> None:
        self.channel.close()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the server's key -------------------------------------------------------------------------

    def server_info(self) -> pb.GetServerInfoResponse:
        with translated(self.address, self.profile.tls):
            info: pb.GetServerInfoResponse = self.stub.GetServerInfo(
                pb.GetServerInfoRequest(), timeout=DEFAULT_TIMEOUT
            )
        return info

    def pinned_key(self) -> bytes:
        """The server's key, compared with the pin (pinned if none is yet) once per connection,
        before anything that trusts the server leaves: a token, a move."""
        if self._checked_key is None:
            self._checked_key = self.check_pin(self.server_info())
        return self._checked_key

    def check_pin(self, info: pb.GetServerInfoResponse) -> bytes:
        """Compare the presented key with the pin (pinning it the first time); loud on change."""
        from shared.crypto.errors import CryptoError
        from shared.crypto.keytext import (
            check_public_key,
            fingerprint,
            public_key_from_text,
            public_key_to_text,
        )

        presented = bytes(info.server_public_key)
        try:
            check_public_key(presented)  # a weak key would let anyone forge its receipts
        except CryptoError as exc:
            raise CliError(
                f"the server at {self.address} presents an unusable key: {exc}"
            ) from None
        if not self.profile.server_key:
            self.profile.server_key = public_key_to_text(presented)
            self.profile.save()
            import sys

            print(
                f"canasta: pinned the key of the server at {self.address}: "
                f"{fingerprint(presented)}",
                file=sys.stderr,
            )
            return presented
        pinned = public_key_from_text(self.profile.server_key)
        if pinned != presented:
            raise CliError(key_changed_message(self.address, pinned, presented))
        return pinned

    # -- login ------------------------------------------------------------------------------------

    def login(self) -> None:
        """Challenge, sign, get a token; the server's key is checked against the pin first."""
        from shared import protocol
        from shared.crypto.keys import public_key_raw

        server_key = self.pinned_key()
        key = self.profile.load_key()
        public = public_key_raw(key)
        with translated(self.address, self.profile.tls):
            challenge = self.stub.Challenge(
                pb.ChallengeRequest(public_key=public), timeout=DEFAULT_TIMEOUT
            )
            answer = self.stub.Authenticate(
                protocol.auth_request(key, server_key, challenge.challenge),
                timeout=DEFAULT_TIMEOUT,
            )
        self.profile.token = answer.token
        self.profile.token_expires_ms = answer.expires_at_ms
        self.profile.save()

    def metadata(self) -> tuple[tuple[str, str], ...]:
        import time

        self.pinned_key()  # never hand the token to a server whose key is not the pinned one
        if not self.profile.token_valid(time.time_ns() // 1_000_000):
            self.login()
        return (("authorization", f"Bearer {self.profile.token}"),)

    def call(self, method: str, request: Any, *, auth: bool = True) -> Any:
        """One unary call; an UNAUTHENTICATED answer is retried once after a fresh login."""
        function = getattr(self.stub, method)
        for attempt in (1, 2):
            metadata = self.metadata() if auth else ()
            try:
                return function(request, metadata=metadata, timeout=DEFAULT_TIMEOUT)
            except grpc.RpcError as error:
                if auth and attempt == 1 and error.code() == grpc.StatusCode.UNAUTHENTICATED:
                    self.profile.token = ""
                    continue
                raise describe(error, self.address, self.profile.tls) from None
        raise AssertionError("unreachable")  # pragma: no cover

    def watch(
        self, match_ids: list[str], timeout: float | None, notifications_after: int | None = None
    ) -> Any:
        """The Watch stream (iterate inside ``translated``); the token is fresh when it opens.

        With ``notifications_after`` the stream also carries the player's notifications with
        a greater id.
        """
        request = pb.WatchRequest(match_ids=match_ids)
        if notifications_after is not None:
            request.notifications = True
            request.after_notification_id = notifications_after
        return self.stub.Watch(request, metadata=self.metadata(), timeout=timeout)
