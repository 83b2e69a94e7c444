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
``LostRaceError`` (incl. ``DuplicateKeyError``):   ``ABORTED`` (try again): a race the
a unique-constraint violation, serialization       service did not foresee, not a bug
failure or deadlock the service did not handle
``BusyError``: SQLite's write lock held past the   ``UNAVAILABLE`` (try again)
busy timeout, or no pooled connection free
within the pool's timeout
``UnstorableError``: a value the database refuses  ``INVALID_ARGUMENT`` (PostgreSQL: a NUL
to store or compare                                character in a request's text)
anything else                                      ``INTERNAL``, generic message; logged here
=================================================  ======================================

The store raises its own errors (``server.store.errors``); a database library's error that
reaches here some other way is read as the store would raise it (``store_error``), so this
module knows no database library. Every refusal also carries a ``canasta-error`` trailer naming
the error's kind. A client never sees ``UNKNOWN`` or a traceback.
"""

from __future__ import annotations

import logging
import uuid

import grpc

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
from server.store.errors import (
    BusyError,
    LostRaceError,
    StoreError,
    UnstorableError,
    store_error,
)
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
    stored = exc if isinstance(exc, StoreError) else store_error(exc)
    if isinstance(stored, LostRaceError):
        log.warning("concurrent write conflict: %s", exc)
        return (
            grpc.StatusCode.ABORTED,
            "a concurrent request changed the same data first; fetch it again and retry",
            (("canasta-error", "conflict"),),
        )
    if isinstance(stored, BusyError):
        log.warning("the database stayed busy: %s", exc)
        return (
            grpc.StatusCode.UNAVAILABLE,
            "the database is busy; try again shortly",
            (("canasta-error", "busy"),),
        )
    if isinstance(stored, UnstorableError):
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
