"""Bot seats, and human seats a bot covers for an absent player (``server.service.play.absence``):
the server plays them as soon as it is their turn, through the same path as everyone (a
signed envelope, checked, applied, logged, receipted), signed by the bot key. A seat covered
under the timeout policy ``forfeit`` resigns the match instead of playing.

Decisions come from the seat's bot level (``shared.bots``): a bot seat's own, chosen when
the match was created, or the server's ``bot_cover_level`` for a covered human seat. The
``easy`` and ``normal`` levels decide at once, in the worker thread. A ``strong`` bot thinks
for up to ``bot_think_seconds`` in a process pool of ``bot_workers`` processes (spawned, so
they share nothing with the server's threads): the server's calls never wait for it, at most
``bot_workers`` decisions are thought about at once, and as many worker threads play queued
matches, one match in one thread at a time. A strong bot's move is a whole part of its turn
(its start, or its melds and discard: several actions in one move, as a player may send), stored
through the same path as every move. The threads hear of matches from the notifier and, at
start, by scanning for matches where a bot is to move, so a restarted server carries on where
it stopped.

The same worker carries out players' standing orders (``matches.standing_order``): where the
rules leave a person's seat one move (a draw, when the pile cannot be taken) or a question the
player answered in advance, it makes that move at once, signed by the server's attest key on
the player's behalf (server-attested, as a mailed reply is), so the player's "your turn" mail
already shows the drawn card.
"""

from __future__ import annotations

import logging
import multiprocessing
import queue
import threading
import zlib
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor

from server.domain import Change, Cover, Match, MatchStatus, SeatKind
from server.service import matches
from server.service.context import ServiceContext
from server.service.errors import StaleMoveError
from server.service.play.play import Play
from shared.bots import DEFAULT_LEVEL, chooser
from shared.bots.worker import think, warm_up
from shared.crypto.keys import sign
from shared.rules import Action, GameState, Phase, legal_actions
from shared.rules.actions import RESIGN
from shared.wire import DEAL_ACTION, Move, move_to_bytes

log = logging.getLogger(__name__)

Chooser = Callable[[GameState, int], Action]
Thinker = Callable[[GameState, int, str, str], tuple[str, ...]]
"""``(state, seat, level, match_id) -> action texts``: one bot move."""


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
    """Plays bot seats in background threads (``start``/``stop``), or inline (``play``).

    ``chooser`` (tests) plays every bot seat whatever its level, in the calling thread;
    ``thinker`` replaces how a move is thought of (tests); by default ``think`` below.
    """

    def __init__(
        self,
        ctx: ServiceContext,
        play: Play,
        chooser: Chooser | None = None,
        thinker: Thinker | None = None,
    ) -> None:
        self.ctx = ctx
        self.play_service = play
        self.choose = chooser
        self.think: Thinker = thinker or self._think
        self._quick = {level: _quick_chooser(level) for level in ("easy", "normal")}
        self._pool: ProcessPoolExecutor | None = None
        self._pool_lock = threading.Lock()
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._pending: set[str] = set()
        self._active: set[str] = set()
        self._again: set[str] = set()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        self.ctx.notifier.add_listener(self._on_change)
        for number in range(self.ctx.config.bot_workers):
            thread = threading.Thread(target=self._run, name=f"canasta-bots-{number}", daemon=True)
            thread.start()
            self._threads.append(thread)
        with self.ctx.db.read() as session:
            repo = self.ctx.repo(session)
            for match_id in repo.match_ids(MatchStatus.PLAYING):
                match = matches.require_match(repo, match_id)
                if matches.server_to_act(match, matches.load_state(self.ctx, repo, match)):
                    self.kick(match_id)

    def stop(self, timeout: float = 10.0) -> None:
        for _ in self._threads:
            self._queue.put(None)
        for thread in self._threads:
            thread.join(timeout)
        self._threads = []
        with self._pool_lock:
            if self._pool is not None:
                self._pool.shutdown(wait=False, cancel_futures=True)
                self._pool = None

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
                    if match_id in self._active:  # another thread plays it: it looks again
                        self._again.add(match_id)
                        continue
                    self._active.add(match_id)
                try:
                    self.play(match_id)
                finally:
                    with self._lock:
                        self._active.discard(match_id)
                        again = match_id in self._again
                        self._again.discard(match_id)
                    if again:
                        self.kick(match_id)
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
            texts: tuple[str, ...]
            if ordered is not None:  # a standing order, signed for the player (attested)
                texts, key = (str(ordered),), ctx.keys.attest
            elif match.seats[seat].covered == Cover.FORFEIT:
                texts, key = (str(RESIGN),), ctx.keys.bot  # the timeout policy: the side loses
                commitment = b""
            elif cutting:
                texts, key = (DEAL_ACTION,), ctx.keys.bot
            else:  # the bot's move at its level: maybe several actions (a strong bot's plan)
                texts, key = self._decide(match, state, seat), ctx.keys.bot
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
                    actions=texts,
                    deal_commitment=commitment,
                )
            )
            try:
                self.play_service.submit(payload, sign(key, payload), by_order=ordered is not None)
            except StaleMoveError:
                continue  # someone else (the player, another process) moved first: look again
            made += 1
        return made

    def _decide(self, match: Match, state: GameState, seat: int) -> tuple[str, ...]:
        """The bot's move for ``seat``: at the seat's level (``level_of``)."""
        if self.choose is not None:
            return (str(self.choose(state, seat)),)
        return self.think(state, seat, level_of(self.ctx, match, seat), match.id)

    def _think(self, state: GameState, seat: int, level: str, match_id: str) -> tuple[str, ...]:
        quick = self._quick.get(level)
        if quick is not None:
            return (str(quick(state, seat)),)
        seed = zlib.crc32(match_id.encode())
        future = self._executor().submit(
            think, state.to_json(), seat, level, self.ctx.config.bot_think_seconds, seed
        )
        return tuple(future.result())

    def _executor(self) -> ProcessPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ProcessPoolExecutor(
                    max_workers=self.ctx.config.bot_workers,
                    mp_context=multiprocessing.get_context("spawn"),
                )
                self._pool.submit(warm_up)
            return self._pool


def level_of(ctx: ServiceContext, match: Match, seat: int) -> str:
    """The level of the bot that plays ``seat``: a bot seat's own (``normal`` if none was
    chosen), else the server's level for covering absent players."""
    taken = match.seats[seat]
    if taken.kind is SeatKind.BOT:
        return taken.bot_level or DEFAULT_LEVEL
    return ctx.config.bot_cover_level


def _quick_chooser(level: str) -> Chooser:
    return chooser(level)
