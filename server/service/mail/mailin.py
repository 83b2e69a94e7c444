"""Moves that arrive as mail or as text: armored signed moves (``shared.armor``) and moves
by reply (``server.service.news.replies``).

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

A received mail is hostile until proved otherwise, so every step has a bound, the cheap
checks come before the costly ones, and most failures get no answer at all:

* a null envelope sender (``MAIL FROM:<>``, which bounces and auto-replies use), more than
  ``MAX_MAIL_BYTES``, a From that is not exactly one plain address (several, a group, one
  the parser had to guess at, or whose display name is itself an address), or a mail an
  auto-responder sent (``Auto-Submitted``, ``Precedence: bulk``): ignored, nothing stored,
  nothing sent;
* a From that is no player's verified address: ignored (the server is no way to mail a
  stranger, and never an open relay: it only ever writes to verified addresses). Only the
  headers are read to decide this: a stranger's body is never parsed;
* from a player, but more than ``MAX_PARTS`` MIME parts (counted before parsing, and while
  parsing, so that no nesting can run deep), no plain-text part (HTML only), no block and no
  code, several blocks or codes, a block for a seat that is not the sender's, a code that is
  used, expired, another player's or for an older version, a reply with several moves, or a
  move the rules refuse: one short refusal (``move_refused``) to the sender's verified
  address, with the reason (and their table only when the match is theirs); the move changes
  nothing, and a valid reply code stays valid (only a stored move spends it).

Refusals are capped (anyone can write a player's address in a From line): at most
``REFUSALS_PER_HOUR`` an hour for mail without a valid reply code of the player's, and as
many again for mail with one (which a forger cannot have), so forged mail cannot silence the
answers to the player's own replies; the last refusal before a cap says so. The same text
refused for the same reason again within the hour is not answered again, which ends any loop
with an auto-responder that answers each refusal.

Parsing is the standard library's ``email`` package (``policy.default``) on bytes already
cut to size: the headers alone first, the body only for a player's mail, by a parser that
stops at the ``MAX_PARTS``-th part. So no mail costs more than parsing a few parts of
``MAX_MAIL_BYTES``, and a stranger's costs a header block and one look-up.
"""

from __future__ import annotations

import dataclasses
import email.errors
import email.parser
import email.policy
import hashlib
import logging
import re
from email.headerregistry import AddressHeader, BaseHeader
from email.message import EmailMessage
from email.policy import Policy

from server.domain import Notice, Receipt
from server.service import matches
from server.service.context import ServiceContext
from server.service.errors import ServiceError
from server.service.news import replies
from server.service.play.play import Play
from shared.armor import MAX_TEXT_CHARS, ArmorError, count_blocks, dearmor, move_line
from shared.crypto.keys import sign
from shared.rules import CanastaError
from shared.wire import DEAL_ACTION, Move, WireError, move_to_bytes

log = logging.getLogger(__name__)

MAX_MAIL_BYTES = 65_536
"""A move and a quoted mail or two fit many times over; anything larger is not a move."""
MAX_PARTS = 16
"""MIME parts a mail may have, itself included (a plain and an HTML version, a signature, a
few quoted ones); nesting is never deeper than this either."""
MAX_FROM_CHARS = 998
"""The longest From header read (RFC 5322's line limit); a longer one is no mail client's."""
MAX_FROM_NESTING = 4
"""Comments nested in a From header at most: the parser reads them by recursion."""
MAX_REASON = 300
"""Characters of a refusal's reason that go into the answer."""
REFUSALS_PER_HOUR = 30
"""Refusals mailed to one player in an hour at most, for mail without a valid reply code of
theirs, and as many again for mail with one: anyone can put a player's address in a From
line, and without a cap forged mails could make the server flood that player's inbox; a
forger has no valid code, so the second allowance keeps the answers to the player's own
replies. (Receipts need no cap: one goes out per move stored, never for a block sent again.)"""
_HOUR_MS = 3_600_000
_QUIET_PRECEDENCE = frozenset({"bulk", "junk", "list", "auto_reply"})
_NULL_SENDERS = frozenset({"", "<>", "mailer-daemon"})
"""The null envelope sender, as aiosmtpd (``<>``) and Postfix's pipe (``MAILER-DAEMON``)
pass it: no move comes from it (RFC 5321 and 3834 give it to bounces and auto-replies)."""
_UNREADABLE = (
    ValueError,
    TypeError,
    IndexError,
    LookupError,
    AttributeError,
    AssertionError,
    RecursionError,
    email.errors.MessageError,
)
"""What the standard library's parser raises on malformed mail (rather than noting a defect);
``RecursionError`` too, as a last guard: the bounds below keep every recursion shallow."""
_GUESSED_ADDRESS = (email.errors.InvalidHeaderDefect, email.errors.ObsoleteHeaderDefect)
"""Defects that mean the address parser had to guess (``ann@a.test <eve@b.test>`` reads as
Ann's address while mail clients show Eve's): such a From is no one's."""
_PART_HEADER = re.compile(rb"^content-type[ \t]*:", re.IGNORECASE | re.MULTILINE)
"""A line that starts a part's Content-Type (each nested part needs one): counted before the
body is parsed."""
_HEADERS = email.parser.BytesParser(policy=email.policy.default)


