"""``canasta-server`` and ``python -m server``: the commands are in ``server.cli``."""

from __future__ import annotations

from server.cli import app, main

__all__ = ["app", "main"]

if __name__ == "__main__":
    main()
