"""``canasta replay``: a verified transcript as one standalone HTML page that steps through the
match move by move.

The positions are the rules engine's: the transcript is verified first (``shared.transcript``),
then its entries are replayed again here through the same acceptance rule
(``shared.matchlog.accept_entry``), and each position's table (every hand, the pile, the melds,
the scores, who moved and with which key) is written as JSON into the page, whose small script
(``client.replaypage``) only draws it. A hand that the file does not show to its end (a running
match's hand in play) is drawn as a player who sat out would see it: hand sizes, never cards.

Nothing in the page fetches anything: the script, the styles and the cards (inline SVG) are in
the file, and its Content-Security-Policy forbids every request. Everything taken from the
transcript reaches the page as JSON data (with ``<``, ``>`` and ``&`` escaped) that the script
puts into the page as text, never as markup.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from shared.crypto.keytext import fingerprint
from shared.matchlog import Header, Signer, accept_entry, cutting_seat
from shared.pb import canasta_pb2 as pb
from shared.rules import Event, GameState, HandResult, Phase, card_text, new_match, redact_event
from shared.rules.cards import IS_BLACK3, sort_cards
from shared.rules.pile import frozen_reason
from shared.rules.ruleset import rules
from shared.tabletext import CANASTA_LABELS, SeatNames, describe_event, hand_result_rows
from shared.transcript import HandSecret, Report, Transcript, verify
from shared.wire import DEAL_ACTION, event_to_pb, hand_result_to_pb

_DOING = {Phase.DRAW: "draw", Phase.PLAY: "play", Phase.ANSWER: "answer"}
_CANASTAS = {"natural": "natural canasta", "mixed": "mixed canasta", **CANASTA_LABELS}
"""The engine's canasta kinds in the table's words (``shared.tabletext``)."""


@dataclass(frozen=True)
class Replay:
    """A verified transcript's report and the page's data."""

    report: Report
    data: dict[str, Any]


def replay(transcript: Transcript) -> Replay:
    """Verify ``transcript`` (``TranscriptError`` if it does not) and build every position."""
    from client.cmd_transcript import report_text

    report = verify(transcript)
    header = report.header
    names = _seat_names(header)
    secrets = {h.hand_number: h for h in transcript.hands}
    over = {r.hand_number for r in report.hands}
    if report.finished:  # a resignation ends the match in the middle of a hand, unscored
        over.add(report.state.hand_number)

    def hand_of(number: int) -> HandSecret | None:
        return secrets.get(number)

    said: dict[int, list[str]] = {}  # table talk, by the entry it was said after
    for line in transcript.talk:
        words = "declares their side's conventions" if line.kind == "conventions" else "says"
        said.setdefault(line.at_seq, []).append(
            f"{_name(header, line.seat)} (seat {line.seat}) {words}: {line.text}"
        )
    state = new_match(header.config, first_dealer=header.first_dealer)
    positions = [_position(header, names, state, None, [], over)]
    positions[0]["talk"] = said.get(0, [])
    for entry in transcript.entries:
        before = state
        accepted = accept_entry(header, state, entry.payload, entry.signature, hand_of)
        state = accepted.state
        move = accepted.move
        same_hand = state.hand_number == before.hand_number
        new_events = state.events[len(before.events) :] if same_hand else state.events
        mover = {
            "seq": move.seq,
            "seat": move.seat,
            "name": _name(header, move.seat),
            "by": _signed_by(header, move.seat, accepted.signed.by, accepted.signed.key),
            "kind": _signer_kind(header, move.seat, accepted.signed.by),
            "actions": [
                f"cut and deal hand {state.hand_number}" if a == DEAL_ACTION else a
                for a in move.actions
            ],
        }
        position = _position(header, names, state, mover, new_events, over)
        position["talk"] = said.get(move.seq, [])
        if state.last_hand is not None and state.last_hand is not before.last_hand:
            position["result"] = _result_lines(state.last_hand, names)
        positions.append(position)
    data = {
        "title": f"Canasta match {header.match_id}",
        "match": _match_facts(header),
        "seats": [
            {
                "seat": s.seat,
                "name": _name(header, s.seat),
                "bot": s.bot,
                "side": header.config.initial_side(s.seat),
                "key": fingerprint(s.public_key),
            }
            for s in header.seats
        ],
        "columns": [names.group(c) for c in _columns(header)],
        "hands": [
            {
                "number": r.hand_number,
                "totals": [c.hand_total for c in r.columns],
                "cumulative": [c.cumulative for c in r.columns],
            }
            for r in report.hands
        ],
        "verified": report_text(report, None).splitlines(),
        "result": report.result or "in progress",
        "positions": positions,
    }
    return Replay(report, data)


def page(replayed: Replay) -> str:
    """The standalone HTML page of a replay."""
    from client.replaypage import document

    return document(html.escape(replayed.data["title"]), data_json(replayed.data))


def data_json(data: dict[str, Any]) -> str:
    """``data`` as JSON that is safe inside a ``<script type="application/json">`` element:
    ASCII only, and no ``<``, ``>`` or ``&`` (so no ``</script>``, no comment, no entity)."""
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"), sort_keys=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


# -- the match ---------------------------------------------------------------------------------


def _name(header: Header, seat: int) -> str:
    return header.seats[seat].name or f"seat {seat}"


def _seat_names(header: Header) -> SeatNames:
    """The CLI's names for the seats, as nobody in particular sees them."""
    infos = [
        pb.SeatInfo(
            seat=s.seat,
            display_name=_name(header, s.seat),
            kind=pb.SEAT_KIND_BOT if s.bot else pb.SEAT_KIND_HUMAN,
            side=header.config.initial_side(s.seat),
        )
        for s in header.seats
    ]
    return SeatNames(infos, None)


