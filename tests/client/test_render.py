"""The client's rendering, on messages made from real engine states and a real server.

Views come from ``shared.rules`` positions converted by ``shared.wire.view_to_pb`` (what the
server sends); the match list and the history come from a real in-process server with bots.
The checks are the ones a player relies on: their whole hand is shown, nobody else's is, the
pile's freeze is explained, plain output is ASCII with cards as typed, colour output is not.
"""

from __future__ import annotations

import io
import json
import random
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest
from google.protobuf import json_format

from client.render import (
    message_json,
    notification_line,
    render_history,
    render_matches,
    short_ids,
    use_color,
    watch_line,
)
from server.app import App, open_app
from server.config import ServerConfig
from server.service.play.bots import default_chooser
from shared import rules
from shared.pb import canasta_pb2 as pb
from shared.rules import GameState, Phase, card_text
from shared.rules.bot import choose_action
from shared.rules.dealing import deal_position
from shared.tabletext import COMMANDS, aborted_text, render_table
from shared.textstyle import group_hand, sort_key, strip_ansi
from shared.wire import view_to_pb
from tests.testkit import PlayerClient, authoritative_state

NAMES = ("alice", "bob", "carol", "dave", "erin", "frank")
ANSI = re.compile(r"\x1b\[")
MATCH_ID = "0f3c9a1e5b7d4c2a8e6f0b1d3a5c7e9f"


def match_view(state: GameState, seat: int, *, bots: frozenset[int] = frozenset()) -> pb.MatchView:
    """What the server would send ``seat``: the engine's view plus the match's lobby facts."""
    config = state.config
    actor = state.actor()
    dealing = state.dealer if state.phase is Phase.DEAL and state.hand_number >= 0 else None
    to_act = dealing if state.phase is Phase.DEAL else actor
    summary = pb.MatchSummary(
        match_id=MATCH_ID,
        preset=config.preset,
        status=(
            pb.MATCH_STATUS_FINISHED if state.phase is Phase.MATCH_OVER else pb.MATCH_STATUS_PLAYING
        ),
        players=config.players,
        seats=[
            pb.SeatInfo(
                seat=s,
                kind=pb.SEAT_KIND_BOT if s in bots else pb.SEAT_KIND_HUMAN,
                display_name=NAMES[s],
                side=config.initial_side(s),
            )
            for s in range(config.players)
        ],
        my_seat=seat,
        my_turn=to_act == seat,
        scores=list(state.scores),
        target=state.target,
        hand_number=state.hand_number,
        winners=list(state.winners),
    )
    if to_act is not None and state.phase is not Phase.MATCH_OVER:
        summary.to_act = to_act
    message = pb.MatchView(match=summary, view=view_to_pb(rules.player_view(state, seat)))
    if dealing is not None and state.phase is Phase.DEAL:
        message.dealing_seat = dealing
    return message


def dealt(preset: str = "classic", seed: int = 7, **options: object) -> GameState:
    config = rules.make_config(preset, options)
    state = rules.new_match(config, seed=seed)
    return rules.deal_hand(state, rules.shuffled_deck(config, seed))


def play_until(
    state: GameState, done: Callable[[GameState], bool], seed: int = 1, limit: int = 3000
) -> GameState:
    """Let the engine's bot play every seat (dealing new hands) until ``done``."""
    rng = random.Random(seed)
    for _ in range(limit):
        if done(state):
            return state
        if state.phase is Phase.DEAL:
            state = rules.deal_hand(
                state, rules.shuffled_deck(state.config, rng.randrange(1 << 30))
            )
            continue
        seat = state.actor()
        assert seat is not None
        state = rules.apply(state, seat, choose_action(state, seat, rng))
    raise AssertionError("the position never came")


