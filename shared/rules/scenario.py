"""Play a scripted hand of Canasta from a JSON file: test vectors and bug reports.

Run it as ``python -m shared.rules.scenario FILE`` (``-`` reads standard input). It deals the
position the file describes, plays the listed actions one by one, and prints a JSON report:
for every action ``ok`` or the error the engine gave, and, when the hand ends, the score
breakdown per side and the end reason. A refused action changes nothing and play goes on
with the next listed action, so a file can show an illegal attempt followed by the legal line.
Exit status: 0 when the file was played (even if actions were refused: that is the report),
2 when it cannot be read or does not describe a valid position (one line on standard error).

The file
--------
One JSON object. Cards are written as in the game (``7h``, ``10d`` or ``td``, ``qs``, ``jk``);
any list of cards may also be one space-separated string (``"7h 7c 2s"``).

``preset``
    ``"classic"`` (default), ``"two_player"``, ``"three_simple"``, ``"three_cutthroat"``,
    ``"six_2x3"``, ``"six_3x2"``, ``"samba"``, ``"bolivia"``, ``"modern_american"`` or
    ``"hand_and_foot"`` (docs/rules.md §3).
``options``
    Rule options on top of the preset, by the names of ``config.OPTION_NAMES``, e.g.
    ``{"black3_freezes": true}`` (docs/rules.md §2).
``scores``
    Cumulative score of each score column when the hand starts (default: zeros): one per
    side, or one per player in the three-player presets. They set the initial-meld minimum
    (§1.10) and decide the match end (§1.14).
``dealer``
    The dealer's seat (default 0). The first player is the seat after the dealer.
``hand_number``
    Default 1. For a hand later in a match, set ``scores``. The number sets the minimum in
    Hand and Foot (§3.7) and, with ``hands_per_match``, whether the match ends with it.
``deal``
    The position, with these keys:

    ``hands`` (required)
        Each seat's cards, seat 0 first. For a fresh deal each hand must hold the preset's
        hand size; red threes in it are laid out and replaced as after a real deal (§1.5 H4).
    ``upcard``
        The cards turned to start the pile, in order: ``["jk", "3h", "9c"]`` (§1.5 H3). They
        must be exactly the cards the upcard procedure turns (with ``bury_and_redraw`` the
        buried ones too). May be left out: the first stock cards are then turned.
    ``stock``
        The stock after the upcard, top card first. Replacements for dealt red threes come
        from its top. Deck cards named nowhere in the file go under it (see ``fill``).
    ``pile``
        A mid-hand position: the discard pile, bottom card first (not empty). No upcard is
        turned and the pile is frozen if it holds a wild card or a red three (§1.8.1).
        Hands may then have any size of at least one card.
    ``melds``
        Per side (score column order), that side's melds on the table: a list of card lists,
        each a valid meld (§1.9), at most one per rank. In Samba and Bolivia (§3.4, §3.5)
        also sequences (``"4h 5h 6h"``), wild melds and several melds of a rank, in table
        order (the first of a rank is ``9``, the next ``9#2``).
    ``red3``
        Per seat, red threes already laid out (Modern American: threes of both colours).
    ``talon``
        Modern American (§3.6): the two bonus packets set aside, the first opener's (four
        cards, or none once drawn) then the second's (three). Left out, they are the first
        seven deck cards named nowhere else. Mid-hand, ``talon_owed`` (per seat, the packet
        1 or 2 it draws at its next turn, else 0) and ``wild_opening`` (per side, whether its
        initial meld held a wild card, so its aces may take wild cards) complete the position.
    ``feet``
        Hand and Foot (§3.7): per seat, its foot still face down (``[]`` once picked up, the
        default for every seat).
    ``turn``
        The seat to play (default: the seat after the dealer).
    ``melded``
        Seats that melded or laid off in an earlier turn of this hand (default none); such a
        seat cannot go out concealed (§1.11.4).
    ``fill``
        ``"stock"`` (default): deck cards named nowhere go under the stock, in sorted order
        (clubs 2 to ace, diamonds, hearts, spades, then jokers). ``"box"``: they are out of
        play, so the stock is exactly as written (e.g. a one-card stock).
``actions``
    A list of ``[seat, "action text"]``: ``draw``, ``pickup 7h 7c`` (the cards from hand that
    go with the top card; further opening melds after commas: ``pickup 8c 8d, ks kh kd``),
    ``pickup`` alone (lay the top card off onto the side's meld), ``meld 7h 7c 2s, kd kc ks``,
    ``lay 9 9d 2c``, ``discard kd``, ``ask``, ``answer yes``, ``answer no``, ``pass``. One
    text may hold a whole turn separated by ``;``; it is then applied all or nothing.
``variants``
    Optional list of objects, each with a ``name`` and top-level keys that replace the base
    scenario's keys, except ``options``, which are merged onto the base options. Run one
    with ``--variant NAME``. Tests play every variant.
``name``, ``rule``, ``description``, ``notes``
    Free text: what the file shows and which docs/rules.md section it follows.
``expect``
    What the file should produce; ignored by the command, checked by the test suite
    (``check_expectations`` in tests/shared/rules/expectations.py). Keys, all optional:

    ``results``
        One entry per action: ``"ok"`` or the error kind (``"illegal"``, ``"phase"``,
        ``"turn"``, ``"notation"``), optionally followed by the docs/rules.md section the error must
        cite: ``"illegal 1.11.3"``.
    ``message_contains``
        Per action, ``null`` or a piece of text the error message must contain.
    ``end``
        ``null``: the hand must still be going on. Otherwise an object compared key by key
        with the report's ``hand`` (``reason``: ``went_out``, ``red3_last_card``,
        ``stock_out_no_take`` or ``stock_exhausted``; ``went_out``: the seat, or ``null``;
        ``concealed``); its
        ``columns`` is a list with one object per score column, each compared key by key
        (``meld_points``, ``canasta_bonus``, ``red_three_points``, ``going_out_bonus``,
        ``hand_penalty``, ``hand_total``, ``cumulative``, ...).
    ``match``
        Compared key by key with the report's ``match`` (``phase``, ``winners``, ``target``).
    ``state``
        Checks on the position after the last action. ``states``: a list of such checks,
        each with ``"after": N`` (0 = the dealt position before any action, N = after the
        N-th action). Keys: ``phase``, ``turn``, ``stock_size``, ``foot_sizes`` (per seat, its
        face-down foot's size), ``pile`` (bottom first, in
        order), ``pile_frozen``, ``stock_top`` / ``stock_bottom`` (the first / last cards of
        the stock, in order), ``hands`` and ``red3`` (per seat, any order), ``hand_contains``
        (per seat, cards that must be in the hand), ``hand_sizes``, ``melds`` (per side, a
        list of melds, any order), ``canastas`` and ``opened`` (per side), ``actor`` (the seat
        that must act, e.g. the partner asked to answer), ``permission`` (``"yes"``,
        ``"no"`` or ``null``), ``must_go_out``, ``scores``, ``target``, ``winners``,
        ``dealer``, ``hand_number``, ``side_of`` (each seat's side; it changes only in
        cutthroat), ``talon_sizes`` (Modern American: cards left in each talon packet). In
        a per-seat or per-side list, ``null`` means "not checked".

Example (the upcard of docs/rules.md SC03: a joker and a red three are covered; seat 0 then draws)::

    {
      "name": "sc03_special_upcards",
      "rule": "docs/rules.md SC03, §1.5 H3",
      "dealer": 3,
      "deal": {
        "hands": ["4c 4d 4h 5c 5d 5h 6c 6d 6h 7c 7d", "8c 8d 8h 9d 9h 9s 10c 10d 10h jc jd",
                  "qc qd qh kc kd kh ac ad ah 4s 5s", "6s 7s 8s 9s 10s js qs ks as 4c 5c"],
        "upcard": ["jk", "3h", "9c"],
        "stock": ["kd", "qh"]
      },
      "actions": [[0, "draw"], [0, "discard kd"]],
      "expect": {
        "results": ["ok", "ok"],
        "states": [{"after": 0, "pile": ["jk", "3h", "9c"], "pile_frozen": true,
                    "stock_size": 61}],
        "end": null
      }
    }

The report
----------
``{"actions": [...], "hand": null | {...}, "match": {...}, "position": {...}}``: one entry
per action, ``{"seat": 0, "action": "draw", "result": "ok"}`` or ``{"seat": 1, "action":
"pickup", "result": "error", "kind": "illegal", "rule": "1.8.2", "message": "..."}``; the
hand's result once it ended (``reason``, ``went_out``, ``concealed`` and per column
``meld_points``, ``natural_canastas``, ``mixed_canastas``, ``canasta_bonus``,
``red_threes``, ``red_three_points``, ``going_out_bonus``, ``hand_penalty`` (cards left in
hand), ``hand_total``, ``cumulative``, ``sequence_canastas``, ``wild_canastas``); the
match (``phase``, ``winners``, ``scores``, ``target``); and the final position (as the
``state`` keys above, without the stock order).

From Python: ``run_scenario(data)`` returns the report for parsed JSON; ``load_scenario`` and
``play`` are the steps the tests use (``play`` also keeps the position after every action),
before they compare the result with ``expect``. A file that is not a valid scenario raises
``ScenarioError``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .cards import THREE, Card, card_text, parse_card
from .config import RuleConfig, make_config
from .dealing import deal_position, new_match
from .engine import apply_turn
from .errors import CanastaError
from .melds import GROUP, check_meld, meld_kind, meld_rank
from .notation import parse_turn
from .ruleset import rules_of
from .state import GameState, Phase

_TOP_KEYS = frozenset(
    {
        "name", "rule", "description", "notes", "preset", "options", "scores", "dealer",
        "hand_number", "deal", "actions", "expect", "variants",
    }
)  # fmt: skip
_DEAL_KEYS = frozenset(
    {
        "hands", "upcard", "stock", "pile", "melds", "red3", "turn", "melded", "fill", "talon",
        "talon_owed", "wild_opening", "feet",
    }
)  # fmt: skip


class ScenarioError(ValueError):
    """The file does not describe a playable scenario (bad JSON shape, card, option...)."""


@dataclass(frozen=True, slots=True)
class Scenario:
    """A scenario read from JSON: the dealt position and the actions to play on it."""

    name: str
    config: RuleConfig
    start: GameState
    actions: tuple[tuple[int, str], ...]
    expect: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Replay:
    """What playing a scenario produced: the report and the position after each action."""

    report: dict[str, Any]
    states: tuple[GameState, ...]
    """``states[0]`` is the dealt position, ``states[n]`` the position after action n."""


# -- reading a file ---------------------------------------------------------------------------


def variant_names(data: Mapping[str, Any]) -> list[str]:
    """The names of the variants a scenario file defines (in file order)."""
    variants = data.get("variants", [])
    if not isinstance(variants, list) or not all(
        isinstance(v, dict) and isinstance(v.get("name"), str) for v in variants
    ):
        raise ScenarioError("variants must be a list of objects, each with a name")
    return [v["name"] for v in variants]


def select_variant(data: Mapping[str, Any], variant: str | None) -> dict[str, Any]:
    """The scenario with ``variant``'s keys laid over the base (``None``: the base)."""
    if not isinstance(data, Mapping):
        raise ScenarioError("a scenario file must hold one JSON object")
    base = {k: v for k, v in data.items() if k != "variants"}
    if variant is None:
        return base
    names = variant_names(data)
    if variant not in names:
        known = f"variants: {', '.join(names)}" if names else "the file has no variants"
        raise ScenarioError(f"no variant named {variant!r} ({known})")
    override = data["variants"][names.index(variant)]
    merged = dict(base)
    for key, value in override.items():
        if key == "options":
            merged["options"] = {
                **read_mapping(base.get("options", {}), "options"),
                **read_mapping(value, "a variant's options"),
            }
        elif key != "name":
            merged[key] = value
    merged["name"] = f"{base.get('name', 'scenario')}[{variant}]"
    return merged


