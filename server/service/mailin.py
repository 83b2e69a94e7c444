"""Moves that arrive as mail or as text: armored signed moves (``shared.armor``) and moves
by reply (``server.service.replies``).

Two entry points, one path for the move:

* ``submit_armored(text)``: an operator hands in a block (``canasta-server submit-armored``);
* ``receive(raw)``: one raw mail (``canasta-server mail-in`` from a mail server's pipe), holding
  a block, or replying to a mail with a single-use code and a move in plain words.

Either way the move goes to ``Play.submit``, the very call behind the gRPC ``Submit``: no
second set of checks. A block carries the player's own signature; a reply's move is signed
here with the server's attest key, after the code proved it answers the mail sent for that
player, match and version (and the code is spent, before the move is tried). The receipt is
mailed to the seat's player's *verified* address (a ``move_stored`` notification through the
outbox), never to whoever sent the mail.

A received mail is hostile until proved otherwise, so every step has a bound and most
failures get no answer at all:

* more than ``MAX_MAIL_BYTES``, more than ``MAX_PARTS`` MIME parts, a From that is not exactly
  one address, or a mail an auto-responder sent (``Auto-Submitted``, ``Precedence: bulk``):
  ignored, nothing stored, nothing sent;
* a From that is no player's verified address: ignored (the server is no way to mail a
  stranger, and never an open relay: it only ever writes to verified addresses);
* from a player, but no plain-text part (HTML only), no block and no code, several blocks or
  codes, a block for a seat that is not the sender's, a code that is used, expired, another
  player's or for an older version, a reply with several moves, or a move the rules refuse:
  one short refusal (``move_refused``) to the sender's verified address, with the reason (and
  their table only when the match is theirs); the move changes nothing.

Parsing is the standard library's ``email`` package (``policy.default``) on bytes already
cut to size, so no mail costs more than parsing ``MAX_MAIL_BYTES``.
"""

from __future__ import annotations

import dataclasses
import email
import email.errors
import email.policy
import email.utils
import logging
from email.message import EmailMessage

from server.domain import Notice, Receipt
from server.service import matches, replies
from server.service.context import ServiceContext
from server.service.errors import ServiceError
from server.service.play import Play
from server.store.repository import Repository
from shared.armor import MAX_TEXT_CHARS, ArmorError, count_blocks, dearmor, move_line
from shared.crypto.keys import sign
from shared.rules import CanastaError
from shared.wire import DEAL_ACTION, Move, WireError, move_to_bytes

log = logging.getLogger(__name__)

MAX_MAIL_BYTES = 65_536
"""A move and a quoted mail or two fit many times over; anything larger is not a move."""
MAX_PARTS = 16
"""MIME parts a mail may have (a plain and an HTML version, a signature, a few quoted ones)."""
MAX_REASON = 300
"""Characters of a refusal's reason that go into the answer."""
REFUSALS_PER_HOUR = 30
"""Refusals mailed to one player in an hour at most: anyone can put a player's address in a
From line, and without a cap forged mails could make the server flood that player's inbox.
(Receipts need no cap: one goes out per move stored, never for a block sent again.)"""
_HOUR_MS = 3_600_000
_QUIET_PRECEDENCE = frozenset({"bulk", "junk", "list", "auto_reply"})
_UNREADABLE = (
    ValueError,
    TypeError,
    IndexError,
    LookupError,
    AttributeError,
    AssertionError,
    email.errors.MessageError,
)
"""What the standard library's parser raises on malformed mail (rather than noting a defect)."""


@dataclasses.dataclass(frozen=True, slots=True)
class MailOutcome:
    """What became of one received mail (for the operator's log, not for the sender)."""

    status: str
    """``stored`` (a move was stored), ``refused`` (a refusal was queued for the sender) or
    ``ignored`` (nothing stored, nothing sent)."""
    detail: str
    receipt: Receipt | None = None


def _refused(detail: str) -> MailOutcome:
    return MailOutcome("refused", detail)


def _ignored(detail: str) -> MailOutcome:
    return MailOutcome("ignored", detail)


