"""Acting: every move is a signed envelope that follows the version the player last saw.

The move is read locally first (the engine's notation), so a typo in a card never reaches the
server. The envelope carries ``seq = version + 1`` and the head hash from the last table the
player was shown (``show``, ``wait`` or the previous move); if the match moved on since, the
server refuses it unchanged and the player is told to look again. The server's receipt is
checked against the pinned key and the envelope actually sent, then kept in the profile.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated

import typer

from client import common
from client.errors import EXIT_USAGE, CliError

if TYPE_CHECKING:
    from client.profiles import Seen
    from client.rpc import Connection, RpcFailureError
    from shared.crypto.keys import PrivateKey
    from shared.pb import canasta_pb2 as pb

app = typer.Typer()
PANEL = "Playing"
MatchArg = common.MatchArg
MatchOpt = common.MatchOpt
JsonOpt = Annotated[bool, typer.Option("--json", help=common.JSON_HELP)]
YesOpt = Annotated[
    bool,
    typer.Option(
        "--yes",
        "-y",
        help="If others moved since you last looked and it is your move, play on the new "
        "table without asking (the changes are still printed).",
    ),
]
TRAILING_MATCH = "; a last word of 4 or more hex digits names the match"
Cards = Annotated[
    list[str],
    typer.Argument(help="Cards such as 7h 10d qs jk (2s are wild)" + TRAILING_MATCH + "."),
]
ArmorOpt = Annotated[
    bool,
    typer.Option(
        "--armor",
        help="Do not send the move: print it signed, as a text block to send by any channel "
        "(mail it to the server, or hand it to its operator).",
    ),
]


def split_turn(text: str) -> list[str]:
    """The action texts of a whole turn written with ``;`` (or new lines) between them."""
    return [part.strip() for part in re.split(r"[;\n]", text) if part.strip()]


def _check_notation(actions: list[str]) -> None:
    from shared.rules import NotationError
    from shared.rules.notation import parse_actions

    # A move that cannot be read is a wrong command line (exit 2), like a missing argument.
    if not actions:
        raise CliError(
            'no move given: for example `canasta play "meld 7h 7c 2s; discard kd"`', EXIT_USAGE
        )
    try:
        parse_actions(actions)
    except NotationError as exc:
        raise CliError(f"cannot read the move: {exc.message}", EXIT_USAGE) from None


def submit(
    match: str | None,
    actions: list[str],
    json: bool,
    *,
    deal: bool = False,
    fresh: bool = False,
    yes: bool = False,
    armor: bool = False,
) -> None:
    """Check, sign and send one move; print the new table (or JSON) and the receipt's seq.

    With ``armor`` the signed envelope is printed as a text block (``shared.armor``) instead
    of being sent: it follows the last table seen, like a sent move, and the server that
    receives it later checks it exactly like a Submit.

    If others moved since the player last looked and it is now the player's move, the table
    and the changes are shown and the move is sent on the new table only once confirmed
    (``yes``, or a "y" at a terminal); see ``_catch_up``.
    """
    import json as json_module

    from client.rpc import RpcFailureError
    from shared import protocol
    from shared.tabletext import needs_earlier_events

    if not deal:
        _check_notation(actions)
    player = common.profile()
    key = player.load_key()
    with common.connect(player) as conn:
        match_id = common.resolve_match(conn, match)
        seen = player.matches.get(match_id)
        view = None
        if deal or fresh or seen is None:
            # A cut needs the commitment published now, and a resignation holds whatever the
            # table: both follow the match as it is now. So does a first move from a profile
            # that never looked at this match (another device's, or a new copy): there is no
            # earlier table to follow, and this first look checks the whole chain from its
            # header, as `canasta show` would (``client.forks``).
            view = common.fetch_view(conn, match_id)
            seen = player.matches[match_id]
        if deal and not seen.deal_commitment:
            raise CliError("no hand is waiting to be dealt: `canasta show` says what to do")
        if armor:
            # Nobody checks a block before the server gets it, maybe days later: refuse here
            # what the table already shows to be wrong.
            if view is None:
                view = _table_seen(conn, match_id, seen)
            if view is not None:
                _check_before_signing(view, actions, deal=deal)
            _print_armored(key, match_id, seen, actions, deal)
            return
        server_key = conn.pinned_key()  # checked against the pin before the move leaves
        for attempt in (1, 2, 3):
            head = bytes.fromhex(seen.head_hash)
            request = protocol.move_request(
                key,
                match_id,
                seen.seat,
                seen.version,
                head,
                actions,
                deal_commitment=bytes.fromhex(seen.deal_commitment) if deal else b"",
            )
            if not (json or deal or fresh):
                # The table needs only the events since this player's own last move, which
                # this one is: the reply need not repeat the hand's earlier events.
                request.since_version = seen.version
            try:
                # The token says the sender is the seat's player: only then is the view sent.
                response = conn.call("Submit", request)
                break
            except RpcFailureError as failure:
                if failure.status == "FAILED_PRECONDITION" and (
                    failure.trailers.get("canasta-error") == "turn"
                ):
                    raise _not_your_move(conn, match_id, failure) from None
                if failure.status != "ABORTED" or deal or fresh or attempt == 3:
                    if failure.status == "ABORTED":
                        now = failure.trailers.get("canasta-version", "?")
                        raise CliError(
                            f"the match moved on since you last looked (you saw version "
                            f"{seen.version}, it is at version {now}): nothing was submitted; "
                            "run `canasta show`"
                        ) from None
                    raise
                seen = _catch_up(conn, match_id, seen, actions, yes=yes, json=json)
        if not protocol.receipt_matches(server_key, request, head, response.receipt):
            raise CliError(
                "DANGER: the server's receipt for this move does not verify with the pinned "
                "server key; the move may not be stored as sent. Keep this output and ask the "
                "operator; `canasta history` shows what the server holds."
            )
        if not response.HasField("view"):  # a server that answers the receipt alone
            response.view.CopyFrom(common.fetch_view(conn, match_id))
        elif (response.view.version, bytes(response.view.head_hash)) != (
            response.receipt.seq,
            bytes(response.receipt.entry_hash),
        ):  # the view must be the one the receipt acknowledges (client.forks)
            raise CliError(
                "DANGER: the server answered the move with a table that is not the entry its "
                "receipt acknowledges; keep this output. `canasta show` checks the history."
            )
        player.remember(response.view)
        receipt = response.receipt
        from client.entries import Kept, keep

        keep(
            player,
            match_id,
            [
                Kept(
                    receipt.seq,
                    request.payload,
                    request.signature,
                    bytes(receipt.entry_hash),
                    bytes(receipt.server_signature),
                )
            ],
        )
        player.save()
        shown = response.view
        if needs_earlier_events(shown):  # (a move that left no event of the player's own)
            shown = common.fetch_view(conn, match_id)
        with player.receipts_path.open("a", encoding="utf-8") as log:
            log.write(
                json_module.dumps(
                    {
                        "match_id": receipt.match_id,
                        "seq": receipt.seq,
                        "entry_hash": bytes(receipt.entry_hash).hex(),
                        "server_signature": bytes(receipt.server_signature).hex(),
                    }
                )
                + "\n"
            )
    if json:
        common.print_json(response)
        return
    from client.render import render_table

    typer.echo(render_table(shown, color=common.color()))
    typer.echo(f"move {receipt.seq} stored; receipt verified")


def _print_armored(
    key: PrivateKey, match_id: str, seen: Seen, actions: list[str], deal: bool
) -> None:
    """Print the signed move as a block; nothing is sent, nothing in the profile changes (the
    table moves on when the server has the move and the player looks again)."""
    from shared import protocol
    from shared.armor import armor

    request = protocol.move_request(
        key,
        match_id,
        seen.seat,
        seen.version,
        bytes.fromhex(seen.head_hash),
        actions,
        deal_commitment=bytes.fromhex(seen.deal_commitment) if deal else b"",
    )
    typer.echo(armor(request), nl=False)


def _table_seen(conn: Connection, match_id: str, seen: Seen) -> pb.MatchView | None:
    """The table the player last looked at, as the server shows it now (checked against what
    the profile saw, ``client.forks``); a match that moved on since is refused: a move signed
    on the old table would only be refused when it arrives. None when the server cannot be
    reached (a block is for mailing: it may be signed offline, unchecked, as it says)."""
    import sys

    from client.forks import check_view
    from client.rpc import RpcFailureError
    from shared.pb import canasta_pb2 as pb

    try:
        view: pb.MatchView = conn.call("GetView", pb.GetViewRequest(match_id=match_id)).view
    except RpcFailureError as failure:
        if failure.status not in ("UNAVAILABLE", "DEADLINE_EXCEEDED"):
            raise
        print(
            f"canasta: warning: {failure.message}; the move is signed without checking it "
            "against the table",
            file=sys.stderr,
        )
        return None
    check_view(conn, view)
    if view.version != seen.version:
        raise CliError(
            f"the match moved on since you last looked (you saw version {seen.version}, it is "
            f"at version {view.version}): nothing was signed; run `canasta show`, then sign "
            "the move again"
        )
    return view


def _check_before_signing(view: pb.MatchView, actions: list[str], *, deal: bool) -> None:
    """Refuse a move the player's own view already shows to be illegal: not their move (or
    cut), a kind of action the engine's list for this table (``legal``) leaves out, or cards
    that are not in their hand. After a draw or a take in the same move the hand holds cards
    the view does not show, so the rest is left to the server."""
    from collections import Counter

    from client.render import COMMANDS, status_text
    from shared.rules import Discard, Draw, LayOff, Meld, TakePile, parse_card
    from shared.rules.notation import parse_actions

    v = view.view

    def refuse(why: str) -> CliError:
        return CliError(f"refused before signing: {why}; nothing was signed")

    if actions == ["resign"]:
        return  # at any moment
    if deal:
        if not (view.HasField("dealing_seat") and view.dealing_seat == v.seat):
            raise refuse(f"it is not your cut: {_lower_first(status_text(view))}")
        return
    if not (v.HasField("actor") and v.actor == v.seat):
        raise refuse(f"it is not your move: {_lower_first(status_text(view))}")
    kind = actions[0].split(" ", 1)[0]
    if kind in _LISTED_IN_FULL and kind not in v.legal:
        what = "nobody has asked you anything" if kind == "answer" else f"`{kind}` is not possible"
        may = [f"{COMMANDS[k][0]} ({COMMANDS[k][1]})" for k in v.legal if k in COMMANDS]
        raise refuse(what + (f" now; you may {', '.join(may)}" if may else " now"))
    hand = Counter(parse_card(c) for c in v.hand)
    for text, action in zip(actions, parse_actions(actions), strict=True):
        named: tuple[int, ...] = ()
        if isinstance(action, Meld):
            named = tuple(c for meld in action.melds for c in meld)
        elif isinstance(action, LayOff):
            named = action.cards
        elif isinstance(action, Discard):
            named = (action.card,)
        elif isinstance(action, TakePile):
            named = action.cards + tuple(c for meld in action.melds for c in meld)
        wanted = Counter(named)
        missing = wanted - hand
        if missing:
            from shared.rules import cards_text

            raise refuse(f"`{text}` needs {cards_text(sorted(missing.elements()))}, which your "
                         "hand does not hold")  # fmt: skip
        hand -= wanted
        if isinstance(action, (Draw, TakePile)):
            return  # cards the view does not show come into the hand


def _not_your_move(conn: Connection, match_id: str, failure: RpcFailureError) -> CliError:
    """The engine's "not your turn" names seats by number; say who, by name, and doing what."""
    from client.render import status_text
    from shared.pb import canasta_pb2 as pb

    try:
        view = conn.call("GetView", pb.GetViewRequest(match_id=match_id)).view
    except CliError:
        return failure
    return CliError(f"refused: it is not your move: {_lower_first(status_text(view))}")


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


