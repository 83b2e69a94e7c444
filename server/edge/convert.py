"""Domain records -> protobuf messages for the servicer (engine parts go through shared.wire)."""

from __future__ import annotations

import json

from server.domain import (
    Change,
    Entry,
    Hand,
    History,
    MatchStatus,
    MatchSummary,
    MatchView,
    Notification,
    Player,
    Receipt,
    Seat,
    SeatKind,
    ServerInfo,
    Settings,
    Standing,
    StandingOrders,
    Talk,
    TalkEntry,
    TimeControl,
)
from server.service import clocks
from server.service.clocks import ClockChoice
from server.service.people.ladder import BOT_RATINGS
from server.service.people.preferences import SettingsChange
from server.service.play.talk import Said
from shared.bots import DEFAULT_LEVEL
from shared.pb import canasta_pb2 as pb
from shared.rules import CLASSIC, PRESETS, RuleConfig, make_config
from shared.wire import event_to_pb, move_from_bytes, view_to_pb

_STATUS = {
    MatchStatus.WAITING: pb.MATCH_STATUS_WAITING,
    MatchStatus.PLAYING: pb.MATCH_STATUS_PLAYING,
    MatchStatus.FINISHED: pb.MATCH_STATUS_FINISHED,
}
_SEAT_KIND = {
    SeatKind.EMPTY: pb.SEAT_KIND_EMPTY,
    SeatKind.HUMAN: pb.SEAT_KIND_HUMAN,
    SeatKind.BOT: pb.SEAT_KIND_BOT,
}
_REGISTRATION = {"open": pb.REGISTRATION_MODE_OPEN, "invite": pb.REGISTRATION_MODE_INVITATION}


def _config_json(config: RuleConfig) -> str:
    return json.dumps(config.to_dict(), sort_keys=True)


def server_info_to_pb(info: ServerInfo) -> pb.GetServerInfoResponse:
    defaults = CLASSIC.to_dict(every=True)
    return pb.GetServerInfoResponse(
        server_public_key=info.server_public_key,
        bot_public_key=info.bot_public_key,
        server_version=info.version,
        registration=_REGISTRATION.get(info.registration, pb.REGISTRATION_MODE_UNSPECIFIED),
        presets=[
            pb.Preset(
                name=name,
                players=make_config(name).players,
                config_json=_config_json(make_config(name)),
            )
            for name in PRESETS
        ],
        options=[
            pb.RuleOption(name=name, default_json=json.dumps(value))
            for name, value in defaults.items()
            if name != "preset"
        ],
        token_ttl_seconds=info.token_ttl_seconds,
        max_message_bytes=info.max_message_bytes,
        test_clock_speed=info.test_clock_speed,
    )


def player_to_pb(player: Player) -> pb.Player:
    return pb.Player(
        public_key=player.public_key,
        display_name=player.display_name,
        registered_at_ms=player.created_ms,
    )


def seat_to_pb(seat: Seat, config: RuleConfig) -> pb.SeatInfo:
    return pb.SeatInfo(
        seat=seat.seat,
        kind=_SEAT_KIND[seat.kind],
        display_name=seat.display_name,
        public_key=seat.public_key,
        side=config.initial_side(seat.seat),
        bank_ms=seat.bank_ms,
        covered=seat.covered,
        on_vacation=seat.on_vacation,
        abort_asked=seat.abort_asked,
        reply_moves=seat.reply_moves,
        spectators_vote=seat.spectators_vote,
        rating=seat.rating
        or (
            round(BOT_RATINGS[seat.bot_level or DEFAULT_LEVEL].rating)
            if seat.kind is SeatKind.BOT
            else 0
        ),
        bot_level=(seat.bot_level or DEFAULT_LEVEL) if seat.kind is SeatKind.BOT else "",
    )


def notification_to_pb(note: Notification, text: str) -> pb.WatchResponse:
    return pb.WatchResponse(
        notification=pb.WatchNotification(
            id=note.id,
            kind=note.kind,
            match_id=note.match_id,
            text=text,
            created_at_ms=note.created_ms,
        )
    )


def settings_to_pb(settings: Settings) -> pb.Settings:
    return pb.Settings(
        time_zone=settings.time_zone,
        email=settings.email if settings.email_verified else "",
        email_verified=settings.email_verified,
        email_pending=settings.email_pending,
        email_mode=settings.email_mode.value,
        webhook_url=settings.webhook_url,
        webhook_secret=settings.webhook_secret,
        vacation_since_ms=settings.vacation_started_ms,
        vacation_left_ms=settings.vacation_left_ms,
        allow_reply_moves=settings.allow_reply_moves,
        orders=orders_to_pb(settings.orders),
    )


