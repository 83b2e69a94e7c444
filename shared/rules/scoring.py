"""Ending a hand: scoring it and deciding the match (docs/rules.md §1.13, §1.14, §3.2, §3.3).

``score_hand`` and ``match_winners`` are pure functions of a finished position: they read
the melds, red threes and hands left on the table and return a ``HandResult`` per score
column. ``end_hand`` applies them, whatever ended the hand (going out, the stock, a red three
as its last card): it adds the hand to the cumulative scores, then ends the match or waits
for the next deal. Red threes' own scoring rules are in ``threes``.
"""

from __future__ import annotations

from collections.abc import Sequence

from .cards import IS_BLACK3, IS_WILD, RANK, SEVEN, VALUE, Card
from .config import RuleConfig
from .melds import CANASTA_SIZE, is_canasta, is_natural
from .ruleset import rules
from .state import EndReason, Event, GameState, HandResult, Phase, SideScore
from .threes import lay_out_threes_left_in_hands, red_three_score


def score_hand(
    state: GameState, reason: EndReason, went_out: int | None, concealed: bool
) -> HandResult:
    """Score every column of a finished hand (§1.13).

    For each side: card values of its melds, canasta bonuses (500 natural, 300 mixed; Samba's
    sequence 1500, Bolivia's wild canasta 2500), red threes (100 each, all four 800, minus if
    the side made no meld; Samba: all six 1000, minus below two canastas), the going-out bonus
    (100, or 200 concealed; 200 in Samba), less the value of the cards left in its players'
    hands (Bolivia: a black three 100 when someone went out) and, in Hand and Foot, in their
    unplayed feet (§3.8a). Modern American scores by its own rules (``american.score_side``).
    Cutthroat (§3.2): each partner scores the partnership's total, red threes individually.
    """
    config = state.config
    ruleset = rules(state)
    columns = []
    for column, seats in enumerate(config.partnerships):
        side = state.side_of[seats[0]]
        parts = ruleset.score_side(state, side, went_out)
        if parts is not None:  # a ruleset that scores in its own way (Modern American, §3.6)
            columns.append(
                SideScore(
                    column=column,
                    seats=state.side_seats(side),
                    cumulative=state.scores[column] + parts["hand_total"],
                    **parts,
                )
            )
            continue
        melds = state.melds[side]
        meld_points = sum(VALUE[c] for meld in melds for c in meld)
        naturals = sum(1 for m in melds if is_canasta(m) and is_natural(m))
        mixed = sum(1 for m in melds if is_canasta(m) and not is_natural(m))
        points, more_naturals, more_mixed, sequences, wild = ruleset.further_canastas(state, side)
        meld_points += points
        naturals += more_naturals
        mixed += more_mixed
        canasta_bonus = naturals * config.natural_canasta_bonus + mixed * config.mixed_canasta_bonus
        canasta_bonus += sequences * config.sequence_canasta_bonus
        canasta_bonus += wild * config.wild_canasta_bonus
        if config.clean_sevens_bonus is not None:  # a Hand and Foot option (§3.7)
            canasta_bonus += sevens_bonus(config, (*melds, *state.extra_of(side)))
        threes, red3_points = red_three_score(
            state, seats, side, naturals + mixed + sequences + wild
        )
        bonus = 0
        if went_out is not None and state.side_of[went_out] == side:
            bonus = config.concealed_bonus_total if concealed else config.going_out_bonus
        penalty = sum(VALUE[c] for s in state.side_seats(side) for c in state.hands[s])
        penalty += ruleset.unplayed_penalty(state, side)  # Hand and Foot's feet (§3.8a)
        if went_out is not None and config.black3_went_out_value != 5:
            # §3.5, §3.8a: Bolivia's black threes cost 100 each when someone went out
            black = sum(1 for s in state.side_seats(side) for c in state.hands[s] if IS_BLACK3[c])
            penalty += black * (config.black3_went_out_value - 5)
        total = meld_points + canasta_bonus + red3_points + bonus - penalty
        columns.append(
            SideScore(
                column=column,
                seats=state.side_seats(side),
                meld_points=meld_points,
                natural_canastas=naturals,
                mixed_canastas=mixed,
                canasta_bonus=canasta_bonus,
                red_threes=threes,
                red_three_points=red3_points,
                going_out_bonus=bonus,
                hand_penalty=penalty,
                hand_total=total,
                cumulative=state.scores[column] + total,
                sequence_canastas=sequences,
                wild_canastas=wild,
            )
        )
    return HandResult(
        hand_number=state.hand_number,
        reason=reason,
        went_out=went_out,
        concealed=concealed,
        columns=tuple(columns),
    )


def sevens_bonus(config: RuleConfig, melds: Sequence[Sequence[Card]]) -> int:
    """What clean books of sevens earn beyond a clean book's bonus (HF-DW's 1500 option)."""
    if config.clean_sevens_bonus is None:
        return 0
    books = sum(
        1
        for m in melds
        if len(m) >= CANASTA_SIZE and all(RANK[c] == SEVEN and not IS_WILD[c] for c in m)
    )
    return books * (config.clean_sevens_bonus - config.natural_canasta_bonus)


def hand_count_winners(state: GameState) -> tuple[int, ...]:
    """§3.7: once the match's last hand is scored, the columns with the highest total (two or
    more: a tie, which ``tie_policy`` settles); empty before that."""
    limit = state.config.hands_per_match
    if limit is None or state.hand_number < limit:
        return ()
    best = max(state.scores)
    return tuple(i for i, score in enumerate(state.scores) if score == best)


def match_winners(scores: tuple[int, ...], target: int) -> tuple[int, ...]:
    """The columns with the highest total once any column reached the target (§1.14).

    Empty while no column has reached the target. Two or more columns: an exact tie.

    >>> match_winners((5010, 5400), 5000), match_winners((4990, 3000), 5000)
    ((1,), ())
    """
    if max(scores) < target:
        return ()
    best = max(scores)
    return tuple(i for i, s in enumerate(scores) if s == best)


def end_hand(
    s: GameState, reason: EndReason, went_out: int | None = None, concealed: bool = False
) -> None:
    """Score the hand (§1.13), then end the match or wait for the next deal (§1.14).

    An exact tie at or above the target follows ``tie_policy`` (D20): another hand (the
    default), a drawn match, or another hand with the target raised by 500. With
    ``hands_per_match`` (Hand and Foot, §3.7) the match ends after that many hands instead,
    a tie again following ``tie_policy``.
    """
    lay_out_threes_left_in_hands(s)
    result = score_hand(s, reason, went_out, concealed)
    s.last_hand = result
    s.scores = tuple(col.cumulative for col in result.columns)
    s.events = (
        *s.events,
        Event(went_out if went_out is not None else s.turn, "end", text=reason.value),
    )
    if s.config.hands_per_match is None:
        winners = match_winners(s.scores, s.target)
    else:  # §3.7: a fixed number of hands, the highest total wins
        winners = hand_count_winners(s)
    policy = s.config.tie_policy
    if len(winners) == 1 or (winners and policy == "draw"):
        s.winners = winners
        s.phase = Phase.MATCH_OVER
        return
    if winners and policy == "raise_target_500":
        s.target += 500
    s.phase = Phase.DEAL
    s.dealer = (s.dealer + 1) % s.config.players
