"""SQLModel tables: the stored shape of players, matches, seats, the move log and its friends.

Only ``server.store.repository`` reads and writes these rows; everyone else sees the domain records
of ``server.domain``. Times are integer milliseconds since the Unix epoch (UTC), which every
database stores and compares alike. Schema changes go through ``server.store.migrations``: the
tables here must always equal what the migrations build (a test checks it).
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, LargeBinary, Text, UniqueConstraint
from sqlmodel import Field, SQLModel


def _binary(*, primary_key: bool = False, unique: bool = False, nullable: bool = False) -> bytes:
    return Field(  # type: ignore[no-any-return]
        sa_column=Column(LargeBinary, primary_key=primary_key, unique=unique, nullable=nullable)
    )


def _big(default: int = 0, *, index: bool = False) -> int:
    return Field(default=default, sa_type=BigInteger, index=index)  # type: ignore[no-any-return]


class PlayerRow(SQLModel, table=True):
    """A registered key. Blocked keys are refused everywhere."""

    __tablename__ = "player"

    id: int | None = Field(default=None, primary_key=True)
    public_key: bytes = _binary(unique=True)
    display_name: str
    email: str = ""
    invitation_code: str = ""
    blocked: bool = False
    created_ms: int = _big()
    time_zone: str = Field(default="UTC", max_length=64)
    """IANA name; the weekends of this player's correspondence clocks are local to it."""
    email_verified: bool = False
    """``email`` received a code and the player gave it back: mail may go there."""
    email_pending: str = ""
    """An address waiting for its code (it replaces ``email`` once verified)."""
    email_code_hash: str = ""
    """SHA-256 (hex) of the code sent to ``email_pending``."""
    email_code_expires_ms: int = _big()
    email_mode: str = "off"
    """``off``, ``each`` (a mail per notification) or ``digest`` (one a day)."""
    digest_sent_ms: int = _big()
    """When this player's last digest went out."""
    vacation_started_ms: int = _big()
    """While on vacation: since when (0: not on vacation). Their clocks stand still."""
    vacation_used_ms: int = _big()
    """Vacation taken in ``vacation_year`` (ended vacations only)."""
    vacation_year: int = 0
    webhook_url: str = ""
    webhook_secret: str = ""
    """The HMAC-SHA256 key of ``X-Canasta-Signature`` (shown to the player once, when set)."""
    deleted_ms: int = _big()
    """When the operator deleted this player (0: not deleted): name and contact details are
    gone, the key stays (the moves it signed must still verify) and is blocked."""
    allow_reply_moves: bool = False
    """Moves by replying to a mail are accepted, signed by the server's attest key."""
    order_draw: bool = False
    """Standing order, by default in every match: draw when the pile cannot be taken."""
    order_answer: str = Field(default="", max_length=8)
    """Standing order, by default: answer partner's "may I go out?" (``yes``, ``no``; ``""``
    asks the player)."""


class MatchRow(SQLModel, table=True):
    """A match, with the state snapshot that makes loading it cost the same at any move."""

    __tablename__ = "match"

    id: str = Field(primary_key=True, max_length=64)
    preset: str
    config_json: str = Field(sa_type=Text)
    status: str = Field(index=True)
    """``waiting``, ``playing`` or ``finished``."""
    players: int
    version: int = _big()
    """Seq of the last log entry."""
    revision: int = _big()
    """Grows with every change, lobby changes included."""
    head_hash: bytes = _binary()
    invite_code: str = Field(unique=True, max_length=32)
    created_by: int = Field(foreign_key="player.id")
    created_ms: int = _big()
    updated_ms: int = _big(index=True)
    """When the match last changed (every change bumps ``revision`` and this); indexed for
    the change feed (``server.service.live.feed``)."""
    state_json: str = Field(default="", sa_type=Text)
    """``GameState.to_json()`` after entry ``snapshot_version`` (empty while waiting)."""
    snapshot_version: int = _big()
    """The seq the snapshot was taken at; later entries are replayed on load (a bounded few)."""
    time_control_json: str = Field(default="", sa_type=Text)
    """The match's clock (``server.domain.TimeControl`` as JSON); empty: no clock."""
    clock_seat: int = -1
    """The seat whose turn is being timed; -1: none."""
    clock_started_ms: int = _big()
    clock_due_ms: int = _big(index=True)
    """When the timed turn is overdue (0: no clock running); indexed for the deadline sweep."""
    clock_reminded: int = 0
    """How many of the server's reminders (``reminder_hours``) the timed turn has had."""
    clock_paused_left_ms: int = _big()
    """A clock stopped mid-turn (its player on vacation, or covered by request): the clock
    time that was left, given back when it runs again. ``clock_due_ms`` is 0 meanwhile."""
    aborted: bool = False
    """Abandoned before its first deal (``finished`` then, with no winner)."""
    header: bytes | None = Field(default=None, sa_column=Column(LargeBinary, nullable=True))
    """The match header (``shared.matchlog.Header``) its chain starts from, written when the
    match starts; NULL while waiting, and for matches started before revision 0006."""
    recovered_from: int = _big()
    recovered_until: int = _big()
    """The entries a restore lost that players' copies brought back (0, 0: none)."""
    spectators: str = Field(default="none", max_length=16)
    """Who else may follow the match (``server.domain.Spectators``)."""
    rated: bool = True
    """The match counts for the club ladder (chosen at creation)."""
    rated_ms: int = _big(index=True)
    """When the ladder took the finished match in (0: not yet; ``server.service.ladder``)."""


