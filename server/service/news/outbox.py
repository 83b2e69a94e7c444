"""Delivering notifications: e-mail over SMTP (each, or a daily digest) and webhooks.

Notifications are rows written in the same commit as the change that causes them
(``server.service.news.causes``); this worker delivers them, in rounds every ``outbox_poll_ms``
(``rounds``, a thread that starts deliveries and does not wait for them) or by ``deliver(now)``
(tests and one-off callers: everything due, waiting until it is done).

Concurrently, a player at a time. A webhook may never answer (up to
``server.edge.mail_out.WEBHOOK_TIMEOUT_SECONDS`` each); delivered one after another, one such
endpoint held up everyone's mail. So each round hands each player's due notifications, in
order, to a worker of a small pool, one worker per player at most: a dead endpoint holds one
worker, and its owner's further webhooks in that batch are not tried (counted as failed,
retried later) so it costs one timeout a batch. Players with a webhook and players without one
have a pool each (``outbox_workers`` threads each): however many dead endpoints there are, mail
to players without a webhook never waits behind them. A round starts only as many players as a
pool has free workers (the others wait for the next round): nothing queues, so a claim's lease
counts from the moment its delivery starts. A round's look for what is due (``BATCH`` at most)
leaves out the players whose delivery is under way, so one player's backlog behind a dead
endpoint cannot fill every round while others' notifications wait. Workers per player, not per
notification, so that one player's notifications still go out in order.

Once, not twice. A notification is *claimed* by a conditional update (``pending`` to
``sending``, with a lease) right before anything leaves, so of several server processes on one
database exactly one delivers it. Both channels' outcomes are stored together after the
attempt: a channel that got it is never tried again when the other is retried. A delivery that
fails in a way that says it did not arrive (a refused connection, an SMTP error reply, a
webhook answering other than 2xx) is retried with exponential backoff, up to
``MAX_ATTEMPTS``. A process that dies between handing a message over and storing that it did
leaves the row ``sending``: after its lease it is marked ``failed`` and not sent again, since
it may have arrived (logged; a mail's ``Message-ID`` is the notification's, so a mail client
would fold a repeat anyway).

Digests: a player in mode ``digest`` gets one mail a day, at ``digest_hour`` in their time
zone, with every notification since the last; the day's digest is claimed by a conditional
update of the player's ``digest_sent_ms``.

Webhooks: an HTTP POST of JSON (``server.service.news.words.webhook_json``: no hand) with the
header ``X-Canasta-Signature: sha256=<hex HMAC-SHA256 of the body with the player's secret>``.
Unless ``webhook_allow_private`` is set (tests with a receiver on 127.0.0.1), a webhook whose
host resolves to an address that is not globally reachable unicast is refused, at each
delivery (DNS may change): decided by the address's properties (``public_address``), an IPv4
address inside an IPv6 one judged as that IPv4 address. The connection goes to the very
address checked, with one deadline for the whole exchange.

This module is the policy (which URL and address a webhook may use, what a failed delivery is,
when to retry); the sending itself, SMTP and HTTP, is the edge's (``server.edge.mail_out``),
handed in by ``server.app``, so that no service module does network I/O.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import ipaddress
import json
import logging
import threading
import urllib.parse
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import formatdate, make_msgid

from server.domain import EmailMode, Match, MatchStatus, MatchView, Notification, Settings
from server.service import matches
from server.service.clocks import zone
from server.service.context import ServiceContext
from server.service.news import replies, words
from server.service.periodic import Periodic
from shared.rules import GameState

FORGET_EVERY_MS = 3_600_000
"""How often a process deletes the notifications past their retention."""
FORGET_BATCH = 5_000
"""Notifications deleted per transaction, so the deletion never holds the database long."""
log = logging.getLogger(__name__)

BATCH = 50
"""Most notifications one round delivers (the next round takes the rest)."""
MAX_ATTEMPTS = 8
LEASE_MS = 120_000
"""How long a claimed notification may take; past it, it counts as interrupted."""
FIRST_RETRY_MS = 30_000
"""The first retry waits this long; each next one twice as long (30 s ... about an hour)."""
DIGEST_LIMIT = 200
"""Most notifications in one digest (the rest go into the next)."""
_MAIL_LANE, _WEBHOOK_LANE = "mail", "webhook"
LOG_PAGE = 100
"""Most notifications one read of the log returns (a Watch stream reads on until caught up)."""

MailSender = Callable[[EmailMessage], None]
"""Hands a message to the SMTP server; raises ``OSError`` (``smtplib``'s errors are ones) when
it did not take it. The edge sends (``server.edge.mail_out``); what a failure means is here."""
WebhookPoster = Callable[[str, bytes, dict[str, str], bool], int]
"""POSTs ``(url, body, headers, allow_private)`` and returns the HTTP status; raises
``DeliveryError`` (a URL or address this module's policy refuses, no answer in time),
``OSError`` or ``ValueError``. The edge sends (``server.edge.mail_out``), asking
``check_webhook_url`` and ``public_address`` here which URL and address it may use."""


class DeliveryError(Exception):
    """A channel did not take the message (it will be retried)."""


class Outbox:
    def __init__(
        self,
        ctx: ServiceContext,
        views: Callable[[Match, GameState, int], MatchView],
        table_text: words.TableText,
        send_mail: MailSender,
        post: WebhookPoster,
    ) -> None:
        self.ctx = ctx
        self.views = views
        """A seat's view of a match, exactly as GetView would send it (``Play.view_for``)."""
        self.table_text = table_text
        self.send_mail = send_mail
        """Hands a mail to the SMTP server (``server.edge.mail_out.smtp_sender``)."""
        self.post = post
        """POSTs a webhook (``server.edge.mail_out.http_post``)."""
        self.rounds = Periodic(
            "canasta-outbox", lambda: ctx.config.outbox_poll_ms / 1000, self.start_round
        )
        """The thread that runs ``start_round`` again and again (``start``; ``stop`` here)."""
        workers = ctx.config.outbox_workers
        self._pools = {
            lane: ThreadPoolExecutor(workers, thread_name_prefix=f"canasta-outbox-{lane}")
            for lane in (_MAIL_LANE, _WEBHOOK_LANE)
        }
        self._lock = threading.Lock()
        self._busy: dict[int, str] = {}
        """Players whose delivery is under way in this process, and the lane it is in."""
        self._running: set[Future[None]] = set()
        self._forgotten_ms = 0
        """When this process last forgot old notifications (``forget_old``)."""

    @property
    def mail_on(self) -> bool:
        return bool(self.ctx.config.smtp_host)

    def stop(self) -> None:
        """Stop the rounds and wait for the deliveries under way (each has a deadline)."""
        self.rounds.stop()
        for pool in self._pools.values():
            pool.shutdown(wait=True)

    # -- rounds ---------------------------------------------------------------------------------

    def deliver(self, now: int | None = None) -> int:
        """Deliver everything due at ``now`` (and the digests due) and wait until it is done;
        returns how many notifications were handled."""
        handled = 0
        for _ in range(1000):  # each round settles or claims what it starts: a few suffice
            started, count = self._round(now)
            self._wait()
            handled += count
            if not started:
                break
        return handled

    def start_round(self, now: int | None = None) -> int:
        """Start delivering what is due (the digests due are sent before it returns); returns
        how many notifications were settled or handed to a worker. Once an hour, it first
        forgets the notifications past their retention (``forget_old``)."""
        moment = self.ctx.clock() if now is None else now
        if moment - self._forgotten_ms >= FORGET_EVERY_MS:
            self._forgotten_ms = moment
            self.forget_old(moment)
        return self._round(now)[1]

    def forget_old(self, now: int) -> int:
        """Delete the notifications settled more than ``notification_retention_days`` ago, in
        batches, each its own short transaction (a first run after an upgrade may find many);
        returns how many. The player's log, which Watch resumes from, reaches back that far."""
        ctx = self.ctx
        before = now - ctx.config.notification_retention_days * 86_400_000
        forgotten = 0
        while True:
            with ctx.db.write() as session:
                count = ctx.repo(session).forget_notifications(before, FORGET_BATCH)
            forgotten += count
            if count < FORGET_BATCH:
                break
        if forgotten:
            log.info("forgot %d notifications settled before the retention period", forgotten)
        return forgotten

    def _wait(self) -> None:
        with self._lock:
            running = list(self._running)
        wait(running)

    def _round(self, now: int | None) -> tuple[bool, int]:
        """Settle the quiet notifications due and hand each player's loud ones to a free
        worker; whether a delivery was started, and how many notifications were handled."""
        ctx = self.ctx
        now = ctx.clock() if now is None else now
        with self._lock:
            busy = set(self._busy)  # their batches are under way: their backlog waits
        with ctx.db.read() as session:
            repo = ctx.repo(session)
            stale = repo.stale_sendings(now)
            ids = repo.due_notifications(now, BATCH, busy)
            due = [n for n in (repo.notification(i) for i in ids) if n]
            players = {p: repo.settings(p) for p in {n.player_id for n in due}}
        if stale:
            with ctx.db.write() as session:
                abandoned = ctx.repo(session).abandon_stale_sendings(now)
            log.warning("%d notifications were interrupted mid-delivery; not sent again", abandoned)
        # Most notifications go nowhere but the player's log (no mail, no webhook, or mail
        # kept for the digest): settled together in one commit, with no claim.
        quiet: list[tuple[int, str, str]] = []
        loud: dict[int, list[int]] = {}
        for note in due:
            found = players.get(note.player_id)
            email = note.email_state or (self._email_plan(note, found) if found else "off")
            webhook = note.webhook_state or (
                "send" if found and found.webhook_url and _hooked(note.kind) else "off"
            )
            if "send" in (email, webhook):
                loud.setdefault(note.player_id, []).append(note.id)
            else:
                quiet.append((note.id, email, webhook))
        if quiet:
            codes = [n.id for n in due if n.kind == "verify_email"]
            with ctx.db.write() as session:
                repo = ctx.repo(session)
                repo.settle_quietly(quiet, now)
                for notification_id in codes:  # a code that will not go out: forgotten
                    if any(q[0] == notification_id for q in quiet):
                        repo.scrub_notification(notification_id)
        handled, started = len(quiet), False
        for player_id, ids in loud.items():
            found = players.get(player_id)
            lane = _WEBHOOK_LANE if found and found.webhook_url else _MAIL_LANE
            with self._lock:
                if player_id in self._busy:
                    continue  # their previous batch is still going: the next round
                if sum(1 for x in self._busy.values() if x == lane) >= ctx.config.outbox_workers:
                    continue  # the lane is full: the next round (nothing queues)
                self._busy[player_id] = lane
                future = self._pools[lane].submit(self._deliver_batch, player_id, ids, now)
                self._running.add(future)
            future.add_done_callback(functools.partial(self._finished, player_id))
            handled += len(ids)
            started = True
        self._digests(now)
        return started, handled

    def _finished(self, player_id: int, done: Future[None]) -> None:
        with self._lock:
            self._busy.pop(player_id, None)
            self._running.discard(done)
        if not done.cancelled() and (exc := done.exception()) is not None:
            log.error("delivering to player %d failed", player_id, exc_info=exc)

    def _deliver_batch(self, player_id: int, ids: list[int], now: int) -> None:
        """One player's due notifications, in order, each claimed right before it goes. Once
        their webhook has failed, the rest of the batch does not try it again."""
        ctx = self.ctx
        webhook_down = False
        for notification_id in ids:
            with ctx.db.write() as session:
                repo = ctx.repo(session)
                if not repo.claim_notification(notification_id, now, now + LEASE_MS):
                    continue  # another process has it
                claimed = repo.notification(notification_id)
                mine = repo.settings(player_id)
            if claimed is None or mine is None:
                continue
            if not self._attempt(claimed, mine, now, webhook_down):
                webhook_down = True

    def _attempt(
        self, note: Notification, settings: Settings, now: int, webhook_down: bool = False
    ) -> bool:
        """Deliver ``note`` on each channel not yet done and store how it went; False if its
        webhook failed (with ``webhook_down``, it is counted failed without being tried)."""
        email, webhook, failed, hook_ok = note.email_state, note.webhook_state, False, True
        deliveries = self.ctx.metrics.deliveries
        if not email:
            try:
                email = self._email(note, settings)
            except DeliveryError as exc:
                failed = True
                deliveries.labels("email", "failed").inc()
                log.info("notification %d: mail not delivered: %s", note.id, exc)
            else:
                if email == "sent":
                    deliveries.labels("email", "sent").inc()
        if not webhook:
            try:
                if webhook_down and settings.webhook_url and _hooked(note.kind):
                    raise DeliveryError("not tried: this webhook failed a moment ago")
                webhook = self._webhook(note, settings)
            except DeliveryError as exc:
                failed, hook_ok = True, False
                deliveries.labels("webhook", "failed").inc()
                log.info("notification %d: webhook not delivered: %s", note.id, exc)
            else:
                if webhook == "sent":
                    deliveries.labels("webhook", "sent").inc()
        attempts = note.attempts + 1
        state, next_ms = "done", 0
        if failed and attempts < MAX_ATTEMPTS:
            state, next_ms = "pending", now + FIRST_RETRY_MS * 2 ** (attempts - 1)
        elif failed:
            state = "failed"
            email, webhook = email or "failed", webhook or "failed"
        with self.ctx.db.write() as session:
            repo = self.ctx.repo(session)
            if note.kind == "verify_email":  # the code's only copy outside a hash: gone
                repo.scrub_notification(note.id)
            repo.settle_notification(
                note.id,
                state=state,
                email_state=email,
                webhook_state=webhook,
                attempts=attempts,
                next_attempt_ms=next_ms,
                now=now,
            )
        return hook_ok

    # -- e-mail ---------------------------------------------------------------------------------

    def _email_plan(self, note: Notification, settings: Settings) -> str:
        """Whether ``note`` is to be mailed now (``send``), kept for the digest (``digest``),
        or not mailed at all (``off``)."""
        if not self.mail_on:
            return "off"
        if note.kind == "verify_email":
            address = str(note.facts.get("address", ""))
            code = str(note.facts.get("code", ""))
            latest = hashlib.sha256(code.encode()).hexdigest() == settings.email_code_hash
            if not address or address != settings.email_pending or not latest:
                return "off"  # another code was asked for since: this one is void
            return "send"
        if note.kind in words.ANSWERS:  # the player's own mail asked for it
            return "send" if settings.email_verified else "off"
        if not settings.email_verified or settings.email_mode is EmailMode.OFF:
            return "off"
        if settings.email_mode is EmailMode.DIGEST:
            return "digest"
        if note.kind == "talk":  # no mail of its own: it goes with the next about the match
            return "held"
        return "send"

    def _email(self, note: Notification, settings: Settings) -> str:
        """Send ``note`` by mail now (``sent``), leave it for the digest (``digest``), or not
        at all (``off``)."""
        plan = self._email_plan(note, settings)
        if plan != "send":
            return plan
        if note.kind == "verify_email":
            address = str(note.facts.get("address", ""))
            self._send(address, words.subject(note), words.mail_body([note], {}, settings), note)
            return "sent"
        tables = self._tables([note], settings)
        codes = self._reply_codes(tables, settings)
        subject = words.subject(note)
        if len(codes) == 1:  # a reply keeps the subject: the code travels back in it
            subject += f" [{next(iter(codes.values()))}]"
        notes = [note, *self._talk_since_last_mail(note)]
        self._send(settings.email, subject, words.mail_body(notes, tables, settings, codes), note)
        return "sent"

    def _talk_since_last_mail(self, note: Notification) -> list[Notification]:
        """The table talk of ``note``'s match that the player heard of since the last mail
        about it (held for this one: ``_email_plan``)."""
        if not note.match_id:
            return []
        ctx = self.ctx
        with ctx.db.read() as session:
            repo = ctx.repo(session)
            ids = repo.talk_notes_before(note.player_id, note.match_id, note.id)
            found = [repo.notification(i) for i in ids]
        return [n for n in found if n is not None]

    def _reply_codes(
        self, tables: dict[str, words.MailTable], settings: Settings
    ) -> dict[str, str]:
        """A fresh single-use reply code for each table where it is the player's move, if they
        take moves by reply (``server.service.news.replies``); stored before the mail goes."""
        if not settings.allow_reply_moves or not settings.email_verified:
            return {}
        mine = {
            match_id: match
            for match_id, (match, state, seat, _) in tables.items()
            if match.status is MatchStatus.PLAYING and matches.waits_for(match, state, seat)
        }
        if not mine:
            return {}
        ctx = self.ctx
        now = ctx.clock()
        with ctx.db.write() as session:
            repo = ctx.repo(session)
            return {
                match_id: replies.issue(repo, settings.player_id, match_id, match.version, now)
                for match_id, match in mine.items()
            }

    def _send(self, to: str, subject: str, body: str, note: Notification | None) -> None:
        config = self.ctx.config
        message = EmailMessage()
        message["From"] = config.mail_from
        message["To"] = to
        message["Subject"] = subject
        message["Date"] = formatdate(usegmt=True)
        # RFC 3834: vacation responders do not answer it, and mail-in ignores such mails, so
        # the server and a player's auto-responder cannot keep answering each other.
        message["Auto-Submitted"] = "auto-generated"
        domain = config.mail_from.rpartition("@")[2] or None
        idstring = f"canasta-notification-{note.id}" if note is not None else None
        message["Message-ID"] = make_msgid(idstring=idstring, domain=domain)
        message.set_content(body)
        try:
            self.send_mail(message)
        except OSError as exc:  # smtplib's errors are OSErrors too
            raise DeliveryError(f"{type(exc).__name__}: {exc}") from None

    def _tables(self, notes: list[Notification], settings: Settings) -> dict[str, words.MailTable]:
        """Each match's table as the player sees it now (only matches they sit in), rendered
        from the view their own GetView would get, in their time zone."""
        positions: list[tuple[Match, GameState, int]] = []
        ctx = self.ctx
        with ctx.db.read() as session:
            repo = ctx.repo(session)
            for match_id in dict.fromkeys(n.match_id for n in notes if n.match_id):
                match = repo.match(match_id)
                if match is None:
                    continue
                seat = match.seat_of(settings.player_id)
                if seat is not None:
                    positions.append((match, matches.load_state(ctx, repo, match), seat))
        now = ctx.clock()
        return {
            match.id: words.MailTable(
                match,
                state,
                seat,
                self.table_text(self.views(match, state, seat), settings.time_zone, now),
            )
            for match, state, seat in positions
        }

    def _digests(self, now: int) -> None:
        """Send every digest that is due (once a day per player, at their ``digest_hour``)."""
        if not self.mail_on:
            return
        ctx = self.ctx
        with ctx.db.read() as session:
            players = ctx.repo(session).players_with_digests(BATCH)
        for player_id in players:
            with ctx.db.read() as session:
                settings = ctx.repo(session).settings(player_id)
            if settings is None:
                continue
            if not settings.email_verified or settings.email_mode is not EmailMode.DIGEST:
                with ctx.db.write() as session:  # mail turned off since: these never go
                    repo = ctx.repo(session)
                    repo.set_email_state(
                        [n.id for n in repo.digest_waiting(player_id, DIGEST_LIMIT)], "off"
                    )
                continue
            since = _digest_time(now, settings.time_zone, ctx.config.digest_hour)
            if settings.digest_sent_ms >= since:
                continue  # today's has gone out
            # Claimed and marked in one commit: a crash after it loses a digest at worst,
            # never mails one twice.
            with ctx.db.write() as session:
                repo = ctx.repo(session)
                notes = repo.digest_waiting(player_id, DIGEST_LIMIT)
                if not notes or notes[0].created_ms > since:
                    continue  # all of it came after the last digest hour: the next one
                if not repo.claim_digest(player_id, settings.digest_sent_ms, now):
                    continue
                repo.set_email_state([n.id for n in notes], "digested")
            subject = f"Canasta: {len(notes)} notification{'s' if len(notes) != 1 else ''}"
            tables = self._tables(notes, settings)
            body = words.mail_body(notes, tables, settings, self._reply_codes(tables, settings))
            try:
                self._send(settings.email, subject, body, None)
            except DeliveryError as exc:
                log.info("digest for player %d not delivered: %s", player_id, exc)
                with ctx.db.write() as session:  # it did not go: the next round tries again
                    repo = ctx.repo(session)
                    repo.set_email_state([n.id for n in notes], "digest")
                    repo.claim_digest(player_id, now, settings.digest_sent_ms)

    # -- webhooks -------------------------------------------------------------------------------

    def _webhook(self, note: Notification, settings: Settings) -> str:
        if not settings.webhook_url or not _hooked(note.kind):
            return "off"
        body = json.dumps(words.webhook_json(note, settings), sort_keys=True).encode()
        signature = hmac.new(settings.webhook_secret.encode(), body, hashlib.sha256).hexdigest()
        headers = {
            "Content-Type": "application/json",
            "User-Agent": "canasta-server",
            "X-Canasta-Signature": f"sha256={signature}",
            "X-Canasta-Delivery": str(note.id),
        }
        try:
            status = self.post(
                settings.webhook_url, body, headers, self.ctx.config.webhook_allow_private
            )
        except (OSError, ValueError) as exc:
            raise DeliveryError(f"{type(exc).__name__}: {exc}") from None
        if not 200 <= status < 300:
            raise DeliveryError(f"the webhook answered HTTP {status}")
        return "sent"

    # -- the log, for Watch ----------------------------------------------------------------------

    def log(
        self, player_id: int, after_id: int, limit: int = LOG_PAGE
    ) -> tuple[int, list[tuple[Notification, str]]]:
        """A page of the player's notifications after ``after_id``, oldest first, with their
        sentence, and the last id the page covered (resume after it); never an e-mail code
        (it must come by mail, or it would prove nothing)."""
        ctx = self.ctx
        with ctx.db.read() as session:
            repo = ctx.repo(session)
            settings = repo.settings(player_id)
            found = repo.notifications_of(player_id, after_id, limit)
        last = found[-1].id if found else after_id
        if settings is None:
            return last, []
        return last, [
            (note, words.headline(note, None, settings))
            for note in found
            if note.kind != "verify_email"
        ]


def _hooked(kind: str) -> bool:
    """Whether a notification of ``kind`` goes to webhooks: not a code (it must come by
    mail), not an answer to a player's mail (it belongs in their inbox)."""
    return kind != "verify_email" and kind not in words.ANSWERS


def _digest_time(now: int, time_zone: str, hour: int) -> int:
    """The latest digest instant at or before ``now``: ``hour`` o'clock in ``time_zone``."""
    tz = zone(time_zone)
    local = datetime.fromtimestamp(now / 1000, UTC).astimezone(tz)
    today = datetime(local.year, local.month, local.day, hour, tzinfo=tz)
    if today > local:
        today -= timedelta(days=1)
        today = datetime(today.year, today.month, today.day, hour, tzinfo=tz)
    return int(today.timestamp() * 1000)


MAX_WEBHOOK_URL = 500
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_SIIT = ipaddress.ip_network("::ffff:0:0:0/96")
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")
_SPECIAL = (
    ipaddress.ip_network("192.0.0.0/24"),  # IETF protocol assignments
    ipaddress.ip_network("192.88.99.0/24"),  # 6to4 relays (deprecated)
    ipaddress.ip_network("64:ff9b:1::/48"),  # local-use NAT64
    ipaddress.ip_network("2002::/16"),  # 6to4 (deprecated): a tunnel to any IPv4 address
)
"""Special-purpose blocks (IANA) that Python before 3.12.4 counts as global."""


def _inner_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address stands for, if it is one of the forms that carry one:
    IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d), IPv4-translated
    (::ffff:0:a.b.c.d) or NAT64 (64:ff9b::a.b.c.d)."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if any(address in n for n in (_IPV4_COMPATIBLE, _SIIT, _NAT64)):
        return ipaddress.IPv4Address(int(address) & 0xFFFF_FFFF)
    return None


def public_address(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Whether a webhook may go to ``address``: globally reachable unicast, judged by the
    address's properties, an IPv6 form of an IPv4 address as that IPv4 address too, so that
    no spelling of loopback or a private, link-local, multicast or reserved address passes."""
    inner = _inner_ipv4(address) if isinstance(address, ipaddress.IPv6Address) else None
    return all(
        candidate.is_global
        and not candidate.is_multicast
        and not any(candidate in n for n in _SPECIAL if n.version == candidate.version)
        for candidate in (address, inner)
        if candidate is not None
    )


def check_webhook_url(url: str) -> tuple[str, str, int, str]:
    """The URL's scheme, host, port and path (with query), or ``DeliveryError`` if it is not
    an http(s) URL of at most ``MAX_WEBHOOK_URL`` characters. Only its form: no lookup."""
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError:
        raise DeliveryError("that is not a URL") from None
    if (
        len(url) > MAX_WEBHOOK_URL
        or parts.scheme not in ("http", "https")
        or not parts.hostname
        or not url.isprintable()
        or any(c.isspace() for c in url)
    ):
        raise DeliveryError("a webhook is an http:// or https:// URL of at most 500 characters")
    default = 443 if parts.scheme == "https" else 80
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return parts.scheme, parts.hostname, port or default, path
