"""The seam between classic Canasta and its variants: a ruleset's named hooks (docs/rules.md §3).

The classic modules (``pile``, ``melding``, ``goingout``, ``scoring``, ``dealing``,
``engine``, ``legal``, ``view``...) hold the classic rules, and at every point where a form
of the game differs they ask the configuration's ruleset (``rules_of(config)``) through one
of the hooks below. ``Ruleset`` itself is classic Canasta: each hook either gives the
classic answer or returns ``None``, meaning "the classic rule, as the calling module has
it". A variant (``shared.rules.variants``) subclasses ``Ruleset``, overrides the hooks where
its rules differ and registers itself by name, so a reader asked "where is Bolivia's
going-out rule?" opens ``variants/samba.py`` and finds it there.

The direction is one way: the classic modules import this module only, never a variant;
each variant imports the classic modules it builds on (python-chess's variant boards do the
same). Which ruleset a configuration plays is ``RuleConfig.ruleset``; the variants register
when the package is imported (``shared.rules.variants``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, ClassVar, NamedTuple

from .cards import IS_RED3, Card, rank_text, sort_cards
from .config import RuleConfig
from .errors import IllegalMoveError
from .melds import is_canasta, is_natural
from .state import GameState, Melds

if TYPE_CHECKING:  # type names only: these modules stand above this one
    from .actions import Action, Combine, LayOff, Meld, TakePile
    from .edits import Plan


Verdict = Callable[["Action"], "bool | None"]
"""A ruleset's verdict on a candidate the move lists offer: legal or not, or ``None`` when
only the engine's check can tell (``Ruleset.candidate_verdicts``)."""


Trial = Callable[["GameState", int, "Action"], bool]
"""The engine's check of one move (``engine.is_legal``), handed to a hook that lists moves
(``Ruleset.play_listing``): the engine stands above this module and the variants."""


