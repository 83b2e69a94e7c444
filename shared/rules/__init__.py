"""The Canasta rules engine: pure, standard library only (docs/rules.md says how it plays).

Typical use::

    from shared import rules
    config = rules.make_config("classic")
    state = rules.deal_hand(rules.new_match(config, seed=7), rules.shuffled_deck(config, 7))
    seat = state.actor()
    state = rules.apply(state, seat, rules.parse_action("draw"))
    view = rules.player_view(state, seat)

Where each rule is (docs/rules.md section: module); every module's docstring names its sections:

* deck, cards, card values and card text (§1.2; D1): ``cards``
* presets and house-rule options (§2's D-numbers, §3, §3.9): ``config``
* the position, its phases and events (§1.4): ``state``; the actions: ``actions``, and
  their text: ``notation``
* a new match, the first dealer, the deal and the upcard (§1.3, §1.5; D2, D23): ``dealing``
* the entry points (``apply``, ``check``... and ``apply_listed``, for a move the engine
  listed itself), whose turn and phase it is, the discard that ends a turn and the start
  of the next (§1.4, §1.6 T0, T3): ``engine``
* drawing from the stock, a red three as its last card, the end of the stock and the
  compulsory take (§1.6 T1, §1.12; D13, D14): ``stock``
* the discard pile, frozen or not, and taking it (§1.8, §1.6 T1; D5-D8, D15): ``pile``
* the initial-meld minimum and opening by taking the pile (§1.10; D4, D10, D19, D21):
  ``opening``
* red threes laid out and scored, black-three melds (§1.7, §1.5 H4, §1.9, §1.13; D3, D16,
  D17): ``threes``
* what a valid meld is, canastas (§1.9; D9): ``melds``; melding and laying off from hand
  (§1.6 T2): ``melding``
* going out, concealed, asking partner, the dead-end guard (§1.11; D11, D22):
  ``goingout``
* scoring a hand and the end of the match (§1.13, §1.14; D12, D18, D20): ``scoring``
* the variants' seam: the named hooks on which the forms of the game differ, classic's
  answers, and which ruleset a configuration plays (§3): ``ruleset``
* each variant in its own place under ``variants``, a ``Ruleset`` subclass answering the
  hooks: three-handed cutthroat sides (§3.2): ``variants.cutthroat``; Samba and Bolivia's
  sequences, further melds of a rank, wild melds, their going-out search (§3.4, §3.5):
  ``variants.samba``; Hand and Foot's foot, closed books, books to go out, the unplayed
  foot (§3.7, §3.8a): ``variants.hand_and_foot``; Modern American (§3.6, §3.8a: talon,
  threes, always-frozen pile, seven-card melds, special canastas, penalties, its scoring):
  ``variants.modern_american``
* resigning the match (the rulebooks are silent; a correspondence server needs it): ``concede``
* edits of a position that every move shares: ``edits``; refusals: ``errors``; how the
  engine's memos between positions let go of entries: ``memo``
* what one seat may see (DESIGN.md): ``view``; the listed legal moves: ``legal``; the bot:
  ``bot``; scenario files (§4's test vectors): ``scenario``

Imports go one way, from the rule modules up to ``engine``, then ``legal`` and its users
(``view``, ``bot``); the variants stand above the classic modules they build on, and no
classic module imports a variant (it asks ``ruleset``'s hooks). tests/shared/rules/
test_layout.py checks that, and that no cycle and no private name crosses between modules.

A compiled build of the hot modules is opt-in (``make engine-compiled``, tools/
engine_compiled.py): the extensions it leaves beside the sources are imported in their
place, and this package refuses to import a build older than its sources (``compiled_stale``).
"""

import hashlib
import json
from pathlib import Path

from . import variants  # noqa: F401  (each variant registers its ruleset on import)
from .actions import (
    Action,
    Answer,
    AskPartner,
    Discard,
    Draw,
    LayOff,
    Meld,
    Pass,
    Resign,
    TakePile,
)
from .cards import Card, card_text, cards_text, deck, parse_card, parse_cards, sort_cards
from .config import (
    CLASSIC,
    OPTION_CHOICES,
    OPTION_NAMES,
    PRESETS,
    TAKE_METHODS,
    RuleConfig,
    make_config,
)
from .dealing import deal_hand, deal_position, new_match, shuffled_deck
from .engine import apply, apply_listed, apply_turn, check, is_legal
from .errors import (
    CanastaError,
    ConfigError,
    IllegalMoveError,
    NotationError,
    NotYourTurnError,
    WrongPhaseError,
)
from .goingout import can_go_out
from .legal import MOVE_GROUPS, MoveGroup, grouped_moves, legal_action_kinds, legal_actions
from .notation import parse_action, parse_turn
from .state import EndReason, Event, GameState, HandResult, Phase, SideScore
from .view import NO_SEAT, PlayerView, player_view, redact_event, spectator_view


def compiled_stale(here: Path = Path(__file__).parent) -> str | None:
    """Why a compiled build beside the sources may not run (a source changed since, or the
    build's record is missing), or ``None`` (no build, or a current one). Hashing the
    compiled modules' sources costs about a millisecond, once per process."""
    if not any(here.glob("native__mypyc*")):
        return None
    try:
        recorded: dict[str, str] = json.loads((here / "compiled.json").read_text())
    except (OSError, ValueError):
        return "the compiled engine has no record of its sources (shared/rules/compiled.json)"
    root = here.parents[1]
    for name, digest in recorded.items():
        path = root / name
        if not path.exists() or hashlib.sha256(path.read_bytes()).hexdigest()[:16] != digest:
            return f"{name} changed after the engine was compiled"
    return None


_stale = compiled_stale()
if _stale is not None:
    raise ImportError(f"{_stale}: run `make engine-compiled` again, or `make engine-pure`")

__all__ = [
    "CLASSIC",
    "MOVE_GROUPS",
    "NO_SEAT",
    "OPTION_CHOICES",
    "OPTION_NAMES",
    "PRESETS",
    "TAKE_METHODS",
    "Action",
    "Answer",
    "AskPartner",
    "CanastaError",
    "Card",
    "ConfigError",
    "Discard",
    "Draw",
    "EndReason",
    "Event",
    "GameState",
    "HandResult",
    "IllegalMoveError",
    "LayOff",
    "Meld",
    "MoveGroup",
    "NotYourTurnError",
    "NotationError",
    "Pass",
    "Phase",
    "PlayerView",
    "Resign",
    "RuleConfig",
    "SideScore",
    "TakePile",
    "WrongPhaseError",
    "apply",
    "apply_listed",
    "apply_turn",
    "can_go_out",
    "card_text",
    "cards_text",
    "check",
    "deal_hand",
    "deal_position",
    "deck",
    "grouped_moves",
    "is_legal",
    "legal_action_kinds",
    "legal_actions",
    "make_config",
    "new_match",
    "parse_action",
    "parse_card",
    "parse_cards",
    "parse_turn",
    "player_view",
    "redact_event",
    "shuffled_deck",
    "sort_cards",
    "spectator_view",
]
