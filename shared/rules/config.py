"""Rule configuration: the table, the presets, and one named option per source disagreement.

A ``RuleConfig`` is static for a whole match; the dynamic game lives in ``GameState``. Every
point where docs/rules.md §2 records a disagreement between sources is an option here, with the
recommended default; the presets of docs/rules.md §3 (two-, three- and six-player forms) are
classic plus their listed changes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from .errors import ConfigError

OPTION_CHOICES: dict[str, tuple[str, ...]] = {
    "wild_limit": ("max3", "not_more_than_naturals", "max2", "fewer_than_naturals_max3"),
    "red3_negative_if": ("no_meld", "no_canasta", "too_few_canastas", "never"),
    "red3_scoring": ("side", "individual"),
    "upcard_mode": ("cover_and_freeze", "bury_and_redraw", "cover_no_freeze", "none"),
    "red3_deal_timing": ("immediate", "first_turn"),
    "last_card_red3": ("end_no_play", "meld_no_discard"),
    "stock_out_forced_take": ("layoff_only", "any_legal"),
    "stock_out_rule": ("forced_take", "end_after_last_discard"),
    "ask_timing": ("after_draw_before_meld", "before_or_after_draw"),
    "tie_policy": ("play_another_hand", "draw", "raise_target_500"),
    "open_via_pile": ("allowed", "forbidden", "required"),
    "dealer_selection": ("random", "seat0"),
    "talon_timing": ("next_turn", "at_once"),
    "aces_wild_rule": ("initial_meld", "aces_meld"),
}
TAKE_METHODS = ("pair", "natural_plus_wild", "layoff")

PLAYER_COUNTS = (2, 3, 4, 6)
_INT_RANGES: dict[str, tuple[int, int]] = {
    "decks": (1, 8),  # 2 classic, 3 six players, Samba, Bolivia; Hand and Foot players + 1 (§3.7)
    "jokers_per_deck": (0, 4),  # D1: 2 or 3
    "hand_size": (1, 22),  # 11 classic to 15 two-handed and Samba (§3.1)
    "draw_count": (1, 3),
    "canastas_to_go_out": (1, 6),
    "target": (100, 50_000),  # 5000 to 15000 in the presets, 20000 in S001's Hand and Foot
    "natural_canasta_bonus": (0, 5_000),
    "mixed_canasta_bonus": (0, 5_000),
    "red3_value": (0, 1_000),
    "going_out_bonus": (0, 2_000),
    "concealed_bonus_total": (0, 5_000),
    "ask_limit_per_hand": (0, 20),  # or null: no limit per hand
    "samba_min_7000": (0, 1_000),  # or null: no row at 7000 (§3.4 note: 160 or 150)
    "sequence_canasta_bonus": (0, 5_000),  # samba / escalera 1500 (§3.4, §3.5)
    "wild_canasta_bonus": (0, 5_000),  # bolivia 2500 (§3.5)
    "sequence_canastas_to_go_out": (0, 6),  # Bolivia: one escalera (§3.5)
    "black3_went_out_value": (0, 1_000),  # Bolivia: 100 each (§3.5); 5 = the card's value
    "wild_meld_four_jokers_penalty": (0, 5_000),  # Modern American: 2000 (CLA) or 2500 (P)
    "foot_size": (0, 22),  # Hand and Foot: 11 (§3.7), 13 in some groups; 0 = no foot
    "pile_take_count": (1, 500),  # or null: the whole pile; Hand and Foot 7, 5 or 3 (§3.7)
    "hands_per_match": (1, 50),  # or null: play to the target; Hand and Foot 4 (§3.7)
    "clean_books_to_go_out": (0, 6),  # Hand and Foot: 1 (§3.7)
    "dirty_books_to_go_out": (0, 6),  # Hand and Foot: 1, or 2 (HF-DW)
    "clean_sevens_bonus": (0, 5_000),  # or null: as any clean book; 1500 (HF-DW)
    "red3_unplayed_value": (0, 1_000),  # Hand and Foot: 0, or 500 (HF-CH) / 300 (HF-CP)
}
"""Allowed ranges of the whole-number options: every preset and source value fits with room,
and no value can make a deal or a score big enough to hurt (scores stay far inside 32 bits)."""
_OPTIONAL = frozenset(
    {"ask_limit_per_hand", "samba_min_7000", "pile_take_count", "hands_per_match",
     "clean_sevens_bonus"}
)  # fmt: skip
_BOOLS = (
    "cutthroat",
    "red3_counts_toward_minimum",
    "concealed_min_exempt",
    "concealed_requires_own_canasta",
    "black3_freezes",
    "black3_top_takeable_to_go_out",
    "frozen_allows_layoff",
    "one_card_pile_rule",
    "allow_sequences",
    "multiple_melds_per_rank",
    "allow_wild_melds",
    "wild_onto_canasta",
    "pile_layoff_onto_canasta",
    "modern_american",
    "rule_of_five",
    "dead_ranks",
    "swad_empty_pile",
    "no_out_with_unfinished_special",
    "unfinished_special_scores_cards",
    "closed_books",
    "pile_freezes",
    "must_ask_to_go_out",
)
LATER_OPTIONS = frozenset(
    {
        "modern_american", "wild_meld_four_jokers_penalty", "talon_timing",
        "unfinished_special_scores_cards", "rule_of_five", "dead_ranks", "swad_empty_pile",
        "no_out_with_unfinished_special", "aces_wild_rule",
        "foot_size", "pile_take_count", "min_meld_by_hand", "closed_books", "pile_freezes",
        "clean_books_to_go_out", "dirty_books_to_go_out", "clean_sevens_bonus",
        "red3_unplayed_value", "hands_per_match", "must_ask_to_go_out",
    }
)  # fmt: skip
"""Options added after the first transcript format (docs/transcript.md): ``to_dict`` leaves
them out while they hold their defaults, which play the game as it was before they existed,
so a header or a stored position of that time reads back to the same bytes."""
MIN_MELD_ROWS = 10
MIN_MELD_SCORES = (-100_000, 100_000)
MIN_MELD_VALUES = (0, 1_000)
RED3_TOTAL_ROWS = 8
RED3_COUNTS = (1, 24)
RED3_TOTALS = (0, 20_000)
HAND_MINIMUM_ROWS = 10
"""At most this many entries in ``min_meld_by_hand`` (Hand and Foot lists four, §3.7)."""

CLASSIC_MINIMUMS: tuple[tuple[int | None, int], ...] = (
    (None, 15),
    (0, 50),
    (1500, 90),
    (3000, 120),
)


def wild_cap(limit: str, naturals: int) -> int:
    """How many wild cards a meld with ``naturals`` natural cards may hold under the option
    ``wild_limit`` (§1.9; D9; §3.4: two in Samba and Bolivia; §3.7: fewer than the naturals
    and at most three in Hand and Foot)."""
    if limit == "fewer_than_naturals_max3":
        return min(3, naturals - 1)
    return 3 if limit == "max3" else 2 if limit == "max2" else naturals


@dataclass(frozen=True, slots=True)
class RuleConfig:
    """Everything that distinguishes one form of Canasta from another (docs/rules.md §3.9).

    Field docstrings cite the docs/rules.md entry that the option settles.
    """

    preset: str = "classic"
    """The preset these values started from (informational)."""
    players: int = 4
    partnerships: tuple[tuple[int, ...], ...] = ((0, 2), (1, 3))
    """Seats of each side at the start of a hand; one cumulative score column per entry."""
    cutthroat: bool = False
    """Three-handed cutthroat: the first to take the pile plays alone, the others pair up (§3.2)."""
    decks: int = 2
    jokers_per_deck: int = 2
    """D1: 2 (108 cards) or 3 (110 cards)."""
    hand_size: int = 11
    draw_count: int = 1
    canastas_to_go_out: int = 1
    target: int = 5000
    min_meld_table: tuple[tuple[int | None, int], ...] = CLASSIC_MINIMUMS
    """D19: (lowest cumulative score, minimum) rows in ascending order; ``None`` = below zero."""
    wild_limit: str = "max3"
    """D9: at most three wild cards per meld, or never more wilds than naturals."""
    natural_canasta_bonus: int = 500
    mixed_canasta_bonus: int = 300
    """D18: canasta bonuses."""
    red3_value: int = 100
    red3_special_totals: tuple[tuple[int, int], ...] = ((4, 800),)
    """D17: (count, total) overrides; classic: all four red threes are worth 800."""
    red3_negative_if: str = "no_meld"
    """D16: red threes count minus for a side that made no meld (or, option, no canasta)."""
    red3_scoring: str = "side"
    """Red threes pooled per side, or scored by each player individually (cutthroat)."""
    red3_counts_toward_minimum: bool = False
    """D4: red threes never help the initial-meld minimum by default."""
    going_out_bonus: int = 100
    concealed_bonus_total: int = 200
    """D12: the concealed bonus replaces the ordinary one (200 in total, not 300)."""
    concealed_min_exempt: bool = True
    """D10: a concealed going-out after a stock draw need not meet the minimum."""
    concealed_requires_own_canasta: bool = True
    """D11: a concealed hand must itself contain a canasta."""
    upcard_mode: str = "cover_and_freeze"
    """D2: how a wild or red three turned as the upcard is handled."""
    red3_deal_timing: str = "immediate"
    """D3: dealt red threes are laid out at once, or at each player's first turn."""
    black3_freezes: bool = False
    """D5: a black three only blocks the next player by default."""
    black3_top_takeable_to_go_out: bool = False
    """D6: a black three on top may be taken to go out (Britannica) if set."""
    frozen_allows_layoff: bool = False
    """D7: a frozen pile needs a natural pair even if the side has a meld of that rank."""
    unfrozen_take_methods: tuple[str, ...] = TAKE_METHODS
    """D8: the ways an unfrozen pile may be taken."""
    one_card_pile_rule: bool = True
    """D15: a player holding one card may not take a one-card pile."""
    last_card_red3: str = "end_no_play"
    """D13: a red three drawn as the last stock card ends the hand at once."""
    stock_out_forced_take: str = "layoff_only"
    """D14: after the stock is gone, taking is compulsory when the top card fits a meld."""
    stock_out_rule: str = "forced_take"
    """After the stock is gone: play on by taking the pile (classic) or end at once (cutthroat)."""
    ask_timing: str = "after_draw_before_meld"
    """D22: when a player may ask partner for permission to go out."""
    ask_limit_per_hand: int | None = None
    """D22: how often one player may ask per hand; ``None`` = once per turn, no hand limit."""
    tie_policy: str = "play_another_hand"
    """D20: what happens when the top scores tie at or above the target."""
    open_via_pile: str = "allowed"
    """D21: whether a side may (or must) open by taking the pile."""
    dealer_selection: str = "random"
    """D23: the first dealer is drawn from the match seed, or is seat 0."""
    samba_min_7000: int | None = None
    """§3.4 note, Appendix A.3: the initial-meld minimum from a score of 7000 in Samba (160,
    Bicycle and HowStuffWorks) and Bolivia (150); ``None`` = no such row (classic)."""
    allow_sequences: bool = False
    """§3.4, §3.5: sequence melds (3 to 7 cards of one suit, 4 up to ace, no wild cards)."""
    multiple_melds_per_rank: bool = False
    """§3.4: a side may hold several group melds of one rank, and combine them."""
    allow_wild_melds: bool = False
    """§3.5 Bolivia: three to seven wild cards may form a meld (a bolivia at seven). §3.7
    Hand and Foot, the Wilds row's variation (some groups, games-eshop): the same meld is a
    wild book, closed at seven like every book; it holds wild cards, so for going out it
    counts as a dirty book, and it scores ``wild_canasta_bonus``."""
    wild_onto_canasta: bool = True
    """§3.4: Samba forbids adding a wild card to a completed canasta (naturals may join)."""
    pile_layoff_onto_canasta: bool = True
    """§3.4: in Samba the top card may be laid off only onto a meld not yet a canasta."""
    sequence_canasta_bonus: int = 1500
    """§3.4, §3.5: the bonus of a seven-card sequence (a samba, or an escalera in Bolivia)."""
    wild_canasta_bonus: int = 2500
    """§3.5: the bonus of a seven-card wild meld (a bolivia, 2500). In Hand and Foot a wild
    book (``allow_wild_melds``, §3.7) earns it, 1500 in the preset: no source gives a value
    for one, and 1500 is the largest book bonus a Hand and Foot source gives (HF-DW's clean
    book of sevens), for the one book as hard to make [engine policy]."""
    sequence_canastas_to_go_out: int = 0
    """§3.5: how many of the canastas needed to go out must be sequences (Bolivia: one)."""
    black3_went_out_value: int = 5
    """§3.5, §3.8a: what each black three left in a hand costs when someone goes out (Bolivia
    100; otherwise, and always when the stock ends the hand, its card value 5)."""
    modern_american: bool = False
    """§3.6: Modern American Canasta's own rules (``american``): a talon of bonus cards, no
    upcard, every three laid out, an always-frozen pile, seven-card melds, special canastas,
    penalties and state-dependent scoring."""
    wild_meld_four_jokers_penalty: int = 2000
    """§3.6 Modern American: what an unfinished wild meld holding all four jokers costs: 2000
    like any unfinished wild meld (CLA), or 2500 (P)."""
    rule_of_five: bool = False
    """§3.8a, a Canasta League rule off by default: a wild card joins an existing meld only
    once it holds five natural cards."""
    dead_ranks: bool = False
    """§3.8a, a Canasta League rule off by default: once either side completed a canasta of a
    rank, nobody starts, adds to or takes the pile with that rank."""
    swad_empty_pile: bool = False
    """§3.8a, a Canasta League rule off by default: no seven, wild card, ace or card of a dead
    rank may be discarded onto an empty pile (unless the hand holds nothing else)."""
    talon_timing: str = "next_turn"
    """§3.8a: Modern American's talon packet is drawn at the start of the opener's next turn
    (default), or ``"at_once"``, as soon as the initial meld is down; either way only while
    the stock holds nine cards."""
    aces_wild_rule: str = "initial_meld"
    """§3.6, §3.8a: "aces stay natural unless a wild was included in the opening meld" read
    as the side's initial meld (default), or ``"aces_meld"``: the aces meld's own first
    laying (a new aces meld may hold wild cards; a natural one stays natural)."""
    unfinished_special_scores_cards: bool = True
    """§3.8a: an unfinished natural aces, sevens or wild meld scores its card values besides
    its penalty (default), or only the penalty."""
    no_out_with_unfinished_special: bool = False
    """§3.8a, a Canasta League rule off by default: a side may not go out while it holds an
    unfinished natural meld of aces or sevens, or an unfinished wild meld."""
    foot_size: int = 0
    """§3.7 Hand and Foot: each player is dealt a second packet of this many cards, the foot,
    face down, played once the hand is used up; 0 = no foot (every other game)."""
    pile_take_count: int | None = None
    """§3.7: taking the pile takes only its top cards, this many including the top card
    (Hand and Foot 7; 5 or 3 in some groups); ``None`` = the whole pile (classic)."""
    min_meld_by_hand: tuple[int, ...] = ()
    """§3.7: the initial-meld minimum by hand number (Hand and Foot 50/90/120/150; HF-DW
    60/90/120/150), the last entry for any later hand; ``()`` = by score (``min_meld_table``)."""
    closed_books: bool = False
    """§3.7: a seven-card meld is a closed book that takes no more cards."""
    pile_freezes: bool = True
    """§3.8a: Hand and Foot has no freezing: a wild discard leaves the pile as it was."""
    clean_books_to_go_out: int = 0
    dirty_books_to_go_out: int = 0
    """§3.7: going out also needs this many clean (natural) and dirty (mixed) books (Hand
    and Foot 1 and 1; HF-DW 1 and 2), within ``canastas_to_go_out`` books in all. Only with
    ``closed_books`` and without Modern American's rules (``_check_book_requirements``)."""
    clean_sevens_bonus: int | None = None
    """§3.7 (HF-DW): a clean book of sevens earns this instead of the natural bonus."""
    red3_unplayed_value: int = 0
    """§3.7 (HF-CH 500, HF-CP 300): each red three still in an unplayed foot costs this."""
    hands_per_match: int | None = None
    """§3.7: the match is this many hands and the highest total wins (Hand and Foot 4);
    ``None`` = play until a side reaches ``target`` (§1.14)."""
    must_ask_to_go_out: bool = False
    """§3.7, §3.8a: asking partner before going out is optional (the default); some Hand and
    Foot groups require it. With this option a player who has a partner goes out only after
    asking in that turn (§1.11.2: after the draw, before the first meld) and hearing yes."""
    _seat_side: tuple[int, ...] = field(default=(), repr=False, compare=False)
    _partner: tuple[int, ...] = field(default=(), repr=False, compare=False)
    _ruleset: str = field(default="classic", repr=False, compare=False)
    _hooks: Any = field(default=None, repr=False, compare=False)
    """The ``ruleset.Ruleset`` playing this config, kept here by ``ruleset.rules_of`` on first
    use: the engine asks for it at nearly every rule, and this module cannot import it."""

    def __post_init__(self) -> None:
        self._validate()
        object.__setattr__(self, "_ruleset", _ruleset_named_by(self))
        seat_side = [0] * self.players
        for side, seats in enumerate(self.partnerships):
            for seat in seats:
                seat_side[seat] = side
        object.__setattr__(self, "_seat_side", tuple(seat_side))
        if not self.cutthroat and all(len(s) >= 2 for s in self.partnerships):
            partner = tuple(self._next_partner(seat) for seat in range(self.players))
            object.__setattr__(self, "_partner", partner)

    def _next_partner(self, seat: int) -> int:
        """The partner who answers "may I go out?": the next partner clockwise [engine policy]."""
        side = self.partnerships[self._seat_side[seat]]
        return next(
            x % self.players
            for x in range(seat + 1, seat + self.players)
            if x % self.players in side
        )

    # -- derived facts ---------------------------------------------------------------------

    @property
    def ruleset(self) -> str:
        """The ruleset this configuration plays (``shared.rules.ruleset``, docs/rules.md §3):
        ``classic``, ``samba`` (Bolivia too), ``modern_american``, ``hand_and_foot`` or
        ``cutthroat``. Named by the options that define each form, so that a stored match or
        a transcript header, which never carried the name, plays the same ruleset again."""
        return self._ruleset

    @property
    def deck_size(self) -> int:
        return self.decks * (52 + self.jokers_per_deck)

    @property
    def has_sides(self) -> bool:
        """Fixed partnerships of two or more seats each (what Modern American needs, §3.6)."""
        return not self.cutthroat and all(len(s) >= 2 for s in self.partnerships)

    @property
    def sides(self) -> int:
        """Number of score columns (sides at the start of a hand)."""
        return len(self.partnerships)

    def initial_side(self, seat: int) -> int:
        """The side (and score column) a seat belongs to when a hand starts."""
        return self._seat_side[seat]

    @property
    def has_partners(self) -> bool:
        """Whether asking partner exists: fixed partnerships of two or more (§1.11.2)."""
        return bool(self._partner)

    def partner_to_ask(self, seat: int) -> int:
        """The partner who answers "may I go out?" for ``seat``."""
        if not self._partner:
            raise ConfigError("this form of the game has no partners")
        return self._partner[seat]

    def initial_minimum(self, score: int, hand_number: int = 0) -> int:
        """The initial-meld minimum for a cumulative score (§1.10; D19), or in Hand and Foot
        for the hand's number (§3.7, ``min_meld_by_hand``).

        >>> [CLASSIC.initial_minimum(s) for s in (-5, 0, 1495, 1500, 2995, 3000, 4990)]
        [15, 50, 50, 90, 90, 120, 120]
        """
        by_hand = self.min_meld_by_hand
        if by_hand and hand_number > 0:
            return by_hand[min(hand_number, len(by_hand)) - 1]
        minimum = self.min_meld_table[0][1]
        for lowest, value in self.min_meld_table:
            if lowest is None or score >= lowest:
                minimum = value
        if self.samba_min_7000 is not None and score >= 7000:
            return self.samba_min_7000
        return minimum

    def red3_total(self, count: int) -> int:
        """Unsigned value of ``count`` red threes held together (§1.13; D17)."""
        for n, total in self.red3_special_totals:
            if n == count:
                return total
        return self.red3_value * count

    def max_wilds(self, naturals: int) -> int:
        """How many wild cards a meld with ``naturals`` natural cards may hold (``wild_cap``)."""
        return wild_cap(self.wild_limit, naturals)

    @property
    def variant_melds(self) -> bool:
        """Whether melds go beyond one group per rank (Samba and Bolivia, §3.4, §3.5): the
        engine then keeps sequences, further group melds and wild melds beside the groups."""
        return self.allow_sequences or self.multiple_melds_per_rank or self.allow_wild_melds

    # -- (de)serialisation -------------------------------------------------------------------

    def to_dict(self, *, every: bool = False) -> dict[str, Any]:
        """A JSON-ready dict of the fields (lists for tuples): every one with ``every``;
        otherwise an option of ``LATER_OPTIONS`` only when it differs from its default, so
        that a transcript header or a stored position written before it existed encodes to
        the very same bytes again (headers are hashed and must be canonical)."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            if f.name.startswith("_"):
                continue
            value = getattr(self, f.name)
            if not every and f.name in LATER_OPTIONS and value == f.default:
                continue
            out[f.name] = _to_json(value)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RuleConfig:
        """Rebuild a config from ``to_dict`` output (unknown keys are refused). Types are
        checked, ranges and ``check_new`` are not: a stored match keeps loading after a range
        is narrowed or a combination refused."""
        preset = str(data.get("preset", "classic"))
        return make_config(preset, stored_options(data), limits=False)

    def _validate(self) -> None:
        """Refuse any value of the wrong type or outside its range (``ConfigError`` naming
        the option and what is allowed), then any combination that cannot be played."""
        _check_types(self, ranges=False)
        seats = sorted(s for side in self.partnerships for s in side)
        if seats != list(range(self.players)):
            raise ConfigError("partnerships must name every seat exactly once")
        if self.cutthroat and (self.players != 3 or self.partnerships != ((0,), (1,), (2,))):
            raise ConfigError(
                "cutthroat play needs exactly three players, each a side of one: [[0], [1], [2]]"
            )
        if self.cutthroat and self.variant_melds:
            raise ConfigError(
                "sequences, wild melds and several melds of a rank are for fixed sides, not "
                "for cutthroat play"
            )
        if self.modern_american and (
            self.cutthroat or self.variant_melds or not self.has_sides or self.decks != 2
        ):
            raise ConfigError(
                "Modern American rules are for fixed partnerships and two packs, without "
                "sequences, several melds of a rank or Bolivia's wild melds"
            )
        if self.closed_books and self.allow_sequences:
            raise ConfigError(
                "closed books (Hand and Foot) are melds of one rank (or, with allow_wild_melds, "
                "of wild cards): they do not combine with sequences"
            )
        if self.modern_american and self.foot_size:
            raise ConfigError("Modern American rules have no foot")
        talon = 7 if self.modern_american else 0  # §3.6: the bonus cards set aside
        if self.players * (self.hand_size + self.foot_size) + talon + 10 > self.deck_size:
            raise ConfigError("the deal would not leave enough cards for the stock")
        if self.min_meld_table[0][0] is not None:
            raise ConfigError("min_meld_table must start with a row for negative scores (null)")
        lows = [low for low, _ in self.min_meld_table[1:]]
        if any(low is None for low in lows) or lows != sorted(lows):  # type: ignore[type-var]
            raise ConfigError("min_meld_table rows must ascend by score")
        counts = [count for count, _ in self.red3_special_totals]
        if len(set(counts)) != len(counts):
            raise ConfigError("red3_special_totals may name each count of red threes once")

    def check_new(self) -> None:
        """Refuse the combinations a new match may not take, though a stored one keeps them.

        Each of these was found to leave a turn with no legal move, or one move's search
        without a bound, after matches may already have been stored with it. ``make_config``
        (a new match, a transcript's rules) refuses them; ``from_dict`` (a stored match read
        back) does not, so that such a match still loads and its players can see it and end
        it, as it does when a range was narrowed.
        """
        self._check_cutthroat_books()
        self._check_book_requirements()
        if self.multiple_melds_per_rank and not self.closed_books and self.decks > 3:
            # Open melds of a rank that may be combined without limit (§3.4) make the
            # going-out search weigh every grouping of them: with three packs a rank has at
            # most six such melds (a fifth of a second, cold), with five packs ten (a minute).
            raise ConfigError(
                "several melds of a rank (Samba, Bolivia) are played with at most 3 packs"
            )

    def _check_cutthroat_books(self) -> None:
        """Refuse ``closed_books`` with ``cutthroat``: joined melds could pass seven cards.

        Hand and Foot's books close at seven cards (docs/rules.md §3.7), while in cutthroat the two
        players who become partners combine their melds (§3.2, SC35): each of them may hold
        a meld of the same rank, up to seven cards each, and joined they make one meld of up
        to fourteen, a book past seven (random play found a book of eight fours). The rules
        have no reading that keeps the book closed: keeping the two melds apart would be
        several melds of a rank, which cutthroat already refuses (``variant_melds``), and
        cutting the joined meld back to seven would leave cards with nowhere to go. So the
        combination is refused, like the other options cutthroat cannot take. (A joined meld
        over the wild limit is played instead, §3.8a: it takes no more wild cards; a "book"
        past seven would no longer be one, and §3.7's bonuses and going out count books.)
        """
        if self.cutthroat and self.closed_books:
            raise ConfigError(
                "closed books (Hand and Foot, §3.7) close at seven cards, and cutthroat's "
                "partners join their melds (§3.2): two melds of a rank joined could make a "
                "book of more than seven, so closed_books is not for cutthroat play"
            )

    def _check_book_requirements(self) -> None:
        """Refuse ``clean_books_to_go_out`` or ``dirty_books_to_go_out`` outside closed books.

        Clean and dirty books are Hand and Foot's (docs/rules.md §3.7): a book is a meld closed at
        seven cards, so once made it keeps its kind, and the side's books decide whether it
        may go out. Nowhere else do the rules ask for canastas of a kind to go out (§1.11.1,
        §3.1's matrix): an open canasta of classic, Samba or Bolivia may still take a wild
        card and turn from natural to mixed, and the going-out searches of those games
        (§1.11.3's ``can_go_out``, Samba's and Modern American's) count canastas, not kinds.
        Under such a requirement the engine, which refuses going out without the books,
        let the dead-end guard and partner's "yes" (§1.11.2, §1.11.3) trust a search that did
        not know it: a player laid off down to one card that the search could meld, yet
        might neither meld it (going out without a clean book) nor discard it (the same), a
        turn with no legal move. So the requirement is refused where books do not close
        (``closed_books`` off: then ``canastas_to_go_out`` counts canastas of any kind) and in
        Modern American (its own search, §3.6); with closed books every search, Hand and Foot's,
        knows it, whatever the preset.
        """
        if not (self.clean_books_to_go_out or self.dirty_books_to_go_out):
            return
        if not self.closed_books:
            raise ConfigError(
                "clean_books_to_go_out and dirty_books_to_go_out count Hand and Foot's books, "
                "melds closed at seven cards (§3.7): they need closed_books; without it set "
                "them to 0 and ask for canastas with canastas_to_go_out"
            )
        if self.modern_american:
            raise ConfigError(
                "Modern American rules (§3.6) go out on canastas of any kind: "
                "clean_books_to_go_out and dirty_books_to_go_out must be 0"
            )


def _ruleset_named_by(config: RuleConfig) -> str:
    """The ruleset the defining options name: Modern American's rules; feet or closed books
    (Hand and Foot, §3.7); sequences, several melds of a rank or wild melds (Samba and
    Bolivia, §3.4, §3.5), or a going-out condition only Samba's search knows (an escalera,
    a wild limit that grows with the naturals); cutthroat's sides (§3.2); else classic."""
    if config.modern_american:
        return "modern_american"
    if config.closed_books or config.foot_size:
        return "hand_and_foot"
    if (
        config.variant_melds
        or config.sequence_canastas_to_go_out
        or config.wild_limit == "fewer_than_naturals_max3"
    ):  # (Samba's going-out search is the one that knows those limits)
        return "samba"
    if config.cutthroat:
        return "cutthroat"
    return "classic"


def _shown(value: Any) -> str:
    """A value for an error message, cut short (it came from outside)."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _is_int(value: Any) -> bool:
    return type(value) is int  # not bool, not float


def _check_int(name: str, value: Any, low: int, high: int, ranges: bool = True) -> None:
    if not _is_int(value) or (ranges and not low <= value <= high):
        raise ConfigError(
            f"option {name} must be a whole number from {low} to {high}, not {_shown(value)}"
        )


def _rows(name: str, value: Any, limit: int, width: int) -> tuple[tuple[Any, ...], ...]:
    if not isinstance(value, tuple) or not all(
        isinstance(row, tuple) and len(row) == width for row in value
    ):
        raise ConfigError(f"option {name} must be a list of [{', '.join(['...'] * width)}] rows")
    if not 1 <= len(value) <= limit:
        raise ConfigError(f"option {name} has 1 to {limit} rows, not {len(value)}")
    return value


def _check_types(config: RuleConfig | SimpleNamespace, *, ranges: bool) -> None:
    """Every option's type, and with ``ranges`` its range (docs/rules.md §3's presets and Part
    2's options). Every config is typed; ranges bind what comes from outside (``make_config``),
    not a match stored before a range was narrowed (``RuleConfig.from_dict``)."""
    for name, allowed in OPTION_CHOICES.items():
        value = getattr(config, name)
        if not isinstance(value, str) or value not in allowed:
            raise ConfigError(
                f"option {name} cannot be {_shown(value)}; choose one of {', '.join(allowed)}"
            )
    if not _is_int(config.players) or config.players not in PLAYER_COUNTS:
        raise ConfigError("a match has 2, 3, 4 or 6 players")
    for name, (low, high) in _INT_RANGES.items():
        value = getattr(config, name)
        if value is None and name in _OPTIONAL:
            continue
        _check_int(name, value, low, high, ranges)
    for name in _BOOLS:
        if not isinstance(getattr(config, name), bool):
            raise ConfigError(
                f"option {name} is true or false, not {_shown(getattr(config, name))}"
            )
    sides = config.partnerships
    if (
        not isinstance(sides, tuple)
        or not 1 <= len(sides) <= config.players
        or not all(isinstance(side, tuple) and side for side in sides)
        or not all(_is_int(seat) for side in sides for seat in side)
    ):
        raise ConfigError("option partnerships must list each side's seats, e.g. [[0, 2], [1, 3]]")
    for lowest, minimum in _rows("min_meld_table", config.min_meld_table, MIN_MELD_ROWS, 2):
        if lowest is not None:  # (not ``low``: a compiled build types a name once per function)
            _check_int("min_meld_table (a row's lowest score)", lowest, *MIN_MELD_SCORES, ranges)
        _check_int("min_meld_table (a row's minimum)", minimum, *MIN_MELD_VALUES, ranges)
    if config.red3_special_totals != ():  # none (hand_and_foot), or 1 to 4 rows
        rows = _rows("red3_special_totals", config.red3_special_totals, RED3_TOTAL_ROWS, 2)
        for count, total in rows:
            _check_int("red3_special_totals (a row's count)", count, *RED3_COUNTS, ranges)
            _check_int("red3_special_totals (a row's total)", total, *RED3_TOTALS, ranges)
    by_hand = config.min_meld_by_hand
    if not isinstance(by_hand, tuple) or len(by_hand) > HAND_MINIMUM_ROWS:
        raise ConfigError(
            f"option min_meld_by_hand must be a list of at most {HAND_MINIMUM_ROWS} minimums"
        )
    for minimum in by_hand:
        _check_int("min_meld_by_hand (a minimum)", minimum, *MIN_MELD_VALUES, ranges)
    methods = config.unfrozen_take_methods
    if (
        not isinstance(methods, tuple)
        or not methods
        or not all(isinstance(m, str) and m in TAKE_METHODS for m in methods)
        or len(set(methods)) != len(methods)
    ):
        raise ConfigError(
            f"unfrozen_take_methods must be chosen from {', '.join(TAKE_METHODS)}, each once"
        )


def _to_json(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_to_json(v) for v in value]
    return value


def _from_json(name: str, value: Any) -> Any:
    """Turn JSON lists back into the tuples a frozen config holds (a value of another shape
    is left as it is, for ``_check_types`` to refuse)."""
    if name in ("partnerships", "min_meld_table", "red3_special_totals") and isinstance(
        value, list | tuple
    ):
        return tuple(tuple(row) if isinstance(row, list | tuple) else row for row in value)
    if name in ("unfrozen_take_methods", "min_meld_by_hand") and isinstance(value, list | tuple):
        return tuple(value)
    return value


CLASSIC = RuleConfig()

_SIX_RED3 = ((5, 1000), (6, 1200))
PRESETS: dict[str, dict[str, Any]] = {
    "classic": {},
    "two_player": {
        "players": 2, "partnerships": ((0,), (1,)), "hand_size": 15, "draw_count": 2,
        "canastas_to_go_out": 2,
    },
    "three_simple": {"players": 3, "partnerships": ((0,), (1,), (2,)), "hand_size": 13},
    "three_cutthroat": {
        "players": 3, "partnerships": ((0,), (1,), (2,)), "cutthroat": True, "hand_size": 13,
        "draw_count": 2, "canastas_to_go_out": 2, "target": 7500, "red3_scoring": "individual",
        "stock_out_rule": "end_after_last_discard",
    },
    "six_2x3": {
        "players": 6, "partnerships": ((0, 2, 4), (1, 3, 5)), "decks": 3, "hand_size": 13,
        "canastas_to_go_out": 2, "target": 10000, "red3_special_totals": _SIX_RED3,
        "min_meld_table": (*CLASSIC_MINIMUMS, (7500, 150)),
    },
    "six_3x2": {
        "players": 6, "partnerships": ((0, 3), (1, 4), (2, 5)), "decks": 3, "hand_size": 13,
        "canastas_to_go_out": 2, "target": 7500, "red3_special_totals": _SIX_RED3,
    },
    "samba": {
        "decks": 3, "hand_size": 15, "draw_count": 2, "canastas_to_go_out": 2, "target": 10000,
        "samba_min_7000": 160, "wild_limit": "max2", "allow_sequences": True,
        "multiple_melds_per_rank": True, "wild_onto_canasta": False,
        "pile_layoff_onto_canasta": False, "unfrozen_take_methods": ("pair", "layoff"),
        "going_out_bonus": 200, "concealed_bonus_total": 200,
        "red3_special_totals": ((6, 1000),), "red3_negative_if": "too_few_canastas",
    },
    "bolivia": {
        "decks": 3, "hand_size": 15, "draw_count": 2, "canastas_to_go_out": 2, "target": 15000,
        "samba_min_7000": 150, "wild_limit": "max2", "allow_sequences": True,
        "multiple_melds_per_rank": True, "allow_wild_melds": True, "wild_onto_canasta": False,
        "pile_layoff_onto_canasta": False, "unfrozen_take_methods": ("pair", "layoff"),
        "going_out_bonus": 200, "concealed_bonus_total": 200,
        "red3_special_totals": ((6, 1000),), "red3_negative_if": "too_few_canastas",
        "sequence_canastas_to_go_out": 1, "black3_went_out_value": 100,
    },
    "modern_american": {
        "modern_american": True, "hand_size": 13, "canastas_to_go_out": 2, "target": 8500,
        "min_meld_table": ((None, 125), (3000, 155), (5000, 180)), "wild_limit": "max2",
        "wild_onto_canasta": False, "pile_layoff_onto_canasta": False,
        "unfrozen_take_methods": ("pair",), "concealed_min_exempt": False,
        "concealed_bonus_total": 100, "ask_limit_per_hand": 1,
    },
    "hand_and_foot": {
        "decks": 5, "foot_size": 11, "upcard_mode": "cover_no_freeze", "draw_count": 2,
        "unfrozen_take_methods": ("pair",), "pile_take_count": 7, "pile_freezes": False,
        "min_meld_by_hand": (50, 90, 120, 150), "closed_books": True,
        "multiple_melds_per_rank": True, "wild_onto_canasta": False,
        "wild_limit": "fewer_than_naturals_max3", "canastas_to_go_out": 2,
        "clean_books_to_go_out": 1, "dirty_books_to_go_out": 1, "going_out_bonus": 100,
        "concealed_bonus_total": 100, "red3_special_totals": (), "red3_negative_if": "never",
        "stock_out_rule": "end_after_last_discard", "hands_per_match": 4,
        "wild_canasta_bonus": 1500,
    },
}  # fmt: skip
"""docs/rules.md §3 presets: classic plus each form's listed changes (§3.1-§3.6). Modern
American's fixed values (its special canastas, threes and penalties) are ``american``'s; the
rows here are the ones it shares with the other forms. Hand and Foot (§3.7, §3.8a) is the
recommended preset of a house game with no standard rules."""

OPTION_NAMES = tuple(f.name for f in dataclasses.fields(RuleConfig) if not f.name.startswith("_"))


def stored_options(data: Mapping[str, Any]) -> dict[str, Any]:
    """The options of a ``to_dict`` output (a stored match, a transcript's header), to apply
    to its preset. A later option it leaves out holds the value ``to_dict`` leaves out, its
    default here, whatever the preset's own value: read as the preset's, a match that set an
    option back to its default (Hand and Foot with ``hands_per_match`` null, or with
    ``pile_freezes`` true) would be read back with other rules than it was played with."""
    options = {name: _to_json(getattr(CLASSIC, name)) for name in LATER_OPTIONS}
    options.update((k, v) for k, v in data.items() if k != "preset")
    return options


def make_config(
    preset: str = "classic", options: Mapping[str, Any] | None = None, *, limits: bool = True
) -> RuleConfig:
    """A preset with house-rule options applied on top; unknown names are a ``ConfigError``.
    With ``limits`` (options from outside: a new match, a transcript's rules) every value's
    range and ``RuleConfig.check_new`` are checked too.

    >>> make_config("two_player").hand_size
    15
    >>> make_config("classic", {"black3_freezes": True}).black3_freezes
    True
    """
    if preset not in PRESETS:
        raise ConfigError(f"unknown preset {_shown(preset)}; choose one of {', '.join(PRESETS)}")
    values: dict[str, Any] = dict(PRESETS[preset])
    for name, value in (options or {}).items():
        if name not in OPTION_NAMES or name == "preset":
            raise ConfigError(f"unknown rule option {_shown(name)}")
        values[name] = _from_json(name, value)
    if limits:  # first, so that a value out of range is named as such
        defaults = {f.name: getattr(CLASSIC, f.name) for f in dataclasses.fields(RuleConfig)}
        _check_types(SimpleNamespace(**{**defaults, **values}), ranges=True)
    try:
        config = RuleConfig(preset=preset, **values)
    except TypeError as exc:  # a value of the wrong type reached a comparison
        # (or the compiled build's constructor, make engine-compiled, which checks the hints
        # first: the type check names the option, as the pure-Python ``_validate`` does)
        defaults = {f.name: getattr(CLASSIC, f.name) for f in dataclasses.fields(RuleConfig)}
        _check_types(SimpleNamespace(**{**defaults, **values}), ranges=False)
        raise ConfigError(f"invalid rule options: {exc}") from None
    if limits:
        config.check_new()
    return config
