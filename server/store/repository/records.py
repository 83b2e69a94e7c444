"""Rows to domain records and back: the converters every room shares, and the small
records the store hands out (``ReplyCode``, snapshots)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from sqlalchemy import func
from sqlmodel import Session, select

from server.domain import (
    Entry,
    Hand,
    Notification,
    Player,
    Standing,
    StandingOrders,
    TimeControl,
    TimeoutPolicy,
    TurnClock,
)
from server.store.models import (
    HandRow,
    LogEntryRow,
    NotificationRow,
    PlayerRow,
    SeatRow,
    StandingRow,
)
from shared.glicko2 import Rating, Tally
from shared.rules import Event, GameState, RuleConfig, card_text, parse_card

Snapshot = tuple[int, GameState]
"""A match's state snapshot and the seq it was taken at."""


StoredSnapshot = tuple[int, str]
"""A snapshot as stored: its seq and its JSON text (empty: none yet)."""


@dataclass(frozen=True, slots=True)
class ReplyCode:
    """A stored reply code (``server.service.news.replies``): whose, for which table, and whether
    it is still good."""

    player_id: int
    match_id: str
    version: int
    expires_ms: int
    used_ms: int


def clock_params(clock: TurnClock | None) -> dict[str, int]:
    if clock is None:
        return {"clock_seat": -1, "clock_started": 0, "clock_due": 0, "clock_paused": 0}
    return {
        "clock_seat": clock.seat,
        "clock_started": clock.started_ms,
        "clock_due": clock.due_ms,
        "clock_paused": clock.paused_left_ms,
    }


def time_control_json(control: TimeControl | None) -> str:
    if control is None:
        return ""
    return json.dumps(
        {
            "hours_per_move": control.hours_per_move,
            "bank_hours": control.bank_hours,
            "weekends_off": control.weekends_off,
            "on_timeout": control.on_timeout.value,
        },
        sort_keys=True,
    )


def time_control_from_json(text: str) -> TimeControl | None:
    if not text:
        return None
    data = json.loads(text)
    if "hours_per_move" not in data:  # stored before clocks in hours (issue 28): days
        data["hours_per_move"], data["bank_hours"] = (
            data["days_per_move"] * 24,
            data["bank_days"] * 24,
        )
    return TimeControl(
        int(data["hours_per_move"]),
        int(data["bank_hours"]),
        bool(data["weekends_off"]),
        TimeoutPolicy(data["on_timeout"]),
    )


def events_text(events: Sequence[Event]) -> str:
    """A log entry's events as stored: one array per event, ``[seat, kind, cards, private,
    text]``, the cards as their texts joined by spaces and the empty fields at the end left
    out (``[1,"draw","","5h"]``: a third of the object form ``Event.to_json`` gives, which
    entries stored before issue 29 hold and ``events_from_text`` reads as well)."""
    compact: list[list[object]] = []
    for event in events:
        fields: list[object] = [
            event.seat,
            event.kind,
            " ".join(card_text(c) for c in event.cards),
            " ".join(card_text(c) for c in event.private),
            event.text,
        ]
        while len(fields) > 2 and fields[-1] == "":
            fields.pop()
        compact.append(fields)
    return json.dumps(compact, separators=(",", ":"), ensure_ascii=False)


def events_from_text(text: str) -> tuple[Event, ...]:
    """The events of ``events_text`` (or of the object form stored before it)."""
    events = []
    for item in json.loads(text):
        if isinstance(item, dict):
            events.append(Event.from_json(item))
            continue
        seat, kind, cards, private, said = (*item, "", "", "")[:5]
        events.append(
            Event(
                seat,
                kind,
                tuple(parse_card(c) for c in cards.split()),
                tuple(parse_card(c) for c in private.split()),
                said,
            )
        )
    return tuple(events)


