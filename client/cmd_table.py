"""Looking and following: the table, the history, waiting for my turn, watching changes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from client import common
from client.errors import EXIT_MATCH_OVER, EXIT_TIMEOUT, EXIT_USAGE, CliError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from client.rpc import Connection
    from shared.pb import canasta_pb2 as pb

app = typer.Typer()
PANEL = "Looking and following"
MatchArg = common.MatchArg
JsonOpt = Annotated[bool, typer.Option("--json", help=common.JSON_HELP)]


@app.command(
    rich_help_panel=PANEL,
    epilog="Examples:\n\n  canasta show\n\n  canasta show 3f2a --json\n\n  NO_COLOR=1 canasta show",
)
def show(match: MatchArg = None, json: JsonOpt = False) -> None:
    """Show the table: your hand, the melds, the pile, scores, whose turn and what you may do.

    Below it, each side's declared conventions and the last lines of table talk.
    """
    from client.cmd_talk import publish_pending, table_lines

    with common.connect(common.profile()) as conn:
        view = common.fetch_view(conn, common.resolve_match(conn, match))
        publish_pending(conn, view)
        talk = [] if json or not view.view.players else table_lines(conn, view.match.match_id)
    if json:
        common.print_json(view)
        return
    from client.render import render_table

    typer.echo(render_table(view, color=common.color()))
    if talk:
        typer.echo("\n".join(["", *talk]))


@app.command(
    rich_help_panel=PANEL,
    epilog="Examples:\n\n  canasta moves\n\n  canasta moves 3f2a --json",
)
def moves(match: MatchArg = None, json: JsonOpt = False) -> None:
    """What you may do now, as commands: how to start the turn, melds that open, lay-offs...

    The list comes from the rules engine on the server and every entry is legal; it is not
    every legal move (melds are offered per rank, an unopened side its best opening).
    """
    from shared.pb import canasta_pb2 as pb

    with common.connect(common.profile()) as conn:
        match_id = common.resolve_match(conn, match)
        # The table first, checked against what this profile saw (``client.forks``): a list
        # of moves is no reason to skip the check, on your turn or not.
        view = common.fetch_view(conn, match_id)
        found = conn.call("GetMoves", pb.GetMovesRequest(match_id=match_id))
    if json:
        common.print_json(found)
        return
    from client.render import render_moves

    typer.echo(render_moves(found, view))


def full_history(conn: Connection, match_id: str) -> pb.GetHistoryResponse:
    """Every page of the history, as one response."""
    from shared.pb import canasta_pb2 as pb

    combined: pb.GetHistoryResponse | None = None
    after = 0
    while True:
        page = conn.call("GetHistory", pb.GetHistoryRequest(match_id=match_id, after_seq=after))
        if combined is None:
            combined = page
        else:
            combined.entries.extend(page.entries)
            # Each page carries the hands of its own entries: the latest word on each hand.
            hands = {h.hand_number: h for h in [*combined.hands, *page.hands]}
            del combined.hands[:]
            combined.hands.extend(hands[n] for n in sorted(hands))
            combined.version = page.version
            if page.HasField("end"):  # the last page of a finished match
                combined.end.CopyFrom(page.end)
        if not page.more or not page.entries:
            combined.more = False
            return combined
        after = page.entries[-1].seq


@app.command(
    rich_help_panel=PANEL, epilog="Examples:\n\n  canasta history\n\n  canasta history 3f2a --json"
)
def history(match: MatchArg = None, json: JsonOpt = False) -> None:
    """The match's log in readable form: every move, what it caused, hands and deals."""
    from client.cmd_talk import full_talk, talk_head_line

    with common.connect(common.profile()) as conn:
        match_id = common.resolve_match(conn, match)
        record = full_history(conn, match_id)
        talk = full_talk(conn, match_id) if record.header else None
        seen = conn.profile.matches.get(match_id)
    if json:
        common.print_json(record)
        return
    from client.forks import head_line
    from client.render import render_history

    said = list(talk.entries) if talk is not None else []
    seat = seen.seat if seen is not None else _my_seat(conn, record)
    results, checked = _replayed(record, said)
    typer.echo(
        render_history(record, viewer_seat=seat, color=common.color(), results=results, talk=said)
    )
    typer.echo(checked)
    if seat is None:
        typer.echo(_spectator_note(record))
    typer.echo(head_line(record))  # compare it with the other players
    if said:
        typer.echo(talk_head_line(record.header, said))  # and the talk's


