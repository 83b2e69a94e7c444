"""A background round that repeats: the deadline sweep, the outbox.

One daemon thread calls ``work()`` every ``interval()`` seconds until ``stop()``; an exception
is logged and the next round tries again, so a bad row never stops the service's clockwork.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)


class Periodic:
    def __init__(self, name: str, interval: Callable[[], float], work: Callable[[], object]):
        self.name = name
        self.interval = interval
        self.work = work
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def _run(self) -> None:
        while not self._stop.wait(self.interval()):
            try:
                self.work()
            except Exception:  # logged; the next round tries again
                log.exception("%s: a round failed", self.name)
