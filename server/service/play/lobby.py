"""The lobby: create a match, join it by invitation code, give seats to bots, start it.

A seat decides the partnership (seats of one side are listed in the rule configuration). A
match starts by itself once every seat is taken; ``start`` gives the empty seats to bots first.
Seat changes lock the match row first (``FOR UPDATE``; SQLite has one writer anyway), so racing
joins on PostgreSQL queue up instead of failing each other's revision check.

Every change here bumps the match's ``revision`` and stamps ``updated_ms``, which is how the
other server processes' change feeds (``server.service.live.feed``) find it. The stamp is taken
inside the transaction, once the match row is locked, so that it is as close to the commit as
it can be.
"""

from __future__ import annotations

import dataclasses
import json
import re
import secrets
import uuid
from collections.abc import Mapping, Sequence

from server.domain import Match, MatchStatus, MatchSummary, Player, Seat, SeatKind, TimeControl
from server.service import clocks, matches
from server.service.clocks import NO_CLOCK, ClockChoice
from server.service.context import ServiceContext
from server.service.errors import ConflictError, InvalidRequestError, LimitExceededError
from server.service.news import causes
from server.service.spectators import policy_named
from server.store.repository import Repository, StoredSnapshot
from shared.bots import DEFAULT_LEVEL, check_level
from shared.crypto.chain import genesis_hash
from shared.rules import GameState, RuleConfig, make_config

_INVITE_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"
_INVITE_LENGTH = 10
MAX_PAGE = 100
"""Most matches in one ListMyMatches answer."""
MAX_OPTIONS = 64
MAX_OPTION_TEXT = 1_000
"""Longest JSON text of one option value (the longest real one, a minimum-meld table, is
about 60 characters)."""


def new_invite_code() -> str:
    return "".join(secrets.choice(_INVITE_ALPHABET) for _ in range(_INVITE_LENGTH))


