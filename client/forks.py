"""Fork detection: a server that rewrites a match's history after a player saw it is caught.

The profile remembers, per match, the last entry the player was shown (its seq and hash, in
``Seen``) and the header hash the chain started from. Every later view must extend that: the
same entry, or a chain of entries that starts from it (each entry's signed ``prev_hash`` is the
hash of the one before, and the hashes are recomputed here, not taken from the server). A view
that goes back, or shows another entry at a seq already seen, or whose new entries do not link
to the remembered one, means the server rewrote the match or shows different histories to
different players. That is reported loudly and the evidence saved to a file; nothing is
remembered from such a view, so every later look reports it again.

The first time a player looks at a started match, the whole chain is checked from its header,
and the header itself against what the player knows: their own key in their own seat, the
server key their profile pinned. Players compare heads with ``canasta history``, which prints
the head's seq and hash.

Only hashing: no signature is checked here (``canasta export`` and ``verify`` check those), so
``canasta show`` keeps its start-up cost.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, NoReturn

from client.errors import CliError

if TYPE_CHECKING:
    from client.profiles import Seen
    from client.rpc import Connection
    from shared.pb import canasta_pb2 as pb

RECOVER_BATCH = 500
"""Entries sent back in one ``RecoverMatch`` call (the server takes at most 1,000)."""
MAX_CHECKED_ENTRIES = 100_000
"""More history than a match ever has: a server that keeps paging past it is not believed."""


class ForkError(CliError):
    """The server showed a history that does not extend the one the player saw before."""


def check_view(
    conn: Connection, view: pb.MatchView, fetched: list[pb.HistoryEntry] | None = None
) -> str:
    """Check that ``view`` extends what the profile saw of its match; returns the header hash
    (hex) to remember. Raises ``ForkError`` (after saving the evidence) when it does not.
    ``fetched``: the entries after the seen version up to the view's, if the caller already
    has them (``entries_after``), so they are not asked for twice."""
    match_id = view.match.match_id
    seen = conn.profile.matches.get(match_id)
    if view.match.status == 1 or view.match.aborted:  # waiting, or abandoned so: no chain
        return ""
    head = bytes(view.head_hash)
    if seen is not None and seen.header_hash:
        known = bytes.fromhex(seen.head_hash)
        if view.version < seen.version and _recovered(conn, view, seen):
            return check_view(conn, view)  # the view is the server's after the recovery
        if view.version < seen.version or (view.version == seen.version and head != known):
            _fork(conn, view, seen, [], "it shows an earlier or a different entry")
        if view.version == seen.version:
            if (
                view.HasField("dealing_seat")
                and seen.deal_commitment
                and bytes(view.deal_commitment).hex() != seen.deal_commitment
            ):  # a new secret for the same cut: the server would be choosing the deal
                _fork(conn, view, seen, [], "it changed the commitment of the hand to deal")
            return seen.header_hash
        entries = (
            fetched
            if fetched is not None
            else entries_after(conn, match_id, seen.version, view.version)
        )
        _follow(conn, view, seen, known, entries)
        _keep(conn, match_id, entries)
        return seen.header_hash
    # First look at this started match: the whole chain, from a header that names us (and,
    # for a profile that saw the match before it kept header hashes, through what it saw).
    header, entries = _header_and_entries(conn, match_id, view.version)
    start = _check_header(conn, view, header)
    _follow(conn, view, seen, start, entries)
    if seen is not None and 0 < seen.version <= view.version:  # seen before headers were kept
        _check_seen_entry(conn, view, seen, start, entries)
    if seen is None:  # a first look: the profile knows the match from now on
        conn.profile.remember(view, start.hex())
    _keep(conn, match_id, entries)
    return start.hex()


def _keep(conn: Connection, match_id: str, entries: list[pb.HistoryEntry]) -> None:
    """Keep a copy of the entries just checked (``client.entries``); the caller saves."""
    from client.entries import keep, of_history

    keep(conn.profile, match_id, of_history(entries))


def _recovered(conn: Connection, view: pb.MatchView, seen: Seen) -> bool:
    """The server shows the match behind what the player saw. If its head is an entry the
    player's copy holds, the server was restored from a backup: send it the entries it lost
    (``RecoverMatch``) and put the server's view after that in ``view``. False when the copy
    cannot help (it does not hold that head, or a gap), or the server refuses the entries:
    then it is a fork, reported by the caller."""
    import sys

    from client.entries import kept
    from client.rpc import RpcFailureError
    from shared.pb import canasta_pb2 as pb

    match_id = view.match.match_id
    copy = kept(conn.profile, match_id)
    at = copy.get(view.version)
    if view.version == 0 or at is None or at.entry_hash != bytes(view.head_hash):
        return False
    lost = []
    for seq in range(view.version + 1, seen.version + 1):
        entry = copy.get(seq)
        if entry is None:
            return False
        lost.append(
            pb.RecoveredEntry(
                payload=entry.payload, signature=entry.signature, receipt_signature=entry.receipt
            )
        )
    try:
        for start in range(0, len(lost), RECOVER_BATCH):
            conn.call(
                "RecoverMatch",
                pb.RecoverMatchRequest(
                    match_id=match_id, entries=lost[start : start + RECOVER_BATCH]
                ),
            )
    except RpcFailureError as failure:
        if failure.status in ("FAILED_PRECONDITION", "PERMISSION_DENIED", "INVALID_ARGUMENT"):
            return False
        raise
    first = view.version + 1
    view.CopyFrom(conn.call("GetView", pb.GetViewRequest(match_id=match_id)).view)
    print(
        f"canasta: the server had lost moves {first}-{seen.version} of match {match_id[:8]} "
        "(it was restored from a backup); your copy brought them back, each checked by the "
        "server",
        file=sys.stderr,
    )
    return view.version >= seen.version


def _check_seen_entry(
    conn: Connection, view: pb.MatchView, seen: Seen, start: bytes, entries: list[pb.HistoryEntry]
) -> None:
    """The entry the player saw last is still in the chain, unchanged."""
    from shared.crypto.chain import entry_hash

    prev = start
    for entry in entries:
        prev = entry_hash(prev, entry.payload, entry.signature)
        if entry.seq == seen.version:
            if prev == bytes.fromhex(seen.head_hash):
                return
            break
    _fork(conn, view, seen, entries, f"entry {seen.version} is not the one you saw")


def _follow(
    conn: Connection,
    view: pb.MatchView,
    seen: Seen | None,
    start: bytes,
    entries: list[pb.HistoryEntry],
) -> None:
    """Recompute the chain from ``start`` through ``entries`` up to the view's head."""
    from shared.crypto.chain import entry_hash
    from shared.wire import WireError, move_from_bytes

    prev = start
    for entry in entries:
        try:
            move = move_from_bytes(entry.payload)
        except WireError:
            _fork(conn, view, seen, entries, f"entry {entry.seq} cannot be read")
        if move.prev_hash != prev:
            _fork(conn, view, seen, entries, f"entry {entry.seq} does not follow the one before")
        prev = entry_hash(prev, entry.payload, entry.signature)
    if prev != bytes(view.head_hash):
        _fork(conn, view, seen, entries, "its head is not the end of the entries it shows")


