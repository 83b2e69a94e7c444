"""Moves by mail reply: the single-use codes that mails carry, and reading a move out of a reply.

A player who opted in (``canasta notify email ... --allow-reply-moves``) gets, in each mail
that shows a table where it is their move, a code such as ``canasta-k7p2xq4mzt9a``: random
(60 bits), stored only as its SHA-256, bound to that player, that match and that version, and
good for ``CODE_TTL_MS``. A reply that carries it (mail clients keep the subject, where the
code also is) and whose first unquoted lines hold a move is played for the player, once: the
code is spent with the move it stores, and is good for that version of the match only, so it
can never store a second move; a reply that is refused (an auto-responder's, a typing slip)
leaves it good, and every answer carries a fresh one besides.

Such a move is signed by the server's attest key (``server.keys``) on the player's behalf:
what vouches for it is the player's verified address and the secret code, not the player's
own key, and the history, the table and ``canasta verify`` say so (server-attested).
"""

from __future__ import annotations

import hashlib
import re
import secrets

from server.store.repository import Repository
from shared.rules import NotationError
from shared.rules.notation import parse_actions
from shared.wire import DEAL_ACTION, MAX_ACTIONS_PER_MOVE

CODE_TTL_MS = 14 * 86_400_000
"""Two weeks: a correspondence turn is days long, and a code is for one table anyway."""
CODE_PREFIX = "canasta-"
_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"
_LENGTH = 12
CODE_PATTERN = re.compile(rf"(?<![a-z0-9-]){CODE_PREFIX}([{_ALPHABET}]{{{_LENGTH}}})(?![a-z0-9])")
MAX_MOVE_CHARS = 1_000
"""The longest move text read from a reply (a whole turn fits easily)."""
_SCANNED = 65_536
"""Characters of a mail searched for codes (a mail is cut far shorter before, anyway)."""


class ReplyError(ValueError):
    """A reply whose move cannot be read; the message says why, for the player."""


def code_hash(code: str) -> str:
    return hashlib.sha256(code.lower().encode()).hexdigest()


def issue(repo: Repository, player_id: int, match_id: str, version: int, now: int) -> str:
    """A new code for ``player_id``'s move in ``match_id`` at ``version`` (its hash stored in
    the caller's transaction); the text that goes into the mail."""
    code = CODE_PREFIX + "".join(secrets.choice(_ALPHABET) for _ in range(_LENGTH))
    repo.add_reply_code(code_hash(code), player_id, match_id, version, now, now + CODE_TTL_MS)
    return code


def codes_in(subject: str, text: str) -> set[str]:
    """The distinct codes in a reply: the subject's if it has any (the mail it answers), else
    the body's (quoted lines included: that is where the answered mail's code is)."""
    found = {CODE_PREFIX + m for m in CODE_PATTERN.findall(subject[:1000].lower())}
    if found:
        return found
    return {CODE_PREFIX + m for m in CODE_PATTERN.findall(text[:_SCANNED].lower())}


def move_of(text: str) -> list[str]:
    """The move in a reply: the first paragraph of unquoted lines (several lines or ``;``
    make one turn). Reading stops at the first quoted line (``>``), a signature (``--``) or
    the line that introduces a quote ("On ... wrote:"). A second paragraph that also reads as
    a move is refused, so that a reply never plays something other than what it seems to."""
    paragraphs: list[list[str]] = [[]]
    for raw in text[:_SCANNED].splitlines():
        line = raw.strip()
        if line.startswith(">") or line in ("--", "-- ") or raw.startswith("-- "):
            break
        if line.lower().endswith("wrote:"):
            break
        if not line:
            if paragraphs[-1]:
                paragraphs.append([])
            continue
        paragraphs[-1].append(line)
    paragraphs = [p for p in paragraphs if p]
    if not paragraphs:
        raise ReplyError("the reply holds no move: write it on the first line, e.g. draw")
    first = _actions(paragraphs[0])
    for later in paragraphs[1:]:
        try:
            _actions(later)
        except ReplyError:
            continue  # a greeting or a remark, not a move
        raise ReplyError("the reply holds several moves: send one move per reply")
    return first


def _actions(lines: list[str]) -> list[str]:
    text = "; ".join(lines)
    if text.lower() == DEAL_ACTION:  # the cut between hands: not an engine action
        return [DEAL_ACTION]
    if len(text) > MAX_MOVE_CHARS:
        raise ReplyError(f"the move is longer than {MAX_MOVE_CHARS} characters")
    actions = [part.strip() for part in text.split(";") if part.strip()]
    if not actions or len(actions) > MAX_ACTIONS_PER_MOVE:
        raise ReplyError("the reply holds no move: write it on the first line, e.g. draw")
    try:
        parse_actions(actions)
    except NotationError as exc:
        raise ReplyError(f"cannot read the move: {exc.message}") from None
    return [a.lower() for a in actions]