def _replayed(
    record: pb.GetHistoryResponse, talk: list[pb.TalkEntry] | None = None
) -> tuple[dict[int, pb.HandResult], str]:
    """Each finished hand's result, from replaying the record as `canasta verify` does, and a
    line saying what was verified (or, loudly, that it was not)."""
    from shared.protocol import transcript_of
    from shared.transcript import TranscriptError, verify
    from shared.wire import hand_result_to_pb

    if not record.header:
        return {}, "(this match began before records carried their rules: not verified)"
    transcript = transcript_of(record.header, record.entries, record.hands, record.end, talk or ())
    try:
        report = verify(transcript)
    except TranscriptError as exc:
        return {}, f"WARNING: this record does NOT verify: {exc}"
    results = {h.hand_number: hand_result_to_pb(h) for h in report.hands}
    over = len(report.hands)
    chained = f"; {report.talk} talk entries signed and chained" if report.talk else ""
    return results, (
        f"Verified: entries 1-{report.entries} (signatures, chain, receipts, deals, every move"
        f" replayed; {over} hand{'s' if over != 1 else ''} over){chained}"
        if report.entries
        else f"Verified: the match header (no hand is over yet){chained}"
    )


def _spectator_note(record: pb.GetHistoryResponse) -> str:
    """What a spectator's history leaves out: the hands whose cards the match's players do
    not show spectators (yet), whose deals cannot be replayed without them."""
    hidden = [h.hand_number for h in record.hands if h.deal_seq and not h.secret]
    if not hidden:
        return "You follow this match as a spectator."
    return (
        "You follow this match as a spectator: the cards of hand "
        f"{', '.join(str(n) for n in hidden)} are not shown to spectators"
        f"{' yet' if record.end.signature == b'' else ''}, so those entries are not replayed."
    )


def _my_seat(conn: Connection, record: pb.GetHistoryResponse) -> int | None:
    from shared.crypto.keytext import public_key_from_text

    mine = public_key_from_text(conn.profile.public_key)
    for seat in record.seats:
        if bytes(seat.public_key) == mine:
            return int(seat.seat)
    return None


def _stream(
    conn: Connection,
    match_ids: list[str],
    timeout: float | None,
    notifications_after: int | None = None,
) -> Any:
    """Open Watch; a token the server no longer knows is renewed once before giving up."""
    from client.rpc import RpcFailureError, translated

    for attempt in (1, 2):
        stream = conn.watch(match_ids, timeout, notifications_after)
        try:
            with translated(conn.address):
                first = next(stream)
        except RpcFailureError as failure:
            if attempt == 1 and failure.status == "UNAUTHENTICATED":
                conn.profile.token = ""
                continue
            raise
        except StopIteration:
            return stream, None
        return stream, first
    raise AssertionError("unreachable")  # pragma: no cover


_MAX_WAIT = 10.0**9
"""The longest ``--timeout`` (about 31 years): longer is no timeout at all, say so."""


@app.command(
    rich_help_panel=PANEL,
    epilog="Exit codes: 0 your turn, 3 timed out, 4 the match is over, 1 an error.\n\n"
    "Examples:\n\n  canasta wait && canasta show\n\n  canasta wait 3f2a --timeout 3600",
)
def wait(
    match: MatchArg = None,
    timeout: Annotated[
        float | None,
        typer.Option(help="Give up after this many seconds (exit code 3)."),
    ] = None,
    json: JsonOpt = False,
) -> None:
    """Block until it is your move in a match (your turn, an answer, or the cut), then show it."""
    from client.rpc import RpcFailureError, translated

    if timeout is not None and not 0 < timeout <= _MAX_WAIT:  # also refuses nan
        raise typer.BadParameter(
            f"give a number of seconds above 0 and at most {_MAX_WAIT:g}", param_hint="--timeout"
        )
    with common.connect(common.profile()) as conn:
        match_id = common.resolve_match(conn, match)
        seat = _seat_in(conn, match_id)
        try:
            stream, change = _stream(conn, [match_id], timeout)
            with translated(conn.address):
                while change is not None:
                    if change.match_id == match_id:
                        if change.status == 3:  # MATCH_STATUS_FINISHED
                            raise CliError("the match is over", EXIT_MATCH_OVER)
                        if change.HasField("to_act") and change.to_act == seat:
                            stream.cancel()
                            break
                    change = next(stream, None)
                else:
                    raise CliError("the server closed the stream; run `canasta wait` again")
        except RpcFailureError as failure:
            if failure.status == "DEADLINE_EXCEEDED":
                waited = f" after {timeout:g} s" if timeout is not None else ""
                raise CliError(f"still not your turn{waited}", EXIT_TIMEOUT) from None
            raise
        view = common.fetch_view(conn, match_id)
    if json:
        common.print_json(view)
        return
    from client.render import render_table

    typer.echo(render_table(view, color=common.color()))


