"""The one mapping from domain errors to gRPC status codes, used by every servicer method.

=================================================  ======================================
error                                              status
=================================================  ======================================
``NotationError``, ``ConfigError``, ``WireError``,  ``INVALID_ARGUMENT``
``CryptoError``, ``InvalidRequestError``
``IllegalMoveError`` (incl. ``NotYourTurnError``,   ``FAILED_PRECONDITION`` (the rule's
``WrongPhaseError``), ``ConflictError``             message; ``canasta-rule`` trailer)
``NotFoundError``                                  ``NOT_FOUND``
``StaleMoveError``                                 ``ABORTED`` (``canasta-version`` trailer)
``UnauthenticatedError``                           ``UNAUTHENTICATED``
``PermissionDeniedError``                          ``PERMISSION_DENIED``
``AlreadyExistsError``                             ``ALREADY_EXISTS``
``LimitExceededError``                             ``RESOURCE_EXHAUSTED``
a unique-constraint violation, serialization       ``ABORTED`` (try again): a race the
failure or deadlock the service did not handle     service did not foresee, not a bug
SQLite's write lock held past the busy timeout     ``UNAVAILABLE`` (try again)
a value the database refuses to store or compare   ``INVALID_ARGUMENT`` (PostgreSQL: a NUL
(SQLAlchemy ``DataError``)                          character in a request's text)
anything else                                      ``INTERNAL``, generic message; logged here
=================================================  ======================================

Every refusal also carries a ``canasta-error`` trailer naming the error's kind. A client never
sees ``UNKNOWN`` or a traceback.
"""

from __future__ import annotations

import logging
import uuid

import grpc
from sqlalchemy.exc import DataError

from server.service.errors import (
    AlreadyExistsError,
    ConflictError,
    InvalidRequestError,
    LimitExceededError,
    NotFoundError,
    PermissionDeniedError,
    ServiceError,
    StaleMoveError,
    UnauthenticatedError,
)
from server.store.conflicts import is_busy, lost_a_race
from shared.crypto.errors import CryptoError
from shared.rules import CanastaError, ConfigError, IllegalMoveError, NotationError
from shared.wire import WireError

log = logging.getLogger(__name__)

Trailer = tuple[tuple[str, str], ...]

_SERVICE_CODES: tuple[tuple[type[ServiceError], grpc.StatusCode], ...] = (
    (StaleMoveError, grpc.StatusCode.ABORTED),
    (NotFoundError, grpc.StatusCode.NOT_FOUND),
    (UnauthenticatedError, grpc.StatusCode.UNAUTHENTICATED),
    (PermissionDeniedError, grpc.StatusCode.PERMISSION_DENIED),
    (InvalidRequestError, grpc.StatusCode.INVALID_ARGUMENT),
    (AlreadyExistsError, grpc.StatusCode.ALREADY_EXISTS),
    (ConflictError, grpc.StatusCode.FAILED_PRECONDITION),
    (LimitExceededError, grpc.StatusCode.RESOURCE_EXHAUSTED),
)


def status_of(exc: BaseException) -> tuple[grpc.StatusCode, str, Trailer]:
    """The status code, message and trailing metadata that report ``exc`` to a client."""
    if isinstance(exc, ServiceError):
        trailer: Trailer = (("canasta-error", exc.kind),)
        if isinstance(exc, StaleMoveError):
            trailer += (("canasta-version", str(exc.current_version)),)
        for kind, code in _SERVICE_CODES:
            if isinstance(exc, kind):
                return code, exc.message, trailer
    if isinstance(exc, CanastaError):
        trailer = (("canasta-error", exc.kind),)
        if exc.rule:
            trailer += (("canasta-rule", exc.rule),)
        if isinstance(exc, NotationError | ConfigError):
            return grpc.StatusCode.INVALID_ARGUMENT, exc.message, trailer
        if isinstance(exc, IllegalMoveError):
            return grpc.StatusCode.FAILED_PRECONDITION, exc.message, trailer
    if isinstance(exc, WireError):
        return grpc.StatusCode.INVALID_ARGUMENT, exc.message, (("canasta-error", exc.kind),)
    if isinstance(exc, CryptoError):
        return grpc.StatusCode.INVALID_ARGUMENT, str(exc), (("canasta-error", "crypto"),)
    if lost_a_race(exc):
        log.warning("concurrent write conflict: %s", exc)
        return (
            grpc.StatusCode.ABORTED,
            "a concurrent request changed the same data first; fetch it again and retry",
            (("canasta-error", "conflict"),),
        )
    if is_busy(exc):
        log.warning("the database stayed busy: %s", exc)
        return (
            grpc.StatusCode.UNAVAILABLE,
            "the database is busy (another process holds it); try again shortly",
            (("canasta-error", "busy"),),
        )
    if isinstance(exc, DataError):
        return (
            grpc.StatusCode.INVALID_ARGUMENT,
            "the request holds a value the database cannot take (e.g. a NUL character)",
            (("canasta-error", "invalid"),),
        )
    reference = uuid.uuid4().hex[:12]
    log.error("internal error %s", reference, exc_info=exc)
    return (
        grpc.StatusCode.INTERNAL,
        f"internal server error (reference {reference}); the operator's log has the details",
        (("canasta-error", "internal"),),
    )
