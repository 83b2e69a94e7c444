"""Spectators (issue 32): registered players who follow a match they do not sit in.

A match's players choose a policy at creation (``server.domain.Spectators``: ``none`` unless
they choose another), and change it only together: each seated player asks for a policy
(``ask``), and it changes once every seated player asked for the same one. Under every policy
but ``none`` any registered player may look: what they see of the table comes from the engine's
``spectator_view`` (``server.service.play``), what they see of hidden cards from the policy
(``reveals``), and nothing else reaches them: no mail, no webhook, no reply code.

Players see who follows their match, and spectators how many do: a look counts the spectator
for a week (``RECENT_MS``), and is written at most once an hour per spectator (``NOTE_EVERY_MS``),
so that following a match costs no write per look. A match takes at most ``MAX_SPECTATORS``
new spectators a week, so no crowd can grow its list without bound.
"""

from __future__ import annotations

from server.domain import (
    DAY_MS,
    HOUR_MS,
    Hand,
    Match,
    MatchStatus,
    MatchSummary,
    Player,
    Spectators,
)
from server.service import matches
from server.service.context import ServiceContext
from server.service.errors import (
    ConflictError,
    InvalidRequestError,
    LimitExceededError,
    PermissionDeniedError,
)
from server.store.repository import Repository

RECENT_MS = 7 * DAY_MS
"""A spectator counts as following the match for a week after they last looked."""
NOTE_EVERY_MS = HOUR_MS
"""A spectator's look is written at most this often (one write, not one per look)."""
MAX_SPECTATORS = 200
"""The most players one match counts as spectators at once; one more is refused."""
SHOWN_NAMES = 20
"""The most spectators' names a player's table lists (the count says the rest)."""


def policy_named(text: str) -> Spectators:
    """The policy a player named (``none``, ``table``, ``after-hand``, ``after-match``)."""
    try:
        return Spectators(text or Spectators.NONE.value)
    except ValueError:
        names = ", ".join(p.value for p in Spectators)
        raise InvalidRequestError(f"spectators: one of {names}; not {text[:20]!r}") from None


def may_spectate(match: Match, player: Player) -> None:
    """Refuse a player who does not sit in the match unless its players allow spectators."""
    if match.spectators is Spectators.NONE:
        raise PermissionDeniedError(
            "you do not sit in this match, and its players allow no spectators"
        )
    if player.blocked:
        raise PermissionDeniedError("this key is blocked on this server")


def reveals(match: Match, hand: Hand | None, *, match_over: bool) -> bool:
    """Whether a spectator may see a hand's hidden cards (its deal, its stock draws, its
    secret): under the match's policy, once the hand is over, or once the match is."""
    hand_over = hand is not None and hand.revealed
    return match.spectators.shows_cards(hand_over, match_over)


class SpectatorBook:
    """Who follows which match: the notes, the counts and the names, and the players' asks
    to change the policy."""

    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    def note(self, match: Match, player: Player) -> None:
        """Count ``player`` among the match's spectators now (a write at most once an hour);
        refuse a new one once the match has ``MAX_SPECTATORS``."""
        ctx = self.ctx
        now = ctx.clock()
        with ctx.db.read() as session:
            repo = ctx.repo(session)
            last = repo.spectator_seen(match.id, player.id)
            if last is not None and now - last < NOTE_EVERY_MS:
                return
            crowd = repo.spectator_count(match.id, now - RECENT_MS)
        if (last is None or last < now - RECENT_MS) and crowd >= MAX_SPECTATORS:
            raise LimitExceededError(
                f"this match has {MAX_SPECTATORS} spectators already; try again later"
            )
        with ctx.db.write(durable=False) as session:  # a look promises nothing
            ctx.repo(session).note_spectator(match.id, player.id, now)

    def seen_by(
        self, repo: Repository, match: Match, *, names: bool
    ) -> tuple[int, tuple[str, ...]]:
        """How many follow the match, and (``names``: for its players) who."""
        if match.spectators is Spectators.NONE:
            return 0, ()
        since = self.ctx.clock() - RECENT_MS
        count = repo.spectator_count(match.id, since)
        if not names or not count:
            return count, ()
        return count, tuple(repo.spectator_names(match.id, since, SHOWN_NAMES))

    def ask(self, player: Player, match_id: str, policy_text: str) -> MatchSummary:
        """The caller's seat asks for ``policy``; once every seated player asked for the
        same, the match takes it (asking for the policy in force withdraws the ask). Returns
        the caller's summary of the match after."""
        policy = policy_named(policy_text)
        ctx = self.ctx
        now = ctx.clock()
        with ctx.db.write() as session:
            repo = ctx.repo(session)
            match = matches.require_match(repo, match_id, for_update=True)
            seat = matches.require_seat(match, player.id)
            if match.status is MatchStatus.FINISHED:
                raise ConflictError("this match is over: its spectators can no longer change")
            asks = {
                s.seat: (policy.value if s.seat == seat else s.spectators_vote)
                for s in match.seats
                if s.player_id is not None
            }
            if policy is match.spectators:
                repo.set_spectators_vote(match.id, seat, None)  # asking for what is: withdraw
            elif set(asks.values()) == {policy.value}:
                repo.set_spectators(match.id, policy)
            else:
                repo.set_spectators_vote(match.id, seat, policy)
            matches.store_change(repo, match, match, now)
            match = matches.require_match(repo, match_id)
            state = matches.load_state(ctx, repo, match)
        ctx.matches.put(match.id, match)
        ctx.notifier.publish(matches.change(match, state))
        return matches.summary(match, state, player.id, shown=True)
