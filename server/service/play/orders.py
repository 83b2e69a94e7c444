"""Standing orders: moves a player asks the server to make for their seat without asking them
(``shared.rules.orders`` says where one applies; ``server.service.play.bots`` makes them).

A player sets orders as a default for every match (``server.service.people.preferences``) or for one
match (``set``), or lets a match follow the default again. Orders are the player's own: only
their view of the match carries them. Setting them changes the match (its revision), so every
server process reads the seat afresh, and the change is published, so that an order which
applies at once (the player's turn, with no take possible) is carried out at once.
"""

from __future__ import annotations

from collections.abc import Iterable

from server.domain import MatchStatus, Player, Seat, StandingOrders
from server.service import matches
from server.service.context import ServiceContext
from server.service.errors import ConflictError, InvalidRequestError
from shared.rules.orders import ANSWERS

ASK = "ask"
"""What a player may write for the answer order that asks them (stored as ``""``)."""


def answer_order(text: str) -> str:
    """The stored answer order for what a player wrote (``ask``, ``yes`` or ``no``)."""
    answer = "" if text == ASK else text
    if answer not in ANSWERS:
        raise InvalidRequestError(
            f"partner's question is answered yes, no or ask; not {text[:20]!r}"
        )
    return answer


class Orders:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    def set(
        self,
        player: Player,
        match_id: str,
        *,
        draw: bool | None = None,
        answer: str | None = None,
        follow_default: bool = False,
    ) -> Seat:
        """Give the caller's seat in ``match_id`` its own orders (what is not given stays as
        it is in force now), or let it follow the player's default again; the seat after."""
        if follow_default and (draw is not None or answer is not None):
            raise InvalidRequestError("follow the default, or set orders; not both at once")
        stored_answer = None if answer is None else answer_order(answer)
        ctx = self.ctx
        now = ctx.clock()
        with ctx.db.write() as session:
            repo = ctx.repo(session)
            match = matches.require_match(repo, match_id, for_update=True)
            seat = matches.require_seat(match, player.id)
            if match.status is MatchStatus.FINISHED:
                raise ConflictError("this match is over: it has no more turns to order")
            current = match.seats[seat].orders
            orders = (
                None
                if follow_default
                else StandingOrders(
                    current.draw if draw is None else draw,
                    current.answer if stored_answer is None else stored_answer,
                )
            )
            repo.set_seat_orders(match.id, seat, orders)
            matches.store_change(repo, match, match, now)
            match = matches.require_match(repo, match_id)
        announce(ctx, [match.id])
        return match.seats[seat]


def announce(ctx: ServiceContext, match_ids: Iterable[str]) -> None:
    """Publish the matches' state after their orders changed: the bot runner hears of those
    where the server now moves (an order that applies at once)."""
    with ctx.db.read() as session:
        repo = ctx.repo(session)
        for match_id in match_ids:
            match = repo.match(match_id)
            if match is None or match.status is not MatchStatus.PLAYING:
                continue
            ctx.matches.put(match.id, match)
            ctx.notifier.publish(matches.change(match, matches.load_state(ctx, repo, match)))
