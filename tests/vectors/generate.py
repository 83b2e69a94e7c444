"""The vectors of docs/transcript.md and docs/fair-deal.md that no recorded match covers, made
by the project's own code from fixed keys and secrets, so that they come out the same byte for
byte: ``python -m tests.vectors.generate`` rewrites them, and ``tests/shared/test_vectors.py``
checks that the committed files are exactly what it writes and that each verifies.

* ``transcript-v1-features.json``: classic, two people and two bots, with a clock and an
  attest key; one person's move is server-attested (signed by the attest key), a bot covers
  the other for a stretch and cuts the second hand for them (the bot key signs for a person's
  seat); the first hand is played to its end, the second until a resignation; a signed end.
* ``transcript-v1-hand-and-foot.json``: Hand and Foot (feet dealt), to a resignation.
* ``transcript-v1-modern-american.json``: Modern American (no upcard, a talon), likewise.
* ``fair-deal-v1.json``'s cases from ``dealt, ...`` on: a deal with the dealer, every seat's
  cards in the order dealt, the feet, the upcard (or the talon) and the stock.

The moves are the engine's bot's (``shared.rules.bot.choose_action``), so they are legal; the
signing, chaining and receipts are ``shared.crypto``'s, as on a server."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from shared.crypto.chain import entry_hash, sign_end, sign_receipt
from shared.crypto.fairdeal import commitment, deal_seed, shuffle
from shared.crypto.keys import PrivateKey, public_key_raw, sign
from shared.rules import GameState, Phase, RuleConfig, card_text, make_config, new_match
from shared.rules.bot import choose_action
from shared.talk import TalkHead, TalkLine, sign_talk_receipt, talk_hash
from shared.transcript import (
    Clock,
    HandSecret,
    Header,
    LoggedMove,
    MatchEnd,
    SeatKey,
    Transcript,
    cutting_seat,
    dealt_deck,
    end_outcome,
    header_hash,
    next_state,
)
from shared.wire import DEAL_ACTION, Move, move_to_bytes

HERE = Path(__file__).resolve().parent
STARTED_MS = 1_796_140_074_648
"""When the generated matches began (2026-12-01)."""


def vector_key(name: str) -> PrivateKey:
    """A fixed Ed25519 key: its 32-byte seed is SHA-256("canasta vector key " || name)."""
    seed = hashlib.sha256(b"canasta vector key " + name.encode()).digest()
    return Ed25519PrivateKey.from_private_bytes(seed)


SERVER, BOT, ATTEST = vector_key("server"), vector_key("bot"), vector_key("attest")


@dataclass
class MatchBuilder:
    """A match played entry by entry as a server would store it: each payload signed, chained
    to the one before, receipted by the server key; each cut dealt from a fixed secret."""

    match_id: str
    config: RuleConfig
    people: dict[int, str]
    """The seats of people, with their names; the other seats are bots."""
    first_dealer: int
    clock: Clock | None = None
    attest: bool = True
    entries: list[LoggedMove] = field(default_factory=list)
    hands: list[HandSecret] = field(default_factory=list)
    talk: list[TalkLine] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.keys = {seat: vector_key(name) for seat, name in self.people.items()}
        bot = public_key_raw(BOT)
        seats = tuple(
            SeatKey(s, self.people.get(s, f"bot {s}"), s not in self.people,
                    public_key_raw(self.keys[s]) if s in self.keys else bot)
            for s in range(self.config.players)
        )  # fmt: skip
        self.header = Header(
            self.match_id, self.config, seats, public_key_raw(SERVER), bot, self.clock,
            STARTED_MS, self.first_dealer, public_key_raw(ATTEST) if self.attest else b"",
        ).to_bytes()  # fmt: skip
        self.bots = [s.bot for s in seats]
        self.state: GameState = new_match(self.config, first_dealer=self.first_dealer)
        self.prev = header_hash(self.header)
        self.talk_prev = self.prev
        self.time_ms = STARTED_MS

    def signer(self, seat: int) -> PrivateKey:
        return self.keys.get(seat, BOT)

    def add(self, seat: int, actions: list[str], signer: PrivateKey, secret: bytes = b"") -> None:
        """Sign, chain, receipt and apply one entry (a cut when ``secret`` is given)."""
        seq = len(self.entries) + 1
        number = self.state.hand_number + 1
        self.time_ms += 3_600_000
        move = Move(
            self.match_id, seat, seq, self.prev, 0 if secret else self.time_ms, tuple(actions),
            commitment(secret, self.match_id, number) if secret else b"",
        )  # fmt: skip
        payload = move_to_bytes(move)
        signature = sign(signer, payload)
        digest = entry_hash(self.prev, payload, signature)
        receipt = sign_receipt(SERVER, self.match_id, seq, digest)
        self.entries.append(LoggedMove(seq, payload, signature, receipt))
        if secret:
            self.hands.append(HandSecret(number, move.deal_commitment, secret, seq))
        self.state = next_state(self.state, self.match_id, move, signature, secret or None)
        self.prev = digest

    def say(self, seat: int, text: str, kind: str = "say") -> None:
        """A talk entry of ``seat``, said after the last entry, signed, chained, receipted."""
        seq = len(self.talk) + 1
        self.time_ms += 60_000
        unsigned = TalkLine(
            seq, kind, seat, len(self.entries), self.prev, self.time_ms, text, b"", b""
        )
        message = unsigned.message(self.match_id, self.talk_prev)
        signature = sign(self.keys[seat], message)
        digest = talk_hash(message, signature)
        receipt = sign_talk_receipt(SERVER, self.match_id, seq, digest)
        self.talk.append(
            TalkLine(
                seq, kind, seat, unsigned.at_seq, unsigned.at_hash, unsigned.client_time_ms,
                text, signature, receipt,
            )
        )  # fmt: skip
        self.talk_prev = digest

    def cut(self, signer: Callable[[int], PrivateKey] | None = None) -> None:
        seat = cutting_seat(self.bots, self.state.dealer)
        number = self.state.hand_number + 1
        secret = hashlib.sha256(f"vector secret {self.match_id} {number}".encode()).digest()
        self.add(seat, [DEAL_ACTION], (signer or self.signer)(seat), secret)

    def play(self, moves: int, signer: Callable[[int], PrivateKey] | None = None) -> None:
        """Up to ``moves`` entries of the engine's bot, one action each, while the hand lasts."""
        for _ in range(moves):
            if self.state.phase in (Phase.DEAL, Phase.MATCH_OVER):
                return
            seat = self.state.actor()
            assert seat is not None
            self.add(seat, [str(choose_action(self.state, seat))], (signer or self.signer)(seat))

    def transcript(self) -> Transcript:
        """The file, with the server's signed end once the match is over."""
        end = None
        if self.state.phase is Phase.MATCH_OVER:
            talk = TalkHead(len(self.talk), self.talk_prev)
            outcome = end_outcome(self.state, abandoned=False, talk=talk)
            seq = len(self.entries)
            end = MatchEnd(seq, outcome, sign_end(SERVER, self.match_id, seq, self.prev, outcome))
        return Transcript(
            self.header, tuple(self.entries), tuple(self.hands), end, tuple(self.talk)
        )


