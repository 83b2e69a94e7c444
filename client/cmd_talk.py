"""Table talk: ``canasta say`` to the whole table, a side's ``canasta conventions``, and
``canasta talk`` to read it all (``shared.talk``).

There is no private channel between partners: whatever is said, every seat reads, and it is
kept in the match's record (signed by the seat's key, chained, in the exported transcript).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated

import typer

from client import common
from client.errors import EXIT_USAGE, CliError

if TYPE_CHECKING:
    from client.rpc import Connection
    from shared.pb import canasta_pb2 as pb

app = typer.Typer()
PANEL = "Table talk"
JsonOpt = Annotated[bool, typer.Option("--json", help=common.JSON_HELP)]
_MATCH_WORD = re.compile(r"[0-9a-f]{4,64}")
_TRIES = 3
"""How often a talk entry is signed again when the talk or the log moved on meanwhile."""


def _text_and_match(text: str, match: str | None, option: str | None) -> tuple[str, str | None]:
    """The text and the match, also when the match came first (``canasta say 3f2a "hi"``):
    a match is hex digits, so a first word that is one and a second that is not are swapped."""
    if (
        match is not None
        and option is None
        and _MATCH_WORD.fullmatch(text.lower())
        and not _MATCH_WORD.fullmatch(match.lower())
    ):
        text, match = match, text
    return text, common.chosen_match(match, option)


@app.command(
    rich_help_panel=PANEL,
    epilog='Examples:\n\n  canasta say "good luck, all"\n\n  canasta say "well played" 3f2a',
)
def say(
    text: Annotated[
        str, typer.Argument(help="What to say: printable text, at most 280 characters.")
    ],
    match: common.MatchArg = None,
    match_option: common.MatchOpt = None,
    json: JsonOpt = False,
) -> None:
    """Say something to the whole table: every seat reads it, and it is kept in the record.

    There is no private channel between partners. A message is signed with your key and
    bound to the move it was said after, so an exported transcript carries it and `canasta
    verify` checks it. At most 10 messages an hour and 50 a day in a match.
    """
    text, chosen = _text_and_match(text, match, match_option)
    entry = _publish_command(chosen, "say", text)
    if json:
        common.print_json(entry)
        return
    typer.echo(f"said (talk {entry.seq}, after move {entry.at_seq}): {entry.text}")


@app.command(
    rich_help_panel=PANEL,
    epilog='Examples:\n\n  canasta conventions "we open light; a discarded ace asks for aces"',
)
def conventions(
    text: Annotated[
        str, typer.Argument(help="Your side's agreements: printable text, at most 1000 characters.")
    ],
    match: common.MatchArg = None,
    match_option: common.MatchOpt = None,
    json: JsonOpt = False,
) -> None:
    """Publish your side's conventions (its agreements) to the whole table, once a match.

    Before the first hand is over; signed and kept in the record like table talk.
    `canasta create --conventions TEXT` publishes them as the match starts.
    """
    text, chosen = _text_and_match(text, match, match_option)
    entry = _publish_command(chosen, "conventions", text)
    if json:
        common.print_json(entry)
        return
    typer.echo(f"published your side's conventions (talk {entry.seq}): {entry.text}")


@app.command(
    rich_help_panel=PANEL, epilog="Examples:\n\n  canasta talk\n\n  canasta talk 3f2a --json"
)
def talk(match: common.MatchArg = None, json: JsonOpt = False) -> None:
    """Everything said at the table, with the move it was said after, and the conventions."""
    with common.connect(common.profile()) as conn:
        match_id = common.resolve_match(conn, match)
        record = full_talk(conn, match_id)
    if json:
        common.print_json(record)
        return
    lines = conventions_lines(record) + [
        talk_text(e, e.display_name) + f"  (after move {e.at_seq})" for e in record.entries
    ]
    typer.echo("\n".join(lines) if lines else "Nothing was said at this table yet.")


def _publish_command(match: str | None, kind: str, text: str) -> pb.TalkEntry:
    from shared.talk import text_problem

    problem = text_problem(text, kind)
    if problem is not None:
        raise CliError(problem, EXIT_USAGE)
    with common.connect(common.profile()) as conn:
        return publish(conn, common.resolve_match(conn, match), kind, text)


def publish(conn: Connection, match_id: str, kind: str, text: str) -> pb.TalkEntry:
    """Sign and store one talk entry, at the talk's head and the log's head now; signed again
    (up to ``_TRIES`` times) when either moved on before it arrived. The receipt must be the
    pinned server key's, over exactly what was signed."""
    from client.rpc import RpcFailureError
    from shared.pb import canasta_pb2 as pb
    from shared.protocol import say_request, talk_receipt_matches

    key = conn.profile.load_key()
    seat = _seat(conn, match_id)
    for attempt in range(1, _TRIES + 1):
        now = conn.call("GetTalk", pb.GetTalkRequest(match_id=match_id, after_seq=2**62))
        request = say_request(key, match_id, seat, now, kind, text)
        try:
            entry: pb.TalkEntry = conn.call("Say", request).entry
        except RpcFailureError as failure:
            if attempt < _TRIES and failure.status == "FAILED_PRECONDITION":
                again = conn.call("GetTalk", pb.GetTalkRequest(match_id=match_id, after_seq=2**62))
                if (again.count, again.version) != (now.count, now.version):
                    continue  # something was said or played meanwhile: sign again
            raise
        if not talk_receipt_matches(request, entry, conn.pinned_key()):
            raise CliError(
                "the server's receipt for this talk entry does not verify with the pinned key"
            )
        return entry
    raise AssertionError("unreachable")