class Lobby:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    def create(
        self,
        player: Player,
        preset: str,
        options: Mapping[str, str],
        target: int,
        seat: int | None,
        bot_seats: Sequence[int],
        clock: ClockChoice = NO_CLOCK,
        spectators: str = "",
        unrated: bool = False,
        bot_levels: Mapping[int, str] | None = None,
    ) -> tuple[MatchSummary, str]:
        ctx = self.ctx
        control = clocks.time_control(clock)
        policy = policy_named(spectators)
        if len(options) > MAX_OPTIONS:
            raise InvalidRequestError(f"at most {MAX_OPTIONS} rule options")
        values = {name: _option_value(name, text) for name, text in options.items()}
        if target:
            values["target"] = target
        config = make_config(preset or "classic", values)
        players = config.players
        mine = 0 if seat is None else seat
        bots = frozenset(bot_seats)
        if not 0 <= mine < players or any(not 0 <= b < players for b in bots):
            raise InvalidRequestError(f"seats are numbered 0 to {players - 1} in this match")
        if mine in bots:
            raise InvalidRequestError("you cannot give your own seat to a bot")
        levels = {int(s): _level(text) for s, text in (bot_levels or {}).items()}
        if any(s not in bots for s in levels):
            raise InvalidRequestError("a bot level is given for a seat that is not a bot's")
        with ctx.db.write() as session:
            repo = ctx.repo(session)
            self._check_open_matches(repo, player)
            now = ctx.clock()
            match = _new_match(player, config, mine, bots, now, control, ctx.config.hour_ms, levels)
            repo.add_match(dataclasses.replace(match, spectators=policy, rated=not unrated))
            match, state = self._start_if_full(repo, match.id, now)
            repo.set_seen(match.id, mine, match.revision)
        self._publish(match, state)
        return self._summary(match, state, player), match.invite_code

    def join(self, player: Player, invite_code: str, seat: int | None) -> tuple[MatchSummary, int]:
        ctx = self.ctx
        with ctx.db.write() as session:
            repo = ctx.repo(session)
            match = repo.match_by_invite(invite_code.strip().lower(), for_update=True)
            if match is None:
                raise InvalidRequestError("no match has that invitation code")
            now = ctx.clock()
            already = match.seat_of(player.id)
            if already is not None:
                if seat is not None and seat != already:
                    raise ConflictError(f"you already sit at seat {already} in this match")
                state = matches.load_state(ctx, repo, match)
                return matches.summary(match, state, player.id), already
            chosen = self._free_seat(match, seat)
            self._check_open_matches(repo, player)
            self._take(repo, match, chosen, SeatKind.HUMAN, player.id, now)
            match, state = self._start_if_full(repo, match.id, now)
            repo.set_seen(match.id, chosen, match.revision)
        self._publish(match, state)
        return self._summary(match, state, player), chosen

    def fill_with_bot(
        self, player: Player, match_id: str, seat: int | None, level: str = ""
    ) -> MatchSummary:
        ctx = self.ctx
        level = _level(level)
        with ctx.db.write() as session:
            repo = ctx.repo(session)
            match = matches.require_match(repo, match_id, for_update=True)
            now = ctx.clock()
            mine = matches.require_seat(match, player.id)
            chosen = self._free_seat(match, seat)
            self._take(repo, match, chosen, SeatKind.BOT, None, now, level)
            match, state = self._start_if_full(repo, match.id, now)
            repo.set_seen(match.id, mine, match.revision)
        self._publish(match, state)
        return self._summary(match, state, player)

    def start(self, player: Player, match_id: str) -> MatchSummary:
        ctx = self.ctx
        with ctx.db.write() as session:
            repo = ctx.repo(session)
            match = matches.require_match(repo, match_id, for_update=True)
            now = ctx.clock()
            mine = matches.require_seat(match, player.id)
            if match.status is not MatchStatus.WAITING:
                raise ConflictError("the match has already started")
            for s in match.seats:
                if s.kind is SeatKind.EMPTY:
                    self._take(repo, match, s.seat, SeatKind.BOT, None, now)
                    match = matches.require_match(repo, match.id)
            match, state = self._start_if_full(repo, match.id, now)
            repo.set_seen(match.id, mine, match.revision)
        self._publish(match, state)
        return self._summary(match, state, player)

    def abort(self, player: Player, match_id: str) -> MatchSummary:
        """Ask to abandon a match that has not been dealt yet; it ends (no winner) once every
        person seated in it asked, or at once while nobody else has joined."""
        ctx = self.ctx
        with ctx.db.write() as session:
            repo = ctx.repo(session)
            match = matches.require_match(repo, match_id, for_update=True)
            mine = matches.require_seat(match, player.id)
            if match.status is MatchStatus.FINISHED:
                raise ConflictError("the match is over already")
            if match.version > 0:
                raise ConflictError(
                    "the first hand has been dealt: a side may resign instead (canasta resign)"
                )
            now = ctx.clock()
            state = matches.load_state(ctx, repo, match)
            others = [s for s in match.seats if s.kind is SeatKind.HUMAN and s.seat != mine]
            repo.set_abort_asked(match.id, mine)
            asked = matches.with_abort_asked(match, mine)
            if all(s.abort_asked for s in others):
                match = abandon(repo, asked, state, now)
            else:
                match = matches.store_change(repo, match, asked, now)
                repo.add_notices(causes.abort_asked(match, mine), now)
            repo.set_seen(match.id, mine, match.revision)
        self._publish(match, state)
        return self._summary(match, state, player)

    def list_mine(
        self, player: Player, page_size: int, page_token: str, active_only: bool
    ) -> tuple[list[MatchSummary], str]:
        """A page of the player's matches (active ones first) and the token of the next page
        ("" when this is the last): a player with a thousand finished matches waits for a
        page, not for all of them."""
        ctx = self.ctx
        limit = page_size if 0 < page_size <= MAX_PAGE else MAX_PAGE
        finished, after = _read_page_token(page_token)
        found: list[tuple[Match, StoredSnapshot]] = []
        with ctx.db.read() as session:
            repo = ctx.repo(session)
            if not finished:
                found = repo.matches_page(player.id, finished=False, after=after, limit=limit)
                if len(found) < limit and not active_only:
                    finished, after = True, None
            if finished and not active_only:
                found += repo.matches_page(
                    player.id, finished=True, after=after, limit=limit - len(found)
                )
            summaries = [
                matches.summary(m, matches.load_state(ctx, repo, m, snapshot), player.id)
                for m, snapshot in found
            ]
            last = found[-1][0] if len(found) == limit else None
            following = "" if last is None else _page_token(last)
        return summaries, following

    # -- helpers --------------------------------------------------------------------------------

    def _check_open_matches(self, repo: Repository, player: Player) -> None:
        limit = self.ctx.config.limit_open_matches
        if repo.open_matches_of(player.id) >= limit:
            raise LimitExceededError(
                f"you sit in {limit} unfinished matches already, the most this server allows: "
                "finish one first"
            )

    def _free_seat(self, match: Match, seat: int | None) -> int:
        if match.status is not MatchStatus.WAITING:
            raise ConflictError("the match has already started: its seats are taken")
        if seat is None:
            for s in match.seats:
                if s.kind is SeatKind.EMPTY:
                    return s.seat
            raise ConflictError("every seat of this match is taken")
        if not 0 <= seat < len(match.seats):
            raise InvalidRequestError(f"seats are numbered 0 to {len(match.seats) - 1}")
        if match.seats[seat].kind is not SeatKind.EMPTY:
            raise ConflictError(f"seat {seat} is taken")
        return seat

    def _take(
        self,
        repo: Repository,
        match: Match,
        seat: int,
        kind: SeatKind,
        player_id: int | None,
        now: int,
        bot_level: str = "",
    ) -> None:
        if not repo.set_seat(match.id, seat, kind, player_id, bot_level):
            raise ConflictError(f"seat {seat} was taken meanwhile")
        if not repo.save_match(
            match.id,
            expected_revision=match.revision,
            status=match.status,
            revision=match.revision + 1,
            now=now,
        ):
            raise ConflictError("the match changed meanwhile; try again")

    def _start_if_full(self, repo: Repository, match_id: str, now: int) -> tuple[Match, GameState]:
        match = matches.require_match(repo, match_id)
        if match.status is MatchStatus.WAITING and all(
            s.kind is not SeatKind.EMPTY for s in match.seats
        ):
            started, state = matches.start(self.ctx, repo, match, now)
            repo.add_notices(causes.turn_started(started, state), now)
            return started, state
        return match, matches.load_state(self.ctx, repo, match)

    def _summary(self, match: Match, state: GameState, player: Player) -> MatchSummary:
        """The caller's summary right after its own change (which it has seen, then)."""
        return dataclasses.replace(matches.summary(match, state, player.id), changed=False)

    def _publish(self, match: Match, state: GameState) -> None:
        self.ctx.states.put(match.id, match.revision, state)
        self.ctx.notifier.publish(matches.change(match, state))


