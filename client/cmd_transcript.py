"""Transcripts: ``canasta export`` writes a match's verifiable record, ``canasta verify``
checks one offline, with nothing but the file (``shared.transcript``, ``docs/transcript.md``).
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from client import common
from client.errors import CliError

if TYPE_CHECKING:
    from client.rpc import Connection
    from shared.transcript import Report

PANEL = "Records"
app = typer.Typer()

MatchArg = Annotated[
    str | None,
    typer.Argument(help="The match (id or its first characters); default: your only one."),
]


@app.command(
    rich_help_panel=PANEL,
    epilog="Examples:\n\n  canasta export\n\n  canasta export 3f2a -o our-match.json",
)
def export(
    match: MatchArg = None,
    output: Annotated[
        str | None,
        typer.Option("--output", "-o", help="Write here (default: canasta-MATCH.json)."),
    ] = None,
) -> None:
    """Save a match's record as a transcript anyone can check with `canasta verify`.

    Without MATCH: your one active match, or else the last match you played.

    A finished match exports whole; a running one, the hands already over (the hand in play
    cannot be checked before its deal is revealed). The transcript is verified before it is
    written: a server that shows a record that does not verify is reported, not saved.
    """
    from client.cmd_table import full_history
    from client.cmd_talk import full_talk
    from shared.protocol import transcript_of
    from shared.transcript import TranscriptError, verify

    with common.connect(common.profile()) as conn:
        match_id = _match_to_export(conn, match)
        record = full_history(conn, match_id)
        talk = full_talk(conn, match_id).entries if record.header else []
        pinned = conn.pinned_key()
    if not record.header:
        raise CliError(
            f"match {match_id[:8]} has no header: it has not started yet, or it began before "
            "this server bound the rules into the record, and cannot be exported verifiably"
        )
    transcript = transcript_of(record.header, record.entries, record.hands, record.end, talk)
    try:
        report = verify(transcript)
    except TranscriptError as exc:
        raise CliError(
            f"the server's record of match {match_id[:8]} does not verify: {exc}"
        ) from None
    if report.header.server_key != pinned:
        raise CliError("the record names another server key than the one this profile pinned")
    path = Path(output or f"canasta-{match_id[:8]}.json")
    try:
        path.write_bytes(transcript.to_bytes())
    except OSError as exc:
        raise CliError(f"cannot write {path}: {exc.strerror}") from None
    state = report.result or "in progress"
    typer.echo(
        f"wrote {path}: {report.entries} entries, {len(report.hands)} hand"
        f"{'' if len(report.hands) == 1 else 's'} over, match {state}"
        + (f", {report.talk} talk entries" if report.talk else "")
    )


def _match_to_export(conn: Connection, given: str | None) -> str:
    """The match named, else your one active match, else the last one you played."""
    if given is not None:
        return common.resolve_match(conn, given)
    matches = common.my_matches(conn, active_only=False)
    if any(common.active(m) for m in matches):
        return common.resolve_match(conn, None)
    if not matches:
        raise CliError("you have no match to export yet")
    return max(matches, key=lambda m: m.created_at_ms).match_id


@app.command(rich_help_panel=PANEL, epilog="Example:\n\n  canasta verify canasta-3f2a09c1.json")
def verify(
    file: Annotated[Path, typer.Argument(help="A transcript written by `canasta export`.")],
) -> None:
    """Check a transcript offline: every signature, the chain, every receipt, every deal
    against its commitment, every move replayed through the rules, the scores.

    Prints who played (with their keys' fingerprints) and how it ended; exits 1 naming the
    first problem (and its entry) when anything is wrong. A file proves only what its keys
    signed: the report says whether the server key is the one your profile pinned and where
    your own key sits; compare the other fingerprints with the players'.
    """
    from shared.transcript import Transcript, TranscriptError
    from shared.transcript import verify as check

    data = _read_transcript(file)
    try:
        report = check(Transcript.from_bytes(data))
    except TranscriptError as exc:
        raise CliError(f"{file} does NOT verify: {exc}") from None
    typer.echo(report_text(report, _known_keys()))


@app.command(
    rich_help_panel=PANEL,
    epilog="Example:\n\n  canasta replay canasta-3f2a09c1.json -o our-match.html",
)
def replay(
    file: Annotated[Path, typer.Argument(help="A transcript written by `canasta export`.")],
    output: Annotated[
        str | None,
        typer.Option("--output", "-o", help="Write here (default: the file's name, .html)."),
    ] = None,
) -> None:
    """Turn a transcript into one web page that replays the match move by move.

    The transcript is verified first, as `canasta verify` does, and refused (exit 1) if it does
    not verify. The page is a single file that needs no server and fetches nothing: open it in
    any browser, step with the buttons or the arrow keys (Page Up/Down: a hand at a time).
    It shows every hand face up (the match is over; a running match's file holds only the hands
    already over), who made each move and with which key, the scores after each hand and the
    verification summary with the key fingerprints.
    """
    from client.replay import page
    from client.replay import replay as replayed
    from shared.transcript import Transcript, TranscriptError

    data = _read_transcript(file)
    try:
        built = replayed(Transcript.from_bytes(data))
    except TranscriptError as exc:
        raise CliError(f"{file} does NOT verify, so it is not replayed: {exc}") from None
    path = Path(output) if output else file.with_suffix(".html")
    if path.resolve() == file.resolve():
        raise CliError(f"{path} is the transcript itself: name another page with -o")
    try:
        path.write_text(page(built), encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot write {path}: {exc.strerror}") from None
    moves = built.report.entries
    typer.echo(
        f"wrote {path}: {moves} move{'' if moves == 1 else 's'}, "
        f"{len(built.report.hands)} hand{'' if len(built.report.hands) == 1 else 's'} over, "
        f"match {built.report.result or 'in progress'}; verified"
    )


def _read_transcript(file: Path) -> bytes:
    """The file's bytes: a regular file of at most ``MAX_FILE_BYTES``, refused before it is
    read otherwise (a device such as /dev/zero, a pipe, a directory, a huge file), and read
    with that bound in case it grows meanwhile."""
    import stat

    from shared.transcript import MAX_FILE_BYTES

    try:
        if not stat.S_ISREG(file.stat().st_mode):  # before opening: a FIFO would block
            raise CliError(f"{file} is not a regular file: a transcript is a file")
        with file.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > MAX_FILE_BYTES:
                raise CliError(
                    f"{file} is {size} bytes: a transcript has at most {MAX_FILE_BYTES} "
                    "(docs/transcript.md)"
                )
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise CliError(f"cannot read {file}: {exc.strerror}") from None
    if len(data) > MAX_FILE_BYTES:
        raise CliError(f"{file} grew past {MAX_FILE_BYTES} bytes while it was read")
    return data


def _known_keys() -> tuple[bytes, bytes] | None:
    """The pinned server key and the player's own key of the chosen profile, if there is one
    (verify works without any)."""
    from client.profiles import Profile, chosen_profile
    from shared.crypto.errors import CryptoError
    from shared.crypto.keytext import public_key_from_text

    try:
        profile = Profile.load(chosen_profile(common.OPTIONS.profile))
        return public_key_from_text(profile.server_key), public_key_from_text(profile.public_key)
    except (CliError, CryptoError, ValueError):
        return None


def report_text(report: Report, known: tuple[bytes, bytes] | None = None) -> str:
    """The verify report: the match, its players and their keys, each hand's scores, the
    result, and which keys this profile knows."""
    from shared.crypto.keytext import fingerprint

    header = report.header
    config = header.config
    try:
        began = datetime.fromtimestamp(header.started_ms / 1000, UTC)
        started = began.strftime("%Y-%m-%d %H:%M UTC")
    except (OverflowError, OSError, ValueError):
        started = f"{header.started_ms} ms after 1970"
    length = (  # Hand and Foot is a number of hands, not a race to a target (docs/rules.md §3.7)
        f"{config.hands_per_match} hands" if config.hands_per_match else f"to {config.target}"
    )
    lines = [f"match {header.match_id} ({config.preset}, {length}), began {started}"]
    names = [s.name or f"seat {s.seat}" for s in header.seats]  # printable: Header checks
    for seat in header.seats:
        who = "a bot" if seat.bot else names[seat.seat]
        lines.append(
            f"  seat {seat.seat}: {who} (side {config.initial_side(seat.seat)}), key "
            f"{fingerprint(seat.public_key)}"
        )
    lines.append(f"  server key {fingerprint(header.server_key)}")
    for hand in report.hands:
        totals = ", ".join(f"{c.hand_total:+d} (total {c.cumulative})" for c in hand.columns)
        lines.append(f"hand {hand.hand_number}: {totals}")
    state = report.state
    if report.finished:
        winners = [
            names[s.seat] for s in header.seats if config.initial_side(s.seat) in state.winners
        ]
        result = " and ".join(winners) if winners else "nobody"
        lines.append(f"final scores {', '.join(map(str, state.scores))}: won by {result}")
    elif report.result == "abandoned":
        lines.append(
            f"abandoned after entry {report.entries}, with no winner: scores "
            f"{', '.join(map(str, state.scores))}"
        )
    else:
        lines.append(
            f"in progress, or cut short: scores {', '.join(map(str, state.scores))} so far. "
            f"This proves that the server stored these {report.entries} entries in this "
            "order, not that the match stopped here: a file of a match that ended holds "
            "the server's signed end"
        )
    if report.end_signed:
        lines.append(
            f"the server signed the match's end at entry {report.entries}: no entry is missing"
        )
    elif report.finished:
        lines.append(
            "no signed end (a file written before ends were recorded): the last entry ends "
            "the match, so none can follow it"
        )
    for number in report.server_cuts:
        lines.append(
            f"note: hand {number} was cut by the server's bot for an absent player (or for a "
            "player's mailed reply, server-attested), so the server could have chosen that deal"
        )
    if report.attested:
        seqs = ", ".join(str(n) for n in report.attested)
        lines.append(
            f"server-attested (a mail reply or a standing order, signed by the server's attest key "
            f"{fingerprint(header.attest_key)}, not the player's key): entries {seqs}"
        )
    counts = []
    if report.by_bot:
        counts.append(f"{report.by_bot} played by a bot for an absent player")
    if report.attested:
        counts.append(f"{len(report.attested)} server-attested")
    notes = f" ({'; '.join(counts)})" if counts else ""
    if report.talk:
        lines.append(
            f"table talk: {report.talk} entries verified (each signed by its seat's key, chained, "
            "bound to the move it followed, receipted)"
            + ("; the server's end names the last: none is missing" if report.end_signed else "")
        )
    lines.append(f"all {report.entries} entries verified{notes}")
    if known is None:
        lines.append(
            "no profile here: compare the key fingerprints above with the players' and the "
            "server's (canasta server info)"
        )
    else:
        server, mine = known
        lines.append(
            "the server key is the one your profile pinned"
            if server == header.server_key
            else "WARNING: the server key is NOT the one your profile pinned"
        )
        seats = [s.seat for s in header.seats if s.public_key == mine]
        lines.append(
            f"your key sits at seat {seats[0]}" if seats else "your key is not in this match"
        )
    return "\n".join(lines)