class _TooManyPartsError(Exception):
    """Raised by the counting message factory while parsing: the mail has too many parts."""


@dataclasses.dataclass(frozen=True, slots=True)
class MailOutcome:
    """What became of one received mail (for the operator's log, not for the sender)."""

    status: str
    """``stored`` (a move was stored), ``refused`` (a refusal was queued for the sender) or
    ``ignored`` (nothing stored, nothing sent)."""
    detail: str
    receipt: Receipt | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class _Letter:
    """A player's received mail, as far as a refusal needs it."""

    player_id: int
    text: str
    """The plain text read from it ("" when there is none)."""
    coded: bool = False
    """Whether it carried a valid reply code of the player's (which forged mail cannot)."""


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

    def receive(self, raw: bytes, envelope_sender: str | None = None) -> MailOutcome:
        """Handle one raw mail (RFC 5322 bytes); ``envelope_sender`` is the SMTP ``MAIL
        FROM`` when known (the null sender as "", ``<>`` or ``MAILER-DAEMON``, as mail servers
        spell it). See the module's docstring for what is
        answered and what is ignored. Never raises for anything the mail contains."""
        if envelope_sender is not None and envelope_sender.strip().lower() in _NULL_SENDERS:
            return _ignored("a null envelope sender: a bounce or an automatic reply")
        if len(raw) > MAX_MAIL_BYTES:
            return _ignored(f"larger than {MAX_MAIL_BYTES} bytes")
        try:  # the headers alone, every one read here once: a malformed one makes it unreadable
            headers = _HEADERS.parsebytes(_header_block(raw), headersonly=True)
            sender = _sender(headers)
            automatic = _automatic(headers)
            subject = str(headers.get("Subject", ""))[:1000]
        except _UNREADABLE as exc:
            return _ignored(f"unreadable headers ({type(exc).__name__})")
        if sender is None:
            return _ignored("not exactly one plain From address")
        if automatic:
            return _ignored("sent by an auto-responder or a list")
        with self.ctx.db.read() as session:
            found = self.ctx.repo(session).players_by_email(sender)
        if len(found) != 1:
            return _ignored("the sender is no player's verified address")
        letter = _Letter(found[0], "")
        text, problem = _plain_text(raw)
        if text is None:
            return self._refuse(letter, "", problem)
        letter = _Letter(letter.player_id, text[:MAX_TEXT_CHARS])
        blocks = count_blocks(letter.text)
        if blocks > 1:
            return self._refuse(letter, "", "the mail holds several moves: send one at a time")
        if blocks == 1:
            return self._armored(letter)
        codes = replies.codes_in(subject, letter.text)
        if not codes:
            return self._refuse(
                letter,
                "",
                "no move found: paste the block that `canasta play --armor` prints, or reply "
                "to a mail that shows your move (with moves by reply on)",
            )
        if len(codes) > 1:
            return self._refuse(letter, "", "the mail holds several reply codes: reply to one")
        return self._reply(letter, codes.pop())

    def _reply(self, letter: _Letter, code: str) -> MailOutcome:
        """A move by reply: the code must be the sender's, unused, unexpired and for the
        match's current version. It is spent only with a stored move, so that no refusal
        (an auto-responder's reply, a typing slip) costs the player their code; a code is
        good for one version anyway, so it can never store a second move."""
        ctx = self.ctx
        now = ctx.clock()
        digest = replies.code_hash(code)
        player_id = letter.player_id
        with ctx.db.read() as session:
            repo = ctx.repo(session)
            found = repo.reply_code(digest)
            settings = repo.settings(player_id)
        if (
            found is None
            or found.player_id != player_id
            or found.used_ms
            or found.expires_ms <= now
        ):
            # One answer for every bad code: it tells nobody whose it was or why.
            return self._refuse(
                letter, "", "that reply code is not valid: used, expired or not yours"
            )
        letter = dataclasses.replace(letter, coded=True)
        match_id = found.match_id
        if settings is None or not settings.allow_reply_moves:
            return self._refuse(
                letter,
                match_id,
                "moves by reply are off for you: canasta notify email each --allow-reply-moves",
            )
        try:
            actions = replies.move_of(letter.text)
        except replies.ReplyError as exc:
            return self._refuse(letter, match_id, str(exc))
        with ctx.db.read() as session:
            repo = ctx.repo(session)
            match = matches.require_match(repo, match_id)
            state = matches.load_state(ctx, repo, match)
            seat = match.seat_of(player_id)
            hand = repo.hand(match_id, state.hand_number + 1) if actions == [DEAL_ACTION] else None
        if seat is None:
            return self._refuse(letter, "", "that reply code is not valid: not your match")
        if match.version != found.version:
            return self._refuse(
                letter,
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
            return self._refuse(letter, match_id, exc.message)
        with ctx.db.write() as session:
            first = ctx.repo(session).spend_reply_code(digest, now)
        if not first:  # the same reply twice at once: the other one stored it and tells
            return MailOutcome("stored", f"match {match_id} seq {receipt.seq} (again)", receipt)
        self._mail_receipt(move, receipt)
        return MailOutcome("stored", f"match {match_id} seq {receipt.seq} (by reply)", receipt)

    def _armored(self, letter: _Letter) -> MailOutcome:
        player_id = letter.player_id
        try:
            request, move = dearmor(letter.text)
        except ArmorError as exc:
            return self._refuse(letter, "", exc.message)
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
                letter,
                move.match_id if seated else "",
                "that move is not for your seat: mail only your own moves",
            )
        try:
            receipt, _ = self.play.submit(request.payload, request.signature)
        except (ServiceError, CanastaError, WireError) as exc:
            return self._refuse(letter, move.match_id, exc.message)
        if move.seq <= match.version:  # the same block again: stored once, answered once
            return MailOutcome(
                "stored", f"match {move.match_id} seq {receipt.seq} (again)", receipt
            )
        self._mail_receipt(move, receipt)
        return MailOutcome("stored", f"match {move.match_id} seq {receipt.seq}", receipt)

    def _refuse(self, letter: _Letter, match_id: str, reason: str) -> MailOutcome:
        """Queue one short refusal to the player's verified address (with their table, as
        they see it, when ``match_id`` is a match they sit in); unless the same text was
        refused for the same reason this hour, or the hour's refusals of its kind (with or
        without a valid code) are used up. The last one before that says so."""
        reason = reason[:MAX_REASON]
        ctx = self.ctx
        now = ctx.clock()
        fingerprint = _fingerprint(letter.text, reason)
        with ctx.db.write() as session:
            repo = ctx.repo(session)
            recent = repo.notice_facts(
                letter.player_id, "move_refused", now - _HOUR_MS, 2 * REFUSALS_PER_HOUR
            )
            if any(facts.get("mail") == fingerprint for facts in recent):
                return _ignored(f"{reason} (not answered: the same mail was refused this hour)")
            alike = sum(1 for facts in recent if bool(facts.get("coded")) == letter.coded)
            if alike >= REFUSALS_PER_HOUR:
                return _ignored(f"{reason} (not answered: {REFUSALS_PER_HOUR} refusals this hour)")
            told = reason
            if alike == REFUSALS_PER_HOUR - 1:
                which = "replies" if letter.coded else "mails without a valid reply code"
                told += (
                    f" (That makes {REFUSALS_PER_HOUR} refusals this hour: for the next hour, "
                    f"{which} that move nothing get no answer.)"
                )
            facts: dict[str, object] = {"reason": told, "mail": fingerprint, "coded": letter.coded}
            repo.add_notices([Notice(letter.player_id, match_id, "move_refused", facts)], now)
        return MailOutcome("refused", reason)