def hand_line_cards(text: str) -> list[str]:
    """The card words of the 'Your hand' block (the lines after its title)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Your hand"))
    words: list[str] = []
    for line in lines[start + 1 :]:
        if not line.startswith("  "):
            break
        words += [w for w in line.split() if w != "|" and not w.startswith("(") and w[0] != "w"]
    return [w for w in words if not w.endswith(")")]


def assert_plain(text: str) -> None:
    assert not ANSI.search(text)
    assert text.isascii()
    assert all(len(line) <= 80 for line in text.splitlines()), text


# -- use_color ----------------------------------------------------------------------------------


class FakeTty(io.TextIOWrapper):
    """A text stream that says whether it is a terminal, with a chosen encoding."""

    def __init__(self, tty: bool, encoding: str = "utf-8") -> None:
        super().__init__(io.BytesIO(), encoding=encoding)
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


def test_use_color_follows_the_terminal_and_the_conventions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    assert use_color(stream=FakeTty(True))
    assert not use_color(stream=FakeTty(False))  # piped: plain for scripts
    assert not use_color(no_color=True, stream=FakeTty(True))
    assert not use_color(stream=FakeTty(True, encoding="ascii"))  # suits could not be printed
    monkeypatch.setenv("NO_COLOR", "1")
    assert not use_color(stream=FakeTty(True))
    monkeypatch.setenv("NO_COLOR", "")  # no-color.org: only a non-empty value counts
    assert use_color(stream=FakeTty(True))
    monkeypatch.setenv("TERM", "dumb")
    assert not use_color(stream=FakeTty(True))


def test_use_color_defaults_to_stdout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setattr("sys.stdout", FakeTty(False))
    assert not use_color()


# -- cards -----------------------------------------------------------------------------------------


def test_hand_groups_follow_the_engine_display_order() -> None:
    cards = [card_text(c) for c in rules.deck(1)]
    random.Random(3).shuffle(cards)
    ours = sorted(cards, key=sort_key)
    assert ours == [card_text(c) for c in rules.sort_cards(rules.parse_cards(cards))]
    groups = [name for name, _ in group_hand(cards)]
    assert groups == ["4", "5", "6", "7", "8", "9", "10", "j", "q", "k", "a", "wild", "3"]


# -- the table -------------------------------------------------------------------------------------


def test_table_shows_my_whole_hand_and_no_one_elses() -> None:
    state = dealt()
    for seat in range(4):
        text = render_table(match_view(state, seat), color=False)
        assert_plain(text)
        mine = [card_text(c) for c in rules.sort_cards(state.hands[seat])]
        assert hand_line_cards(text) == mine
        words = set(re.findall(r"\b(?:10|[2-9jqka])[cdhs]\b|\bjk\b", text))
        visible = set(mine)
        visible |= {card_text(c) for c in state.pile}  # the upcard and the pile's top
        visible |= {card_text(c) for threes in state.red3 for c in threes}
        visible |= {card_text(c) for side in state.melds for meld in side for c in meld}
        visible |= {card_text(c) for e in state.events if e.seat == seat for c in e.private}
        assert words <= visible, words - visible
        for other in range(4):
            hidden = set(state.hands[other]) - set(state.hands[seat]) - set(state.pile)
            hidden -= {c for e in state.events for c in e.cards}
            assert not {card_text(c) for c in hidden} & words


def test_table_in_the_draw_phase_says_whose_turn_and_why_the_pile_is_frozen() -> None:
    state = dealt()
    actor = state.actor()
    assert actor is not None
    assert state.phase is Phase.DRAW
    mine = render_table(match_view(state, actor), color=False)
    assert "Your turn: draw (canasta draw)" in mine
    other = (actor + 1) % 4
    theirs = render_table(match_view(state, other), color=False)
    assert f"Waiting for {NAMES[actor]} (seat {actor}" in theirs
    assert "to draw" in theirs
    view = rules.player_view(state, actor)
    assert view.frozen_reason  # nobody has melded yet
    assert f"FROZEN: {view.frozen_reason}" in mine
    assert f"Stock     {len(state.stock)} cards" in mine
    assert f"{card_text(state.pile[-1])} on top, {len(state.pile)} card" in mine
    assert "Score     you+" in mine
    assert "(opens with 50)" in mine
    for seat in range(4):
        assert f"{seat} {NAMES[seat]}" in theirs


def test_a_black_three_on_top_blocks_the_pile() -> None:
    def blocked(s: GameState) -> bool:
        return s.phase is Phase.DRAW and bool(s.pile) and rules.cards.IS_BLACK3[s.pile[-1]]

    state = play_until(dealt(), blocked)
    text = render_table(match_view(state, state.turn), color=False)
    assert_plain(text)
    assert "BLOCKED: a black three is on top, nobody may take it" in text
    assert "take the pile" not in text


def test_recent_events_repeat_what_others_did_since_my_last_move() -> None:
    state = dealt()
    seat = state.actor()
    assert seat is not None

    def my_second_turn(s: GameState) -> bool:
        moved = any(e.seat == seat and e.kind == "discard" for e in s.events)
        return moved and s.phase is Phase.DRAW and s.turn == seat

    state = play_until(state, my_second_turn)
    text = render_table(match_view(state, seat), color=False)
    recent = [line for line in text.splitlines() if line.startswith("Recent")]
    assert recent
    last = next(e for e in reversed(state.events) if e.kind == "discard")
    assert last.seat != seat
    said = f"{NAMES[last.seat]} discarded {card_text(last.cards[0])}"
    # The newest event ends the list: a semicolon goes between events, not after the last.
    (line,) = [x for x in text.splitlines() if said in x]
    assert line.endswith(said), line


def test_a_take_counts_the_pile_and_not_the_cards_from_hand() -> None:
    """Issue 14.1: the take event lists the top, the cards from hand and the rest of the pile;
    the text says how many cards the pile held (six here), not eight."""
    config = rules.make_config("classic")
    state = rules.deal_position(
        rules.new_match(config, seed=0),
        [rules.parse_cards(h) for h in ("jc jh 5h 9s", "5c 5d", "8c 8d", "6c 6d")],
        rules.parse_cards("10c 10d 10h"),
        pile=rules.parse_cards("4c 5d 6s 7h 8h jd"),
        melds=[[rules.parse_cards("qc qd qh"), rules.parse_cards("kc kd kh ks kc kd 2c")], []],
        turn=0,
    )
    state = rules.apply(state, 0, rules.parse_action("pickup jc jh"))
    text = " ".join(render_table(match_view(state, 1), color=False).split())
    assert f"{NAMES[0]} took the pile (6 cards, top jd)" in text


def test_two_melds_of_one_move_read_as_two_melds() -> None:
    """Issue 28: ``meld 10c 10d 10h, 5h 5c 5d`` (one action, two melds) is told as two melds
    on the Recent line, not as one run of six cards."""
    config = rules.make_config("classic")
    state = rules.deal_position(
        rules.new_match(config, seed=0),
        [rules.parse_cards(h) for h in ("10c 10d 10h 5h 5c 5d 9s", "5c 5d", "8c 8d", "6c 6d")],
        rules.parse_cards("10s 4c 4d 4h"),
        pile=rules.parse_cards("4c"),
        melds=[[rules.parse_cards("qc qd qh")], []],
        turn=0,
    )
    state = rules.apply(state, 0, rules.parse_action("draw"))
    state = rules.apply(state, 0, rules.parse_action("meld 10c 10d 10h, 5h 5c 5d"))
    text = " ".join(render_table(match_view(state, 1), color=False).split())
    assert f"{NAMES[0]} melded 10c 10d 10h and 5h 5c 5d" in text, text


def test_recent_events_keep_everything_since_my_last_move() -> None:
    """Issue 14.2: after several of the others' turns nothing is silently dropped; only a very
    long absence leaves the oldest out, and the table says how many and where they are."""
    state = dealt()
    seat = state.actor()
    assert seat is not None
    state = rules.apply(state, seat, rules.parse_action("draw"))
    me = rules.player_view(state, seat).hand
    state = rules.apply(state, seat, rules.Discard(me[0]))
    view = match_view(state, seat)
    other = (seat + 1) % 4
    for number in range(12):
        view.view.events.append(pb.Event(seat=other, kind="ask", text=f"note {number}"))
    text = " ".join(render_table(view, color=False).split())
    assert text.count(f"{NAMES[other]} asked: may I go out?") == 12
    assert "earlier event" not in text
    for _ in range(40):
        view.view.events.append(pb.Event(seat=other, kind="ask"))
    text = " ".join(render_table(view, color=False).split())
    assert "(12 earlier events in `canasta history`)" in text
    assert text.count(f"{NAMES[other]} asked: may I go out?") == 40


def test_last_hand_is_shown_until_my_first_move_of_the_new_hand() -> None:
    """Issue 14.12: the previous hand's result stays on the table until the viewer's first
    move of the next hand (others' moves do not hide it), then it is gone."""
    state = play_until(
        dealt(),
        lambda s: (
            s.hand_number == 2
            and s.phase is Phase.DRAW
            and not any(e.kind in ("draw", "take") for e in s.events)
        ),
    )
    first = state.actor()
    assert first is not None
    second = (first + 1) % 4
    title = "Hand 1 "
    assert title in render_table(match_view(state, first), color=False)
    state = rules.apply(state, first, rules.parse_action("draw"))
    assert title not in render_table(match_view(state, first), color=False)
    assert title in render_table(match_view(state, second), color=False)


def test_partner_and_me_are_marked() -> None:
    state = dealt()
    text = render_table(match_view(state, 0, bots=frozenset({3})), color=False)
    assert "0 alice (you" in text
    assert "2 carol (partner" in text
    assert "3 dave (bot" in text
    assert "Us (you+carol)" in text
    assert "Them (bob+dave)" in text


def test_play_phase_lists_what_i_may_do_with_commands() -> None:
    state = play_until(
        dealt(), lambda s: s.phase is Phase.PLAY and bool(s.melds[s.side_of[s.turn]])
    )
    seat = state.turn
    text = render_table(match_view(state, seat), color=False)
    assert_plain(text)
    legal = rules.legal_action_kinds(state, seat)
    for kind in legal:
        words, command = COMMANDS[kind]
        assert f"{words} ({command})" in text
    assert 'canasta play "' in text
    assert hand_line_cards(text) == [card_text(c) for c in rules.sort_cards(state.hands[seat])]


def test_canastas_are_marked_natural_or_mixed() -> None:
    def has_both(s: GameState) -> bool:
        view = rules.player_view(s, 0)
        kinds = {m.canasta for side in view.sides for m in side.melds}
        return {"natural", "mixed"} <= kinds

    state = play_until(dealt(seed=3), has_both, seed=2)
    text = render_table(match_view(state, 0), color=False)
    assert "[natural canasta]" in text
    assert "[mixed canasta]" in text
    for side in rules.player_view(state, 0).sides:
        for meld in side.melds:
            cards = " ".join(card_text(c) for c in meld.cards)
            assert f"{meld.rank:>2} x{len(meld.cards)}: {cards}" in text


def test_samba_sequences_and_special_canastas_are_shown() -> None:
    """docs/rules.md §3.4: a sequence is shown joined (4s-5s-6s) under its name, a second meld of
    a rank as 9#2, and a seven-card sequence is labelled a samba."""
    config = rules.make_config("samba")
    state = deal_position(
        rules.new_match(config),
        [rules.parse_cards(h) for h in ("9d 9s 5c", "10c 10d", "4c 6d", "jc")],
        rules.parse_cards("7c 8c"),
        pile=rules.parse_cards("4c 8d"),
        melds=[[rules.parse_cards(m) for m in ("8h 9h 10h jh qh kh ah", "9c 9d 2c",
                                               "9c 9h 9s", "4s 5s 6s")], []],
        turn=0,
    )  # fmt: skip
    text = render_table(match_view(state, 1), color=False)
    assert "4s-6s x3: 4s-5s-6s" in text
    assert "8h-ah x7: 8h-9h-10h-jh-qh-kh-ah  [samba]" in text
    assert " 9#2 x3: 9c 9h 9s" in text
    assert "   9 x3: 9c 9d 2c" in text


def test_modern_american_talon_and_special_canastas_are_shown() -> None:
    """docs/rules.md §3.6: the table shows the talon's face-down packets, the wild meld by name,
    the special canastas by kind (from the wire, not guessed) and both colours of threes."""
    config = rules.make_config("modern_american")
    state = deal_position(
        rules.new_match(config),
        [rules.parse_cards(h) for h in ("9d 9s 5c", "10c 10d", "4c 6d", "jc")],
        rules.parse_cards("7d 8c"),
        pile=rules.parse_cards("4c 8d"),
        melds=[[rules.parse_cards(m) for m in ("ac ac ad ad ah ah as", "2c 2c 2d 2d 2h 2h 2s",
                                               "kc kd jk")], []],
        red3=[rules.parse_cards("3d 3c"), (), (), ()],
        turn=0,
    )  # fmt: skip
    text = render_table(match_view(state, 1), color=False)
    assert "Talon" in text
    assert "4 + 3 bonus cards set aside" in text
    assert "   a x7: ac ac ad ad ah ah as  [natural aces canasta]" in text
    assert "wild x7: 2c 2c 2d 2d 2h 2h 2s  [wild canasta of twos]" in text
    assert "   k x3: kc kd jk" in text
    assert "threes 3d 3c" in text or "threes 3c 3d" in text


def test_hand_and_foot_shows_each_foot_face_down_and_the_match_length() -> None:
    """docs/rules.md §3.7: every seat's foot is shown by its size only, the viewer's own too, until
    it is picked up; the header gives the match's length in hands instead of a target, and a
    side the books it needs to go out."""
    config = rules.make_config("hand_and_foot")
    feet = [rules.parse_cards(f) for f in ("ac ad ah ac 9c", "4c 4d 4h", "", "jc jd jh")]
    state = deal_position(
        rules.new_match(config),
        [rules.parse_cards(h) for h in ("9d 9s 5c", "10c 10d", "4c 6d", "jc")],
        rules.parse_cards("7c 8c"),
        pile=rules.parse_cards("4c 8d"),
        melds=[[rules.parse_cards("qc qd qh"), rules.parse_cards("kc kd kh ks kc kd 2c")], []],
        turn=0,
        feet=feet,
    )
    text = render_table(match_view(state, 0), color=False)
    assert_plain(text)
    assert "hand_and_foot  hand 1 of 4" in text
    assert "target" not in text
    assert "3 + foot 5 face down" in text
    assert "2 + foot 3 face down" in text
    assert "2 (on the foot)" in text
    assert "Us (you+carol): 1 book (2 to go out, 1 clean, 1 dirty), no red threes" in text
    assert "k x7: kc kc kd kd kh ks 2c  [dirty book]" in text
    assert not re.search(r"\b(ac|ad|ah)\b", text)  # the viewer's own foot stays hidden
    assert "FROZEN" not in text  # nothing freezes the pile in Hand and Foot (§3.8a)


def test_hand_and_foot_shows_a_wild_book_3_7() -> None:
    """docs/rules.md §3.7, the Wilds row's variation (``allow_wild_melds``): a meld of wild cards
    is named ``wild`` like Bolivia's, and once closed at seven it is a wild book, not a
    bolivia or a dirty book; an open one is shown as a meld."""
    config = rules.make_config("hand_and_foot", {"allow_wild_melds": True})
    melds = ("kc kd kh ks kc kd kh", "2c 2d 2h 2s jk jk 2c", "2d jk 2h")
    state = deal_position(
        rules.new_match(config),
        [rules.parse_cards(h) for h in ("9d 9s 5c", "10c 10d", "4c 6d", "jc")],
        rules.parse_cards("7c 8c"),
        pile=rules.parse_cards("4c 8d"),
        melds=[[rules.parse_cards(m) for m in melds], []],
        turn=0,
    )
    text = render_table(match_view(state, 0), color=False)
    assert_plain(text)
    assert "2 books (2 to go out, 1 clean, 1 dirty)" in text
    assert "[clean book]" in text
    assert re.search(r"wild x7: [2jk ].*\[wild book\]", text), text
    assert re.search(r"wild#2 x3: [2jkcdhs ]+$", text, re.MULTILINE), text


def test_red_threes_are_listed_for_each_side() -> None:
    state = play_until(dealt(), lambda s: sum(map(bool, s.red3)) >= 2)
    text = render_table(match_view(state, 0), color=False)
    for side in rules.player_view(state, 0).sides:
        header = next(
            line
            for line in text.splitlines()
            if line.startswith(("Us (", "Them (", "You"))
            and ("Us" if side.side == state.side_of[0] else "Them") in line[:4]
        )
        if side.red_threes:
            assert "red threes " + " ".join(card_text(c) for c in side.red_threes) in header
        else:
            assert "no red threes" in header


def test_asking_partner_shows_the_question_and_the_binding_answer() -> None:
    def can_ask(s: GameState) -> bool:
        seat = s.actor()
        return (
            s.phase is Phase.PLAY
            and seat is not None
            and "ask" in rules.legal_action_kinds(s, seat)
        )

    state = play_until(dealt(seed=3), can_ask, seed=2)
    asker = state.turn
    state = rules.apply(state, asker, rules.parse_action("ask"))
    partner = state.actor()
    assert partner is not None
    assert state.phase is Phase.ANSWER
    to_partner = render_table(match_view(state, partner), color=False)
    assert f"{NAMES[asker]} asks: may I go out?" in to_partner
    assert "answer (canasta answer yes|no)" in to_partner
    to_asker = render_table(match_view(state, asker), color=False)
    assert f"Waiting for {NAMES[partner]} (seat {partner}, your partner) to answer" in to_asker
    state = rules.apply(state, partner, rules.parse_action("answer yes"))
    after = render_table(match_view(state, asker), color=False)
    assert "Partner said yes: you must go out this turn." in after
    assert f"{NAMES[partner]} answered yes" in after


def test_between_hands_the_cutter_and_the_last_hand_are_shown() -> None:
    state = play_until(dealt(), lambda s: s.phase is Phase.DEAL)
    assert state.last_hand is not None
    cutter = state.dealer
    text = render_table(match_view(state, cutter), color=False)
    assert_plain(text)
    number = state.hand_number + 1
    assert f"Your move: cut and deal hand {number} (canasta deal)" in text
    assert f"Hand {state.last_hand.hand_number}" in text
    for column in state.last_hand.columns:
        assert f"{column.hand_total:+d} = {column.cumulative}" in text
        assert f"in hand {-column.hand_penalty}" in text
    other = render_table(match_view(state, (cutter + 1) % 4), color=False)
    assert f"Waiting for {NAMES[cutter]} (seat {cutter}" in other
    assert f"to cut and deal hand {number}" in other


def test_before_the_first_deal() -> None:
    config = rules.make_config("classic")
    state = rules.new_match(config, seed=1)
    text = render_table(match_view(state, 1), color=False)
    assert_plain(text)
    assert "Your hand" not in text
    assert "cut and deal hand 1" in text


def test_match_over_names_the_winners() -> None:
    state = play_until(dealt(target=300), lambda s: s.phase is Phase.MATCH_OVER)
    text = render_table(match_view(state, 0), color=False)
    assert_plain(text)
    winners = state.winners
    assert winners
    line = text.splitlines()[-1]
    assert line.startswith("Match over")
    if len(winners) == 1:
        seats = state.config.partnerships[winners[0]]
        label = "+".join("you" if s == 0 else NAMES[s] for s in seats)
        assert f"{label} won" in line
    for score in state.scores:
        assert str(score) in line


@pytest.mark.parametrize(
    "preset",
    [
        "two_player",
        "three_cutthroat",
        "six_3x2",
        "six_2x3",
        "samba",
        "bolivia",
        "modern_american",
        "hand_and_foot",
    ],
)
def test_other_presets_render_plainly(preset: str) -> None:
    state = play_until(dealt(preset), lambda s: s.phase is Phase.PLAY, seed=5)
    for seat in range(state.config.players):
        text = render_table(match_view(state, seat), color=False)
        assert_plain(text)
        assert hand_line_cards(text) == [card_text(c) for c in rules.sort_cards(state.hands[seat])]


def test_colour_mode_uses_symbols_colours_and_marks_wilds() -> None:
    state = play_until(
        dealt(),
        lambda s: any(rules.cards.IS_WILD[c] for c in s.hands[s.turn]) and s.phase is Phase.PLAY,
    )
    text = render_table(match_view(state, state.turn), color=True)
    assert ANSI.search(text)
    assert re.search("[♣♦♥♠]", text)
    assert "\x1b[31m" in text  # red suits red
    assert "\x1b[1;35m" in text  # wild cards marked
    plain = render_table(match_view(state, state.turn), color=False)
    assert len(strip_ansi(text).splitlines()) == len(plain.splitlines())
    assert all(len(strip_ansi(line)) <= 80 for line in text.splitlines())


def test_no_color_env_gives_plain_output(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    text = render_table(match_view(dealt(), 0), color=use_color(stream=FakeTty(True)))
    assert_plain(text)


def test_a_waiting_match_shows_the_invite_code() -> None:
    config = rules.make_config("classic")
    state = rules.new_match(config, seed=1)
    view = match_view(state, 0)
    view.match.status = pb.MATCH_STATUS_WAITING
    view.match.invite_code = "XK4-PQ7"
    for seat in view.match.seats[1:]:
        seat.kind = pb.SEAT_KIND_EMPTY
        seat.display_name = ""
    text = render_table(view, color=False)
    assert "1 of 4 seats taken" in text
    assert "invite code XK4-PQ7" in text


# -- a real server: list and history ---------------------------------------------------------------


@pytest.fixture
def server(tmp_path: Path) -> Iterator[App]:
    app = open_app(ServerConfig(data_dir=tmp_path / "server", listen="127.0.0.1:0"))
    app.server.start()
    app.bots.start()
    yield app
    app.stop(grace=None)


@pytest.fixture
def alice(server: App) -> Iterator[PlayerClient]:
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        yield PlayerClient(channel).join_server("alice")


def play_moves(app: App, client: PlayerClient, match_id: str, moves: int) -> None:
    """Let ``client`` (seat 0) cut and play ``moves`` of its moves against the server's bots."""
    choose = default_chooser()
    made = 0
    for _ in range(2000):
        if made >= moves:
            return
        app.bots.drain()
        view = client.view(match_id)
        if view.match.status == pb.MATCH_STATUS_FINISHED:
            return
        if view.match.status != pb.MATCH_STATUS_PLAYING or view.match.to_act != 0:
            continue
        if view.HasField("dealing_seat"):
            client.deal(view)
        else:
            client.submit(view, [str(choose(authoritative_state(app.service, match_id), 0))])
        made += 1


def test_match_list_puts_my_turn_first(server: App, alice: PlayerClient) -> None:
    waiting = alice.create_match(seat=0).match.match_id  # nobody else: waits with a code
    theirs = alice.create_match(seat=1, bot_seats=[0, 2, 3]).match.match_id
    mine = alice.create_match(seat=0, bot_seats=[1, 2, 3]).match.match_id
    server.bots.drain()
    listed = list(alice.my_matches().matches)
    assert {m.match_id for m in listed} == {waiting, theirs, mine}
    text = render_matches(listed, color=False)
    assert_plain_list(text)
    lines = text.splitlines()
    turns = [m.my_turn for m in listed]
    assert True in turns
    assert False in turns
    shown = short_ids([m.match_id for m in listed])
    order = [next(m for m in listed if shown[m.match_id] in line) for line in lines[: len(listed)]]
    assert [m.my_turn for m in order] == sorted(turns, reverse=True)  # my turn first
    assert all(("YOUR TURN" in line) == m.my_turn for line, m in zip(lines, order, strict=False))
    assert any(shown[mine] in line for line in lines[: turns.count(True)])
    assert shown[theirs] in text
    code = next(m.invite_code for m in listed if m.match_id == waiting)
    line = next(line for line in lines if shown[waiting] in line)
    assert f"invite {code}" in line
    assert "1/4 seated" in line
    for match in listed:
        line = next(line for line in lines if shown[match.match_id] in line)
        assert line.startswith("*" if match.changed else " ")
    coloured = render_matches(listed, color=True)
    assert ANSI.search(coloured)
    assert strip_ansi(coloured) == text


def assert_plain_list(text: str) -> None:
    assert not ANSI.search(text)
    assert text.isascii()


def test_short_ids_are_unique_prefixes() -> None:
    ids = ["abcdef0123", "abcdef0199", "1234567890", "abc"]
    short = short_ids(ids)
    assert short == {
        "abcdef0123": "abcdef012",
        "abcdef0199": "abcdef019",
        "1234567890": "12345678",
        "abc": "abc",
    }
    for match_id, prefix in short.items():
        if prefix != match_id:  # an id that prefixes another can only be shown whole
            assert [i for i in ids if i.startswith(prefix)] == [match_id]


def test_no_matches_is_said_plainly() -> None:
    assert "No matches" in render_matches([], color=False)


def test_history_is_one_readable_line_per_move(server: App, alice: PlayerClient) -> None:
    match_id = alice.create_match(seat=0, bot_seats=[1, 2, 3]).match.match_id
    play_moves(server, alice, match_id, 6)
    # Random deals: a seat may take the pile rather than draw for a while. Play on until both
    # I and another seat have drawn from the stock, which is what this test reads.
    for _ in range(30):
        entries, last = alice.full_history(match_id)
        drawers = {e.seat for e in entries if list(e.actions) == ["draw"]}
        if 0 in drawers and drawers - {0}:
            break
        play_moves(server, alice, match_id, 1)
    other = min(drawers - {0})
    history = pb.GetHistoryResponse()
    history.CopyFrom(last)
    del history.entries[:]
    history.entries.extend(entries)
    text = render_history(history, viewer_seat=0, color=False)
    assert not ANSI.search(text)
    assert text.isascii()
    lines = text.splitlines()
    assert lines[0].startswith(f"Match {match_id}")
    assert any(line.startswith("-- Hand 1: commitment ") for line in lines)
    for entry in entries:
        assert any(line.startswith(f"#{entry.seq:<4} ") for line in lines)
    assert "you (seat 0): cut and deal" in text
    # My dealt hand is shown to me; other seats' dealt hands and draws are not in the record.
    dealt_to_me = next(ev for e in entries for ev in e.events if ev.kind == "deal" and ev.seat == 0)
    assert "you got " + " ".join(dealt_to_me.private_cards) in text
    for entry in entries:
        for ev in entry.events:
            if ev.seat != 0:
                assert not ev.private_cards
    name = next(s.display_name for s in history.seats if s.seat == other)
    assert f"{name} (seat {other}): " in text
    assert f"{name} (seat {other}): draw" in text  # what the others drew stays hidden
    card = r"(jk|(10|[2-9jqka])[cdhs])"  # any card, jokers included
    assert not re.search(r"\(seat [123]\): draw -> drew " + card, text)
    assert re.search(r"you \(seat 0\): draw -> drew " + card, text)
    # Another seat's rendering of the same match calls seat 0 by name.
    as_bob = render_history(history, viewer_seat=None, color=False)
    assert "alice (seat 0): cut and deal" in as_bob


def test_history_in_colour_shows_cards_with_suits(server: App, alice: PlayerClient) -> None:
    match_id = alice.create_match(seat=0, bot_seats=[1, 2, 3]).match.match_id
    play_moves(server, alice, match_id, 2)
    text = render_history(alice.history(match_id), viewer_seat=0, color=True)
    assert ANSI.search(text)
    assert re.search("[♣♦♥♠]", text)


def test_table_from_the_real_server_matches_the_engine_view(
    server: App, alice: PlayerClient
) -> None:
    match_id = alice.create_match(seat=0, bot_seats=[1, 2, 3]).match.match_id
    play_moves(server, alice, match_id, 3)
    view = alice.view(match_id)
    text = render_table(view, color=False)
    assert_plain(text)
    assert hand_line_cards(text) == list(view.view.hand)
    assert f"Match {match_id}" in text


# -- JSON ------------------------------------------------------------------------------------------


def test_message_json_is_stable_and_reads_back() -> None:
    view = match_view(dealt(), 0)
    view.head_hash = bytes(range(32))
    text = message_json(view)
    data = json.loads(text)
    assert text == json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False)
    assert data["view"]["pile_top"] == view.view.pile_top  # proto field names
    assert data["view"]["phase"] == "PHASE_DRAW"
    assert data["view"]["must_go_out"] is False  # defaults are present
    assert data["head_hash"] == "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="  # base64
    back = json_format.Parse(text, pb.MatchView())
    assert back == view
    assert message_json(view) == text


def test_a_finished_match_everywhere(server: App, alice: PlayerClient) -> None:
    match_id = alice.create_match("two_player", seat=0, bot_seats=[1], target=200).match.match_id
    play_moves(server, alice, match_id, 1000)
    view = alice.view(match_id)
    assert view.match.status == pb.MATCH_STATUS_FINISHED
    table = render_table(view, color=False)
    assert_plain(table)
    assert table.splitlines()[-1].startswith("Match over")
    listed = render_matches(list(alice.my_matches().matches), color=False)
    assert "finished" in listed
    assert "won by" in listed
    entries, last = alice.full_history(match_id)
    history = pb.GetHistoryResponse()
    history.CopyFrom(last)
    del history.entries[:]
    history.entries.extend(entries)
    text = render_history(history, viewer_seat=0, color=False)
    for hand in history.hands:
        assert hand.secret  # revealed once the hand ended
        assert f"-- Hand {hand.hand_number}: commitment {hand.commitment[:8].hex()}" in text
        assert f"secret {hand.secret[:8].hex()}" in text
    assert "hand over: " in text


@pytest.mark.slow  # a whole hand of Hand and Foot through the server: seconds, not the inner loop
def test_a_hand_and_foot_match_ends_after_its_hands(server: App, alice: PlayerClient) -> None:
    """docs/rules.md §3.7: a Hand and Foot match is a number of hands, the highest total winning,
    whatever the target; through the server, a match of one hand (the option on top of the
    preset's four) is over once that hand is scored, and the table names the winner."""
    created = alice.create_match(
        "hand_and_foot",
        seat=0,
        bot_seats=[1, 2, 3],
        target=50_000,
        options={"hands_per_match": "1"},
    )
    match_id = created.match.match_id
    play_moves(server, alice, match_id, 1000)
    view = alice.view(match_id)
    assert view.match.status == pb.MATCH_STATUS_FINISHED
    assert view.view.hand_number == 1
    assert view.view.hands_per_match == 1
    scores = list(view.match.scores)
    assert list(view.match.winners) == [i for i, s in enumerate(scores) if s == max(scores)]
    assert max(scores) < view.match.target  # the hand count ended it, not the target
    table = render_table(view, color=False)
    assert_plain(table)
    assert table.splitlines()[-1].startswith("Match over")


def test_the_match_list_shows_the_clock_with_time_and_bank_left() -> None:
    """Issue 12: wherever a match is shown, its deadline and the time left are too."""
    import time

    now = time.time_ns() // 1_000_000
    day = 86_400_000
    summary = pb.MatchSummary(
        match_id="a" * 32,
        preset="classic",
        status=pb.MATCH_STATUS_PLAYING,
        players=4,
        seats=[
            pb.SeatInfo(seat=s, kind=pb.SEAT_KIND_HUMAN, display_name=n, bank_ms=day // 2)
            for s, n in enumerate(["ann", "ben", "cat", "dan"])
        ],
        my_seat=0,
        to_act=0,
        my_turn=True,
        time_control=pb.TimeControl(hours_per_move=72, bank_hours=48, weekends_off=True),
        clock=pb.TurnClock(
            seat=0,
            started_at_ms=now,
            move_due_at_ms=now + 2 * day + 3 * 3_600_000 + 5,
            due_at_ms=now + 2 * day + 15 * 3_600_000 + 5,
        ),
    )
    line = render_matches([summary], color=False)
    assert "YOUR TURN" in line

    def at(ms: int) -> str:
        return time.strftime("%a %d %b %H:%M", time.localtime(ms / 1000))

    # Issue 28: the move's own deadline first, then the bank after it (not on top of it).
    move_due, due = now + 2 * day + 3 * 3_600_000, now + 2 * day + 15 * 3_600_000
    assert f"move due {at(move_due)} (2d 3h left), then 12h 0m of bank to {at(due)}" in line
    summary.clock.move_due_at_ms = now - 1  # on the bank now
    assert f"on the bank: overdue {at(due)} (2d 15h left)" in render_matches([summary], color=False)
    summary.clock.move_due_at_ms = summary.clock.due_at_ms = now - 1
    assert "overdue since" in render_matches([summary], color=False)


def test_watch_lines_name_the_seat_and_the_next_command() -> None:
    """Issue 14.8 and the watch notifications: the seat to move by name, and each notification
    as one line with the command to run next unless its text already names one."""
    state = dealt()
    summary = match_view(state, 0).match
    change = pb.WatchResponse(match_id=MATCH_ID, version=3, status=pb.MATCH_STATUS_PLAYING)
    change.to_act = 1
    assert watch_line(change, summary) == f"{MATCH_ID[:8]} version 3 playing - bob (seat 1) to move"
    change.to_act = 0
    assert watch_line(change, summary).endswith("playing - your turn")
    turn = pb.WatchNotification(
        id=4, kind="your_turn", match_id=MATCH_ID, text=f"It is your turn in match {MATCH_ID[:8]}."
    )
    assert notification_line(turn) == (
        f"It is your turn in match {MATCH_ID[:8]}. Next: canasta show {MATCH_ID[:8]}"
    )
    bot = pb.WatchNotification(
        id=5, kind="bot_played", match_id=MATCH_ID, text="A bot played: canasta cover off."
    )
    assert notification_line(bot) == "A bot played: canasta cover off."


def test_an_abandoned_match_says_who_ended_it() -> None:
    """Players may abandon a match only before its first deal; later only the operator can
    (``canasta-server matches abort``), and the table says so rather than "before its first
    deal"."""
    before = pb.MatchSummary(status=pb.MATCH_STATUS_FINISHED, aborted=True, version=0)
    later = pb.MatchSummary(status=pb.MATCH_STATUS_FINISHED, aborted=True, version=57)
    assert aborted_text(before) == "abandoned before its first deal"
    assert aborted_text(later) == "ended by the server's operator"
