"""The server's domain records: what the service works with, free of rows and protobuf.

``server.store.repository`` builds these from rows; ``server.edge.convert`` turns them into
messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from shared.glicko2 import Rating, Tally, idle, rated
from shared.rules import Event, PlayerView, RuleConfig
from shared.transcript import MatchEnd


class MatchStatus(StrEnum):
    WAITING = "waiting"
    PLAYING = "playing"
    FINISHED = "finished"


class SeatKind(StrEnum):
    EMPTY = "empty"
    HUMAN = "human"
    BOT = "bot"


class Cover(StrEnum):
    """Why a bot plays a human seat for now (``Seat.covered``)."""

    TIMEOUT = "timeout"
    """Its player let a turn run out (timeout policy ``substitute``)."""
    ASKED = "asked"
    """Its player asked for it."""
    FORFEIT = "forfeit"
    """Its player let a turn run out under policy ``forfeit``: the bot resigns for the seat."""


class TimeoutPolicy(StrEnum):
    """What happens when a seat's turn is overdue (``server.service.deadlines``)."""

    SUBSTITUTE = "substitute"
    """A bot plays the seat, turn by turn, until its player comes back."""
    FORFEIT = "forfeit"
    """The seat's side loses the match; the others win."""


class Spectators(StrEnum):
    """Who besides the seated players may follow a match, and what of it (issue 32): chosen
    at creation, changed only when every seated player asks for the same policy. Under every
    policy but ``NONE`` a spectator sees the public table live (``shared.rules.spectator_view``:
    no hand, no private card); the policies differ in when the hidden cards of a hand (the
    deals, the stock draws) are shown to them."""

    NONE = "none"
    """Nobody but the seated players."""
    TABLE = "table"
    """The public table only, never a hidden card."""
    AFTER_HAND = "after-hand"
    """The table, and each hand's cards once that hand is over."""
    AFTER_MATCH = "after-match"
    """The table, and every hand's cards once the match is over."""

    def shows_cards(self, hand_over: bool, match_over: bool) -> bool:
        """Whether a spectator may see the hidden cards of a hand (over or not, of a match
        over or not). A hand cut short when the match was abandoned is never over: its deal
        stays secret from everyone, spectators too."""
        if self is Spectators.AFTER_HAND:
            return hand_over
        return self is Spectators.AFTER_MATCH and hand_over and match_over


HOUR_MS = 3_600_000
DAY_MS = 24 * HOUR_MS


@dataclass(frozen=True, slots=True)
class TimeControl:
    """A match's clock, chosen at creation (checked by ``server.service.clocks``): hours per
    turn (a creator may give them in days), a reserve bank that a slow turn draws on, weekends
    off, and the timeout policy."""

    hours_per_move: int
    bank_hours: int = 0
    weekends_off: bool = False
    on_timeout: TimeoutPolicy = TimeoutPolicy.SUBSTITUTE

    def per_move_ms(self, hour_ms: int = HOUR_MS) -> int:
        """The time per move, with hours ``hour_ms`` long (shorter on a test server whose
        clocks run fast: ``ServerConfig.hour_ms``)."""
        return self.hours_per_move * hour_ms

    def bank_ms(self, hour_ms: int = HOUR_MS) -> int:
        """A seat's bank at the start of the match (hours as in ``per_move_ms``)."""
        return self.bank_hours * hour_ms


@dataclass(frozen=True, slots=True)
class TurnClock:
    """The running clock of a match: whose turn it is, since when, and when it is due."""

    seat: int
    started_ms: int
    due_ms: int
    """0 while paused."""
    paused_left_ms: int = 0
    """Stopped mid-turn (vacation, cover asked): the clock time left when it runs again."""

    @property
    def paused(self) -> bool:
        return self.paused_left_ms > 0


@dataclass(frozen=True, slots=True)
class Player:
    id: int
    public_key: bytes
    display_name: str
    email: str
    blocked: bool
    created_ms: int
    deleted_ms: int = 0
    """When the operator deleted the player (0: never): their key stays, blocked."""


@dataclass(frozen=True, slots=True)
class StandingOrders:
    """What a player asked the server to do for their seat without asking them
    (``shared.rules.orders``: only where the rules leave one move, or on a question answered in
    advance). Off unless chosen."""

    draw: bool = False
    """Draw at the start of the turn when taking the pile is impossible."""
    answer: str = ""
    """Partner's "may I go out?": ``yes`` or ``no`` given in advance; ``""`` asks the player."""

    @property
    def any(self) -> bool:
        return self.draw or bool(self.answer)


