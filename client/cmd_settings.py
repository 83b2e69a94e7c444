"""Your settings on the server: time zone, and how you hear of your matches (e-mail, webhook).

``canasta notify`` shows them; ``canasta notify email ADDRESS`` mails a code to the address,
which ``canasta notify verify CODE`` gives back (then mail comes as a daily digest; ``canasta
notify email each`` for a mail per event, ``off`` for none); ``canasta notify webhook URL``
prints the secret that signs each POST, once. ``canasta timezone NAME`` sets the zone whose
weekends your clocks skip and in which mails show deadlines.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from client import common
from client.errors import EXIT_USAGE, CliError

if TYPE_CHECKING:
    from shared.pb import canasta_pb2 as pb

app = typer.Typer()
notify_app = typer.Typer(
    help="How you hear of your matches: e-mail (each event or a daily digest) and a webhook.",
    invoke_without_command=True,
)
PANEL = "Setting up"
JsonOpt = Annotated[bool, typer.Option("--json", help=common.JSON_HELP)]
MODES = ("each", "digest", "off")


def _update(json: bool, **fields: Any) -> pb.Settings:
    from shared.pb import canasta_pb2 as pb

    with common.connect(common.profile()) as conn:
        settings: pb.Settings = conn.call("UpdateSettings", pb.UpdateSettingsRequest(**fields))
    if json:
        common.print_json(settings)
    return settings


def _show(settings: pb.Settings) -> None:
    if settings.email_verified:
        mode = {"each": "a mail per event", "digest": "a daily digest", "off": "no mail"}
        typer.echo(
            f"e-mail   {settings.email}: {mode.get(settings.email_mode, settings.email_mode)}"
        )
    else:
        typer.echo("e-mail   none (canasta notify email ADDRESS)")
    if settings.email_pending:
        typer.echo(
            f"         {settings.email_pending} waits for its code (canasta notify verify CODE)"
        )
    if settings.allow_reply_moves:
        typer.echo("         moves by replying to a mail: on (server-attested)")
    typer.echo(f"webhook  {settings.webhook_url or 'none'}")
    typer.echo(f"timezone {settings.time_zone}")


@notify_app.callback()
def notify(ctx: typer.Context, json: JsonOpt = False) -> None:
    """Show how you hear of your matches (with a subcommand: change it)."""
    if ctx.invoked_subcommand is not None:
        return
    from shared.pb import canasta_pb2 as pb

    with common.connect(common.profile()) as conn:
        settings: pb.Settings = conn.call("GetSettings", pb.GetSettingsRequest())
    if json:
        common.print_json(settings)
        return
    _show(settings)


@notify_app.command(
    epilog="Examples:\n\n  canasta notify email ann@example.org\n\n  canasta notify email digest"
    "\n\n  canasta notify email off\n\n  canasta notify email each --allow-reply-moves"
)
def email(
    value: Annotated[
        str, typer.Argument(help="An address (a code is mailed to it), or each, digest, off.")
    ],
    json: JsonOpt = False,
    reply_moves: Annotated[
        bool | None,
        typer.Option(
            "--allow-reply-moves/--no-allow-reply-moves",
            help='Accept moves you make by replying to a "your turn" mail (off by default). '
            "The server signs them for you with a key of its own, and they show as "
            "server-attested: your verified address vouches for them, not your key.",
        ),
    ] = None,
) -> None:
    """Set the address mail goes to, or how it comes: each event, a daily digest, or off."""
    extra: dict[str, Any] = {} if reply_moves is None else {"allow_reply_moves": reply_moves}
    if value in MODES:
        settings = _update(json, email_mode=value, **extra)
    elif "@" in value:
        settings = _update(json, email=value, **extra)
        if not json:
            typer.echo(f"a code is on its way to {value}: run canasta notify verify CODE")
        return
    else:
        raise CliError(f"an e-mail address, or each, digest or off; not {value!r}", EXIT_USAGE)
    if not json:
        _show(settings)


@notify_app.command(epilog="Example:\n\n  canasta notify verify k7p2xq4mzt")
def verify(
    code: Annotated[str, typer.Argument(help="The code mailed to your new address.")],
    json: JsonOpt = False,
) -> None:
    """Prove the address is yours: mail then comes as a daily digest (see notify email)."""
    from shared.pb import canasta_pb2 as pb

    with common.connect(common.profile()) as conn:
        before: pb.Settings = conn.call("GetSettings", pb.GetSettingsRequest())
        fields: dict[str, Any] = {"email_code": code}
        if before.email_mode == "off":
            fields["email_mode"] = "digest"  # what most correspondence players prefer
        settings: pb.Settings = conn.call("UpdateSettings", pb.UpdateSettingsRequest(**fields))
    if json:
        common.print_json(settings)
        return
    _show(settings)


@notify_app.command(
    epilog="Examples:\n\n  canasta notify webhook https://ntfy.sh/my-canasta\n\n"
    "  canasta notify webhook off"
)
def webhook(
    url: Annotated[str, typer.Argument(help="An http(s) URL to POST each event to, or off.")],
    json: JsonOpt = False,
) -> None:
    """POST each event as JSON to a URL, signed with a secret shown once (X-Canasta-Signature)."""
    settings = _update(json, webhook_url="" if url == "off" else url)
    if json:
        return
    if settings.webhook_secret:
        typer.echo(f"webhook set; its signing secret (shown only now): {settings.webhook_secret}")
    else:
        typer.echo("no webhook")


@app.command(
    rich_help_panel=PANEL,
    epilog="Examples:\n\n  canasta timezone\n\n  canasta timezone Europe/Berlin",
)
def timezone(
    name: Annotated[str | None, typer.Argument(help="An IANA name such as Europe/Berlin.")] = None,
    json: JsonOpt = False,
) -> None:
    """Show or set your time zone: your clocks' weekends, and deadlines in mails."""
    from shared.pb import canasta_pb2 as pb

    if name is None:
        with common.connect(common.profile()) as conn:
            settings: pb.Settings = conn.call("GetSettings", pb.GetSettingsRequest())
    else:
        settings = _update(False, time_zone=name)
    if json:
        common.print_json(settings)
        return
    typer.echo(settings.time_zone)