class Ruleset:
    """Classic Canasta's answers to the questions on which the forms of the game differ.

    A hook that returns ``None`` leaves the decision to the classic rule in the module that
    asked (named in the hook's docstring). Hooks take the position being changed (``s``) or
    read, never a copy: the engine calls them on its private clone.
    """

    name: ClassVar[str] = "classic"
    packet_sizes: ClassVar[tuple[int, ...]] = ()
    """The packets of cards set aside at the deal (Modern American's talon, §3.6); none."""

    # -- dealing and the turn (§1.5, §1.6) -------------------------------------------------------

    def deal_extras(
        self, config: RuleConfig, order: Sequence[Card], start: int, dealer: int
    ) -> tuple[tuple[tuple[Card, ...], ...], int]:
        """Cards dealt face down besides the hands (Hand and Foot's feet), from ``order[start:]``,
        and how many cards that took: none in classic."""
        return (), 0

    def set_aside(self, s: GameState, packets: tuple[tuple[Card, ...], ...] | None) -> bool:
        """Set cards aside at the deal instead of turning an upcard (Modern American's talon);
        True when the ruleset did so (then no upcard is turned). Classic turns an upcard."""
        return False

    def packets_aside(
        self, rest: tuple[Card, ...], named: Sequence[Sequence[Card]] | None
    ) -> tuple[tuple[tuple[Card, ...], ...] | None, tuple[Card, ...]]:
        """A scenario position's cards set aside (``named``, or taken from the unnamed
        ``rest``), and the rest; classic sets none aside."""
        return None, rest

    def wild_meld_slot(self) -> int | None:
        """The index of ``Melds`` that holds a side's meld of wild cards where a ruleset keeps
        one there (Modern American, §3.6); ``None`` in classic."""
        return None

    def laid_out_threes(self) -> Sequence[bool]:
        """Per card, whether a three of that kind is laid out when held (§1.7): red threes in
        classic, every three in Modern American (§3.6)."""
        return IS_RED3

    def start_turn(self, s: GameState, seat: int) -> None:
        """Rules at the start of ``seat``'s turn after the red threes (Modern American's talon
        draw, §3.6); nothing in classic."""

    # -- sides (§3.2) ----------------------------------------------------------------------------

    def form_sides(self, s: GameState, seat: int) -> None:
        """``seat`` took the pile or went out: how the sides form (cutthroat, §3.2). Classic
        sides are fixed at the start of the match."""

    # -- the pile (§1.8) -------------------------------------------------------------------------

    def frozen_reason(self, s: GameState, side: int) -> str | None:
        """Why the pile is frozen for ``side`` (``""``: it is not); ``None``: §1.8.1 as
        ``pile.frozen_reason`` has it."""
        return None

    def plan_take(self, s: GameState, seat: int, action: TakePile, listed: bool) -> Plan | None:
        """Every check on taking the pile (``None``: §1.8.2 as ``pile.plan_take`` has it).

        ``listed`` (in each move hook): the engine listed the move itself
        (``engine.apply_listed``), so the plan is only built, without the checks the listing
        made; what building needs (the cards held, the meld named) still raises."""
        return None

    def take_candidates(self, s: GameState, seat: int) -> list[TakePile] | None:
        """Candidate pile takes for the move lists (``None``: ``pile.pile_takes``'s)."""
        return None

    # -- melding (§1.9, §1.10) -------------------------------------------------------------------

    def plan_meld(self, s: GameState, seat: int, action: Meld, listed: bool) -> Plan | None:
        """Validate a MELD (``None``: ``melding.plan_meld``'s classic rules)."""
        return None

    def plan_lay_off(self, s: GameState, seat: int, action: LayOff, listed: bool) -> Plan | None:
        """Validate a LAY_OFF (``None``: ``melding.plan_lay_off``'s classic rules)."""
        return None

    def plan_combine(self, s: GameState, seat: int, action: Combine, listed: bool) -> Plan:
        """Validate joining two melds of a side: only games with several melds of a rank."""
        raise IllegalMoveError("in this game a side has one meld per rank: nothing to combine")

    def side_opened(self, s: GameState, seat: int, cards: Sequence[Card], by_take: bool) -> None:
        """``seat`` just made its side's initial meld with ``cards`` (Modern American notes it
        for its aces and talon, §3.6); nothing in classic."""

    def wilds_may_join(self, s: GameState, side: int, rank: int) -> bool:
        """Whether wild cards may join the side's meld of ``rank`` at all (for the bot; the
        rules' check is the plan hooks'): Modern American's aces only after a wild opening."""
        return True

    def meld_candidates(self, s: GameState, seat: int) -> tuple[list[Action], list[Action]] | None:
        """Melds and lay-offs for the move lists: ``(legal_by_construction, to_check)``;
        ``None``: ``legal``'s classic candidates."""
        return None

    def further_candidates(
        self, s: GameState, side: int, hand: Sequence[Card]
    ) -> tuple[list[Action], list[Action]]:
        """Moves beyond one group meld per rank worth listing (sequences, further melds,
        books, the steps of a way out): ``(legal_by_construction, to_check)``, the second
        checked by the engine; none in classic."""
        return [], []

    def way_out_steps(self, s: GameState, seat: int) -> list[Action]:
        """Every single step of a way out for ``seat``, who must go out, for the move lists
        to fall back on when their usual candidates are all refused (``legal._way_out``);
        none in classic, whose candidates always hold the steps of a way out."""
        return []

    def candidate_verdicts(self, s: GameState, seat: int) -> Verdict | None:
        """For ``seat``'s listed candidates, a verdict the ruleset knows without the engine's
        check (``None`` from it: check), so that the move lists keep such a candidate in its
        place, unchecked (§1.6 T2); none in classic, whose moves legal by construction are
        listed as such."""
        return None

    def play_listing(
        self, s: GameState, seat: int, may_ask: bool, trial: Trial
    ) -> list[Action] | None:
        """The whole listing after the draw with every candidate decided in place, where the
        ruleset can give it: exactly what ``legal``'s lists give from this ruleset's other
        hooks, in their order (asking partner when ``may_ask`` and its refusal allow, the
        moves legal by construction, the discards, then the candidates the engine accepts,
        ``trial`` asked where only it can tell); ``None``: ``legal``'s lists. None in
        classic, whose listing ``legal`` decides in place itself."""
        return None

    def discards_need_check(self, s: GameState) -> bool:
        """Whether the listed discards need the engine's check (a ruleset's card limit on
        discards); classic's discards are legal by construction."""
        return False

    def check_position_meld(self, config: RuleConfig, cards: Sequence[Card]) -> bool:
        """Check a meld a scenario position names when it is of a kind the ruleset has beyond
        a group of one rank (a sequence, a wild meld) and return True; False: a group meld,
        for the classic check."""
        return False

    # -- discarding and going out (§1.11) --------------------------------------------------------

    def check_discard(self, s: GameState, seat: int, card: Card) -> None:
        """A ruleset's own limit on which card may be discarded; none in classic."""

    def holds_reserve(self, s: GameState, seat: int) -> bool:
        """Whether ``seat`` still has cards waiting face down (Hand and Foot's foot, §3.7):
        emptying its hand then brings them up instead of going out."""
        return False

    def take_up_reserve(self, s: GameState, seat: int) -> None:
        """Bring up the cards ``holds_reserve`` reports (§3.8a)."""

    def why_melds_keep_in(self, s: GameState, side: int) -> str | None:
        """Why the side's melds do not let it go out (``""``: they do); ``None``: the count of
        canastas ``canastas_to_go_out`` asks for, as ``goingout`` has it (§1.11.1)."""
        return None

    def guard_turn_end(self, s: GameState, seat: int) -> bool:
        """The dead-end guard after a play (§1.11.3) where a ruleset has its own; True when it
        settled the play, False to leave it to ``goingout.after_put_down``."""
        return False

    def can_go_out(
        self, s: GameState, seat: int, hand: Sequence[Card], minimum: int | None
    ) -> bool | None:
        """Whether ``hand`` can go out this turn, where the search needs the whole position
        (Modern American); ``None``: ``goingout.can_go_out`` on the side's melds."""
        return None

    def can_place_out(
        self,
        config: RuleConfig,
        hand: Sequence[Card],
        melds: Melds,
        extra: tuple[tuple[Card, ...], ...],
        minimum: int | None,
        allow_discard: bool,
    ) -> bool | None:
        """The going-out search on a side's melds where a ruleset melds differently (Samba's
        sequences, Hand and Foot's closed books); ``None``: classic's search."""
        return None

    # -- scoring (§1.13) -------------------------------------------------------------------------

    def score_side(self, s: GameState, side: int, went_out: int | None) -> dict[str, int] | None:
        """A side's whole score for the hand where a ruleset scores in its own way (Modern
        American); ``None``: ``scoring.score_hand``'s classic count."""
        return None

    def further_canastas(self, s: GameState, side: int) -> tuple[int, int, int, int, int]:
        """The side's melds beyond one group per rank: (card points, natural, mixed, sequence
        and wild canastas); none in classic."""
        return 0, 0, 0, 0, 0

    def unplayed_penalty(self, s: GameState, side: int) -> int:
        """Points the side loses for cards never brought into play (a foot, §3.8a); none."""
        return 0

    # -- what a player sees ----------------------------------------------------------------------

    def meld_views(self, s: GameState, side: int) -> tuple[MeldShown, ...]:
        """A side's melds as players see them (``view.MeldView``'s fields), in table order:
        classic's one group meld per rank, named by its rank."""
        return tuple(
            MeldShown(
                rank_text(rank),
                sort_cards(cards),
                ("natural" if is_natural(cards) else "mixed") if is_canasta(cards) else "",
                "group",
            )
            for rank, cards in enumerate(s.melds[side])
            if cards
        )


