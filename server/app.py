"""Assembling a server from its three rooms: the store (the database, migrated), the
service (keys, the wings: people, mail, play with its bots and deadlines, news, live with the
change feed) and the edge (gRPC, SMTP in, and the mail and webhook senders the outbox is
handed).

``open_app(config)`` does everything and returns an ``App`` that starts and stops as a unit.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version

from server.config import ServerConfig
from server.edge.grpc_server import GrpcServer, create_server
from server.edge.mail_out import http_post, smtp_sender
from server.edge.servicer import CanastaServicer
from server.edge.smtp import ListenerLimits, SmtpListener
from server.edge.tables import mail_table
from server.keys import load_keys
from server.service.context import ServiceContext
from server.service.live.feed import ChangeFeed
from server.service.live.streams import Notifier
from server.service.periodic import Periodic
from server.service.play.bots import BotRunner, Chooser
from server.service.wings import CanastaService
from server.store.backup import BackupError, scheduled_backup
from server.store.db import Database
from server.store.migrations import migrate

log = logging.getLogger(__name__)
BACKUP_LOOK_SECONDS = 60.0
"""How often a process looks whether a scheduled backup is due (``backup_dir``)."""


def package_version() -> str:
    try:
        return version("canasta")
    except PackageNotFoundError:  # running from a checkout that was never installed
        return "0+unknown"


@dataclass
class App:
    """A running server and everything it owns."""

    config: ServerConfig
    db: Database
    service: CanastaService
    bots: BotRunner
    server: GrpcServer
    servicer: CanastaServicer
    port: int
    feed: ChangeFeed
    """Brings changes stored by other processes on the same database to this one's watchers."""
    metrics_port: int = 0
    """Where ``/metrics`` is served once started (0: off)."""
    mail_listener: SmtpListener | None = None
    """The SMTP listener for moves by mail, when ``smtp_listen`` is set."""
    backups: Periodic | None = field(default=None, init=False)
    """Scheduled backups, when ``backup_dir`` is set (``backup_round``)."""

    def backup_round(self) -> None:
        """Take a scheduled backup if one is due (``server.store.backup.scheduled_backup``)."""
        config = self.config
        assert config.backup_dir is not None
        try:
            taken = scheduled_backup(
                config.db_url,
                config.backup_dir,
                config.backup_every_hours * 3_600_000,
                config.backup_keep,
                self.service.ctx.clock(),
            )
        except (BackupError, OSError) as exc:  # logged; the next round tries again
            log.error("scheduled backup failed: %s", exc)
            return
        if taken is not None:
            log.info("scheduled backup: %s", taken.line())

    def start(self) -> None:
        if self.config.metrics_listen:
            try:
                self.metrics_port = self.service.ctx.metrics.serve(
                    self.config.metrics_listen, self.config.handshake_seconds
                )
            except OSError as exc:
                raise OSError(
                    f"cannot serve the metrics on {self.config.metrics_listen}: {exc.strerror}"
                ) from None
        self.server.start()
        self.bots.start()
        self.feed.start()
        self.service.absence.rounds.start()
        self.service.outbox.rounds.start()
        self.service.ladder.rounds.start()
        if self.config.backup_dir is not None:
            self.backups = Periodic(
                "canasta-backup", lambda: BACKUP_LOOK_SECONDS, self.backup_round
            )
            self.backups.start()
        if self.mail_listener is not None:
            try:
                self.mail_listener.start()
            except OSError as exc:
                raise OSError(
                    f"cannot listen for mail on {self.config.smtp_listen}: {exc.strerror or exc}"
                ) from None

    def stop(self, grace: float | None = 2.0) -> None:
        self.servicer.stop_streams()
        if self.mail_listener is not None:
            self.mail_listener.stop()
        self.server.stop(grace)
        if self.backups is not None:
            self.backups.stop()
        self.service.absence.rounds.stop()
        self.service.ladder.rounds.stop()
        self.service.outbox.stop()
        self.feed.stop()
        self.bots.stop()
        self.service.ctx.metrics.stop()
        self.db.dispose()


def open_service(
    config: ServerConfig, chooser: Chooser | None = None
) -> tuple[Database, CanastaService, BotRunner]:
    db = Database(config.db_url, cache_kib=config.sqlite_cache_kib)
    migrate(db)
    notifier = Notifier()
    ctx = ServiceContext(db=db, keys=load_keys(config.data_dir), config=config, notifier=notifier)
    db.on_commit = ctx.metrics.commit_seconds.observe
    ctx.metrics.read_from_database(lambda: _stored_counts(ctx))
    service = CanastaService(
        ctx, notifier, mail_table, smtp_sender(config), http_post, package_version()
    )
    return db, service, BotRunner(ctx, service.play, chooser)


def _stored_counts(ctx: ServiceContext) -> dict[str, dict[str, int]]:
    with ctx.db.read() as session:
        return ctx.repo(session).stored_counts()


def open_app(config: ServerConfig, chooser: Chooser | None = None) -> App:
    """Open everything and bind the port; call ``start()`` to serve."""
    db, service, bots = open_service(config, chooser)
    server, port, servicer = create_server(config, service)
    listener = None
    if config.smtp_listen:
        try:
            listener = SmtpListener(
                service.mail, config.smtp_listen, config.mail_from, ListenerLimits.of(config)
            )
        except ValueError as exc:
            raise OSError(str(exc)) from None  # ``serve`` reports it in one line
    feed = ChangeFeed(service.ctx, service.live.notifier)
    return App(config, db, service, bots, server, servicer, port, feed, mail_listener=listener)
