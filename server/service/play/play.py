"""Play: views, signed moves (with the fair deal between hands) and history.

Watching the changes it stores is the live wing's (``server.service.live``).

``submit`` is the heart of the server. Under the match's lock and inside ONE write
transaction it checks, in order: the payload decodes; the match exists; the seat exists and is
taken; the signature is one that may sign for the seat (the seat's key, the bot key, the attest
key: ``shared.matchlog.signer_of``); the key is not blocked; the sequence number (an already
stored seq with the same bytes returns the stored receipt and changes nothing; any other stale
or future seq is refused with the current version); the match has started; ``prev_hash`` is the
head of the log; the rules (``shared.matchlog.apply_entry``: a cut's rules and the deal, or the
engine's move). Then it writes the new snapshot and the log entry, commits (durably), and only
then returns the receipt with the new view.

What a log entry must be is ``shared.matchlog``'s rule, the one ``canasta verify`` checks a
transcript by, so the server stores nothing the verifier refuses. The checks between its two
halves are the server's own, which a transcript cannot show: an empty seat, the bot key only
while a bot covers the seat, a forfeited cover, a blocked key, the seq (and the replay of a
stored envelope), a match not started or abandoned, the head of the log, a standing order that
still applies. The signature comes first, so that a move nobody may sign learns nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

from server.domain import (
    Cover,
    Entry,
    Hand,
    History,
    Match,
    MatchStatus,
    MatchView,
    Notice,
    Player,
    Receipt,
    SeatKind,
    Spectators,
)
from server.service import clocks, matches, spectators
from server.service.context import ServiceContext
from server.service.errors import (
    ConflictError,
    InvalidRequestError,
    NotFoundError,
    PermissionDeniedError,
    StaleMoveError,
    UnauthenticatedError,
)
from server.service.news import causes
from server.service.play.talk import talk_head
from server.store.errors import DuplicateKeyError
from server.store.repository import PreparedRepository, Repository, StoredMove, current_head
from shared.crypto.chain import entry_hash, sign_end, sign_receipt
from shared.matchlog import (
    EntryRefusedError,
    Refusal,
    Signer,
    apply_entry,
    signer_of,
)
from shared.rules import (
    NO_SEAT,
    Event,
    GameState,
    MoveGroup,
    NotYourTurnError,
    Phase,
    WrongPhaseError,
    grouped_moves,
    player_view,
    redact_event,
    spectator_view,
)
from shared.transcript import MatchEnd, end_outcome
from shared.wire import Move, WireError, move_from_bytes

_NO_SEAT = -1
"""For ``_current`` when no seat's player is to be checked for a block."""


class _MatchMovedError(Exception):
    """The stored match is not the one the move was checked against (or its player is
    blocked): read it afresh and check again."""


@dataclass(frozen=True, slots=True)
class _Effects:
    """What the rules (or the deal protocol) make of one move."""

    state: GameState
    events: tuple[Event, ...]
    hand_number: int
    """The hand the entry belongs to (a deal belongs to the hand it deals)."""
    dealt_hand: int | None = None
    revealed_hand: int | None = None
    next_hand: Hand | None = None
    """The next hand's fresh commit-reveal record, when this move ends a hand."""


@dataclass(frozen=True, slots=True)
class _Plan:
    """Everything one move writes, computed before anything is written."""

    effects: _Effects
    match: Match
    """The match after the move."""
    before: Match
    """The match the move was checked against (its revision is the one the write expects)."""
    entry: Entry
    receipt: Receipt
    seen_seat: int | None
    banks: tuple[int, ...] = ()
    """Seats whose reserve bank the move's turn change charged."""
    uncover: bool = False
    """The seat's own player moved while a bot covered it: the cover ends."""
    notices: Sequence[Notice] = ()
    """What the move's players should hear of (stored in the same commit: the outbox)."""

    @property
    def state(self) -> GameState:
        return self.effects.state


