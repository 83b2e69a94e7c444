"""The people wing: ``accounts`` (registration, sign-in, tokens), ``preferences`` (a player's
settings and addresses) and ``admin`` (the operator's commands on players and matches)."""