def orders_to_pb(orders: StandingOrders) -> pb.StandingOrders:
    return pb.StandingOrders(draw=orders.draw, answer=orders.answer)


def settings_change(message: pb.UpdateSettingsRequest) -> SettingsChange:
    """The fields the request sets (the service checks each)."""

    m = message
    return SettingsChange(
        time_zone=m.time_zone if m.HasField("time_zone") else None,
        email=m.email if m.HasField("email") else None,
        email_code=m.email_code if m.HasField("email_code") else None,
        email_mode=m.email_mode if m.HasField("email_mode") else None,
        webhook_url=m.webhook_url if m.HasField("webhook_url") else None,
        vacation=m.vacation if m.HasField("vacation") else None,
        allow_reply_moves=m.allow_reply_moves if m.HasField("allow_reply_moves") else None,
        order_draw=m.order_draw if m.HasField("order_draw") else None,
        order_answer=m.order_answer if m.HasField("order_answer") else None,
    )


def clock_choice(message: pb.TimeControl) -> ClockChoice:
    """A creator's time control as sent (the lobby checks its ranges)."""
    return ClockChoice(
        days_per_move=message.days_per_move,
        hours_per_move=message.hours_per_move,
        bank_days=message.bank_days,
        bank_hours=message.bank_hours,
        weekends_off=message.weekends_off,
        on_timeout=message.on_timeout,
    )


def time_control_to_pb(control: TimeControl | None) -> pb.TimeControl:
    if control is None:
        return pb.TimeControl()
    whole_days = control.hours_per_move % 24 == 0 and control.bank_hours % 24 == 0
    return pb.TimeControl(  # in hours always; in days too where both are whole days
        hours_per_move=control.hours_per_move,
        bank_hours=control.bank_hours,
        days_per_move=control.hours_per_move // 24 if whole_days else 0,
        bank_days=control.bank_hours // 24 if whole_days else 0,
        weekends_off=control.weekends_off,
        on_timeout=control.on_timeout.value,
    )


def summary_to_pb(summary: MatchSummary) -> pb.MatchSummary:
    match = summary.match
    message = pb.MatchSummary(
        match_id=match.id,
        preset=match.preset,
        status=_STATUS[match.status],
        players=match.config.players,
        version=match.version,
        revision=match.revision,
        my_turn=summary.my_turn,
        changed=summary.changed,
        invite_code=match.invite_code if summary.my_seat is not None else "",
        scores=list(summary.scores),
        target=summary.target,
        hand_number=summary.hand_number,
        winners=list(summary.winners),
        created_at_ms=match.created_ms,
        aborted=match.aborted,
        recovered_from=match.recovered[0],
        recovered_until=match.recovered[1],
        spectators=match.spectators.value,
        rated=match.rated,
    )
    # (messages copied in rather than given to the constructor: see ``shared.wire.view_to_pb``)
    message.seats.extend([seat_to_pb(s, match.config) for s in match.seats])
    message.time_control.CopyFrom(time_control_to_pb(match.time_control))
    if match.clock is not None and not match.clock.paused:  # a paused clock has no deadline
        message.clock.CopyFrom(
            pb.TurnClock(
                seat=match.clock.seat,
                started_at_ms=match.clock.started_ms,
                due_at_ms=match.clock.due_ms,
                move_due_at_ms=clocks.move_due_ms(match),
            )
        )
    if summary.my_seat is not None:
        message.my_seat = summary.my_seat
    if summary.to_act is not None:
        message.to_act = summary.to_act
    return message


def match_view_to_pb(view: MatchView) -> pb.MatchView:
    match = view.summary.match
    message = pb.MatchView(
        version=match.version,
        head_hash=match.head_hash,
        deal_commitment=view.deal_commitment,
        hand_commitment=view.hand_commitment,
        spectators=view.spectators,
        spectator_names=view.spectator_names,
    )
    message.match.CopyFrom(summary_to_pb(view.summary))
    message.view.CopyFrom(view_to_pb(view.view))
    if view.dealing_seat is not None:
        message.dealing_seat = view.dealing_seat
    if view.events_from is not None:
        message.events_from = view.events_from
    if view.summary.my_seat is not None:  # the viewer's own orders, nobody else's
        mine = match.seats[view.summary.my_seat]
        message.my_orders.CopyFrom(orders_to_pb(mine.orders))
        message.my_orders_per_match = mine.orders_per_match
    return message


