"""Samba and Bolivia (docs/rules.md §3.4, §3.5, §3.8a): the ruleset, melds, going-out search.

Bolivia is Samba with wild-card melds (bolivias) and an escalera needed to go out: the
options ``allow_wild_melds`` and ``sequence_canastas_to_go_out`` switch those on, and the
same code serves both. ``melds`` validates the moves onto sequences, further group melds
of a rank and wild melds (``GameState.extra``); ``going_out`` is the search that tells
whether a hand can be melded out; ``Samba`` below answers classic's hooks with them.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...actions import Action, Combine, LayOff, Meld, TakePile
from ...cards import VALUE, Card, sort_cards
from ...config import RuleConfig
from ...edits import Plan
from ...melds import SEQUENCE, WILD, check_wild_meld, is_canasta, is_natural, meld_kind
from ...ruleset import MeldShown, Ruleset, Trial, Verdict, register
from ...state import GameState, Melds
from .going_out import variant_can_go_out
from .listing import samba_listing
from .melds import (
    canasta_kind,
    check_sequence,
    meld_label,
    plan_combine,
    plan_variant_lay_off,
    plan_variant_meld,
    plan_variant_take,
    sequence_candidates,
    sequence_verdicts,
    side_canastas,
    way_out_steps,
)


class Samba(Ruleset):
    """Samba and Bolivia: classic's table plus further melds in ``GameState.extra``.

    The move hooks answer only where the position keeps further melds (a config of this
    ruleset without them, such as a classic game with Hand and Foot's wild limit, plays the
    classic moves and only needs the going-out search here)."""

    name = "samba"

    def plan_take(self, s: GameState, seat: int, action: TakePile, listed: bool) -> Plan | None:
        return plan_variant_take(s, seat, action, listed) if s.extra else None

    def plan_meld(self, s: GameState, seat: int, action: Meld, listed: bool) -> Plan | None:
        return plan_variant_meld(s, seat, action, listed) if s.extra else None

    def plan_lay_off(self, s: GameState, seat: int, action: LayOff, listed: bool) -> Plan | None:
        return plan_variant_lay_off(s, seat, action, listed) if s.extra else None

    def plan_combine(self, s: GameState, seat: int, action: Combine, listed: bool) -> Plan:
        return plan_combine(s, seat, action, listed)

    def further_candidates(
        self, s: GameState, side: int, hand: Sequence[Card]
    ) -> tuple[list[Action], list[Action]]:
        return [], sequence_candidates(s, side, hand) if s.extra else []

    def way_out_steps(self, s: GameState, seat: int) -> list[Action]:
        return way_out_steps(s, s.side_of[seat], s.hands[seat])

    def candidate_verdicts(self, s: GameState, seat: int) -> Verdict | None:
        return sequence_verdicts(s, seat)

    def play_listing(
        self, s: GameState, seat: int, may_ask: bool, trial: Trial
    ) -> list[Action] | None:
        """The listing after the draw decided in place (``listing.samba_listing``), where
        this class's hooks on the candidates are Samba's own (the listing's argument that no
        candidate repeats another is about these): a subclass that makes its own candidates
        or limits discards gets ``legal``'s lists (or its own ``play_listing``)."""
        kind = type(self)
        if (
            kind.meld_candidates is not Ruleset.meld_candidates
            or kind.further_candidates is not Samba.further_candidates
            or kind.discards_need_check is not Ruleset.discards_need_check
        ):
            return None
        return samba_listing(self, s, seat, may_ask, trial)

    def why_melds_keep_in(self, s: GameState, side: int) -> str | None:
        """Bolivia (§3.5): one of the canastas must be an escalera (a seven-card sequence)."""
        config = s.config
        wanted = config.sequence_canastas_to_go_out
        if not s.extra or not wanted:
            return None
        need = config.canastas_to_go_out
        total, sequences = side_canastas(config, s, side)
        if total < need:
            return f"your side needs {need} canasta{'s' if need > 1 else ''} and has {total}"
        if sequences < wanted:
            return (
                f"your side needs {wanted} escalera{'s' if wanted > 1 else ''} (a seven-card "
                f"sequence) among its canastas and has {sequences}"
            )
        return ""

    def can_place_out(
        self,
        config: RuleConfig,
        hand: Sequence[Card],
        melds: Melds,
        extra: tuple[tuple[Card, ...], ...],
        minimum: int | None,
        allow_discard: bool,
    ) -> bool | None:
        """Samba's search knows sequences, several melds of a rank, wild melds, the escalera
        and a wild limit that grows with the naturals; classic's knows fixed limits only."""
        if (
            config.sequence_canastas_to_go_out
            or config.variant_melds
            or config.wild_limit == "fewer_than_naturals_max3"
        ):
            return variant_can_go_out(config, hand, melds, extra, minimum, allow_discard)
        return None

    def further_canastas(self, s: GameState, side: int) -> tuple[int, int, int, int, int]:
        points = naturals = mixed = sequences = wild = 0
        for m in s.extra_of(side):
            points += sum(VALUE[c] for c in m)
            if is_canasta(m):
                kind = meld_kind(m)
                if kind == SEQUENCE:
                    sequences += 1
                elif kind == WILD:
                    wild += 1
                elif is_natural(m):
                    naturals += 1
                else:
                    mixed += 1
        return points, naturals, mixed, sequences, wild

    def check_position_meld(self, config: RuleConfig, cards: Sequence[Card]) -> bool:
        kind = meld_kind(cards)
        if kind == SEQUENCE and config.allow_sequences:
            check_sequence(cards)
            return True
        if kind == WILD and config.allow_wild_melds:
            check_wild_meld(cards, 0)
            return True
        return False

    def meld_views(self, s: GameState, side: int) -> tuple[MeldShown, ...]:
        """The further melds follow the groups, named as the notation names them (§3.4,
        §3.5); a sequence's cards in rank order, as it is laid out."""
        shown = list(super().meld_views(s, side))
        seen: dict[str, int] = {}
        for cards in s.extra_of(side):
            if meld_kind(cards) == SEQUENCE:
                label = meld_label(cards, 1)
                order = tuple(sorted(cards, key=lambda c: c % 13))
            else:
                base = meld_label(cards, 1)
                seen[base] = seen.get(base, 1 if base != "wild" else 0) + 1
                label = meld_label(cards, seen[base])
                order = sort_cards(cards)
            shown.append(MeldShown(label, order, canasta_kind(s.config, cards), meld_kind(cards)))
        return tuple(shown)


register(Samba)  # (a call, not a decorator: a compiled build keeps the class native)
