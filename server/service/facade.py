"""The service layer: everything the server does, with no gRPC in sight.

``CanastaService`` is a facade over ``accounts`` (registration, read authentication),
``lobby`` (matches and seats) and ``play`` (views, signed moves, history, watching). The
servicer calls it and maps its errors (``server.service.errors``, the engine's ``CanastaError``s,
``shared.wire.WireError``) to status codes in ``server.edge.status``.

Moves and the log
-----------------
A move is an envelope: ``payload`` = a serialized ``MovePayload{match_id, seat, seq,
prev_hash, client_time_ms, actions, deal_commitment}`` and the seat key's Ed25519 signature
over exactly those bytes. The server stores the bytes as received, with
``entry_hash = shared.crypto.entry_hash(prev_hash, payload, signature)``, commits durably, and
then signs the receipt ``shared.crypto.receipt_message(match_id, seq, entry_hash)``. The match's
``version`` is the seq of its last entry. When the match starts, its header (the rules, the
seats and their keys, the server's keys, the clock, the first dealer: ``shared.matchlog``)
is stored, and the first entry's ``prev_hash`` is ``header_hash(header)``, so every move
commits to the rules it is played under (matches started before schema revision 0006 start
from ``genesis_hash(match_id)``). Bot seats sign with the server's bot key, never its receipt
key.

Fair deals (commit-reveal), specified byte for byte in ``docs/fair-deal.md``: the server
commits to a fresh secret for hand ``h`` in the transaction that starts the match or ends hand
``h-1``; the cutting seat (``shared.matchlog.cutting_seat``) signs a ``deal`` move naming that
commitment, with no time in it, so it has one signature; the deck is the shuffle seeded by the
secret and that signature (``shared.matchlog.dealt_deck``); the secret is revealed in the
transaction that ends the hand. The server, as the dealer, sees every hand, and it could choose
the deal of a hand whose cut its bot makes for an absent player (``canasta verify`` names those
hands); otherwise it can refuse or delay a cut, not choose a deal.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from server.domain import (
    Change,
    History,
    MatchSummary,
    MatchView,
    Notification,
    Player,
    Receipt,
    Seat,
    ServerInfo,
    Settings,
)
from server.service.absence import Absence
from server.service.accounts import Accounts, Caller, Token, token_hash
from server.service.clocks import NO_CLOCK, ClockChoice
from server.service.context import ServiceContext
from server.service.errors import InvalidRequestError
from server.service.letters import TableText
from server.service.lobby import Lobby
from server.service.mailin import MailIn
from server.service.notify import Subscription
from server.service.orders import Orders
from server.service.outbox import Outbox
from server.service.play import Play, RecoveredEntry
from server.service.preferences import Preferences, SettingsChange
from shared.rules import MoveGroup


class CanastaService:
    def __init__(
        self, ctx: ServiceContext, table_text: TableText, version: str = "0+unknown"
    ) -> None:
        self.ctx = ctx
        self.version = version
        self.accounts = Accounts(ctx)
        self.lobby = Lobby(ctx)
        self.play = Play(ctx)
        self.absence = Absence(ctx)
        self.preferences = Preferences(ctx)
        self.orders = Orders(ctx)
        self.outbox = Outbox(ctx, self.play.view_for, table_text)
        self.mail = MailIn(ctx, self.play)
        """Moves that come as text or mail (armored blocks), through ``play.submit``."""

    # -- identity -----------------------------------------------------------------------------

    def server_info(self) -> ServerInfo:
        config = self.ctx.config
        return ServerInfo(
            server_public_key=self.ctx.keys.server_public,
            bot_public_key=self.ctx.keys.bot_public,
            version=self.version,
            registration=config.registration,
            token_ttl_seconds=config.token_ttl_seconds,
            max_message_bytes=config.max_message_bytes,
            test_clock_speed=config.test_clock_speed,
        )

    def register(self, payload: bytes, signature: bytes) -> Player:
        return self.accounts.register(payload, signature)

    def challenge(self, public_key: bytes) -> tuple[bytes, int]:
        return self.accounts.challenge(public_key)

    def authenticate(self, public_key: bytes, challenge: bytes, signature: bytes) -> Token:
        return self.accounts.authenticate(public_key, challenge, signature)

    def authorize(self, token: str) -> Caller:
        return self.accounts.authorize(token)

    # -- lobby --------------------------------------------------------------------------------

    def create_match(
        self,
        caller: Caller,
        preset: str,
        options: Mapping[str, str],
        target: int,
        seat: int | None,
        bot_seats: Sequence[int],
        clock: ClockChoice = NO_CLOCK,
        bot_levels: Mapping[int, str] | None = None,
    ) -> tuple[MatchSummary, str]:
        return self.lobby.create(
            caller.player, preset, options, target, seat, bot_seats, clock, bot_levels
        )

    def join_match(
        self, caller: Caller, invite_code: str, seat: int | None
    ) -> tuple[MatchSummary, int]:
        return self.lobby.join(caller.player, invite_code, seat)

    def fill_seat_with_bot(
        self, caller: Caller, match_id: str, seat: int | None, level: str = ""
    ) -> MatchSummary:
        return self.lobby.fill_with_bot(caller.player, match_id, seat, level)

    def start_match(self, caller: Caller, match_id: str) -> MatchSummary:
        return self.lobby.start(caller.player, match_id)

    def abort_match(self, caller: Caller, match_id: str) -> MatchSummary:
        return self.lobby.abort(caller.player, match_id)

    def set_cover(self, caller: Caller, match_id: str, covered: bool) -> MatchSummary:
        return self.absence.set_cover(caller.player, match_id, covered)

    def set_orders(
        self,
        caller: Caller,
        match_id: str,
        *,
        draw: bool | None = None,
        answer: str | None = None,
        follow_default: bool = False,
    ) -> Seat:
        """The caller's standing orders in one match (``server.service.orders``)."""
        return self.orders.set(
            caller.player, match_id, draw=draw, answer=answer, follow_default=follow_default
        )

    def recover(
        self, caller: Caller, match_id: str, entries: Sequence[RecoveredEntry]
    ) -> tuple[int, int]:
        """Entries a restore lost, sent back by a seated player's client (``Play.recover``)."""
        return self.play.recover(caller.player, match_id, entries)

    def settings(self, caller: Caller) -> Settings:
        return self._with_vacation_left(self.preferences.get(caller.player))

    def update_settings(self, caller: Caller, change: SettingsChange) -> Settings:
        """Apply ``change``, all or nothing: a vacation starts or ends in a request of its own
        (it changes the player's matches), the other settings together in one transaction."""
        if change.vacation is not None:
            if dataclasses.replace(change, vacation=None) != SettingsChange():
                raise InvalidRequestError("start or end a vacation in a request of its own")
            self.absence.set_vacation(caller.player, change.vacation)
            return self.settings(caller)
        return self._with_vacation_left(self.preferences.update(caller.player, change))

    def _with_vacation_left(self, settings: Settings) -> Settings:
        left = self.absence.vacation_left(settings, self.ctx.clock())
        return dataclasses.replace(settings, vacation_left_ms=left)

    def list_my_matches(
        self, caller: Caller, page_size: int = 0, page_token: str = "", active_only: bool = False
    ) -> tuple[list[MatchSummary], str]:
        """A page of the caller's matches (active first) and the next page's token."""
        return self.lobby.list_mine(caller.player, page_size, page_token, active_only)

    # -- play ---------------------------------------------------------------------------------

    def get_view(self, caller: Caller, match_id: str) -> MatchView:
        return self.play.view(caller.player, match_id)

    def submit(
        self, payload: bytes, signature: bytes, caller: Caller | None = None
    ) -> tuple[Receipt, MatchView | None]:
        """A signed move; the new view only for the seat's own player, signed in (``caller``)."""
        return self.play.submit(payload, signature, _viewer(caller))

    def get_moves(self, caller: Caller, match_id: str) -> tuple[int, tuple[MoveGroup, ...]]:
        return self.play.moves(caller.player, match_id)

    def get_history(self, caller: Caller, match_id: str, after_seq: int) -> History:
        return self.play.history(caller.player, match_id, after_seq)

    def watch(
        self, caller: Caller, match_ids: list[str], token: str = ""
    ) -> tuple[Subscription, list[Change]]:
        """Changes of these matches (none: all the caller's) while ``token`` stays valid."""
        return self.play.watch(caller.player, match_ids, token_hash(token) if token else b"")

    def notifications_after(
        self, caller: Caller, after_id: int
    ) -> tuple[int, list[tuple[Notification, str]]]:
        """A page of the caller's notifications after ``after_id``, with their sentence, and
        the last id it covered."""
        return self.outbox.log(caller.player.id, after_id)


def _viewer(caller: Caller | None) -> int | None:
    return None if caller is None else caller.player.id
