"""The operator's tasks (``canasta-server matches``, ``players``, ``status``, ``log``).

They run in the operator's own process, beside a running server. Each change goes through the
same conditional writes as the server's own, so a server process notices it as it notices a
change by another server process on the same database: the match's revision moved on, and a
move planned on the old copy is checked again. Every change is written, in the same commit,
to the operator's log (table ``admin_action``, shown by ``canasta-server log``) and to this
process's log (logger ``canasta.admin``).

History is immutable: deleting a player forgets their name and contact details (in the admin
log too) and blocks their key, but the moves they signed stay in the records of their matches,
and so does the name in the signed header of every match they started playing (each move
commits to it). Backups taken before keep everything.
"""

from __future__ import annotations

import getpass
import json
import logging
import re
from dataclasses import dataclass

from server.domain import AdminAction, Match, MatchStatus, Player
from server.service import matches
from server.service.context import ServiceContext
from server.service.errors import ConflictError, InvalidRequestError, NotFoundError
from server.service.people.accounts import display_name
from server.service.play import lobby
from server.store.repository import Repository
from shared.crypto.errors import CryptoError
from shared.crypto.keytext import public_key_from_text
from shared.rules import GameState

log = logging.getLogger("canasta.admin")

MATCH_ID_PREFIX = re.compile(r"[0-9a-f]{4,32}")
"""How an operator names a match: its id, or its first 4 or more hex digits (as mails show)."""
MAX_LIST = 1000


def operator() -> str:
    """Who is acting: the operating system's user running the command."""
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no user name in the environment nor the password database
        return "unknown"


def record(repo: Repository, now: int, action: str, target: str, **detail: object) -> None:
    """Log one admin action: in the database, in the same commit as the change, and once that
    commit is done, in this process's log."""
    entry = AdminAction(now, operator(), action, target, json.dumps(detail, sort_keys=True))
    repo.add_admin_action(entry)
    repo.after_commit(
        lambda: log.info("%s by %s: %s %s", action, entry.actor, target, entry.detail)
    )


def find_match(repo: Repository, name: str) -> Match:
    """The match an operator names by its id or a unique prefix of it."""
    prefix = name.strip().lower()
    if not MATCH_ID_PREFIX.fullmatch(prefix):
        raise InvalidRequestError(
            "name a match by its id or its first 4 or more characters (hex digits)"
        )
    found = repo.match_ids_starting(prefix, 2)
    if not found:
        raise NotFoundError(f"there is no match {prefix}")
    if len(found) > 1:
        raise InvalidRequestError(f"{prefix} begins more than one match id: give more of it")
    return matches.require_match(repo, found[0])


def find_player(repo: Repository, who: str) -> Player:
    """The player an operator names by number or public key (``ed25519:...``)."""
    who = who.strip()
    if who.isdigit() and len(who) <= 18:
        player = repo.player_by_id(int(who))
    else:
        try:
            player = repo.player_by_key(public_key_from_text(who))
        except CryptoError as exc:
            raise InvalidRequestError(f"name a player by number or public key: {exc}") from None
    if player is None:
        raise NotFoundError(f"there is no player {who}")
    return player


def list_matches(ctx: ServiceContext, status: MatchStatus | None, limit: int) -> list[Match]:
    """The ``limit`` most recently changed matches (of ``status``, else all)."""
    if not 1 <= limit <= MAX_LIST:
        raise InvalidRequestError(f"list 1 to {MAX_LIST} matches")
    with ctx.db.read() as session:
        return ctx.repo(session).recent_matches(status, limit)


def show_match(ctx: ServiceContext, name: str) -> tuple[Match, GameState]:
    """A match and its state now, for ``matches show``."""
    with ctx.db.read() as session:
        repo = ctx.repo(session)
        match = find_match(repo, name)
        return match, matches.load_state(ctx, repo, match)


