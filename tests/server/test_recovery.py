"""After a restore from a backup, a player's copy brings the lost moves back (issue 30).

A real server over a real SQLite file (backed up online, restored with ``restore``) and over a
real PostgreSQL (``pg_dump``, ``pg_restore``): Ann and Ben play two seats against two bots; a
backup is taken near the end of a hand; forty more moves follow (the hand's end, the next cut,
bots' moves among them); the server stops and the backup is put back. Ann's client holds what
she saw (each entry with its receipt) and sends the entries the server lost: every one is
checked as a new move and must carry this server's receipt; they come back identical, the
chain verifies, and the match plays on. A forged receipt, an entry of another branch, or a gap
is refused and stores nothing.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import grpc
import pytest

from bench.postgres import BIN_DIR
from server.app import App
from server.store.backup import backup, restore
from shared.pb import canasta_pb2 as pb
from shared.rules.bot import choose_action
from tests.testkit import PlayerClient, authoritative_state, replay_history

from .conftest import AppFactory


def _backup(url: str, copy: Path) -> None:
    """The operator's backup: SQLite's online backup, or PostgreSQL's ``pg_dump``."""
    if url.startswith("sqlite"):
        backup(url, copy)
        return
    subprocess.run(
        [str(BIN_DIR / "pg_dump"), "--format=custom", f"--file={copy}", _libpq(url)],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip


def _restore(copy: Path, url: str) -> None:
    """The operator's restore, with every server stopped."""
    if url.startswith("sqlite"):
        restore(copy, url)
        return
    subprocess.run(
        [str(BIN_DIR / "pg_restore"), "--clean", "--if-exists", f"--dbname={_libpq(url)}",
         str(copy)],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip


def _libpq(url: str) -> str:
    return "postgresql://" + url.split("://", 1)[1]


def _recover(
    client: PlayerClient, match_id: str, entries: list[pb.HistoryEntry]
) -> pb.RecoverMatchResponse:
    request = pb.RecoverMatchRequest(
        match_id=match_id,
        entries=[
            pb.RecoveredEntry(
                payload=e.payload, signature=e.signature, receipt_signature=e.receipt_signature
            )
            for e in entries
        ],
    )
    response: pb.RecoverMatchResponse = client.stub.RecoverMatch(request, metadata=client.metadata)
    return response


def _next_move(app: App, players: list[PlayerClient], match_id: str) -> None:
    """The next move of a person (the cut, or the bot heuristic's choice for their seat),
    once the server's bots have made theirs."""
    app.bots.drain()
    state = authoritative_state(app.service, match_id)
    player = players[players[0].view(match_id).match.to_act]
    view = player.view(match_id)
    if view.HasField("dealing_seat"):
        player.deal(view)
    else:
        player.submit(view, [str(choose_action(state, view.view.seat))])


def _played_past_a_backup(
    app: App, ann: PlayerClient, ben: PlayerClient, tmp_path: Path
) -> tuple[str, list[pb.HistoryEntry], int, Path]:
    """A match played to near the end of a hand, backed up, then 40 moves more; the server
    stopped. Returns the match, Ann's copy of every entry, the version at the backup
    and the backup file."""
    created = ann.stub.CreateMatch(
        pb.CreateMatchRequest(preset="classic", seat=0, bot_seats=[2, 3]), metadata=ann.metadata
    )
    match_id = created.match.match_id
    ben.join_match(created.invite_code, seat=1)
    players = [ann, ben, ann, ann]  # the bots' seats are never asked to move here
    for _ in range(400):
        app.bots.drain()
        view = ann.view(match_id)
        ending = 0 < view.view.stock_size < 10 or view.HasField("dealing_seat")
        if view.view.hand_number >= 1 and ending:  # the next moves hold the hand's end or cut
            break
        _next_move(app, players, match_id)
    else:
        raise AssertionError("no hand came near its end")
    app.bots.drain()
    at_backup = ann.view(match_id).version
    copy = tmp_path / "club-backup.db"
    _backup(app.config.db_url, copy)
    while ann.view(match_id).version < at_backup + 40:
        _next_move(app, players, match_id)
        app.bots.drain()
    held, _ = ann.full_history(match_id)
    assert any(e.played_by_bot for e in held[at_backup:])
    assert any(list(e.actions) == ["deal"] for e in held[at_backup:])  # a cut after the backup
    app.stop(grace=None)
    return match_id, held, at_backup, copy


def test_a_restored_server_takes_back_every_move_a_player_saw(
    make_app: AppFactory, tmp_path: Path
) -> None:
    old = make_app("club")
    with grpc.insecure_channel(f"127.0.0.1:{old.port}") as channel:
        ann, ben = (PlayerClient(channel).join_server(n) for n in ("ann", "ben"))
        match_id, held, at_backup, copy = _played_past_a_backup(old, ann, ben, tmp_path)
    _restore(copy, old.config.db_url)
    app = make_app("club")  # the same data directory: the same keys, the restored database
    with grpc.insecure_channel(f"127.0.0.1:{app.port}") as channel:
        ann = PlayerClient(channel, key=ann.key)
        ann.login()
        assert ann.view(match_id).version == at_backup  # the restore lost the rest
        lost = held[at_backup:]

        # Only a seated player may send entries back, and nobody learns anything from it but
        # how many were taken: a stranger is refused before any entry is read.
        eve = PlayerClient(channel).join_server("eve")
        for target in (match_id, "0" * 32):
            with pytest.raises(grpc.RpcError) as refused:
                _recover(eve, target, lost[:3])
            assert refused.value.code() in (
                grpc.StatusCode.PERMISSION_DENIED,
                grpc.StatusCode.NOT_FOUND,
            )
            assert str(at_backup) not in (refused.value.details() or "")
        too_many = pb.RecoverMatchRequest(match_id=match_id, entries=[pb.RecoveredEntry()] * 1_001)
        with pytest.raises(grpc.RpcError) as refused:
            ann.stub.RecoverMatch(too_many, metadata=ann.metadata)
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT

        forged = pb.HistoryEntry()
        forged.CopyFrom(lost[0])
        forged.receipt_signature = bytes(64)
        with pytest.raises(grpc.RpcError) as refused:
            _recover(ann, match_id, [forged])
        assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
        with pytest.raises(grpc.RpcError) as refused:
            _recover(ann, match_id, lost[1:3])  # a gap: the entry after the head is missing
        assert refused.value.code() == grpc.StatusCode.ABORTED
        assert ann.view(match_id).version == at_backup  # nothing stored

        # Copies combine: a first part (as one client held it), then the whole again. Between
        # the two calls the server's bots may move: their moves carry no time, so they are
        # the very entries that were lost, and the rest still extends them.
        first = _recover(ann, match_id, lost[:15])
        assert (first.recovered, first.version) == (15, at_backup + 15)
        rest = _recover(ann, match_id, lost)
        assert rest.version == held[-1].seq
        assert 0 < rest.recovered <= len(lost) - 15
        assert _recover(ann, match_id, lost).recovered == 0  # all there: nothing to do

        entries, history = ann.full_history(match_id)
        assert [(e.seq, e.entry_hash, e.receipt_signature) for e in entries] == [
            (e.seq, e.entry_hash, e.receipt_signature) for e in held
        ]
        replay_history(match_id, history, entries, app.service.ctx.keys.server_public)

        # Another branch: an entry at a seq the server holds, but not the one it holds.
        other = pb.HistoryEntry()
        other.CopyFrom(held[-1])
        other.signature = bytes(64)
        with pytest.raises(grpc.RpcError) as refused:
            _recover(ann, match_id, [other])
        assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert "fork" in (refused.value.details() or "")

        with app.db.read() as session:
            told = session.connection().exec_driver_sql(
                "SELECT player_id, COUNT(*) FROM notification WHERE kind = 'match_recovered'"
                " GROUP BY player_id"
            )
            assert sorted(n for _, n in told) == [1, 1]  # Ann and Ben, once for the two calls
        summary = ann.view(match_id).match
        assert (summary.recovered_from, summary.recovered_until) == (at_backup + 1, held[-1].seq)
        ben = PlayerClient(channel, key=ben.key)
        ben.login()
        app.bots.drain()
        before = ann.view(match_id).version
        _next_move(app, [ann, ben, ann, ann], match_id)  # the match plays on
        assert ann.view(match_id).version > before  # (and the bots after it, maybe)
