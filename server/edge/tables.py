"""The table in a mail: the recipient's ``MatchView`` as ``canasta show`` prints it.

The service decides who gets which table and asks for it through ``letters.TableText``; this
module answers with the one renderer, ``shared.tabletext``, over the very wire message that the
recipient's own GetView returns (``convert.match_view_to_pb``). So a mailed table holds what the
CLI's table holds and nothing more, in plain text within 80 columns, with times in the
recipient's time zone.
"""

from __future__ import annotations

from server.domain import MatchView
from server.edge.convert import match_view_to_pb
from server.service.clocks import zone
from shared.tabletext import render_table


def mail_table(view: MatchView, time_zone: str, now_ms: int) -> str:
    """``letters.TableText``: the plain-text table for a mail."""
    return render_table(match_view_to_pb(view), color=False, tz=zone(time_zone), now_ms=now_ms)
