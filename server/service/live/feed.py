"""The change feed: changes stored by other server processes, for this process's Watch streams.

``server.service.live.streams`` carries a change only within the process that stored it. Several
server processes may share one PostgreSQL database, and a player's
Watch stream may be held by another process than the one that stores the opponent's move. So
while at least one Watch stream is open in this process, a background thread asks the
database every ``feed_poll_ms`` which matches changed lately, and relays to the watchers each
change this process has not published yet (``Notifier.relay``: watchers only, never the bot
runner). With no Watch stream open it runs no query at all.

Every ``CREDENTIALS_SECONDS`` a round also checks that each open stream's token is still valid
(``check_credentials``): a player blocked by the operator (the ``players block`` command,
another process) or whose token was revoked or expired has the stream ended within that time.
That check reads every open stream's token, so it is not made at every poll: with a thousand
idle streams, checking at every 250 ms poll cost the process 10 ms of CPU a second, once a
second 6.

"Lately" means ``updated_ms >= now - slack``. Every change stamps ``updated_ms`` before its
transaction commits, so a change can become visible after one stamped later (a move waits for
its commit, a seat change for the row lock), and the clocks of replicas on different
hosts differ a little: the window reaches back ``LATE_COMMIT_SLACK_MS`` to cover both. Each
poll sees the whole window again and tells what is new by revision, which the notifier
remembers per match; that costs an index range scan of ``(id, revision)`` pairs, only as many
as matches changed within the window. A change that lands later than the slack is missed by
watchers already open (a new Watch reads the state afresh); keep the hosts' clocks in sync.
"""

from __future__ import annotations

import logging
import threading
import time

from server.service import matches
from server.service.context import ServiceContext
from server.service.errors import PermissionDeniedError, UnauthenticatedError
from server.service.live.streams import Notifier
from server.store.repository import Repository

log = logging.getLogger(__name__)

LATE_COMMIT_SLACK_MS = 10_000
"""How far back each poll looks, beyond the moment it polls (see the module docstring)."""
CREDENTIALS_SECONDS = 1.0
"""How often the open streams' tokens are checked (see the module docstring)."""


class ChangeFeed:
    """Polls for other processes' changes while this process has watchers (``start``/``stop``).

    The counters are for tests and diagnostics; only the feed's thread writes them.
    """

    def __init__(
        self, ctx: ServiceContext, notifier: Notifier, slack_ms: int = LATE_COMMIT_SLACK_MS
    ) -> None:
        self.ctx = ctx
        self.notifier = notifier
        self.slack_ms = slack_ms
        self.interval = ctx.config.feed_poll_ms / 1000
        self.ticks = 0
        """Rounds of the thread completed, with or without a poll."""
        self.polls = 0
        """Polls begun (each runs the query once)."""
        self.relayed = 0
        """Changes found by polling and sent to watchers."""
        self.errors = 0
        """Polls that failed (each is logged, and the next round tries again)."""
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is not None:
            return
        self._stopping.clear()
        self._thread = threading.Thread(target=self._run, name="canasta-feed", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """End the thread: at once when it is waiting, after the poll it is running else."""
        thread, self._thread = self._thread, None
        if thread is None:
            return
        self._stopping.set()
        thread.join(timeout)

    def _run(self) -> None:
        checked = time.monotonic()
        while not self._stopping.wait(self.interval):
            if self.notifier.watched():
                due = time.monotonic() - checked >= CREDENTIALS_SECONDS
                if due:
                    checked = time.monotonic()
                self._poll_logged(credentials=due)
            self.ticks += 1

    def _poll_logged(self, *, credentials: bool = True) -> None:
        """One poll (and the credentials check, when due); a failure (the database away, say)
        is logged and the thread goes on."""
        steps = (self.poll, self.check_credentials) if credentials else (self.poll,)
        for step in steps:  # one failing does not skip the other
            try:
                step()
            except Exception:
                self.errors += 1
                log.exception("the change feed could not read the database; it tries again")

    def poll(self) -> int:
        """Look once; relay every change not yet published here. Returns how many were sent."""
        self.polls += 1
        ctx = self.ctx
        since = ctx.clock() - self.slack_ms
        with ctx.db.read() as session:
            repo = ctx.repo(session)
            changed = repo.changed_since(since)
            fresh = [m for m, revision in changed if revision > self.notifier.published(m)]
            relayed = sum(self._relay(repo, match_id) for match_id in fresh)
        self.relayed += relayed
        return relayed

    def check_credentials(self) -> int:
        """End the Watch streams whose token is gone (revoked, expired) or whose player is
        blocked; returns how many were ended."""
        ctx = self.ctx
        watching = self.notifier.signed_in()
        if not watching:
            return 0
        with ctx.db.read() as session:
            live = ctx.repo(session).live_tokens({s.token_hash for s in watching}, ctx.clock())
        ended = 0
        for subscription in watching:
            blocked = live.get(subscription.token_hash)
            if blocked is None:
                subscription.revoke(
                    UnauthenticatedError("your sign-in was revoked or expired: authenticate again")
                )
            elif blocked:
                subscription.revoke(PermissionDeniedError("this key is blocked on this server"))
            else:
                continue
            ended += 1
        return ended

    def _relay(self, repo: Repository, match_id: str) -> bool:
        """Load one match and send its change to the watchers who want it. A change nobody
        here watches is only remembered: loading its state would be wasted."""
        ctx = self.ctx
        match = repo.match(match_id)
        if match is None:
            return False
        if not self.notifier.wanted(match.id, matches.player_ids(match)):
            self.notifier.remember(match.id, match.revision)
            return False
        state = matches.load_state(ctx, repo, match)
        return self.notifier.relay(matches.change(match, state))
