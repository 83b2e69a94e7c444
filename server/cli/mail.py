"""The operator's commands for moves that come as text: ``canasta-server submit-armored`` and
``canasta-server mail-in``.

Both open the same database as the running server (its own process; the outbox of the
running server mails the answers they queue), store a move through ``Play.submit`` and then
play any bot seats that are now to move, as the server would after a Submit (the running
server does not hear of a move another process stored until a bot's turn comes up there).
"""

from __future__ import annotations

import os
import select
import sys
import time
from pathlib import Path
from typing import Annotated, BinaryIO

import typer

from server.cli.common import app, server_config
from server.service.mail.mailin import MAX_MAIL_BYTES
from shared.armor import MAX_TEXT_CHARS

EX_TEMPFAIL = 75
"""sysexits.h: a mail server keeps the message and tries the pipe again later."""
DRAIN_SECONDS = 30.0
"""How long ``mail-in`` reads and drops the rest of a mail larger than ``MAX_MAIL_BYTES``."""


@app.command("submit-armored")
def submit_armored(
    source: Annotated[
        Path | None,
        typer.Argument(help="A file holding the block (default: standard input)."),
    ] = None,
) -> None:
    """Store a signed move given as a text block (`canasta play --armor`), checked exactly
    like a Submit; the receipt is printed and mailed to the seat's player."""
    from server.app import open_service
    from server.service.errors import ServiceError
    from shared.rules import CanastaError
    from shared.wire import WireError

    if source is None:
        text = sys.stdin.read(MAX_TEXT_CHARS)
    else:
        with source.open(encoding="utf-8", errors="replace") as handle:
            text = handle.read(MAX_TEXT_CHARS)
    db, service, bots = open_service(server_config())
    try:
        try:
            receipt, move = service.mail.submit_armored(text)
        except (ServiceError, CanastaError, WireError) as exc:
            typer.echo(f"canasta-server: refused: {exc.message}", err=True)
            raise typer.Exit(code=1) from None
        bots.play(move.match_id)
    finally:
        db.dispose()
    typer.echo(
        f"stored move {receipt.seq} of match {receipt.match_id}\n"
        f"entry hash: {receipt.entry_hash.hex()}\n"
        f"server signature: {receipt.server_signature.hex()}"
    )


@app.command("mail-in")
def mail_in(
    sender: Annotated[
        str | None,
        typer.Option(
            help="The envelope sender, if the mail server passes it (Postfix: ${sender}, or "
            '"$SENDER" in an alias); the null sender of bounces and auto-replies (empty, <> '
            "or MAILER-DAEMON) drops the mail unread."
        ),
    ] = None,
) -> None:
    """Read one raw mail from standard input (a mail server's pipe delivery) and act on
    the move in it; the answer goes to the player's verified address only.

    Exits 0 for every mail it read, answered or ignored (a non-zero exit would make the
    mail server bounce hostile mail to its forged sender), a mail over 64 KiB included
    (read to its end and ignored), and 75 (try again later) when the server itself failed
    or the mail could not be read."""
    from server.app import open_service

    try:
        raw = read_mail(sys.stdin.buffer)
    except OSError as exc:
        typer.echo(f"canasta-server: mail-in could not read the mail: {exc}", err=True)
        raise typer.Exit(code=EX_TEMPFAIL) from None
    try:
        db, service, bots = open_service(server_config())
    except Exception as exc:  # the database is down: let the mail server retry
        typer.echo(f"canasta-server: mail-in failed: {exc}", err=True)
        raise typer.Exit(code=EX_TEMPFAIL) from None
    try:
        try:
            outcome = service.mail.receive(raw, sender)
        except Exception as exc:
            typer.echo(f"canasta-server: mail-in failed: {exc}", err=True)
            raise typer.Exit(code=EX_TEMPFAIL) from None
        if outcome.receipt is not None:
            try:  # the move is stored and its code spent: the mail must not come again
                bots.play(outcome.receipt.match_id)
            except Exception as exc:  # the running server's bots take their turn later
                typer.echo(f"canasta-server: the bots did not move yet: {exc}", err=True)
    finally:
        db.dispose()
    typer.echo(f"mail {outcome.status}: {outcome.detail}")


def read_mail(stream: BinaryIO, drain_seconds: float = DRAIN_SECONDS) -> bytes:
    """The mail on ``stream``, or its first ``MAX_MAIL_BYTES + 1`` bytes (too large: it will
    be ignored). The rest of a larger mail is read and dropped, for ``drain_seconds`` at most,
    so that the mail server piping it sees the whole mail taken rather than a broken pipe
    (and does not bounce it, to a sender who may be forged, or try again)."""
    raw = stream.read(MAX_MAIL_BYTES + 1)
    if len(raw) <= MAX_MAIL_BYTES:
        return raw
    descriptor = stream.fileno()
    deadline = time.monotonic() + drain_seconds
    while (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([descriptor], [], [], left)
        if not ready or not os.read(descriptor, 1 << 16):
            break  # the time is up, or the end of the mail
    return raw
