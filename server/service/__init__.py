"""The service: everything the server does, with no gRPC and no database library in sight.

It stands in wings a reader can name, on a common ground, with every arrow pointing down:

    wings.py          CanastaService: the wings built and wired once; the edge calls them
    people/  mail/    accounts, preferences, admin, the club ladder  |  moves by mail
    play/             lobby, play (views, signed moves, history), absence, bots, orders, talk
    news/   live/     notifications: causes, words, reply codes, outbox  |  Watch streams, feed
    ground            context (database, keys, caches, the notifier as a ``Publisher``),
                      errors, matches (the facts of a stored match), spectators (who else
                      may follow a match, and what of it), clocks, periodic

A wing imports the ground, its own modules and the wings drawn below it, never one above or
beside it (``tests/test_skeleton.py`` checks this from the source). Two arrows that would run
up are turned round: the context holds the live wing's notifier without importing it (whoever
builds the context hands it in), and the outbox is given play's view of a table as a function.
The edge (``server.edge``) maps the service's errors (``server.service.errors``, the engine's
``CanastaError``s, ``shared.wire.WireError``) to statuses in ``server.edge.status``.
"""