def entries_after(conn: Connection, match_id: str, after: int, until: int) -> list[pb.HistoryEntry]:
    """The entries ``after + 1 .. until`` as the server shows them now."""
    from shared.pb import canasta_pb2 as pb

    found: list[pb.HistoryEntry] = []
    while after < until and len(found) < MAX_CHECKED_ENTRIES:
        page = conn.call("GetHistory", pb.GetHistoryRequest(match_id=match_id, after_seq=after))
        fresh = [e for e in page.entries if after < e.seq <= until]
        if not fresh:
            break
        found.extend(fresh)
        after = fresh[-1].seq
    return found


def _header_and_entries(
    conn: Connection, match_id: str, until: int
) -> tuple[bytes, list[pb.HistoryEntry]]:
    from shared.pb import canasta_pb2 as pb

    first = conn.call("GetHistory", pb.GetHistoryRequest(match_id=match_id, after_seq=0))
    entries = [e for e in first.entries if e.seq <= until]
    if first.more and entries:
        entries += entries_after(conn, match_id, entries[-1].seq, until)
    return bytes(first.header), entries


def _check_header(conn: Connection, view: pb.MatchView, header: bytes) -> bytes:
    """The hash the chain starts from, after checking the header against what we know."""
    from shared.crypto.chain import genesis_hash
    from shared.crypto.keytext import public_key_from_text
    from shared.transcript import Header, TranscriptError, header_hash

    if not header:  # a match begun before headers existed: its chain starts at genesis
        import sys

        print(
            f"canasta: warning: match {view.match.match_id[:8]} has no header (it began before "
            "this server bound the rules into the record): its rules are not checked",
            file=sys.stderr,
        )
        return genesis_hash(view.match.match_id)
    try:
        parsed = Header.from_bytes(header)
    except TranscriptError as exc:
        raise CliError(f"the server sent a malformed match header: {exc}") from None
    mine = public_key_from_text(conn.profile.public_key)
    problems = []
    summary = view.match
    if parsed.match_id != summary.match_id:
        problems.append("it names another match")
    seat = view.view.seat
    if not 0 <= seat < len(parsed.seats) or parsed.seats[seat].public_key != mine:
        problems.append(f"seat {seat} is not your key in it")
    if [s.public_key for s in parsed.seats] != [bytes(s.public_key) for s in summary.seats]:
        problems.append("its seats' keys are not the table's")
    if parsed.server_key != conn.pinned_key():
        problems.append("it names another server key than the one you pinned")
    rules = parsed.config
    if (rules.preset, rules.target, rules.players) != (
        summary.preset,
        summary.target,
        summary.players,
    ):
        problems.append(
            f"its rules ({rules.preset}, {rules.players} players, to {rules.target}) are not "
            f"the table's ({summary.preset}, {summary.players} players, to {summary.target})"
        )
    control = summary.time_control
    clock = parsed.clock
    agreed = (
        None
        if not control.hours_per_move
        else (control.hours_per_move, control.bank_hours, control.weekends_off, control.on_timeout)
    )
    written = (
        None
        if clock is None
        else (clock.hours_per_move, clock.bank_hours, clock.weekends_off, clock.on_timeout)
    )
    if agreed != written:
        problems.append("its time control is not the table's")
    if problems:
        raise CliError("the match header the server shows is wrong: " + "; ".join(problems))
    return header_hash(header)


