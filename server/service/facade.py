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
``version`` is the seq of its last entry; the first entry's ``prev_hash`` is
``genesis_hash(match_id)``. Bot seats sign with the server's bot key, never its receipt key.

Fair deals (commit-reveal)
--------------------------
Exactly, for hand ``h`` (1, 2, ...) of match ``m``:

1. **Commit.** The moment the match starts (for ``h = 1``) or the move that ends hand ``h-1``
   is stored (for ``h > 1``), in that same transaction, the server draws a fresh 32-byte
   ``secret_h`` from the OS CSPRNG and publishes ``C_h = commitment(secret_h, m, h)``
   (``MatchView.deal_commitment``, ``HandRecord.commitment``). Nothing about hand ``h``'s
   deck exists before this point, and nothing after it can change ``secret_h``.
2. **Cut.** The match then waits in the engine's ``deal`` phase for one signed move from the
   *cutting seat*: the hand's dealer if a human holds it, else the next human seat clockwise.
   Its payload is ``actions = ["deal"]`` with ``deal_commitment = C_h`` (the server refuses
   any other commitment), so the cutter's signature provably came after ``C_h`` was public.
   It is an ordinary log entry (seq, prev_hash, receipt) with ``hand_number = h``.
3. **Deal.** ``seed = deal_seed(secret_h, m, h, [sig])`` where ``sig`` is the 64-byte
   signature of that deal entry (the hand's only contribution);
   ``perm = shuffle(len(D), seed)`` where ``D = shared.rules.deck(config.decks,
   config.jokers_per_deck)``; the deck order (top first) is ``[D[i] for i in perm]`` and the
   hand is ``shared.rules.deal_hand(state, order)``. The first dealer is
   ``new_match(config, seed=m)``'s.
4. **Reveal.** In the transaction of the move that ends hand ``h``, ``secret_h`` is marked
   revealed: ``GetHistory`` returns it from then on (never before), and anyone can check
   ``C_h`` and recompute the deal.

Why the cut and not the players' ordinary moves: the server knows ``secret_h`` and controls
bot seats, so any contribution that it could influence or predict after committing would let it
choose among deals (e.g. by a bot ending the previous hand now or later). A cutter's Ed25519
signature is unpredictable without the cutter's private key, it is made after ``C_h`` is fixed,
and it commits to the whole history through ``prev_hash``. What remains to the server is to
refuse or delay a cut, which players see, not to choose a deal; and, as the dealer, it can see
every hand (the README's trust model).
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
    ServerInfo,
    Settings,
)
from server.service.absence import Absence
from server.service.accounts import Accounts, Caller, Token, token_hash
from server.service.clocks import NO_CLOCK, ClockChoice
from server.service.context import ServiceContext
from server.service.errors import InvalidRequestError
from server.service.lobby import Lobby
from server.service.notify import Subscription
from server.service.outbox import Outbox
from server.service.play import Play
from server.service.preferences import Preferences, SettingsChange
from shared.rules import MoveGroup


class CanastaService:
    def __init__(self, ctx: ServiceContext, version: str = "0+unknown") -> None:
        self.ctx = ctx
        self.version = version
        self.accounts = Accounts(ctx)
        self.lobby = Lobby(ctx)
        self.play = Play(ctx)
        self.absence = Absence(ctx)
        self.preferences = Preferences(ctx)
        self.outbox = Outbox(ctx)

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
    ) -> tuple[MatchSummary, str]:
        return self.lobby.create(caller.player, preset, options, target, seat, bot_seats, clock)

    def join_match(
        self, caller: Caller, invite_code: str, seat: int | None
    ) -> tuple[MatchSummary, int]:
        return self.lobby.join(caller.player, invite_code, seat)

    def fill_seat_with_bot(self, caller: Caller, match_id: str, seat: int | None) -> MatchSummary:
        return self.lobby.fill_with_bot(caller.player, match_id, seat)

    def start_match(self, caller: Caller, match_id: str) -> MatchSummary:
        return self.lobby.start(caller.player, match_id)

    def abort_match(self, caller: Caller, match_id: str) -> MatchSummary:
        return self.lobby.abort(caller.player, match_id)

    def set_cover(self, caller: Caller, match_id: str, covered: bool) -> MatchSummary:
        return self.absence.set_cover(caller.player, match_id, covered)

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