def _columns(header: Header) -> list[list[int]]:
    """The seats of each score column."""
    config = header.config
    columns: list[list[int]] = [[] for _ in range(len(config.partnerships))]
    for seat in range(config.players):
        columns[config.initial_side(seat)].append(seat)
    return columns


def _match_facts(header: Header) -> dict[str, Any]:
    config = header.config
    try:
        began = datetime.fromtimestamp(header.started_ms / 1000, UTC)
        started = began.strftime("%Y-%m-%d %H:%M UTC")
    except (OverflowError, OSError, ValueError):
        started = f"{header.started_ms} ms after 1970"
    return {
        "id": header.match_id,
        "preset": config.preset,
        "length": (
            f"{config.hands_per_match} hand{'' if config.hands_per_match == 1 else 's'}"
            if config.hands_per_match
            else f"to {config.target}"
        ),
        "started": started,
        "hands_per_match": config.hands_per_match or 0,
        "server_key": fingerprint(header.server_key),
        "bot_key": fingerprint(header.bot_key),
        "attest_key": fingerprint(header.attest_key) if header.attest_key else "",
    }


def _signer_kind(header: Header, seat: int, by: Signer) -> str:
    if by is Signer.ATTEST:
        return "attested"
    if by is Signer.BOT:
        return "covered"
    return "bot" if header.seats[seat].bot else "player"


def _signed_by(header: Header, seat: int, by: Signer, key: bytes) -> str:
    """Who vouches for a move, in words, with the key's fingerprint."""
    name = f"{_name(header, seat)} (seat {seat})"
    if by is Signer.ATTEST:
        return (
            f"made by {name} by mail reply or standing order; server-attested: signed by the "
            f"server's attest key {fingerprint(key)}, not the player's key"
        )
    if by is Signer.BOT:
        return f"played by a bot for {name}, who was away: signed by the bot key {fingerprint(key)}"
    if header.seats[seat].bot:
        return f"played by the bot at {name}: signed by the bot key {fingerprint(key)}"
    return f"signed by {name}'s own key {fingerprint(key)}"


# -- a position --------------------------------------------------------------------------------


def _cards(cards: tuple[int, ...] | list[int]) -> str:
    return " ".join(card_text(c) for c in cards)


