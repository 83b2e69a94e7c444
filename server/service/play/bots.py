"""Bot seats, and human seats a bot covers for an absent player (``server.service.play.absence``):
the server plays them as soon as it is their turn, through the same path as everyone (a
signed envelope, checked, applied, logged, receipted), signed by the bot key. A seat covered
under the timeout policy ``forfeit`` resigns the match instead of playing.

Decisions come from ``shared.rules.bot.choose_action`` when that module is available, else
the first of the engine's ``legal_actions``. A worker thread plays queued matches; it hears of
them from the notifier and, at start, by scanning for matches where a bot is to move, so a
restarted server carries on where it stopped.

The same worker carries out players' standing orders (``matches.standing_order``): where the
rules leave a person's seat one move (a draw, when the pile cannot be taken) or a question the
player answered in advance, it makes that move at once, signed by the server's attest key on
the player's behalf (server-attested, as a mailed reply is), so the player's "your turn" mail
already shows the drawn card.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable

from server.domain import Change, Cover, MatchStatus
from server.service import matches
from server.service.context import ServiceContext
from server.service.errors import StaleMoveError
from server.service.play.play import Play
from shared.crypto.keys import sign
from shared.rules import Action, GameState, Phase, legal_actions
from shared.rules.actions import RESIGN
from shared.wire import DEAL_ACTION, Move, move_to_bytes

log = logging.getLogger(__name__)

Chooser = Callable[[GameState, int], Action]


def _first_legal(state: GameState, seat: int) -> Action:
    actions = legal_actions(state, seat)
    if not actions:
        raise RuntimeError(f"seat {seat} has no legal action")
    return actions[0]


def default_chooser() -> Chooser:
    try:
        from shared.rules.bot import choose_action
    except ImportError:  # the heuristic bot is optional
        return _first_legal
    return lambda state, seat: choose_action(state, seat)


class BotRunner:
    """Plays bot seats in a background thread (``start``/``stop``), or inline (``play``)."""

    def __init__(self, ctx: ServiceContext, play: Play, chooser: Chooser | None = None) -> None:
        self.ctx = ctx
        self.play_service = play
        self.choose = chooser or default_chooser()
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._pending: set[str] = set()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self.ctx.notifier.add_listener(self._on_change)
        self._thread = threading.Thread(target=self._run, name="canasta-bots", daemon=True)
        self._thread.start()
        with self.ctx.db.read() as session:
            repo = self.ctx.repo(session)
            for match_id in repo.match_ids(MatchStatus.PLAYING):
                match = matches.require_match(repo, match_id)
                if matches.server_to_act(match, matches.load_state(self.ctx, repo, match)):
                    self.kick(match_id)

    def stop(self, timeout: float = 10.0) -> None:
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join(timeout)
            self._thread = None

    def drain(self) -> None:
        """Wait until every queued match has been played (for tests and shutdown)."""
        self._queue.join()

    def kick(self, match_id: str) -> None:
        with self._lock:
            if match_id in self._pending:
                return
            self._pending.add(match_id)
        self._queue.put(match_id)

    def _on_change(self, change: Change) -> None:
        if change.server_to_act:
            self.kick(change.match_id)

    def _run(self) -> None:
        while True:
            match_id = self._queue.get()
            try:
                if match_id is None:
                    return
                with self._lock:
                    self._pending.discard(match_id)
                self.play(match_id)
            except Exception:
                log.exception("bot play failed in match %s", match_id)
            finally:
                self._queue.task_done()

    def play(self, match_id: str, limit: int = 10_000) -> int:
        """Play bot turns (and standing orders) in one match until a person is to move;
        returns the moves made."""
        ctx = self.ctx
        made = 0
        while made < limit:
            commitment = b""
            with ctx.db.read() as session:
                repo = ctx.repo(session)
                match = matches.require_match(repo, match_id)
                state = matches.load_state(ctx, repo, match)
                seat = matches.to_act(match, state)
                if seat is None:
                    return made
                by_bot = matches.bot_to_act(match, state)
                ordered = None if by_bot else matches.standing_order(match, state)
                if not by_bot and ordered is None:
                    return made
                cutting = by_bot and state.phase is Phase.DEAL  # a covered human seat cuts
                if cutting:
                    hand = repo.hand(match.id, state.hand_number + 1)
                    commitment = hand.commitment if hand is not None else b""
            if ordered is not None:  # a standing order, signed for the player (attested)
                text, key = str(ordered), ctx.keys.attest
            elif match.seats[seat].covered == Cover.FORFEIT:
                text, key = str(RESIGN), ctx.keys.bot  # the timeout policy: the side loses
                commitment = b""
            elif cutting:
                text, key = DEAL_ACTION, ctx.keys.bot
            else:
                text, key = str(self.choose(state, seat)), ctx.keys.bot
            payload = move_to_bytes(
                Move(
                    match_id=match.id,
                    seat=seat,
                    seq=match.version + 1,
                    prev_hash=match.head_hash,
                    # No time: the server's own moves are then the same bytes (and, Ed25519
                    # being deterministic, the same signature) whenever they are made again,
                    # as a server restored from a backup makes them (issue 30).
                    client_time_ms=0,
                    actions=(text,),
                    deal_commitment=commitment,
                )
            )
            try:
                self.play_service.submit(payload, sign(key, payload), by_order=ordered is not None)
            except StaleMoveError:
                continue  # someone else (the player, another process) moved first: look again
            made += 1
        return made