_LISTED_IN_FULL = frozenset({"draw", "pass", "answer", "ask", "discard"})
"""Move kinds that the view's ``legal`` list (the engine's) names whenever one is legal: for
these, a kind missing from the list is reason enough to refuse before sending. Takes, melds
and lay-offs are listed only in part, so the engine judges them."""


def _catch_up(
    conn: Connection, match_id: str, seen: Seen, actions: list[str], *, yes: bool, json: bool
) -> Seen:
    """The match moved on since the player last looked: decide what to tell them.

    Only when everything since is others' moves in the same hand and the move is now the
    player's (and plausible by the engine's list of what they may do) is the table shown with
    what changed, and the move sent on it once confirmed; otherwise nothing is sent and the
    message says the useful thing (whose move it is, or what the player may do instead).
    """
    import sys

    from client.forks import check_view, entries_after
    from client.render import COMMANDS, changes_text, render_table, status_text
    from shared.pb import canasta_pb2 as pb

    view = conn.call("GetView", pb.GetViewRequest(match_id=match_id)).view
    entries = entries_after(conn, match_id, seen.version, view.version)
    header_hash = check_view(conn, view, entries)  # it must extend what the player saw
    moved = (
        f"the match moved on since you last looked (you saw version {seen.version}, it is at "
        f"version {view.version})"
    )
    v = view.view
    if not (v.HasField("actor") and v.actor == seen.seat):
        raise CliError(
            f"{moved}, and it is not your move now: {_lower_first(status_text(view))}. Nothing "
            "was submitted; `canasta show` shows the table"
        )
    if any(e.seat == seen.seat for e in entries):
        raise CliError(
            f"{moved}, with moves for your seat made elsewhere (another device, or a bot "
            "covering for you): nothing was submitted; run `canasta show`"
        )
    if any(list(e.actions) == ["deal"] for e in entries):
        raise CliError(
            f"{moved}, and a new hand was dealt: nothing was submitted; run `canasta show`"
        )
    kind = actions[0].split(" ", 1)[0] if actions else ""
    if kind in _LISTED_IN_FULL and kind not in v.legal:
        what = "nobody has asked you anything" if kind == "answer" else f"`{kind}` is not possible"
        may = [f"{COMMANDS[k][0]} ({COMMANDS[k][1]})" for k in v.legal if k in COMMANDS]
        instead = f"; you may {', '.join(may)}" if may else ""
        raise CliError(f"{moved}, and now {what}{instead}. Nothing was submitted")
    color = common.color() and not json
    shown = [
        render_table(view, color=color),
        f"Since you last looked ({len(entries)} move{'s' if len(entries) != 1 else ''} by others):",
        changes_text(entries, view, color=color),
    ]
    out = sys.stderr if json else sys.stdout  # --json keeps stdout for the answer alone
    typer.echo("\n".join(shown), file=out)
    move = "; ".join(actions)
    if yes:
        typer.echo(
            f"canasta: others moved since you last looked; sending `{move}` (--yes)", err=True
        )
    elif not sys.stdin.isatty():
        raise CliError(
            f"{moved}: the table and the changes are above; nothing was submitted. Run the "
            "command again with --yes to play it on this table",
            EXIT_USAGE,
        )
    elif not typer.confirm(
        f"Others moved since you last looked. Play `{move}` now?", default=False
    ):
        raise CliError("nothing was submitted")
    return conn.profile.remember(view, header_hash)