@dataclass(frozen=True, slots=True)
class _Replayed:
    """An envelope that is already stored: its receipt, and the match as it is now."""

    receipt: Receipt
    match: Match
    state: GameState


_Outcome = _Plan | _Replayed
"""A stored move's plan, or (the same envelope again) its stored receipt."""


class Play:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx
        self.spectators = spectators.SpectatorBook(ctx)
        self._moves_by = {by: ctx.metrics.moves.labels(by) for by in ("bot", "player")}
        """The moves counter by who signed them (looking a label up costs more than counting)."""

    # -- reading ------------------------------------------------------------------------------

    def view(self, player: Player, match_id: str) -> MatchView:
        """The match as the player's seat sees it now (this process's copies of the match
        and its state serve when the database says they are current: one small query); for
        a player who does not sit in it, as a spectator sees it, if its players allow."""
        match, state, _ = self._current(match_id, _NO_SEAT, fresh=True)
        seat = match.seat_of(player.id)
        if seat is None:
            spectators.may_spectate(match, player)
            self.spectators.note(match, player)
            return self._spectator_view(match, state)
        view = self.view_for(match, state, seat)
        self._mark_seen(match, seat)
        return view

    def moves(self, player: Player, match_id: str) -> tuple[int, tuple[MoveGroup, ...]]:
        """What the player's seat may do now (the engine's grouped legal actions) and the
        version they are for. Each action names only the seat's own cards and the table, and
        its legality is what a Submit of it would answer, so nothing hidden is revealed."""
        match, state, _ = self._current(match_id, _NO_SEAT, fresh=True)
        seat = matches.require_seat(match, player.id)
        return match.version, grouped_moves(state, seat)

    def history(self, player: Player, match_id: str, after_seq: int) -> History:
        """A page of the match's log, each entry's events redacted for the caller's seat;
        for a spectator, every hidden card redacted unless the match's policy shows the
        hand's (``spectators.reveals``), and so is each hand's secret."""
        ctx = self.ctx
        page = ctx.config.history_page
        with ctx.db.read() as session:
            repo = ctx.repo(session)
            match = matches.require_match(repo, match_id)
            seat = match.seat_of(player.id)
            if seat is None:
                spectators.may_spectate(match, player)
            found = repo.entries(match.id, min(after_seq, match.version), page + 1)
            numbers = {e.hand_number for e in found[:page]}
            if len(found) <= page:  # the last page: also the next hand's commitment, if any
                numbers.add(max(numbers, default=0) + 1)
            hands = repo.hands(match.id, numbers)
            end = self._end(repo, match) if len(found) <= page else None
        if seat is None:
            self.spectators.note(match, player)
            entries, shown = self._spectator_page(match, found[:page], hands)
        else:
            entries = tuple(
                dataclasses.replace(e, events=tuple(redact_event(ev, seat) for ev in e.events))
                for e in found[:page]
            )
            shown = tuple(h if h.revealed else dataclasses.replace(h, secret=b"") for h in hands)
            self._mark_seen(match, seat)
        return History(
            match,
            NO_SEAT if seat is None else seat,
            entries,
            shown,
            len(found) > page,
            ctx.keys.bot_public,
            ctx.keys.attest_public,
            end,
        )

    def _spectator_page(
        self, match: Match, found: Sequence[Entry], hands: Sequence[Hand]
    ) -> tuple[tuple[Entry, ...], tuple[Hand, ...]]:
        """A history page as a spectator may see it: a hand's hidden cards and its secret
        only where the match's policy shows them."""
        over = match.status is MatchStatus.FINISHED
        by_number = {h.hand_number: h for h in hands}

        def shows(number: int) -> bool:
            return spectators.reveals(match, by_number.get(number), match_over=over)

        entries = tuple(
            e
            if shows(e.hand_number)
            else dataclasses.replace(e, events=tuple(redact_event(ev, NO_SEAT) for ev in e.events))
            for e in found
        )
        shown = tuple(
            h if shows(h.hand_number) else dataclasses.replace(h, secret=b"") for h in hands
        )
        return entries, shown

    def _end(self, repo: Repository, match: Match) -> MatchEnd | None:
        """The server's signed end of a finished or abandoned match (docs/transcript.md, "The
        end"). Signed when asked for, not stored: Ed25519 is deterministic, so it is the same
        end every time, and matches that ended before ends existed have one too."""
        if match.status is not MatchStatus.FINISHED or not match.header:
            return None
        talk = talk_head(repo, match)  # a match with talk: the end names its chain's head
        outcome = end_outcome(matches.load_state(self.ctx, repo, match), match.aborted, talk)
        signature = sign_end(
            self.ctx.keys.server, match.id, match.version, match.head_hash, outcome
        )
        return MatchEnd(match.version, outcome, signature)

    # -- moves --------------------------------------------------------------------------------

    def submit(
        self,
        payload: bytes,
        signature: bytes,
        viewer: int | None = None,
        *,
        by_order: bool = False,
        since: int | None = None,
    ) -> tuple[Receipt, MatchView | None]:
        """Check, apply and durably store one signed move; then its receipt and, for the
        seat's own player (``viewer``, the player id a bearer token proved), the new view.
        ``by_order``: the bot runner carries out the seat's standing order (signed by the
        attest key): the player has not seen the result, and hears of it as their turn.
        ``since``: the version of the seat's view the caller holds; when it is the version
        this move follows, the view carries only the hand's events this move added (its
        ``events_from`` says where they start), not every event of the hand again.

        The signature proves who made the move, not who sends it: anyone who ever saw an
        envelope (every member reads them all in the history) can send it again. So a view
        goes only to a caller who signed in as the seat's player; everyone else gets the
        receipt alone, which the history shows them anyway.

        Under the match's lock: take the match's head (from this process's cache when it has
        one, else the database), check and compute everything (signatures, rules, hashes),
        then store it in one durable write transaction whose conditional update fails if the
        match changed elsewhere (another server process) or the player was blocked
        meanwhile; then the head is read afresh and the move checked once more.
        """
        move = move_from_bytes(payload)
        with self.ctx.locks.hold(move.match_id):
            outcome = self._store(move, payload, signature, by_order)
        return self._answer(outcome, move.seat, viewer, since)

    def _store(self, move: Move, payload: bytes, signature: bytes, by_order: bool) -> _Outcome:
        """Check and store the move (or find it stored already), reading the match afresh
        once if this process's copy turns out to be behind."""
        for fresh in (False, True):
            match, state, blocked = self._current(move.match_id, move.seat, fresh=fresh)
            try:
                plan = self._plan(move, payload, signature, match, state, blocked, by_order)
                if isinstance(plan, Receipt):
                    return _Replayed(plan, match, state)
                self._write(plan)
            except (_MatchMovedError, StaleMoveError) as exc:
                if not fresh:
                    continue  # this process's copy may be behind: read afresh, check again
                if isinstance(exc, StaleMoveError):
                    raise
                raise StaleMoveError(
                    "another move was stored first; fetch the view", match.version
                ) from None
            self._stored(plan)
            self._remember(plan)
            return plan
        raise AssertionError("unreachable")

    def recover(
        self, player: Player, match_id: str, entries: Sequence[RecoveredEntry]
    ) -> tuple[int, int]:
        """Store again the entries a restore from a backup lost, as a player's client kept
        them (each with the receipt this server gave it); returns how many were stored and
        the match's version after.

        Each entry is checked as a new move is (its signer, the chain, the rules, the deal
        from the hand's derived secret) and must carry this server's own receipt. An entry
        the server still holds must be the very same (else the client's history is another
        branch: ``ConflictError``, nothing stored). Entries go in order; any seat's player
        may send them, and several clients' partial copies combine, since each call starts
        from the stored head. The players are told once that moves were recovered."""
        if len(entries) > MAX_RECOVERED:
            raise InvalidRequestError(f"at most {MAX_RECOVERED} entries a call")
        ctx = self.ctx
        stored = 0
        with ctx.locks.hold(match_id):
            match, state, _ = self._current(match_id, 0, fresh=True)
            matches.require_seat(match, player.id)
            start = match.version
            earliest = start + 1  # the first entry this call names
            for index, (payload, signature, receipt) in enumerate(entries):
                move = _recovered_move(payload, match.id, index)
                earliest = min(earliest, move.seq)
                if move.seq <= match.version:
                    with ctx.db.read() as session:
                        held = ctx.repo(session).entry(match.id, move.seq)
                    if held is None or (held.payload, held.signature) != (payload, signature):
                        raise ConflictError(
                            f"the server holds another entry {move.seq} than yours: that is a "
                            "fork, not a restore, and nothing was recovered"
                        )
                    continue
                plan = self._plan(move, payload, signature, match, state, False, recovering=receipt)
                assert isinstance(plan, _Plan)  # a seq past the head is never a replay
                self._write(plan)
                self._stored(plan)
                self._remember(plan)
                match, state = plan.match, plan.state
                stored += 1
            if stored:
                # One recovery, however many calls bring it back: a call whose entries start
                # within the one noted (the server's bots may have made some of them again
                # meanwhile) extends it, and the players hear of it once.
                first, last = match.recovered
                going_on = 0 < first <= earliest <= last + 1
                first = first if going_on else start + 1
                match = dataclasses.replace(match, recovered=(first, match.version))
                with ctx.db.write() as session:
                    repo = ctx.repo(session)
                    repo.set_recovered(match.id, first, match.version)
                    if not going_on:
                        repo.add_notices(causes.recovered(match, state, first), ctx.clock())
                ctx.matches.put(match.id, match)
        if stored:
            ctx.notifier.publish(matches.change(match, state))
        return stored, match.version

    def _remember(self, plan: _Plan) -> None:
        """Cache the match and state a stored move left (under the match's lock)."""
        self.ctx.matches.put(plan.match.id, plan.match)
        self.ctx.states.put(plan.match.id, plan.match.revision, plan.state)

    def _answer(
        self, outcome: _Outcome, seat: int, viewer: int | None, since: int | None = None
    ) -> tuple[Receipt, MatchView | None]:
        """Tell watchers and bots of a newly stored move; the receipt, and the view when the
        caller proved to be the seat's player."""
        if isinstance(outcome, _Plan):
            by = "bot" if outcome.entry.actor_key == self.ctx.keys.bot_public else "player"
            self._moves_by[by].inc()
            self.ctx.notifier.publish(matches.change(outcome.match, outcome.state))
        match, state = outcome.match, outcome.state
        if viewer is None or match.seats[seat].player_id != viewer:
            return outcome.receipt, None
        events_from = None
        if isinstance(outcome, _Plan) and since == outcome.entry.seq - 1:
            effects = outcome.effects
            if effects.dealt_hand is None:  # a cut starts the hand's events afresh: send all
                events_from = len(effects.state.events) - len(effects.events)
        return outcome.receipt, self.view_for(match, state, seat, events_from)

    def _current(self, match_id: str, seat: int, *, fresh: bool) -> tuple[Match, GameState, bool]:
        """The match (this process's cached copy unless ``fresh``), its state, and whether the
        player in ``seat`` is blocked (a cached copy says no; the store re-checks)."""
        ctx = self.ctx
        cached = None if fresh else ctx.matches.get(match_id)
        if cached is not None and cached.status is not MatchStatus.WAITING:
            state = ctx.states.get(match_id, cached.revision)
            if state is not None:
                return cached, state, False
        if len(match_id) > matches.MAX_MATCH_ID:
            raise matches.no_such_match(match_id)
        head = current_head(ctx.db, match_id, seat)  # one statement, no session
        if head is None:
            raise matches.no_such_match(match_id)
        known = ctx.matches.get(match_id)
        if known is not None and known.revision == head.revision:
            state = ctx.states.get(match_id, known.revision)
            if state is not None:
                return known, state, head.seat_blocked
        with ctx.db.read() as session:  # moved elsewhere (another process), or not cached
            repo = ctx.repo(session)
            match = matches.require_match(repo, match_id)
            ctx.matches.put(match_id, match)
            state = matches.load_state(ctx, repo, match)
        return match, state, head.seat_blocked

    def _plan(
        self,
        move: Move,
        payload: bytes,
        signature: bytes,
        match: Match,
        state: GameState,
        blocked: bool,
        by_order: bool = False,
        recovering: bytes | None = None,
    ) -> _Plan | Receipt:
        """Every check, in the documented order, and the move's effects (nothing written).
        ``recovering``: the receipt this server gave the entry before a restore lost it
        (``recover``): the rules and the chain are checked as ever, but the seat's cover at
        the time (lost with the rest) is not asked; the receipt proves the server took it."""
        ctx = self.ctx
        if 0 <= move.seat < len(match.seats) and match.seats[move.seat].kind is SeatKind.EMPTY:
            raise ConflictError(f"seat {move.seat} is empty")
        facts = _LogFacts(match, ctx.keys.bot_public, ctx.keys.attest_public)
        try:
            signed = signer_of(facts, move, payload, signature)
        except EntryRefusedError as exc:
            raise _refused(exc) from None
        seat = match.seats[move.seat]
        recovered = recovering is not None
        if signed.by is Signer.BOT and not seat.covered and not recovered:
            raise _MatchMovedError  # our bot, with a newer copy than ours: no bot covers it now
        signer = signed.key
        by_bot = signed.by is Signer.BOT
        back = bool(seat.covered) and not by_bot and not recovered  # the player moves again
        if back and seat.covered == Cover.FORFEIT:
            raise ConflictError(
                "your time ran out and this match's policy is forfeit: the bot resigns for "
                "your side"
            )
        if blocked:
            raise PermissionDeniedError("this key is blocked on this server")
        version = match.version
        if move.seq <= version:
            with ctx.db.read() as session:
                repo = ctx.repo(session)
                stored = repo.entry(match.id, move.seq)
                head = repo.match_head(match.id, move.seat)
            if head is not None and head.seat_blocked:  # a cached head does not know
                raise PermissionDeniedError("this key is blocked on this server")
            if stored and stored.payload == payload and stored.signature == signature:
                return Receipt(match.id, stored.seq, stored.entry_hash, stored.receipt_signature)
            raise StaleMoveError(
                f"seq {move.seq} is stale: the match is at version {version}, so the next "
                f"move is seq {version + 1}; fetch the view and try again",
                version,
            )
        if move.seq > version + 1:
            raise StaleMoveError(
                f"seq {move.seq} is ahead of the match: it is at version {version}, so the "
                f"next move is seq {version + 1}",
                version,
            )
        if match.status is MatchStatus.WAITING:
            raise ConflictError("the match has not started yet: seats are still open")
        if match.aborted:  # the engine's state goes on: an abort ends the match, not the hand
            raise ConflictError("this match was abandoned: it takes no more moves")
        if move.prev_hash != match.head_hash:
            raise ConflictError(
                f"prev_hash is not the hash of entry {version}: fetch the history again"
            )
        now = ctx.clock()
        seq = version + 1
        effects = self._rules(facts, state, move, signature)
        digest = entry_hash(match.head_hash, payload, signature)
        receipt = Receipt(
            match.id, seq, digest, sign_receipt(ctx.keys.server, match.id, seq, digest)
        )
        if recovered and receipt.server_signature != recovering:  # Ed25519 signs alike again
            raise PermissionDeniedError(
                f"entry {seq} does not carry this server's receipt: nothing was recovered"
            )
        finished = effects.state.phase is Phase.MATCH_OVER
        new_match = dataclasses.replace(
            match,
            status=MatchStatus.FINISHED if finished else MatchStatus.PLAYING,
            version=seq,
            revision=match.revision + 1,
            head_hash=digest,
            updated_ms=now,
        )
        if back:
            new_match = clocks.resume(matches.with_cover(new_match, move.seat, ""), now)
        banks: tuple[int, ...] = ()
        after = matches.turn_key(new_match, effects.state)
        turn_over = after != matches.turn_key(match, state)
        if back or turn_over:
            new_match, banks = clocks.restart(new_match, after[0], now, ctx.config.hour_ms)
        by_order = by_order and signed.by is Signer.ATTEST
        if by_order and move.actions != (str(matches.standing_order(match, state)),):
            # the orders changed (or the position did) since the bot runner looked
            raise StaleMoveError("the standing order no longer applies", match.version)
        entry = Entry(
            seq=seq,
            seat=move.seat,
            hand_number=effects.hand_number,
            payload=payload,
            signature=signature,
            actor_key=signer,
            entry_hash=digest,
            receipt_signature=receipt.server_signature,
            events=effects.events,
            created_ms=now,
            standing_order=by_order,
        )
        seen = move.seat if not (by_bot or by_order) and seat.kind is SeatKind.HUMAN else None
        played_for = move.seat if by_bot else None
        told = causes.after_move(
            match, state, new_match, effects.state, turn_over, played_for, by_order=by_order
        )
        if recovered:  # told before the restore; the players hear of the recovery once
            seen, told = None, []
        return _Plan(effects, new_match, match, entry, receipt, seen, banks, back, told)

    def _rules(self, facts: _LogFacts, state: GameState, move: Move, signature: bytes) -> _Effects:
        """The new state (``shared.matchlog.apply_entry``: a cut's rules and the deal, or the
        engine's move) and what the move does to the hands' commit-reveal records."""
        match = facts.match
        try:
            new_state = apply_entry(
                facts, state, move, signature, lambda number: self._hand(match.id, number)
            )
        except EntryRefusedError as exc:
            raise _refused(exc) from None
        if move.is_deal:
            number = state.hand_number + 1
            return _Effects(new_state, new_state.events, number, dealt_hand=number)
        events = new_state.events[len(state.events) :]
        if new_state.phase not in (Phase.DEAL, Phase.MATCH_OVER):
            return _Effects(new_state, events, state.hand_number)
        next_hand = None
        if new_state.phase is Phase.DEAL:
            next_hand = matches.new_hand(self.ctx.keys.deal, match.id, new_state.hand_number + 1)
        # The hand in play ends and its secret is revealed; a resignation between hands ends
        # none (the last one was revealed when it ended; before the first deal there is none).
        ended = state.hand_number if state.phase is not Phase.DEAL else None
        return _Effects(new_state, events, state.hand_number, None, ended, next_hand)

    def _write(self, plan: _Plan) -> None:
        """Store the move in one durable transaction; ``_MatchMovedError`` if the match is no
        longer the one it was checked against (a duplicate seq included: another process
        stored that seq first)."""
        ctx = self.ctx
        match, effects = plan.match, plan.effects
        snapshot = effects.state if matches.wants_snapshot(match.version, effects.state) else None
        stored = StoredMove.of(match, plan.before, snapshot, plan.entry, plan.banks)
        try:
            with ctx.db.write_statements() as statements:
                repo = PreparedRepository(statements)
                if not repo.save_move(stored):
                    raise _MatchMovedError
                if plan.seen_seat is not None:
                    repo.set_seen(match.id, plan.seen_seat, match.revision)
                if plan.uncover:
                    repo.set_covered(match.id, plan.entry.seat, "")
                repo.add_notices(plan.notices, match.updated_ms)
                if effects.dealt_hand is not None:
                    repo.set_hand_dealt(match.id, effects.dealt_hand, match.version)
                if effects.revealed_hand is not None:
                    repo.set_hand_revealed(match.id, effects.revealed_hand)
                if effects.next_hand is not None:
                    repo.add_hand(match.id, effects.next_hand, match.updated_ms)
        except DuplicateKeyError:
            raise _MatchMovedError from None

    def _stored(self, plan: _Plan) -> None:
        """Bring the cached commit-reveal records up to date with a durably stored move."""
        ctx = self.ctx
        match, effects = plan.match, plan.effects
        if effects.dealt_hand is not None:
            dealt = self._hand(match.id, effects.dealt_hand)
            ctx.hands.put(
                (match.id, dealt.hand_number), dataclasses.replace(dealt, deal_seq=match.version)
            )
        if effects.revealed_hand is not None:
            ended = self._hand(match.id, effects.revealed_hand)
            ctx.hands.put((match.id, ended.hand_number), dataclasses.replace(ended, revealed=True))
        if effects.next_hand is not None:
            ctx.hands.put((match.id, effects.next_hand.hand_number), effects.next_hand)

    def _hand(self, match_id: str, number: int) -> Hand:
        ctx = self.ctx
        hand = ctx.hands.get((match_id, number))
        if hand is None:
            with ctx.db.read() as session:
                hand = ctx.repo(session).hand(match_id, number)
            if hand is None:
                raise NotFoundError(f"hand {number} has no commitment")
            if ctx.matches.get(match_id) is not None:  # kept only with its match (in play)
                ctx.hands.put((match_id, number), hand)
        return hand

    def view_for(
        self, match: Match, state: GameState, seat: int, events_from: int | None = None
    ) -> MatchView:
        """The match as ``seat`` sees it (commitments from the cache or the database), with
        who follows it as spectators; with ``events_from``, only the hand's events from that
        index on."""
        summary = matches.summary(match, state, match.seats[seat].player_id, shown=True)
        dealing = matches.dealing_seat(match, state)
        next_hand = self._hand(match.id, state.hand_number + 1) if dealing is not None else None
        current = self._hand(match.id, state.hand_number) if state.hand_number else None
        count, names = self._spectators(match, names=True)
        return MatchView(
            summary=summary,
            view=player_view(state, seat, events_from or 0),
            dealing_seat=dealing,
            deal_commitment=next_hand.commitment if next_hand else b"",
            hand_commitment=current.commitment if current else b"",
            spectators=count,
            spectator_names=names,
            events_from=events_from,
        )

    def _spectator_view(self, match: Match, state: GameState) -> MatchView:
        """The match as a spectator sees it: the engine's ``spectator_view`` (no hand, no
        private card), who is to cut, and how many follow it (not who)."""
        current = self._hand(match.id, state.hand_number) if state.hand_number else None
        count, _ = self._spectators(match, names=False)
        return MatchView(
            summary=matches.summary(match, state, None),
            view=spectator_view(state),
            dealing_seat=matches.dealing_seat(match, state),
            deal_commitment=b"",
            hand_commitment=current.commitment if current else b"",
            spectators=count,
        )

    def _spectators(self, match: Match, *, names: bool) -> tuple[int, tuple[str, ...]]:
        if match.spectators is Spectators.NONE:  # no query for the matches that have none
            return 0, ()
        with self.ctx.db.read() as session:
            return self.spectators.seen_by(self.ctx.repo(session), match, names=names)

    # -- helpers ------------------------------------------------------------------------------

    def _mark_seen(self, match: Match, seat: int) -> None:
        """Note that ``seat`` has seen ``match`` now (once per change: this process's copy of
        the match learns it too, so the next look does not write again). The note is not worth
        a disk flush: a machine crash that lost it would only show the match as changed once
        more."""
        if match.seats[seat].seen_revision >= match.revision:
            return
        with self.ctx.db.write_statements(durable=False) as statements:  # a look promises nothing
            PreparedRepository(statements).set_seen(match.id, seat, match.revision)
        seats = list(match.seats)
        seats[seat] = dataclasses.replace(seats[seat], seen_revision=match.revision)
        cached = self.ctx.matches.get(match.id)
        if cached is not None and cached.revision == match.revision:
            self.ctx.matches.put(match.id, dataclasses.replace(cached, seats=tuple(seats)))


