"""The words of a notification: a mail's subject and body, a webhook's JSON.

Every text is for its recipient alone. It says what happened (from the notice's facts, which
every player of the match may know), shows the recipient's own table as text (their hand,
never anyone else's: ``shared.rules.player_view`` of their seat is the only source), and the
exact command that acts next. Names of the other players come from the match's seats.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import NamedTuple

from server.domain import Match, MatchView, Notification, SeatKind, Settings
from server.service.clocks import zone
from server.service.matches import waits_for
from shared.rules import Discard, GameState, Phase, cards_text, legal_actions
from shared.rules.cards import IS_WILD

SUBJECTS = {
    "your_turn": "Your turn",
    "partner_asks": "Your partner asks: may I go out?",
    "hand_ended": "Hand over",
    "match_ended": "Match over",
    "reminder": "Reminder: your move is due soon",
    "bot_played": "A bot played your turn",
    "abort_asked": "A player asks to abandon the match",
    "match_aborted": "Match abandoned",
    "match_recovered": "Match restored",
    "deadline_passed": "Your time ran out",
    "verify_email": "Your Canasta e-mail code",
    "move_stored": "Move stored",
    "move_refused": "Move refused",
}
"""The subject of each kind's own mail. Table talk (``talk``) has no mail of its own: it goes
with the next mail about its match, or in the digest (``mail_body``)."""
ANSWERS = frozenset({"move_stored", "move_refused"})
"""Kinds that answer a player's own mail (``server.service.mail.mailin``): mailed at once to the
verified address whatever the mail mode (the player asked for them), never to a webhook."""
UNSUBSCRIBE = (
    "To stop these mails: canasta notify email off (or canasta notify email digest for one a day)."
)


def subject(note: Notification) -> str:
    title = SUBJECTS.get(note.kind, note.kind.replace("_", " "))
    if note.match_id:
        return f"{title} - match {note.match_id[:8]}"
    return title


def headline(note: Notification, match: Match | None, settings: Settings) -> str:
    """One sentence: what happened, with the deadline in the recipient's time zone."""
    facts = note.facts
    hand = facts.get("hand_number", 0)
    if note.kind == "verify_email":
        return _code_line(note)
    if note.kind == "move_stored":
        return (
            f"Your move {facts.get('seq', '?')} in match {note.match_id[:8]} is stored: "
            f"{facts.get('move', '?')}."
        )
    if note.kind == "move_refused":
        return f"Your mail moved nothing: {facts.get('reason', 'it was refused')}"
    if note.kind == "talk":
        return talk_line(note)
    if note.kind == "your_turn":
        text = f"It is your turn in match {note.match_id[:8]}"
        text += f", hand {hand}." if hand else ": cut and deal the first hand."
    elif note.kind == "partner_asks":
        text = f"Your partner asks whether they may go out (match {note.match_id[:8]})."
    elif note.kind == "hand_ended":
        text = f"Hand {hand} of match {note.match_id[:8]} is over. Scores: {_scores(facts)}."
    elif note.kind == "match_ended":
        text = f"Match {note.match_id[:8]} is over. Final scores: {_scores(facts)}."
        text += _winners(facts, match)
    elif note.kind == "abort_asked":
        text = (
            f"Seat {facts.get('seat', '?')} asks to abandon match {note.match_id[:8]} before "
            f"its first deal: canasta abort --match {note.match_id} agrees."
        )
    elif note.kind == "match_aborted" and facts.get("by") == "operator":
        text = f"Match {note.match_id[:8]} was ended by the server's operator."
    elif note.kind == "match_aborted":
        text = f"Match {note.match_id[:8]} was abandoned before its first deal."
    elif note.kind == "match_recovered":
        text = (
            f"The server of match {note.match_id[:8]} was restored from a backup; the moves "
            f"it had lost, from move {facts.get('first', '?')} on, came back from players' "
            "copies, each checked by the server, and the match goes on."
        )
    elif note.kind == "bot_played":
        text = (
            f"A bot played your turn in match {note.match_id[:8]}: canasta cover off "
            f"--match {note.match_id} to play again."
        )
    elif note.kind == "reminder":
        text = f"Reminder: it is still your move in match {note.match_id[:8]}."
    elif note.kind == "deadline_passed":
        what = (
            "a bot resigned the match for your side"
            if facts.get("cover") == "forfeit"
            else "a bot plays your seat until you run: canasta cover off"
        )
        text = f"Your time ran out in match {note.match_id[:8]}: {what}."
    else:
        text = f"News in match {note.match_id[:8]}."
    due = facts.get("due_ms")
    if isinstance(due, int) and note.kind in ("your_turn", "partner_asks", "reminder"):
        text += f" Due {_local(due, settings.time_zone)}."
    return text


