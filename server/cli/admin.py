"""The operator's commands on players, matches and the server's state: ``players``,
``matches``, ``status`` and ``log`` (the logic is ``server.service.people.admin``)."""

from __future__ import annotations

import urllib.error
import urllib.request
from datetime import UTC, datetime
from typing import Annotated

import typer
from sqlalchemy.engine import make_url

from server.cli.common import app, refused, service_context, sub_app
from server.domain import Match, MatchStatus, SeatKind
from server.service.errors import ServiceError
from server.service.people import admin
from server.store.migrations import head_revision, schema_revision
from shared.crypto.keytext import fingerprint, public_key_to_text

players_app = sub_app("players", "List, rename, block, unblock and delete players.")
matches_app = sub_app("matches", "List, show and abort matches.")

PlayerArgument = Annotated[str, typer.Argument(help="Player number or public key (ed25519:...).")]
MatchArgument = Annotated[str, typer.Argument(help="Match id, or its first 4 or more digits.")]


def _when(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M")


# -- players ------------------------------------------------------------------------------------


@players_app.command("list")
def players_list() -> None:
    """List registered players."""
    ctx = service_context()
    with ctx.db.read() as session:
        found = ctx.repo(session).players()
    if not found:
        typer.echo("no players yet")
    for p in found:
        state = "DELETED" if p.deleted_ms else "BLOCKED" if p.blocked else "active"
        typer.echo(
            f"{p.id:>5}  {state:<7}  {_when(p.created_ms)[:10]}  {fingerprint(p.public_key)}  "
            f"{public_key_to_text(p.public_key)}  {p.display_name}"
            + (f" <{p.email}>" if p.email else "")
        )


@players_app.command("block")
def players_block(who: PlayerArgument) -> None:
    """Block a player: its key is refused everywhere, its tokens are revoked."""
    _set_blocked(who, True)


@players_app.command("unblock")
def players_unblock(who: PlayerArgument) -> None:
    """Unblock a player."""
    _set_blocked(who, False)


def _set_blocked(who: str, blocked: bool) -> None:
    try:
        player = admin.set_blocked(service_context(), who, blocked)
    except ServiceError as exc:
        refused(exc)
    typer.echo(f"{'blocked' if blocked else 'unblocked'} {player.display_name} (#{player.id})")


@players_app.command("rename")
def players_rename(
    who: PlayerArgument,
    name: Annotated[str, typer.Argument(help="The new display name (1 to 40 characters).")],
) -> None:
    """Give a player another display name; the tables show it at once. The signed header of
    a match already started keeps the name it was started with (every move commits to it)."""
    try:
        player, new = admin.rename_player(service_context(), who, name)
    except ServiceError as exc:
        refused(exc)
    typer.echo(f"renamed {player.display_name} (#{player.id}) to {new}")


@players_app.command("delete")
def players_delete(
    who: PlayerArgument,
    yes: Annotated[bool, typer.Option("--yes", help="Do it without asking.")] = False,
) -> None:
    """Delete a player: their name, e-mail, webhook and notifications are forgotten and their
    key is blocked for good. The moves they signed stay in their matches' records, which are
    immutable, and so does their name in the signed header of each match they played.
    Refused while they sit in a match that is not over."""
    ctx = service_context()
    if not yes:
        with ctx.db.read() as session:
            try:
                player = admin.find_player(ctx.repo(session), who)
            except ServiceError as exc:
                refused(exc)
        typer.confirm(f"delete {player.display_name} (#{player.id})?", abort=True)
    try:
        player = admin.delete_player(ctx, who)
    except ServiceError as exc:
        refused(exc)
    typer.echo(
        f"deleted {player.display_name} (#{player.id}); views now show "
        f"{admin.deleted_name(player.id)!r}"
    )


# -- matches ------------------------------------------------------------------------------------


def _seats(match: Match) -> str:
    return ", ".join(
        "bot" if s.kind is SeatKind.BOT else s.display_name or "(empty)" for s in match.seats
    )


def _status(match: Match) -> str:
    return "aborted" if match.aborted else match.status.value


@matches_app.command("list")
def matches_list(
    status: Annotated[
        MatchStatus | None, typer.Option(help="Only matches waiting, playing or finished.")
    ] = None,
    limit: Annotated[int, typer.Option(min=1, max=admin.MAX_LIST, help="How many.")] = 50,
) -> None:
    """The most recently changed matches: id, status, preset, moves, last change, players."""
    try:
        found = admin.list_matches(service_context(), status, limit)
    except ServiceError as exc:
        refused(exc)
    if not found:
        typer.echo("no matches")
    for m in found:
        typer.echo(
            f"{m.id}  {_status(m):<8}  {m.preset:<14}  {m.version:>6} moves  "
            f"{_when(m.updated_ms)}  {_seats(m)}"
        )


@matches_app.command("show")
def matches_show(match: MatchArgument) -> None:
    """One match: its seats, where the game stands and its clock."""
    try:
        found, state = admin.show_match(service_context(), match)
    except ServiceError as exc:
        refused(exc)
    typer.echo(f"match     {found.id}")
    typer.echo(f"status    {_status(found)}")
    typer.echo(f"rules     {found.preset}, target {state.target}")
    typer.echo(f"created   {_when(found.created_ms)}; last change {_when(found.updated_ms)}")
    typer.echo(f"moves     {found.version}; head {found.head_hash.hex()}")
    typer.echo(f"hand      {state.hand_number}; scores {', '.join(map(str, state.scores))}")
    if found.clock is not None:
        due = "paused" if found.clock.due_ms == 0 else f"due {_when(found.clock.due_ms)}"
        typer.echo(f"clock     seat {found.clock.seat}, {due}")
    for s in found.seats:
        who = "bot" if s.kind is SeatKind.BOT else s.display_name or "(empty)"
        extra = f"  player #{s.player_id}" if s.player_id is not None else ""
        extra += f"  covered by a bot ({s.covered})" if s.covered else ""
        typer.echo(f"seat {s.seat}    {who}{extra}")


@matches_app.command("abort")
def matches_abort(
    match: MatchArgument,
    yes: Annotated[bool, typer.Option("--yes", help="Do it without asking.")] = False,
) -> None:
    """End a match that is not over, with no winner; its players are told the operator did.
    Its record stays as it is (the hand in play is never revealed)."""
    ctx = service_context()
    if not yes:
        typer.confirm(f"abort match {match}?", abort=True)
    try:
        ended = admin.abort_match(ctx, match)
    except ServiceError as exc:
        refused(exc)
    typer.echo(f"aborted match {ended.id}")


# -- the server as a whole ----------------------------------------------------------------------


@app.command("status")
def status_command() -> None:
    """The server's version, database, schema revision, counts of players, matches, moves
    and notifications, the open Watch streams (from the metrics endpoint, when it is on) and
    the last admin actions."""
    from server.app import package_version

    ctx = service_context()
    report = admin.status(ctx)
    revision = schema_revision(ctx.db)
    url = make_url(ctx.config.db_url).render_as_string(hide_password=True)
    typer.echo(f"version   canasta-server {package_version()}")
    typer.echo(f"database  {url}")
    typer.echo(f"schema    revision {revision} (this server's newest: {head_revision()})")
    for name, count in sorted(report.counts.items()):
        typer.echo(f"{name:<26}{count:>8}")
    typer.echo(f"{'open watch streams':<26}{_open_streams(ctx.config.metrics_listen):>8}")
    for action in report.recent:
        typer.echo(f"{_when(action.at_ms)}  {action.actor}: {action.action} {action.target}")


def _open_streams(metrics_listen: str) -> str:
    """The running server's open Watch streams, read from its metrics endpoint."""
    if not metrics_listen:
        return "unknown (metrics off)"
    from server.health import local_address

    url = f"http://{local_address(metrics_listen)}/metrics"
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            text = response.read(4 << 20).decode("utf-8", "replace")
    except (OSError, urllib.error.URLError):
        return "unknown (no server answers)"
    for line in text.splitlines():
        if line.startswith("canasta_watch_streams_open "):
            return str(int(float(line.split()[1])))
    return "unknown"


@app.command("log")
def log_command(
    limit: Annotated[int, typer.Option(min=1, max=admin.MAX_LIST, help="How many.")] = 50,
) -> None:
    """The admin log: every action taken with these commands, oldest first."""
    try:
        actions = admin.admin_log(service_context(), limit)
    except ServiceError as exc:
        refused(exc)
    if not actions:
        typer.echo("no admin actions yet")
    for a in actions:
        typer.echo(f"{_when(a.at_ms)}  {a.actor}: {a.action} {a.target} {a.detail}")