def features() -> Transcript:
    """Classic: Ann (seat 0) and Bob (seat 2) against two bots, with a clock and attest key."""
    clock = Clock(
        hours_per_move=3 * 24, bank_hours=7 * 24, weekends_off=True, on_timeout="substitute"
    )
    match = MatchBuilder(
        "5eed0000feature5000000000000000001", make_config("classic"), {0: "Ann", 2: "Bob"}, 0,
        clock,
    )  # fmt: skip
    match.cut()  # Ann deals hand 1 and cuts it
    match.play(6)
    while match.state.actor() != 2:  # Bob's next move is made by mail: server-attested
        match.play(1)
    match.add(2, [str(choose_action(match.state, 2))], ATTEST)
    # Bob is away: a bot covers him (the bot key signs for his seat), to the end of hand 1,
    # and cuts hand 2 for him (dealer: seat 1, a bot; the next person clockwise is Bob).

    def covered(seat: int) -> PrivateKey:
        return BOT if seat == 2 else match.signer(seat)

    match.play(10_000, covered)
    assert match.state.phase is Phase.DEAL
    assert match.state.hand_number == 1
    match.cut(covered)
    match.play(12)
    while match.state.actor() != 0:
        match.play(1)
    match.add(0, ["resign"], match.signer(0))
    return match.transcript()


def short_match(match_id: str, preset: str) -> Transcript:
    """One hand of ``preset``, Ann (seat 0) and Bob (seat 2) with two bots: a dozen moves,
    then Ann resigns."""
    match = MatchBuilder(match_id, make_config(preset), {0: "Ann", 2: "Bob"}, 1, attest=False)
    match.cut()  # dealer seat 1 is a bot: Bob cuts
    match.play(12)
    while match.state.actor() != 0:
        match.play(1)
    match.add(0, ["resign"], match.signer(0))
    return match.transcript()


