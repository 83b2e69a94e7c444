"""The news wing: what a player is told, and how it reaches them.

``causes`` (which notifications a stored change causes, written in its transaction),
``words`` (their sentences, mail subjects and bodies, webhook JSON), ``replies`` (the
single-use codes a mail carries, so that a reply can be a move) and ``outbox`` (delivery by
mail and webhook, exactly once, and the retention of delivered rows). It stands on the ground
only; play's view of a table reaches the outbox as a function handed in by ``wings``.
"""
