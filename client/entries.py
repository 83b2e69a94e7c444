"""The entries of each match a player has seen, kept so that a server restored from a backup
gets back every move its players saw (issue 30).

Every entry the client checks (``client.forks``) or makes (``canasta`` moves) is appended to
``entries/<match id>.jsonl`` in the profile's folder: the signed payload, its signature, its
hash and the server's receipt. When the server later shows a match *behind* what the player
saw, and its head is an entry this file holds, the server was restored from a backup: the
client sends the entries after that head back (``RecoverMatch``), the server checks each as a
new move and by its own receipt, and play goes on. A server that shows another branch is still
a fork, reported as ever.

The file only grows by entries after the last one kept (``Seen.kept_until``), at most
``MAX_KEPT`` per match; it is the player's own (mode 0600, in the profile's 0700 folder).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from client.profiles import Profile
    from shared.pb import canasta_pb2 as pb

MAX_KEPT = 20_000
"""More entries than a match has (a long classic match has about a thousand)."""


@dataclass(frozen=True, slots=True)
class Kept:
    """One entry as the player saw it."""

    seq: int
    payload: bytes
    signature: bytes
    entry_hash: bytes
    receipt: bytes


def _path(profile: Profile, match_id: str) -> Path:
    if not match_id.isalnum() or len(match_id) > 64:  # never a path from the server's text
        raise ValueError("not a match id")
    return profile.directory / "entries" / f"{match_id}.jsonl"


def keep(profile: Profile, match_id: str, entries: Iterable[Kept]) -> None:
    """Append the entries after the last one kept (in order; a gap ends what is kept, since a
    copy must run on from the server's head); the caller saves the profile."""
    seen = profile.matches.get(match_id)
    if seen is None:
        return
    lines = []
    last = seen.kept_until  # 0: nothing kept yet, and the copy may start at any entry
    for entry in entries:
        if (last and entry.seq != last + 1) or entry.seq <= last or entry.seq > MAX_KEPT:
            continue
        lines.append(
            json.dumps(
                {
                    "seq": entry.seq,
                    "payload": entry.payload.hex(),
                    "signature": entry.signature.hex(),
                    "entry_hash": entry.entry_hash.hex(),
                    "receipt": entry.receipt.hex(),
                },
                separators=(",", ":"),
            )
        )
        last = entry.seq
    if not lines:
        return
    path = _path(profile, match_id)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as file:
        file.write("\n".join(lines) + "\n")
    seen.kept_until = last


def of_history(entries: Iterable[pb.HistoryEntry]) -> list[Kept]:
    return [
        Kept(
            e.seq,
            bytes(e.payload),
            bytes(e.signature),
            bytes(e.entry_hash),
            bytes(e.receipt_signature),
        )
        for e in entries
    ]


def kept(profile: Profile, match_id: str) -> dict[int, Kept]:
    """Every entry kept of the match, by seq (none if the file is missing or unreadable)."""
    try:
        text = _path(profile, match_id).read_text(encoding="utf-8")
    except (OSError, ValueError):
        return {}
    found: dict[int, Kept] = {}
    for line in text.splitlines():
        try:
            data = json.loads(line)
            entry = Kept(
                int(data["seq"]),
                bytes.fromhex(data["payload"]),
                bytes.fromhex(data["signature"]),
                bytes.fromhex(data["entry_hash"]),
                bytes.fromhex(data["receipt"]),
            )
        except (ValueError, KeyError, TypeError):
            continue  # a torn last line (the machine stopped mid-write): the rest stands
        found[entry.seq] = entry
    return found