class MailTable(NamedTuple):
    """A match as the recipient of a mail sees it now: the position, their seat, and the table
    rendered from their own view (``TableText``)."""

    match: Match
    state: GameState
    seat: int
    text: str


TableText = Callable[[MatchView, str, int], str]
"""(the recipient's view, their time zone, now in ms) -> the table as ``canasta show`` prints
it. The edge supplies it (``server.edge.tables``): the one renderer, ``shared.tabletext``, reads
the wire message, which the service does not know."""


def mail_body(
    notes: Sequence[Notification],
    tables: Mapping[str, MailTable],
    settings: Settings,
    codes: Mapping[str, str] | None = None,
) -> str:
    """A mail of one notification or a digest of several: each headline, then each match's
    table as the recipient sees it now, and the commands (with ``codes``, by match: the
    single-use code a reply with the move needs).

    A digest says each thing once: of several "your turn" (or reminder) notices of one match,
    only the latest stays, since the table below shows where that match stands now. Table
    talk (``talk`` notices) comes after the headlines, under a heading of its own."""
    if len(notes) == 1 and notes[0].kind == "verify_email":
        return code_mail_body(notes[0])
    lines = [f"Hello {settings.display_name},", ""]
    for note in _without_repeats([n for n in notes if n.kind != "talk"]):
        found = tables.get(note.match_id)
        lines.append(headline(note, found.match if found else None, settings))
        lines += receipt_lines(note)
    said = [n for n in notes if n.kind == "talk"]
    if said:  # the table talk since the last mail, in the order it was said
        lines += ["", "Table talk since your last mail:", *(f"  {talk_line(n)}" for n in said)]
    for match_id in dict.fromkeys(n.match_id for n in notes if n.match_id):
        found = tables.get(match_id)
        if found is not None:
            lines += ["", *table_text(*found, code=(codes or {}).get(match_id, ""))]
    if any(n.kind != "verify_email" for n in notes):
        lines += ["", UNSUBSCRIBE]
    return "\n".join(lines) + "\n"


_REPEATED = frozenset({"your_turn", "reminder", "partner_asks"})
"""Notices whose news is only "it is your move": a later one of the same match says it too."""


def _without_repeats(notes: Sequence[Notification]) -> list[Notification]:
    """``notes`` without those a later notice of the same kind and match makes stale."""
    last = {(n.kind, n.match_id): i for i, n in enumerate(notes) if n.kind in _REPEATED}
    return [
        n for i, n in enumerate(notes) if n.kind not in _REPEATED or last[(n.kind, n.match_id)] == i
    ]


def code_mail_body(note: Notification) -> str:
    """The mail that proves an address. Anyone can have it sent to any address, so it holds
    nothing the asking player chose (not their display name: it could pose as a message from
    the server), only the code and what to do with it, or without it."""
    lines = [
        _code_line(note),
        "",
        "A player of this Canasta server asked for their game notifications to come to this",
        "address. If that was you, give the code above back as shown. If it was not, ignore",
        "this mail: nothing more is sent here unless the code is given back, and it expires",
        "within an hour.",
    ]
    return "\n".join(lines) + "\n"


def _code_line(note: Notification) -> str:
    code = note.facts.get("code", "?")
    return f"Your code is {code}: run canasta notify verify {code}"


def receipt_lines(note: Notification) -> list[str]:
    """The server's receipt for a stored move, as text the player can check or keep: the
    entry hash and the server's signature over (match id, seq, entry hash)."""
    if note.kind != "move_stored":
        return []
    return [
        f"  receipt: match {note.match_id} seq {note.facts.get('seq', '?')}",
        f"  entry hash: {note.facts.get('entry_hash', '?')}",
        f"  server signature: {note.facts.get('server_signature', '?')}",
    ]