@app.command(
    rich_help_panel=PANEL,
    epilog="Examples:\n\n  canasta vacation start\n\n  canasta vacation end\n\n"
    "  canasta vacation status",
)
def vacation(
    action: Annotated[str, typer.Argument(help="start, end or status.")] = "status",
    json: JsonOpt = False,
) -> None:
    """Stop your clocks while you are away (days from a yearly allowance), or start them."""
    from shared.pb import canasta_pb2 as pb

    if action not in ("start", "end", "status"):
        raise CliError(f"vacation start, end or status; not {action!r}", EXIT_USAGE)
    if action == "status":
        with common.connect(common.profile()) as conn:
            settings: pb.Settings = conn.call("GetSettings", pb.GetSettingsRequest())
    else:
        settings = _update(False, vacation=action == "start")
    if json:
        common.print_json(settings)
        return
    left = settings.vacation_left_ms / 86_400_000
    if settings.vacation_since_ms:
        import time

        since = time.strftime("%a %d %b %H:%M", time.localtime(settings.vacation_since_ms / 1000))
        typer.echo(f"on vacation since {since}: your clocks stand still; {left:.1f} days left")
    else:
        typer.echo(f"not on vacation; {left:.1f} days left this year")


@app.command(
    rich_help_panel=PANEL,
    epilog="Examples:\n\n  canasta orders\n\n  canasta orders --draw --answer yes\n\n"
    "  canasta orders 3f2a --no-draw\n\n  canasta orders 3f2a --follow-default",
)
def orders(
    draw: Annotated[
        bool | None,
        typer.Option(
            "--draw/--no-draw",
            help="Draw for you at the start of your turn when you cannot take the pile.",
        ),
    ] = None,
    answer: Annotated[
        str | None,
        typer.Option(
            "--answer",
            help='Answer partner\'s "may I go out?" for you: yes, no, or ask (ask you).',
        ),
    ] = None,
    match: Annotated[
        str | None,
        typer.Argument(
            help="A match: set or show its own orders (none: your default orders).",
            show_default=False,
        ),
    ] = None,
    match_option: common.MatchOpt = None,
    follow_default: Annotated[
        bool,
        typer.Option("--follow-default", help="The match follows your default orders again."),
    ] = False,
    json: JsonOpt = False,
) -> None:
    """Show or set standing orders: moves the server makes for you without asking, only where
    the rules leave you one move (a draw) or on the question you answered in advance."""
    from shared.pb import canasta_pb2 as pb
    from shared.tabletext import orders_text

    match = common.chosen_match(match, match_option)
    if answer is not None and answer not in ("yes", "no", "ask"):
        raise CliError(f"--answer yes, no or ask; not {answer!r}", EXIT_USAGE)
    if follow_default and (match is None or draw is not None or answer is not None):
        raise CliError("--follow-default goes with a match alone", EXIT_USAGE)
    if match is None:
        if draw is None and answer is None:
            with common.connect(common.profile()) as conn:
                settings: pb.Settings = conn.call("GetSettings", pb.GetSettingsRequest())
        else:
            fields: dict[str, Any] = {"order_draw": draw, "order_answer": answer}
            settings = _update(False, **{k: v for k, v in fields.items() if v is not None})
        if json:
            common.print_json(settings.orders)
            return
        typer.echo(f"default orders (every match without its own): {orders_text(settings.orders)}")
        return
    with common.connect(common.profile()) as conn:
        match_id = common.resolve_match(conn, match)
        if draw is None and answer is None and not follow_default:
            view = common.fetch_view(conn, match_id)
            found, own = view.my_orders, view.my_orders_per_match
        else:
            request = pb.SetOrdersRequest(match_id=match_id, follow_default=follow_default)
            if draw is not None:
                request.draw = draw
            if answer is not None:
                request.answer = answer
            response: pb.SetOrdersResponse = conn.call("SetOrders", request)
            found, own = response.orders, response.per_match
    if json:
        common.print_json(pb.SetOrdersResponse(orders=found, per_match=own))
        return
    whose = "its own" if own else "your default"
    typer.echo(f"orders in match {match_id[:8]} ({whose}): {orders_text(found)}")