@app.command(rich_help_panel=PANEL, epilog="Example:\n\n  canasta draw")
def draw(
    match: MatchArg = None,
    match_option: MatchOpt = None,
    json: JsonOpt = False,
    yes: YesOpt = False,
    armor: ArmorOpt = False,
) -> None:
    """Draw from the stock (red threes are laid out and replaced for you)."""
    submit(common.chosen_match(match, match_option), ["draw"], json, yes=yes, armor=armor)


@app.command(
    rich_help_panel=PANEL,
    epilog="Examples:\n\n  canasta take 7h 7c        (meld the top card with 7h 7c)\n\n"
    "  canasta take              (lay the top card off on your meld of its rank)\n\n"
    "  canasta take 8c 8d , ks kh kd   (further melds after a comma count to open)",
)
def take(
    cards: Annotated[
        list[str] | None,
        typer.Argument(help="Cards from your hand that meld the top card" + TRAILING_MATCH + "."),
    ] = None,
    match_option: MatchOpt = None,
    json: JsonOpt = False,
    yes: YesOpt = False,
    armor: ArmorOpt = False,
) -> None:
    """Take the discard pile, melding its top card at once."""
    words, match = common.split_match(cards or [])
    match = common.chosen_match(match, match_option)
    submit(match, [" ".join(["pickup", *words])], json, yes=yes, armor=armor)


