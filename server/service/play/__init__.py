"""The play wing: matches from the lobby to the last move.

``lobby`` (create, join, fill with bots, start, abort, list), ``play`` (views, signed moves,
history, recovery after a restore), ``absence`` (clocks' deadlines, reminders, covers,
vacations), ``bots`` (the runner that plays bot seats), ``orders`` (standing orders). It
stands on the ground (``matches``, ``clocks``, the context) and tells the news wing what each
change causes (``server.service.news.causes``), in the transaction that stores it.

Moves and the log
-----------------
A move is an envelope: ``payload`` = a serialized ``MovePayload{match_id, seat, seq,
prev_hash, client_time_ms, actions, deal_commitment}`` and the seat key's Ed25519 signature
over exactly those bytes. The server stores the bytes as received, with
``entry_hash = shared.crypto.entry_hash(prev_hash, payload, signature)``, commits durably, and
then signs the receipt ``shared.crypto.receipt_message(match_id, seq, entry_hash)``. The match's
``version`` is the seq of its last entry. When the match starts, its header (the rules, the
seats and their keys, the server's keys, the clock, the first dealer: ``shared.matchlog``)
is stored, and the first entry's ``prev_hash`` is ``header_hash(header)``, so every move
commits to the rules it is played under (matches started before schema revision 0006 start
from ``genesis_hash(match_id)``). Bot seats sign with the server's bot key, never its receipt
key.

Fair deals (commit-reveal), specified byte for byte in ``docs/fair-deal.md``: the server
commits to a fresh secret for hand ``h`` in the transaction that starts the match or ends hand
``h-1``; the cutting seat (``shared.matchlog.cutting_seat``) signs a ``deal`` move naming that
commitment, with no time in it, so it has one signature; the deck is the shuffle seeded by the
secret and that signature (``shared.matchlog.dealt_deck``); the secret is revealed in the
transaction that ends the hand. The server, as the dealer, sees every hand, and it could choose
the deal of a hand whose cut its bot makes for an absent player (``canasta verify`` names those
hands); otherwise it can refuse or delay a cut, not choose a deal.
"""