MAX_RECOVERED = 1_000
"""Entries one recovery call may bring back (a client sends a longer loss in several)."""

RecoveredEntry = tuple[bytes, bytes, bytes]
"""An entry as a client kept it: the payload, its signature, and this server's receipt."""


def _recovered_move(payload: bytes, match_id: str, index: int) -> Move:
    """A recovered entry's move, which must be of the match being recovered."""
    try:
        move = move_from_bytes(payload)
    except WireError as exc:
        raise InvalidRequestError(f"entry {index} of the call is not a move: {exc}") from None
    if move.match_id != match_id:
        raise InvalidRequestError(f"entry {index} of the call is of another match")
    return move


class _LogFacts:
    """What the acceptance rule (``shared.matchlog.LogHeader``) reads of a match's header,
    read from the stored match instead: its seats' keys and kinds and the server's keys were
    written into the header from these when the match started, and parsing the header costs
    more than the rest of a move. Only the attest key asks the header (a match started before
    the key existed takes no attested moves), and only when a signature needs it."""

    def __init__(self, match: Match, bot_key: bytes, attest_key: bytes) -> None:
        self.match = match
        self.match_id = match.id
        self.seat_keys = tuple(s.public_key for s in match.seats)
        self.bots = tuple(s.kind is SeatKind.BOT for s in match.seats)
        self.bot_key = bot_key
        self._attest_key = attest_key

    @cached_property
    def attest_key(self) -> bytes:
        named = matches.attest_key_named(self.match)
        return named if named == self._attest_key else b""