@app.command(
    rich_help_panel=PANEL,
    epilog="Examples:\n\n  canasta meld 7h 7c 2s\n\n  canasta meld 7h 7c 2s , kd kc ks",
)
def meld(
    cards: Cards,
    match_option: MatchOpt = None,
    json: JsonOpt = False,
    yes: YesOpt = False,
    armor: ArmorOpt = False,
) -> None:
    """Meld cards from your hand (several melds separated by commas)."""
    words, match = common.split_match(cards)
    match = common.chosen_match(match, match_option)
    submit(match, [" ".join(["meld", *words])], json, yes=yes, armor=armor)


@app.command(
    rich_help_panel=PANEL, epilog="Examples:\n\n  canasta lay 9 9d\n\n  canasta lay 9 9d 2c"
)
def lay(
    cards: Annotated[
        list[str],
        typer.Argument(help="The meld's rank, then the cards to add" + TRAILING_MATCH + "."),
    ],
    match_option: MatchOpt = None,
    json: JsonOpt = False,
    yes: YesOpt = False,
    armor: ArmorOpt = False,
) -> None:
    """Lay cards off on one of your side's melds."""
    words, match = common.split_match(cards)
    match = common.chosen_match(match, match_option)
    submit(match, [" ".join(["lay", *words])], json, yes=yes, armor=armor)