@dataclass(frozen=True, slots=True)
class Seat:
    seat: int
    kind: SeatKind
    player_id: int | None = None
    display_name: str = ""
    public_key: bytes = b""
    """The key that signs this seat's moves (the bot key for a bot seat)."""
    seen_revision: int = 0
    time_zone: str = "UTC"
    """The player's time zone: their clock's weekends are theirs."""
    bank_ms: int = 0
    """What is left of this seat's reserve bank (with a time control)."""
    covered: str = ""
    """Why a bot plays this human seat for now (a ``Cover`` value); empty if it does not."""
    bot_level: str = ""
    """A bot seat's level (``shared.bots.LEVELS``), chosen at creation; empty: ``normal``
    (and for a human seat: the server's ``bot_cover_level`` covers it)."""
    on_vacation: bool = False
    """The player is on vacation: their clocks stand still."""
    abort_asked: bool = False
    """The player asked to abandon the match (before its first deal)."""
    reachable: bool = False
    """The player has a way to hear of news (verified mail not off, or a webhook): only
    their notifications wait for the outbox; the others go to their log alone."""
    reply_moves: bool = False
    """The player takes moves by mail reply, which the server signs (server-attested): the
    table says so to everyone."""
    orders: StandingOrders = StandingOrders()
    """The standing orders in force for this seat: its own, else its player's default."""
    orders_per_match: bool = False
    """``orders`` were set for this match (not the player's default)."""
    spectators_vote: str = ""
    """The spectator policy this seat's player asked to change the match to (a
    ``Spectators`` value); empty: none asked. It changes once every seated player asks the
    same."""
    rating: int = 0
    """The player's ladder rating now (a bot's: its level's fixed one); 0: not rated yet."""
    timeouts: int = 0
    """How many of this seat's turns ran out."""


@dataclass(frozen=True, slots=True)
class Match:
    id: str
    preset: str
    config: RuleConfig
    status: MatchStatus
    version: int
    revision: int
    head_hash: bytes
    invite_code: str
    created_by: int
    created_ms: int
    updated_ms: int
    seats: tuple[Seat, ...]
    time_control: TimeControl | None = None
    """None: no clock (a friendly match)."""
    clock: TurnClock | None = None
    """The turn being timed (None without a time control or when nobody is to act)."""
    aborted: bool = False
    """Abandoned before its first deal: ``FINISHED``, with no winner."""
    header: bytes = b""
    """The canonical match header the chain starts from (``shared.matchlog.Header``); empty while
    the match waits for players, and for matches started before transcripts existed."""
    recovered: tuple[int, int] = (0, 0)
    """The entries a restore from a backup lost and players' copies brought back (first,
    last; ``(0, 0)``: none), which the table shows (``Play.recover``)."""
    spectators: Spectators = Spectators.NONE
    """Who else may follow the match, and what of it."""
    rated: bool = True
    """The match counts for the club ladder (``server.service.ladder``)."""

    def seat_of(self, player_id: int) -> int | None:
        for seat in self.seats:
            if seat.player_id == player_id:
                return seat.seat
        return None


@dataclass(frozen=True, slots=True)
class MatchHead:
    """The parts of a match that change move by move."""

    status: MatchStatus
    version: int
    revision: int
    head_hash: bytes
    seat_blocked: bool
    """The player in the asked-about seat is blocked (False for bots and empty seats)."""


@dataclass(frozen=True, slots=True)
class Standing:
    """A player on the club ladder: their Glicko-2 rating when the rating period ``period``
    began, that period's results so far, and the statistics of their rated matches."""

    player_id: int
    name: str
    base: Rating = Rating()
    period: int = 0
    tally: Tally = Tally()
    matches: int = 0
    wins: int = 0
    hands: int = 0
    hand_points: int = 0
    canastas: int = 0
    went_out: int = 0
    moves: int = 0
    move_ms: int = 0
    timeouts: int = 0
    bot_level: str = ""
    """A bot's level (its rating is fixed: an anchor); empty for a person."""

    @property
    def current(self) -> Rating:
        """The rating from its period's results so far (a bot's never moves)."""
        if self.bot_level or not self.tally.games:
            return self.base
        return rated(self.base, self.tally)

    def rating_at(self, period: int) -> Rating:
        """The rating in ``period``: ``current``, with a wider RD for each period since
        without a game (``shared.glicko2``)."""
        if self.bot_level:
            return self.base
        if self.tally.games:
            return idle(self.current, max(period - self.period - 1, 0))
        return idle(self.base, period - self.period) if period > self.period else self.base


@dataclass(frozen=True, slots=True)
class Entry:
    """One stored log entry (a signed move and what it caused)."""

    seq: int
    seat: int
    hand_number: int
    payload: bytes
    signature: bytes
    actor_key: bytes
    entry_hash: bytes
    receipt_signature: bytes
    events: tuple[Event, ...]
    created_ms: int
    standing_order: bool = False
    """The server made this move under its player's standing order (signed by the attest
    key); the signature alone cannot tell it from a mailed reply, so the store says which."""


@dataclass(frozen=True, slots=True)
class Hand:
    """Commit-reveal record of one hand."""

    hand_number: int
    commitment: bytes
    secret: bytes
    revealed: bool
    deal_seq: int


@dataclass(frozen=True, slots=True)
class Receipt:
    match_id: str
    seq: int
    entry_hash: bytes
    server_signature: bytes


@dataclass(frozen=True, slots=True)
class MatchSummary:
    """A match as one player sees it in a list."""

    match: Match
    my_seat: int | None
    to_act: int | None
    changed: bool
    scores: tuple[int, ...]
    target: int
    hand_number: int
    winners: tuple[int, ...]

    @property
    def my_turn(self) -> bool:
        return self.my_seat is not None and self.to_act == self.my_seat