def _fingerprint(text: str, reason: str) -> str:
    """What makes two refused mails "the same": their own words (not the quoted lines, not
    the codes, which change with every answer, nor spacing or case) and the reason."""
    own = [line for line in text.splitlines() if not line.lstrip().startswith(">")]
    words = replies.CODE_PATTERN.sub(" ", " ".join(own).lower()).split()
    return hashlib.sha256(f"{' '.join(words)}\n{reason}".encode()).hexdigest()[:32]


def _header_block(raw: bytes) -> bytes:
    """The mail's header lines: up to its first empty line (where the parser stops reading
    headers too), so that reading them costs nothing for the body's size."""
    ends = [at for at in (raw.find(b"\n\n"), raw.find(b"\n\r\n")) if at >= 0]
    return raw[: min(ends) + 1] if ends else raw


def _sender(headers: EmailMessage) -> str | None:
    """The address of the one From header, lower-cased: the address part alone (``<...>``),
    never a display name; None unless it is exactly one plain mailbox whose display name is
    no address, read without the parser having to guess."""
    raw = [value for name, value in headers.raw_items() if name.lower() == "from"]
    if len(raw) != 1 or len(raw[0]) > MAX_FROM_CHARS or _nesting(raw[0]) > MAX_FROM_NESTING:
        return None
    header = headers["From"]
    if not isinstance(header, AddressHeader) or not isinstance(header, BaseHeader):
        return None
    if any(isinstance(defect, _GUESSED_ADDRESS) for defect in header.defects):
        return None
    if len(header.groups) != 1 or header.groups[0].display_name is not None:
        return None  # several addresses, or a group ("friends: ann@a.test;")
    (mailbox,) = header.groups[0].addresses or (None,)
    if mailbox is None or "@" in mailbox.display_name:
        return None  # no address, or a display name that poses as one
    address = mailbox.addr_spec.strip().lower()
    local, at, domain = address.rpartition("@")
    if not at or not local or not domain or len(address) > 254 or not address.isprintable():
        return None
    return address