@app.command(rich_help_panel=PANEL, epilog="Example:\n\n  canasta discard kd")
def discard(
    card: Annotated[str, typer.Argument(help="The card to discard.")],
    match: MatchArg = None,
    match_option: MatchOpt = None,
    json: JsonOpt = False,
    yes: YesOpt = False,
    armor: ArmorOpt = False,
) -> None:
    """Discard a card, which ends your turn."""
    match = common.chosen_match(match, match_option)
    submit(match, [f"discard {card}"], json, yes=yes, armor=armor)


@app.command(
    rich_help_panel=PANEL,
    epilog='Examples:\n\n  canasta out "meld 5h 5d 5c; discard 9s"\n\n'
    '  canasta out "lay k kd; meld 8h 8d 8c"',
)
def out(
    turn: Annotated[
        str | None, typer.Argument(help="The rest of your turn, as for `canasta play`.")
    ] = None,
    match: MatchArg = None,
    match_option: MatchOpt = None,
    json: JsonOpt = False,
    yes: YesOpt = False,
    armor: ArmorOpt = False,
) -> None:
    """Go out: there is no separate action; meld your last cards (and maybe discard the last).

    Your side needs its canastas first (`canasta show` says how many). Give the rest of the
    turn and it is played at once, like `canasta play`.
    """
    if turn is None:
        raise CliError(
            "going out is not a separate action: play your last cards, for example "
            '`canasta out "meld 5h 5d 5c; discard 9s"` (same as `canasta play`)',
            EXIT_USAGE,
        )
    submit(common.chosen_match(match, match_option), split_turn(turn), json, yes=yes, armor=armor)


@app.command(rich_help_panel=PANEL, epilog="Example:\n\n  canasta ask")
def ask(
    match: MatchArg = None,
    match_option: MatchOpt = None,
    json: JsonOpt = False,
    yes: YesOpt = False,
    armor: ArmorOpt = False,
) -> None:
    """Ask your partner "may I go out?" (the answer binds you)."""
    submit(common.chosen_match(match, match_option), ["ask"], json, yes=yes, armor=armor)


@app.command(
    rich_help_panel=PANEL, epilog="Examples:\n\n  canasta answer yes\n\n  canasta answer no"
)
def answer(
    reply: Annotated[str, typer.Argument(help="yes or no.", metavar="yes|no")],
    match: MatchArg = None,
    match_option: MatchOpt = None,
    json: JsonOpt = False,
    yes: YesOpt = False,
    armor: ArmorOpt = False,
) -> None:
    """Answer your partner's "may I go out?"."""
    if reply.lower() not in ("yes", "no", "y", "n"):
        raise CliError(f"canasta answer takes yes or no, not {reply!r}", EXIT_USAGE)
    match = common.chosen_match(match, match_option)
    submit(match, [f"answer {reply.lower()}"], json, yes=yes, armor=armor)


