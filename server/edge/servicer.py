"""The gRPC edge: decode, call the service, encode. No rules, no SQL; errors map in one place
(``server.edge.status.status_of``).

The servicer runs on the gRPC event loop (``server.app``). Every unary call is the same
small pattern: ``_run`` runs its body (decode the request, one blocking service call, encode
the answer) and turns any error into the call's status. A Watch stream waits on the loop and
holds no thread.

Where a body runs is decided once, by the database. On SQLite (a local file, one server
process) it runs on the loop itself: a call is a few local reads and at most one durable
commit, a millisecond or two, and handing it to a worker thread and back cost more CPU than
the call (``bench/README.md``: about 2.4 ms more per move at saturation, 5.7 against 3.3 ms).
On PostgreSQL, where a call waits on the network, it runs in a worker thread
(``max_workers``) so that the loop serves other calls meanwhile.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Executor
from contextlib import suppress
from typing import Any, NoReturn, TypeVar

from server.domain import Change, MatchView, Notification, Receipt
from server.edge import convert
from server.edge.limits import RateLimit, peer_host
from server.edge.status import status_of
from server.service.errors import (
    InvalidRequestError,
    LimitExceededError,
    UnauthenticatedError,
)
from server.service.live.streams import Subscription
from server.service.people.accounts import Caller, token_hash
from server.service.wings import CanastaService
from shared.pb import canasta_pb2 as pb
from shared.pb import canasta_pb2_grpc as pb_grpc

_WATCH_IDLE_SECONDS = 300.0
"""The longest a quiet Watch stream sleeps between looks at its token's expiry: it wakes on
a change, a revocation, shutdown, its token's expiry or its next notification read."""
NOTIFICATION_POLL_SECONDS = 30.0
"""How often a Watch stream with notifications reads the log when nothing changed (for the
reminders, which no change announces)."""
"""How often an idle Watch stream checks its token's expiry and the server's shutdown."""

Request = TypeVar("Request")
Response = TypeVar("Response")


class Sender:
    """Who sends a call: its bearer token ("" if none) and its peer address (``peer_host``),
    asked of gRPC only when a call needs it (a call without a token, a refused token): that
    costs a call into gRPC's core, and most calls never need it."""

    __slots__ = ("_context", "_peer", "_peer_of", "token")

    def __init__(self, token: str, context: Any, peer_of: Callable[[str], str]) -> None:
        self.token = token
        self._context = context
        self._peer_of = peer_of
        self._peer: str | None = None

    @property
    def peer(self) -> str:
        if self._peer is None:
            self._peer = peer_host(self._peer_of(self._context.peer()))
        return self._peer


def _token(context: Any) -> str:
    for key, value in context.invocation_metadata() or ():
        if key == "authorization" and isinstance(value, str):
            scheme, _, token = value.partition(" ")
            return token.strip() if scheme.lower() == "bearer" else ""
    return ""


HOLD_NOTICE_MS = 60_000
"""The longest a notification waits for the change it belongs to (``_caused_by``)."""


def _caused_by(
    sent: dict[str, int],
    upcoming: Change | None,
    now: int,
    scanned: int,
    shown: list[tuple[Notification, str]],
) -> tuple[int, list[tuple[Notification, str]]]:
    """The notifications read that may go out now, and the last id they cover: a watcher
    reads the notices a change caused just before that change (the "hand over" before the
    line of the move that ended the hand). Changes are queued and sent one by one, and the
    notices of a later one may already be stored: from the first notice about a later version
    of a match than the one sent (or ``upcoming``), the rest waits to be read again, at most
    ``HOLD_NOTICE_MS`` after it was made."""
    allowed = dict(sent)
    if upcoming is not None:
        allowed[upcoming.match_id] = max(allowed.get(upcoming.match_id, 0), upcoming.version)
    for index, (note, _) in enumerate(shown):
        version = note.facts.get("version")
        later = isinstance(version, int) and version > allowed.get(note.match_id, version)
        if later and note.created_ms > now - HOLD_NOTICE_MS:
            return note.id - 1, shown[:index]
    return scanned, shown


async def _refuse(context: Any, exc: BaseException) -> NoReturn:
    """End the call with the status, message and trailer that report ``exc``."""
    code, message, trailer = status_of(exc)
    context.set_trailing_metadata(trailer)
    await context.abort(code, message)
    raise AssertionError("unreachable: abort raises")


