"""Opening a Watch stream: subscribe to the notifier, then read where each watched match stands.

The stream itself (the queue, waking the edge's coroutine, dropping what the watcher already
has) is ``streams``; changes stored by other server processes reach it through ``feed``.
"""

from __future__ import annotations

from server.domain import Change, Player
from server.service import matches, spectators
from server.service.context import ServiceContext
from server.service.errors import InvalidRequestError
from server.service.live.streams import Notifier, Subscription

MAX_WATCHED = 200
"""Matches one Watch may name (none: every match of the caller)."""


class Watching:
    """Watch streams of this process. It holds the notifier itself, not the context's
    ``Publisher`` view of it, because it subscribes."""

    def __init__(self, ctx: ServiceContext, notifier: Notifier) -> None:
        self.ctx = ctx
        self.notifier = notifier

    def watch(
        self, player: Player, match_ids: list[str], token_hash: bytes = b""
    ) -> tuple[Subscription, list[Change]]:
        """Subscribe first (so nothing is missed), then read each match's state now; changes
        queued meanwhile that this state already includes are not sent again. ``token_hash``
        names the sign-in the stream lives on (``ChangeFeed.check_credentials``)."""
        ctx = self.ctx
        if len(match_ids) > MAX_WATCHED:
            raise InvalidRequestError(f"a Watch names at most {MAX_WATCHED} matches")
        subscription = self.notifier.subscribe(
            player.id, frozenset(match_ids), token_hash, ctx.config.limit_watch_streams
        )
        try:
            with ctx.db.read() as session:
                repo = ctx.repo(session)
                if match_ids:
                    found = [matches.require_match(repo, m) for m in dict.fromkeys(match_ids)]
                    for match in found:
                        if match.seat_of(player.id) is None:  # a spectator, if allowed
                            spectators.may_spectate(match, player)
                            subscription.spectate(match.id)
                else:  # every match of the caller that can still change, not its finished ones
                    found = [
                        m
                        for m, _ in repo.matches_page(
                            player.id,
                            finished=False,
                            after=None,
                            limit=ctx.config.limit_open_matches,
                        )
                    ]
                initial = [matches.change(m, matches.load_state(ctx, repo, m)) for m in found]
        except BaseException:
            subscription.close()
            raise
        subscription.mark_sent(initial)
        return subscription, initial
