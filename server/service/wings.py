"""The service's wings, built and wired once, held in one object that the edge calls.

The edge calls a wing directly: ``service.lobby.create(player, ...)``,
``service.play.submit(...)``, ``service.live.watch(...)``. There is no facade of one-line
pass-throughs in between: such a corridor repeated every wing's signature a second time, told
a reader nothing the servicer's line does not, and had to change with each call. What stays
here is what belongs to no one wing:

- building the wings and handing each the others it needs (the outbox renders a table with
  play's view of it; mail in plays through play; watching holds the live notifier);
- the server's description of itself (``server_info``);
- a player's settings, which join the people wing's preferences with the play wing's vacation
  (``settings``, ``update_settings``).

The wings, each in a package of ``server.service`` (the package docstring draws the map):
``people`` (accounts, preferences, admin), ``mail`` (moves by mail), ``play`` (lobby, play,
absence, bots, standing orders, table talk), ``news`` (what causes a notification, its words,
reply codes, the outbox), ``live`` (Watch streams, the change feed).
"""

from __future__ import annotations

import dataclasses

from server.domain import Player, ServerInfo, Settings
from server.service.context import ServiceContext
from server.service.errors import InvalidRequestError
from server.service.live.streams import Notifier
from server.service.live.watch import Watching
from server.service.mail.mailin import MailIn
from server.service.news.outbox import MailSender, Outbox, WebhookPoster
from server.service.news.words import TableText
from server.service.people.accounts import Accounts
from server.service.people.ladder import Ladder
from server.service.people.preferences import Preferences, SettingsChange
from server.service.play.absence import Absence
from server.service.play.lobby import Lobby
from server.service.play.orders import Orders
from server.service.play.play import Play
from server.service.play.talk import TalkService


class CanastaService:
    """The wings of one server process, over one context (``ServiceContext``)."""

    def __init__(
        self,
        ctx: ServiceContext,
        notifier: Notifier,
        table_text: TableText,
        send_mail: MailSender,
        post: WebhookPoster,
        version: str = "0+unknown",
    ) -> None:
        """``notifier`` is the one ``ctx`` publishes to (``ctx.notifier``), given here as
        itself because watching subscribes to it. ``table_text``, ``send_mail`` and ``post``
        are the edge's (``server.edge.tables``, ``server.edge.mail_out``): the outbox renders
        and sends through them."""
        self.ctx = ctx
        self.version = version
        self.accounts = Accounts(ctx)
        self.lobby = Lobby(ctx)
        self.play = Play(ctx)
        self.absence = Absence(ctx)
        self.preferences = Preferences(ctx)
        self.orders = Orders(ctx)
        self.talk = TalkService(ctx)
        """Table talk: what seated players say to the whole table, signed and chained."""
        self.live = Watching(ctx, notifier)
        self.outbox = Outbox(ctx, self.play.view_for, table_text, send_mail, post)
        self.mail = MailIn(ctx, self.play)
        self.ladder = Ladder(ctx)
        """Moves that come as text or mail (armored blocks), through ``play.submit``."""

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

    def settings(self, player: Player) -> Settings:
        return self._with_vacation_left(self.preferences.get(player))

    def update_settings(self, player: Player, change: SettingsChange) -> Settings:
        """Apply ``change``, all or nothing: a vacation starts or ends in a request of its own
        (it changes the player's matches), the other settings together in one transaction."""
        if change.vacation is not None:
            if dataclasses.replace(change, vacation=None) != SettingsChange():
                raise InvalidRequestError("start or end a vacation in a request of its own")
            self.absence.set_vacation(player, change.vacation)
            return self.settings(player)
        return self._with_vacation_left(self.preferences.update(player, change))

    def _with_vacation_left(self, settings: Settings) -> Settings:
        left = self.absence.vacation_left(settings, self.ctx.clock())
        return dataclasses.replace(settings, vacation_left_ms=left)