class MeldShown(NamedTuple):
    """One meld as a player sees it: its name, its cards in display order, its canasta kind
    (``""`` before seven cards) and whether it is a group, a sequence or a wild meld."""

    label: str
    cards: tuple[Card, ...]
    canasta: str
    kind: str


_REGISTRY: dict[str, Ruleset] = {"classic": Ruleset()}


def register(ruleset: type[Ruleset]) -> type[Ruleset]:
    """Make a ruleset class the one its name plays (a class decorator for the variants)."""
    _REGISTRY[ruleset.name] = ruleset()
    return ruleset


def rules_of(config: RuleConfig) -> Ruleset:
    """The ruleset ``config`` plays: one registered instance per ruleset, shared by every
    config that plays it (so what the move lists learn about a ruleset, ``legal._FAST``,
    stays one entry per ruleset however many configs a long-running server reads)."""
    found: Ruleset | None = config._hooks
    if found is None:
        found = _REGISTRY[config.ruleset]
        object.__setattr__(config, "_hooks", found)  # (a frozen dataclass: set once, here)
    return found


def form_sides(s: GameState, seat: int) -> None:
    """``seat`` took the pile or went out: the sides form by the ``form_sides`` hook of
    cutthroat's ruleset where the config plays cutthroat (§3.2), which combines with
    another game's ruleset (Samba's going-out search, for a wild limit by naturals), else by
    the game's own. Asked apart from ``rules_of`` so that no class is made at run time
    from two rulesets (a compiled build cannot subclass its native classes then)."""
    sides = _REGISTRY.get("cutthroat") if s.config.cutthroat else None
    (sides if sides is not None else rules(s)).form_sides(s, seat)


def rules(s: GameState) -> Ruleset:
    """The ruleset of a position (``rules_of(s.config)``)."""
    found: Ruleset | None = s.config._hooks
    return found if found is not None else rules_of(s.config)