def _fork(
    conn: Connection,
    view: pb.MatchView,
    seen: Seen | None,
    entries: list[pb.HistoryEntry],
    why: str,
) -> NoReturn:
    """Save what was remembered and what the server showed, and stop loudly."""
    profile = conn.profile
    match_id = view.match.match_id
    receipts = []
    try:
        with profile.receipts_path.open(encoding="utf-8") as log:
            receipts = [line for line in log if match_id in line]
    except OSError:
        pass
    evidence = {
        "what": "a server showed a match history that does not extend one it showed before",
        "why": why,
        "server": profile.server,
        "server_key": profile.server_key,
        "match_id": match_id,
        "seen_before": None
        if seen is None
        else {"version": seen.version, "head_hash": seen.head_hash},
        "shown_now": {"version": view.version, "head_hash": bytes(view.head_hash).hex()},
        "entries_shown": [
            {"seq": e.seq, "payload": e.payload.hex(), "signature": e.signature.hex(),
             "entry_hash": e.entry_hash.hex(), "receipt": e.receipt_signature.hex()}
            for e in entries
        ],
        "receipts_held": [json.loads(line) for line in receipts],
        "noticed_at_ms": time.time_ns() // 1_000_000,
    }  # fmt: skip
    folder = profile.directory / "forks"
    path = folder / f"{match_id}-{evidence['noticed_at_ms']}.json"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(evidence, indent=2) + "\n", encoding="utf-8")
        saved = f"evidence saved to {path}"
    except OSError as exc:
        saved = f"the evidence could not be saved ({exc.strerror})"
    before = f"version {seen.version}" if seen is not None else "the match's start"
    raise ForkError(
        f"FORK DETECTED in match {match_id[:8]}: the server shows version {view.version}, which "
        f"does not extend {before} that it showed you earlier ({why}). The server rewrote the "
        f"match's history, or shows different histories to different players; {saved}. "
        "Compare heads with the other players (canasta history) and tell them."
    )


def head_line(record: pb.GetHistoryResponse) -> str:
    """The head of a whole history, recomputed from its header: what players compare to know
    that the server shows them all one history."""
    from shared.crypto.chain import entry_hash, genesis_hash
    from shared.transcript import header_hash

    prev = header_hash(record.header) if record.header else genesis_hash(record.match_id)
    for entry in record.entries:
        prev = entry_hash(prev, entry.payload, entry.signature)
    if record.entries and prev != bytes(record.entries[-1].entry_hash):
        return "Head: the entries do not chain to the hash the server gives for the last one!"
    return f"Head: entry {len(record.entries)}, hash {prev.hex()}"