def abort_match(ctx: ServiceContext, name: str) -> Match:
    """End a match that is not over, with no winner; its players are told it was the
    operator. The hand in play stays unrevealed: its deal is never published."""
    now = ctx.clock()
    with ctx.db.write() as session:
        repo = ctx.repo(session)
        match = find_match(repo, name)
        if match.status is MatchStatus.FINISHED:
            raise ConflictError(f"match {match.id} is over already")
        state = matches.load_state(ctx, repo, match)
        ended = lobby.abandon(repo, match, state, now, by_operator=True)
        record(
            repo, now, "matches abort", match.id,
            status=match.status.value, version=match.version, hand=state.hand_number,
        )  # fmt: skip
    return ended


def set_blocked(ctx: ServiceContext, who: str, blocked: bool) -> Player:
    """Block a player (their key is refused everywhere, their tokens are revoked) or not."""
    now = ctx.clock()
    with ctx.db.write() as session:
        repo = ctx.repo(session)
        player = find_player(repo, who)
        if player.deleted_ms and not blocked:
            raise ConflictError(f"player {player.id} was deleted: their key stays blocked")
        repo.set_blocked(player.id, blocked)
        record(repo, now, "players block" if blocked else "players unblock", f"#{player.id}")
    return player


def rename_player(ctx: ServiceContext, who: str, new_name: str) -> tuple[Player, str]:
    """Give a player another display name (views show it at once; the signed header of a
    match already started keeps the old one). The player before, and the new name."""
    name = display_name(new_name)
    now = ctx.clock()
    with ctx.db.write() as session:
        repo = ctx.repo(session)
        player = find_player(repo, who)
        if player.deleted_ms:
            raise ConflictError(f"player {player.id} was deleted")
        repo.update_player(player.id, display_name=name)
        repo.touch_matches_of(player.id, now, finished_too=True)  # seats are read afresh
        record(repo, now, "players rename", f"#{player.id}", old=player.display_name, new=name)
    return player, name


def delete_player(ctx: ServiceContext, who: str) -> Player:
    """Forget a player: name, e-mail, webhook, time zone and notifications go, the key stays
    blocked. Refused while they sit in a match that is not over (abort it, or wait)."""
    now = ctx.clock()
    with ctx.db.write() as session:
        repo = ctx.repo(session)
        player = find_player(repo, who)
        if player.deleted_ms:
            raise ConflictError(f"player {player.id} was deleted already")
        seated = repo.unfinished_match_ids_of(player.id)
        if seated:
            shown = ", ".join(m[:8] for m in seated[:10]) + (" ..." if len(seated) > 10 else "")
            raise ConflictError(
                f"{player.display_name} (#{player.id}) sits in {len(seated)} match(es) that "
                f"are not over ({shown}): abort them with canasta-server matches abort, or "
                "wait until they end"
            )
        repo.erase_player(player.id, deleted_name(player.id), now)
        repo.touch_matches_of(player.id, now, finished_too=True)
        repo.forget_admin_details(f"#{player.id}")  # the names earlier renames logged
        record(repo, now, "players delete", f"#{player.id}")
    return player


def deleted_name(player_id: int) -> str:
    """What views show for a deleted player."""
    return f"deleted player {player_id}"


@dataclass(frozen=True, slots=True)
class Status:
    counts: dict[str, int]
    recent: list[AdminAction]


def status(ctx: ServiceContext, recent: int = 5) -> Status:
    """Row counts and the last few admin actions."""
    with ctx.db.read() as session:
        repo = ctx.repo(session)
        return Status(repo.row_counts(), repo.admin_actions(recent))


def admin_log(ctx: ServiceContext, limit: int) -> list[AdminAction]:
    if not 1 <= limit <= MAX_LIST:
        raise InvalidRequestError(f"show 1 to {MAX_LIST} entries")
    with ctx.db.read() as session:
        return ctx.repo(session).admin_actions(limit)