class SeatRow(SQLModel, table=True):
    __tablename__ = "seat"

    match_id: str = Field(foreign_key="match.id", primary_key=True, max_length=64)
    seat: int = Field(primary_key=True)
    kind: str = "empty"
    """``empty``, ``human`` or ``bot``."""
    player_id: int | None = Field(default=None, foreign_key="player.id", index=True)
    seen_revision: int = _big()
    bank_ms: int = _big()
    """What is left of this seat's reserve bank of time."""
    covered: str = ""
    """Why a bot plays this human seat for now (``timeout``, ``asked``); empty: it does not."""
    abort_asked: bool = False
    """This seat's player asked to abandon the match (before its first deal)."""
    order_draw: bool | None = None
    """This match's own standing orders (both NULL: the player's default applies)."""
    order_answer: str | None = Field(default=None, max_length=8)
    spectators_vote: str = Field(default="", max_length=16)
    """The spectator policy this seat's player asked for (empty: none)."""
    timeouts: int = 0
    """How many of this seat's turns ran out (for the ladder's statistics)."""
    bot_level: str = Field(default="", max_length=16)
    """A bot seat's level (``easy``, ``normal``, ``strong``); empty: ``normal``."""


class StandingRow(SQLModel, table=True):
    """A player on the club ladder (``server.service.ladder``): their Glicko-2 rating as the
    current rating period began, the period's results so far (``shared.glicko2.Tally``), and
    the statistics of their rated matches."""

    __tablename__ = "standing"

    player_id: int = Field(foreign_key="player.id", primary_key=True)
    rating: float = 1500.0
    rd: float = 350.0
    volatility: float = 0.06
    period: int = _big()
    """The rating period the rating was taken at (days since the epoch / the period's length)."""
    information: float = 0.0
    surprise: float = 0.0
    games: int = 0
    """This period's results (``shared.glicko2.Tally``)."""
    matches: int = 0
    wins: int = 0
    hands: int = 0
    hand_points: int = _big()
    canastas: int = 0
    went_out: int = 0
    moves: int = 0
    move_ms: int = _big()
    """The time the player's moves took in all, each from the entry before it."""
    timeouts: int = 0


class SpectatorRow(SQLModel, table=True):
    """A registered player who follows a match they do not sit in (issue 32): the table
    shows how many, and its players who."""

    __tablename__ = "spectator"

    match_id: str = Field(foreign_key="match.id", primary_key=True, max_length=64)
    player_id: int = Field(foreign_key="player.id", primary_key=True)
    first_ms: int = _big()
    last_ms: int = _big()
    """When they last looked (a look counts once an hour)."""


class LogEntryRow(SQLModel, table=True):
    """One signed move exactly as received, chained by ``entry_hash``; never updated.

    Keyed by the match and the seq: on SQLite the table is that key's B-tree (``WITHOUT
    ROWID``), with no surrogate key and no second index repeating the match's id (revision
    0014: about 45 bytes a move)."""

    __tablename__ = "log_entry"
    __table_args__ = {"sqlite_with_rowid": False}

    match_id: str = Field(foreign_key="match.id", primary_key=True, max_length=64)
    seq: int = Field(sa_type=BigInteger, primary_key=True)
    seat: int
    hand_number: int
    payload: bytes = _binary()
    signature: bytes = _binary()
    actor_key: bytes = _binary()
    entry_hash: bytes = _binary()
    receipt_signature: bytes = _binary()
    events_json: str = Field(default="[]", sa_type=Text)
    """The engine events the move caused, unredacted (redacted per reader on the way out),
    in ``server.store.repository.records.events_text``'s compact form (or, stored before
    issue 29, ``Event.to_json``'s objects)."""
    created_ms: int = _big()
    standing_order: bool = False
    """The server made the move under its player's standing order (attest-signed)."""


