"""The Canasta rules engine: pure, standard library only (RULES.md is the authority).

Typical use::

    from shared import rules
    config = rules.make_config("classic")
    state = rules.deal_hand(rules.new_match(config, seed=7), rules.shuffled_deck(config, 7))
    seat = state.actor()
    state = rules.apply(state, seat, rules.parse_action("draw"))
    view = rules.player_view(state, seat)
"""

from .actions import (
    Action,
    Answer,
    AskPartner,
    Discard,
    Draw,
    LayOff,
    Meld,
    Pass,
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
from .engine import apply, apply_turn, check, is_legal
from .errors import (
    CanastaError,
    ConfigError,
    IllegalMoveError,
    NotationError,
    NotYourTurnError,
    WrongPhaseError,
)
from .goingout import can_go_out
from .legal import legal_action_kinds, legal_actions
from .notation import parse_action, parse_turn
from .state import EndReason, Event, GameState, HandResult, Phase, SideScore
from .view import PlayerView, player_view, redact_event

__all__ = [
    "CLASSIC",
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
    "NotYourTurnError",
    "NotationError",
    "Pass",
    "Phase",
    "PlayerView",
    "RuleConfig",
    "SideScore",
    "TakePile",
    "WrongPhaseError",
    "apply",
    "apply_turn",
    "can_go_out",
    "card_text",
    "cards_text",
    "check",
    "deal_hand",
    "deal_position",
    "deck",
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
]