def talk() -> Transcript:
    """Classic, Ann (seat 0) and Bob (seat 2) with two bots, who talk: Ann's side declares its
    conventions before the first cut, Bob and Ann say something (not all of it ASCII) during
    the hand; Ann resigns; the end names the talk's last entry."""
    people = {0: "Ann", 2: "Bob"}
    match = MatchBuilder("5eed0000ta1k0000000000000000004", make_config("classic"), people, 1)
    match.say(0, "we open light; a discarded ace asks for aces", "conventions")
    match.cut()  # dealer seat 1 is a bot: Bob cuts
    match.play(5)
    match.say(2, "good luck, partner")
    match.play(4)
    match.say(0, "¡buena suerte! ♥ — 幸運を")
    while match.state.actor() != 0:
        match.play(1)
    match.add(0, ["resign"], match.signer(0))
    return match.transcript()


TRANSCRIPTS: dict[str, Callable[[], Transcript]] = {
    "transcript-v1-features.json": features,
    "transcript-v1-hand-and-foot.json": lambda: short_match(
        "5eed0000handf00t0000000000000002", "hand_and_foot"
    ),
    "transcript-v1-modern-american.json": lambda: short_match(
        "5eed0000amer1can0000000000000003", "modern_american"
    ),
    "transcript-v1-talk.json": talk,
}


def dealt_case(name: str, preset: str, dealer: int, hand_number: int) -> dict[str, object]:
    """A fair-deal case followed through the deal: what each seat is dealt, in the order
    dealt (one card at a time from the dealer's left), the feet, then the upcard or talon."""
    config = make_config(preset)
    match_id = hashlib.sha256(name.encode()).hexdigest()[:32]
    secret = hashlib.sha256(b"secret " + name.encode()).digest()
    cut = sign(vector_key(name), b"a cut's payload stands here")
    order = dealt_deck(config, secret, match_id, hand_number, cut)
    players, size, foot = config.players, config.hand_size, config.foot_size
    seats = [(dealer + 1 + i) % players for i in range(players)]
    hands = {s: [card_text(order[i]) for i in range(players * size) if seats[i % players] == s]
             for s in range(players)}  # fmt: skip
    start = players * size
    feet = {s: [card_text(order[start + i]) for i in range(players * foot)
                if seats[i % players] == s] for s in range(players)} if foot else {}  # fmt: skip
    rest = [card_text(c) for c in order[start + players * foot :]]
    return {
        "name": name,
        "preset": preset,
        "secret": secret.hex(),
        "match_id": match_id,
        "hand_number": hand_number,
        "cut_signature": cut.hex(),
        "commitment": commitment(secret, match_id, hand_number).hex(),
        "seed": deal_seed(secret, match_id, hand_number, [cut]).hex(),
        "deck_size": config.deck_size,
        "permutation": shuffle(config.deck_size, deal_seed(secret, match_id, hand_number, [cut])),
        "deck_top_first": " ".join(card_text(c) for c in order),
        "dealer": dealer,
        "hands_as_dealt": [" ".join(hands[s]) for s in range(players)],
        "feet_as_dealt": [" ".join(feet[s]) for s in range(players)] if feet else [],
        "after_the_deal_top_first": " ".join(rest),
        "upcard": None if config.modern_american or config.upcard_mode == "none" else rest[0],
        "talon": [" ".join(rest[:4]), " ".join(rest[4:7])] if config.modern_american else [],
    }


DEALT = [
    ("classic, dealt by seat 3", "classic", 3, 1),
    ("hand and foot, dealt by seat 0, hand 2", "hand_and_foot", 0, 2),
    ("modern american, dealt by seat 1", "modern_american", 1, 1),
    ("two players, dealt by seat 1", "two_player", 1, 1),
]


def fair_deal_vectors() -> bytes:
    """The fair-deal file: its first cases as recorded (inputs and derived values only), then
    the dealt cases."""
    path = HERE / "fair-deal-v1.json"
    data = json.loads(path.read_text())
    recorded = [case for case in data["cases"] if "dealer" not in case]
    data["cases"] = recorded + [dealt_case(*case) for case in DEALT]
    return json.dumps(data, indent=1).encode()


def main() -> None:
    for name, make in TRANSCRIPTS.items():
        (HERE / name).write_bytes(make().to_bytes())
    (HERE / "fair-deal-v1.json").write_bytes(fair_deal_vectors())


if __name__ == "__main__":
    main()
