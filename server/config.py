"""Server configuration: defaults, then a TOML file, then ``CANASTA_SERVER_*`` environment.

The file is ``--config PATH``, else ``$CANASTA_SERVER_CONFIG``, else ``server.toml`` in the
platform's user config directory when it exists. Keys in the file are the field names below;
each has an environment variable ``CANASTA_SERVER_<FIELD NAME IN CAPITALS>``, which wins.

Example ``server.toml``::

    database_url = "postgresql+psycopg://canasta@localhost/canasta"
    listen = "0.0.0.0:7437"
    tls_cert = "/etc/canasta/cert.pem"
    tls_key = "/etc/canasta/key.pem"
    registration = "invite"
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import platformdirs

APP_NAME = "canasta-server"
ENV_PREFIX = "CANASTA_SERVER_"
REGISTRATION_MODES = ("open", "invite")
SMTP_SECURITY = ("starttls", "tls", "none")
LOG_FORMATS = ("text", "json")
BOT_LEVELS = ("easy", "normal", "strong")
"""``shared.bots.LEVELS`` (not imported here: the health check loads settings, fast)."""


class ConfigFileError(ValueError):
    """The configuration cannot be used; the message says which setting and why."""


def default_data_dir() -> Path:
    return platformdirs.user_data_path(APP_NAME)


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """Everything an operator can set. Paths may be relative to the working directory."""

    data_dir: Path = dataclasses.field(default_factory=default_data_dir)
    """Where the server's keys live (and the default SQLite database)."""
    database_url: str = ""
    """A SQLAlchemy URL; empty means ``sqlite:///<data_dir>/canasta.db``."""
    listen: str = "127.0.0.1:7437"
    """``host:port`` to bind; port 0 picks a free port (printed at start)."""
    tls_cert: Path | None = None
    tls_key: Path | None = None
    """PEM files; both or neither. Without them the server speaks plaintext gRPC."""
    registration: str = "open"
    """``open``: any key may register; ``invite``: only with an invitation code."""
    max_message_bytes: int = 1 << 20
    """Largest request or response message, both directions."""
    token_ttl_seconds: int = 3600
    challenge_ttl_seconds: int = 120
    max_workers: int = 128
    """Worker threads per server process for the calls' bodies on PostgreSQL (on SQLite they
    run on the event loop; Watch streams hold none)."""
    history_page: int = 500
    """Entries per GetHistory response."""
    feed_poll_ms: int = 250
    """While a Watch stream is open, how often this process looks in the database for changes
    stored by other server processes on the same (PostgreSQL) database, and whether the open
    streams' tokens are still valid."""
    log_level: str = "INFO"
    log_format: str = "text"
    """``text``: one plain line per record; ``json``: one JSON object per line (time, level,
    logger, message), for log collectors."""
    metrics_listen: str = ""
    """``host:port`` of the Prometheus metrics endpoint (``/metrics``); empty: off. Keep it on
    a private address: it tells how busy the server is, not what anyone plays."""
    limit_anonymous_per_minute: int = 120
    """Calls that need no token and use the database (register, challenge, authenticate) a
    minute from one peer address (an IPv6 one by its /64), and as many bearer tokens that
    turn out not valid (past that, a token that is not valid is refused as a flood; a valid
    one is still served). 0: no limit."""
    limit_writes_per_minute: int = 600
    """Writes (moves, creating, joining, filling and starting matches) a minute by one
    player, or from one peer address for a move sent without a token. 0: no limit."""
    limit_reads_per_minute: int = 300
    """Reads (views, moves, history, the match list, settings, opening a Watch stream) a
    minute by one player. 0: no limit."""
    max_connections: int = 1000
    """Connections open at once on the gRPC port; past it a new one is closed at once."""
    max_connections_per_peer: int = 32
    """Connections open at once on the gRPC port from one peer address (an IPv6 one by its
    /64). 0: no cap per address (behind a load balancer, whose address every connection
    has); then the gRPC server listens on ``listen`` itself, without the gate
    (``server.edge.gate``)."""
    idle_connection_seconds: int = 300
    """A gRPC connection with no call open for this long is closed (a Watch stream is a call;
    a client reconnects by itself when it needs to)."""
    handshake_seconds: float = 10.0
    """How long a new connection may take to say what it wants (on the gRPC port the TLS and
    HTTP/2 handshake, on the metrics endpoint each read of the request) before it is closed."""
    limit_live_challenges: int = 8
    """Unanswered, unexpired challenges one key may hold at once."""
    limit_open_matches: int = 100
    """Matches not yet finished that one player may sit in (create or join)."""
    limit_watch_streams: int = 16
    """Watch streams one player may hold open at once on one server process."""
    deadline_sweep_seconds: float = 60.0
    """How often this process looks for overdue turns of timed matches
    (``server.service.play.absence``); a turn is handled at most this long after its deadline."""
    waiting_match_days: int = 30
    """A match still waiting for players this many days after it was created is abandoned
    (1 to 3650)."""
    vacation_days_per_year: int = 30
    """Days of vacation each player may take in a calendar year (UTC); their clocks stand
    still meanwhile. 0: no vacations."""
    backup_dir: Path | None = None
    """SQLite only: take an online backup (as ``canasta-server backup``) into this directory
    every ``backup_every_hours``, keeping the newest ``backup_keep``. Unset: no scheduled
    backups (PostgreSQL has its own tools)."""
    backup_every_hours: int = 6
    """Hours between scheduled backups (1 to 8760)."""
    backup_keep: int = 14
    """Scheduled backups kept in ``backup_dir``; older ones are deleted (1 to 10000)."""
    notification_retention_days: int = 90
    """Notifications delivered (or given up) this many days ago are deleted (1 to 3650): a
    player's log of news, which Watch resumes from, reaches back this far, and storage stays
    bounded."""
    ladder_period_days: int = 7
    """The club ladder's rating period in days (1 to 365): a Glicko-2 period, whose results
    settle into players' ratings when it ends (``server.service.ladder``)."""
    match_cache_size: int = 512
    """Matches in play whose copy and engine state this process keeps in memory, the most
    recently used (16 to 1000000; their hands' records twice as many; about 13 KiB a match in
    all, which the process keeps once it has used it). A finished match is dropped at once; one
    not kept is read from the database when asked for."""
    sqlite_cache_kib: int = 512
    """SQLite's page cache for each of this process's connections to its database, in KiB
    (64 to 1048576; SQLite's own default is 2000). It fills as the database grows and is never
    given back while the connection is open; a page not in it is read from the operating
    system's file cache."""
    test_clock_speed: int = 1
    """For trying clocks out on a test server: every time control runs this many times faster
    (1440: a day per move lasts a minute), reminders and bank with it (1 to 100000). Refused
    unless ``allow_test_clock`` is also set; announced in the start banner and in the server's
    info, so no player takes such a server for a real one."""
    allow_test_clock: bool = False
    """Let ``test_clock_speed`` above 1 take effect (a test server only)."""
    reminder_hours: str = "24,2"
    """Remind the player to move this many hours before their deadline (comma-separated, at
    most 4, each 1 to 336; empty: no reminders)."""
    smtp_host: str = ""
    """The mail server notifications go out through; empty: no mail is sent."""
    smtp_port: int = 587
    smtp_security: str = "starttls"
    """``starttls`` (upgrade a plain connection), ``tls`` (TLS from the start, port 465) or
    ``none`` (only for a mail server on this host or in tests)."""
    smtp_user: str = ""
    smtp_password: str = ""
    mail_from: str = ""
    """The From address of notification mails (required with ``smtp_host``); replies to them,
    and moves by mail, come back to it (``mail-in`` or ``smtp_listen``)."""
    smtp_listen: str = ""
    """host:port of the server's own SMTP listener for mail to ``mail_from`` (moves by mail,
    ``server.edge.smtp``); empty: none (mail can still come in through ``mail-in``)."""
    limit_smtp_connections: int = 64
    """Connections the SMTP listener holds at once, from everyone (1 to 10000); one more is
    greeted with 421 and closed."""
    limit_smtp_connections_per_peer: int = 8
    """Connections the SMTP listener holds at once from one peer address, an IPv6 one by its
    /64 (1 to 1000)."""
    limit_smtp_mails_per_minute: int = 300
    """Mails a minute the SMTP listener takes from everyone (0: no limit; at most 100000);
    past it, a mail gets 450 and the sending server tries again later."""
    limit_smtp_mails_per_minute_per_peer: int = 30
    """Mails a minute the SMTP listener takes from one peer address (0: no limit; at most
    100000)."""
    outbox_poll_ms: int = 1000
    """How often this process looks for notifications to deliver."""
    digest_hour: int = 8
    """When daily digests go out, in each player's own time zone (0 to 23)."""
    webhook_allow_private: bool = False
    """Let webhooks reach loopback, private and link-local addresses (off: a player could
    otherwise make the server call services on its own network)."""
    outbox_workers: int = 4
    """Notifications delivered at once per lane (players with a webhook, players without), one
    player per worker: a webhook that never answers holds one worker, not the outbox (1 to 64)."""
    limit_code_mails_per_address: int = 3
    """Verification-code mails one address may be sent in an hour, whoever asks (1 to 100)."""
    limit_code_mails_per_hour: int = 60
    """Verification-code mails the server sends in an hour in all (1 to 100000)."""
    bot_cover_level: str = "normal"
    """The level of the bot that covers an absent player (``easy``, ``normal`` or
    ``strong``); a bot seat's own level is chosen when the match is created."""
    bot_think_seconds: float = 1.0
    """CPU seconds a ``strong`` bot may think about one decision (0.01 to 60)."""
    bot_workers: int = 1
    """Bot decisions thought about at once, each in a process of its own (1 to 64): the
    server's other calls never wait for a bot, and at most this many cores think."""

    def __post_init__(self) -> None:
        if self.registration not in REGISTRATION_MODES:
            raise ConfigFileError(
                f"registration must be one of {', '.join(REGISTRATION_MODES)}, "
                f"not {self.registration!r}"
            )
        if (self.tls_cert is None) != (self.tls_key is None):
            raise ConfigFileError("tls_cert and tls_key go together: set both or neither")
        for name in _POSITIVE:
            if getattr(self, name) <= 0:
                raise ConfigFileError(f"{name} must be positive")
        if self.max_workers < 4 or self.history_page < 1:
            raise ConfigFileError("max_workers must be 4 or more and history_page positive")
        for name in _NOT_NEGATIVE:
            if getattr(self, name) < 0:
                raise ConfigFileError(f"{name} must be 0 (no limit) or more")
        if self.database_url:
            _check_database_url(self.database_url)
        if self.log_format not in LOG_FORMATS:
            raise ConfigFileError(
                f"log_format must be one of {', '.join(LOG_FORMATS)}, not {self.log_format!r}"
            )
        for name in ("metrics_listen", "smtp_listen"):
            host, _, port = getattr(self, name).rpartition(":")
            if getattr(self, name) and (
                not host or not port.isdigit() or not 0 <= int(port) <= 65535
            ):
                raise ConfigFileError(f"{name} is host:port (port 0 to 65535), or empty")
        if self.smtp_listen and "@" not in self.mail_from:
            raise ConfigFileError("smtp_listen needs mail_from: the address it receives mail for")
        if self.smtp_security not in SMTP_SECURITY:
            raise ConfigFileError(
                f"smtp_security must be one of {', '.join(SMTP_SECURITY)}, "
                f"not {self.smtp_security!r}"
            )
        if self.smtp_host and "@" not in self.mail_from:
            raise ConfigFileError("mail_from (an e-mail address) is needed with smtp_host")
        if not 0 <= self.digest_hour <= 23 or not 1 <= self.smtp_port <= 65535:
            raise ConfigFileError("digest_hour must be 0 to 23 and smtp_port 1 to 65535")
        if not 10 <= self.outbox_poll_ms <= 3_600_000:
            raise ConfigFileError("outbox_poll_ms must be 10 to 3600000")
        reminder_ms(self.reminder_hours)
        if self.backup_dir is not None and not self.db_url.startswith("sqlite"):
            raise ConfigFileError(
                "backup_dir takes scheduled backups of a SQLite database; for PostgreSQL use "
                "pg_dump on a schedule (docs/operating.md: Backups)"
            )
        if self.test_clock_speed != 1 and not self.allow_test_clock:
            raise ConfigFileError(
                "test_clock_speed runs every player's clock faster: a test server only; "
                "set allow_test_clock = true as well to mean it"
            )
        if not 1 <= self.waiting_match_days <= 3650:
            raise ConfigFileError("waiting_match_days must be 1 to 3650")
        if not 0 <= self.vacation_days_per_year <= 366:
            raise ConfigFileError("vacation_days_per_year must be 0 to 366")
        if not 0.01 <= self.deadline_sweep_seconds <= 3600:
            raise ConfigFileError("deadline_sweep_seconds must be 0.01 to 3600")
        for name in ("limit_live_challenges", "limit_open_matches", "limit_watch_streams"):
            if getattr(self, name) < 1:
                raise ConfigFileError(f"{name} must be positive")
        if self.bot_cover_level not in BOT_LEVELS:
            raise ConfigFileError(
                f"bot_cover_level must be one of {', '.join(BOT_LEVELS)}, "
                f"not {self.bot_cover_level!r}"
            )
        for name, (low, high) in _RANGES.items():
            if not low <= getattr(self, name) <= high:
                raise ConfigFileError(f"{name} must be {low} to {high}")

    @property
    def reminders_ms(self) -> tuple[int, ...]:
        """``reminder_hours`` in milliseconds of the clocks (``hour_ms``), longest first."""
        return tuple(ms // self.test_clock_speed for ms in reminder_ms(self.reminder_hours))

    @property
    def hour_ms(self) -> int:
        """How long an hour of a time control lasts on this server: an hour, except on a
        test server whose clocks run ``test_clock_speed`` times faster."""
        return 3_600_000 // self.test_clock_speed

    @property
    def db_url(self) -> str:
        """The database URL in force (the SQLite default under ``data_dir`` if none is set)."""
        if self.database_url:
            return self.database_url
        return f"sqlite:///{self.data_dir / 'canasta.db'}"

    @property
    def tls(self) -> bool:
        return self.tls_cert is not None


def _check_database_url(url: str) -> None:
    """A URL SQLAlchemy can read; for SQLite, a plain file path (the server keeps one lock file
    beside it, and ``restore`` replaces it: an in-memory database or a ``file:`` URI is
    refused)."""
    from sqlalchemy.engine import make_url  # here: the health check loads settings, fast
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
    except ArgumentError:
        raise ConfigFileError(f"database_url is not a database URL: {url!r}") from None
    if parsed.get_backend_name() != "sqlite":
        return
    name = parsed.database or ""
    if name in ("", ":memory:") or name.startswith("file:") or parsed.query.get("uri"):
        raise ConfigFileError(
            "database_url: SQLite takes a file path (sqlite:///PATH), not memory or a file: URI"
        )


def reminder_ms(text: str) -> tuple[int, ...]:
    """A ``reminder_hours`` setting in milliseconds, longest first (``ConfigFileError`` if it
    is not up to 4 whole numbers of hours, 1 to 336)."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if len(parts) > 4 or not all(p.isdigit() and 1 <= int(p) <= 336 for p in parts):
        raise ConfigFileError("reminder_hours is up to 4 whole numbers of hours, 1 to 336")
    return tuple(sorted((int(p) * 3_600_000 for p in parts), reverse=True))


_FIELDS = {f.name: f for f in dataclasses.fields(ServerConfig)}
_PATHS = {"data_dir", "tls_cert", "tls_key", "backup_dir"}
_INTS = {"max_message_bytes", "token_ttl_seconds", "challenge_ttl_seconds", "max_workers",
         "history_page", "feed_poll_ms", "limit_anonymous_per_minute",
         "limit_writes_per_minute", "limit_reads_per_minute", "limit_live_challenges",
         "limit_open_matches", "limit_watch_streams", "max_connections",
         "max_connections_per_peer", "idle_connection_seconds", "smtp_port",
         "outbox_poll_ms", "digest_hour", "vacation_days_per_year",
         "waiting_match_days", "outbox_workers", "limit_code_mails_per_address",
         "limit_code_mails_per_hour", "limit_smtp_connections",
         "limit_smtp_connections_per_peer", "limit_smtp_mails_per_minute",
         "limit_smtp_mails_per_minute_per_peer", "test_clock_speed",
         "notification_retention_days", "backup_every_hours", "backup_keep",
         "ladder_period_days", "bot_workers", "match_cache_size",
         "sqlite_cache_kib"}  # fmt: skip
_FLOATS = {"deadline_sweep_seconds", "handshake_seconds", "bot_think_seconds"}
_BOOLS = {"webhook_allow_private", "allow_test_clock"}
_NOT_NEGATIVE = ("limit_anonymous_per_minute", "limit_writes_per_minute", "limit_reads_per_minute")
_RANGES = {
    "max_connections": (1, 1_000_000),
    "max_connections_per_peer": (0, 1_000_000),
    "idle_connection_seconds": (1, 86_400),
    "handshake_seconds": (0.1, 300),
    "outbox_workers": (1, 64),
    "limit_code_mails_per_address": (1, 100),
    "limit_code_mails_per_hour": (1, 100_000),
    "limit_smtp_connections": (1, 10_000),
    "limit_smtp_connections_per_peer": (1, 1_000),
    "limit_smtp_mails_per_minute": (0, 100_000),
    "limit_smtp_mails_per_minute_per_peer": (0, 100_000),
    "test_clock_speed": (1, 100_000),
    "notification_retention_days": (1, 3650),
    "backup_every_hours": (1, 8760),
    "backup_keep": (1, 10_000),
    "ladder_period_days": (1, 365),
    "bot_think_seconds": (0.01, 60),
    "bot_workers": (1, 64),
    "match_cache_size": (16, 1_000_000),
    "sqlite_cache_kib": (64, 1_048_576),
}
"""Settings with a lowest and a highest value."""
_POSITIVE = ("max_message_bytes", "token_ttl_seconds", "challenge_ttl_seconds", "feed_poll_ms")


def _convert(name: str, value: Any, source: str) -> Any:
    if name in _PATHS:
        return Path(str(value)).expanduser() if str(value) else None
    if name in _INTS:
        try:
            return int(value)
        except (TypeError, ValueError):
            raise ConfigFileError(f"{name} ({source}) must be a whole number") from None
    if name in _BOOLS:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("true", "1", "yes", "on"):
            return True
        if text in ("false", "0", "no", "off"):
            return False
        raise ConfigFileError(f"{name} ({source}) must be true or false")
    if name in _FLOATS:
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ConfigFileError(f"{name} ({source}) must be a number") from None
        if number != number:  # NaN
            raise ConfigFileError(f"{name} ({source}) must be a number")
        return number
    if not isinstance(value, str):
        raise ConfigFileError(f"{name} ({source}) must be text")
    return value


def default_config_path() -> Path:
    return platformdirs.user_config_path(APP_NAME) / "server.toml"


def load_config(
    path: Path | None = None,
    env: Mapping[str, str] | None = None,
    **overrides: Any,
) -> ServerConfig:
    """Defaults < file < environment < ``overrides`` (command-line options, ``None`` skipped)."""
    env = os.environ if env is None else env
    values: dict[str, Any] = {}
    if path is None and env.get(ENV_PREFIX + "CONFIG"):
        path = Path(env[ENV_PREFIX + "CONFIG"])
    if path is None and default_config_path().is_file():
        path = default_config_path()
    if path is not None:
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigFileError(f"cannot read the config file {path}: {exc.strerror}") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigFileError(f"the config file {path} is not valid TOML: {exc}") from None
        for name, value in data.items():
            if name not in _FIELDS:
                raise ConfigFileError(f"unknown setting {name!r} in {path}")
            values[name] = _convert(name, value, str(path))
    for name in _FIELDS:
        key = ENV_PREFIX + name.upper()
        if key in env:
            values[name] = _convert(name, env[key], key)
    for name, value in overrides.items():
        if name not in _FIELDS:
            raise ConfigFileError(f"unknown setting {name!r}")
        if value is not None:
            values[name] = _convert(name, value, "command line")
    return ServerConfig(**values)