class MailIn:
    def __init__(self, ctx: ServiceContext, play: Play) -> None:
        self.ctx = ctx
        self.play = play

    # -- armored blocks --------------------------------------------------------------------

    def submit_armored(self, text: str) -> tuple[Receipt, Move]:
        """Check and store the one block in ``text`` exactly like a Submit (errors as
        Submit's); the receipt is queued for the seat's player's verified address."""
        request, move = dearmor(text)
        with self.ctx.db.read() as session:
            found = self.ctx.repo(session).match(move.match_id[:64])
        receipt, _ = self.play.submit(request.payload, request.signature)
        if found is not None and move.seq > found.version:  # not a block sent again
            self._mail_receipt(move, receipt)
        return receipt, move

    def _mail_receipt(self, move: Move, receipt: Receipt) -> None:
        ctx = self.ctx
        with ctx.db.write() as session:
            repo = ctx.repo(session)
            match = repo.match(move.match_id)
            player_id = match.seats[move.seat].player_id if match is not None else None
            if player_id is None:  # a bot's seat: nobody to tell
                return
            facts: dict[str, object] = {
                "seq": receipt.seq,
                "move": move_line(move.actions)[:MAX_REASON],
                "entry_hash": receipt.entry_hash.hex(),
                "server_signature": receipt.server_signature.hex(),
            }
            repo.add_notices([Notice(player_id, move.match_id, "move_stored", facts)], ctx.clock())

    # -- received mail -----------------------------------------------------------------------

    def receive(self, raw: bytes) -> MailOutcome:
        """Handle one raw mail (RFC 5322 bytes); see the module's docstring for what is
        answered and what is ignored. Never raises for anything the mail contains."""
        if len(raw) > MAX_MAIL_BYTES:
            return _ignored(f"larger than {MAX_MAIL_BYTES} bytes")
        try:  # every header read here, once: a malformed one makes the mail unreadable
            message = email.message_from_bytes(raw, policy=email.policy.default)
            sender = _sender(message)
            automatic = _automatic(message)
            subject = str(message.get("Subject", ""))[:1000]
        except _UNREADABLE as exc:
            return _ignored(f"unreadable headers ({type(exc).__name__})")
        if sender is None:
            return _ignored("not exactly one From address")
        if automatic:
            return _ignored("sent by an auto-responder or a list")
        with self.ctx.db.read() as session:
            found = self.ctx.repo(session).players_by_email(sender)
        if len(found) != 1:
            return _ignored("the sender is no player's verified address")
        player_id = found[0]
        text, problem = _plain_text(message)
        if text is None:
            return self._refuse(player_id, "", problem)
        if len(text) > MAX_TEXT_CHARS:
            text = text[:MAX_TEXT_CHARS]
        blocks = count_blocks(text)
        if blocks > 1:
            return self._refuse(player_id, "", "the mail holds several moves: send one at a time")
        if blocks == 1:
            return self._armored(player_id, text)
        codes = replies.codes_in(subject, text)
        if not codes:
            return self._refuse(
                player_id,
                "",
                "no move found: paste the block that `canasta play --armor` prints, or reply "
                "to a mail that shows your move (with moves by reply on)",
            )
        if len(codes) > 1:
            return self._refuse(player_id, "", "the mail holds several reply codes: reply to one")
        return self._reply(player_id, codes.pop(), text)

    def _reply(self, player_id: int, code: str, text: str) -> MailOutcome:
        """A move by reply: the code must be the sender's, unused, unexpired and for the
        match's current version; it is spent first (single use), then the move is signed by
        the attest key and goes to ``Play.submit`` like any other."""
        ctx = self.ctx
        now = ctx.clock()
        digest = replies.code_hash(code)
        with ctx.db.write() as session:
            repo = ctx.repo(session)
            found = repo.reply_code(digest)
            settings = repo.settings(player_id)
            spent = (
                found is not None
                and found.player_id == player_id
                and not found.used_ms
                and found.expires_ms > now
                and repo.spend_reply_code(digest, now)
            )
        if found is None or not spent:
            # One answer for every bad code: it tells nobody whose it was or why.
            return self._refuse(
                player_id, "", "that reply code is not valid: used, expired or not yours"
            )
        match_id = found.match_id
        if settings is None or not settings.allow_reply_moves:
            return self._refuse(
                player_id,
                match_id,
                "moves by reply are off for you: canasta notify email each --allow-reply-moves",
            )
        try:
            actions = replies.move_of(text)
        except replies.ReplyError as exc:
            return self._refuse(player_id, match_id, str(exc))
        with ctx.db.read() as session:
            repo = ctx.repo(session)
            match = matches.require_match(repo, match_id)
            state = matches.load_state(ctx, repo, match)
            seat = match.seat_of(player_id)
            hand = repo.hand(match_id, state.hand_number + 1) if actions == [DEAL_ACTION] else None
        if seat is None:
            return self._refuse(player_id, "", "that reply code is not valid: not your match")
        if match.version != found.version:
            return self._refuse(
                player_id,
                match_id,
                "the match moved on since that mail: nothing was played; here is the table now",
            )
        move = Move(
            match_id=match_id,
            seat=seat,
            seq=match.version + 1,
            prev_hash=match.head_hash,
            client_time_ms=0 if hand is not None else now,  # a cut carries no time
            actions=tuple(actions),
            deal_commitment=hand.commitment if hand is not None else b"",
        )
        payload = move_to_bytes(move)
        try:
            receipt, _ = self.play.submit(payload, sign(ctx.keys.attest, payload))
        except (ServiceError, CanastaError, WireError) as exc:
            return self._refuse(player_id, match_id, exc.message)
        self._mail_receipt(move, receipt)
        return MailOutcome("stored", f"match {match_id} seq {receipt.seq} (by reply)", receipt)

    def _armored(self, player_id: int, text: str) -> MailOutcome:
        try:
            request, move = dearmor(text)
        except ArmorError as exc:
            return self._refuse(player_id, "", exc.message)
        with self.ctx.db.read() as session:
            match = self.ctx.repo(session).match(move.match_id[:64])
        seated = match is not None and match.seat_of(player_id) is not None
        if (
            match is None
            or not 0 <= move.seat < len(match.seats)
            or match.seats[move.seat].player_id != player_id
        ):
            # Only the seat's own player may mail its move: an answer about someone else's
            # seat (even "refused") would tell the sender about a table that is not theirs.
            return self._refuse(
                player_id,
                move.match_id if seated else "",
                "that move is not for your seat: mail only your own moves",
            )
        try:
            receipt, _ = self.play.submit(request.payload, request.signature)
        except (ServiceError, CanastaError, WireError) as exc:
            return self._refuse(player_id, move.match_id, exc.message)
        if move.seq <= match.version:  # the same block again: stored once, answered once
            return MailOutcome(
                "stored", f"match {move.match_id} seq {receipt.seq} (again)", receipt
            )
        self._mail_receipt(move, receipt)
        return MailOutcome("stored", f"match {move.match_id} seq {receipt.seq}", receipt)

    def _refuse(self, player_id: int, match_id: str, reason: str) -> MailOutcome:
        """Queue one short refusal to the player's verified address (with their table, as
        they see it, when ``match_id`` is a match they sit in)."""
        reason = reason[:MAX_REASON]
        ctx = self.ctx
        with ctx.db.write() as session:
            repo = ctx.repo(session)
            if _refused_enough(repo, player_id, ctx.clock()):
                return _ignored(f"{reason} (not answered: {REFUSALS_PER_HOUR} refusals this hour)")
            facts: dict[str, object] = {"reason": reason}
            repo.add_notices([Notice(player_id, match_id, "move_refused", facts)], ctx.clock())
        return _refused(reason)


