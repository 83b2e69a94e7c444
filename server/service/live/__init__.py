"""The live wing: Watch streams.

``streams`` (the notifier: subscriptions and in-process listeners of this process's changes),
``watch`` (opening a stream: subscribe, then read the state), ``feed`` (changes stored by
other server processes on the same database). The context holds the notifier as a
``Publisher`` for the wings that store changes; this wing holds it as itself.
"""
