"""The server's own SMTP listener: mail to the server's address, straight into ``MailIn``.

For an operator who points a mail domain or subdomain (its MX record) at the server, instead
of piping mail to ``canasta-server mail-in``. It is a receiving end only, never a relay, and
it is open to the whole Internet, so everything a peer can make it hold has a bound:

* only mail *to* the server's own address (``mail_from``) is taken; any other recipient is
  refused at ``RCPT TO`` (550), and one recipient per mail;
* a mail larger than ``MAX_MAIL_BYTES`` is refused by the SMTP layer (552) before it is held;
* connections: at most ``ListenerLimits.connections`` at once, and
  ``connections_per_peer`` from one peer address (an IPv6 one by its /64); one more is
  greeted with ``421`` and closed at once;
* a rate: each mail (``MAIL FROM``, before any of it is sent) spends one of
  ``mails_per_minute_per_peer`` a minute for its peer address and one of ``mails_per_minute``
  for everyone; past it, the mail gets ``450`` (a sending server keeps it and tries again
  later);
* time: a session without a command for ``idle_seconds`` is closed, and every session after
  ``session_seconds`` whatever it does; one session may issue at most ``COMMANDS_PER_SESSION``
  of each command, so a slow or chatty client holds nothing for long;
* the log: a refused peer gets one line a minute (with how many refusals it had since), not
  one per connection; ``aiosmtpd``'s own line per connection and command is silenced;
* every mail that was taken is answered ``250`` whatever became of it (moved, refused by a
  mail of the server's own to a verified address, or ignored): an SMTP refusal would make the
  sending server bounce to the mail's sender, who may be forged. ``451`` (try later) only when
  the service itself failed.

The mail's bytes go to ``MailIn.receive`` on a worker thread (it is blocking database work),
the same call ``mail-in`` makes, with the envelope sender: it reads the headers, and the body
only of a player's mail. ``aiosmtpd`` runs the protocol on an event loop of its own; the
counts of connections live on that loop alone.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter, OrderedDict
from dataclasses import dataclass
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP

from server.config import ServerConfig
from server.edge.limits import MAX_TRACKED, RateLimit, peer_host
from server.service.errors import LimitExceededError
from server.service.mail.mailin import MAX_MAIL_BYTES, MailIn

log = logging.getLogger(__name__)

COMMANDS_PER_SESSION = 40
"""EHLO, MAIL, RCPT, DATA and a few more for one mail; a session may send a handful."""
LOG_EVERY_SECONDS = 60.0
"""A refused peer address gets one log line this often at most."""
ALL_PEERS = "all peers"
"""The key refusals for the listener's own total are logged under (one line a minute, not
one per address of a crowd)."""


@dataclass(frozen=True, slots=True)
class ListenerLimits:
    """What the listener lets peers hold; the defaults are the settings' defaults."""

    connections: int = 64
    connections_per_peer: int = 8
    mails_per_minute: int = 300
    """Mails a minute from everyone (0: no limit)."""
    mails_per_minute_per_peer: int = 30
    """Mails a minute from one peer address (0: no limit)."""
    idle_seconds: float = 30.0
    session_seconds: float = 300.0

    @classmethod
    def of(cls, config: ServerConfig) -> ListenerLimits:
        return cls(
            connections=config.limit_smtp_connections,
            connections_per_peer=config.limit_smtp_connections_per_peer,
            mails_per_minute=config.limit_smtp_mails_per_minute,
            mails_per_minute_per_peer=config.limit_smtp_mails_per_minute_per_peer,
        )


def peer_key(peer: Any) -> str:
    """Whom to count a connection from ``peer`` (``(host, port, ...)`` as asyncio gives it)
    against: its host, an IPv6 one by its /64 (``server.edge.limits.peer_host``)."""
    if isinstance(peer, tuple) and len(peer) >= 2:
        host, port = str(peer[0]), peer[1]
        return peer_host(f"ipv6:[{host}]:{port}" if ":" in host else f"ipv4:{host}:{port}")
    return str(peer)


class _Gate:
    """The listener's counts: who is connected now, how fast each peer comes, and when a
    refused peer was last logged. Used on the listener's event loop only."""

    def __init__(self, limits: ListenerLimits) -> None:
        self.limits = limits
        self.open: Counter[str] = Counter()
        self.total = 0
        self.rate_per_peer = RateLimit(limits.mails_per_minute_per_peer, "your address")
        self.rate_total = RateLimit(limits.mails_per_minute, "all senders")
        self._logged: OrderedDict[str, tuple[float, int]] = OrderedDict()
        """key -> (when its last line was logged, refusals since that line)."""

    def admit(self, key: str) -> str:
        """Count a new connection from ``key``; "" when it may stay, else the refusal."""
        if self.total >= self.limits.connections:
            return self.refuse(ALL_PEERS, "421 4.7.0 too many connections now: try again later")
        if self.open[key] >= self.limits.connections_per_peer:
            return self.refuse(
                key, "421 4.7.0 too many connections from your address: try again later"
            )
        self.open[key] += 1
        self.total += 1
        return ""

    def leave(self, key: str) -> None:
        self.total -= 1
        self.open[key] -= 1
        if self.open[key] <= 0:
            del self.open[key]

    def spend(self, key: str) -> str:
        """Count one mail of ``key`` against the rates; "" when within them, else the
        refusal."""
        try:
            self.rate_per_peer.spend(key)
        except LimitExceededError as exc:
            return self.refuse(key, f"450 4.7.1 {exc.message}")
        try:
            self.rate_total.spend(ALL_PEERS)
        except LimitExceededError as exc:
            return self.refuse(ALL_PEERS, f"450 4.7.1 {exc.message}")
        return ""

    def refuse(self, key: str, reply: str) -> str:
        """``reply``, logged once a minute for ``key`` (with the refusals since, untold)."""
        now = time.monotonic()
        last, untold = self._logged.pop(key, (now - LOG_EVERY_SECONDS, 0))
        if now - last >= LOG_EVERY_SECONDS:
            since = f"and {untold} more since its last line" if untold else "a new one"
            log.warning("mail listener refused %s: %s (%s; one line a minute)", key, reply, since)
            last, untold = now, 0
        else:
            untold += 1
        self._logged[key] = (last, untold)
        while len(self._logged) > MAX_TRACKED:
            self._logged.popitem(last=False)
        return reply