_PAGE_TOKEN = re.compile(r"(?P<group>[af])\.(?P<created>[0-9]{1,19})\.(?P<id>[0-9a-z]{1,64})")


def _page_token(last: Match) -> str:
    """Where the next page starts: after ``last`` in its group ("a" active, "f" finished)."""
    group = "f" if last.status is MatchStatus.FINISHED else "a"
    return f"{group}.{last.created_ms}.{last.id}"


def _read_page_token(token: str) -> tuple[bool, tuple[int, str] | None]:
    """(finished group?, the (created_ms, id) to start after) of a page token."""
    if not token:
        return False, None
    found = _PAGE_TOKEN.fullmatch(token)
    if found is None or int(found["created"]) >= 2**63:
        raise InvalidRequestError("that page token is not one this server gave")
    return found["group"] == "f", (int(found["created"]), found["id"])


def _refuse_constant(name: str) -> object:
    raise ValueError(f"{name} is not a number a rule option can take")


def _option_value(name: str, text: str) -> object:
    """One option's JSON value text, parsed; bounded in length and depth, no NaN or infinity
    (the rule configuration then checks its type and range)."""
    shown = name if len(name) <= 40 else name[:37] + "..."
    if len(text) > MAX_OPTION_TEXT:
        raise InvalidRequestError(
            f"the value of option {shown!r} is longer than {MAX_OPTION_TEXT} characters"
        )
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except (ValueError, RecursionError):
        raise InvalidRequestError(
            f'the value of option {shown!r} is not JSON (e.g. true, 7500, "draw")'
        ) from None


def _new_match(
    player: Player,
    config: RuleConfig,
    mine: int,
    bots: frozenset[int],
    now: int,
    control: TimeControl | None,
    hour_ms: int,
    levels: Mapping[int, str],
) -> Match:
    """A waiting match created by ``player`` at seat ``mine``, with ``bots``' seats given to
    bots and the others empty; with a time control, every seat's bank full."""
    match_id = uuid.uuid4().hex
    bank = control.bank_ms(hour_ms) if control is not None else 0
    seats = tuple(
        Seat(s, SeatKind.HUMAN, player.id, bank_ms=bank)
        if s == mine
        else Seat(
            s,
            SeatKind.BOT if s in bots else SeatKind.EMPTY,
            bank_ms=bank,
            bot_level=levels.get(s, DEFAULT_LEVEL) if s in bots else "",
        )
        for s in range(config.players)
    )
    return Match(
        id=match_id,
        preset=config.preset,
        config=config,
        status=MatchStatus.WAITING,
        version=0,
        revision=1,
        head_hash=genesis_hash(match_id),
        invite_code=new_invite_code(),
        created_by=player.id,
        created_ms=now,
        updated_ms=now,
        seats=seats,
        time_control=control,
    )


def abandon(
    repo: Repository, match: Match, state: GameState, now: int, *, by_operator: bool = False
) -> Match:
    """End a match with no winner: ``FINISHED`` and ``aborted``, its clock stopped, its players
    told. Players may do it only before the first deal (by agreement, or when the first cut is
    overdue); the server's operator at any time (``canasta-server matches abort``)."""
    ended = matches.store_change(
        repo,
        match,
        dataclasses.replace(match, status=MatchStatus.FINISHED, clock=None, aborted=True),
        now,
    )
    repo.add_notices(causes.match_aborted(ended, state, by_operator=by_operator), now)
    return ended


def _level(text: str) -> str:
    """A bot level named by a request (empty: ``normal``), else ``InvalidRequestError``."""
    try:
        return check_level(text.strip().lower())
    except ValueError as exc:
        raise InvalidRequestError(str(exc)) from None