class HandRow(SQLModel, table=True):
    """Commit-reveal record of one hand (see ``server.service.wings``)."""

    __tablename__ = "hand"

    match_id: str = Field(foreign_key="match.id", primary_key=True, max_length=64)
    hand_number: int = Field(primary_key=True)
    commitment: bytes = _binary()
    secret: bytes = _binary()
    revealed: bool = False
    deal_seq: int = _big()
    created_ms: int = _big()


class InvitationRow(SQLModel, table=True):
    __tablename__ = "invitation"

    code: str = Field(primary_key=True, max_length=64)
    created_ms: int = _big()
    expires_ms: int = _big()
    used_by: int | None = Field(default=None, foreign_key="player.id")
    used_ms: int = _big()


class ChallengeRow(SQLModel, table=True):
    """A single-use authentication challenge; deleted when answered."""

    __tablename__ = "auth_challenge"

    challenge: bytes = _binary(primary_key=True)
    public_key: bytes = _binary()
    expires_ms: int = _big(index=True)


class TokenRow(SQLModel, table=True):
    """A bearer token, stored as its SHA-256 so a database leak does not leak sessions."""

    __tablename__ = "auth_token"

    token_hash: bytes = _binary(primary_key=True)
    player_id: int = Field(foreign_key="player.id", index=True)
    expires_ms: int = _big(index=True)


class NotificationRow(SQLModel, table=True):
    """Something a player should hear of, written in the same commit as the change that
    causes it (the outbox), delivered by ``server.service.news.outbox``; also the player's
    notification log that Watch resumes from. A turn notice replaces the delivered ones of its
    player and match (``PreparedRepository.add_notices``)."""

    __tablename__ = "notification"

    id: int | None = Field(default=None, primary_key=True)
    player_id: int = Field(foreign_key="player.id", index=True)
    match_id: str = Field(default="", max_length=64)
    kind: str
    detail_json: str = Field(default="{}", sa_type=Text)
    created_ms: int = _big()
    state: str = Field(default="pending", index=True)
    """``pending`` (to deliver), ``sending`` (claimed), ``done``, ``failed``."""
    attempts: int = 0
    next_attempt_ms: int = _big(index=True)
    lease_until_ms: int = _big()
    email_state: str = ""
    """``sent``, ``digest`` (waits for the player's daily digest), ``digested``, ``off``,
    ``failed``, ``held`` (table talk: it goes with the next mail about its match); empty until
    handled."""
    webhook_state: str = ""
    """``sent``, ``off``, ``failed``; empty until handled."""
    done_ms: int = _big()


class AdminActionRow(SQLModel, table=True):
    """One action taken with the ``canasta-server`` admin commands: who (the operating
    system's user), when, what, on what, and what changed."""

    __tablename__ = "admin_action"

    id: int | None = Field(default=None, primary_key=True)
    at_ms: int = _big()
    actor: str
    action: str
    target: str
    detail: str = Field(default="", sa_type=Text)


class ReplyCodeRow(SQLModel, table=True):
    """A single-use code for a move by mail reply (``server.service.mail.mailin``): mailed to one
    player, for one match at one version. Only its hash is stored."""

    __tablename__ = "reply_code"

    code_hash: str = Field(primary_key=True, max_length=64)
    """SHA-256 (hex) of the code."""
    player_id: int = Field(foreign_key="player.id", index=True)
    match_id: str = Field(max_length=64)
    version: int = _big()
    """The match version the code was mailed for: a reply to an older table is refused."""
    created_ms: int = _big()
    expires_ms: int = _big(index=True)
    used_ms: int = _big()
    """When a reply spent it (0: not yet)."""


class TalkRow(SQLModel, table=True):
    """One table talk entry (``shared.talk``) exactly as signed, in the match's talk chain
    (its own, beside the log); never updated."""

    __tablename__ = "talk"
    __table_args__ = (UniqueConstraint("match_id", "seq", name="uq_talk_match_seq"),)

    id: int | None = Field(default=None, primary_key=True)
    match_id: str = Field(foreign_key="match.id", max_length=64)
    seq: int = Field(sa_type=BigInteger)
    kind: str = Field(max_length=16)
    """``say`` or ``conventions``."""
    seat: int
    player_id: int = Field(foreign_key="player.id")
    """Who said it (the seat's player then): the rate limits count per player."""
    at_seq: int = _big()
    at_hash: bytes = _binary()
    client_ms: int = _big()
    text: str = Field(sa_type=Text)
    signature: bytes = _binary()
    talk_hash: bytes = _binary()
    receipt_signature: bytes = _binary()
    created_ms: int = _big()