def standing_to_pb(standing: Standing, period: int) -> pb.PlayerStanding:
    """A ladder line: the rating in ``period`` and the statistics per hand and per move."""
    rating = standing.rating_at(period)
    hands = standing.hands or 1
    return pb.PlayerStanding(
        display_name=standing.name,
        bot_level=standing.bot_level,
        rating=rating.rating,
        rd=rating.rd,
        volatility=rating.volatility,
        matches=standing.matches,
        wins=standing.wins,
        hands=standing.hands,
        average_hand_score=standing.hand_points / hands,
        canastas_per_hand=standing.canastas / hands,
        going_out_rate=standing.went_out / hands,
        average_move_seconds=standing.move_ms / 1000 / (standing.moves or 1),
        timeouts=standing.timeouts,
    )


def receipt_to_pb(receipt: Receipt) -> pb.Receipt:
    return pb.Receipt(
        match_id=receipt.match_id,
        seq=receipt.seq,
        entry_hash=receipt.entry_hash,
        server_signature=receipt.server_signature,
    )


def entry_to_pb(
    entry: Entry, bot_public_key: bytes = b"", attest_public_key: bytes = b""
) -> pb.HistoryEntry:
    return pb.HistoryEntry(
        played_by_bot=bool(bot_public_key) and entry.actor_key == bot_public_key,
        server_attested=bool(attest_public_key) and entry.actor_key == attest_public_key,
        standing_order=entry.standing_order,
        seq=entry.seq,
        seat=entry.seat,
        hand_number=entry.hand_number,
        payload=entry.payload,
        signature=entry.signature,
        signer_public_key=entry.actor_key,
        entry_hash=entry.entry_hash,
        receipt_signature=entry.receipt_signature,
        created_at_ms=entry.created_ms,
        actions=list(move_from_bytes(entry.payload).actions),
        events=[event_to_pb(e) for e in entry.events],
    )


def hand_to_pb(hand: Hand) -> pb.HandRecord:
    return pb.HandRecord(
        hand_number=hand.hand_number,
        commitment=hand.commitment,
        secret=hand.secret,
        deal_seq=hand.deal_seq,
    )


def history_to_pb(history: History) -> pb.GetHistoryResponse:
    match = history.match
    return pb.GetHistoryResponse(
        match_id=match.id,
        entries=[
            entry_to_pb(e, history.bot_public_key, history.attest_public_key)
            for e in history.entries
        ],
        hands=[hand_to_pb(h) for h in history.hands],
        version=match.version,
        more=history.more,
        config_json=_config_json(match.config),
        seats=[seat_to_pb(s, match.config) for s in match.seats],
        header=match.header,
        end=None
        if history.end is None
        else pb.MatchEnd(
            seq=history.end.seq, outcome=history.end.outcome, signature=history.end.signature
        ),
    )


def change_to_pb(change: Change) -> pb.WatchResponse:
    message = pb.WatchResponse(
        match_id=change.match_id,
        version=change.version,
        revision=change.revision,
        status=_STATUS[change.status],
        cut=change.cut,
    )
    if change.to_act is not None:
        message.to_act = change.to_act
    return message


def said(request: pb.SayRequest) -> Said:
    return Said(
        match_id=request.match_id,
        seat=request.seat,
        seq=request.seq,
        prev_hash=request.prev_hash,
        at_seq=request.at_seq,
        at_hash=request.at_hash,
        client_ms=request.client_time_ms,
        kind=request.kind,
        text=request.text,
        signature=request.signature,
    )


def talk_entry_to_pb(entry: TalkEntry, display_name: str) -> pb.TalkEntry:
    return pb.TalkEntry(
        seq=entry.seq,
        kind=entry.kind,
        seat=entry.seat,
        at_seq=entry.at_seq,
        at_hash=entry.at_hash,
        client_time_ms=entry.client_ms,
        text=entry.text,
        signature=entry.signature,
        talk_hash=entry.talk_hash,
        receipt_signature=entry.receipt_signature,
        created_at_ms=entry.created_ms,
        display_name=display_name,
    )


def talk_to_pb(talk: Talk) -> pb.GetTalkResponse:
    match = talk.match
    return pb.GetTalkResponse(
        match_id=match.id,
        entries=[talk_entry_to_pb(e, match.seats[e.seat].display_name) for e in talk.entries],
        more=talk.more,
        count=talk.count,
        head_hash=talk.head_hash,
        version=match.version,
        version_hash=match.head_hash,
        conventions=[
            talk_entry_to_pb(e, match.seats[e.seat].display_name) for e in talk.conventions
        ],
    )
