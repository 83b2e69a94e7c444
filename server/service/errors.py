"""The service layer's own errors (no grpc here: ``server.edge.status`` maps them to statuses).

Each carries a message written for the player or operator who will read it. Rule errors come
from ``shared.rules.errors`` and malformed messages from ``shared.wire.WireError``; these cover
what only a server can say: unknown things, identity, permissions and concurrency.
"""

from __future__ import annotations


class ServiceError(Exception):
    """Base class of every error the service raises on purpose."""

    kind = "service"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotFoundError(ServiceError):
    """No such match, seat, player or invitation."""

    kind = "not_found"


class UnauthenticatedError(ServiceError):
    """Missing, expired, replayed or foreign credentials, or a signature that does not verify."""

    kind = "unauthenticated"


class PermissionDeniedError(ServiceError):
    """The caller is known but may not do this (a blocked key, a match it does not sit in)."""

    kind = "permission"


class InvalidRequestError(ServiceError):
    """A request that is well formed on the wire but makes no sense (bad seat, bad option)."""

    kind = "invalid"


class AlreadyExistsError(ServiceError):
    """The thing to create exists already (a key registered twice)."""

    kind = "exists"


class ConflictError(ServiceError):
    """The request does not fit the match's current state (seat taken, match already started,
    a move whose prev_hash is not the head of the log)."""

    kind = "conflict"


class LimitExceededError(ServiceError):
    """The caller sent too much: too many calls a minute, too many open matches or
    challenges. Nothing was done; the message says the limit and when to try again."""

    kind = "limit"


class StaleMoveError(ServiceError):
    """The move's sequence number is not the next one: the match has moved on (or not yet)."""

    kind = "stale"

    def __init__(self, message: str, current_version: int) -> None:
        super().__init__(message)
        self.current_version = current_version
