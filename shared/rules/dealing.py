"""Starting a match and dealing a hand: deal, upcard, dealt red threes (docs/rules.md §1.3, §1.5).

The upcard procedure and its freezing (§1.5 H3, D2) are here; laying out the dealt red
threes (§1.5 H4, D3) is ``threes.lay_out_red_threes``.

Dealing is a chance step outside the players' control, so it takes its randomness from the
caller: a full card order (``deal_hand``), an explicit position (``deal_position``) or a seed
(``shuffled_deck``). The server derives the order by commit-reveal (``shared.crypto``).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

from .cards import (
    IS_BLACK3,
    IS_RED3,
    IS_WILD,
    RANK,
    SORT_KEY,
    Card,
    card_text,
    deck,
    sort_cards,
)
from .config import RuleConfig
from .errors import ConfigError, WrongPhaseError
from .ruleset import rules_of
from .state import EMPTY_MELDS, Event, GameState, Melds, Phase
from .threes import lay_out_red_threes


def new_match(
    config: RuleConfig,
    *,
    seed: int | str | bytes | None = None,
    first_dealer: int | None = None,
) -> GameState:
    """A match before its first deal; the first dealer is drawn from ``seed`` (D23), or is
    ``first_dealer`` when given (a record that names the dealer it began with)."""
    if first_dealer is not None:
        if not 0 <= first_dealer < config.players:
            raise ConfigError(f"there is no seat {first_dealer} to deal first")
        dealer = first_dealer
    elif config.dealer_selection == "seat0" or seed is None:
        dealer = 0
    else:
        dealer = random.Random(_seed_int(seed)).randrange(config.players)
    n, sides = config.players, config.sides
    return GameState(
        config=config,
        phase=Phase.DEAL,
        hand_number=0,
        dealer=dealer,
        turn=0,
        scores=(0,) * sides,
        target=config.target,
        stock=(),
        pile=(),
        pile_frozen=False,
        hands=((),) * n,
        side_of=tuple(config.initial_side(s) for s in range(n)),
        melds=(EMPTY_MELDS,) * sides,
        extra=((),) * sides if config.variant_melds else (),
        feet=((),) * n if config.foot_size else (),
        red3=((),) * n,
        melded_seats=(False,) * n,
        pending_red3=(False,) * n,
        asks=(0,) * n,
    )


def shuffled_deck(config: RuleConfig, seed: int | str | bytes) -> tuple[Card, ...]:
    """The deck in an order drawn from ``seed`` (for tests, bots and offline play)."""
    cards = list(deck(config.decks, config.jokers_per_deck))
    random.Random(_seed_int(seed)).shuffle(cards)
    return tuple(cards)


def _seed_int(seed: int | str | bytes) -> int:
    if isinstance(seed, int):
        return seed
    data = seed.encode() if isinstance(seed, str) else seed
    return int.from_bytes(data, "big") if data else 0


def deal_hand(state: GameState, order: Sequence[Card]) -> GameState:
    """Deal the next hand from a full deck ``order`` (top card first).

    Cards go one at a time clockwise from the dealer's left (§1.5 H2), then in Hand and Foot
    the feet the same way (§3.7); the rest is the stock.
    """
    config = state.config
    _require_deal_phase(state)
    _require_full_deck(config, order)
    n = config.players
    dealt = n * config.hand_size
    hands: list[list[Card]] = [[] for _ in range(n)]
    for i in range(dealt):
        hands[(state.dealer + 1 + i) % n].append(order[i])
    feet, in_feet = rules_of(config).deal_extras(config, order, dealt, state.dealer)
    return _start_hand(state, hands, tuple(order[dealt + in_feet :]), feet=feet)


def deal_position(
    state: GameState,
    hands: Sequence[Sequence[Card]],
    stock: Sequence[Card],
    *,
    pile: Sequence[Card] = (),
    melds: Sequence[Sequence[Sequence[Card]]] | None = None,
    red3: Sequence[Sequence[Card]] | None = None,
    turn: int | None = None,
    fill: str = "stock",
    talon: Sequence[Sequence[Card]] | None = None,
    feet: Sequence[Sequence[Card]] | None = None,
) -> GameState:
    """Start a hand from an explicit position, for scenarios and bug reports.

    ``stock`` is top first and begins with the card(s) to be turned as the upcard unless
    ``pile`` is given, in which case no upcard is turned and play starts from that pile.
    Cards of the deck that appear nowhere go under the stock (``fill="stock"``) or out of
    play (``fill="box"``), so every card stays accounted for. Modern American (§3.6) sets
    the ``talon`` packets aside (first opener's first); left out, they are the first seven
    of those unnamed cards. In Hand and Foot ``feet`` are the seats' feet still face down
    (default: every foot already picked up, §3.7).
    """
    config = state.config
    _require_deal_phase(state)
    n = config.players
    if len(hands) != n:
        raise ConfigError(f"the position names {len(hands)} hands for {n} players")
    side_melds: list[Melds] = [EMPTY_MELDS] * config.sides
    side_extra: list[list[tuple[Card, ...]]] = [[] for _ in range(config.sides)]
    ruleset = rules_of(config)
    wild_slot = ruleset.wild_meld_slot()
    for side, groups in enumerate(melds or ()):
        table = list(EMPTY_MELDS)
        for group in groups:
            if not group:
                continue
            ranks = {RANK[c] for c in group if not IS_WILD[c]}
            if not ranks and wild_slot is not None and not table[wild_slot]:
                table[wild_slot] = tuple(group)  # §3.6: the side's wild meld
                continue
            if not ranks and not config.allow_wild_melds:
                raise ConfigError("a meld in the position has no natural card")
            if len(ranks) == 1 and not table[next(iter(ranks))]:
                table[next(iter(ranks))] = tuple(group)
            elif config.variant_melds:  # a sequence, a wild meld, a further meld of a rank
                side_extra[side].append(tuple(group))
            else:
                raise ConfigError("the position has a meld that this game does not allow")
        side_melds[side] = tuple(table)
    laid = [tuple(r) for r in (red3 or [()] * n)]
    used = Counter(c for h in hands for c in h)
    used.update(stock)
    used.update(pile)
    used.update(c for side in side_melds for m in side for c in m)
    used.update(c for side in side_extra for m in side for c in m)
    used.update(c for r in laid for c in r)
    used.update(c for packet in talon or () for c in packet)
    face_down = tuple(tuple(sort_cards(f)) for f in feet) if feet else ((),) * n
    if feet and not config.foot_size:
        raise ConfigError("the position names feet in a game without them")
    if feet and len(feet) != n:
        raise ConfigError(f"the position names {len(feet)} feet for {n} players")
    used.update(c for f in face_down for c in f)
    remaining = Counter(deck(config.decks, config.jokers_per_deck))
    remaining.subtract(used)
    over = [card_text(c) for c, k in remaining.items() if k < 0]
    if over:
        raise ConfigError(f"the position uses more copies than the deck has of: {', '.join(over)}")
    rest = tuple(sorted(remaining.elements()))
    packets, rest = ruleset.packets_aside(rest, talon)
    full_stock = tuple(stock) + (rest if fill == "stock" else ())
    start = _start_hand(
        state,
        [list(h) for h in hands],
        full_stock,
        turn_upcard=not pile,
        talon=packets,
        feet=face_down if config.foot_size else (),
    )
    start.box = rest if fill == "box" else ()
    if pile:
        start.pile = tuple(pile)
        start.pile_frozen = config.pile_freezes and any(
            IS_WILD[c] or IS_RED3[c] or (config.black3_freezes and IS_BLACK3[c]) for c in pile
        )
    start.melds = tuple(side_melds)
    if config.variant_melds:
        start.extra = tuple(tuple(side) for side in side_extra)
    start.red3 = tuple(tuple(a) + tuple(b) for a, b in zip(laid, start.red3, strict=True))
    if turn is not None:
        start.turn = turn
    return start


def _require_deal_phase(state: GameState) -> None:
    if state.phase is not Phase.DEAL:
        raise WrongPhaseError("a new hand can only be dealt when the previous one is over")


def _require_full_deck(config: RuleConfig, order: Sequence[Card]) -> None:
    if Counter(order) != Counter(deck(config.decks, config.jokers_per_deck)):
        raise ConfigError(f"the deal order must hold exactly the {config.deck_size}-card deck")


def _start_hand(
    state: GameState,
    hands: list[list[Card]],
    stock: tuple[Card, ...],
    turn_upcard: bool = True,
    talon: tuple[tuple[Card, ...], ...] | None = None,
    feet: tuple[tuple[Card, ...], ...] = (),
) -> GameState:
    config = state.config
    n = config.players
    s = state._clone()
    s.hand_number = state.hand_number + 1
    s.phase = Phase.DRAW
    s.turn = (state.dealer + 1) % n
    s.stock = stock
    s.pile = ()
    s.pile_frozen = False
    s.hands = tuple(tuple(sorted(h, key=SORT_KEY.__getitem__)) for h in hands)
    s.side_of = tuple(config.initial_side(seat) for seat in range(n))
    s.melds = (EMPTY_MELDS,) * config.sides
    s.extra = ((),) * config.sides if config.variant_melds else ()
    s.feet = feet
    s.red3 = ((),) * n
    s.box = ()
    s.melded_seats = (False,) * n
    s.pending_red3 = (False,) * n
    s.lone_seat = None
    s.asks = (0,) * n
    s.last_hand = state.last_hand
    s.events = tuple(
        Event(seat, "deal", private=s.hands[seat], text=f"dealt {len(s.hands[seat])} cards")
        for seat in range(n)
    )
    reset_turn(s)
    ruleset = rules_of(config)
    if not ruleset.set_aside(s, talon) and turn_upcard:  # (Modern American: no upcard, §3.6)
        _turn_upcard(s)
    if config.red3_deal_timing == "immediate":
        for step in range(n):
            lay_out_red_threes(s, (s.turn + step) % n)
    else:
        out = ruleset.laid_out_threes()  # (Modern American: black threes too, §3.6)
        s.pending_red3 = tuple(any(out[c] for c in h) for h in s.hands)
        if s.pending_red3[s.turn]:
            lay_out_red_threes(s, s.turn)
    return s


def reset_turn(s: GameState) -> None:
    """Clear the per-turn flags at the start of a turn."""
    s.drew_from_stock = False
    s.turn_melded = False
    s.turn_put_down = False
    s.touched_old_meld = False
    s.turn_new_ranks = 0
    s.asked = False
    s.permission = None
    s.must_go_out = False
    s.answer_phase = Phase.PLAY
    s.no_discard = False


def _turn_upcard(s: GameState) -> None:
    """Start the pile (§1.5 H3; D2 for the other modes)."""
    mode = s.config.upcard_mode
    if mode == "none":  # §3.7 (HF-ED): no upcard, the first player draws
        return
    turned: list[Card] = []
    for _ in range(len(s.stock)):
        card = s.stock[0]
        s.stock = s.stock[1:]
        special = IS_WILD[card] or IS_RED3[card]
        if mode == "bury_and_redraw":
            if special or IS_BLACK3[card]:
                s.stock = (*s.stock, card)
                continue
            s.pile = (card,)
            turned.append(card)
            break
        s.pile = (*s.pile, card)
        turned.append(card)
        if special:
            if mode == "cover_and_freeze":
                s.pile_frozen = True
            continue
        if IS_BLACK3[card] and s.config.black3_freezes:
            s.pile_frozen = True
        break
    s.events = (*s.events, Event(s.dealer, "upcard", tuple(turned), text="turned the upcard"))
