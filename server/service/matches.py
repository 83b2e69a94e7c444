"""Match facts shared by the lobby and play: starting, whose move, summaries, fair deals.

The fair-deal protocol these functions implement is specified in ``server.service.wings``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from functools import lru_cache

from server.domain import Change, Entry, Hand, Match, MatchStatus, MatchSummary, SeatKind
from server.service import clocks
from server.service.context import ServiceContext
from server.service.errors import ConflictError, NotFoundError, PermissionDeniedError
from server.store.repository import Repository, StoredSnapshot, read_snapshot
from shared.crypto.fairdeal import commitment, derived_secret
from shared.matchlog import Clock, Header, SeatKey, cutting_seat, header_hash, next_state
from shared.rules import Action, GameState, Phase, new_match
from shared.rules.orders import standing_action
from shared.wire import move_from_bytes

MAX_MATCH_ID = 64
"""Match ids are 32 hex digits; the column holds 64. Longer ones are not looked up."""


def no_such_match(match_id: str) -> NotFoundError:
    """The refusal for an unknown match id (echoed only when it is short enough to be one)."""
    if len(match_id) > MAX_MATCH_ID:
        return NotFoundError(
            f"there is no such match (a match id has at most {MAX_MATCH_ID} characters)"
        )
    return NotFoundError(f"there is no match {match_id!r}")


def require_match(repo: Repository, match_id: str, *, for_update: bool = False) -> Match:
    if len(match_id) > MAX_MATCH_ID:
        raise no_such_match(match_id)
    match = repo.match(match_id, for_update=for_update)
    if match is None:
        raise no_such_match(match_id)
    return match


def require_seat(match: Match, player_id: int) -> int:
    seat = match.seat_of(player_id)
    if seat is None:
        raise PermissionDeniedError("you do not sit in this match")
    return seat


SNAPSHOT_EVERY = 32
"""A move whose seq is a multiple of this (and the last move of a match) stores a snapshot;
loading a match replays at most this many entries after the latest snapshot, so it costs the
same at move 10 and move 10,000."""


def wants_snapshot(seq: int, state: GameState) -> bool:
    return seq % SNAPSHOT_EVERY == 0 or state.phase is Phase.MATCH_OVER


def load_state(
    ctx: ServiceContext,
    repo: Repository,
    match: Match,
    stored: StoredSnapshot | None = None,
) -> GameState:
    """The match's state now (a waiting match: the position before the first deal);
    ``stored``: its snapshot as stored, when the caller read it with the match already (it
    is parsed only if the state is not cached)."""
    cached = ctx.states.get(match.id, match.revision)
    if cached is not None:
        return cached
    found = repo.snapshot(match.id) if stored is None else read_snapshot(stored)
    if found is None:
        state = new_match(match.config, seed=match.id)
    else:
        at, state = found
        if at < match.version:
            entries = repo.entries(match.id, at, match.version - at)
            state = replay(match, state, entries, lambda n: repo.hand(match.id, n))
    ctx.states.put(match.id, match.revision, state)
    return state


def replay(
    match: Match, state: GameState, entries: Sequence[Entry], hand_of: Callable[[int], Hand | None]
) -> GameState:
    """Apply stored entries to a state (``shared.matchlog.next_state``: the engine for
    moves, the deal protocol for cuts), as ``canasta verify`` replays a transcript."""
    for entry in entries:
        move = move_from_bytes(entry.payload)
        secret = None
        if move.is_deal:
            hand = hand_of(entry.hand_number)
            if hand is None:
                raise NotFoundError(f"hand {entry.hand_number} has no commitment")
            secret = hand.secret
        state = next_state(state, match.id, move, entry.signature, secret)
    return state


def dealing_seat(match: Match, state: GameState) -> int | None:
    """Between hands, the seat that cuts (``shared.matchlog.cutting_seat``: the dealer, or
    the next human clockwise after it)."""
    if match.status is not MatchStatus.PLAYING or state.phase is not Phase.DEAL:
        return None
    return cutting_seat([s.kind is SeatKind.BOT for s in match.seats], state.dealer)


def to_act(match: Match, state: GameState) -> int | None:
    """Whose move it is: the engine's actor, or the seat that cuts between hands."""
    if match.status is not MatchStatus.PLAYING:
        return None
    if state.phase is Phase.DEAL:
        return dealing_seat(match, state)
    return state.actor()