class _Session(SMTP):
    """aiosmtpd's SMTP session, let in by the gate or turned away before its greeting, and
    closed after ``session_seconds`` whatever it does."""

    def __init__(self, handler: Any, gate: _Gate, **kwargs: Any) -> None:
        super().__init__(handler, **kwargs)
        self.gate = gate
        self.peer_key = ""
        """The counted peer ("" until let in, and for a connection turned away)."""
        self._deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if self.peer_key:  # already let in (aiosmtpd calls this again after STARTTLS)
            super().connection_made(transport)
            return
        key = peer_key(transport.get_extra_info("peername"))
        refused = self.gate.admit(key)
        if refused:
            assert isinstance(transport, asyncio.WriteTransport)
            transport.write(refused.encode() + b"\r\n")
            transport.close()
            return
        self.peer_key = key
        self._deadline = self.loop.call_later(self.gate.limits.session_seconds, transport.close)
        super().connection_made(transport)

    def connection_lost(self, error: Exception | None) -> None:
        if not self.peer_key:  # turned away: aiosmtpd never saw it
            return
        self.gate.leave(self.peer_key)
        self.peer_key = ""
        if self._deadline is not None:
            self._deadline.cancel()
        super().connection_lost(error)


class _Controller(Controller):
    """aiosmtpd's controller, making gated sessions (its documented ``factory`` hook)."""

    def __init__(self, handler: Any, gate: _Gate, **kwargs: Any) -> None:
        super().__init__(handler, **kwargs)
        self.gate = gate

    def factory(self) -> SMTP:
        return _Session(self.handler, self.gate, **self.SMTP_kwargs)


class _Handler:
    """aiosmtpd's handler hooks: who may send and receive, and what to do with a mail."""

    def __init__(self, mail: MailIn, address: str, gate: _Gate) -> None:
        self.mail = mail
        self.address = address.lower()
        self.gate = gate

    async def handle_MAIL(  # noqa: N802  (aiosmtpd's hook names)
        self, server: Any, session: Any, envelope: Any, address: str, options: list[str]
    ) -> str:
        refused = self.gate.spend(peer_key(session.peer))
        if refused:
            return refused
        envelope.mail_from = address
        envelope.mail_options.extend(options)
        return "250 OK"

    async def handle_RCPT(  # noqa: N802
        self, server: Any, session: Any, envelope: Any, address: str, options: list[str]
    ) -> str:
        if envelope.rcpt_tos:
            return "452 4.5.3 one recipient per mail"
        if address.lower() != self.address:
            return "550 5.1.1 no such mailbox here (this server relays nothing)"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(  # noqa: N802
        self, server: Any, session: Any, envelope: Any
    ) -> str:
        raw = envelope.original_content or envelope.content
        if not isinstance(raw, bytes):
            return "554 5.6.0 unreadable message"
        sender = str(envelope.mail_from or "")
        try:
            outcome = await asyncio.to_thread(self.mail.receive, raw, sender)
        except Exception:
            log.exception("a received mail could not be handled")
            return "451 4.3.0 try again later"
        log.info("mail from %s: %s (%s)", session.peer, outcome.status, outcome.detail)
        return "250 OK"


class SmtpListener:
    """``start()`` listens on ``host:port``; ``stop()`` closes it."""

    def __init__(
        self, mail: MailIn, listen: str, address: str, limits: ListenerLimits | None = None
    ) -> None:
        host, colon, port = listen.rpartition(":")
        if not colon or not port.isdigit() or not address:
            raise ValueError(
                "smtp_listen is host:port, and needs mail_from (the address it receives for)"
            )
        self.host = host.strip("[]")
        self.port = int(port)
        self.limits = limits or ListenerLimits()
        self._gate = gate = _Gate(self.limits)
        # aiosmtpd logs every connection and command line at INFO, and per connection at
        # WARNING: a flood of connections would flood the log. The gate logs refusals.
        logging.getLogger("mail.log").setLevel(logging.ERROR)
        self.controller = _Controller(
            _Handler(mail, address, gate),
            gate,
            hostname=self.host,
            port=self.port,
            data_size_limit=MAX_MAIL_BYTES,
            timeout=self.limits.idle_seconds,
            command_call_limit=COMMANDS_PER_SESSION,
            ident="canasta-server",
        )
        self._running = False

    @property
    def connections(self) -> int:
        """How many connections the listener holds now."""
        return self._gate.total

    def start(self) -> None:
        self.controller.start()
        self._running = True

    def stop(self) -> None:
        if self._running:
            self._running = False
            self.controller.stop()