class CanastaServicer(pb_grpc.CanastaServicer):
    def __init__(
        self,
        service: CanastaService,
        executor: Executor,
        peer_of: Callable[[str], str] = str,
    ) -> None:
        self.service = service
        self.peer_of = peer_of
        """The real peer behind a connection gRPC sees (``server.edge.gate``), for the
        limits per address."""
        self.executor = executor
        """Runs the calls' bodies when the database is across a network (not ``on_loop``)."""
        self.on_loop = not service.ctx.db.waits_on_network
        """Whether the calls' bodies run on the event loop itself (SQLite)."""
        self.info = convert.server_info_to_pb(service.server_info())
        """What GetServerInfo answers: fixed while the process runs, so built once (rebuilding
        every preset's configuration cost more CPU than a move, and every CLI command asks)."""
        config = service.ctx.config
        self.anonymous = RateLimit(config.limit_anonymous_per_minute, "this address")
        """Calls that need no token, per peer address (``server.edge.limits``)."""
        self.unknown_tokens = RateLimit(
            config.limit_anonymous_per_minute, "this address with tokens that are not valid"
        )
        """Bearer tokens that turned out not valid, per peer address."""
        self.writes = RateLimit(config.limit_writes_per_minute, "this identity")
        """Writes, per signed-in player (or per peer address for a move without a token)."""
        self.reads = RateLimit(
            config.limit_reads_per_minute, "you (reads: views, moves, history, lists)"
        )
        """Reads, per signed-in player."""
        self.stopping = threading.Event()
        """Set at shutdown so that open Watch streams end (``stop_streams``)."""
        self._wakers: set[Callable[[], None]] = set()
        """How to wake each open Watch stream (a quiet one sleeps until something happens)."""
        self._wakers_lock = threading.Lock()

    def stop_streams(self) -> None:
        """End every open Watch stream now (at shutdown)."""
        self.stopping.set()
        with self._wakers_lock:
            wakers = list(self._wakers)
        for wake in wakers:
            wake()

    async def _run(
        self, context: Any, body: Callable[[Request, Sender], Response], request: Request
    ) -> Response:
        """``body(request, sender)`` (on the loop or in a worker thread: see the module's
        docstring); its error ends the call."""
        sender = self._sender(context)
        try:
            return await self._body(body, request, sender)
        except Exception as exc:
            await _refuse(context, exc)

    async def _run_anonymous(
        self, context: Any, body: Callable[[Request, Sender], Response], request: Request
    ) -> Response:
        """``_run`` for a call that needs no token: counted per peer address first."""
        try:
            self.anonymous.spend(self._sender(context).peer)
        except LimitExceededError as exc:
            await _refuse(context, exc)
        return await self._run(context, body, request)

    def _sender(self, context: Any) -> Sender:
        sender = Sender(_token(context), context, self.peer_of)
        if not self.on_loop:  # asked on the loop, where the call's context lives
            _ = sender.peer
        return sender

    def _caller(self, sender: Sender) -> Caller:
        """The signed-in caller. Every token is looked up (one read by primary key), so a
        valid one is served whatever else came from its address: behind a load balancer
        every player has the same address, and refusing before the lookup let one
        flooder lock them all out. What is counted is failures: each token that is not
        valid costs its address, and one that used up its allowance has its failures
        answered ``RESOURCE_EXHAUSTED`` (a flood, not a mistake) until it refills."""
        try:
            return self.service.accounts.authorize(sender.token)
        except UnauthenticatedError:
            self.unknown_tokens.spend(sender.peer)
            raise

    def _reader(self, sender: Sender) -> Caller:
        """The signed-in caller of a read, counted against its allowance of reads."""
        caller = self._caller(sender)
        self.reads.spend(f"player:{caller.player.id}")
        return caller

    def _writer(self, sender: Sender) -> Caller:
        """The signed-in caller of a write, counted against its allowance of writes."""
        caller = self._caller(sender)
        self.writes.spend(f"player:{caller.player.id}")
        return caller

    def _mover(self, sender: Sender) -> Caller | None:
        """Who sends a move: the signed-in player (counted as such), or None for a move
        without a token, counted against the sending address (never against the key that
        signed it: anyone may resend an envelope they saw)."""
        if sender.token:
            return self._writer(sender)
        self.writes.spend(sender.peer)
        return None

    # -- identity -----------------------------------------------------------------------------

    async def GetServerInfo(self, request: pb.GetServerInfoRequest, context: Any) -> Any:
        """Not counted: it reads no database, and every CLI command asks it first."""
        return await self._run(context, self._server_info, request)

    def _server_info(
        self, request: pb.GetServerInfoRequest, sender: Sender
    ) -> pb.GetServerInfoResponse:
        return self.info

    async def Register(self, request: pb.RegisterRequest, context: Any) -> Any:
        return await self._run_anonymous(context, self._register, request)

    def _register(self, request: pb.RegisterRequest, sender: Sender) -> pb.RegisterResponse:
        player = self.service.accounts.register(request.payload, request.signature)
        return pb.RegisterResponse(player=convert.player_to_pb(player))

    async def Challenge(self, request: pb.ChallengeRequest, context: Any) -> Any:
        return await self._run_anonymous(context, self._challenge, request)

    def _challenge(self, request: pb.ChallengeRequest, sender: Sender) -> pb.ChallengeResponse:
        challenge, expires = self.service.accounts.challenge(request.public_key)
        return pb.ChallengeResponse(challenge=challenge, expires_at_ms=expires)

    async def Authenticate(self, request: pb.AuthenticateRequest, context: Any) -> Any:
        return await self._run_anonymous(context, self._authenticate, request)

    def _authenticate(
        self, request: pb.AuthenticateRequest, sender: Sender
    ) -> pb.AuthenticateResponse:
        issued = self.service.accounts.authenticate(
            request.public_key, request.challenge, request.signature
        )
        return pb.AuthenticateResponse(
            token=issued.token,
            expires_at_ms=issued.expires_ms,
            player=convert.player_to_pb(issued.player),
        )

    # -- lobby --------------------------------------------------------------------------------

    async def CreateMatch(self, request: pb.CreateMatchRequest, context: Any) -> Any:
        return await self._run(context, self._create_match, request)

    def _create_match(
        self, request: pb.CreateMatchRequest, sender: Sender
    ) -> pb.CreateMatchResponse:
        summary, code = self.service.lobby.create(
            self._writer(sender).player,
            request.preset,
            dict(request.options),
            request.target,
            request.seat if request.HasField("seat") else None,
            list(request.bot_seats),
            convert.clock_choice(request.time_control),
            request.spectators,
            request.unrated,
            dict(request.bot_levels),
        )
        return pb.CreateMatchResponse(match=convert.summary_to_pb(summary), invite_code=code)

    async def AbortMatch(self, request: pb.AbortMatchRequest, context: Any) -> Any:
        return await self._run(context, self._abort_match, request)

    def _abort_match(self, request: pb.AbortMatchRequest, sender: Sender) -> pb.AbortMatchResponse:
        summary = self.service.lobby.abort(self._writer(sender).player, request.match_id)
        return pb.AbortMatchResponse(match=convert.summary_to_pb(summary))

    async def SetCover(self, request: pb.SetCoverRequest, context: Any) -> Any:
        return await self._run(context, self._set_cover, request)

    def _set_cover(self, request: pb.SetCoverRequest, sender: Sender) -> pb.SetCoverResponse:
        summary = self.service.absence.set_cover(
            self._writer(sender).player, request.match_id, request.covered
        )
        return pb.SetCoverResponse(match=convert.summary_to_pb(summary))

    async def SetSpectators(self, request: pb.SetSpectatorsRequest, context: Any) -> Any:
        return await self._run(context, self._set_spectators, request)

    def _set_spectators(
        self, request: pb.SetSpectatorsRequest, sender: Sender
    ) -> pb.SetSpectatorsResponse:
        summary = self.service.play.spectators.ask(
            self._writer(sender).player, request.match_id, request.policy
        )
        return pb.SetSpectatorsResponse(match=convert.summary_to_pb(summary))

    async def SetOrders(self, request: pb.SetOrdersRequest, context: Any) -> Any:
        return await self._run(context, self._set_orders, request)

    def _set_orders(self, request: pb.SetOrdersRequest, sender: Sender) -> pb.SetOrdersResponse:
        seat = self.service.orders.set(
            self._writer(sender).player,
            request.match_id,
            draw=request.draw if request.HasField("draw") else None,
            answer=request.answer if request.HasField("answer") else None,
            follow_default=request.follow_default,
        )
        return pb.SetOrdersResponse(
            orders=convert.orders_to_pb(seat.orders), per_match=seat.orders_per_match
        )

    async def RecoverMatch(self, request: pb.RecoverMatchRequest, context: Any) -> Any:
        return await self._run(context, self._recover_match, request)

    def _recover_match(
        self, request: pb.RecoverMatchRequest, sender: Sender
    ) -> pb.RecoverMatchResponse:
        entries = [
            (bytes(e.payload), bytes(e.signature), bytes(e.receipt_signature))
            for e in request.entries
        ]
        recovered, version = self.service.play.recover(
            self._writer(sender).player, request.match_id, entries
        )
        return pb.RecoverMatchResponse(recovered=recovered, version=version)

    async def GetSettings(self, request: pb.GetSettingsRequest, context: Any) -> Any:
        return await self._run(context, self._get_settings, request)

    def _get_settings(self, request: pb.GetSettingsRequest, sender: Sender) -> pb.Settings:
        return convert.settings_to_pb(self.service.settings(self._reader(sender).player))

    async def UpdateSettings(self, request: pb.UpdateSettingsRequest, context: Any) -> Any:
        return await self._run(context, self._update_settings, request)

    def _update_settings(self, request: pb.UpdateSettingsRequest, sender: Sender) -> pb.Settings:
        change = convert.settings_change(request)
        settings = self.service.update_settings(self._writer(sender).player, change)
        return convert.settings_to_pb(settings)

    async def JoinMatch(self, request: pb.JoinMatchRequest, context: Any) -> Any:
        return await self._run(context, self._join_match, request)

    def _join_match(self, request: pb.JoinMatchRequest, sender: Sender) -> pb.JoinMatchResponse:
        summary, seat = self.service.lobby.join(
            self._writer(sender).player,
            request.invite_code,
            request.seat if request.HasField("seat") else None,
        )
        return pb.JoinMatchResponse(match=convert.summary_to_pb(summary), seat=seat)

    async def FillSeatWithBot(self, request: pb.FillSeatWithBotRequest, context: Any) -> Any:
        return await self._run(context, self._fill_seat_with_bot, request)

    def _fill_seat_with_bot(
        self, request: pb.FillSeatWithBotRequest, sender: Sender
    ) -> pb.FillSeatWithBotResponse:
        summary = self.service.lobby.fill_with_bot(
            self._writer(sender).player,
            request.match_id,
            request.seat if request.HasField("seat") else None,
            request.bot_level,
        )
        return pb.FillSeatWithBotResponse(match=convert.summary_to_pb(summary))

    async def StartMatch(self, request: pb.StartMatchRequest, context: Any) -> Any:
        return await self._run(context, self._start_match, request)

    def _start_match(self, request: pb.StartMatchRequest, sender: Sender) -> pb.StartMatchResponse:
        summary = self.service.lobby.start(self._writer(sender).player, request.match_id)
        return pb.StartMatchResponse(match=convert.summary_to_pb(summary))

    async def GetRatings(self, request: pb.GetRatingsRequest, context: Any) -> Any:
        return await self._run(context, self._get_ratings, request)

    def _get_ratings(self, request: pb.GetRatingsRequest, sender: Sender) -> pb.GetRatingsResponse:
        self._reader(sender)  # signed-in players only: the ladder is the club's
        ladder = self.service.ladder
        period, standings = ladder.standings(request.limit or 100)
        return pb.GetRatingsResponse(
            standings=[convert.standing_to_pb(s, period) for s in standings],
            period_days=self.service.ctx.config.ladder_period_days,
        )

    async def ListMyMatches(self, request: pb.ListMyMatchesRequest, context: Any) -> Any:
        return await self._run(context, self._list_my_matches, request)

    def _list_my_matches(
        self, request: pb.ListMyMatchesRequest, sender: Sender
    ) -> pb.ListMyMatchesResponse:
        found, following = self.service.lobby.list_mine(
            self._reader(sender).player, request.page_size, request.page_token, request.active_only
        )
        return pb.ListMyMatchesResponse(
            matches=[convert.summary_to_pb(s) for s in found], next_page_token=following
        )

    # -- play ---------------------------------------------------------------------------------

    async def GetView(self, request: pb.GetViewRequest, context: Any) -> Any:
        return await self._run(context, self._get_view, request)

    def _get_view(self, request: pb.GetViewRequest, sender: Sender) -> pb.GetViewResponse:
        view = self.service.play.view(self._reader(sender).player, request.match_id)
        return pb.GetViewResponse(view=convert.match_view_to_pb(view))

    async def Submit(self, request: pb.SubmitRequest, context: Any) -> Any:
        """The envelope's signature authenticates the move; a bearer token, when sent, says
        who asks, and only the seat's own player gets the new view back (a resent envelope
        proves nothing about its sender)."""
        return await self._run(context, self._submit, request)

    def _submit(self, request: pb.SubmitRequest, sender: Sender) -> pb.SubmitResponse:
        caller = self._mover(sender)
        viewer = None if caller is None else caller.player.id
        since = request.since_version if request.HasField("since_version") else None
        return _submitted(
            *self.service.play.submit(request.payload, request.signature, viewer, since=since)
        )

    async def GetMoves(self, request: pb.GetMovesRequest, context: Any) -> Any:
        return await self._run(context, self._get_moves, request)

    def _get_moves(self, request: pb.GetMovesRequest, sender: Sender) -> pb.GetMovesResponse:
        version, groups = self.service.play.moves(self._reader(sender).player, request.match_id)
        return pb.GetMovesResponse(
            match_id=request.match_id,
            version=version,
            groups=[
                pb.MoveGroup(kind=g.kind, actions=list(g.actions), left_out=g.left_out)
                for g in groups
            ],
        )

    async def GetHistory(self, request: pb.GetHistoryRequest, context: Any) -> Any:
        return await self._run(context, self._get_history, request)

    def _get_history(self, request: pb.GetHistoryRequest, sender: Sender) -> pb.GetHistoryResponse:
        history = self.service.play.history(
            self._reader(sender).player, request.match_id, request.after_seq
        )
        return convert.history_to_pb(history)

    async def Say(self, request: pb.SayRequest, context: Any) -> Any:
        return await self._run(context, self._say, request)

    def _say(self, request: pb.SayRequest, sender: Sender) -> pb.SayResponse:
        caller = self._writer(sender)
        entry = self.service.talk.say(caller.player, convert.said(request))
        return pb.SayResponse(entry=convert.talk_entry_to_pb(entry, caller.player.display_name))

    async def GetTalk(self, request: pb.GetTalkRequest, context: Any) -> Any:
        return await self._run(context, self._get_talk, request)

    def _get_talk(self, request: pb.GetTalkRequest, sender: Sender) -> pb.GetTalkResponse:
        talk = self.service.talk.read(
            self._reader(sender).player, request.match_id, request.after_seq, request.last
        )
        return convert.talk_to_pb(talk)

    async def Watch(self, request: pb.WatchRequest, context: Any) -> AsyncIterator[Any]:
        """The current state of each watched match, then each change as it is stored (with
        notifications: after the notifications it caused).

        No thread waits for a quiet stream: the notifier wakes this coroutine through its
        loop when a change is queued for it.
        """
        loop = asyncio.get_running_loop()
        try:
            caller, subscription, initial = await self._subscribed(request, self._sender(context))
        except Exception as exc:
            await _refuse(context, exc)
        news = asyncio.Event()

        def wake() -> None:  # in the publishing thread
            with suppress(RuntimeError):  # the loop has closed: the stream is over anyway
                loop.call_soon_threadsafe(news.set)

        subscription.on_news(wake)
        with self._wakers_lock:
            self._wakers.add(wake)
        streams = self.service.ctx.metrics.watch_streams
        streams.inc()
        try:
            # With notifications: the caller's log from the id they last saw, read again after
            # every change they hear of and every NOTIFICATION_POLL_SECONDS (reminders come
            # from the deadline sweep, not from a change).
            if request.after_notification_id >= 2**63:
                await _refuse(context, InvalidRequestError("that notification id is out of range"))
            last_note = request.after_notification_id if request.notifications else -1
            next_read = 0.0
            sent: dict[str, int] = {}  # match id -> the version of its last change sent
            for change in initial:
                sent[change.match_id] = change.version
                yield convert.change_to_pb(change)
            ctx = self.service.ctx

            async def read_notes(latest: Change | None) -> tuple[list[Any], bool]:
                """The caller's notifications after ``last_note`` (those ``latest`` caused
                go before it; None: any), as stream messages, and whether more may follow;
                moves ``last_note`` and ``next_read`` on."""
                nonlocal last_note, next_read
                start = last_note
                try:
                    notes = await self._body(self.service.outbox.log, caller.player.id, last_note)
                except Exception as exc:
                    await _refuse(context, exc)
                scanned, shown = _caused_by(sent, latest, ctx.clock(), *notes)
                last_note = max(last_note, scanned)
                more = scanned > start
                next_read = loop.time() + (0 if more else NOTIFICATION_POLL_SECONDS)
                return [convert.notification_to_pb(note, text) for note, text in shown], more

            while not self.stopping.is_set():
                if subscription.revoked is not None:
                    await _refuse(context, subscription.revoked)
                if ctx.clock() >= caller.expires_ms:
                    await _refuse(
                        context, UnauthenticatedError("the token expired: authenticate again")
                    )
                if last_note >= 0 and loop.time() >= next_read:
                    messages, more = await read_notes(None)
                    for message in messages:
                        yield message
                    if more:
                        continue  # there may be more pages
                latest = subscription.poll()
                if latest is None:
                    news.clear()
                    latest = subscription.poll()  # queued before the clear: not missed
                if latest is None:
                    if self.stopping.is_set():
                        break
                    # Asleep until a change, a revocation or shutdown wakes it, or until the
                    # token expires or the notification log is due a read.
                    until_expiry = (caller.expires_ms - ctx.clock()) / 1000
                    until_read = next_read - loop.time() if last_note >= 0 else _WATCH_IDLE_SECONDS
                    idle = max(0.01, min(until_expiry, until_read, _WATCH_IDLE_SECONDS))
                    with suppress(TimeoutError):
                        await asyncio.wait_for(news.wait(), idle)
                    continue
                if last_note >= 0:
                    # The notices a change caused were stored with it: they go first, so a
                    # watcher reads "hand over" before the line of the change that ended it.
                    messages, _ = await read_notes(latest)
                    for message in messages:
                        yield message
                sent[latest.match_id] = latest.version
                yield convert.change_to_pb(latest)
        finally:
            with self._wakers_lock:
                self._wakers.discard(wake)
            streams.dec()
            subscription.close()

    async def _body(self, function: Callable[..., Response], *args: Any) -> Response:
        """Run a blocking service call where bodies run (on the loop, or in a worker)."""
        if self.on_loop:
            return function(*args)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, function, *args)

    async def _subscribed(
        self, request: pb.WatchRequest, sender: Sender
    ) -> tuple[Caller, Subscription, list[Change]]:
        """``_subscribe``, where bodies run; a subscription opened in a thread for a client
        that left meanwhile is closed."""
        if self.on_loop:
            return self._subscribe(request, sender)
        loop = asyncio.get_running_loop()
        subscribing = loop.run_in_executor(self.executor, self._subscribe, request, sender)
        try:
            return await asyncio.shield(subscribing)
        except asyncio.CancelledError:  # the client left: close what the thread opens
            subscribing.add_done_callback(_close_subscription)
            raise

    def _subscribe(
        self, request: pb.WatchRequest, sender: Sender
    ) -> tuple[Caller, Subscription, list[Change]]:
        caller = self._reader(sender)
        token = token_hash(sender.token) if sender.token else b""
        subscription, initial = self.service.live.watch(
            caller.player, list(request.match_ids), token
        )
        return caller, subscription, initial


def _submitted(receipt: Receipt, view: MatchView | None) -> pb.SubmitResponse:
    response = pb.SubmitResponse()
    response.receipt.CopyFrom(convert.receipt_to_pb(receipt))
    if view is not None:
        response.view.CopyFrom(convert.match_view_to_pb(view))
    return response


def _close_subscription(
    subscribing: asyncio.Future[tuple[Caller, Subscription, list[Change]]],
) -> None:
    if not subscribing.cancelled() and subscribing.exception() is None:
        subscribing.result()[1].close()
