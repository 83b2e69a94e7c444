"""Text for people (and scripts) from the server's messages: the table, the match list, the log.

Every function returns a ``str`` without a trailing newline and never prints, so commands stay
one line of I/O and tests can compare text. With ``color=False`` the output is ASCII only, with
cards exactly as players type them; with ``color=True`` it adds ANSI colours and suit symbols
(see ``client.style``). Decide once per command with ``use_color``.

Nothing here imports grpc, and the generated protobuf code is imported only inside the
functions that need its constants: the caller already holds a message, so the import is free
then, and ``canasta --help`` never pays for it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from client.style import card, cards, group_hand, paint, use_color, wrap

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

WIDTH = 80
"""The table fits a classic terminal."""
_LABEL = 10
"""Width of the label column of the table ("Score", "Pile"...)."""

COMMANDS: dict[str, tuple[str, str]] = {
    "draw": ("draw", "canasta draw"),
    "pickup": ("take the pile", "canasta take ..."),
    "meld": ("meld", "canasta meld ..."),
    "lay": ("lay off", "canasta lay ..."),
    "combine": ("combine melds", 'canasta play "combine 9 9#2"'),
    "ask": ("ask partner", "canasta ask"),
    "answer": ("answer", "canasta answer yes|no"),
    "discard": ("discard", "canasta discard CARD"),
    "pass": ("pass", "canasta pass"),
    "deal": ("cut and deal", "canasta deal"),
}
"""Legal action kind -> (words, command hint). The hints name the CLI's commands; keep them in
step with ``client.main`` (a test there can check every hint's command exists)."""

_CANASTA_LABELS = {
    "samba": "samba",
    "escalera": "escalera",
    "bolivia": "bolivia",
    "natural_aces": "natural aces canasta",
    "natural_sevens": "natural sevens canasta",
    "wild": "wild canasta",
    "wild_jokers": "four-joker wild canasta",
    "wild_twos": "wild canasta of twos",
}
"""Canastas with a bonus of their own, by the engine's name for them (docs/rules.md §3.4-§3.6);
the wire says which kind a meld is, so the table never guesses it from the cards."""

_REASONS = {
    "went_out": "went out",
    "red3_last_card": "a red three was the last card of the stock",
    "stock_out_no_take": "the stock ran out and the pile was not taken",
    "stock_exhausted": "the stock ran out",
}
_MOVE_KINDS = frozenset({"draw", "take", "meld", "layoff", "discard", "ask", "answer", "out"})
_DEAL = "deal"
"""The move that cuts and deals a hand (``shared.wire.DEAL_ACTION``; not imported: it loads the
engine)."""
_SAID_BY_ACTION = frozenset({"meld", "layoff", "discard", "ask", "answer"})
"""Events the history leaves out: the mover's action text already says the same."""
_RECENT = 40
"""At most this many events since the viewer's last move are repeated on the table (more only
when the viewer was away for many turns; the history has them all, and the table says so)."""


# -- names ---------------------------------------------------------------------------------------


class _Names:
    """Seat numbers -> what to call them, relative to the viewer (``you``, ``partner``)."""

    def __init__(
        self, seats: Sequence[pb.SeatInfo], me: int | None, partners: Sequence[int] = ()
    ) -> None:
        self.info = {s.seat: s for s in seats}
        self.me = me
        self.partners = frozenset(partners) - {me}

    def short(self, seat: int) -> str:
        """``you``, the display name, or ``seat N`` for an empty or unknown seat."""
        if seat == self.me:
            return "you"
        return self.name(seat)

    def name(self, seat: int) -> str:
        """The display name regardless of who is looking."""
        info = self.info.get(seat)
        return info.display_name if info is not None and info.display_name else f"seat {seat}"

    def full(self, seat: int) -> str:
        """A name with its seat number and relation: ``carol (seat 2, your partner)``."""
        if seat == self.me:
            return f"you (seat {seat})"
        relation = ", your partner" if seat in self.partners else ""
        return f"{self.name(seat)} (seat {seat}{relation})"

    def group(self, seats: Sequence[int]) -> str:
        """Several seats as one label, the viewer first: ``you+carol``."""
        ordered = sorted(seats, key=lambda s: (s != self.me, s))
        return "+".join(self.short(s) for s in ordered)

    def is_bot(self, seat: int) -> bool:
        from shared.pb import canasta_pb2 as pb

        info = self.info.get(seat)
        return info is not None and info.kind == pb.SEAT_KIND_BOT


def _columns(
    seats: Sequence[pb.SeatInfo], count: int, sides: Sequence[pb.SideView]
) -> list[list[int]]:
    """The seats of each score column: from the seats' sides, else from the hand's sides."""
    columns: list[list[int]] = [[] for _ in range(count)]
    for info in sorted(seats, key=lambda s: s.seat):
        if 0 <= info.side < count:
            columns[info.side].append(info.seat)
    if not all(columns) and len(sides) == count:
        columns = [list(sv.seats) for sv in sides]
    return columns


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _row(label: str, text: str) -> str:
    return f"{label:<{_LABEL}}{text}".rstrip()


def _rows(label: str, parts: Sequence[str], sep: str) -> list[str]:
    """A labelled row whose parts wrap under the text column (widths ignore colour codes)."""
    return wrap(parts, first=f"{label:<{_LABEL}}", indent=" " * _LABEL, sep=sep, width=WIDTH)


# -- events ---------------------------------------------------------------------------------------


def describe_event(event: pb.Event, names: _Names, color: bool) -> str:
    """One event in words: ``bob discarded 9c``; private cards only where the server sent them."""
    who = names.short(event.seat)
    shown = cards(event.cards, color)
    private = cards(event.private_cards, color)
    kind = event.kind
    if kind == "deal":
        count = event.text.removeprefix("dealt ") or "their cards"
        return f"{who} got {private}" if private else f"{who} got {count}"
    if kind == "upcard":
        return f"{who} turned up {shown}"
    if kind == "red3":
        text = f"{who} laid out {shown}"
        return f"{text} and drew {private}" if private else text
    if kind == "draw":
        text = f"{who} drew {private}" if private else f"{who} drew"
        return f"{text}, laid out {shown}" if shown else text
    if kind == "take":
        top = card(event.cards[0], color) if event.cards else "?"
        pile = len(event.cards) - _from_hand(event.text)
        return f"{who} took the pile ({_plural(pile, 'card')}, top {top})"
    if kind == "meld":
        return f"{who} melded {shown}"
    if kind == "layoff":
        return f"{who} laid off {shown}"
    if kind == "discard":
        return f"{who} discarded {shown}"
    if kind == "out":
        return f"{who} {event.text or 'went out'}"
    if kind == "ask":
        return f"{who} asked: may I go out?"
    if kind == "answer":
        return f"{who} answered {event.text.removeprefix('answer ') or '?'}"
    if kind == "end":
        return f"hand over: {_REASONS.get(event.text, event.text)}"
    if kind == "resign":
        return f"{who} resigned the match"
    if kind == "foot":  # Hand and Foot: the cards only to the foot's owner
        return f"{who} {event.text}: {private}" if private else f"{who} {event.text}"
    extra = " ".join(x for x in (shown, private, event.text) if x)
    return f"{who} {kind} {extra}".rstrip()


def _from_hand(text: str) -> int:
    """How many of a take event's cards came from the taker's hand (the engine's text says
    ``"2 from hand"``); the rest were the pile, its top first."""
    count = text.split(" ", 1)[0]
    return int(count) if count.isdigit() and text.endswith(" from hand") else 0


def _moved_this_hand(view: pb.PlayerView) -> bool:
    """Whether the viewer (or a bot playing for them) has made a move in this hand yet."""
    return any(e.seat == view.seat and e.kind in _MOVE_KINDS for e in view.events)


def _recent(view: pb.PlayerView, names: _Names, color: bool) -> list[str]:
    """Everything that happened since the viewer's own last move this hand (dealing left out).

    A player who comes back after others' turns must not miss any of them: all are shown,
    and only past ``_RECENT`` events (someone away for a long time) are the oldest left out,
    saying how many and where they are.
    """
    events = list(view.events)
    start = 0
    for index, event in enumerate(events):
        if event.seat == view.seat and event.kind in _MOVE_KINDS:
            start = index + 1
    news = [e for e in events[start:] if e.kind != "deal"]
    if not news:
        return []
    parts = [describe_event(e, names, color) + ";" for e in news[-_RECENT:]]
    if len(news) > _RECENT:
        left_out = len(news) - _RECENT
        parts.insert(0, f"({_plural(left_out, 'earlier event')} in `canasta history`)")
    return _rows("Recent", parts, " ")


# -- the table ------------------------------------------------------------------------------------


def render_table(view: pb.MatchView, *, color: bool) -> str:
    """The whole table as the viewer may see it, with what they may do now at the bottom."""
    from shared.pb import canasta_pb2 as pb

    v = view.view
    match = view.match
    me = v.seat
    mine = next((sv for sv in v.sides if sv.side == v.my_side), None)
    names = _Names(match.seats, me, list(mine.seats) if mine is not None else ())
    in_hand = v.phase in (pb.PHASE_DRAW, pb.PHASE_PLAY, pb.PHASE_ANSWER)

    lines = [_header(view, color)]
    lines += _score_rows(view, names, color)
    if in_hand or any(v.hand_counts):
        lines += _seat_rows(v, names, color)
    if in_hand:
        lines.append(_row("Stock", _plural(v.stock_size, "card")))
        if v.talon:  # Modern American's bonus cards, face down (docs/rules.md §3.6)
            packets = " + ".join(str(n) for n in v.talon if n)
            lines.append(_row("Talon", f"{packets} bonus cards set aside" if packets else "drawn"))
        lines += _pile_rows(v, color)
    for sv in sorted(v.sides, key=lambda s: (s.side != v.my_side, s.side)):
        if in_hand or sv.melds or sv.red_threes:
            lines += _side_rows(v, sv, names, color)
    if v.hand:
        lines += _hand_rows(v, color)
    # The last hand's result until the viewer's first move of the new hand; then `history`.
    shown = not in_hand or not _moved_this_hand(v)
    if v.HasField("last_hand") and v.last_hand.hand_number and shown:
        lines += hand_result_rows(v.last_hand, v.seat, names, full=not in_hand)
    if in_hand:
        lines += _recent(v, names, color)
    lines += _status_rows(view, names, color)
    clock = clock_text(view.match, names)
    if clock:
        lines.append(clock)
    lines += [_cover_text(seat, names) for seat in view.match.seats if seat.covered]
    if view.match.aborted:
        lines.append(f"This match was {aborted_text(view.match)}.")
    lines += [
        f"{names.full(s.seat)} asks to abandon the match: `canasta abort` agrees"
        for s in view.match.seats
        if s.abort_asked and s.seat != names.me and not view.match.aborted
    ]
    lines += [
        f"{'You are' if s.seat == names.me else names.full(s.seat) + ' is'} on vacation: "
        "the clock stands still"
        for s in view.match.seats
        if s.on_vacation
    ]
    lines += [
        f"{'You take' if s.seat == names.me else names.full(s.seat) + ' takes'} moves by mail "
        "reply: the server signs those (server-attested; `canasta history` marks each)"
        for s in view.match.seats
        if s.reply_moves
    ]
    return "\n".join(lines)


_COVERS = {
    "timeout": "their turn ran out",
    "asked": "at their request",
    "forfeit": "their turn ran out; the bot resigns for them",
}


def _cover_text(seat: pb.SeatInfo, names: _Names) -> str:
    """``A bot plays for you (your turn ran out): canasta cover off to play again``."""
    reason = _COVERS.get(seat.covered, seat.covered)
    if seat.seat == names.me:
        reason = reason.replace("their", "your")
        return f"A bot plays for you ({reason}): `canasta cover off` to play again"
    return f"A bot plays for {names.full(seat.seat)} ({reason})"


def clock_text(match: pb.MatchSummary, names: _Names, now_ms: int | None = None) -> str:
    """The match's clock in one line: whose turn is timed, when it is due (in this machine's
    local time), the time and bank left, and the time control; empty without a clock."""
    control = match.time_control
    if not control.days_per_move:
        return ""
    rules = f"{control.days_per_move} day{'s' if control.days_per_move > 1 else ''} a move"
    if control.bank_days:
        rules += f" + {control.bank_days} days' bank"
    if control.weekends_off:
        rules += ", weekends off"
    rules += f", on timeout: {control.on_timeout or 'substitute'}"
    if not match.HasField("clock"):
        return f"Clock: {rules}"
    who = "your move" if match.my_turn else f"{names.name(match.clock.seat)} to move"
    return f"Clock: {who}, {_due(match, now_ms)} ({rules})"


def _due(match: pb.MatchSummary, now_ms: int | None = None) -> str:
    """``due Thu 14:00, 2d 3h left; bank 3d``: the timed turn's deadline as a player reads it."""
    import time

    now = time.time_ns() // 1_000_000 if now_ms is None else now_ms
    due = match.clock.due_at_ms
    when = time.strftime("%a %d %b %H:%M", time.localtime(due / 1000))
    text = f"due {when}, {_duration(due - now)} left" if due > now else f"overdue since {when}"
    if match.time_control.bank_days and match.clock.seat < len(match.seats):
        text += f"; bank {_duration(match.seats[match.clock.seat].bank_ms)}"
    return text


def _duration(ms: int) -> str:
    """``2d 3h``, ``5h 20m``, ``12m``."""
    days, rest = divmod(max(0, ms), 86_400_000)
    hours, rest = divmod(rest, 3_600_000)
    if days:
        return f"{days}d {hours}h"
    if hours:
        return f"{hours}h {rest // 60_000}m"
    return f"{rest // 60_000}m"


def _header(view: pb.MatchView, color: bool) -> str:
    v = view.view
    parts = [f"Match {view.match.match_id or '?'}", v.preset or view.match.preset]
    if v.hands_per_match:  # Hand and Foot: a fixed number of hands, highest total wins
        parts.append(f"hand {v.hand_number} of {v.hands_per_match}")
    else:
        if v.hand_number:
            parts.append(f"hand {v.hand_number}")
        parts.append(f"target {v.target or view.match.target}")
    return paint("  ".join(p for p in parts if p), "bold", color)


def _score_rows(view: pb.MatchView, names: _Names, color: bool) -> list[str]:
    """Each score column (the viewer's first) with its initial-meld minimum this hand."""
    v = view.view
    scores = list(v.scores) or list(view.match.scores)
    if not scores:
        return []
    columns = _columns(view.match.seats, len(scores), v.sides)
    parts = []
    for index in sorted(range(len(scores)), key=lambda i: (v.seat not in columns[i], i)):
        text = f"{names.group(columns[index]) or f'side {index}'}: {scores[index]}"
        if index < len(v.minimums) and v.phase != _phase("PHASE_MATCH_OVER"):
            text += f" (opens with {v.minimums[index]})"
        if v.seat in columns[index]:
            text = paint(text, "bold", color)
        parts.append(text)
    return _rows("Score", parts, "   ")


def _phase(name: str) -> int:
    from shared.pb import canasta_pb2 as pb

    return int(pb.Phase.Value(name))


def _seat_rows(v: pb.PlayerView, names: _Names, color: bool) -> list[str]:
    """Every seat with its number of cards in hand, the viewer and partners marked."""
    parts = []
    for seat, count in enumerate(v.hand_counts):
        tags = []
        if seat == v.seat:
            tags.append("you")
        elif seat in names.partners:
            tags.append("partner")
        if names.is_bot(seat):
            tags.append("bot")
        if seat == v.dealer:
            tags.append("dealer")
        label = names.name(seat) + (f" ({', '.join(tags)})" if tags else "")
        text = f"{seat} {label}: {count}"
        if seat < len(v.foot_sizes):  # Hand and Foot: the foot is face down, even for its owner
            foot = v.foot_sizes[seat]
            text += f" + foot {foot} face down" if foot else " (on the foot)"
        if v.HasField("actor") and v.actor == seat:
            text = paint(text, "bold", color)
        parts.append(text)
    return _rows("In hand", parts, " | ")


def _pile_rows(v: pb.PlayerView, color: bool) -> list[str]:
    if not v.pile_size:
        return [_row("Pile", "empty")]
    top = card(v.pile_top, color) if v.HasField("pile_top") else "?"
    parts = [f"{top} on top, {_plural(v.pile_size, 'card')}"]
    if v.pile_frozen or v.frozen_reason:
        parts.append(
            paint("FROZEN", "alert", color) + (f": {v.frozen_reason}" if v.frozen_reason else "")
        )
    if v.pile_blocked:
        parts.append(
            paint("BLOCKED", "alert", color) + ": a black three is on top, nobody may take it"
        )
    return _rows("Pile", [p + "," for p in parts[:-1]] + parts[-1:], " ")


def _side_rows(v: pb.PlayerView, sv: pb.SideView, names: _Names, color: bool) -> list[str]:
    """A side's header (opened, canastas, red threes) and one line per meld."""
    from shared.pb import canasta_pb2 as pb

    ours = sv.side == v.my_side
    seats = names.group(sv.seats)
    if len(v.sides) == 2 and ours:
        title = "You" if seats == "you" else f"Us ({seats})"
    elif len(v.sides) == 2:
        title = f"Them ({seats})"
    else:
        title = f"Side {sv.side} ({seats})"
    facts = []
    books = bool(v.clean_books_to_go_out or v.dirty_books_to_go_out)  # Hand and Foot (§3.7)
    if sv.opened and books:
        need = (
            f"{v.canastas_to_go_out} to go out, {v.clean_books_to_go_out} clean, "
            f"{v.dirty_books_to_go_out} dirty"
        )
        facts.append(f"{_plural(sv.canastas, 'book')} ({need})")
    elif sv.opened:
        facts.append(f"{_plural(sv.canastas, 'canasta')} ({v.canastas_to_go_out} needed to go out)")
    else:
        facts.append("not opened")
    threes = "threes" if v.talon else "red threes"  # Modern American lays out both colours
    if sv.red_threes and (books or (len(sv.red_threes) > 4 and not v.talon)):
        facts.append(_plural(len(sv.red_threes), "red three"))  # Hand and Foot has ten
    else:
        facts.append(f"{threes} {cards(sv.red_threes, color)}" if sv.red_threes else f"no {threes}")
    lines = [paint(title, "bold", color) + ": " + ", ".join(facts)]
    for meld in sv.melds:
        # A sequence (Samba, Bolivia) is named by its range and shown joined: 4h-5h-6h.
        sequence = meld.kind == pb.MELD_KIND_SEQUENCE
        shown = "-".join(card(c, color) for c in meld.cards) if sequence else None
        text = f"  {meld.rank:>2} x{len(meld.cards)}: {shown or cards(meld.cards, color)}"
        if meld.canasta_kind != pb.CANASTA_KIND_NONE:
            special = _CANASTA_LABELS.get(meld.canasta)
            label = f"[{special or meld.canasta + ' canasta'}]"
            if books:  # Hand and Foot's words (§3.7)
                natural = meld.canasta_kind == pb.CANASTA_KIND_NATURAL
                label = "[clean book]" if natural else "[dirty book]"
                if meld.canasta_kind == pb.CANASTA_KIND_BOLIVIA:
                    label = "[wild book]"  # allow_wild_melds: seven wild cards (a dirty kind)
            good = meld.canasta_kind == pb.CANASTA_KIND_NATURAL or special is not None
            text += "  " + paint(label, "good" if good else "cyan", color)
        lines.append(text)
    return lines


def _hand_rows(v: pb.PlayerView, color: bool) -> list[str]:
    """The viewer's hand sorted and grouped by rank, each group with its count."""
    parts = []
    for group, members in group_hand(list(v.hand)):
        text = cards(members, color)
        if group == "wild":
            text += paint(f" ({len(members)} wild)", "dim", color)
        elif len(members) > 1:
            text += paint(f" ({len(members)})", "dim", color)
        parts.append(text)
    title = paint(f"Your hand ({_plural(len(v.hand), 'card')})", "bold", color)
    return [f"{title}:", *wrap(parts, first="  ", indent="  ", sep=" | ", width=WIDTH)]


def hand_result_rows(
    result: pb.HandResult, seat: int | None, names: _Names, *, full: bool
) -> list[str]:
    """How a hand ended and what each column scored (``full``: broken down), the viewer's
    column first."""
    how = _REASONS.get(result.reason, result.reason)
    if result.reason == "went_out" and result.HasField("went_out"):
        how = f"{names.short(result.went_out)} went out"
        how += " concealed" if result.concealed else ""
    columns = sorted(result.columns, key=lambda c: (seat not in c.seats, c.column))
    totals = [f"{names.group(c.seats)}: {c.hand_total:+d} = {c.cumulative}" for c in columns]
    lines = _rows(
        f"Hand {result.hand_number}",
        [f"{how};", *[t + "," for t in totals[:-1]], *totals[-1:]],
        " ",
    )
    if full:
        for c in columns:
            parts = [
                f"melds {c.meld_points},",
                f"canastas {c.canasta_bonus},",
                f"red threes {c.red_three_points},",
            ]
            if c.black_threes:  # Modern American scores each colour apart (§3.6)
                parts.append(f"black threes {c.black_three_points},")
            if c.special_penalty:
                parts.append(f"penalties {-c.special_penalty},")
            parts += [f"going out {c.going_out_bonus},", f"in hand {-c.hand_penalty}"]
            lines += wrap(parts, first=f"  {names.group(c.seats)}: ", indent="    ", sep=" ")
    return lines


def _status_rows(view: pb.MatchView, names: _Names, color: bool) -> list[str]:
    """Whose move it is and, when it is the viewer's, what they may do and how."""
    from shared.pb import canasta_pb2 as pb

    v = view.view
    match = view.match
    me = v.seat
    if match.status == pb.MATCH_STATUS_WAITING:
        taken = sum(1 for s in match.seats if s.kind != pb.SEAT_KIND_EMPTY)
        text = f"Waiting for players: {taken} of {match.players or v.players} seats taken"
        if match.invite_code:
            text += f"; invite code {match.invite_code}"
        return [paint(text, "yellow", color)]
    if v.phase == pb.PHASE_MATCH_OVER:
        return [paint(_winners_text(v, view.match.seats, names), "good", color)]
    if v.phase == pb.PHASE_DEAL:
        cutter = view.dealing_seat if view.HasField("dealing_seat") else None
        if cutter is None and match.HasField("to_act") and match.status == pb.MATCH_STATUS_PLAYING:
            cutter = match.to_act
        number = v.hand_number + 1
        if cutter is None:
            return [f"Waiting for hand {number} to be dealt"]
        if cutter == me:
            return [
                paint(
                    f"Your move: cut and deal hand {number} ({COMMANDS['deal'][1]})", "good", color
                )
            ]
        return [f"Waiting for {names.full(cutter)} to cut and deal hand {number}"]
    actor = v.actor if v.HasField("actor") else None
    lines: list[str] = []
    if v.phase == pb.PHASE_ANSWER:
        asker = v.turn
        if actor == me:
            lines.append(
                paint(f"{names.name(asker)} asks: may I go out? Your answer binds.", "good", color)
            )
        elif asker == me:
            partner = names.full(actor) if actor is not None else "your partner"
            lines.append(f"Waiting for {partner} to answer: may you go out?")
            return lines
    if actor is None:
        return lines or ["Nobody is to move"]
    if actor != me:
        doing = {pb.PHASE_DRAW: "draw", pb.PHASE_PLAY: "play", pb.PHASE_ANSWER: "answer"}
        lines.append(f"Waiting for {names.full(actor)} to {doing.get(v.phase, 'move')}")
        return lines
    if v.HasField("permission"):
        if v.permission == "yes":
            lines.append(paint("Partner said yes: you must go out this turn.", "alert", color))
        elif v.permission == "no":
            lines.append("Partner said no: you may not go out this turn.")
    if v.must_go_out and v.permission != "yes":
        lines.append(paint("You must go out this turn.", "alert", color))
    choices = [f"{COMMANDS[k][0]} ({COMMANDS[k][1]})" for k in v.legal if k in COMMANDS]
    choices += [k for k in v.legal if k not in COMMANDS]
    if not choices:
        lines.append(paint("Your turn", "good", color))
        return lines
    joined = (
        [c + "," for c in choices[:-2]]
        + ([f"{choices[-2]} or"] if len(choices) > 1 else [])
        + choices[-1:]
    )
    lines += wrap(
        joined, first=paint("Your turn: ", "good", color), indent="  ", sep=" ", width=WIDTH
    )
    if v.phase == pb.PHASE_PLAY:
        lines.append('  or the rest of the turn at once: canasta play "meld ...; discard ..."')
    return lines


def status_text(view: pb.MatchView) -> str:
    """Whose move it is and what they do, in one plain line (``Waiting for bob (seat 1) to
    draw``), for messages that explain why a move was not sent."""
    v = view.view
    mine = next((sv for sv in v.sides if sv.side == v.my_side), None)
    names = _Names(view.match.seats, v.seat, list(mine.seats) if mine is not None else ())
    return " ".join(" ".join(_status_rows(view, names, False)).split())


def changes_text(entries: Sequence[pb.HistoryEntry], view: pb.MatchView, *, color: bool) -> str:
    """The log entries since the viewer last looked, one line each as in ``canasta history``."""
    names = _Names(view.match.seats, view.view.seat)
    lines = [line for entry in entries for line in _entry_lines(entry, names, color)]
    return "\n".join(lines)


def _winners_text(v: pb.PlayerView, seats: Sequence[pb.SeatInfo], names: _Names) -> str:
    columns = _columns(seats, len(v.scores), v.sides)
    final = ", ".join(
        f"{names.group(columns[i]) if i < len(columns) else f'side {i}'}: {score}"
        for i, score in enumerate(v.scores)
    )
    winners = [names.group(columns[w]) if w < len(columns) else f"side {w}" for w in v.winners]
    if not winners:
        return f"Match over ({final})"
    if len(winners) > 1:
        return f"Match over, drawn between {' and '.join(winners)} ({final})"
    return f"Match over: {winners[0]} won ({final})"


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
    names = _Names(m.seats, me)
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
        columns = _columns(m.seats, len(m.scores), ())
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
            parts.append(_due(m))
    if m.scores and m.status != pb.MATCH_STATUS_WAITING:
        columns = _columns(m.seats, len(m.scores), ())
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
    "partner_asks": "canasta answer yes|no --match {match}",
    "hand_ended": "canasta show {match}",
    "match_ended": "canasta history {match}",
}
"""What to run after a notification of each kind, when its text names no command itself."""