def _refused_enough(repo: Repository, player_id: int, now: int) -> bool:
    """Whether the player had ``REFUSALS_PER_HOUR`` refusals in the last hour already."""
    kinds = ("move_refused",)
    return repo.count_notices(player_id, kinds, now - _HOUR_MS, REFUSALS_PER_HOUR) >= (
        REFUSALS_PER_HOUR
    )


def _sender(message: EmailMessage) -> str | None:
    """The one address in the one From header, lower-cased; None for anything else."""
    values = message.get_all("From") or []
    if len(values) != 1:
        return None
    pairs = email.utils.getaddresses([str(values[0])])
    if len(pairs) != 1:
        return None
    address = pairs[0][1].strip().lower()
    local, at, domain = address.rpartition("@")
    if not at or not local or not domain or len(address) > 254 or not address.isprintable():
        return None
    return address


def _automatic(message: EmailMessage) -> bool:
    """Whether a machine sent the mail (RFC 3834, mailing lists): never answered, never a
    move, so no two robots can keep mailing each other."""
    auto = str(message.get("Auto-Submitted", "no")).strip().lower()
    precedence = str(message.get("Precedence", "")).strip().lower()
    return auto != "no" or precedence in _QUIET_PRECEDENCE or "List-Id" in message


def _plain_text(message: EmailMessage) -> tuple[str | None, str]:
    """The mail's plain-text body (not an attachment), or None and why not: no such part
    (HTML only), more than ``MAX_PARTS`` parts, or a part that does not decode."""
    for parts, _ in enumerate(message.walk(), start=1):
        if parts > MAX_PARTS:
            return None, f"the mail has more than {MAX_PARTS} parts: send the move as plain text"
    plain = "the mail has no plain-text part: send the move as plain text, not HTML only"
    try:
        body = message.get_body(preferencelist=("plain",))
    except _UNREADABLE:
        return None, plain
    if body is None:
        return None, plain
    try:
        content = body.get_content()
    except _UNREADABLE:
        return None, "the mail's text does not decode: send it as plain UTF-8 text"
    return (content, "") if isinstance(content, str) else (None, plain)


__all__ = ["MAX_MAIL_BYTES", "MAX_PARTS", "MailIn", "MailOutcome"]
