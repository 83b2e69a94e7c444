"""The only place that converts rows to domain records and back.

A ``Repository`` wraps one session (one transaction, from ``Database.read()`` or ``write()``);
it never commits. Methods named ``add_*``/``set_*``/``save_*`` write, everything else reads.
Its writes that are prepared SQL alone are a ``PreparedRepository`` of their own, which runs
without a session too (``Database.write_statements``: how a move is stored).

It is a short composition of rooms, one concern each: ``players``, ``matches``, ``outbox``,
``admin``, ``spectators``, ``ladder``, ``talk``, standing on ``base`` (the session, and
reading matches), ``prepared`` (the move path's prepared statements) and ``records`` (rows to
records).
"""

from __future__ import annotations

from server.store.repository.admin import AdminRoom
from server.store.repository.ladder import LadderRoom
from server.store.repository.matches import MatchesRoom
from server.store.repository.outbox import OutboxRoom
from server.store.repository.players import PlayersRoom
from server.store.repository.prepared import (
    PreparedRepository,
    StoredMove,
    current_head,
    token_owner,
)
from server.store.repository.records import (
    ReplyCode,
    Snapshot,
    StoredSnapshot,
    read_snapshot,
)
from server.store.repository.spectators import SpectatorsRoom
from server.store.repository.talk import TalkRoom


class Repository(
    PlayersRoom, MatchesRoom, OutboxRoom, AdminRoom, SpectatorsRoom, LadderRoom, TalkRoom
):
    """Every room over one session: what callers use (``ctx.repo(session)``)."""


__all__ = [
    "PreparedRepository",
    "ReplyCode",
    "Repository",
    "Snapshot",
    "StoredMove",
    "StoredSnapshot",
    "current_head",
    "read_snapshot",
    "token_owner",
]
