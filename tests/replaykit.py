"""Transcripts for the replay page's tests (``canasta replay``): matches played to their end by
the engine's bot, signed, chained and receipted as a server stores them, in a few milliseconds
(``tests/vectors/generate.py``'s ``MatchBuilder``), and the engine's own positions of a
transcript to compare a page with."""

from __future__ import annotations

from shared.rules import GameState, Phase, make_config, new_match
from shared.transcript import Header, Transcript, next_state
from shared.wire import move_from_bytes
from tests.vectors.generate import MatchBuilder


def played(
    preset: str,
    hands: int = 1,
    people: dict[int, str] | None = None,
    *,
    then: int = 0,
) -> MatchBuilder:
    """A match of ``preset`` over ``hands`` hands, Ann at seat 0 and bots elsewhere unless
    ``people`` says otherwise, played to its end; with ``then``, the last hand is cut and
    played only ``then`` entries (the match is still running)."""
    config = make_config(preset, {"hands_per_match": hands})
    match = MatchBuilder(f"5eed0000replay0{preset}", config, people or {0: "Ann"}, 0)
    while match.state.phase is not Phase.MATCH_OVER:
        if match.state.phase is Phase.DEAL:
            match.cut()
        if then and match.state.hand_number == hands:
            match.play(then)
            return match
        match.play(100_000)
    return match


def finished(preset: str, hands: int = 1, people: dict[int, str] | None = None) -> Transcript:
    return played(preset, hands, people).transcript()


def positions(transcript: Transcript) -> list[GameState]:
    """The engine's position before the first entry and after each, replayed from the file
    without the page's code."""
    header = Header.from_bytes(transcript.header)
    secrets = {h.hand_number: h.secret for h in transcript.hands}
    state = new_match(header.config, first_dealer=header.first_dealer)
    states = [state]
    for entry in transcript.entries:
        move = move_from_bytes(entry.payload)
        secret = secrets[state.hand_number + 1] if move.is_deal else None
        state = next_state(state, header.match_id, move, entry.signature, secret)
        states.append(state)
    return states
