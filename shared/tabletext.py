"""The table as text: what ``canasta show`` prints and what every mail that shows a table holds.

One renderer for both (issue 28): the CLI renders the ``MatchView`` the server sent it; the
server renders, for a mail, the very ``MatchView`` its GetView would send that recipient, so a
mailed table and a piped ``canasta show`` never differ in content. Everything comes from that
message, which holds only what the viewer's own ``player_view`` shows.

Every function returns a ``str`` (or lines) without a trailing newline and never prints. With
``color=False`` the text is ASCII only, within ``WIDTH`` columns, with cards exactly as players
type them; with ``color=True`` it adds ANSI colours and suit symbols (``shared.textstyle``).
Times are shown in ``tz`` (the machine's local time unless given: a mail uses the recipient's
time zone) and measured from ``now_ms`` (the clock's now unless given).

Nothing here imports grpc or the engine, and the generated protobuf code is imported only
inside the functions that need its constants: the caller already holds a message, so the
import is free then, and ``canasta --help`` never pays for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING

from shared.textstyle import card, cards, group_hand, paint, wrap

if TYPE_CHECKING:
    from shared.pb import canasta_pb2 as pb

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

CANASTA_LABELS = {
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
_RECENT = 40
"""At most this many events since the viewer's last move are repeated on the table (more only
when the viewer was away for many turns; the history has them all, and the table says so)."""


# -- names ---------------------------------------------------------------------------------------


class SeatNames:
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

    def bot_level(self, seat: int) -> str:
        """The level of the bot that plays ``seat`` (``easy``, ``normal``, ``strong``), or
        ``""`` (no bot, or a server that does not say)."""
        info = self.info.get(seat)
        return info.bot_level if info is not None else ""

    def is_bot(self, seat: int) -> bool:
        from shared.pb import canasta_pb2 as pb

        info = self.info.get(seat)
        return info is not None and info.kind == pb.SEAT_KIND_BOT


def score_columns(
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


def plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _row(label: str, text: str) -> str:
    return f"{label:<{_LABEL}}{text}".rstrip()


def _rows(label: str, parts: Sequence[str], sep: str) -> list[str]:
    """A labelled row whose parts wrap under the text column (widths ignore colour codes)."""
    return wrap(parts, first=f"{label:<{_LABEL}}", indent=" " * _LABEL, sep=sep, width=WIDTH)


# -- events ---------------------------------------------------------------------------------------


def describe_event(event: pb.Event, names: SeatNames, color: bool) -> str:
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
        return f"{who} took the pile ({plural(pile, 'card')}, top {top})"
    if kind == "meld":
        return f"{who} melded {_melds(event, color)}"
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


def _melds(event: pb.Event, color: bool) -> str:
    """A meld event's cards, each meld apart when one action made several (the engine's text
    gives their sizes, ``3+3``): ``7h 7c 2s and ks kh kd``."""
    sizes = [int(n) for n in event.text.split("+") if n.isdigit()]
    if len(sizes) < 2 or sum(sizes) != len(event.cards):
        return cards(event.cards, color)
    groups, start = [], 0
    for size in sizes:
        groups.append(cards(event.cards[start : start + size], color))
        start += size
    return ", ".join(groups[:-1]) + " and " + groups[-1]


def _from_hand(text: str) -> int:
    """How many of a take event's cards came from the taker's hand (the engine's text says
    ``"2 from hand"``); the rest were the pile, its top first."""
    count = text.split(" ", 1)[0]
    return int(count) if count.isdigit() and text.endswith(" from hand") else 0


def _moved_this_hand(view: pb.PlayerView) -> bool:
    """Whether the viewer (or a bot playing for them) has made a move in this hand yet."""
    return any(e.seat == view.seat and e.kind in _MOVE_KINDS for e in view.events)


def needs_earlier_events(view: pb.MatchView) -> bool:
    """Whether the table of ``view`` depends on events it does not carry: a Submit's reply
    that carries only the events the move added (``events_from`` set) draws the same table
    as the whole view when the hand is over or when the viewer's own move is among them
    (the table shows what happened since the viewer's last move, and the last hand's
    result only until the viewer's first move of the new hand)."""
    v = view.view
    return view.HasField("events_from") and _in_hand(v) and not _moved_this_hand(v)


def _in_hand(view: pb.PlayerView) -> bool:
    from shared.pb import canasta_pb2 as pb

    return view.phase in (pb.PHASE_DRAW, pb.PHASE_PLAY, pb.PHASE_ANSWER)


def _recent(view: pb.PlayerView, names: SeatNames, color: bool) -> list[str]:
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
    said = [describe_event(e, names, color) for e in news[-_RECENT:]]
    parts = [text + ";" for text in said[:-1]] + said[-1:]  # between events, not after
    if len(news) > _RECENT:
        left_out = len(news) - _RECENT
        parts.insert(0, f"({plural(left_out, 'earlier event')} in `canasta history`)")
    return _rows("Recent", parts, " ")


# -- the table ------------------------------------------------------------------------------------


def render_table(
    view: pb.MatchView, *, color: bool, tz: tzinfo | None = None, now_ms: int | None = None
) -> str:
    """The whole table as the viewer may see it, with what they may do now at the bottom."""
    from shared.pb import canasta_pb2 as pb

    v = view.view
    match = view.match
    me = v.seat
    mine = next((sv for sv in v.sides if sv.side == v.my_side), None)
    names = SeatNames(match.seats, me, list(mine.seats) if mine is not None else ())
    in_hand = _in_hand(v)

    lines = [_header(view, color)]
    lines += _spectator_rows(view)
    lines += _score_rows(view, names, color)
    lines += _ladder_rows(view, names)
    if in_hand or any(v.hand_counts):
        lines += _seat_rows(v, names, color)
    if in_hand:
        lines.append(_row("Stock", plural(v.stock_size, "card")))
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
    clock = clock_text(view.match, names, now_ms, tz)
    if clock:
        lines.append(clock)
    if match.status == pb.MATCH_STATUS_PLAYING:  # (a finished match has nobody to cover)
        lines += [_cover_text(seat, names) for seat in match.seats if seat.covered]
    if view.match.aborted:
        lines.append(f"This match was {aborted_text(view.match)}.")
    if view.match.recovered_until:
        lines.append(
            f"The server was restored from a backup: moves {view.match.recovered_from}-"
            f"{view.match.recovered_until} came back from players' copies, each checked."
        )
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
    if view.my_orders.draw or view.my_orders.answer:
        lines.append(f"Your standing orders: {orders_text(view.my_orders)} (`canasta orders`)")
    return "\n".join(lines)


def orders_text(orders: pb.StandingOrders) -> str:
    """``draw when you cannot take the pile; answer partner yes``, or ``none``."""
    parts = ["draw when you cannot take the pile"] if orders.draw else []
    if orders.answer:
        parts.append(f'answer partner\'s "may I go out?" {orders.answer}')
    return "; ".join(parts) or "none"


_COVERS = {
    "timeout": "their turn ran out",
    "asked": "at their request",
    "forfeit": "their turn ran out; the bot resigns for them",
}


def _cover_text(seat: pb.SeatInfo, names: SeatNames) -> str:
    """``A bot plays for you (your turn ran out): canasta cover off to play again``."""
    reason = _COVERS.get(seat.covered, seat.covered)
    if seat.seat == names.me:
        reason = reason.replace("their", "your").replace("for them", "for you")
        if seat.covered == "forfeit":  # the side loses: there is no seat to take back
            return f"A bot plays for you ({reason})"
        return f"A bot plays for you ({reason}): `canasta cover off` to play again"
    return f"A bot plays for {names.full(seat.seat)} ({reason})"


def clock_text(
    match: pb.MatchSummary,
    names: SeatNames,
    now_ms: int | None = None,
    tz: tzinfo | None = None,
) -> str:
    """The match's clock in one line: whose turn is timed, when it is due (in ``tz``, else this
    machine's local time), the time and bank left, and the time control; empty without a
    clock."""
    control = match.time_control
    if not control.hours_per_move:
        return ""
    rules = f"{hours_text(control.hours_per_move)} a move"
    if control.bank_hours:
        rules += f" + {hours_text(control.bank_hours)} of bank"
    if control.weekends_off:
        rules += ", weekends off"
    rules += f", on timeout: {control.on_timeout or 'substitute'}"
    if not match.HasField("clock"):
        return f"Clock: {rules}"
    who = "your move" if match.my_turn else f"{names.name(match.clock.seat)} to move"
    return f"Clock: {who}, {due_text(match, now_ms, tz)} ({rules})"


def hours_text(hours: int) -> str:
    """``12 hours``, ``1 day``, ``3 days``, ``36 hours``: days when whole, else hours."""
    if hours % 24 == 0:
        days = hours // 24
        return "1 day" if days == 1 else f"{days} days"
    return "1 hour" if hours == 1 else f"{hours} hours"


def due_text(match: pb.MatchSummary, now_ms: int | None = None, tz: tzinfo | None = None) -> str:
    """The timed turn's two deadlines as a player reads them: ``move due Thu 03 Dec 14:00
    (5h 0m left), then 1d 0h of bank to Fri 04 Dec 14:00``. The move's own deadline comes
    first; the bank (time saved on earlier moves) follows it, never on top of the time left.
    Without a bank: ``due Thu 03 Dec 14:00, 2d 3h left``."""
    import time

    now = time.time_ns() // 1_000_000 if now_ms is None else now_ms
    due = match.clock.due_at_ms
    move_due = match.clock.move_due_at_ms or due
    if due <= now:
        return f"overdue since {_when(due, tz)}"
    if move_due >= due:
        text = f"due {_when(due, tz)}, {_duration(due - now)} left"
        if match.time_control.bank_hours:
            text += " (no bank left)"
        return text
    if move_due > now:
        return (
            f"move due {_when(move_due, tz)} ({_duration(move_due - now)} left), then "
            f"{_duration(_bank_ms(match))} of bank to {_when(due, tz)}"
        )
    return f"on the bank: overdue {_when(due, tz)} ({_duration(due - now)} left)"


def _bank_ms(match: pb.MatchSummary) -> int:
    seat = match.clock.seat
    return match.seats[seat].bank_ms if 0 <= seat < len(match.seats) else 0


def _when(ms: int, tz: tzinfo | None) -> str:
    return datetime.fromtimestamp(ms / 1000, tz).strftime("%a %d %b %H:%M")


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


_POLICIES = {
    "table": "the public table only",
    "after-hand": "the public table, and each hand's cards once it is over",
    "after-match": "the public table, and every hand's cards once the match is over",
}
"""What spectators see under each policy (``server.domain.Spectators``), in words."""


def _spectator_rows(view: pb.MatchView) -> list[str]:
    """Who may watch and who does: a spectator is told what they see and how many watch; a
    player, who watches (names are the server's, printable: checked at registration)."""
    policy = view.match.spectators
    if view.view.seat < 0:
        seen = f"; {plural(view.spectators, 'spectator')} watching" if view.spectators else ""
        return [f"You are a spectator: you see {_POLICIES.get(policy, policy)}{seen}"]
    lines = []
    if policy and policy != "none":
        who = ", ".join(view.spectator_names)
        more = view.spectators - len(view.spectator_names)
        if more > 0:
            who += f" and {more} more"
        watching = f"; watching: {who}" if who else "; nobody watches yet"
        lines.append(f"Spectators see {_POLICIES.get(policy, policy)}{watching}")
    asks = sorted({s.spectators_vote for s in view.match.seats if s.spectators_vote})
    for ask in asks:
        seats = [s for s in view.match.seats if s.spectators_vote == ask]
        who = ", ".join(s.display_name or f"seat {s.seat}" for s in seats)
        wish = "to allow no spectators" if ask == "none" else "to let spectators see "
        wish += _POLICIES.get(ask, "") if ask != "none" else ""
        lines.append(
            f"{who} asked {wish}: `canasta spectators {ask} {view.match.match_id[:8]}` agrees"
        )
    return lines


def _ladder_rows(view: pb.MatchView, names: SeatNames) -> list[str]:
    """The players' ladder ratings (those rated yet), or that the match counts for none."""
    from shared.pb import canasta_pb2 as pb

    people = [s for s in view.match.seats if s.kind == pb.SEAT_KIND_HUMAN and s.rating]
    if not view.match.rated:
        return [_row("Ladder", "this match is unrated")] if people else []
    if not people:
        return []
    return _rows("Ladder", [f"{names.short(s.seat)} {s.rating}" for s in people], ", ")


def _score_rows(view: pb.MatchView, names: SeatNames, color: bool) -> list[str]:
    """Each score column (the viewer's first) with its initial-meld minimum this hand."""
    v = view.view
    scores = list(v.scores) or list(view.match.scores)
    if not scores:
        return []
    columns = score_columns(view.match.seats, len(scores), v.sides)
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


def _seat_rows(v: pb.PlayerView, names: SeatNames, color: bool) -> list[str]:
    """Every seat with its number of cards in hand, the viewer and partners marked."""
    parts = []
    for seat, count in enumerate(v.hand_counts):
        tags = []
        if seat == v.seat:
            tags.append("you")
        elif seat in names.partners:
            tags.append("partner")
        if names.is_bot(seat):
            level = names.bot_level(seat)
            tags.append(f"{level} bot" if level else "bot")
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
    parts = [f"{top} on top, {plural(v.pile_size, 'card')}"]
    if v.pile_frozen or v.frozen_reason:
        parts.append(
            paint("FROZEN", "alert", color) + (f": {v.frozen_reason}" if v.frozen_reason else "")
        )
    if v.pile_blocked:
        parts.append(
            paint("BLOCKED", "alert", color) + ": a black three is on top, nobody may take it"
        )
    return _rows("Pile", [p + "," for p in parts[:-1]] + parts[-1:], " ")


def _side_rows(v: pb.PlayerView, sv: pb.SideView, names: SeatNames, color: bool) -> list[str]:
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
        facts.append(f"{plural(sv.canastas, 'book')} ({need})")
    elif sv.opened:
        facts.append(f"{plural(sv.canastas, 'canasta')} ({v.canastas_to_go_out} needed to go out)")
    else:
        facts.append("not opened")
    threes = "threes" if v.talon else "red threes"  # Modern American lays out both colours
    if sv.red_threes and (books or (len(sv.red_threes) > 4 and not v.talon)):
        facts.append(plural(len(sv.red_threes), "red three"))  # Hand and Foot has ten
    else:
        facts.append(f"{threes} {cards(sv.red_threes, color)}" if sv.red_threes else f"no {threes}")
    lines = [paint(title, "bold", color) + ": " + ", ".join(facts)]
    for meld in sv.melds:
        # A sequence (Samba, Bolivia) is named by its range and shown joined: 4h-5h-6h.
        sequence = meld.kind == pb.MELD_KIND_SEQUENCE
        shown = "-".join(card(c, color) for c in meld.cards) if sequence else None
        text = f"  {meld.rank:>2} x{len(meld.cards)}: {shown or cards(meld.cards, color)}"
        if meld.canasta_kind != pb.CANASTA_KIND_NONE:
            special = CANASTA_LABELS.get(meld.canasta)
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
    title = paint(f"Your hand ({plural(len(v.hand), 'card')})", "bold", color)
    return [f"{title}:", *wrap(parts, first="  ", indent="  ", sep=" | ", width=WIDTH)]


def hand_result_rows(
    result: pb.HandResult, seat: int | None, names: SeatNames, *, full: bool
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


def _status_rows(view: pb.MatchView, names: SeatNames, color: bool) -> list[str]:
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
    names = SeatNames(view.match.seats, v.seat, list(mine.seats) if mine is not None else ())
    return " ".join(" ".join(_status_rows(view, names, False)).split())


def _winners_text(v: pb.PlayerView, seats: Sequence[pb.SeatInfo], names: SeatNames) -> str:
    columns = score_columns(seats, len(v.scores), v.sides)
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


def aborted_text(match: pb.MatchSummary) -> str:
    """How an abandoned match ended: players may abandon one only before its first deal, so
    one abandoned later was ended by the server's operator."""
    if match.version == 0:
        return "abandoned before its first deal"
    return "ended by the server's operator"


def test_clock_warning(speed: int) -> str:
    """What a test server whose clocks run fast says of itself (start banner, server info)."""
    day_ms = 86_400_000 // max(1, speed)
    lasts = _duration(day_ms) if day_ms >= 60_000 else f"{max(1, day_ms // 1000)}s"
    return (
        f"TEST SERVER: every clock runs {speed}x real time (a day per move lasts {lasts}); "
        "no real match belongs here"
    )
