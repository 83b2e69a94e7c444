"""A whole hand by mail replies with standing orders on (issue 28), against the real
``canasta-server`` and its SMTP listener: Ann (seat 0) sets `canasta orders --draw --answer
yes` and then moves only by replying to the server's mails; bots hold the other seats. Where
drawing is the only way to begin her turn, the server draws for her before it mails her, so
the reply holds the whole rest of the turn; only a turn on which she could have taken the pile
and chose to draw costs a second reply (the drawn card is news to her). Every mail she moves
from is checked against her own view (``ann_reply``), and the history marks the server's
draws as server-attested."""

from __future__ import annotations

import time
from email.message import Message
from pathlib import Path
from typing import Any

import pytest

from server.service import matches
from shared import rules
from shared.rules import GameState, Phase
from shared.rules.bot import choose_action
from shared.rules.orders import standing_action
from tests.e2e.harness import Player, Server
from tests.e2e.test_cli_mail_hand import (
    ADDRESSES,
    CODE,
    Inbox,
    ann_reply,
    text,
    verify_address,
    world,  # noqa: F401  (the fixture)
)
from tests.testkit import authoritative_state

pytestmark = pytest.mark.slow


def _rest_of_turn(state: GameState) -> list[str]:
    """What the bot would play for seat 0 from here to the end of its turn; a draw that was
    a choice (a take was open) ends what can be written before the card is seen."""
    import random

    rng = random.Random(7)
    chosen: list[str] = []
    while state.actor() == 0 and state.phase in (Phase.DRAW, Phase.PLAY):
        action = choose_action(state, 0, rng)
        chosen.append(str(action))
        if state.phase is Phase.DRAW and str(action) == "draw":
            break
        state = rules.apply(state, 0, action)
    return chosen


def _reply(
    inbox: Inbox, port: int, oracle: Any, state: GameState, match_id: str, move: str
) -> None:
    """Ann answers the mail whose reply code is for the table now, as a person answers the
    newest mail: her hand can be the same on two turns (a taken pile's card laid off and
    another discarded), so the hand alone does not tell an old mail from the new one."""
    from server.service.news.replies import code_hash

    def current(mail: Message) -> bool:
        found = CODE.search(str(mail["Subject"]))
        if found is None:
            return False
        with oracle.ctx.db.read() as session:
            code = oracle.ctx.repo(session).reply_code(code_hash(found[0]))
            match = matches.require_match(oracle.ctx.repo(session), match_id)
        return code is not None and code.version == match.version

    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with inbox.lock:
            mails = list(inbox.mails.get(ADDRESSES[0], []))
        if any(current(m) for m in mails):
            break
        time.sleep(0.03)
    ann_reply(inbox, port, state, match_id, move, accept=current)


def test_a_whole_hand_by_mail_with_standing_orders_takes_one_reply_a_turn(
    world: tuple[Inbox, Server, int],  # noqa: F811  (the fixture imported above)
    tmp_path: Path,
) -> None:
    inbox, server, port = world
    ann = Player(tmp_path / "ann")
    ann.run("setup", "--server", server.address, "--name", "Ann")
    verify_address(ann, inbox, ADDRESSES[0])
    ann.run("notify", "email", "each", "--allow-reply-moves")
    said = ann.run("orders", "--draw", "--answer", "yes").stdout
    assert "draw when you cannot take the pile" in said
    assert ann.json("orders") == {"draw": True, "answer": "yes"}
    match_id = ann.json("create", "--bot", "1", "--bot", "2", "--bot", "3")["match"]["match_id"]
    shown = ann.run("orders", match_id).stdout
    assert shown == ann.run("orders", "--match", match_id).stdout  # either way to name it
    assert "(your default)" in shown
    oracle = server.oracle()

    replies = turns = second_replies = 0
    last: GameState | None = None
    for _ in range(3000):
        state = authoritative_state(oracle, match_id)
        if state.hand_number >= 1 and state.phase in (Phase.DEAL, Phase.MATCH_OVER):
            break
        seat = state.actor() if state.phase is not Phase.DEAL else 0
        waiting = seat != 0 or state == last
        if not waiting and standing_action(state, 0, draw=True, answer="yes") is not None:
            waiting = True  # the server carries the order out before it mails her
        if waiting:
            time.sleep(0.03)
            continue
        if state.phase is Phase.DEAL:
            move = ["deal"]
        else:
            move = _rest_of_turn(state)
            if state.phase is Phase.DRAW:
                if move == ["draw"]:
                    second_replies += 1  # a take was open: the card she draws is news
                else:
                    turns += 1
            elif state.phase is Phase.PLAY:
                turns += 1
        _reply(inbox, port, oracle, state, match_id, "; ".join(move))
        replies += 1
        last = state
        deadline = time.monotonic() + 20
        while authoritative_state(oracle, match_id) == state and time.monotonic() < deadline:
            time.sleep(0.03)
        if authoritative_state(oracle, match_id) == state:
            mails = inbox.mails.get(ADDRESSES[0], [])
            got = [f"{m['Subject']}: {text(m)[:120]}" for m in mails]
            raise AssertionError(f"{move} stuck; her mails since: {got}")
    else:
        raise AssertionError("the hand did not end")
    assert turns >= 1
    # One reply per turn but for the cut and the turns where drawing was her choice.
    assert replies == 1 + turns + second_replies, (replies, turns, second_replies)

    entries = ann.json("history", match_id)["entries"]
    drawn_for_her = [e for e in entries if e.get("standing_order")]
    assert drawn_for_her  # the server drew for her (her own mailed draws are attested too)
    assert all(e["actions"] in (["draw"], ["answer yes"]) for e in drawn_for_her)
    assert "[standing order, server-attested]: draw" in ann.run("history", match_id).stdout
    assert "Your standing orders: draw when you cannot take the pile" in ann.run("show").stdout