@dataclass(frozen=True, slots=True)
class MatchView:
    """Everything a seated player needs to act, or a spectator may see (``view.seat``
    ``NO_SEAT``)."""

    summary: MatchSummary
    view: PlayerView
    dealing_seat: int | None
    deal_commitment: bytes
    hand_commitment: bytes
    spectators: int = 0
    """How many players follow the match as spectators (looked in the last week)."""
    spectator_names: tuple[str, ...] = ()
    """Who they are, the most recent first (for the seated players only)."""
    events_from: int | None = None
    """Set when ``view.events`` holds only the hand's events from this index on (a Submit's
    reply to a client that named the version it holds); None: every event of the hand."""


@dataclass(frozen=True, slots=True)
class History:
    match: Match
    seat: int
    entries: tuple[Entry, ...]
    """Events already redacted for ``seat``."""
    hands: tuple[Hand, ...]
    """Secrets blanked for hands not yet ended."""
    more: bool
    bot_public_key: bytes = b""
    """The server's bot key: entries it signed were played by a bot."""
    attest_public_key: bytes = b""
    """The server's attest key: entries it signed are players' mailed replies."""
    end: MatchEnd | None = None
    """On the last page of a finished or abandoned match: the server's signed end."""


@dataclass(frozen=True, slots=True)
class TalkEntry:
    """One stored table talk entry (``shared.talk``): its signed fields, its seat's signature,
    its hash in the talk chain and the server's receipt."""

    seq: int
    kind: str
    seat: int
    player_id: int
    at_seq: int
    at_hash: bytes
    client_ms: int
    text: str
    signature: bytes
    talk_hash: bytes
    receipt_signature: bytes
    created_ms: int


@dataclass(frozen=True, slots=True)
class Talk:
    """A page of a match's talk as a reader may see it, and where the talk and the log stand."""

    match: Match
    entries: tuple[TalkEntry, ...]
    more: bool
    count: int
    head_hash: bytes
    """The last talk entry's hash (the header's hash when nothing was said)."""
    conventions: tuple[TalkEntry, ...] = ()
    """Every side's declared conventions."""


@dataclass(frozen=True, slots=True)
class Change:
    """A notification: something changed in a match."""

    match_id: str
    version: int
    revision: int
    status: MatchStatus
    to_act: int | None
    player_ids: frozenset[int]
    """The players seated in the match (who may hear about it)."""
    server_to_act: bool = False
    """The server moves next: a bot's seat (or a covered one), or a standing order applies
    (the bot runner listens for these)."""
    cut: bool = False
    """``to_act`` is the seat that cuts the next deal (before a hand), not a seat to move."""


@dataclass(frozen=True, slots=True)
class Notice:
    """Something to tell one player about a match (``server.service.news.causes``), before it is
    stored in the outbox."""

    player_id: int
    match_id: str
    kind: str
    facts: dict[str, object]
    deliver: bool = True
    """False: the player has no channel; the notice only joins their log (for Watch)."""


@dataclass(frozen=True, slots=True)
class Notification:
    """A stored notice (a row of the outbox), as its delivery sees it."""

    id: int
    player_id: int
    match_id: str
    kind: str
    facts: dict[str, object]
    created_ms: int
    attempts: int
    email_state: str
    webhook_state: str


class EmailMode(StrEnum):
    OFF = "off"
    EACH = "each"
    """A mail for every notification."""
    DIGEST = "digest"
    """One mail a day with everything since the last."""


@dataclass(frozen=True, slots=True)
class Settings:
    """A player's delivery settings, and what the texts they receive need."""

    player_id: int
    display_name: str
    time_zone: str
    email: str
    email_verified: bool
    email_pending: str
    email_mode: EmailMode
    webhook_url: str
    webhook_secret: str
    digest_sent_ms: int
    email_code_hash: str = ""
    """SHA-256 (hex) of the latest code mailed to ``email_pending``."""
    vacation_started_ms: int = 0
    vacation_used_ms: int = 0
    """Vacation taken in ``vacation_year`` (UTC), the running one not included."""
    vacation_year: int = 0
    vacation_left_ms: int = 0
    """What is left of this year's allowance, the running vacation counted (filled in by
    the service)."""
    allow_reply_moves: bool = False
    """Moves by replying to a mail are accepted (signed by the server: server-attested)."""
    orders: StandingOrders = StandingOrders()
    """The player's default standing orders (a match may set its own)."""


@dataclass(frozen=True, slots=True)
class ServerInfo:
    server_public_key: bytes
    bot_public_key: bytes
    version: str
    registration: str
    token_ttl_seconds: int
    max_message_bytes: int
    test_clock_speed: int = 1
    """A test server's clocks run this many times faster (``ServerConfig.test_clock_speed``)."""


@dataclass(frozen=True, slots=True)
class AdminAction:
    """One entry of the operator's log (``canasta-server log``)."""

    at_ms: int
    actor: str
    action: str
    target: str
    detail: str