def table_text(match: Match, state: GameState, seat: int, table: str, code: str = "") -> list[str]:
    """The recipient's table as ``canasta show`` prints it (``table``: the ``TableText`` of
    their own view), then what to run and, with ``code``, how to move by replying."""
    lines = table.split("\n")
    if not waits_for(match, state, seat):  # the actor (or cutter), unless an order moves
        return lines
    dealing = state.phase is Phase.DEAL
    command = f"canasta deal {match.id}" if dealing else f"canasta show {match.id}"
    lines.append(f"  your move: {command}")
    if code:
        example = "deal" if dealing else _example(state, seat)
        lines += [
            f"  or reply to this mail with your move on the first line (e.g. {example});",
            f"  reply code {code}, good for this table once",
        ]
    return lines


def _example(state: GameState, seat: int) -> str:
    """A move the reply could hold now: the draw, or (after it) a legal discard, of a natural
    card where one may go (an example should not suggest throwing a wild card away)."""
    if state.phase is Phase.DRAW:
        return "draw"
    if state.phase is Phase.ANSWER:
        return "answer no"
    actions = legal_actions(state, seat)
    discards = [a.card for a in actions if isinstance(a, Discard)]
    natural = [card for card in discards if not IS_WILD[card]]
    if natural or discards:
        return f"discard {cards_text((natural or discards)[-1:])}"
    return str(actions[0]) if actions else "draw"


def talk_line(note: Notification) -> str:
    """A ``talk`` notice as one line: who said what at which match. The text is the player's
    own, checked printable when it was said (``shared.talk.text_problem``: no line breaks, no
    control or bidirectional characters), shown as said, in plain text (no mail has an HTML
    part; an HTML rendering must escape it)."""
    facts = note.facts
    who = f"{facts.get('name') or 'a player'} (seat {facts.get('seat', '?')})"
    text = "".join(c if c.isprintable() else "\ufffd" for c in str(facts.get("text", "")))
    if facts.get("talk_kind") == "conventions":
        return f"{who} declares their side's conventions at match {note.match_id[:8]}: {text}"
    return f"{who} at match {note.match_id[:8]}: {text}"


_WEBHOOK_TALK_FACTS = ("seat", "talk_seq", "talk_kind")
"""What a webhook says of table talk: that something was said, by which seat; not the text
(a webhook is a nudge to look, and its receiver is often a third party's service)."""


def webhook_json(note: Notification, settings: Settings) -> dict[str, object]:
    """A webhook's body: the headline and the facts every player may know; no hand (and of
    table talk, only a short notice without its text)."""
    if note.kind == "talk":
        text = f"Something was said at the table of match {note.match_id[:8]}."
        facts = {k: v for k, v in note.facts.items() if k in _WEBHOOK_TALK_FACTS}
    else:
        text = headline(note, None, settings)
        facts = {k: v for k, v in note.facts.items() if k != "code"}
    return {
        "id": note.id,
        "kind": note.kind,
        "match_id": note.match_id,
        "text": text,
        "created_ms": note.created_ms,
        "facts": facts,
    }


def _name(match: Match, seat: int) -> str:
    taken = match.seats[seat]
    if taken.kind is SeatKind.BOT:
        return f"bot {seat}"
    return taken.display_name or f"seat {seat}"


def _scores(facts: dict[str, object]) -> str:
    scores = facts.get("scores")
    return ", ".join(str(x) for x in scores) if isinstance(scores, list) else "?"


def _winners(facts: dict[str, object], match: Match | None) -> str:
    winners = facts.get("winners")
    if not isinstance(winners, list) or not winners or match is None:
        return ""
    seats = [
        _name(match, s.seat) for s in match.seats if match.config.initial_side(s.seat) in winners
    ]
    return f" Won by {' and '.join(seats)}." if seats else ""


def _local(ms: int, time_zone: str) -> str:
    moment = datetime.fromtimestamp(ms / 1000, UTC).astimezone(zone(time_zone))
    return moment.strftime("%a %d %b %H:%M ") + (moment.tzname() or time_zone)
