"""The gRPC edge: decode, call the service, encode. No rules, no SQL; errors map in one place
(``server.errors.grpc_errors``)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

from server import convert
from server.accounts import Caller
from server.errors import grpc_errors
from server.exceptions import UnauthenticatedError
from server.service import CanastaService
from shared.pb import canasta_pb2 as pb
from shared.pb import canasta_pb2_grpc as pb_grpc

_WATCH_POLL_SECONDS = 0.5


def _token(context: Any) -> str:
    for key, value in context.invocation_metadata() or ():
        if key == "authorization" and isinstance(value, str):
            scheme, _, token = value.partition(" ")
            return token.strip() if scheme.lower() == "bearer" else ""
    return ""


class CanastaServicer(pb_grpc.CanastaServicer):
    def __init__(self, service: CanastaService) -> None:
        self.service = service
        self.stopping = threading.Event()
        """Set at shutdown so that open Watch streams end."""

    def _caller(self, context: Any) -> Caller:
        return self.service.authorize(_token(context))

    def GetServerInfo(self, request: pb.GetServerInfoRequest, context: Any) -> Any:
        with grpc_errors(context):
            return convert.server_info_to_pb(self.service.server_info())

    def Register(self, request: pb.RegisterRequest, context: Any) -> Any:
        with grpc_errors(context):
            player = self.service.register(request.payload, request.signature)
            return pb.RegisterResponse(player=convert.player_to_pb(player))

    def Challenge(self, request: pb.ChallengeRequest, context: Any) -> Any:
        with grpc_errors(context):
            challenge, expires = self.service.challenge(request.public_key)
            return pb.ChallengeResponse(challenge=challenge, expires_at_ms=expires)

    def Authenticate(self, request: pb.AuthenticateRequest, context: Any) -> Any:
        with grpc_errors(context):
            token = self.service.authenticate(
                request.public_key, request.challenge, request.signature
            )
            return pb.AuthenticateResponse(
                token=token.token,
                expires_at_ms=token.expires_ms,
                player=convert.player_to_pb(token.player),
            )

    def CreateMatch(self, request: pb.CreateMatchRequest, context: Any) -> Any:
        with grpc_errors(context):
            summary, code = self.service.create_match(
                self._caller(context),
                request.preset,
                dict(request.options),
                request.target,
                request.seat if request.HasField("seat") else None,
                list(request.bot_seats),
            )
            return pb.CreateMatchResponse(match=convert.summary_to_pb(summary), invite_code=code)

    def JoinMatch(self, request: pb.JoinMatchRequest, context: Any) -> Any:
        with grpc_errors(context):
            summary, seat = self.service.join_match(
                self._caller(context),
                request.invite_code,
                request.seat if request.HasField("seat") else None,
            )
            return pb.JoinMatchResponse(match=convert.summary_to_pb(summary), seat=seat)

    def FillSeatWithBot(self, request: pb.FillSeatWithBotRequest, context: Any) -> Any:
        with grpc_errors(context):
            summary = self.service.fill_seat_with_bot(
                self._caller(context),
                request.match_id,
                request.seat if request.HasField("seat") else None,
            )
            return pb.FillSeatWithBotResponse(match=convert.summary_to_pb(summary))

    def StartMatch(self, request: pb.StartMatchRequest, context: Any) -> Any:
        with grpc_errors(context):
            summary = self.service.start_match(self._caller(context), request.match_id)
            return pb.StartMatchResponse(match=convert.summary_to_pb(summary))

    def ListMyMatches(self, request: pb.ListMyMatchesRequest, context: Any) -> Any:
        with grpc_errors(context):
            found = self.service.list_my_matches(self._caller(context))
            return pb.ListMyMatchesResponse(matches=[convert.summary_to_pb(s) for s in found])

    def GetView(self, request: pb.GetViewRequest, context: Any) -> Any:
        with grpc_errors(context):
            view = self.service.get_view(self._caller(context), request.match_id)
            return pb.GetViewResponse(view=convert.match_view_to_pb(view))

    def Submit(self, request: pb.SubmitRequest, context: Any) -> Any:
        with grpc_errors(context):
            receipt, view = self.service.submit(request.payload, request.signature)
            return pb.SubmitResponse(
                receipt=convert.receipt_to_pb(receipt), view=convert.match_view_to_pb(view)
            )

    def GetHistory(self, request: pb.GetHistoryRequest, context: Any) -> Any:
        with grpc_errors(context):
            history = self.service.get_history(
                self._caller(context), request.match_id, request.after_seq
            )
            return convert.history_to_pb(history)

    def Watch(self, request: pb.WatchRequest, context: Any) -> Iterator[pb.WatchResponse]:
        with grpc_errors(context):
            caller = self._caller(context)
            subscription, initial = self.service.watch(caller, list(request.match_ids))
        try:
            for change in initial:
                yield convert.change_to_pb(change)
            ctx = self.service.ctx
            while context.is_active() and not self.stopping.is_set():
                if ctx.clock() >= caller.expires_ms:
                    with grpc_errors(context):
                        raise UnauthenticatedError("the token expired: authenticate again")
                news = subscription.get(_WATCH_POLL_SECONDS)
                if news is not None:
                    yield convert.change_to_pb(news)
        finally:
            subscription.close()
