"""Text for people (and scripts) from the server's messages: the match list, moves, the log.

The table itself is ``shared.tabletext``'s (the server's mails show it too); it is re-exported
here with the rest. Every function returns a ``str`` without a trailing newline and never
prints, so commands stay one line of I/O and tests can compare text. With ``color=False`` the
output is ASCII only, with cards exactly as players type them; with ``color=True`` it adds ANSI
colours and suit symbols (see ``shared.textstyle``). Decide once per command with ``use_color``.

Nothing here imports grpc, and the generated protobuf code is imported only inside the
functions that need its constants: the caller already holds a message, so the import is free
then, and ``canasta --help`` never pays for it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from shared.tabletext import (
    COMMANDS,
    WIDTH,
    SeatNames,
    aborted_text,
    describe_event,
    due_text,
    hand_result_rows,
    plural,
    render_table,
    score_columns,
    status_text,
)
from shared.textstyle import card, paint, use_color, wrap

if TYPE_CHECKING:
    from google.protobuf.message import Message

    from shared.pb import canasta_pb2 as pb

__all__ = [
    "COMMANDS",
    "WIDTH",
    "changes_text",
    "message_json",
    "notification_line",
    "render_history",
    "render_matches",
    "render_moves",
    "render_table",
    "short_ids",
    "status_text",
    "use_color",
    "watch_line",
]

_DEAL = "deal"
"""The move that cuts and deals a hand (``shared.wire.DEAL_ACTION``; not imported: it loads the
engine)."""
_SAID_BY_ACTION = frozenset({"meld", "layoff", "discard", "ask", "answer"})
"""Events the history leaves out: the mover's action text already says the same."""


def changes_text(entries: Sequence[pb.HistoryEntry], view: pb.MatchView, *, color: bool) -> str:
    """The log entries since the viewer last looked, one line each as in ``canasta history``."""
    names = SeatNames(view.match.seats, view.view.seat)
    lines = [line for entry in entries for line in _entry_lines(entry, names, color)]
    return "\n".join(lines)


# -- the ladder -----------------------------------------------------------------------------------


def render_ratings(response: pb.GetRatingsResponse) -> str:
    """One line per player (and bot level), best rating first: the rating with its 95%
    interval (two deviations) and the statistics per match, hand and move."""
    if not any(not s.bot_level for s in response.standings):
        head = "Nobody is rated yet: a finished rated match rates its players."
    else:
        head = (
            f"Ratings (Glicko-2; a rating period is {response.period_days} days: a period's "
            "results settle when it ends)"
        )
    lines = [head, ""]
    lines.append(
        f"{'player':<20} {'rating':>12} {'matches':>8} {'won':>5} {'hand avg':>9} "
        f"{'canastas':>9} {'out':>5} {'move':>8} {'timeouts':>8}"
    )
    for s in response.standings:
        rating = f"{s.rating:.0f}±{2 * s.rd:.0f}"
        if s.bot_level:
            lines.append(f"{s.display_name:<20} {s.rating:>12.0f}   (fixed: an anchor)")
            continue
        lines.append(
            f"{s.display_name[:20]:<20} {rating:>12} {s.matches:>8} {s.wins:>5} "
            f"{s.average_hand_score:>9.0f} {s.canastas_per_hand:>9.2f} "
            f"{s.going_out_rate:>5.0%} {_duration(s.average_move_seconds):>8} {s.timeouts:>8}"
        )
    lines.append("")
    lines.append(
        "hand avg: the side's points per hand; canastas: the side's per hand; out: hands gone "
        "out; move: the time a move of yours took, on average"
    )
    return "\n".join(lines)


def _duration(seconds: float) -> str:
    if seconds >= 86_400:
        return f"{seconds / 86_400:.1f}d"
    if seconds >= 3_600:
        return f"{seconds / 3_600:.1f}h"
    if seconds >= 60:
        return f"{seconds / 60:.0f}m"
    return f"{seconds:.0f}s"


# -- the match list -------------------------------------------------------------------------------


