"""The ``canasta`` command-line client: Typer commands, RPC helper, key store, rendering."""