def _seat(conn: Connection, match_id: str) -> int:
    seen = conn.profile.matches.get(match_id)
    if seen is not None:
        return seen.seat
    return int(common.fetch_view(conn, match_id).view.seat)


def full_talk(conn: Connection, match_id: str) -> pb.GetTalkResponse:
    """Every page of the match's talk, as one response."""
    from shared.pb import canasta_pb2 as pb

    combined: pb.GetTalkResponse | None = None
    after = 0
    while True:
        page = conn.call("GetTalk", pb.GetTalkRequest(match_id=match_id, after_seq=after))
        if combined is None:
            combined = page
        else:
            combined.entries.extend(page.entries)
        if not page.more or not page.entries:
            combined.more = False
            return combined
        after = page.entries[-1].seq


def talk_head_line(header: bytes, entries: list[pb.TalkEntry]) -> str:
    """The talk's head, recomputed from the header and the signed entries: what players compare
    (beside the log's head) to know that the server shows them all one talk."""
    from shared.protocol import talk_line
    from shared.talk import talk_hash
    from shared.transcript import Header, TranscriptError, header_hash

    try:
        match_id = Header.from_bytes(header).match_id
    except TranscriptError:
        return "Talk head: the match header cannot be read"
    prev = header_hash(header)
    for entry in entries:
        line = talk_line(entry)
        try:
            prev = talk_hash(line.message(match_id, prev), line.signature)
        except ValueError:
            return f"Talk head: talk entry {entry.seq} cannot be read"
    if entries and prev != bytes(entries[-1].talk_hash):
        return "Talk head: the talk does not chain to the hash the server gives for its last entry!"
    return f"Talk head: talk entry {len(entries)}, hash {prev.hex()}"


def safe(text: str) -> str:
    """What the server sent, shown only as printable text (it checks that; so does this)."""
    return "".join(c if c.isprintable() else "\ufffd" for c in text)


def talk_text(entry: pb.TalkEntry, name: str) -> str:
    """``ann (seat 0): good luck``: one line, whoever wrote it."""
    who = f"{safe(name)} (seat {entry.seat})" if name else f"seat {entry.seat}"
    if entry.kind == "conventions":
        return f"{who} declares their side's conventions: {safe(entry.text)}"
    return f"{who}: {safe(entry.text)}"


def conventions_lines(record: pb.GetTalkResponse) -> list[str]:
    return [talk_text(e, e.display_name) for e in record.conventions]


def table_lines(conn: Connection, match_id: str, shown: int = 5) -> list[str]:
    """The end of the table as ``canasta show`` prints it: the sides' conventions and the last
    lines of talk."""
    from shared.pb import canasta_pb2 as pb

    record = conn.call("GetTalk", pb.GetTalkRequest(match_id=match_id, last=shown))
    lines = [f"Conventions: {line}" for line in conventions_lines(record)]
    said = [e for e in record.entries if e.kind != "conventions"]
    if said:
        title = (
            "Table talk"
            if record.count <= shown
            else f"Table talk (last {len(said)}; canasta talk shows all)"
        )
        lines += [f"{title}:", *(f"  {talk_text(e, e.display_name)}" for e in said)]
    return lines


def publish_pending(conn: Connection, view: pb.MatchView) -> None:
    """Publish the conventions ``canasta create --conventions`` left for this match, once it
    has started (it had not when it was created); said on stderr, whatever happens."""
    match_id = view.match.match_id
    text = conn.profile.conventions.get(match_id)
    if text is None or view.match.status != 2:  # MATCH_STATUS_PLAYING
        return
    del conn.profile.conventions[match_id]
    conn.profile.save()
    try:
        entry = publish(conn, match_id, "conventions", text)
    except CliError as exc:
        typer.echo(f"canasta: your side's conventions were not published: {exc.message}", err=True)
        return
    typer.echo(f"published your side's conventions (talk {entry.seq})", err=True)