@app.command("pass", rich_help_panel=PANEL, epilog="Example:\n\n  canasta pass")
def pass_(
    match: MatchArg = None,
    match_option: MatchOpt = None,
    json: JsonOpt = False,
    yes: YesOpt = False,
    armor: ArmorOpt = False,
) -> None:
    """Decline the pile once the stock is gone (this ends the hand)."""
    submit(common.chosen_match(match, match_option), ["pass"], json, yes=yes, armor=armor)


@app.command(rich_help_panel=PANEL, epilog="Examples:\n\n  canasta deal\n\n  canasta deal 3f2a")
def deal(
    match: MatchArg = None,
    match_option: MatchOpt = None,
    json: JsonOpt = False,
    armor: ArmorOpt = False,
) -> None:
    """Cut the deck so the next hand is dealt (when `canasta show` says it is your cut).

    Your signature over the server's published commitment is the hand's randomness: the server
    fixed its secret before you cut, so it cannot choose the deal (docs/trust.md).
    """
    submit(common.chosen_match(match, match_option), ["deal"], json, deal=True, armor=armor)


@app.command(
    rich_help_panel=PANEL,
    epilog='Examples:\n\n  canasta play "draw"\n\n'
    '  canasta play "meld 7h 7c 2s; lay 9 9d; discard kd"\n\n'
    '  canasta play "pickup 8c 8d, ks kh kd; discard 4s"',
)
def play(
    turn: Annotated[str, typer.Argument(help="Actions separated by ';', applied all or nothing.")],
    match: MatchArg = None,
    match_option: MatchOpt = None,
    json: JsonOpt = False,
    yes: YesOpt = False,
    armor: ArmorOpt = False,
) -> None:
    """Submit several actions at once (the rest of a turn), as one signed move."""
    submit(common.chosen_match(match, match_option), split_turn(turn), json, yes=yes, armor=armor)


@app.command(
    rich_help_panel=PANEL,
    epilog="Examples:\n\n  canasta resign\n\n  canasta resign 3f2a --yes",
)
def resign(
    match: MatchArg = None,
    match_option: MatchOpt = None,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask for confirmation.")] = False,
    json: JsonOpt = False,
    armor: ArmorOpt = False,
) -> None:
    """Concede the match for your side, at any moment: the other side(s) win at once."""
    import sys

    match = common.chosen_match(match, match_option)
    if not yes:
        if not sys.stdin.isatty():
            raise CliError("resigning ends the match: add --yes to confirm", code=EXIT_USAGE)
        with common.connect(common.profile()) as conn:  # name the match in the question
            match = common.resolve_match(conn, match)
        question = f"Resign match {match}? It ends now and your side loses"
        if not typer.confirm(question, default=False):
            raise CliError("not resigned")
    submit(match, ["resign"], json, fresh=True, armor=armor)


@app.command(
    rich_help_panel=PANEL,
    epilog="Examples:\n\n  canasta cover on\n\n  canasta cover off 3f2a",
)
def cover(
    state: Annotated[str, typer.Argument(help="on: a bot plays your seat; off: you are back.")],
    match: MatchArg = None,
    match_option: MatchOpt = None,
    json: JsonOpt = False,
) -> None:
    """Let a bot play your seat while you are away, or take it back."""
    from shared.pb import canasta_pb2 as pb

    if state not in ("on", "off"):
        raise CliError(f"cover on or cover off, not {state!r}", code=EXIT_USAGE)
    match = common.chosen_match(match, match_option)
    with common.connect(common.profile()) as conn:
        match_id = common.resolve_match(conn, match)
        response = conn.call(
            "SetCover", pb.SetCoverRequest(match_id=match_id, covered=state == "on")
        )
    if json:
        common.print_json(response)
        return
    typer.echo(
        "a bot plays your seat until you run `canasta cover off`"
        if state == "on"
        else "you play your seat again"
    )