def render_matches(matches: Sequence[pb.MatchSummary], *, color: bool) -> str:
    """One line per match, the ones waiting for the viewer first, finished ones last."""
    from shared.pb import canasta_pb2 as pb

    if not matches:
        return "No matches yet: create one or join one with an invite code."

    def rank(m: pb.MatchSummary) -> int:
        if m.my_turn:
            return 0
        return 2 if m.status == pb.MATCH_STATUS_FINISHED else 1

    ids = short_ids([m.match_id for m in matches])
    lines = [_match_line(m, ids[m.match_id], color) for m in sorted(matches, key=rank)]
    if any(m.changed for m in matches):
        lines.append("(* changed since you last looked)")
    return "\n".join(lines)


def short_ids(ids: Sequence[str], minimum: int = 8) -> dict[str, str]:
    """Each id cut to the shortest prefix (at least ``minimum`` long) no other id shares.

    The CLI accepts a unique prefix of one of the player's matches, and this list is exactly
    those matches, so every prefix shown can be typed back.
    """
    short = {}
    for match_id in ids:
        length = min(minimum, len(match_id))
        while any(o != match_id and o.startswith(match_id[:length]) for o in ids):
            length += 1
            if length >= len(match_id):
                break
        short[match_id] = match_id[:length]
    return short


def _match_line(m: pb.MatchSummary, shown_id: str, color: bool) -> str:
    from shared.pb import canasta_pb2 as pb

    me = m.my_seat if m.HasField("my_seat") else None
    names = SeatNames(m.seats, me)
    status = {
        pb.MATCH_STATUS_WAITING: "waiting",
        pb.MATCH_STATUS_PLAYING: "playing",
        pb.MATCH_STATUS_FINISHED: "finished",
    }.get(m.status, "?")
    playing = m.status == pb.MATCH_STATUS_PLAYING
    parts = ["*" if m.changed else " ", shown_id, m.preset, "" if playing else status]
    if m.status == pb.MATCH_STATUS_WAITING:
        taken = sum(1 for s in m.seats if s.kind != pb.SEAT_KIND_EMPTY)
        parts.append(f"{taken}/{m.players} seated")
        if m.invite_code:
            parts.append(f"invite {m.invite_code}")
    elif m.status == pb.MATCH_STATUS_FINISHED:
        columns = score_columns(m.seats, len(m.scores), ())
        won = [names.group(columns[w]) for w in m.winners if w < len(columns)]
        parts.append(
            aborted_text(m) if m.aborted else (("won by " + " and ".join(won)) if won else "over")
        )
    else:
        if m.hand_number:
            parts.append(f"hand {m.hand_number}")
        if m.my_turn:
            parts.append(paint("YOUR TURN", "good", color))
        elif m.HasField("to_act"):
            parts.append(f"{names.name(m.to_act)} to move")
        if m.HasField("clock"):
            parts.append(due_text(m))
    if m.scores and m.status != pb.MATCH_STATUS_WAITING:
        columns = score_columns(m.seats, len(m.scores), ())
        parts.append(
            ", ".join(
                f"{names.group(columns[i]) or f'side {i}'}: {s}" for i, s in enumerate(m.scores)
            )
        )
    elif m.seats:
        parts.append(
            ", ".join(names.short(s.seat) for s in m.seats if s.kind != pb.SEAT_KIND_EMPTY)
        )
    return "  ".join(p for p in parts if p)


# -- moves ----------------------------------------------------------------------------------------

_MOVE_TITLES = {
    "start": "Start your turn",
    "open": "Melds that open (they reach your side's minimum)",
    "meld": "Melds",
    "lay": "Lay-offs",
    "discard": "Discards (each ends the turn)",
    "ask": "Ask your partner",
    "answer": "Answer your partner",
    "pass": "Pass",
}
_MOVE_COMMANDS = {"pickup": "take"}
"""Engine action words whose CLI command has another name."""


def move_command(action: str) -> str:
    """An engine action as the ``canasta`` command that plays it: ``pickup 7h 7c`` ->
    ``canasta take 7h 7c``."""
    word, _, rest = action.partition(" ")
    return " ".join(p for p in ("canasta", _MOVE_COMMANDS.get(word, word), rest) if p)