def load_scenario(data: Mapping[str, Any], variant: str | None = None) -> Scenario:
    """Build the dealt position of a scenario; raises ``ScenarioError`` if it is not valid."""
    data = select_variant(data, variant)
    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        raise ScenarioError(f"unknown key(s) {', '.join(map(repr, unknown))} in the scenario")
    preset = data.get("preset", "classic")
    if not isinstance(preset, str):
        raise ScenarioError('preset must be a name such as "classic"')
    try:
        config = make_config(preset, read_mapping(data.get("options", {}), "options"))
    except CanastaError as exc:
        raise ScenarioError(exc.message) from None
    try:
        start = _deal(config, data)
    except CanastaError as exc:  # a bad card text, too many copies, a bad meld
        raise ScenarioError(exc.message) from None
    actions = _actions(data.get("actions", []), config.players)
    expect = read_mapping(data.get("expect", {}), "expect")
    return Scenario(str(data.get("name", "scenario")), config, start, actions, expect)


# The file's values: each reader raises ``ScenarioError`` naming the key (``what``) whose value
# is not of the documented shape. They are public because the test suite's ``expect`` checker
# (tests/shared/rules/expectations.py) reads its block with them, in the same format.


def read_mapping(value: Any, what: str) -> Mapping[str, Any]:
    """A JSON object."""
    if not isinstance(value, Mapping):
        raise ScenarioError(f"{what} must be a JSON object")
    return value