def _seat_in(conn: Connection, match_id: str) -> int:
    seen = conn.profile.matches.get(match_id)
    if seen is not None:
        return seen.seat
    return common.fetch_view(conn, match_id).view.seat


@app.command(
    rich_help_panel=PANEL,
    epilog="Stop it with Ctrl-C. If the server goes away, watch says so and exits 1.\n\n"
    "Examples:\n\n  canasta watch\n\n  canasta watch 3f2a --json",
)
def watch(
    match: Annotated[
        list[str] | None, typer.Argument(help="Match ids to watch; default: all of yours.")
    ] = None,
    spectate: Annotated[
        bool,
        typer.Option(
            "--spectate",
            help="Follow the matches named (whole ids), which you do not sit in, as a "
            "spectator, where their players allow it; they see that you watch.",
        ),
    ] = False,
    json: JsonOpt = False,
) -> None:
    """Print a line for every change in your matches, and your notifications, until interrupted.

    Notifications already printed by an earlier watch of this profile are not printed again
    (the last id is kept in the profile, per server); the first watch prints those of the last
    day, not your whole log.
    """
    import time

    from client.rpc import RpcFailureError, translated

    with common.connect(common.profile()) as conn:
        if spectate and not match:
            raise CliError("--spectate follows the matches you name: give their ids", EXIT_USAGE)
        ids = [m.lower() if spectate else common.resolve_match(conn, m) for m in match or []]
        seats = _Seats(conn, ids if spectate else ())
        after = conn.profile.notifications_seen.get(conn.address, 0)
        first_watch = conn.address not in conn.profile.notifications_seen
        older = time.time_ns() // 1_000_000 - _FIRST_WATCH_DAYS_MS if first_watch else 0
        memory = _Memory()  # kept across reconnects: no line twice
        quiet_reconnects = 0
        while True:
            stream, change = _stream(conn, ids, None, notifications_after=after)
            try:
                with translated(conn.address):
                    while change is not None:
                        quiet_reconnects = 0
                        after = _print_change(
                            conn, change, seats, after, older, json=json, memory=memory
                        )
                        change = next(stream, None)
            except RpcFailureError as failure:
                # A watch outlives its token (``token_ttl_seconds``): log in again and resume
                # after the last notification printed, so none is missed or printed twice.
                if failure.status == "UNAUTHENTICATED" and quiet_reconnects == 0:
                    quiet_reconnects += 1
                    conn.profile.token = ""
                    continue
                raise
            raise CliError(
                f"the server at {conn.address} ended the watch (it may be shutting down or "
                "restarting); run `canasta watch` again"
            )


class _Seats:
    """Who sits where in the player's matches, for naming the seat to move; read once, and
    again when a match the player joined meanwhile shows up."""

    def __init__(self, conn: Connection, spectated: Sequence[str] = ()) -> None:
        self.conn = conn
        self.summaries: dict[str, pb.MatchSummary] = {}
        self.spectated = {m: common.fetch_view(conn, m).match for m in spectated}
        """Matches followed as a spectator (``--spectate``): read once, from their views."""
        self._load()

    def _load(self) -> None:
        self.summaries = {m.match_id: m for m in common.my_matches(self.conn)}
        self.summaries.update(self.spectated)

    def of(self, match_id: str) -> pb.MatchSummary | None:
        if match_id and match_id not in self.summaries:
            self._load()
        return self.summaries.get(match_id)


_FIRST_WATCH_DAYS_MS = 86_400_000
"""How far back a profile's first watch prints notifications (later ones resume by id)."""