_REFUSALS: dict[Refusal, tuple[Callable[[str], Exception], str]] = {
    Refusal.NO_SEAT: (InvalidRequestError, "there is no seat {seat} in this match"),
    Refusal.SIGNATURE: (
        UnauthenticatedError,
        "the move's signature does not verify with the key of seat {seat}",
    ),
    Refusal.CUT_TIME: (
        InvalidRequestError,
        "a cut carries client_time_ms 0, so that signing it again gives the same signature and "
        "the same deal (docs/fair-deal.md)",
    ),
    Refusal.CUT_MID_HAND: (WrongPhaseError, "there is no hand to deal now"),
    Refusal.CUTTER: (NotYourTurnError, "seat {cutter} cuts the deck for this deal"),
    Refusal.COMMITMENT: (
        ConflictError,
        "a deal names the published commitment of hand {hand}: fetch the view",
    ),
    Refusal.NOT_A_CUT: (InvalidRequestError, "only a deal move names a commitment"),
}
"""The server's status (its error's kind) and words for each refusal of the acceptance rule
(the verifier's words are the error's own message): the tests and clients know these."""


def _refused(exc: EntryRefusedError) -> Exception:
    """The error the server reports for a refusal of the acceptance rule: the engine's own for
    an illegal move; none for a hand whose secret the server lacks or that does not match its
    commitment (its own records disagree: an internal error)."""
    if exc.reason is Refusal.ILLEGAL and exc.error is not None:
        return exc.error
    found = _REFUSALS.get(exc.reason)
    if found is None:
        return exc
    kind, words = found
    return kind(words.format(seat=exc.seat, cutter=exc.cutter, hand=exc.hand))
