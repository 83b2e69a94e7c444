"""What the command modules share: the global options, the profile, the connection, matches.

Kept free of heavy imports at load time (grpc, protobuf and cryptography are imported inside
the functions) so that ``canasta --help`` does not pay for them.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

import typer

from client.errors import EXIT_USAGE, CliError
from client.profiles import Profile, chosen_profile

if TYPE_CHECKING:
    from google.protobuf.message import Message

    from client.rpc import Connection
    from shared.pb import canasta_pb2 as pb


@dataclass
class Options:
    """The root callback's options, read by every command."""

    profile: str | None = None
    no_color: bool = False


OPTIONS = Options()

JSON_HELP = "Print the server's answer as JSON instead of text (for scripts)."
MATCH_HELP = "Match id or a unique prefix; default: your one active match."
MatchArg = Annotated[str | None, typer.Argument(help=MATCH_HELP, show_default=False)]
"""The match a command is about, as its last argument (every command takes it so)."""
MatchOpt = Annotated[
    str | None,
    typer.Option(
        "--match", "-m", metavar="MATCH", help="The match, as the last argument can name it."
    ),
]
"""The same with ``--match``/``-m`` (kept: scripts and mails use it); ``chosen_match``."""

_MATCH_WORD = re.compile(r"[0-9a-f]{4,32}")
"""A word that names a match after a command's cards: 4 to 32 hex digits (an id or its first
characters). No card, rank or meld is written so (``shared.rules.cards``), so a trailing word
of this form is never a card."""


def chosen_match(argument: str | None, option: str | None) -> str | None:
    """The match a command names, as its last argument or with ``--match``/``-m`` (both kept:
    scripts and mails use ``-m``); naming two different matches is a usage error."""
    if argument and option and argument.lower() != option.lower():
        raise CliError(
            f"two matches named ({argument!r} and --match {option!r}): name one", EXIT_USAGE
        )
    return argument or option


def split_match(words: list[str]) -> tuple[list[str], str | None]:
    """Cards given to a command, and the match if the last word names one (``canasta meld 7h
    7c 2s 3f2a``): 4 to 32 hex digits, which no card is."""
    if words and _MATCH_WORD.fullmatch(words[-1].lower()):
        return words[:-1], words[-1]
    return words, None


def profile() -> Profile:
    return Profile.load(chosen_profile(OPTIONS.profile))


def connect(player: Profile) -> Connection:
    from client.rpc import Connection

    return Connection(player)


def color() -> bool:
    """Colours and suit symbols only for a terminal that wants them (``client.render``)."""
    from client.render import use_color

    return use_color(OPTIONS.no_color, sys.stdout)


def print_json(message: Message) -> None:
    from client.render import message_json

    typer.echo(message_json(message))


def active(summary: pb.MatchSummary) -> bool:
    return summary.status in (1, 2)  # MATCH_STATUS_WAITING, MATCH_STATUS_PLAYING


def my_matches(conn: Connection, *, active_only: bool = False) -> list[pb.MatchSummary]:
    """The player's matches, active ones first, every page of them."""
    from shared.pb import canasta_pb2 as pb

    found: list[pb.MatchSummary] = []
    token = ""
    while True:
        request = pb.ListMyMatchesRequest(page_token=token, active_only=active_only)
        page = conn.call("ListMyMatches", request)
        found.extend(page.matches)
        token = page.next_page_token
        if not token:  # a match that finished meanwhile may be listed in both groups
            unique: dict[str, pb.MatchSummary] = {}
            for summary in found:
                unique[summary.match_id] = summary  # first place, latest word
            return list(unique.values())


def resolve_match(conn: Connection, given: str | None) -> str:
    """A full match id from an id, a unique prefix, or nothing (the one active match).

    A full id the profile already knows needs no call; anything else asks the server for the
    player's matches once.
    """

    known = conn.profile.matches
    if given and given in known:
        return given
    if given and len(given) >= 32:
        return given  # a full id: let the server say whether it exists
    # Without a prefix only the active matches matter: finished ones are not even fetched.
    matches = my_matches(conn, active_only=not given)
    if given:
        found = [m.match_id for m in matches if m.match_id.startswith(given.lower())]
        if len(found) == 1:
            return found[0]
        if not found:
            raise CliError(
                f"no match of yours starts with {given!r}: `canasta matches` lists them (a "
                "match you follow as a spectator takes its whole id)"
            )
        raise CliError(f"{given!r} is ambiguous ({len(found)} of your matches start with it)")
    running = [m for m in matches if active(m)]
    if len(running) == 1:
        return running[0].match_id
    if not running:
        raise CliError(
            "you have no active match: `canasta create` starts one, `canasta join CODE` joins one"
        )
    ids = ", ".join(m.match_id[:8] for m in running)
    raise CliError(f"you have {len(running)} active matches ({ids}): name one (a prefix will do)")


def fetch_view(conn: Connection, match_id: str) -> pb.MatchView:
    """The player's view now, after checking that it extends what the player saw before
    (``client.forks``); the profile remembers its version for the next move."""
    from client.forks import check_view
    from shared.pb import canasta_pb2 as pb

    view: pb.MatchView = conn.call("GetView", pb.GetViewRequest(match_id=match_id)).view
    if view.view.seat < 0:  # a spectator's view: no seat, no move to remember it for
        return view
    conn.profile.remember(view, check_view(conn, view))
    conn.profile.save()
    return view