def _position(
    header: Header,
    names: SeatNames,
    state: GameState,
    mover: dict[str, Any] | None,
    events: tuple[Event, ...] | list[Event],
    over: set[int],
) -> dict[str, Any]:
    """What the page draws of one position: face up when its hand is over in the file."""
    config = state.config
    dealt = state.hand_number > 0
    shown = dealt and state.hand_number in over
    in_hand = state.phase in _DOING
    actor = state.actor()
    seats = []
    for seat in range(config.players):
        row: dict[str, Any] = {"count": len(state.hands[seat]) if dealt else 0}
        if shown:
            row["cards"] = _cards(sort_cards(state.hands[seat]))
        if state.feet:
            foot = state.feet[seat]
            row["foot"] = len(foot)
            if shown and foot:
                row["foot_cards"] = _cards(sort_cards(foot))
        seats.append(row)
    sides = []
    if dealt:
        ruleset = rules(state)
        for side in sorted(set(state.side_of)):
            side_seats = state.side_seats(side)
            melds = []
            for meld in ruleset.meld_views(state, side):
                melds.append(
                    {
                        "rank": meld.label,
                        "cards": _cards(meld.cards),
                        "canasta": _CANASTAS.get(meld.canasta, meld.canasta),
                        "sequence": meld.kind == "sequence",
                    }
                )
            sides.append(
                {
                    "seats": names.group(side_seats),
                    "opened": state.opened(side),
                    "canastas": state.canastas(side),
                    "threes": _cards([c for s in side_seats for c in state.red3[s]]),
                    "melds": melds,
                }
            )
    frozen = ""
    if in_hand and state.pile and actor is not None:
        frozen = frozen_reason(state, state.side_of[actor])
    described = [
        describe_event(event_to_pb(_shown_event(e, shown)), names, False)
        for e in events
        if e.kind != "deal"
    ]
    return {
        "hand": state.hand_number,
        "phase": state.phase.value,
        "face_up": shown,
        "dealer": state.dealer if dealt or state.phase is Phase.DEAL else None,
        "actor": actor,
        "target": state.target,
        "scores": list(state.scores),
        "minimums": [config.initial_minimum(s, state.hand_number) for s in state.scores],
        "seats": seats,
        "stock": len(state.stock) if in_hand else None,
        "talon": [len(p) for p in state.talon] if in_hand and state.talon else [],
        "pile": _cards(state.pile[-1:]) if in_hand else "",
        "pile_size": len(state.pile) if in_hand else 0,
        "frozen": frozen,
        "blocked": in_hand and bool(state.pile) and IS_BLACK3[state.pile[-1]],
        "sides": sides,
        "mover": mover,
        "events": described,
        "status": _status(header, names, state),
    }


def _shown_event(event: Event, shown: bool) -> Event:
    """An event as the page may show it: every card of a hand that is over, only the public
    ones of a hand in play."""
    return event if shown else redact_event(event, -1)


def _status(header: Header, names: SeatNames, state: GameState) -> str:
    """Who is to move next, or how the match ended."""
    if state.phase is Phase.MATCH_OVER:
        columns = _columns(header)
        final = ", ".join(
            f"{names.group(columns[i])}: {score}" for i, score in enumerate(state.scores)
        )
        winners = [names.group(columns[w]) for w in state.winners]
        if len(winners) > 1:
            return f"Match over, won by {' and '.join(winners)} ({final})"
        return f"Match over: {winners[0]} won ({final})" if winners else f"Match over ({final})"
    if state.phase is Phase.DEAL:
        cutter = cutting_seat(header.bots, state.dealer)
        return f"{names.full(cutter)} to cut and deal hand {state.hand_number + 1}"
    actor = state.actor()
    if actor is None:  # pragma: no cover - every phase in a hand has an actor
        return ""
    if state.phase is Phase.ANSWER:
        return f"{names.full(actor)} to answer {names.name(state.turn)}: may I go out?"
    return f"{names.full(actor)} to {_DOING[state.phase]}"


def _result_lines(result: HandResult, names: SeatNames) -> list[str]:
    """How a hand ended and what each column scored, in the CLI's words
    (``shared.tabletext.hand_result_rows``), one line each, unwrapped."""
    lines: list[str] = []
    for row in hand_result_rows(hand_result_to_pb(result), None, names, full=True):
        starts = row.startswith("Hand ") or (row.startswith("  ") and row[2:3] != " ")
        text = " ".join(row.split())
        if starts or not lines:
            lines.append(text)
        else:
            lines[-1] += " " + text
    return lines