class _Memory:
    """What one watch printed, across the streams it opens (a reconnect after the token ran
    out opens a new one, which starts again with each match's state): the revision of each
    match's last line, so that an unchanged match is not printed twice; and a hand that just
    ended, so that the line of the change that ended it says the cut is due."""

    def __init__(self) -> None:
        import time

        self.started_ms = time.time_ns() // 1_000_000
        self.revisions: dict[str, int] = {}
        self.hand_over: set[str] = set()
        """Matches with a "hand over" notification made since the watch began and no change
        line since: the server sends the notices a change caused just before the change."""

    def printed_before(self, change: pb.WatchResponse) -> bool:
        if not change.match_id or self.revisions.get(change.match_id, -1) < change.revision:
            self.revisions[change.match_id] = change.revision
            return False
        return True

    def heard(self, note: pb.WatchNotification) -> None:
        if note.kind == "hand_ended" and note.created_at_ms >= self.started_ms:
            self.hand_over.add(note.match_id)

    def cut_due(self, conn: Connection, change: pb.WatchResponse) -> bool:
        """Whether ``to_act`` names the seat that cuts: as the server says (``cut``), or, from
        an older server that does not say, before the first deal (version 0), in the change
        right after its "hand over" notification, or where this profile last looked and saw
        the cut due."""
        ended = change.match_id in self.hand_over
        self.hand_over.discard(change.match_id)
        if change.status != 2 or not change.HasField("to_act"):  # MATCH_STATUS_PLAYING
            return False
        if change.cut:  # the server says so (servers from issue 28 on)
            return True
        seen = conn.profile.matches.get(change.match_id)
        at_the_cut = seen is not None and seen.version == change.version and seen.deal_commitment
        return change.version == 0 or ended or bool(at_the_cut)


def _stamp(ms: int | None) -> str:
    """When something happened, in local time: the clock time today, with the day before."""
    import time

    now = time.localtime()
    when = time.localtime(ms / 1000) if ms else now
    if when[:3] == now[:3]:
        return time.strftime("%H:%M:%S", when)
    return time.strftime("%a %d %b %H:%M:%S", when)


def _print_change(
    conn: Connection,
    change: pb.WatchResponse,
    seats: _Seats,
    after: int,
    older: int,
    *,
    json: bool,
    memory: _Memory | None = None,
) -> int:
    """Print one stream message; returns the id of the last notification seen, which is
    remembered in the profile at once (a watch ends by Ctrl-C, never by a clean exit).
    Notifications created before ``older`` (ms) are passed over, not printed; a notification
    is stamped with when it was made (an old one with its day), a change with now."""
    memory = memory if memory is not None else _Memory()
    note = change.notification if change.HasField("notification") else None
    if note is not None:
        memory.heard(note)
    if note is not None and note.created_at_ms < older:
        pass
    elif note is None and memory.printed_before(change):
        memory.cut_due(conn, change)  # the same state again, from a stream opened anew
    elif json:
        import json as json_module

        from google.protobuf.json_format import MessageToDict

        data = MessageToDict(
            change,
            preserving_proto_field_name=True,
            always_print_fields_with_no_presence=True,
        )  # as message_json, on one line per change
        typer.echo(json_module.dumps(data, sort_keys=True))
    else:
        from client.render import notification_line, watch_line

        if note is not None:
            typer.echo(f"{_stamp(note.created_at_ms)} {notification_line(note)}")
        else:
            cut = memory.cut_due(conn, change)
            line = watch_line(change, seats.of(change.match_id), cut=cut)
            typer.echo(f"{_stamp(None)} {line}")
    if note is not None and note.id > after:
        after = note.id
        conn.profile.notifications_seen[conn.address] = after
        conn.profile.save()
    return after


@app.command(
    rich_help_panel=PANEL,
    epilog="Examples:\n\n  canasta calendar -o ~/canasta.ics\n\n  canasta calendar > deadlines.ics",
)
def calendar(
    output: Annotated[
        str | None, typer.Option("--output", "-o", help="Write to this file (default: print).")
    ] = None,
) -> None:
    """Your deadlines as an iCalendar file (.ics) for your phone's or desktop's calendar."""
    import time

    from client.calendar import calendar as ics

    with common.connect(common.profile()) as conn:
        found = common.my_matches(conn, active_only=True)
        text = ics(found, conn.address, time.time_ns() // 1_000_000)
    if "BEGIN:VEVENT" not in text:  # a calendar of no event: some importers refuse it
        raise CliError(
            "no match of yours is on a clock now, so there is no deadline to write; "
            "nothing was written"
        )
    if output is None:
        typer.echo(text, nl=False)
        return
    try:
        with open(output, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
    except OSError as exc:
        raise CliError(f"cannot write {output}: {exc.strerror}") from None
    events = text.count("STATUS:CONFIRMED")
    typer.echo(f"wrote {output}: {events} deadline{'s' if events != 1 else ''}")