def read_list(value: Any, what: str) -> list[Any]:
    """A JSON list."""
    if not isinstance(value, list):
        raise ScenarioError(f"{what} must be a list")
    return value


def read_int(value: Any, what: str) -> int:
    """A whole number (not ``true`` or ``false``)."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise ScenarioError(f"{what} must be a whole number, not {value!r}")
    return value


def read_cards(value: Any, what: str) -> tuple[Card, ...]:
    """Cards from a list of texts or one space-separated string."""
    if isinstance(value, str):
        words = value.replace(",", " ").split()
    elif isinstance(value, list) and all(isinstance(w, str) for w in value):
        words = value
    else:
        raise ScenarioError(f'{what} must be a list of cards such as ["7h", "jk"]')
    try:
        return tuple(parse_card(w) for w in words)
    except CanastaError as exc:
        raise ScenarioError(f"{what}: {exc.message}") from None


def _per(value: Any, count: int, what: str, unit: str = "seat") -> list[Any]:
    if not isinstance(value, list) or len(value) != count:
        raise ScenarioError(f"{what} must be a list with one entry per {unit} ({count})")
    return value


def _seat(value: Any, players: int, what: str) -> int:
    seat = read_int(value, what)
    if not 0 <= seat < players:
        raise ScenarioError(f"{what} must be a seat from 0 to {players - 1}, not {seat}")
    return seat


def _deal(config: RuleConfig, data: Mapping[str, Any]) -> GameState:
    n = config.players
    deal = read_mapping(data.get("deal"), "deal") if "deal" in data else None
    if deal is None:
        raise ScenarioError("the scenario needs a deal with each seat's hand")
    unknown = sorted(set(deal) - _DEAL_KEYS)
    if unknown:
        raise ScenarioError(f"unknown key(s) {', '.join(map(repr, unknown))} in deal")
    hands = [
        read_cards(h, f"deal.hands[{i}]")
        for i, h in enumerate(_per(deal.get("hands"), n, "deal.hands"))
    ]
    upcard = read_cards(deal.get("upcard", []), "deal.upcard")
    stock = read_cards(deal.get("stock", []), "deal.stock")
    pile = read_cards(deal["pile"], "deal.pile") if "pile" in deal else None
    mid_hand = pile is not None
    if mid_hand:
        if not pile:
            raise ScenarioError("deal.pile must name at least one card (or leave it out)")
        if upcard:
            raise ScenarioError("give either deal.upcard (a new hand) or deal.pile, not both")
        for seat, hand in enumerate(hands):
            if not hand:
                raise ScenarioError(f"deal.hands[{seat}] is empty: a player must hold a card")
    else:
        for seat, hand in enumerate(hands):
            if len(hand) != config.hand_size:
                raise ScenarioError(
                    f"deal.hands[{seat}] holds {len(hand)} cards; a {config.preset} deal gives "
                    f"{config.hand_size} (give deal.pile for a mid-hand position)"
                )
    melds = None
    if "melds" in deal:
        melds = [
            [_meld(config, m, f"deal.melds[{side}]") for m in read_list(groups, "deal.melds")]
            for side, groups in enumerate(_per(deal["melds"], config.sides, "deal.melds", "side"))
        ]
        for side, groups in enumerate(melds):
            ranks = [meld_rank(m) for m in groups if meld_kind(m) == GROUP]
            if len(set(ranks)) != len(ranks) and not config.multiple_melds_per_rank:
                raise ScenarioError(f"deal.melds[{side}] has two melds of one rank")
    red3 = None
    if "red3" in deal:
        red3 = [
            read_cards(r, f"deal.red3[{i}]")
            for i, r in enumerate(_per(deal["red3"], n, "deal.red3"))
        ]
        laid = rules_of(config).laid_out_threes()
        if any(not laid[c] for r in red3 for c in r):
            raise ScenarioError(
                "deal.red3 may hold only threes"
                if config.modern_american
                else "deal.red3 may hold only red threes (3d, 3h)"
            )
    packet_sizes = rules_of(config).packet_sizes
    for name in ("talon", "talon_owed", "wild_opening"):
        if name in deal and not packet_sizes:
            raise ScenarioError(f"deal.{name}: a {config.preset} game has no talon (§3.6)")
    talon = None
    if "talon" in deal:
        talon = [
            read_cards(p, "deal.talon") for p in _per(deal["talon"], 2, "deal.talon", "packet")
        ]
        if any(len(p) not in (0, size) for p, size in zip(talon, packet_sizes, strict=True)):
            raise ScenarioError(
                "deal.talon holds the packets of 4 and 3 bonus cards (one empty once drawn)"
            )
    feet = None
    if "feet" in deal:
        if not config.foot_size:
            raise ScenarioError(f"deal.feet: a {config.preset} game has no feet")
        feet = [
            read_cards(f, f"deal.feet[{i}]")
            for i, f in enumerate(_per(deal["feet"], n, "deal.feet"))
        ]
    turn = _seat(deal["turn"], n, "deal.turn") if "turn" in deal else None
    fill = deal.get("fill", "stock")
    if fill not in ("stock", "box"):
        raise ScenarioError('deal.fill must be "stock" or "box"')
    scores = data.get("scores", [0] * config.sides)
    scores = [read_int(s, "scores") for s in _per(scores, config.sides, "scores", "score column")]
    dealer = _seat(data.get("dealer", 0), n, "dealer")
    hand_number = read_int(data.get("hand_number", 1), "hand_number")
    if hand_number < 1:
        raise ScenarioError("hand_number starts at 1")
    before = dataclasses.replace(
        new_match(config), dealer=dealer, scores=tuple(scores), hand_number=hand_number - 1
    )
    state = deal_position(
        before,
        hands,
        upcard + stock,
        pile=pile or (),
        melds=melds,
        red3=red3,
        turn=turn,
        fill=fill,
        talon=talon,
        feet=feet,
    )
    if upcard:
        _check_upcard(config, state, upcard)
    if "talon_owed" in deal:
        owed = [
            read_int(x, "deal.talon_owed") for x in _per(deal["talon_owed"], n, "deal.talon_owed")
        ]
        if any(x not in (0, 1, 2) for x in owed):
            raise ScenarioError("deal.talon_owed names the packet 1 or 2 a seat draws, or 0")
        state = dataclasses.replace(state, talon_owed=tuple(owed))
    if "wild_opening" in deal:
        flags = _per(deal["wild_opening"], config.sides, "deal.wild_opening", "side")
        if not all(isinstance(x, bool) for x in flags):
            raise ScenarioError("deal.wild_opening holds true or false per side")
        state = dataclasses.replace(state, wild_opening=tuple(flags))
    if "melded" in deal:
        seats = {_seat(x, n, "deal.melded") for x in read_list(deal["melded"], "deal.melded")}
        state = dataclasses.replace(state, melded_seats=tuple(s in seats for s in range(n)))
    return state


def _meld(config: RuleConfig, value: Any, what: str) -> tuple[Card, ...]:
    cards = read_cards(value, what)
    try:
        if rules_of(config).check_position_meld(config, cards):
            return cards  # a sequence or a wild meld, checked by the ruleset that has them
        rank = meld_rank(cards)
        if rank == THREE:
            raise ScenarioError(f"{what}: black threes are only melded while going out")
        check_meld(config, rank, cards, new=True)
    except CanastaError as exc:
        raise ScenarioError(f"{what}: {exc.message} ({' '.join(map(card_text, cards))})") from None
    return cards


def _check_upcard(config: RuleConfig, state: GameState, upcard: Sequence[Card]) -> None:
    """The upcard list must be exactly the cards the upcard procedure turned."""
    if config.upcard_mode == "bury_and_redraw":
        turned: tuple[Card, ...] = (upcard[-1],)
        ok = state.pile == turned and all(
            c in state.stock[len(state.stock) - len(upcard) + 1 :] for c in upcard[:-1]
        )
    else:
        ok = state.pile == tuple(upcard)
    if not ok:
        raise ScenarioError(
            f"deal.upcard lists {' '.join(map(card_text, upcard))} but turning the upcard "
            f"gives the pile {' '.join(map(card_text, state.pile)) or '(empty)'}: list every "
            "card turned, ending with the first natural card or black three"
        )


def _actions(value: Any, players: int) -> tuple[tuple[int, str], ...]:
    out = []
    for number, entry in enumerate(read_list(value, "actions"), 1):
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[1], str)):
            raise ScenarioError(f'action {number} must be [seat, "action text"], not {entry!r}')
        out.append((_seat(entry[0], players, f"the seat of action {number}"), entry[1]))
    return tuple(out)


# -- playing -----------------------------------------------------------------------------------


def play(scenario: Scenario) -> Replay:
    """Play every action of ``scenario``; refused actions leave the position unchanged."""
    state = scenario.start
    states = [state]
    results: list[dict[str, Any]] = []
    for seat, text in scenario.actions:
        entry: dict[str, Any] = {"seat": seat, "action": text}
        try:
            state = apply_turn(state, seat, parse_turn(text))
            entry["result"] = "ok"
        except CanastaError as exc:
            entry.update(result="error", kind=exc.kind, rule=exc.rule, message=exc.message)
        results.append(entry)
        states.append(state)
    hand = None
    if state.phase in (Phase.DEAL, Phase.MATCH_OVER) and state.last_hand:
        hand = state.last_hand.to_json()
        hand["columns"] = [dict(col) for col in hand["columns"]]  # a list, as JSON has
    report = {
        "actions": results,
        "hand": hand,
        "match": {
            "phase": state.phase.value,
            "winners": list(state.winners),
            "scores": list(state.scores),
            "target": state.target,
        },
        "position": {k: v for k, v in describe(state).items() if k != "stock"},
    }
    return Replay(report, tuple(states))


def run_scenario(data: Mapping[str, Any], variant: str | None = None) -> dict[str, Any]:
    """Play a scenario given as parsed JSON and return the report (see the module docs)."""
    return play(load_scenario(data, variant)).report


def describe(state: GameState) -> dict[str, Any]:
    """A JSON summary of a position: what ``expect.state`` checks and the report shows."""
    sides = len(state.melds)
    return {
        "phase": state.phase.value,
        "hand_number": state.hand_number,
        "dealer": state.dealer,
        "turn": state.turn,
        "actor": state.actor(),
        "scores": list(state.scores),
        "target": state.target,
        "winners": list(state.winners),
        "stock_size": len(state.stock),
        "stock": _texts(state.stock),
        "pile": _texts(state.pile),
        "pile_frozen": state.pile_frozen,
        "hands": [_texts(h) for h in state.hands],
        "hand_sizes": [len(h) for h in state.hands],
        "foot_sizes": [len(f) for f in state.feet],
        "side_of": list(state.side_of),
        "melds": [
            [_texts(m) for m in side if m] + [_texts(m) for m in state.extra_of(i)]
            for i, side in enumerate(state.melds)
        ],
        "canastas": [state.canastas(side) for side in range(sides)],
        "opened": [state.opened(side) for side in range(sides)],
        "red3": [_texts(r) for r in state.red3],
        "permission": state.permission,
        "must_go_out": state.must_go_out,
        "talon_sizes": [len(p) for p in state.talon],
    }


def _texts(cards: Sequence[Card]) -> list[str]:
    return [card_text(c) for c in cards]


# -- command line -------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m shared.rules.scenario FILE [--variant NAME]``: print the report as JSON."""
    parser = argparse.ArgumentParser(
        prog="python -m shared.rules.scenario",
        description="Play a Canasta scenario file and print what happened as JSON.",
    )
    parser.add_argument("file", help="the scenario JSON file, or - for standard input")
    parser.add_argument("--variant", help="play this named variant of the file")
    args = parser.parse_args(argv)
    try:
        if args.file == "-":
            text = sys.stdin.read()
        else:
            with open(args.file, encoding="utf-8") as handle:
                text = handle.read()
        data = json.loads(text)
        report = run_scenario(data, args.variant)
    except OSError as exc:
        print(f"scenario: cannot read {args.file}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except json.JSONDecodeError as exc:
        print(f"scenario: {args.file} is not valid JSON: {exc}", file=sys.stderr)
        return 2
    except ScenarioError as exc:
        print(f"scenario: {args.file}: {exc}", file=sys.stderr)
        return 2
    try:
        print(json.dumps(report, indent=2))
        sys.stdout.flush()
    except BrokenPipeError:  # e.g. piped into head: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main())
