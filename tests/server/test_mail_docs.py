"""docs/mail.md's worked webhook example is what the server sends (issue 26): the body and
the signature on the page come out of the server's own delivery code, and the page's Python
check accepts them (and nothing else)."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from typing import Any

from server.domain import EmailMode, Notification, Settings
from tests.docs import REPO, code_blocks, section

from .conftest import AppFactory
from .mailkit import Hooks

PAGE = REPO / "docs" / "mail.md"


def _example() -> tuple[str, bytes, str, str]:
    """The page's secret, body, X-Canasta-Signature header value and Python check."""
    text = section(PAGE.read_text(encoding="utf-8"), "### Checking the signature")
    secret, header = (b.strip() for b in code_blocks(text, "text"))
    (body,) = code_blocks(text, "json")
    (check,) = code_blocks(text, "python")
    return secret, body.strip().encode(), header.removeprefix("X-Canasta-Signature: "), check


def test_the_worked_example_is_what_the_server_sends(make_app: AppFactory, hooks: Hooks) -> None:
    secret, body, signature, _ = _example()
    shown = json.loads(body)
    note = Notification(
        id=shown["id"], player_id=7, match_id=shown["match_id"], kind=shown["kind"],
        facts=shown["facts"], created_ms=shown["created_ms"], attempts=0, email_state="",
        webhook_state="",
    )  # fmt: skip
    settings = Settings(
        player_id=7, display_name="Alice", time_zone="Europe/Berlin", email="",
        email_verified=False, email_pending="", email_mode=EmailMode.OFF,
        webhook_url=hooks.url, webhook_secret=secret, digest_sent_ms=0,
    )  # fmt: skip
    app = make_app(start=False, webhook_allow_private=True)  # the receiver is on 127.0.0.1
    # One webhook delivery, exactly as a round of the outbox makes it for this notification.
    assert app.service.outbox._webhook(note, settings) == "sent"
    ((received, headers),) = hooks.received
    assert received == body
    assert headers["X-Canasta-Signature"] == signature
    assert headers["X-Canasta-Delivery"] == str(shown["id"])
    assert headers["Content-Type"] == "application/json"
    assert shown["text"] in PAGE.read_text(encoding="utf-8")


def test_the_pages_check_accepts_the_example_and_nothing_else() -> None:
    secret, body, signature, check = _example()
    space: dict[str, Any] = {}
    exec(check, space)  # the page's own code, as a reader would paste it
    signed_by_canasta = space["signed_by_canasta"]
    assert signed_by_canasta(secret, body, signature)
    assert not signed_by_canasta(secret, body.replace(b"hand 2", b"hand 3"), signature)
    assert not signed_by_canasta(secret[:-1] + "0", body, signature)
    # The mistake the page warns against: the 32 bytes the hex spells as the key.
    wrong = hmac.new(bytes.fromhex(secret), body, hashlib.sha256).hexdigest()
    assert signature != f"sha256={wrong}"
    assert re.fullmatch(r"sha256=[0-9a-f]{64}", signature)


def test_the_subjects_table_is_the_servers() -> None:
    """Every subject a mail can have is in "What each mail shows", and no other."""
    from server.service.news.words import SUBJECTS

    text = section(PAGE.read_text(encoding="utf-8"), "## What each mail shows")
    rows = re.findall(r"^\| ([^|]+) \|", text, re.MULTILINE)[1:]  # past the header row
    shown = {part.strip() for row in rows for part in row.split(" / ")}
    assert shown == set(SUBJECTS.values())
