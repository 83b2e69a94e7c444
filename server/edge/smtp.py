"""The server's own SMTP listener: mail to the server's address, straight into ``MailIn``.

For an operator who points a mail domain or subdomain (its MX record) at the server, instead
of piping mail to ``canasta-server mail-in``. It is a receiving end only, never a relay:

* only mail *to* the server's own address (``mail_from``) is taken; any other recipient is
  refused at ``RCPT TO`` (550), and one recipient per mail;
* a mail larger than ``MAX_MAIL_BYTES`` is refused by the SMTP layer (552) before it is held;
* a session idle for ``TIMEOUT_SECONDS`` is closed, and one session may issue at most
  ``COMMANDS_PER_SESSION`` commands, so a slow or chatty client holds nothing for long;
* every mail that was taken is answered ``250`` whatever became of it (moved, refused by a
  mail of the server's own to a verified address, or ignored): an SMTP refusal would make the
  sending server bounce to the mail's sender, who may be forged. ``451`` (try later) only when
  the service itself failed.

The mail's bytes go to ``MailIn.receive`` on a worker thread (it is blocking database work),
the same call ``mail-in`` makes. ``aiosmtpd`` runs the protocol on an event loop of its own.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from aiosmtpd.controller import Controller

from server.service.mailin import MAX_MAIL_BYTES, MailIn

log = logging.getLogger(__name__)

TIMEOUT_SECONDS = 30.0
COMMANDS_PER_SESSION = 40
"""EHLO, MAIL, RCPT, DATA and a few more for one mail; a session may send a handful."""


class _Handler:
    """aiosmtpd's handler hooks: who may receive, and what to do with a mail's bytes."""

    def __init__(self, mail: MailIn, address: str) -> None:
        self.mail = mail
        self.address = address.lower()

    async def handle_RCPT(  # noqa: N802  (aiosmtpd's hook names)
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
        try:
            outcome = await asyncio.to_thread(self.mail.receive, raw)
        except Exception:
            log.exception("a received mail could not be handled")
            return "451 4.3.0 try again later"
        log.info("mail from %s: %s (%s)", session.peer, outcome.status, outcome.detail)
        return "250 OK"


class SmtpListener:
    """``start()`` listens on ``host:port``; ``stop()`` closes it."""

    def __init__(self, mail: MailIn, listen: str, address: str) -> None:
        host, colon, port = listen.rpartition(":")
        if not colon or not port.isdigit() or not address:
            raise ValueError(
                "smtp_listen is host:port, and needs mail_from (the address it receives for)"
            )
        self.host = host.strip("[]")
        self.port = int(port)
        self.controller = Controller(
            _Handler(mail, address),
            hostname=self.host,
            port=self.port,
            data_size_limit=MAX_MAIL_BYTES,
            timeout=TIMEOUT_SECONDS,
            command_call_limit=COMMANDS_PER_SESSION,
            ident="canasta-server",
        )

        self._running = False

    def start(self) -> None:
        self.controller.start()
        self._running = True

    def stop(self) -> None:
        if self._running:
            self._running = False
            self.controller.stop()