def entry_params(match_id: str, entry: Entry) -> dict[str, object]:
    return {
        "match_id": match_id,
        "seq": entry.seq,
        "seat": entry.seat,
        "hand_number": entry.hand_number,
        "payload": entry.payload,
        "signature": entry.signature,
        "actor_key": entry.actor_key,
        "entry_hash": entry.entry_hash,
        "receipt_signature": entry.receipt_signature,
        "events_json": events_text(entry.events),
        "created_ms": entry.created_ms,
        "standing_order": entry.standing_order,
    }


def notification_record(row: NotificationRow) -> Notification:
    assert row.id is not None
    return Notification(
        id=row.id,
        player_id=row.player_id,
        match_id=row.match_id,
        kind=row.kind,
        facts=json.loads(row.detail_json),
        created_ms=row.created_ms,
        attempts=row.attempts,
        email_state=row.email_state,
        webhook_state=row.webhook_state,
    )


def count_rows(session: Session, table: type[Any]) -> int:
    return int(session.exec(select(func.count()).select_from(table)).one())


def player_record(row: PlayerRow) -> Player:
    assert row.id is not None
    return Player(
        id=row.id,
        public_key=row.public_key,
        display_name=row.display_name,
        email=row.email,
        blocked=row.blocked,
        created_ms=row.created_ms,
        deleted_ms=row.deleted_ms,
    )


def entry_record(row: LogEntryRow) -> Entry:
    return Entry(
        seq=row.seq,
        seat=row.seat,
        hand_number=row.hand_number,
        payload=row.payload,
        signature=row.signature,
        actor_key=row.actor_key,
        entry_hash=row.entry_hash,
        receipt_signature=row.receipt_signature,
        events=events_from_text(row.events_json),
        created_ms=row.created_ms,
        standing_order=row.standing_order,
    )


def hand_record(row: HandRow) -> Hand:
    return Hand(
        hand_number=row.hand_number,
        commitment=row.commitment,
        secret=row.secret,
        revealed=row.revealed,
        deal_seq=row.deal_seq,
    )


def orders_of(row: SeatRow, player: PlayerRow) -> StandingOrders:
    """The orders in force for a seat: the match's own if it has them, else the player's."""
    if row.order_draw is not None:
        return StandingOrders(row.order_draw, row.order_answer or "")
    return StandingOrders(player.order_draw, player.order_answer)


def standing_record(row: StandingRow, name: str) -> Standing:
    return Standing(
        player_id=row.player_id,
        name=name,
        base=Rating(row.rating, row.rd, row.volatility),
        period=row.period,
        tally=Tally(row.information, row.surprise, row.games),
        matches=row.matches,
        wins=row.wins,
        hands=row.hands,
        hand_points=row.hand_points,
        canastas=row.canastas,
        went_out=row.went_out,
        moves=row.moves,
        move_ms=row.move_ms,
        timeouts=row.timeouts,
    )


def standing_row(standing: Standing) -> StandingRow:
    return StandingRow(
        player_id=standing.player_id,
        rating=standing.base.rating,
        rd=standing.base.rd,
        volatility=standing.base.volatility,
        period=standing.period,
        information=standing.tally.information,
        surprise=standing.tally.surprise,
        games=standing.tally.games,
        matches=standing.matches,
        wins=standing.wins,
        hands=standing.hands,
        hand_points=standing.hand_points,
        canastas=standing.canastas,
        went_out=standing.went_out,
        moves=standing.moves,
        move_ms=standing.move_ms,
        timeouts=standing.timeouts,
    )


@lru_cache(maxsize=256)
def stored_config(text: str) -> RuleConfig:
    """A stored configuration, parsed once per distinct text (a server sees a handful: the
    presets and the option sets its players chose), not once per match read."""
    return RuleConfig.from_dict(json.loads(text))


def read_snapshot(stored: StoredSnapshot) -> Snapshot | None:
    """A snapshot as stored (its seq, its JSON text), read (None: none taken yet)."""
    version, text = stored
    return (version, GameState.from_json(json.loads(text))) if text else None
