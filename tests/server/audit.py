"""The leak audit: what a seat receives holds nothing it could not see at a real table."""

from __future__ import annotations

from collections.abc import Iterator

from google.protobuf.message import Message

from server.app import App
from server.store.repository import Repository
from shared.pb import canasta_pb2 as pb
from shared.rules import player_view
from shared.wire import view_to_pb
from tests.testkit import authoritative_state

NOBODY = -1
"""The seat of a caller who sits in no seat: every player view and private card is a leak."""


def _walk(message: Message) -> Iterator[Message]:
    yield message
    for field, value in message.ListFields():
        if field.message_type is None or field.message_type.GetOptions().map_entry:
            continue
        children = value if field.is_repeated else [value]
        for child in children:
            yield from _walk(child)


class LeakAudit:
    """Checks every message a seat (or ``NOBODY``) receives: no other seat's view, no other
    seat's private cards, no deal secret before its reveal."""

    def __init__(self, app: App, match_id: str) -> None:
        self.app = app
        self.match_id = match_id
        self.messages = 0

    def _hidden_secrets(self) -> list[bytes]:
        with self.app.db.read() as session:
            hands = Repository(session, b"").hands(self.match_id)
        return [h.secret for h in hands if not h.revealed]

    def check(self, seat: int, message: Message) -> None:
        self.messages += 1
        data = message.SerializeToString()
        for secret in self._hidden_secrets():
            assert secret not in data, "an unrevealed deal secret left the server"
        for part in _walk(message):
            if isinstance(part, pb.Event):
                assert part.seat == seat or not part.private_cards, (
                    f"seat {seat} was shown seat {part.seat}'s private cards"
                )
            elif isinstance(part, pb.PlayerView):
                assert part.seat == seat
            elif isinstance(part, pb.HandRecord) and part.secret:
                assert part.secret not in self._hidden_secrets()

    def exact_view(self, seat: int, view: pb.MatchView) -> None:
        """The view is exactly the engine's ``player_view`` of the server's state now."""
        state = authoritative_state(self.app.service, self.match_id)
        assert view.view == view_to_pb(player_view(state, seat))
