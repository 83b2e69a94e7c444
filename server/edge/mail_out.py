"""Outbound transport, beside inbound SMTP (``server.edge.smtp``): mail to the SMTP server and
webhooks over HTTP.

The outbox (``server.service.news.outbox``) decides what to send, to whom, which webhook URL
and address are allowed (``check_webhook_url``, ``public_address``) and what a failed delivery
is; these functions only carry a message and report how it went. ``server.app`` hands them to
the service, so that no service module opens a socket.
"""

from __future__ import annotations

import ipaddress
import smtplib
import socket
import ssl
import time
from email.message import EmailMessage

from server.config import ServerConfig
from server.service.news.outbox import (
    DeliveryError,
    MailSender,
    check_webhook_url,
    public_address,
)

WEBHOOK_TIMEOUT_SECONDS = 10
"""The longest one webhook delivery may take, from the lookup to the status line."""


def _public_address(host: str, port: int, allow_private: bool) -> str:
    """One address of ``host`` that the webhook may reach, looked up once: the connection
    goes to this very address, so a second lookup cannot send it elsewhere."""
    try:
        infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        raise DeliveryError(f"the webhook's host {host!r} does not resolve") from None
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%")[0])
        if not allow_private and not public_address(address):
            raise DeliveryError(f"the webhook's host {host!r} is not a public address")
        return str(address)
    raise DeliveryError(f"the webhook's host {host!r} does not resolve")


def http_post(url: str, body: bytes, headers: dict[str, str], allow_private: bool = False) -> int:
    """POST ``body`` to ``url`` and return the HTTP status, in at most
    ``WEBHOOK_TIMEOUT_SECONDS`` in all (a slow or dribbling endpoint cannot hold the
    outbox), to the one address checked; redirects are not followed (a 3xx is a failure)."""
    scheme, host, port, path = check_webhook_url(url)
    address = _public_address(host, port, allow_private)
    deadline = time.monotonic() + WEBHOOK_TIMEOUT_SECONDS

    def left() -> float:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise DeliveryError("the webhook did not answer in time")
        return remaining

    named = f"[{host}]" if ":" in host else host
    lines = [f"POST {path} HTTP/1.1", f"Host: {named}:{port}", "Connection: close"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    lines.append(f"Content-Length: {len(body)}")
    request = ("\r\n".join(lines) + "\r\n\r\n").encode() + body
    with socket.create_connection((address, port), timeout=left()) as raw:
        sock: socket.socket = raw
        if scheme == "https":
            sock = ssl.create_default_context().wrap_socket(raw, server_hostname=host)
        sock.settimeout(left())
        sock.sendall(request)
        answer = b""
        while b"\r\n" not in answer and len(answer) < 1024:
            sock.settimeout(left())
            chunk = sock.recv(1024)
            if not chunk:
                break
            answer += chunk
    status = answer.split(b"\r\n", 1)[0].split()
    if len(status) < 2 or not status[0].startswith(b"HTTP/") or not status[1].isdigit():
        raise DeliveryError("the webhook did not answer HTTP")
    return int(status[1])


def smtp_sender(config: ServerConfig) -> MailSender:
    """Send a message through the configured SMTP server (standard library only)."""

    def send(message: EmailMessage) -> None:
        # Only for a connection that uses TLS: loading the system's certificates costs about
        # 25 ms of CPU, more than the rest of sending a mail to a local relay.
        if config.smtp_security == "tls":
            client: smtplib.SMTP = smtplib.SMTP_SSL(
                config.smtp_host, config.smtp_port, timeout=30, context=ssl.create_default_context()
            )
        else:
            client = smtplib.SMTP(config.smtp_host, config.smtp_port, timeout=30)
        with client:
            if config.smtp_security == "starttls":
                client.starttls(context=ssl.create_default_context())
            if config.smtp_user:
                client.login(config.smtp_user, config.smtp_password)
            client.send_message(message)

    return send