def render_moves(found: pb.GetMovesResponse, view: pb.MatchView | None) -> str:
    """The seat's legal moves, grouped, each as a command; or why there are none."""
    if not found.groups:
        why = status_text(view) if view is not None else "it is not your move"
        return f"Nothing for you to do in match {found.match_id[:8]} now: {why}"
    lines = [f"Your moves in match {found.match_id[:8]} (version {found.version}):"]
    for group in found.groups:
        lines.append(f"{_MOVE_TITLES.get(group.kind, group.kind)}:")
        lines += [f"  {move_command(a)}" for a in group.actions]
        if group.left_out:
            lines.append(f"  ... and {group.left_out} more of this kind")
    if any(g.kind in ("meld", "lay", "open") for g in found.groups):
        lines.append(
            "Not every legal meld is listed (one per rank); several go in one move with "
            '`canasta play "meld ...; lay ...; discard ..."`.'
        )
    return "\n".join(lines)


# -- watch ----------------------------------------------------------------------------------------

_NEXT_COMMAND = {
    "your_turn": "canasta show {match}",
    "reminder": "canasta show {match}",
    "partner_asks": "canasta answer yes|no {match}",
    "hand_ended": "canasta show {match}",
    "match_ended": "canasta history {match}",
    "talk": "canasta talk {match}",
}
"""What to run after a notification of each kind, when its text names no command itself."""


def notification_line(note: pb.WatchNotification) -> str:
    """One of the player's notifications: what happened, in which match (the text says), and
    the command to run next."""
    shown = "".join(
        c if c.isprintable() else " " for c in note.text
    )  # no escapes reach the terminal
    text = " ".join(shown.split()) or f"{note.kind.replace('_', ' ')} (match {note.match_id})"
    command = _NEXT_COMMAND.get(note.kind, "")
    if command and note.match_id and "canasta " not in text:
        text += f" Next: {command.format(match=note.match_id[:8])}"
    return text


def watch_line(
    change: pb.WatchResponse, summary: pb.MatchSummary | None, *, cut: bool = False
) -> str:
    """A change of one match: its id, version and status, and who is to move, by name; with
    ``cut``, that the next hand's cut is due and who cuts (the seat ``to_act`` names)."""
    status = {1: "waiting", 2: "playing", 3: "finished"}.get(change.status, "?")
    line = f"{change.match_id[:8]} version {change.version} {status}"
    if change.HasField("to_act"):
        me = summary.my_seat if summary is not None and summary.HasField("my_seat") else None
        what = "first hand" if change.version == 0 else "next hand"
        if change.to_act == me:
            if cut:
                return f"{line} - your cut for the {what}: canasta deal {change.match_id[:8]}"
            return f"{line} - your turn"
        names = SeatNames(summary.seats if summary is not None else (), me)
        line += (
            f" - {names.full(change.to_act)} to cut for the {what}"
            if cut
            else f" - {names.full(change.to_act)} to move"
        )
    return line


# -- the log --------------------------------------------------------------------------------------


def render_history(
    history: pb.GetHistoryResponse,
    *,
    viewer_seat: int | None,
    color: bool,
    results: Mapping[int, pb.HandResult] | None = None,
    talk: Sequence[pb.TalkEntry] = (),
) -> str:
    """The match log: one line per move (seq, who, the actions, what they caused), hands marked,
    and the table talk (``talk``) at the move it was said after.

    Hand boundaries carry the hand's commit-reveal record in brief (the first 8 bytes of the
    commitment and, once revealed, of the secret); each hand that is over ends with its scores
    when ``results`` has them (the client's replay of the record, ``shared.transcript``).
    """
    results = results or {}
    names = SeatNames(history.seats, viewer_seat)
    hands = {h.hand_number: h for h in history.hands}
    lines = [paint(f"Match {history.match_id}: {plural(history.version, 'move')}", "bold", color)]
    current = -1
    shown_hands: set[int] = set()
    said: dict[int, list[str]] = {}
    for item in talk:
        said.setdefault(item.at_seq, []).append(_talk_line(item, names, viewer_seat))
    lines += said.pop(0, [])
    for entry in history.entries:
        if entry.hand_number != current:
            if current in results:
                lines += hand_result_rows(results[current], viewer_seat, names, full=True)
            current = entry.hand_number
            shown_hands.add(current)
            lines.append(paint(_hand_title(current, hands.get(current)), "bold", color))
        lines += _entry_lines(entry, names, color)
        lines += said.pop(entry.seq, [])
    if current in results:
        lines += hand_result_rows(results[current], viewer_seat, names, full=True)
    for position in sorted(said):  # said after moves this history does not show
        lines += said[position]
    for number in sorted(set(hands) - shown_hands):
        if not history.more and hands[number].deal_seq == 0:
            lines.append(_hand_title(number, hands[number]) + " (not dealt yet)")
    if history.more and history.entries:
        lines.append(f"... more after #{history.entries[-1].seq}")
    return "\n".join(lines)