def bot_to_act(match: Match, state: GameState) -> bool:
    """A bot is to move: a bot seat's turn, or a human seat's that a bot covers for now."""
    seat = to_act(match, state)
    if seat is None:
        return False
    taken = match.seats[seat]
    return taken.kind is SeatKind.BOT or bool(taken.covered)


def standing_order(match: Match, state: GameState) -> Action | None:
    """The move the standing orders of the human seat to act make now (``shared.rules.orders``
    decides where one applies), or None: a bot's seat, a covered one, a match whose header
    names no attest key (its verifier could not tell who signed such a move), or no order
    that applies."""
    seat = to_act(match, state)
    if seat is None or state.phase is Phase.DEAL:
        return None
    taken = match.seats[seat]
    if taken.kind is not SeatKind.HUMAN or taken.covered or not taken.orders.any:
        return None
    if not attest_key_named(match):
        return None
    return standing_action(state, seat, draw=taken.orders.draw, answer=taken.orders.answer)


def attest_key_named(match: Match) -> bytes:
    """The attest key the match's header names (empty: none, in a match begun before the
    server had one, which takes no server-attested moves)."""
    return _named_attest_key(match.header) if match.header else b""


@lru_cache(maxsize=1024)
def _named_attest_key(header: bytes) -> bytes:
    """Parsed once per header: a parse costs more than the rest of a move, and every move of
    a seat with standing orders asks (headers never change)."""
    return Header.from_bytes(header).attest_key


def waits_for(match: Match, state: GameState, seat: int) -> bool:
    """It is ``seat``'s move and its player's to make: no standing order makes it for them
    (a mail shows "your move" and a reply code only then)."""
    return to_act(match, state) == seat and standing_order(match, state) is None


def server_to_act(match: Match, state: GameState) -> bool:
    """The server makes the next move: a bot's, or a standing order's."""
    return bot_to_act(match, state) or standing_order(match, state) is not None


def with_abort_asked(match: Match, seat: int) -> Match:
    seats = tuple(
        dataclasses.replace(s, abort_asked=True) if s.seat == seat else s for s in match.seats
    )
    return dataclasses.replace(match, seats=seats)


def with_cover(match: Match, seat: int, cover: str, bank_ms: int | None = None) -> Match:
    """The match with ``seat``'s cover set (``""``: the player plays it again), and its
    bank if given."""
    changed = match.seats[seat]
    changed = dataclasses.replace(
        changed, covered=cover, bank_ms=changed.bank_ms if bank_ms is None else bank_ms
    )
    seats = tuple(changed if s.seat == seat else s for s in match.seats)
    return dataclasses.replace(match, seats=seats)


def summary(
    match: Match, state: GameState, player_id: int | None, *, shown: bool = False
) -> MatchSummary:
    """The match as a line of a list (``changed``: since the player last saw it); ``shown``:
    it goes with the view the player is shown, so it is not changed for them."""
    my_seat = match.seat_of(player_id) if player_id is not None else None
    seen = match.seats[my_seat].seen_revision if my_seat is not None else match.revision
    return MatchSummary(
        match=match,
        my_seat=my_seat,
        to_act=to_act(match, state),
        changed=not shown and seen < match.revision,
        scores=state.scores,
        target=state.target,
        hand_number=state.hand_number,
        winners=state.winners,
    )


def player_ids(match: Match) -> frozenset[int]:
    """The players seated in the match: who may hear of its changes."""
    return frozenset(s.player_id for s in match.seats if s.player_id is not None)