def notification_line(note: pb.WatchNotification) -> str:
    """One of the player's notifications: what happened, in which match (the text says), and
    the command to run next."""
    text = " ".join(note.text.split()) or f"{note.kind.replace('_', ' ')} (match {note.match_id})"
    command = _NEXT_COMMAND.get(note.kind, "")
    if command and note.match_id and "canasta " not in text:
        text += f" Next: {command.format(match=note.match_id[:8])}"
    return text


def watch_line(change: pb.WatchResponse, summary: pb.MatchSummary | None) -> str:
    """A change of one match: its id, version and status, and who is to move, by name."""
    status = {1: "waiting", 2: "playing", 3: "finished"}.get(change.status, "?")
    line = f"{change.match_id[:8]} version {change.version} {status}"
    if change.HasField("to_act"):
        me = summary.my_seat if summary is not None and summary.HasField("my_seat") else None
        if change.to_act == me:
            return f"{line} - your turn"
        names = _Names(summary.seats if summary is not None else (), me)
        line += f" - {names.full(change.to_act)} to move"
    return line


# -- the log --------------------------------------------------------------------------------------


def render_history(
    history: pb.GetHistoryResponse,
    *,
    viewer_seat: int | None,
    color: bool,
    results: Mapping[int, pb.HandResult] | None = None,
) -> str:
    """The match log: one line per move (seq, who, the actions, what they caused), hands marked.

    Hand boundaries carry the hand's commit-reveal record in brief (the first 8 bytes of the
    commitment and, once revealed, of the secret); each hand that is over ends with its scores
    when ``results`` has them (the client's replay of the record, ``shared.transcript``).
    """
    results = results or {}
    names = _Names(history.seats, viewer_seat)
    hands = {h.hand_number: h for h in history.hands}
    lines = [paint(f"Match {history.match_id}: {_plural(history.version, 'move')}", "bold", color)]
    current = -1
    shown_hands: set[int] = set()
    for entry in history.entries:
        if entry.hand_number != current:
            if current in results:
                lines += hand_result_rows(results[current], viewer_seat, names, full=True)
            current = entry.hand_number
            shown_hands.add(current)
            lines.append(paint(_hand_title(current, hands.get(current)), "bold", color))
        lines += _entry_lines(entry, names, color)
    if current in results:
        lines += hand_result_rows(results[current], viewer_seat, names, full=True)
    for number in sorted(set(hands) - shown_hands):
        if not history.more and hands[number].deal_seq == 0:
            lines.append(_hand_title(number, hands[number]) + " (not dealt yet)")
    if history.more and history.entries:
        lines.append(f"... more after #{history.entries[-1].seq}")
    return "\n".join(lines)


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


def _entry_lines(entry: pb.HistoryEntry, names: _Names, color: bool) -> list[str]:
    """``#12  bob (seat 1): discard 9c -> bob discarded 9c`` wrapped under the move."""
    who = names.full(entry.seat) if entry.seat >= 0 else "server"
    if entry.played_by_bot and not names.is_bot(entry.seat):
        who += " [played by a bot]"
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
    from client.style import split_card

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


def aborted_text(match: pb.MatchSummary) -> str:
    """How an abandoned match ended: players may abandon one only before its first deal, so
    one abandoned later was ended by the server's operator."""
    if match.version == 0:
        return "abandoned before its first deal"
    return "ended by the server's operator"