def _talk_line(item: pb.TalkEntry, names: SeatNames, viewer_seat: int | None) -> str:
    """``      > ann (seat 0) says: good luck``: table talk under the move it followed (only
    printable text is shown, whatever the server sent)."""
    text = "".join(c if c.isprintable() else "\ufffd" for c in item.text)
    mine = item.seat == viewer_seat
    if item.kind == "conventions":
        verb = "declare your side's conventions" if mine else "declares their side's conventions"
    else:
        verb = "say" if mine else "says"
    return f"      > {names.full(item.seat)} {verb}: {text}"


def _hand_title(number: int, record: pb.HandRecord | None) -> str:
    if number == 0:
        return "-- Before the first hand --"
    title = f"-- Hand {number}"
    if record is not None and record.commitment:
        title += f": commitment {record.commitment[:8].hex()}"
        title += (
            f", secret {record.secret[:8].hex()}" if record.secret else ", secret not yet revealed"
        )
    return title + " --"


def _entry_lines(entry: pb.HistoryEntry, names: SeatNames, color: bool) -> list[str]:
    """``#12  bob (seat 1): discard 9c -> bob discarded 9c`` wrapped under the move."""
    who = names.full(entry.seat) if entry.seat >= 0 else "server"
    if entry.played_by_bot and not names.is_bot(entry.seat):
        who += " [played by a bot]"
    elif entry.standing_order:  # the server moved under the player's own standing order
        who += " [standing order, server-attested]"
    elif entry.server_attested:  # a mailed reply: the server signed it for the player
        who += " [by mail reply, server-attested]"
    actions = "; ".join(
        "cut and deal" if a == _DEAL else _action_text(a, color) for a in entry.actions
    )
    events = []
    dealing = list(entry.actions) == [_DEAL]  # everybody's events: keep every subject
    for event in entry.events:
        own = event.seat == entry.seat and not dealing
        if own and (
            event.kind in _SAID_BY_ACTION
            or (event.kind == "draw" and not event.cards and not event.private_cards)
        ):
            continue
        text = describe_event(event, names, color)
        subject = names.short(event.seat) + " "
        if own and event.kind != "deal" and text.startswith(subject):
            text = text[len(subject) :]
        events.append(text)
    parts = [f"{who}: {actions or '(no actions)'}"]
    if events:
        parts[-1] += " ->"
        parts += [e + ";" for e in events[:-1]] + events[-1:]
    return wrap(parts, first=f"#{entry.seq:<4} ", indent=" " * 6, sep=" ", width=WIDTH)


def _action_text(text: str, color: bool) -> str:
    """An action as typed, with its card words shown as cards in colour mode."""
    if not color:
        return text
    from shared.textstyle import split_card

    words = []
    for word in text.split(" "):
        bare = word.rstrip(",")
        if split_card(bare)[1] or bare == "jk":
            words.append(card(bare, color) + word[len(bare) :])
        else:
            words.append(word)
    return " ".join(words)


# -- JSON -----------------------------------------------------------------------------------------


def message_json(message: Message) -> str:
    """What every ``--json`` prints: the message in protobuf's JSON mapping, made stable.

    Field names as in the .proto (``pile_top``, not ``pileTop``), every field present even at
    its default (scripts need not guess), keys sorted, indent 2. Bytes are base64 as the proto3
    JSON mapping says (so ``json_format.Parse`` reads the output back); 64-bit integers are
    strings, by the same mapping. Enum values are their names (``PHASE_DRAW``).
    """
    import json

    from google.protobuf import json_format

    data = json_format.MessageToDict(
        message,
        preserving_proto_field_name=True,
        always_print_fields_with_no_presence=True,
    )
    return json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False)