def change(match: Match, state: GameState) -> Change:
    return Change(
        match_id=match.id,
        version=match.version,
        revision=match.revision,
        status=match.status,
        to_act=to_act(match, state),
        player_ids=player_ids(match),
        server_to_act=server_to_act(match, state),
        cut=match.status is MatchStatus.PLAYING and state.phase is Phase.DEAL,
    )


def new_hand(deal_key: bytes, match_id: str, hand_number: int) -> Hand:
    """The secret of ``hand_number``, derived from the server's deal key (the same again
    after a restore), and its commitment (public once stored)."""
    secret = derived_secret(deal_key, match_id, hand_number)
    return Hand(hand_number, commitment(secret, match_id, hand_number), secret, False, 0)


def commit_hand(
    repo: Repository, deal_key: bytes, match_id: str, hand_number: int, now: int
) -> Hand:
    """Store the secret of ``hand_number``; its commitment becomes public now."""
    hand = new_hand(deal_key, match_id, hand_number)
    repo.add_hand(match_id, hand, now)
    return hand


def start(ctx: ServiceContext, repo: Repository, match: Match, now: int) -> tuple[Match, GameState]:
    """Begin a full match: the position before the first deal, and hand 1's commitment."""
    if any(s.kind is SeatKind.EMPTY for s in match.seats):
        raise ConflictError("the match still has empty seats")
    if not any(s.kind is SeatKind.HUMAN for s in match.seats):
        raise ConflictError("a match needs at least one human player")
    state = new_match(match.config, seed=match.id)
    commit_hand(repo, ctx.keys.deal, match.id, 1, now)
    revision = match.revision + 1
    header = match_header(ctx, match, now, state.dealer).to_bytes()
    started = dataclasses.replace(
        match,
        status=MatchStatus.PLAYING,
        revision=revision,
        updated_ms=now,
        header=header,
        head_hash=header_hash(header),
    )
    started, _ = clocks.restart(
        started, to_act(started, state), now, ctx.config.hour_ms
    )  # the cut is timed too
    if not repo.save_match(
        match.id,
        expected_revision=match.revision,
        status=MatchStatus.PLAYING,
        revision=revision,
        now=now,
        state=state,
        clock=started.clock,
        header=header,
        head_hash=started.head_hash,
    ):
        raise ConflictError("the match changed meanwhile; try again")
    return started, state


def match_header(ctx: ServiceContext, match: Match, now: int, first_dealer: int) -> Header:
    """What every move of the match will commit to, fixed as it starts: the rules, the seats'
    names and keys, the server's keys and the time control (``docs/transcript.md``)."""
    control = match.time_control
    return Header(
        match_id=match.id,
        config=match.config,
        seats=tuple(
            SeatKey(s.seat, s.display_name, s.kind is SeatKind.BOT, s.public_key)
            for s in match.seats
        ),
        server_key=ctx.keys.server_public,
        bot_key=ctx.keys.bot_public,
        clock=None
        if control is None
        else Clock(
            control.hours_per_move, control.bank_hours, control.weekends_off,
            control.on_timeout.value,
        ),
        started_ms=now,
        first_dealer=first_dealer,
        attest_key=ctx.keys.attest_public,
    )  # fmt: skip


def store_change(repo: Repository, before: Match, after: Match, now: int) -> Match:
    """Store ``after`` (``before`` with a new status, clock or end) as the next revision, if
    nobody changed ``before`` meanwhile; returns it as stored."""
    revision = before.revision + 1
    if not repo.save_match(
        before.id,
        expected_revision=before.revision,
        status=after.status,
        revision=revision,
        now=now,
        clock=after.clock,
        aborted=after.aborted,
    ):
        raise ConflictError("the match changed meanwhile; try again")
    return dataclasses.replace(after, revision=revision, updated_ms=now)


def turn_key(match: Match, state: GameState) -> tuple[int | None, int, bool]:
    """What identifies a turn for the clock: who acts, in which hand, and whether it is the
    cut between hands (the same seat may cut after going out)."""
    return to_act(match, state), state.hand_number, state.phase is Phase.DEAL