def _nesting(value: str) -> int:
    """How deep parentheses (comments) nest in a header value."""
    deepest = depth = 0
    for char in value:
        if char == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif char == ")":
            depth = max(0, depth - 1)
    return deepest


def _automatic(message: EmailMessage) -> bool:
    """Whether a machine sent the mail (RFC 3834, mailing lists): never answered, never a
    move, so no two robots can keep mailing each other."""
    auto = str(message.get("Auto-Submitted", "no")).strip().lower()
    precedence = str(message.get("Precedence", "")).strip().lower()
    return auto != "no" or precedence in _QUIET_PRECEDENCE or "List-Id" in message


def _parse_body(raw: bytes) -> EmailMessage:
    """The whole mail, parsed by a parser whose message factory counts the parts it makes and
    stops (``_TooManyPartsError``) past ``MAX_PARTS``: the parser makes each part before it reads
    what is inside, so no nesting or list of parts can get further than that."""
    made = 0

    def counted(policy: Policy) -> EmailMessage:
        nonlocal made
        made += 1
        if made > MAX_PARTS:
            raise _TooManyPartsError
        return EmailMessage(policy)

    policy = email.policy.default.clone(message_factory=counted)
    message = email.parser.BytesParser(policy=policy).parsebytes(raw)
    assert isinstance(message, EmailMessage)
    return message


def _plain_text(raw: bytes) -> tuple[str | None, str]:
    """The mail's plain-text body (not an attachment), or None and why not: more than
    ``MAX_PARTS`` parts (seen before parsing, or while), no such part (HTML only), or a part
    that does not decode."""
    many = f"the mail has more than {MAX_PARTS} parts: send the move as plain text"
    if len(_PART_HEADER.findall(raw)) > MAX_PARTS:
        return None, many
    plain = "the mail has no plain-text part: send the move as plain text, not HTML only"
    try:
        message = _parse_body(raw)
        body = message.get_body(preferencelist=("plain",))
    except _TooManyPartsError:
        return None, many
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
