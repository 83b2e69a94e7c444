"""The lobby: create a match, join one by its invite code, fill seats with bots, start, list."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from client import common
from client.errors import EXIT_USAGE, CliError

if TYPE_CHECKING:
    from client.rpc import Connection
    from shared.pb import canasta_pb2 as pb

app = typer.Typer()
PANEL = "Lobby"
MatchArg = common.MatchArg


def _option_pairs(pairs: list[str]) -> dict[str, str]:
    """``name=value`` options as the server wants them: JSON text (bare words become strings)."""
    import json

    options: dict[str, str] = {}
    for pair in pairs:
        name, equals, value = pair.partition("=")
        if not equals or not name.strip():
            raise CliError(
                f"--option wants name=value, for example black3_freezes=true (got {pair!r})"
            )
        try:
            json.loads(value)
            text = value
        except ValueError:
            text = json.dumps(value)
        options[name.strip()] = text
    return options


def _print_summary(summary: pb.MatchSummary, invite: str) -> None:
    seats = ", ".join(
        f"{s.seat}:{s.display_name or ('bot' if s.kind == 3 else 'empty')}"
        + (f" ({s.bot_level})" if s.bot_level and s.kind == 3 else "")
        for s in summary.seats
    )
    status = {1: "waiting for players", 2: "playing", 3: "finished"}.get(summary.status, "?")
    typer.echo(f"match {summary.match_id} ({summary.preset}, {status})")
    typer.echo(f"  seats   {seats}")
    if summary.HasField("my_seat"):
        typer.echo(f"  you     seat {summary.my_seat}")
    if summary.spectators and summary.spectators != "none":
        typer.echo(f"  spectators  {summary.spectators}")
    if invite and summary.status == 1:
        typer.echo(f"  invite  {invite}   (others join with: canasta join {invite})")


BOT_LEVELS = ("easy", "normal", "strong")


def _bot_seats(given: list[str]) -> tuple[list[int], dict[int, str]]:
    """``--bot`` values (``2`` or ``2:strong``) as the seats and the levels named."""
    seats: list[int] = []
    levels: dict[int, str] = {}
    for text in given:
        number, _, level = text.partition(":")
        if not number.strip().isdigit():
            raise CliError(f"--bot takes SEAT or SEAT:LEVEL, not {text!r}", EXIT_USAGE)
        seat = int(number)
        level = level.strip().lower()
        if level and level not in BOT_LEVELS:
            raise CliError(
                f"unknown bot level {level!r}: choose {', '.join(BOT_LEVELS)}", EXIT_USAGE
            )
        seats.append(seat)
        if level:
            levels[seat] = level
    return seats, levels


@app.command(
    rich_help_panel=PANEL,
    epilog="Examples:\n\n  canasta create\n\n  canasta create --seat 1 --bot 2 --bot 3\n\n"
    "  canasta create --bot 1:strong --bot 2 --bot 3:strong\n\n"
    "  canasta create --preset two_player --target 7500 --option black3_freezes=true",
)
def create(
    preset: Annotated[
        str, typer.Option(help="Rule preset (classic, two_player, ...).")
    ] = "classic",
    option: Annotated[
        list[str] | None,
        typer.Option(
            help="A house rule over the preset, name=value (repeatable).", metavar="NAME=VALUE"
        ),
    ] = None,
    target: Annotated[int, typer.Option(help="Points to win (0: the preset's).")] = 0,
    seat: Annotated[int | None, typer.Option(help="Your seat (decides your partner).")] = None,
    bot: Annotated[
        list[str] | None,
        typer.Option(
            help="Give this seat to a bot (repeatable); SEAT:LEVEL picks its level: easy, "
            "normal (the default) or strong.",
            metavar="SEAT[:LEVEL]",
        ),
    ] = None,
    days: Annotated[
        int,
        typer.Option(
            help="Days for each turn, 1 to 14 (0: no clock, a friendly match).", min=0, max=14
        ),
    ] = 0,
    hours: Annotated[
        int,
        typer.Option(help="Hours for each turn instead of days, 4 to 336.", min=0, max=14 * 24),
    ] = 0,
    bank: Annotated[
        str,
        typer.Option(
            help="Reserve a slow turn may draw on, up to 30 days: days (5 or 5d) or hours (36h).",
            metavar="TIME",
        ),
    ] = "0",
    weekends_off: Annotated[
        bool,
        typer.Option(
            "--weekends-off", help="The clock stops on Saturday and Sunday, each player's own."
        ),
    ] = False,
    on_timeout: Annotated[
        str,
        typer.Option(
            help="When a turn is overdue: substitute (a bot plays the seat until its player "
            "is back) or forfeit (that side loses).",
            metavar="POLICY",
        ),
    ] = "",
    spectators: Annotated[
        str,
        typer.Option(
            help="Who else may follow the match: none, table (the public table, live), "
            "after-hand (and each hand's cards once it is over), after-match (and every "
            "hand's cards once the match is over).",
            metavar="POLICY",
        ),
    ] = "none",
    unrated: Annotated[
        bool, typer.Option("--unrated", help="The match does not count for the club ladder.")
    ] = False,
    conventions: Annotated[
        str,
        typer.Option(
            help="Your side's agreements, published to the whole table as the match starts "
            "(signed, in the record; see canasta conventions).",
            metavar="TEXT",
        ),
    ] = "",
    json: Annotated[bool, typer.Option("--json", help=common.JSON_HELP)] = False,
) -> None:
    """Create a match and print its invite code for the other players."""
    from shared.pb import canasta_pb2 as pb

    if conventions:
        from shared.talk import CONVENTIONS, text_problem

        problem = text_problem(conventions, CONVENTIONS)
        if problem is not None:
            raise CliError(f"--conventions: {problem}", EXIT_USAGE)

    bot_seats, bot_levels = _bot_seats(bot or [])
    request = pb.CreateMatchRequest(
        preset=preset,
        options=_option_pairs(option or []),
        target=target,
        bot_seats=bot_seats,
        bot_levels=bot_levels,
        spectators=spectators,
        unrated=unrated,
    )
    if days and hours:
        raise CliError("--days or --hours, not both", EXIT_USAGE)
    bank_days, bank_hours = _bank(bank)
    if days or hours or bank_days or bank_hours or weekends_off or on_timeout:
        request.time_control.CopyFrom(
            pb.TimeControl(
                days_per_move=days, hours_per_move=hours, bank_days=bank_days,
                bank_hours=bank_hours, weekends_off=weekends_off, on_timeout=on_timeout,
            )
        )  # fmt: skip
    if seat is not None:
        request.seat = seat
    with common.connect(common.profile()) as conn:
        response = conn.call("CreateMatch", request)
        published = conventions and _conventions_at_start(conn, response.match, conventions)
    if json:
        common.print_json(response)
        return
    _print_summary(response.match, response.invite_code)
    if conventions:
        typer.echo(
            "  conventions published to the table"
            if published
            else "  conventions kept: published when the match has started and you look at "
            "the table (canasta show)"
        )


def _conventions_at_start(conn: Connection, summary: pb.MatchSummary, text: str) -> bool:
    """Publish the side's conventions now if the match started at once, else keep them in the
    profile until it has (``client.cmd_talk.publish_pending``)."""
    from client.cmd_talk import publish

    if summary.status == 2:  # MATCH_STATUS_PLAYING: every other seat went to a bot
        publish(conn, summary.match_id, "conventions", text)
        return True
    conn.profile.conventions[summary.match_id] = text
    conn.profile.save()
    return False


@app.command(
    rich_help_panel=PANEL,
    epilog="Examples:\n\n  canasta join h4kq7wzm2p\n\n  canasta join h4kq7wzm2p --seat 2",
)
def join(
    code: Annotated[str, typer.Argument(help="The invite code the match's creator gave you.")],
    seat: Annotated[
        int | None, typer.Option(help="The seat you want (default: first free).")
    ] = None,
    json: Annotated[bool, typer.Option("--json", help=common.JSON_HELP)] = False,
) -> None:
    """Join a match by its invite code; it starts by itself once every seat is taken."""
    from shared.pb import canasta_pb2 as pb

    request = pb.JoinMatchRequest(invite_code=code)
    if seat is not None:
        request.seat = seat
    with common.connect(common.profile()) as conn:
        response = conn.call("JoinMatch", request)
    if json:
        common.print_json(response)
        return
    _print_summary(response.match, response.match.invite_code)


@app.command(
    rich_help_panel=PANEL, epilog="Examples:\n\n  canasta bot\n\n  canasta bot 3f2a --seat 3"
)
def bot(
    match: MatchArg = None,
    seat: Annotated[int | None, typer.Option(help="The seat (default: the first empty).")] = None,
    level: Annotated[
        str, typer.Option(help="The bot's level: easy, normal or strong.", metavar="LEVEL")
    ] = "normal",
    json: Annotated[bool, typer.Option("--json", help=common.JSON_HELP)] = False,
) -> None:
    """Give an empty seat to a bot (it plays on the server, through the same rules)."""
    from shared.pb import canasta_pb2 as pb

    with common.connect(common.profile()) as conn:
        if level.strip().lower() not in BOT_LEVELS:
            raise CliError(
                f"unknown bot level {level!r}: choose {', '.join(BOT_LEVELS)}", EXIT_USAGE
            )
        request = pb.FillSeatWithBotRequest(
            match_id=common.resolve_match(conn, match), bot_level=level.strip().lower()
        )
        if seat is not None:
            request.seat = seat
        response = conn.call("FillSeatWithBot", request)
    if json:
        common.print_json(response)
        return
    _print_summary(response.match, response.match.invite_code)


@app.command(rich_help_panel=PANEL, epilog="Example:\n\n  canasta start 3f2a")
def start(
    match: MatchArg = None,
    json: Annotated[bool, typer.Option("--json", help=common.JSON_HELP)] = False,
) -> None:
    """Start now: every empty seat gets a bot."""
    from shared.pb import canasta_pb2 as pb

    with common.connect(common.profile()) as conn:
        match_id = common.resolve_match(conn, match)
        response = conn.call("StartMatch", pb.StartMatchRequest(match_id=match_id))
    if json:
        common.print_json(response)
        return
    _print_summary(response.match, "")


@app.command(
    rich_help_panel=PANEL, epilog="Examples:\n\n  canasta matches\n\n  canasta matches --json"
)
def matches(json: Annotated[bool, typer.Option("--json", help=common.JSON_HELP)] = False) -> None:
    """List your matches, the ones where it is your turn first."""
    from client.render import render_matches
    from shared.pb import canasta_pb2 as pb

    with common.connect(common.profile()) as conn:
        found = common.my_matches(conn)
    if json:
        common.print_json(pb.ListMyMatchesResponse(matches=found))
        return
    typer.echo(render_matches(found, color=common.color()))


@app.command(
    rich_help_panel=PANEL,
    epilog="Examples:\n\n  canasta abort\n\n  canasta abort 3f2a",
)
def abort(
    match: MatchArg = None,
    match_option: common.MatchOpt = None,
    json: Annotated[bool, typer.Option("--json", help=common.JSON_HELP)] = False,
) -> None:
    """Abandon a match before its first deal: it ends when every player seated asked."""
    from shared.pb import canasta_pb2 as pb

    match = common.chosen_match(match, match_option)
    with common.connect(common.profile()) as conn:
        match_id = common.resolve_match(conn, match)
        response = conn.call("AbortMatch", pb.AbortMatchRequest(match_id=match_id))
    if json:
        common.print_json(response)
        return
    if response.match.aborted:
        typer.echo(f"match {match_id[:8]} abandoned")
    else:
        typer.echo(f"asked to abandon match {match_id[:8]}; it ends when the others agree")


@app.command(
    rich_help_panel=PANEL,
    epilog="Examples:\n\n  canasta spectators table\n\n  canasta spectators after-hand 3f2a",
)
def spectators(
    policy: Annotated[
        str,
        typer.Argument(
            help="none, table (the public table, live), after-hand (and each hand's cards once "
            "it is over) or after-match (and every hand's cards once the match is over).",
            show_default=False,
        ),
    ],
    match: MatchArg = None,
    match_option: common.MatchOpt = None,
    json: Annotated[bool, typer.Option("--json", help=common.JSON_HELP)] = False,
) -> None:
    """Ask to change who else may follow a match: it changes once every seated player asked
    for the same (asking for what is in force takes your ask back)."""
    from shared.pb import canasta_pb2 as pb

    match = common.chosen_match(match, match_option)
    with common.connect(common.profile()) as conn:
        match_id = common.resolve_match(conn, match)
        response = conn.call(
            "SetSpectators", pb.SetSpectatorsRequest(match_id=match_id, policy=policy)
        )
    if json:
        common.print_json(response)
        return
    summary = response.match
    mine = summary.seats[summary.my_seat] if summary.HasField("my_seat") else None
    if mine is not None and mine.spectators_vote:
        waiting = [
            s.display_name or f"seat {s.seat}"
            for s in summary.seats
            if s.kind == pb.SEAT_KIND_HUMAN and s.spectators_vote != policy
        ]
        verb = "asks" if len(waiting) == 1 else "ask"
        typer.echo(
            f"asked for spectators {policy} in match {match_id[:8]}; it changes once "
            f"{' and '.join(waiting)} {verb} for it too"
        )
    else:
        typer.echo(f"match {match_id[:8]}: spectators {summary.spectators}")


@app.command(
    rich_help_panel=PANEL,
    epilog="Examples:\n\n  canasta ratings\n\n  canasta ratings --limit 20 --json",
)
def ratings(
    limit: Annotated[int, typer.Option(help="At most this many players.", min=1, max=500)] = 100,
    json: Annotated[bool, typer.Option("--json", help=common.JSON_HELP)] = False,
) -> None:
    """The club ladder: every rated player's Glicko-2 rating and statistics, best first, with
    the bots' fixed ratings as anchors."""
    from client.render import render_ratings
    from shared.pb import canasta_pb2 as pb

    with common.connect(common.profile()) as conn:
        response = conn.call("GetRatings", pb.GetRatingsRequest(limit=limit))
    if json:
        common.print_json(response)
        return
    typer.echo(render_ratings(response))


def _bank(text: str) -> tuple[int, int]:
    """``--bank``: ``5`` or ``5d`` (days), ``36h`` (hours); (days, hours), one of them 0."""
    unit = text[-1:].lower() if text[-1:].isalpha() else "d"
    number = text[:-1] if text[-1:].isalpha() else text
    if unit not in ("d", "h") or not number.isdigit() or len(number) > 4:
        raise CliError(f"--bank takes days (5 or 5d) or hours (36h), not {text[:20]!r}", EXIT_USAGE)
    return (int(number), 0) if unit == "d" else (0, int(number))
