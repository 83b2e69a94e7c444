"""What to tell whom: the notifications a change of a match causes.

Each function looks at a match before and after a change and returns ``Notice`` records; the
caller writes them in the same transaction as the change (the outbox), and
``server.service.news.outbox`` delivers them. A notice carries only what every player of the match
may know (whose turn, the hand number, the scores, the deadline): the text of a mail adds the
recipient's own hand when it is written, and nobody else's.

Kinds:

* ``your_turn``: the seat of a human player (not covered by a bot) became the one to act (or,
  under a standing order, the server has made the one move its player had: the draw);
* ``partner_asks``: the same, when partner asked "may I go out?" and it is theirs to answer;
* ``hand_ended``: a hand was scored (to every human player of the match);
* ``match_recovered``: after the server was restored from a backup, the moves it had lost were
  stored again from a player's copy (to every human player, once per recovery);
* ``match_ended``: the match is over (to every human player);
* ``abort_asked``: another player asks to abandon the match before its first deal;
* ``match_aborted``: the match was abandoned before its first deal (agreed, or its first cut
  was overdue), or at any time by the server's operator (``by``: ``operator``);
* ``bot_played``: a bot played a turn of the recipient's seat, which it covers;
* ``reminder``: the recipient's deadline is nearer than one of the server's ``reminder_hours``;
* ``deadline_passed``: the recipient's turn ran out and a bot now plays their seat (or resigns
  it, under the policy ``forfeit``).
"""

from __future__ import annotations

from server.domain import Cover, Match, MatchStatus, Notice, SeatKind
from server.service import matches
from shared.rules import GameState, Phase


def after_move(
    before: Match,
    before_state: GameState,
    after: Match,
    after_state: GameState,
    turn_over: bool,
    played_for: int | None = None,
    *,
    by_order: bool = False,
) -> list[Notice]:
    """The notices a stored move causes (``turn_over``: another turn began, as the caller's
    ``matches.turn_key`` found; ``played_for``: the human seat a bot moved for; ``by_order``:
    the move was a standing order's, whose player now hears of the turn it began)."""
    found: list[Notice] = []
    if played_for is not None and turn_over:
        absent = after.seats[played_for]
        # Under ``forfeit`` the bot only resigns, and "your time ran out" has said so: no
        # "a bot played your turn" inviting a ``cover off`` the ended match would refuse.
        if absent.player_id is not None and absent.covered != Cover.FORFEIT:
            facts = _facts(after, after_state)
            found.append(Notice(absent.player_id, after.id, "bot_played", facts, absent.reachable))
    scored = after_state.last_hand
    if scored is not None and scored.hand_number == before_state.hand_number != (
        before_state.last_hand.hand_number if before_state.last_hand is not None else 0
    ):
        found += _everyone(after, "hand_ended", after_state)
    if after.status is MatchStatus.FINISHED and before.status is not MatchStatus.FINISHED:
        found += _everyone(after, "match_ended", after_state)
    if turn_over or by_order:
        found += turn_started(after, after_state)
    return found


def turn_started(match: Match, state: GameState) -> list[Notice]:
    """``your_turn`` (or ``partner_asks``) for the player now to act, if a person acts and
    no standing order moves for them first (its move tells them, with the card it drew)."""
    seat = matches.to_act(match, state)
    if seat is None or matches.standing_order(match, state) is not None:
        return []
    taken = match.seats[seat]
    if taken.kind is not SeatKind.HUMAN or taken.covered or taken.player_id is None:
        return []
    kind = "partner_asks" if state.phase is Phase.ANSWER else "your_turn"
    return [Notice(taken.player_id, match.id, kind, _facts(match, state), taken.reachable)]


def abort_asked(match: Match, seat: int) -> list[Notice]:
    """The other people seated: ``seat``'s player asks to abandon the match."""
    facts: dict[str, object] = {"seat": seat, "version": match.version}
    return [
        Notice(s.player_id, match.id, "abort_asked", facts, s.reachable)
        for s in match.seats
        if s.kind is SeatKind.HUMAN and s.player_id is not None and s.seat != seat
    ]


def match_aborted(match: Match, state: GameState, *, by_operator: bool = False) -> list[Notice]:
    """Everyone seated: the match was abandoned (by agreement or an overdue first cut before
    its first deal; or at any time, by the server's operator)."""
    return _everyone(match, "match_aborted", state, **({"by": "operator"} if by_operator else {}))


def reminder(match: Match, state: GameState, seat: int) -> list[Notice]:
    taken = match.seats[seat]
    if taken.player_id is None:
        return []
    return [Notice(taken.player_id, match.id, "reminder", _facts(match, state), taken.reachable)]


def deadline_passed(match: Match, state: GameState, seat: int, cover: str) -> list[Notice]:
    taken = match.seats[seat]
    if taken.player_id is None:
        return []
    facts = {**_facts(match, state), "cover": cover}
    return [Notice(taken.player_id, match.id, "deadline_passed", facts, taken.reachable)]


def recovered(match: Match, state: GameState, first: int) -> list[Notice]:
    """Everyone seated: after a restore from a backup, the moves the server had lost are
    coming back from players' copies, from entry ``first`` on."""
    return _everyone(match, "match_recovered", state, first=first)


def _everyone(match: Match, kind: str, state: GameState, **extra: object) -> list[Notice]:
    facts = {**_facts(match, state), **extra}
    return [
        Notice(s.player_id, match.id, kind, facts, s.reachable)
        for s in match.seats
        if s.kind is SeatKind.HUMAN and s.player_id is not None
    ]


def _facts(match: Match, state: GameState) -> dict[str, object]:
    """What every player of the match may know, for the text of any notice about it."""
    facts: dict[str, object] = {
        "hand_number": state.hand_number,
        "scores": list(state.scores),
        "version": match.version,
    }
    to_act = matches.to_act(match, state)
    if to_act is not None:
        facts["to_act"] = to_act
    if match.clock is not None:
        facts["due_ms"] = match.clock.due_ms
    if state.phase is Phase.MATCH_OVER:
        facts["winners"] = list(state.winners)
    return facts
